#!/usr/bin/env bash
# Runs a test command a second time under a lower instruction set: ATTEND_ISA=ISA CMD…
# Where this CPU's best is that ISA already, the default run covered it: skipped (77).
# An AVX-512 machine thus also proves what an AVX2-only one (or the portable SSE2 path)
# would run.
# Usage: run_under_isa.sh avx2|sse2 COMMAND [ARGS…]
set -euo pipefail
isa=$1
shift
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
case $isa in
  avx2) higher=" avx512f " ;;  # (isa.cpp needs more for its avx512 level; a partial AVX-512 only repeats the run)
  sse2) higher=" avx2 " ;;
  *) echo "run_under_isa.sh: unknown ISA '$isa'" >&2; exit 2 ;;
esac
if [[ $flags != *"$higher"* ]]; then
  echo "skipped: this CPU's best instruction set is $isa already; the default run covered it"
  exit 77
fi
export ATTEND_ISA=$isa
exec "$@"
