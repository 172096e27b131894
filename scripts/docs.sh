#!/usr/bin/env bash
# `make docs`: the DocC site of the CloudAssets product, as static files in .build/docs, to be served at the root
# of any static web server (`python3 -m http.server -d .build/docs 8000`, then open
# http://127.0.0.1:8000/documentation/cloudassets, or /tutorials/cloudassets for the tutorial). Fails on any DocC
# warning — a broken symbol link, a bad directive, a tutorial step whose file is missing — and on any public symbol
# without a summary, then prints the coverage.
set -euo pipefail
SWIFT=${SWIFT:-swift}
OUT=.build/docs
SYMBOLS=.build/docs-symbols
mkdir -p .build
log=.build/docs.log

# The symbol graph, with the types Exports.swift re-exports (see scripts/reexported-symbols.py).
"$SWIFT" build --target CloudAssets
python3 scripts/reexported-symbols.py "$SYMBOLS"

status=0
"$SWIFT" package --allow-writing-to-directory "$OUT" generate-documentation --target CloudAssets \
    --disable-indexing --transform-for-static-hosting --output-path "$OUT" \
    --additional-symbol-graph-dir "$SYMBOLS" --warnings-as-errors \
    --experimental-documentation-coverage --coverage-summary-level brief 2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ] || grep -qE '^(warning|error):' "$log"; then
    echo
    echo "docs: DocC reported problems (exit $status); full log in $log:"
    grep -E '^(warning|error):' "$log" | sort | uniq -c | head -n 40
    exit 1
fi

# Every public symbol has a summary (its abstract): the `///` comment's first paragraph, or a documentation
# extension in the catalog for what the compiler synthesises (init(rawValue:), init(from:)).
python3 - "$OUT/documentation-coverage.json" <<'EOF'
import json, sys
nodes = [n for n in json.load(open(sys.argv[1], encoding="utf-8")) if n["kind"]["isSymbol"]]
missing = sorted(n["referencePath"].split("/documentation/")[-1] for n in nodes if not n["hasAbstract"])
print(f"docs: coverage: {len(nodes) - len(missing)} of {len(nodes)} public symbols documented "
      f"({100 * (len(nodes) - len(missing)) / len(nodes):.1f} %)")
if missing:
    print("docs: without a summary:\n  " + "\n  ".join(missing))
    sys.exit(1)
EOF
echo "docs: the site is in $OUT; serve it (python3 -m http.server -d $OUT 8000) and open /documentation/cloudassets"
