#!/usr/bin/env bash
# Builds the release preset, runs the kernel benchmarks (attend and its yardsticks in
# one run, repetitions randomly interleaved so machine drift hits both alike) and
# prints one table of median ratios, plus the machine's measured limits.
#
#   bench/compare.sh [--quick]        (--quick: fewer repetitions, shorter runs)
# Raw JSON lands in build/release/bench-results/.
set -euo pipefail
cd "$(dirname "$0")/.."

reps=5 min_time=0.2
if [[ "${1:-}" == "--quick" ]]; then reps=3 min_time=0.05; fi

cmake --preset release > /dev/null
cmake --build --preset release --target bench_gemm bench_attention bench_rows machine_limits > /dev/null

out=build/release/bench-results
mkdir -p "$out"
build/release/bench/machine_limits > "$out/machine.txt"
for b in gemm attention rows; do
  echo "running bench_$b ..." >&2
  build/release/bench/bench_$b --benchmark_repetitions=$reps --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=true --benchmark_min_time=$min_time \
    --benchmark_out="$out/$b.json" --benchmark_out_format=json > /dev/null
done
python3 bench/compare_report.py "$out"
