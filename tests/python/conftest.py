"""Shared fixtures of the Python tests: where the CLI, the test models and the corpora
are (run_pytest.sh sets the paths; the defaults suit a release build in the tree)."""

import os
import random
import re
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("ATTEND_CLI", SOURCE / "build/release/bin/attend"))
CLI_FIXTURE = Path(os.environ.get("ATTEND_CLI_FIXTURE", SOURCE / "build/release/tests/cli_fixture"))
MODELS = Path(os.environ.get("ATTEND_TEST_MODELS", SOURCE / "tests/data/models"))
TRANSLIT = MODELS / "ct2-aren-transliteration"


def arabic_letters() -> list:
    """The transliteration model's source tokens that are letters (no specials)."""
    tokens = (TRANSLIT / "source_vocabulary.txt").read_text(encoding="utf-8").split("\n")
    return [t for t in tokens if t and not t.startswith("<")]


def name_corpus(lines: int, seed: int = 7) -> list:
    """`lines` made-up names, one character per token, some repeated, a few empty."""
    rng = random.Random(seed)
    letters = arabic_letters()
    out = []
    for i in range(lines):
        if i % 97 == 13:
            out.append("")
        else:
            out.append(" ".join(rng.choice(letters) for _ in range(rng.randint(2, 9))))
    return out


def cli_translate(model: Path, input_path: Path, *args: str) -> list:
    """`attend translate` on one machine: the reference the Python results must equal."""
    out = subprocess.run([str(CLI), "translate", "-m", str(model), "-i", str(input_path), "-q", *args],
                         check=True, capture_output=True, text=True).stdout
    return out.split("\n")[:-1]


def assert_same_output(got, expected):
    """Line for line; scores to 1e-5: a shard forms other batches than the CLI's chunks,
    and a sum of log-probabilities may round the other way in the sixth decimal."""
    assert len(got) == len(expected)
    for number, (a, b) in enumerate(zip(got, expected)):
        fields_a, fields_b = a.split(" ||| "), b.split(" ||| ")
        assert len(fields_a) == len(fields_b), (number, a, b)
        for x, y in zip(fields_a, fields_b):
            if re.fullmatch(r"-?\d+\.\d{6}|-inf", y) and re.fullmatch(r"-?\d+\.\d{6}|-inf", x):
                assert float(x) == pytest.approx(float(y), abs=1e-5), (number, a, b)
            else:
                assert x == y, (number, a, b)


@pytest.fixture(scope="session")
def translit():
    if not (TRANSLIT / "model.bin").exists():
        pytest.skip(f"{TRANSLIT} is absent")
    return TRANSLIT


@pytest.fixture(scope="session")
def text_model():
    model = CLI_FIXTURE / "model"
    if not (model / "source.spm").exists():
        pytest.skip(f"{model} is absent: ctest's 'cli: build the test models and tokenizers' makes it")
    return model


@pytest.fixture(scope="session")
def cli():
    if not CLI.exists():
        pytest.skip(f"{CLI} is absent: build the CLI first")
    return CLI


# ---- skips ctest can see ---------------------------------------------------------
# A test that needs an optional package is marked with what it needs and runs in its
# own ctest test (tests/CMakeLists.txt: run_pytest.sh --needs MODULE, which exits 77
# where the package is missing). Any other skip inside a run that otherwise passes makes
# the run exit 77 (plugin/ctest_skips.py, which run_pytest.sh loads), so ctest reports it
# skipped, with the reasons, rather than passed.
def pytest_configure(config):
    config.addinivalue_line("markers", "needs_ctranslate2: compares with CTranslate2 itself (installed from PyPI)")

