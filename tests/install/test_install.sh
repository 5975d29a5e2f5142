#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, then build tools/examples against the installed
# package with find_package(attend) and check that both examples, and the installed CLI,
# translate like the build tree's CLI.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR FIXTURE_DIR [EXTRA_CXX_AND_C_FLAGS]
set -euo pipefail
build=$1 source=$2 fixture=$3 flags=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/attend/attend.hpp include/attend/attend.h include/attend/error.hpp bin/attend; do
  [[ -e $prefix/$f ]] || { echo "not installed: $f" >&2; exit 1; }
done
lib=$(find "$prefix" -name 'libattend.so' | head -n 1)
[[ -n $lib ]] || { echo "libattend.so not installed" >&2; exit 1; }
[[ -n $(find "$prefix" -name attendConfig.cmake) ]] || { echo "attendConfig.cmake not installed" >&2; exit 1; }

# Only the API is exported: no runtime or kernel symbols leak out of the library.
if nm -DC --defined-only "$lib" | grep -E 'attend::(runtime|ops)::'; then
  echo "libattend.so exports internal symbols (above)" >&2
  exit 1
fi

cmake -S "$source/tools/examples" -B "$work/examples" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$work/examples" >/dev/null

# Corpus lines, then what the examples once got wrong: a line of 6000 bytes (over the
# 4096-byte buffer the C example had, and over the model's 64 tokens), an empty line, blank
# lines of Unicode spaces, a CRLF line.
{
  head -n 12 "$fixture/corpus.txt"
  for i in $(seq 300); do printf 'The quick brown fox. '; done; echo
  echo
  printf '\xc2\xa0\xc2\xa0\n\xe2\x81\xa0\n'
  printf 'A small cat.\r\n'
} > "$work/input.txt"
lines=$(wc -l < "$work/input.txt")
expected=$("$build/bin/attend" translate -m "$fixture/model" --max-length 12 -q < "$work/input.txt")
# The installed CLI finds the installed library through its RPATH (no LD_LIBRARY_PATH).
installed=$(env -u LD_LIBRARY_PATH "$prefix/bin/attend" translate -m "$fixture/model" --max-length 12 -q < "$work/input.txt")
cpp=$("$work/examples/translate_lines" "$fixture/model" 12 < "$work/input.txt")
c=$("$work/examples/translate_lines_c" "$fixture/model" 12 < "$work/input.txt")
status=0
[[ $installed == "$expected" ]] || { echo "installed attend differs from the build tree's" >&2; status=1; }
[[ $cpp == "$expected" ]] || { echo "C++ example differs:"; diff <(echo "$expected") <(echo "$cpp"); status=1; } >&2
[[ $c == "$expected" ]] || { echo "C example differs:"; diff <(echo "$expected") <(echo "$c"); status=1; } >&2
[[ $(echo "$expected" | wc -l) == "$lines" ]] || { echo "expected $lines lines" >&2; status=1; }
[[ $status == 0 ]] && echo "installed package: headers, library, CLI and CMake package work; examples agree with the CLI"
exit $status
