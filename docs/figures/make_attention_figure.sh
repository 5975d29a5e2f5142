#!/usr/bin/env bash
# Makes docs/figures/attention-aren.png, the README's picture of every head: the real
# Arabic-to-Latin transliteration model (6 + 6 layers, 8 heads) on one name, its
# cross-attention as tools/plot_attention.py draws it (layers as rows, heads as columns).
# Usage: docs/figures/make_attention_figure.sh [ATTEND] [MODEL_DIR]
#   ATTEND     the CLI (default build/release/bin/attend)
#   MODEL_DIR  default ../shared/models/ct2-aren-transliteration, else the copy in tests/data/models
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
attend=${1:-$root/build/release/bin/attend}
model=${2:-$root/../shared/models/ct2-aren-transliteration}
[[ -f $model/model.bin ]] || model=$root/tests/data/models/ct2-aren-transliteration
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "آ ت ش ي س و ن" | "$attend" translate -m "$model" --input-format tokens -q \
  --attention-all "$work/line.npz" --attention-lines 0
/usr/bin/python3 "$root/tools/plot_attention.py" "$work/line.npz" --kind cross \
  -o "$root/docs/figures/attention-aren.png"
