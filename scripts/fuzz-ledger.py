#!/usr/bin/env python3
"""Sums Fuzz/ledger.tsv (one line per target per `make fuzz` run: date, commit, target, executions, executions per
second, CPU seconds, edges, corpus size, exit status) into the CPU time fuzzed across the work, per target, beside
each target's goal (the fourth column of `ca-fuzz list`, read from --list FILE or the debug build's ca-fuzz).

  fuzz-ledger.py [--list FILE] [LEDGER]              the table
  fuzz-ledger.py [--list FILE] --markdown [LEDGER]   the same as Markdown (for docs/fuzzing.md)
  fuzz-ledger.py --list FILE --remaining [LEDGER]    "target<TAB>seconds" still to fuzz to reach each goal"""
import subprocess
import sys
from collections import defaultdict

args = sys.argv[1:]
flags = {a for a in args if a in ("--markdown", "--remaining")}
list_path = None
if "--list" in args:
    i = args.index("--list")
    list_path = args[i + 1]
    del args[i : i + 2]
args = [a for a in args if a not in flags]
path = args[0] if args else "Fuzz/ledger.tsv"

if list_path:
    with open(list_path, encoding="utf-8") as f:
        listing = f.read()
else:
    try:
        listing = subprocess.run([".build/debug/ca-fuzz", "list"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        listing = ""
goal = {}
for line in listing.splitlines():
    fields = line.split("\t")
    if len(fields) >= 5:
        goal[fields[0]] = int(fields[3])

cpu = defaultdict(float)
execs = defaultdict(int)
runs = defaultdict(int)
last = {}
try:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            day, commit, target, n, rate, seconds, edges, size, status = line.rstrip("\n").split("\t")
            cpu[target] += float(seconds or 0)
            execs[target] += int(n or 0)
            runs[target] += 1
            last[target] = (rate, edges, size)
except FileNotFoundError:
    if "--remaining" not in flags:
        sys.exit(f"fuzz-ledger: {path} does not exist yet")

if "--remaining" in flags:
    if not goal:
        sys.exit("fuzz-ledger: --remaining needs the targets' goals (--list FILE)")
    for target, minutes in goal.items():
        print(f"{target}\t{max(0, round(minutes * 60 - cpu[target]))}")
    sys.exit(0)


def goal_text(target):
    if target not in goal:
        return "?"
    return f"{goal[target]} (met)" if cpu[target] >= goal[target] * 60 else str(goal[target])


targets = sorted(set(cpu) | set(goal))
if "--markdown" in flags:
    print("| target | runs | CPU minutes | goal | executions | exec/s (last run) | edges (last run) | corpus |")
    print("|---|---|---|---|---|---|---|---|")
    for target in targets:
        rate, edges, size = last.get(target, ("", "", ""))
        print(
            f"| {target} | {runs[target]} | {cpu[target] / 60:.1f} | {goal_text(target)} | {execs[target]:,} "
            f"| {rate} | {edges} | {size} |"
        )
    sys.exit(0)
print(f"\nacross the work ({path}):")
print(
    f"{'target':22} {'runs':>5} {'cpu-min':>8} {'goal':>9} {'executions':>13} {'last exec/s':>11} {'edges':>7} "
    f"{'corpus':>7}"
)
for target in targets:
    rate, edges, size = last.get(target, ("", "", ""))
    print(
        f"{target:22} {runs[target]:>5} {cpu[target] / 60:>8.1f} {goal_text(target):>9} {execs[target]:>13,} "
        f"{rate:>11} {edges:>7} {size:>7}"
    )
