#!/usr/bin/env bash
# Two attend processes on the same cores, as several Ray actors or services on one
# machine run: each must take at most ~2× its solo time (the cores are shared), never
# collapse — with OpenMP's spinning workers it took 10–60×. Also the solo throughput of
# `attend bench`, so a change to the threading shows its cost when nothing contends.
#
#   bench/contention.sh ATTEND [BASELINE_ATTEND] [ROUNDS]
#
# Both binaries run the same workloads, alternating, ROUNDS times (default 3); medians
# are reported, with the ratio to the baseline. Run it alone on the machine (the
# project's rule: flock -x /tmp/attend-cpu.lock bench/contention.sh …).
set -euo pipefail
attend=$(realpath "$1")
baseline=${2:+$(realpath "$2")}
rounds=${3:-3}
cores=$(nproc)
pin="taskset -c 0,1"          # 2 threads each, on the same 2 cores
[[ $cores -ge 2 ]] || { echo "needs 2 cores" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A small translation: many short parallel regions (the tiny preset), ~0.5 s alone.
python3 - "$work/input.txt" <<'PY'
import random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    for _ in range(2000):
        f.write(" ".join(str(random.randint(4, 999)) for _ in range(random.randint(5, 30))) + "\n")
PY
translate() {  # BINARY → wall seconds
  local start end
  start=$(date +%s.%N)
  $pin "$1" translate --preset tiny --input-format ids -t 2 --max-length 16 -q -i "$work/input.txt" -o /dev/null
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.3f}')"
}
pair() {  # BINARY → the slower of two concurrent runs
  translate "$1" > "$work/a" & translate "$1" > "$work/b" & wait
  python3 -c "print(max(float(open('$work/a').read()), float(open('$work/b').read())))"
}
throughput() {  # BINARY → generated tokens/s of the standard decoding benchmark, 2 threads
  $pin "$1" bench --preset base --threads 2 --sentences 64 --batch 32 --tgt-len 24 --warmup 1 --json |
    python3 -c "import json, sys; print(json.load(sys.stdin)['generated_tokens_per_second'])"
}
median() { python3 -c "import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

binaries=("$attend")
[[ -n $baseline ]] && binaries+=("$baseline")
declare -A solo pairs tps
for ((r = 0; r < rounds; ++r)); do
  for b in "${binaries[@]}"; do
    solo[$b]+=" $(translate "$b")"
    pairs[$b]+=" $(pair "$b")"
    tps[$b]+=" $(throughput "$b")"
  done
done
printf '%-58s %9s %9s %7s %12s\n' binary "solo s" "pair s" "pair/solo" "bench tok/s"
for b in "${binaries[@]}"; do
  s=$(median ${solo[$b]}) p=$(median ${pairs[$b]}) t=$(median ${tps[$b]})
  printf '%-58s %9.3f %9.3f %7.2f× %12.1f\n' "$b" "$s" "$p" "$(python3 -c "print($p / $s)")" "$t"
done
if [[ -n $baseline ]]; then
  python3 -c "print(f'solo throughput, attend / baseline: {$(median ${tps[$attend]}) / $(median ${tps[$baseline]}):.3f}')"
fi
