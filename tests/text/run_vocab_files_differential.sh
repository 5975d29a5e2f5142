#!/usr/bin/env bash
# vocab_files_differential.py in the test venv (tests/python/setup_venv.sh makes it), with
# transformers, sentencepiece and protobuf (no torch) installed there from PyPI the first
# time, and the real all-MiniLM-L6-v2 when run_minilm.sh or run_differential.sh fetched it.
# Exits 77 (ctest: skipped) with a message when the venv or the packages cannot be had.
# Usage: run_vocab_files_differential.sh BUILD_DIR SOURCE_DIR DRIVER [options]
set -euo pipefail
build=$1 source=$2 driver=$3
shift 3
python=$build/python/venv/bin/python
if [[ ! -x $python ]]; then
  echo "skipped: no test venv at $build/python/venv (tests/python/setup_venv.sh makes it; PyPI unreachable?)"
  exit 77
fi
wanted=("transformers==5.24.0" "sentencepiece" "protobuf")
if ! "$python" -c "import transformers, sentencepiece, google.protobuf" 2> /dev/null; then
  if ! "$python" -m pip install -q --disable-pip-version-check "${wanted[@]}"; then
    echo "skipped: cannot install ${wanted[*]} from PyPI (no network?)"
    exit 77
  fi
fi
models=()
[[ -f $build/models/all-MiniLM-L6-v2/model/vocab.txt ]] && models+=("$build/models/all-MiniLM-L6-v2/model")
exec "$python" "$source/tests/text/vocab_files_differential.py" "$driver" "$source/tests/data/tokenizers/vocab-files" \
  "${models[@]}" "$@"
