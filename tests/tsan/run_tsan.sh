#!/usr/bin/env bash
# ThreadSanitizer over the concurrency tests (tests/runtime/test_concurrency.cpp): builds
# only that test and what it links (the runtime and the kernels) with -fsanitize=thread
# in its own build directory, then runs it. attend's thread teams are std::thread and
# std::atomic, which ThreadSanitizer understands, so every report is a real race.
# Used by ctest; also by hand:  tests/tsan/run_tsan.sh BUILD_DIR [COMPILER_LAUNCHER]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:?build dir}/tsan")
launcher=${2:-}
[[ -e /usr/lib/x86_64-linux-gnu/libtsan.so.2 || -n $(gcc -print-file-name=libtsan.so | grep /) ]] ||
  { echo "libtsan not found (Debian's libtsan2, installed with g++)"; exit 77; }

cmake -S "$src" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DATTEND_TSAN=ON -DATTEND_BUILD_BENCH=OFF \
  ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher -DCMAKE_C_COMPILER_LAUNCHER=$launcher} > "$out.configure.log" 2>&1 ||
  { cat "$out.configure.log"; exit 1; }
start=$(date +%s)
cmake --build "$out" --target test_concurrency -j "$(nproc)" > "$out.build.log" 2>&1 || { tail -50 "$out.build.log"; exit 1; }
echo "built with -fsanitize=thread in $(($(date +%s) - start)) s"
# fork() after threads: ThreadSanitizer supports it only partly, so [fork] runs elsewhere.
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" "$out/tests/test_concurrency" "~[fork]"
