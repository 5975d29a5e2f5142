"""A CTranslate2 script runs unchanged on attend with only its import swapped, and
gives `attend translate`'s hypotheses (and CTranslate2's own, where it is installed)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_translate, name_corpus

SCRIPT = Path(__file__).with_name("ct2_transliterate.py")


def run_script(script: Path, model: Path, source: Path, output: Path, beam: int) -> list:
    subprocess.run([sys.executable, str(script), str(model), str(source), str(output), str(beam)], check=True)
    return output.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("ct2") / "names.txt"
    path.write_text("\n".join(name_corpus(1000, seed=11)) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def on_attend(tmp_path_factory):
    text = SCRIPT.read_text(encoding="utf-8")
    assert text.count("import ctranslate2\n") == 1
    swapped = tmp_path_factory.mktemp("swapped") / SCRIPT.name
    swapped.write_text(text.replace("import ctranslate2\n", "import attend as ctranslate2\n"), encoding="utf-8")
    return swapped


@pytest.mark.parametrize("beam", [1, 4])
def test_the_script_on_attend_gives_the_clis_hypotheses(translit, corpus, on_attend, tmp_path, cli, beam):
    got = run_script(on_attend, translit, corpus, tmp_path / "attend.txt", beam)
    # --min-length 1: CTranslate2's default min_decoding_length, which the script keeps.
    expected = cli_translate(translit, corpus, "--input-format", "tokens", "--beam", str(beam), "--min-length", "1")
    assert len(got) == 1000
    assert got == expected


@pytest.mark.needs_ctranslate2
@pytest.mark.parametrize("beam", [1, 4])
def test_the_script_on_ctranslate2_gives_the_same_hypotheses(translit, corpus, on_attend, tmp_path, beam):
    if importlib.util.find_spec("ctranslate2") is None:
        pytest.skip("ctranslate2 could not be installed from PyPI")
    ours = run_script(on_attend, translit, corpus, tmp_path / "attend.txt", beam)
    theirs = run_script(SCRIPT, translit, corpus, tmp_path / "ct2.txt", beam)
    differing = [(i, a, b) for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    assert len(ours) == len(theirs) == 1000
    assert not differing, differing[:10]
