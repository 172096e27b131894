#!/usr/bin/env python3
"""Sums Fuzz/ledger.tsv (one line per target per `make fuzz` run: date, commit, target, executions, executions per
second, CPU seconds, edges, corpus size, exit status) into the CPU time fuzzed across the work, per target.
With --markdown, prints the same as a Markdown table (for docs/fuzzing.md)."""
import sys
from collections import defaultdict

args = [a for a in sys.argv[1:] if a != "--markdown"]
markdown = "--markdown" in sys.argv[1:]
path = args[0] if args else "Fuzz/ledger.tsv"
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
    sys.exit(f"fuzz-ledger: {path} does not exist yet")
if markdown:
    print("| target | runs | CPU minutes | executions | exec/s (last run) | edges (last run) | corpus |")
    print("|---|---|---|---|---|---|---|")
    for target in sorted(cpu):
        rate, edges, size = last[target]
        print(f"| {target} | {runs[target]} | {cpu[target] / 60:.1f} | {execs[target]:,} | {rate} | {edges} | {size} |")
    sys.exit(0)
print(f"\nacross the work ({path}):")
print(f"{'target':22} {'runs':>5} {'cpu-min':>8} {'executions':>13} {'last exec/s':>11} {'edges':>7} {'corpus':>7}")
for target in sorted(cpu):
    rate, edges, size = last[target]
    print(f"{target:22} {runs[target]:>5} {cpu[target] / 60:>8.1f} {execs[target]:>13,} {rate:>11} {edges:>7} {size:>7}")
