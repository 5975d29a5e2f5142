#!/usr/bin/env python3
"""ctest driver: draws fresh random tutorial models with PyTorch (pre- and post-LN, ReLU
and GeLU, separate and shared vocabularies), converts them (two through
tools/convert_torch.py's command line), writes parity cases, and runs the runtime test
binary on them. Exits 77 (ctest: skipped) when PyTorch is not installed (tools/bootstrap.sh
installs Debian's python3-torch).

    torch_parity.py TEST_RUNTIME_BINARY [--seed S]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("test_binary")
    p.add_argument("--seed", type=int, default=int(os.environ.get("ATTEND_TEST_SEED", random.randrange(1 << 30))) % (1 << 30))
    a = p.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("skipped: PyTorch is not installed (tools/bootstrap.sh installs Debian's python3-torch)")
        return 77
    print(f"parity seed {a.seed} (replay with ATTEND_TEST_SEED={a.seed})", flush=True)
    # Two of them are converted as a user converts, by tools/convert_torch.py from a
    # torch.save()d checkpoint (each of its flags used), the others in process.
    variants = [
        ["--norm-first", "--activation", "relu", "--via-checkpoint"],
        ["--activation", "relu", "--shared-vocab"],
        ["--norm-first", "--activation", "gelu", "--shared-vocab"],
        ["--activation", "gelu", "--layers", "3", "--d-model", "48", "--nhead", "6", "--via-checkpoint"],
    ]
    with tempfile.TemporaryDirectory(prefix="attend-parity-") as tmp:
        cases = []
        for i, flags in enumerate(variants):
            out = os.path.join(tmp, f"case{i}")
            subprocess.run([sys.executable, os.path.join(HERE, "make_parity_case.py"), out, "--seed", str(a.seed + i),
                            "--train-steps", "200", *flags], check=True)
            cases.append(out)
        env = dict(os.environ, ATTEND_PARITY_CASES=";".join(cases))
        return subprocess.run([a.test_binary, "[torch]"], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
