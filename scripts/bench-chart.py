#!/usr/bin/env python3
"""Draws `make bench`'s table as an SVG bar chart: one bar per row that has a ratio, from its reference (1x) to
the ratio, on a log scale; green where the row met its target, red where it missed.

Input: any text holding the table ca-bench prints (Benchmarks/ca-bench/Table.swift) -- a saved `make bench`
output, or docs/benchmarks.md, whose current table is the first one with that header line. Rows are the lines
from the header to the line "N targets met, M missed", columns separated by " | ":

    name | value | unit | reference | ref value | ratio | target | ok

Usage: scripts/bench-chart.py [INPUT] [-o OUTPUT.svg]   (INPUT "-" or none: stdin; OUTPUT "-" or none: stdout)
Only the standard library: no dependency beyond python3.
"""

import argparse
import math
import sys
from xml.sax.saxutils import escape

HEADER = ["benchmark", "value", "unit", "reference", "ref value", "ratio", "target", "ok"]


class Row:
    def __init__(self, cells):
        self.name, self.value, self.unit, self.reference, self.ref_value, ratio, self.target, ok = cells
        self.ratio = float(ratio[:-1]) if ratio.endswith("x") else None
        self.met = ok == "ok"


def parse(text):
    """The rows of the first table in `text`: from its header line to its "targets met" line."""
    rows, inside = [], False
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().split(" | ")]
        if not inside:
            inside = cells == HEADER
            continue
        if "targets met" in line or line.strip().startswith("```"):
            break
        if set(line.strip()) <= set("-| "):  # the rule under the header
            continue
        if len(cells) != len(HEADER):
            raise SystemExit(f"bench-chart: not a row of {len(HEADER)} columns: {line.strip()!r}")
        rows.append(Row(cells))
    if not inside:
        raise SystemExit("bench-chart: no table found (a line '" + " | ".join(HEADER) + "')")
    return rows


def ratio_label(ratio):
    if ratio >= 100:
        return f"{ratio:.0f}\u00d7"
    if ratio >= 1:
        return f"{ratio:.2f}\u00d7"
    return f"{ratio:.3f}\u00d7"


def shorten(text, limit):
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def render(rows):
    charted = [row for row in rows if row.ratio is not None and row.ratio > 0]
    if not charted:
        raise SystemExit("bench-chart: no row has a ratio")
    low = min(0.25, min(row.ratio for row in charted))
    high = max(10.0, max(row.ratio for row in charted))
    lo_exp, hi_exp = math.floor(math.log10(low)), math.ceil(math.log10(high))

    name_width, bar_left, bar_width, label_left, width = 560, 572, 460, 1044, 1540
    top, row_height = 64, 20
    height = top + row_height * len(charted) + 44

    def x(ratio):
        return bar_left + bar_width * (math.log10(ratio) - lo_exp) / (hi_exp - lo_exp)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        '<text x="12" y="22" font-size="15" font-weight="bold">make bench: each row\u2019s ratio against its '
        "reference (log scale)</text>",
        '<text x="12" y="42" fill="#555555">Bars start at the reference (1\u00d7). Whether more or less is better '
        "depends on the row: see its target. Green: target met; red: missed. Rows without a ratio are left out."
        "</text>",
    ]
    # Grid: every 1, 2 and 5 of each decade; labelled on the decades (and at 2 and 5 when few decades show).
    label_all = hi_exp - lo_exp <= 3
    for exp in range(lo_exp, hi_exp + 1):
        for mantissa in (1, 2, 5):
            tick = mantissa * 10.0**exp
            if tick < 10.0**lo_exp or tick > 10.0**hi_exp:
                continue
            gx = x(tick)
            stroke = "#333333" if tick == 1 else ("#bbbbbb" if mantissa == 1 else "#e3e3e3")
            out.append(
                f'<line x1="{gx:.1f}" y1="{top - 6}" x2="{gx:.1f}" y2="{top + row_height * len(charted)}" '
                f'stroke="{stroke}" stroke-width="1"/>')
            if mantissa != 1 and not label_all:
                continue
            label = f"{tick:g}\u00d7"
            out.append(
                f'<text x="{gx:.1f}" y="{top + row_height * len(charted) + 16}" text-anchor="middle" '
                f'fill="#555555" font-size="11">{escape(label)}</text>')
    one = x(1)
    for index, row in enumerate(charted):
        y = top + index * row_height
        colour = "#2e7d32" if row.met else "#c62828"
        end = x(row.ratio)
        left, right = min(one, end), max(one, end)
        out.append(
            f'<text x="{name_width}" y="{y + 14}" text-anchor="end">'
            f"<title>{escape(row.name)}</title>{escape(shorten(row.name, 88))}</text>")
        out.append(
            f'<rect x="{left:.1f}" y="{y + 4}" width="{max(right - left, 1.5):.1f}" height="{row_height - 8}" '
            f'fill="{colour}"><title>{escape(row.name)}: {escape(ratio_label(row.ratio))} '
            f"vs {escape(row.reference)}; target {escape(row.target)}</title></rect>")
        verdict = "" if row.met else "  MISS"
        label = f"{ratio_label(row.ratio)} vs {shorten(row.reference, 34)} (target {shorten(row.target, 26)}){verdict}"
        out.append(f'<text x="{label_left}" y="{y + 14}" fill="{colour}">{escape(label)}</text>')
    met = sum(row.met for row in rows)
    out.append(
        f'<text x="12" y="{height - 8}" fill="#555555" font-size="11">{len(charted)} rows with a ratio of '
        f"{len(rows)}; {met} targets met, {len(rows) - met} missed (every row)</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", default="-", help="saved bench output or docs/benchmarks.md")
    parser.add_argument("-o", "--output", default="-", help="the SVG file to write")
    arguments = parser.parse_args()
    if arguments.input == "-":
        text = sys.stdin.read()
    else:
        with open(arguments.input, encoding="utf-8") as source:
            text = source.read()
    svg = render(parse(text))
    if arguments.output == "-":
        sys.stdout.write(svg)
    else:
        with open(arguments.output, "w", encoding="utf-8") as target:
            target.write(svg)


if __name__ == "__main__":
    main()
