#!/usr/bin/env bash
# `make fuzz`: builds ca-fuzz under libFuzzer and AddressSanitizer (release, in .build-fuzz) and runs each target
# (FUZZ_TARGETS, default all) for FUZZ_SECONDS (default 180), FUZZ_JOBS (default 2) at a time, from its committed
# corpus (Fuzz/corpus/NAME), its seeds and what earlier runs here found (.build-fuzz/work/new/NAME). Afterwards
# the committed corpus is re-minimised (libFuzzer's -merge) with what this run added; an input that crashed, timed
# out, ran out of memory or broke a property is copied to Fuzz/regressions/NAME (commit it with the fix: make test
# replays it). Prints per target: executions, executions per second, CPU seconds, edges covered, corpus size, and
# appends the same to Fuzz/ledger.tsv as each target ends (the CPU time fuzzed across the work, per target:
# scripts/fuzz-ledger.py).
#
# FUZZ_CPU_GOAL=1 runs each target for the CPU time it still lacks to reach its goal (`ca-fuzz list`, fourth
# column), at most FUZZ_SECONDS (default 1200 in this mode) per run, furthest from its goal first, and skips
# targets that have reached it.
# Ctrl-C (or SIGTERM to this script) stops every fuzzer at once; what they found is merged and their CPU time
# recorded, and no further target starts.
set -uo pipefail
SWIFT=${SWIFT:-swift}
goal_mode=${FUZZ_CPU_GOAL:-}
if [ -n "$goal_mode" ]; then seconds=${FUZZ_SECONDS:-1200}; else seconds=${FUZZ_SECONDS:-180}; fi
jobs=${FUZZ_JOBS:-2}
work=.build-fuzz/work
bin=$PWD/.build-fuzz/release/ca-fuzz

"$SWIFT" build --product ca-fuzz || exit 1
# SwiftPM passes its sanitizers to swiftc as separate -sanitize= flags in no fixed order, and swiftc keeps only the
# last: Swift code got coverage or AddressSanitizer, by chance, never both. The combined flag, given last, is both.
"$SWIFT" build -c release --product ca-fuzz --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
    -Xswiftc -DCA_LIBFUZZER --scratch-path .build-fuzz || exit 1

list=$(.build/debug/ca-fuzz list) || exit 1
targets=${FUZZ_TARGETS:-$(cut -f1 <<<"$list")}
for t in $targets; do
    grep -q "^$t	" <<<"$list" || { echo "fuzz: no target $t (targets: $(cut -f1 <<<"$list" | xargs))" >&2; exit 2; }
