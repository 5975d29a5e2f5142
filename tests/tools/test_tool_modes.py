#!/usr/bin/python3
"""Every script README.md and docs/*.md tell you to run as a command (`tools/x.py ARGS`,
or a line of a code block that starts with one) is committed
executable (git mode 100755) and starts with a #! line — else the documented command
says "Permission denied". Without git (a source archive), the file's own mode is checked.

    test_tool_modes.py SOURCE_DIR
"""
import glob
import os
import re
import subprocess
import sys

# A script path where a command starts: a line of a code block (after an optional "$ "),
# or an inline `code` span that starts with it and goes on with arguments (a span that
# is the name alone is prose).
COMMAND = re.compile(r"(?:^\s*(?:\$\s+)?|`)((?:tools|docs|bench|tests)/[\w./-]+\.(?:py|sh))(?=\s|$)", re.M)


def documented_commands(source):
    found = {}
    for doc in [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "*.md"))):
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        in_code = False
        for number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            for match in COMMAND.finditer(line):
                # Outside code blocks only `code` spans count (prose may name a script).
                if in_code or match.group(0).startswith("`"):
                    found.setdefault(match.group(1), f"{os.path.relpath(doc, source)}:{number}")
    return found


def git_modes(source, paths):
    try:
        out = subprocess.run(["git", "-C", source, "ls-files", "-s", "--"] + paths, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return {line.split("\t", 1)[1]: line.split()[0] for line in out.stdout.splitlines()}


def main():
    source = sys.argv[1]
    commands = documented_commands(source)
    if not any(p.startswith("tools/") for p in commands):
        raise AssertionError("README.md names no tools/ script as a command: the pattern no longer matches it")
    modes = git_modes(source, sorted(commands))
    bad = []
    for path, where in sorted(commands.items()):
        full = os.path.join(source, path)
        if not os.path.isfile(full):
            bad.append(f"{path} ({where}) does not exist")
            continue
        with open(full, "rb") as f:
            if f.read(2) != b"#!":
                bad.append(f"{path} ({where}) has no #! line")
        if modes is not None and path in modes:
            if modes[path] != "100755":
                bad.append(f"{path} ({where}) is committed as {modes[path]}, not 100755 (git update-index --chmod=+x)")
        elif not os.access(full, os.X_OK):
            bad.append(f"{path} ({where}) is not executable")
    if bad:
        raise AssertionError("scripts the documentation runs must be executable:\n  " + "\n  ".join(bad))
    print(f"{len(commands)} documented scripts are executable: {', '.join(sorted(commands))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
