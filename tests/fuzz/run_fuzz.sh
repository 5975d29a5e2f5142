#!/usr/bin/env bash
# Builds the model-file fuzz target with clang (libFuzzer + ASan + UBSan) and runs it
# for a while from a seed corpus of valid files. Used by ctest; also by hand:
#   tests/fuzz/run_fuzz.sh BUILD_DIR [SECONDS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:?build dir}/fuzz")
seconds=${2:-${ATTEND_FUZZ_SECONDS:-30}}
command -v clang++ > /dev/null || { echo "clang++ not found (tools/bootstrap.sh installs it)"; exit 77; }
mkdir -p "$out/corpus" "$out/findings"

clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I "$src/runtime" -I "$src/ops/include" -I "$src/include" \
  "$src/tests/fuzz/fuzz_model_files.cpp" "$src/runtime/model_config.cpp" "$src/runtime/safetensors.cpp" \
  "$src/runtime/tensor_source.cpp" "$src/runtime/mapped_file.cpp" "$src/ops/src/activation_names.cpp" \
  -o "$out/fuzz_model_files"

# Seeds: a committed config.json and a small valid safetensors file (selector byte first).
{ printf '\x01'; cat "$src/tests/data/parity/pre-ln-relu/model/config.json"; } > "$out/corpus/config"
python3 - "$out/corpus/safetensors" <<'PY'
import json, struct, sys
header = {"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
          "b": {"dtype": "F16", "shape": [3], "data_offsets": [16, 22]},
          "__metadata__": {"format": "pt"}}
text = json.dumps(header).encode()
with open(sys.argv[1], "wb") as f:
    f.write(b"\x00" + struct.pack("<Q", len(text)) + text + bytes(22))
PY
cd "$out/findings"
"$out/fuzz_model_files" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1 "$out/corpus"
