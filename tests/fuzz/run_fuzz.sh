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
  "$src/tests/fuzz/fuzz_model_files.cpp" "$src/runtime/model/model_config.cpp" "$src/runtime/formats/safetensors.cpp" \
  "$src/runtime/formats/tensor_source.cpp" "$src/runtime/formats/mapped_file.cpp" "$src/runtime/formats/ct2_model_file.cpp" \
  "$src/runtime/formats/hf/torch_bin.cpp" "$src/ops/src/activation_names.cpp" \
  -o "$out/fuzz_model_files"

# Seeds: a committed config.json, a small valid safetensors file and a small model.bin
# (selector byte first: 0 safetensors, 1 config.json, 2 model.bin, 3 pytorch_model.bin) and
# the committed pytorch_model.bin files, zip and legacy.
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
python3 - "$out/corpus/model.bin" <<'PY'
import struct, sys
def s(x): b = x.encode() + b"\0"; return struct.pack("<H", len(b)) + b
body = struct.pack("<I", 6) + s("TransformerSpec") + struct.pack("<II", 7, 2)
body += s("encoder/embeddings/weight") + struct.pack("<BII", 2, 2, 2) + struct.pack("<BI", 0, 16) + bytes(16)
body += s("encoder/num_heads") + struct.pack("<B", 0) + struct.pack("<BI", 2, 2) + struct.pack("<h", 8)
body += struct.pack("<I", 1) + s("decoder/embeddings/weight") + s("encoder/embeddings/weight")
open(sys.argv[1], "wb").write(b"\x02" + body)
PY
for f in pytorch_model.bin legacy_pytorch_model.bin hostile_pytorch_model.bin; do
  { printf '\x03'; cat "$src/tests/data/hf-seq2seq/marian-weights/$f"; } > "$out/corpus/$f"
done
cd "$out/findings"
"$out/fuzz_model_files" -max_total_time="$seconds" -max_len=100000 -rss_limit_mb=2048 -print_final_stats=1 "$out/corpus"
