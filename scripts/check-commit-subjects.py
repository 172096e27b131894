#!/usr/bin/env python3
"""Commit subjects of at most 72 characters (a body below says why).

    scripts/check-commit-subjects.py            every commit after BASE up to HEAD (what `make lint` runs)
    scripts/check-commit-subjects.py --msg F    one commit message file (the commit-msg hook `make hooks` installs)

History up to BASE, the commit this check was introduced on, is not checked: its long subjects stay as they are.
Where BASE is not in the repository (a shallow clone, an export without history) the range check says so and
passes. Characters are counted, not bytes ("→" is one). Merge commits are checked like any other.
"""

import subprocess
import sys

LIMIT = 72
# The last commit of main before the check existed; everything after it must keep the limit.
BASE = "367ce831556ef2ff4e4e8f0529b456c10fd85a7b"


def subject_of(message):
    """The first line that is not a comment (git drops '#' lines from an edited message)."""
    for line in message.splitlines():
        if not line.startswith("#"):
            return line.rstrip()
    return ""


def too_long(subject):
    return len(subject) > LIMIT


def check_message_file(path):
    with open(path, encoding="utf-8", errors="replace") as source:
        subject = subject_of(source.read())
    if too_long(subject):
        print(f"commit-msg: the subject has {len(subject)} characters, over {LIMIT}:\n  {subject}", file=sys.stderr)
        print("  (shorten it; the why goes in the body, after a blank line)", file=sys.stderr)
        return 1
    return 0


def git(*arguments):
    return subprocess.run(["git", *arguments], capture_output=True, text=True, encoding="utf-8")


def check_history():
    if git("rev-parse", "--git-dir").returncode != 0:
        print("check-commit-subjects: not a git repository; nothing to check")
        return 0
    if git("cat-file", "-e", BASE + "^{commit}").returncode != 0:
        print(f"check-commit-subjects: base {BASE[:12]} is not in this clone (shallow?); nothing to check")
        return 0
    log = git("log", "--format=%H%x00%s", f"{BASE}..HEAD")
    if log.returncode != 0:
        print(f"check-commit-subjects: git log failed: {log.stderr.strip()}", file=sys.stderr)
        return 1
    failures = []
    for line in log.stdout.splitlines():
        commit, _, subject = line.partition("\0")
        if too_long(subject):
            failures.append(f"  {commit[:12]} ({len(subject)} characters): {subject}")
    if failures:
        print(f"check-commit-subjects: subjects over {LIMIT} characters after {BASE[:12]}:", file=sys.stderr)
        print("\n".join(failures), file=sys.stderr)
        print("  (reword them before they reach main: git rebase -i, 'reword')", file=sys.stderr)
        return 1
    return 0


def main(arguments):
    if len(arguments) == 2 and arguments[0] == "--msg":
        return check_message_file(arguments[1])
    if arguments:
        print(__doc__, file=sys.stderr)
        return 2
    return check_history()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
