#!/usr/bin/env python3
"""Lists every `try?` in Sources/ with the reason its failure may be dropped, and fails when one has none.

A `try?` discards an error. Each one says why that cannot matter: a `//` comment after it on its line, or the
comment lines just above it (by convention `// try?: <reason>`). A failure that loses data or leaves state
inconsistent is not discarded: it is logged (LibraryTelemetry.failed) or thrown.

Usage: scripts/check-try.py [--list]   (--list prints every `try?` with its reason; default: only the bare ones)
"""

import os
import re
import sys

TRY = re.compile(r"(?<![A-Za-z_])try\?")


def occurrences(root):
    for folder, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as file:
                lines = file.read().split("\n")
            for index, line in enumerate(lines):
                if line.strip().startswith("//"):
                    continue
                match = TRY.search(line)
                if not match:
                    continue
                reason = ""
                trailing = line.find("//", match.end())
                if trailing >= 0:
                    reason = line[trailing + 2 :].strip()
                above = index - 1
                block = []
                while above >= 0 and lines[above].strip().startswith("//") and not lines[above].strip().startswith("///"):
                    block.insert(0, lines[above].strip().lstrip("/").strip())
                    above -= 1
                if not reason and block:
                    reason = " ".join(block)
                yield path, index + 1, reason


def main():
    listing = "--list" in sys.argv[1:]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources")
    total = bare = 0
    for path, line, reason in occurrences(root):
        total += 1
        where = os.path.relpath(path, os.path.join(root, ".."))
        if not reason:
            bare += 1
            print(f"{where}:{line}: try? without a reason")
        elif listing:
            print(f"{where}:{line}: {reason}")
    print(f"{total} try? in Sources, {total - bare} with a reason, {bare} without", file=sys.stderr)
    return 1 if bare else 0


if __name__ == "__main__":
    sys.exit(main())
