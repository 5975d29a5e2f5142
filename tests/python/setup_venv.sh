#!/usr/bin/env bash
# The Python tests' environment, under the build tree: a venv with the packages from
# PyPI (nanobind, scikit-build-core, pytest, numpy; Ray, CTranslate2, Hugging Face
# tokenizers, and the HTTP clients openai, httpx, requests and LangChain's OpenAIEmbeddings
# for their tests; wurlitzer, which CTranslate2's logging test reads stderr with),
# and the attend package built by `pip install` with the bindings over this build's
# libattend (ATTEND_PYTHON_PREBUILT), so the library is not compiled a second time.
# Exits 77 (ctest: skipped) with a message when the venv or the core packages cannot
# be had (no network); Ray or CTranslate2 missing only skips the ctest tests that need
# them (run_pytest.sh --needs MODULE), which ctest then reports skipped.
# Usage: setup_venv.sh PYTHON BUILD_DIR SOURCE_DIR
set -euo pipefail
python=$1 build=$2 source=$3
dir=$build/python
venv=$dir/venv
rm -f "$dir/ready"
mkdir -p "$dir"

if [[ ! -x $venv/bin/python ]]; then
  if ! "$python" -m venv "$venv"; then
    rm -rf "$venv"
    echo "skipped: $python cannot create a venv (tools/bootstrap.sh installs python3-venv)"
    exit 77
  fi
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)

core=("pip>=23.1" "nanobind>=2.4" "scikit-build-core>=0.10" "pytest>=7" "numpy>=1.24")
# The HTTP clients of the server tests (tests/server/test_serve_clients.py).
extras=("ray[data]>=2.9" "ctranslate2==4.8.1" "tokenizers==0.23.3" "openai>=1.40" "httpx>=0.27" "requests>=2.31" "langchain-openai>=0.2" "wurlitzer>=3")
stamp="$dir/packages.txt"
wanted=$(printf '%s\n' "${core[@]}" "${extras[@]}")
if [[ ! -f $stamp || $(cat "$stamp") != "$wanted" ]]; then
  if ! "${pip[@]}" install "${core[@]}"; then
    echo "skipped: cannot install ${core[*]} from PyPI (no network?)"
    exit 77
  fi
  missing=0
  for extra in "${extras[@]}"; do
    "${pip[@]}" install "$extra" || { echo "note: $extra could not be installed; the ctest tests that need it report skipped"; missing=1; }
  done
  # Recorded only when everything installed, so that a later run tries the missing again.
  if [[ $missing == 0 ]]; then echo "$wanted" > "$stamp"; fi
fi

cmake --install "$build" --prefix "$dir/prefix" > /dev/null
"${pip[@]}" install --no-build-isolation --no-deps --force-reinstall \
  --config-settings=cmake.define.ATTEND_PYTHON_PREBUILT="$dir/prefix" \
  --config-settings=build-dir="$dir/skbuild" "$source"
"$venv/bin/python" -c "import attend; print('attend', attend.__version__, 'installed in', attend.__file__)"
touch "$dir/ready"
