#!/usr/bin/env bash
# The README's Python install line, as a new user runs it: on a clean copy of the tree
# (the files git tracks or would track, as they are in the working tree: no build
# outputs, no venv), in a venv WITHOUT system site packages, then `import attend` from
# elsewhere and an embedding, a classification and a translation, each checked against
# the reference outputs stored beside its fixture (sentence-transformers, transformers,
# CTranslate2). Proves pyproject.toml declares every runtime dependency (NumPy).
# Exits 77 (ctest: skipped), with a message, only where a venv cannot be made or PyPI
# cannot be reached; a failing install or check is a failure.
# It compiles the library again, through ccache where the build found it: CMakeLists.txt
# makes ccache's paths relative to the tree, and the copy's build directory is as deep
# as this build's, so a build that just compiled the same sources leaves little to do.
# Usage: test_pip_install.sh SOURCE_DIR WORK_DIR PYTHON CC CXX [COMPILER_LAUNCHER]
set -euo pipefail
source=$1 work=$2 python=$3 cc=$4 cxx=$5 launcher=${6:-}

line=$(grep -m 1 -E '^python3 -m venv \.venv && \.venv/bin/pip install \.' "$source/README.md" | sed 's/ *#.*$//')
[[ -n $line ]] || { echo "README.md has no 'python3 -m venv .venv && .venv/bin/pip install .' line" >&2; exit 1; }

# The copy keeps its path between runs, so a compiler launcher (ccache) finds the same
# files again; its content is replaced every time.
tree=$work/tree
rm -rf "$tree" && mkdir -p "$tree"
if git -C "$source" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  (cd "$source" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -xf - -C "$tree"
else  # a source archive: everything but build outputs
  tar -C "$source" --exclude=./build --exclude=./.venv -cf - . | tar -xf - -C "$tree"
fi
[[ ! -e $tree/build && ! -e $tree/.venv ]] || { echo "the clean copy has build outputs" >&2; exit 1; }

# python3 as the README says, but the interpreter the build found (first on PATH).
bin=$work/bin
mkdir -p "$bin" && ln -sf "$python" "$bin/python3"
export PATH=$bin:$PATH
cd "$tree"
if ! python3 -m venv .venv > "$work/venv.log" 2>&1; then
  echo "skipped: $python cannot create a venv ($(tail -n 1 "$work/venv.log"); tools/bootstrap.sh installs python3-venv)"
  exit 77
fi
grep -qx 'include-system-site-packages = false' .venv/pyvenv.cfg || { echo "the venv sees system site packages" >&2; exit 1; }
if ! .venv/bin/pip download -q --disable-pip-version-check --no-deps -d "$work/probe" "scikit-build-core>=0.10" > /dev/null 2>&1; then
  echo "skipped: PyPI cannot be reached, so \`pip install .\` cannot fetch its build requirements"
  exit 77
fi

# The build's own compilers by the names it found them: scikit-build-core would take
# sysconfig's (x86_64-linux-gnu-g++, the same GCC), and ccache hashes a compiler's name.
export CC=$cc CXX=$cxx
if [[ -n $launcher ]]; then  # a launcher the user gave the build; CMake reads these from the environment
  export CMAKE_C_COMPILER_LAUNCHER=$launcher CMAKE_CXX_COMPILER_LAUNCHER=$launcher CCACHE_BASEDIR=$tree
fi
echo "test_pip_install: $line   (in $tree)"
start=$(date +%s)
if ! bash -euo pipefail -c "$line" > "$work/install.log" 2>&1; then
  tail -n 40 "$work/install.log" >&2
  echo "the README's install line failed (log: $work/install.log)" >&2
  exit 1
fi
echo "installed in $(($(date +%s) - start)) s"

# From another directory, so that nothing of the source tree can be imported.
cd "$work"
"$tree/.venv/bin/python" - "$source" "$tree/.venv" << 'EOF'
import json, os, sys
source, venv = sys.argv[1], sys.argv[2]
import attend
import numpy as np
assert attend.__file__.startswith(venv), attend.__file__  # the installed package, not the source tree's
data = os.path.join(source, "tests", "data")

st = os.path.join(data, "encoders", "st-mean")
cases = json.load(open(os.path.join(st, "cases.json")))["cases"]
model = attend.SentenceEncoder(st)
got = model.encode([c["text"] for c in cases])
want = np.array([c["embedding"] for c in cases], dtype=np.float32)
assert got.shape == want.shape, (got.shape, want.shape)
assert np.abs(got - want).max() < 1e-4, np.abs(got - want).max()

clf = os.path.join(data, "encoders", "bert-classifier")
cases = [c for c in json.load(open(os.path.join(clf, "cases.json")))["cases"] if "text" in c]
logits, scores, labels = attend.Encoder(clf)._engine.classify([c["text"] for c in cases])
want = np.array([c["logits"] for c in cases], dtype=np.float32)
assert np.abs(logits - want).max() < 1e-4, np.abs(logits - want).max()
assert list(labels) == [int(np.argmax(w)) for w in want]

t = attend.Translator(os.path.join(data, "models", "ct2-aren-transliteration"))
r = t.translate_batch(["آ ت ز م و ن".split()], beam_size=4)
assert r[0].hypotheses[0] == list("atzmon"), r

print("pip install . in a clean venv: attend", attend.__version__, "imports, embeds, classifies and translates")
EOF
