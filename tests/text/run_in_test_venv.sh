#!/usr/bin/env bash
# Runs a Python test script with the test venv's interpreter (tests/python/setup_venv.sh
# makes it, with `tokenizers` from PyPI); exits 77 (ctest: skipped) with a message when
# there is no such venv.
# Usage: run_in_test_venv.sh BUILD_DIR SCRIPT [ARGS…]
set -euo pipefail
build=$1
shift
python=$build/python/venv/bin/python
if [[ ! -x $python ]]; then
  echo "skipped: no test venv at $build/python/venv (tests/python/setup_venv.sh makes it; PyPI unreachable?)"
  exit 77
fi
exec "$python" "$@"
