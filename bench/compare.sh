#!/usr/bin/env bash
# Builds the release preset, runs the kernel benchmarks (attend and its yardsticks in
# one run, repetitions randomly interleaved so machine drift hits both alike) and
# prints one table of median ratios, plus the machine's measured limits (machine_limits:
# the per-core peak of the step attend's kernels run for fp32, int8 and bf16, copy
# bandwidth). A oneDNN yardstick this CPU lacks (bf16 below AVX-512) is skipped with a
# message.
#
# An AVX2 proxy on an AVX-512 machine — attend's and oneDNN's kernels both held to AVX2:
#   ATTEND_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 bench/compare.sh --gemm-only
#
#   bench/compare.sh [--quick] [--reps N] [--min-time S] [--gemm-only] [--filter REGEX]
#     --quick      fewer repetitions, shorter runs (3, 0.05 s)
#     --reps, --min-time   repetitions and Google Benchmark's minimum time (5, 0.2 s)
#     --gemm-only  the GEMM programs alone: bench_gemm (fp32, bf16 and int8 GEMMs) and
#                  bench_decoder_gemms (one decoder step's GEMMs on cold weights)
#     --filter     passed to bench_gemm as --benchmark_filter, e.g.
#                  'gemm_s8/.*/M=(32|1024)/' for the int8 rows at M = 32 and 1024
# Raw JSON lands in build/release/bench-results/.
set -euo pipefail
cd "$(dirname "$0")/.."

reps=5 min_time=0.2 benches="gemm decoder_gemms attention rows" filter="."
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) reps=3 min_time=0.05 ;;
    --reps) reps="$2"; shift ;;
    --min-time) min_time="$2"; shift ;;
    --gemm-only) benches="gemm decoder_gemms" ;;
    --filter) filter="$2"; shift ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done

cmake --preset release > /dev/null
cmake --build --preset release --target bench_gemm bench_decoder_gemms bench_attention bench_rows machine_limits > /dev/null

out=build/release/bench-results
mkdir -p "$out"
rm -f "$out"/{gemm,decoder_gemms,attention,rows,machine}.json "$out/machine.txt"
build/release/bench/machine_limits --json > "$out/machine.json"  # at ATTEND_ISA, if set
for b in $benches; do
  echo "running bench_$b ..." >&2
  extra=()
  if [[ $b == gemm ]]; then extra=(--benchmark_filter="$filter"); fi
  build/release/bench/bench_$b "${extra[@]}" --benchmark_repetitions=$reps --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=true --benchmark_min_time=$min_time \
    --benchmark_out="$out/$b.json" --benchmark_out_format=json > /dev/null
done
python3 bench/compare_report.py "$out"
