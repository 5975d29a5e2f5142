#!/usr/bin/env bash
# ThreadSanitizer over the concurrency tests (tests/runtime/test_concurrency.cpp): builds
# that test and what it links (the kernels, and the runtime objects it uses) with
# -fsanitize=thread in its own build directory, then runs it. attend's thread teams are
# std::thread and std::atomic, which ThreadSanitizer understands, so every report is a
# real race.
#
# What it costs is the build (the run takes seconds), so it builds no more than the test
# needs, and cheaply:
#   - -O1 -g1: line tables only. ThreadSanitizer's reports still name each frame's
#     function, file and line; full -g made every compile ~1.6x slower (isa_sse2.cpp
#     25 → 13 s of CPU, the Catch2 main 29 → 19 s).
#   - only the runtime objects the test links: the release build's own link of
#     test_concurrency (BUILD_DIR, which ctest runs after) says which members of
#     libattend_runtime.a it pulls in — 25 of 62; the encoders, the file formats and the
#     Hugging Face tokenizers are not among them (~40% of the compile time). Those are
#     compiled, archived and linked alone. Should that fail (the release build out of
#     date with the sources), the whole library is built instead.
# Used by ctest; also by hand:  tests/tsan/run_tsan.sh BUILD_DIR [COMPILER_LAUNCHER]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "${1:?build dir}")
out=$build/tsan
launcher=${2:-}
[[ -e /usr/lib/x86_64-linux-gnu/libtsan.so.2 || -n $(gcc -print-file-name=libtsan.so | grep /) ]] ||
  { echo "skipped: libtsan not found (Debian's libtsan2, installed with g++)"; exit 77; }

cmake -S "$src" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DATTEND_TSAN=ON -DATTEND_BUILD_BENCH=OFF \
  ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher -DCMAKE_C_COMPILER_LAUNCHER=$launcher} > "$out.configure.log" 2>&1 ||
  { cat "$out.configure.log"; exit 1; }

# The link command ninja runs for tests/test_concurrency in build directory $1 (without
# the test discovery that follows it).
link_command() {
  local full
  full=$(ninja -C "$1" -t commands tests/test_concurrency | tail -1)
  full=${full#: && }
  echo "${full%% && cd *}"
}

# The runtime objects (paths in the TSan tree) the release link of test_concurrency
# takes from libattend_runtime.a, from its link map.
needed_runtime_objects() {
  [[ -x $build/tests/test_concurrency && -f $build/build.ninja ]] || return 1
  local map=$out/release-link.map cmd
  cmd=$(link_command "$build")
  (cd "$build" && eval "${cmd/ -o tests\/test_concurrency / -o $out/release-link.bin } -Wl,-Map,$map") > /dev/null 2>&1 ||
    return 1
  local members all
  members=$(grep -o 'libattend_runtime\.a([^)]*\.o)' "$map" | sed 's/.*(\(.*\))/\1/' | sort -u)
  [[ -n $members ]] || return 1
  all=$(ninja -C "$out" -t targets all | grep -o '^runtime/CMakeFiles/attend_runtime\.dir/[^:]*\.o')
  local m found
  for m in $members; do
    found=$(grep "/$m\$" <<< "$all") || return 1
    echo "$found"
  done
}

start=$(date +%s)
built=""
if objects=$(needed_runtime_objects); then
  subset=$out/runtime/libattend_runtime_used.a
  # shellcheck disable=SC2086
  if cmake --build "$out" -j "$(nproc)" --target attend_ops attend_test_main > "$out.build.log" 2>&1 &&
     ninja -C "$out" -j "$(nproc)" $objects tests/CMakeFiles/test_concurrency.dir/runtime/test_concurrency.cpp.o >> "$out.build.log" 2>&1 &&
     rm -f "$subset" && (cd "$out" && ar qc "$subset" $objects) &&
     cmd=$(link_command "$out") && (cd "$out" && eval "${cmd/ runtime\/libattend_runtime.a / $subset }") >> "$out.build.log" 2>&1; then
    built="$(wc -w <<< "$objects") runtime objects, those the test links"
    rm -f "$out/release-link.bin"
  else
    echo "note: building only the runtime objects the test links failed (see $out.build.log); building the whole library"
  fi
fi
if [[ -z $built ]]; then
  cmake --build "$out" --target test_concurrency -j "$(nproc)" > "$out.build.log" 2>&1 || { tail -50 "$out.build.log"; exit 1; }
  built="the whole runtime library"
fi
echo "built with -fsanitize=thread in $(($(date +%s) - start)) s ($built)"
# fork() after threads: ThreadSanitizer supports it only partly, so [fork] runs elsewhere.
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" "$out/tests/test_concurrency" "~[fork]"
