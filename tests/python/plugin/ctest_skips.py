"""pytest plugin for the runs ctest makes (tests/python/run_pytest.sh loads it with
`-p ctest_skips`, for every directory it runs: tests/python, tests/server,
tests/ct2_suite): a run that passes but skipped a test exits 77, so ctest reports the
test skipped, with the reasons, instead of passed.

Only a skip whose reason starts with "attend:" is no skip of attend's: tests/ct2_suite
marks so the CTranslate2 tests of CTranslate2's own classes, which attend does not
provide (tests/ct2_suite/README.md lists them). Those are counted and named, never
hidden."""

ATTEND_EXCLUSION = "attend:"


def _reason(report) -> str:
    return str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)


def pytest_sessionfinish(session, exitstatus):
    # 5: no test ran — a skip when every module skipped at import, else a failure.
    if exitstatus not in (0, 5):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reasons = [_reason(r) for r in (reporter.stats.get("skipped", []) if reporter else [])]
    excluded = [r for r in reasons if r.removeprefix("Skipped: ").startswith(ATTEND_EXCLUSION)]
    skipped = [r for r in reasons if r not in excluded]
    if excluded:
        print(f"\nnot attend's, by design ({len(excluded)}): " + "; ".join(sorted(set(excluded))))
    if skipped:
        print(f"\nskipped: {len(skipped)} test(s) skipped: " + "; ".join(sorted(set(skipped))))
        session.exitstatus = 77