done
rm -rf "$work/seeds" "$work/min" "$work/artifacts" "$work"/*.stats
mkdir -p "$work"
printf '%s\n' "$list" >"$work/list.tsv"
if [ -n "$goal_mode" ]; then
    python3 scripts/fuzz-ledger.py --list "$work/list.tsv" --remaining Fuzz/ledger.tsv >"$work/remaining.tsv" || exit 1
    # The targets furthest from their goal first, so that a run stopped early went where it was needed most.
    targets=$(for t in $targets; do
        left=$(awk -F'\t' -v t="$t" '$1 == t { print $2 }' "$work/remaining.tsv")
        if [ "${left:-0}" -gt 0 ]; then printf '%s %s\n' "$left" "$t"; fi
    done | sort -rn | cut -d' ' -f2 | xargs)
    [ -n "$targets" ] || { echo "fuzz: every target has reached its CPU goal"; python3 scripts/fuzz-ledger.py --list "$work/list.tsv"; exit 0; }
fi
.build/debug/ca-fuzz seed "$work/seeds" || exit 1
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

run_one() {
    # Only the main shell handles a stop (below): this subshell finishes the target's merge and its ledger line.
    trap '' INT TERM
    local t=$1 maxlen malloc status cpu execs rate edges size budget=$seconds left
    if [ -n "$goal_mode" ]; then
        left=$(awk -F'\t' -v t="$t" '$1 == t { print $2 }' "$work/remaining.tsv")
        ((left < budget)) && budget=$((left < 10 ? 10 : left))
    fi
    maxlen=$(awk -F'\t' -v t="$t" '$1 == t { print $2 }' <<<"$list")
    malloc=$(awk -F'\t' -v t="$t" '$1 == t { print $3 }' <<<"$list")
    mkdir -p "Fuzz/corpus/$t" "$work/new/$t" "$work/artifacts/$t" "$work/min/$t"
    local dict=()
    [ -f "Fuzz/dict/$t.dict" ] && dict=("-dict=Fuzz/dict/$t.dict")
    local common=(-max_len="$maxlen" -malloc_limit_mb="$malloc" -rss_limit_mb=2048 -timeout=10 "${dict[@]}")
    /usr/bin/time -f '%U %S' -o "$work/$t.cpu" env CA_FUZZ_TARGET="$t" ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no "$bin" \
        -max_total_time="$budget" -print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" "${common[@]}" \
        "$work/new/$t" "Fuzz/corpus/$t" "$work/seeds/$t" >"$work/$t.log" 2>&1
    status=$?
    # The committed corpus becomes the smallest set of its inputs and this run's that covers the same features.
    if CA_FUZZ_TARGET="$t" ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no "$bin" -merge=1 "${common[@]}" "$work/min/$t" \
        "Fuzz/corpus/$t" "$work/new/$t" "$work/seeds/$t" >"$work/$t.merge.log" 2>&1; then
        rm -rf "Fuzz/corpus/$t" && mv "$work/min/$t" "Fuzz/corpus/$t"
    fi
    for artifact in "$work/artifacts/$t"/*; do
        [ -f "$artifact" ] || continue
        mkdir -p "Fuzz/regressions/$t"
        cp "$artifact" "Fuzz/regressions/$t/"
    done
    cpu=$(tail -n 1 "$work/$t.cpu" 2>/dev/null | awk '{ print $1 + $2 }')
    execs=$(awk '/^stat::number_of_executed_units/ { print $NF }' "$work/$t.log" | tail -n 1)
    rate=$(awk '/^stat::average_exec_per_sec/ { print $NF }' "$work/$t.log" | tail -n 1)
    edges=$(grep -o 'cov: [0-9]*' "$work/$t.log" | tail -n 1 | cut -d' ' -f2)
    size=$(find "Fuzz/corpus/$t" -type f | wc -l)
    # libFuzzer exits 72 when interrupted (Ctrl-C): a stopped run, not a failed one.
    ((status == 72)) && status=0
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%F)" "$commit" "$t" "${execs:-0}" "${rate:-0}" \
        "${cpu:-0}" "${edges:-0}" "$size" "$status" >"$work/$t.stats"
    # Recorded as soon as the target ends, so a run stopped later keeps this one's CPU time.
    flock Fuzz/ledger.tsv cat "$work/$t.stats" >>Fuzz/ledger.tsv
}

stopping=""
stop() {
    stopping=1
    pkill -INT -f "^$bin( |$)" 2>/dev/null
}
trap stop INT TERM
for t in $targets; do
    [ -n "$stopping" ] && break
    run_one "$t" &
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
done
while (($(jobs -rp | wc -l) > 0)); do wait -n; done

failed=0
printf '%-22s %12s %9s %9s %7s %7s  %s\n' target executions exec/s cpu-s edges corpus result
for t in $targets; do
    [ -f "$work/$t.stats" ] || continue
    IFS=$'\t' read -r day rev name execs rate cpu edges size status <"$work/$t.stats"
    result=ok
    if [ "$status" != 0 ]; then
        result="FAILED (exit $status): $work/$t.log; inputs in Fuzz/regressions/$t"
        failed=1
    fi
    printf '%-22s %12s %9s %9s %7s %7s  %s\n' "$name" "$execs" "$rate" "$cpu" "$edges" "$size" "$result"
done
python3 scripts/fuzz-ledger.py --list "$work/list.tsv" Fuzz/ledger.tsv
exit "$failed"
