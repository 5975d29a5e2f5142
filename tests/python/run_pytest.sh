#!/usr/bin/env bash
# Runs pytest on tests/python in the venv setup_venv.sh made, with the paths the tests
# need. Exits 77 (ctest: skipped) when that venv is not ready, with --needs MODULE when
# that optional package (ray, ctranslate2) could not be installed, and when any test
# skips in a run that otherwise passes (plugin/ctest_skips.py, loaded for every directory it
# runs), so ctest never shows a skip as a pass.
# Usage: run_pytest.sh BUILD_DIR SOURCE_DIR CLI_FIXTURE_DIR [--needs MODULE] PYTEST_ARGS…
set -euo pipefail
build=$1 source=$2 fixture=$3
shift 3
venv=$build/python/venv
if [[ ! -f $build/python/ready ]]; then
  echo "skipped: the Python package is not installed (the test 'python: install the package' skipped or failed)"
  exit 77
fi
if [[ ${1:-} == --needs ]]; then
  module=$2
  shift 2
  if ! "$venv/bin/python" -c "import $module" 2> /dev/null; then
    echo "skipped: $module could not be installed from PyPI (tests/python/setup_venv.sh), so these tests cannot run"
    exit 77
  fi
fi
export ATTEND_CLI=$build/bin/attend ATTEND_CLI_FIXTURE=$fixture ATTEND_TEST_MODELS=$source/tests/data/models
export PYTHONPATH=$source/tests/python/plugin${PYTHONPATH:+:$PYTHONPATH}
cd "$source"
exec "$venv/bin/python" -m pytest -p no:cacheprovider -p ctest_skips -q "$@"
