#!/usr/bin/env bash
# By hand, not in CI (it downloads a Debian system): `pip wheel .`, then installs the
# wheel in a fresh Debian 12 minbase root (python3 and python3-venv only: no
# SentencePiece, no OpenMP, no compiler) and translates with it there, as a second
# machine would. Run as root from the repository root; needs debootstrap.
# Usage: tests/python/check_wheel_on_fresh_debian.sh [ROOT_DIR]
set -euo pipefail
root=${1:-/tmp/attend-fresh-debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q -U pip
"$work/venv/bin/pip" wheel -q . -w "$work/wheel"
[[ -x $root/usr/bin/python3 ]] ||
  debootstrap --variant=minbase --include=python3,python3-venv bookworm "$root" http://deb.debian.org/debian
mkdir -p "$root/check"
cp "$work"/wheel/attend-*.whl "$root/check/"
cp -r tests/data/models/ct2-aren-transliteration "$root/check/model"
chroot "$root" /bin/bash -euc '
  rm -rf /check/venv && python3 -m venv /check/venv
  /check/venv/bin/pip install -q --no-index /check/attend-*.whl
  cd / && /check/venv/bin/python -c "
import attend
r = attend.Translator(\"/check/model\").translate_batch([\"آ ت ز م و ن\".split()], beam_size=4)
assert r[0].hypotheses[0] == list(\"atzmon\"), r
print(\"the wheel installs and translates on a fresh Debian:\", r[0].hypotheses[0])
"'
