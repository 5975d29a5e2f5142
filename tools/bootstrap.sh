#!/usr/bin/env bash
# Installs every Debian package attend's build, tests and benchmarks need.
# Idempotent: packages already present are skipped, so a second run is a no-op.
# Usage: tools/bootstrap.sh   (run as root, or with sudo available; --with-torch, once
# needed for PyTorch, is still accepted and changes nothing)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  ccache                     # CMakeLists.txt compiles through it: rebuilds, and the suite's pip install .
  libomp-dev                 # not used by GCC builds; keeps clang (fuzz target) OpenMP-capable
  libxsimd-dev               # SIMD wrappers, runtime ISA dispatch
  libdnnl-dev                # oneDNN: yardstick in benchmarks, alternative backend
  catch2                     # unit tests (v2 API)
  libbenchmark-dev           # Google Benchmark
  libsentencepiece-dev sentencepiece   # tokenizer library + spm_train for test models
  nlohmann-json3-dev         # config.json / safetensors header parsing
  libicu-dev                 # Unicode data of the Hugging Face tokenizers (runtime/text/hf)
  libcli11-dev               # CLI flags
  libboost-dev               # Boost.Beast/Asio (header-only): attend serve's HTTP (docs/server.md)
  curl                       # attend serve's tests: a real client
  wrk                        # bench/serve_load.py --load-generator wrk: a light HTTP load generator
  clang libclang-rt-14-dev   # libFuzzer target for the model-file parsers
  python3 python3-numpy      # fixtures, independent reference implementation
  python3-matplotlib         # tools/plot_attention.py (attention heat maps; its CLI test)
  python3-dev python3-venv   # the Python package: headers for the bindings, a venv for its tests
  # PyTorch (1.13) for tools/reference.py, tools/convert_torch.py, bench/standard_workload.py
  # and the tests that run them (PyTorch parity, the converter): ~55 MB to download.
  python3-torch
  # Debian's PyTorch calls whatever libblas.so.3 is installed; without OpenBLAS that is
  # netlib's reference BLAS (~2 GFLOP/s), which would make every comparison unfair.
  libopenblas0-openmp
)

# Packages a test needs that skips (with a message) without them: one that cannot be
# installed is a warning, never a failed bootstrap.
optional=(
  chromium                   # headless, for the test of tools/attention_view.py's page
)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=() optional_missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
for p in "${optional[@]}"; do installed "$p" || optional_missing+=("$p"); done

if ((${#missing[@]} + ${#optional_missing[@]} == 0)); then
  echo "bootstrap: all $((${#packages[@]} + ${#optional[@]})) packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "bootstrap: installing ${missing[*]} ${optional_missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if ((${#missing[@]} > 0)); then $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; fi
for p in "${optional_missing[@]}"; do
  $SUDO apt-get install -y -qq --no-install-recommends "$p" || echo "bootstrap: warning: could not install $p; the test that needs it will skip"
done
