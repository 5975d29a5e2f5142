#!/usr/bin/env bash
# Runs pytest on tests/python in the venv setup_venv.sh made, with the paths the tests
# need. Exits 77 (ctest: skipped) when that venv is not ready, or, with --needs-ray or
# --needs-ctranslate2, when Ray or CTranslate2 could not be installed.
# Usage: run_pytest.sh BUILD_DIR SOURCE_DIR CLI_FIXTURE_DIR [--needs-ray|--needs-ctranslate2] PYTEST_ARGS…
set -euo pipefail
build=$1 source=$2 fixture=$3
shift 3
venv=$build/python/venv
if [[ ! -f $build/python/ready ]]; then
  echo "skipped: the Python package is not installed (the test 'python: install the package' skipped or failed)"
  exit 77
fi
if [[ ${1:-} == --needs-ray ]]; then
  shift
  if ! "$venv/bin/python" -c "import ray" 2> /dev/null; then
    echo "skipped: Ray could not be installed from PyPI, so the Ray cluster tests cannot run"
    exit 77
  fi
elif [[ ${1:-} == --needs-ctranslate2 ]]; then
  shift
  if ! "$venv/bin/python" -c "import ctranslate2" 2> /dev/null; then
    echo "skipped: CTranslate2 (ctranslate2==4.8.1) could not be installed from PyPI, so its own tests cannot run against attend"
    exit 77
  fi
fi
export ATTEND_CLI=$build/bin/attend ATTEND_CLI_FIXTURE=$fixture ATTEND_TEST_MODELS=$source/tests/data/models
cd "$source"
exec "$venv/bin/python" -m pytest -p no:cacheprovider -q "$@"
