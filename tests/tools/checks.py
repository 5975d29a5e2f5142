"""What the tools' tests share: a check that names what failed, and a command that must succeed."""
import subprocess


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def run(args, **kw):
    """Runs args (text in and out); its stderr in the failure when it exits non-zero."""
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    check(r.returncode == 0, f"{' '.join(args)}: {r.stderr}")
    return r
