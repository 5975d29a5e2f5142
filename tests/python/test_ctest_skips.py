"""plugin/ctest_skips.py, which run_pytest.sh loads for every ctest run of pytest: a run
that passes but skips a test exits 77 (ctest: skipped) naming why; a skip marked
"attend:" (a CTranslate2 test of CTranslate2's own classes) is named but no skip; a
failure stays a failure."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN_DIR = Path(__file__).resolve().parent / "plugin"

CASES = {
    "passes": ("def test_a():\n    assert True\n", 0, None),
    "skips": ("import pytest\n\ndef test_a():\n    pass\n\ndef test_b():\n    pytest.skip('no widget installed')\n",
              77, "skipped: 1 test(s) skipped: Skipped: no widget installed"),
    "skips at import": ("import pytest\npytest.importorskip('no_such_module_here')\n\ndef test_a():\n    pass\n",
                        77, "no_such_module_here"),
    "excludes by design": ("import pytest\n\n@pytest.mark.skip(reason='attend: not attend\\'s class')\ndef test_a():\n"
                           "    pass\n\ndef test_b():\n    pass\n", 0, "not attend's, by design (1)"),
    "collects nothing": ("def helper():\n    pass\n", 5, None),
    "fails and skips": ("import pytest\n\ndef test_a():\n    assert False\n\ndef test_b():\n    pytest.skip('x')\n", 1, None),
}


@pytest.mark.parametrize("name", CASES)
def test_a_skip_in_a_passing_run_is_a_skip_ctest_shows(tmp_path, name):
    source, code, message = CASES[name]
    (tmp_path / "test_case.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=str(PLUGIN_DIR), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "ctest_skips", "-q",
                          "--rootdir", str(tmp_path), str(tmp_path)],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == code, run.stdout + run.stderr
    if message:
        assert message in run.stdout, run.stdout
