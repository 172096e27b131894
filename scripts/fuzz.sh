#!/usr/bin/env bash
# `make fuzz`: builds ca-fuzz under libFuzzer and AddressSanitizer (release, in .build-fuzz) and runs each target
# (FUZZ_TARGETS, default all) for FUZZ_SECONDS (default 180), FUZZ_JOBS (default 2) at a time, from its committed
# corpus (Fuzz/corpus/NAME), its seeds and what earlier runs here found (.build-fuzz/work/new/NAME). Afterwards
# the committed corpus is re-minimised (libFuzzer's -merge) with what this run added; an input that crashed, timed
# out, ran out of memory or broke a property is copied to Fuzz/regressions/NAME (commit it with the fix: make test
# replays it). Prints per target: executions, executions per second, CPU seconds, edges covered, corpus size, and
# appends the same to Fuzz/ledger.tsv (the CPU time fuzzed across the work, per target: scripts/fuzz-ledger.py).
set -uo pipefail
SWIFT=${SWIFT:-swift}
seconds=${FUZZ_SECONDS:-180}
jobs=${FUZZ_JOBS:-2}
work=.build-fuzz/work
bin=.build-fuzz/release/ca-fuzz

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
.build/debug/ca-fuzz seed "$work/seeds" || exit 1
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

run_one() {
    local t=$1 maxlen malloc status cpu execs rate edges size
    maxlen=$(awk -F'\t' -v t="$t" '$1 == t { print $2 }' <<<"$list")
    malloc=$(awk -F'\t' -v t="$t" '$1 == t { print $3 }' <<<"$list")
    mkdir -p "Fuzz/corpus/$t" "$work/new/$t" "$work/artifacts/$t" "$work/min/$t"
    local dict=()
    [ -f "Fuzz/dict/$t.dict" ] && dict=("-dict=Fuzz/dict/$t.dict")
    local common=(-max_len="$maxlen" -malloc_limit_mb="$malloc" -rss_limit_mb=2048 -timeout=10 "${dict[@]}")
    /usr/bin/time -f '%U %S' -o "$work/$t.cpu" env CA_FUZZ_TARGET="$t" ASAN_OPTIONS=detect_leaks=0 "$bin" \
        -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" "${common[@]}" \
        "$work/new/$t" "Fuzz/corpus/$t" "$work/seeds/$t" >"$work/$t.log" 2>&1
    status=$?
    # The committed corpus becomes the smallest set of its inputs and this run's that covers the same features.
    if CA_FUZZ_TARGET="$t" ASAN_OPTIONS=detect_leaks=0 "$bin" -merge=1 "${common[@]}" "$work/min/$t" \
        "Fuzz/corpus/$t" "$work/new/$t" "$work/seeds/$t" >"$work/$t.merge.log" 2>&1; then
        rm -rf "Fuzz/corpus/$t" && mv "$work/min/$t" "Fuzz/corpus/$t"
    fi
    for artifact in "$work/artifacts/$t"/*; do
        [ -f "$artifact" ] || continue
        mkdir -p "Fuzz/regressions/$t"
        cp "$artifact" "Fuzz/regressions/$t/"
    done
    cpu=$(awk '{ print $1 + $2 }' "$work/$t.cpu" 2>/dev/null || echo 0)
    execs=$(awk -F': *' '/^stat::number_of_executed_units/ { print $2 }' "$work/$t.log" | tail -n 1)
    rate=$(awk -F': *' '/^stat::average_exec_per_sec/ { print $2 }' "$work/$t.log" | tail -n 1)
    edges=$(grep -o 'cov: [0-9]*' "$work/$t.log" | tail -n 1 | cut -d' ' -f2)
    size=$(find "Fuzz/corpus/$t" -type f | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%F)" "$commit" "$t" "${execs:-0}" "${rate:-0}" \
        "$cpu" "${edges:-0}" "$size" "$status" >"$work/$t.stats"
}

for t in $targets; do
    run_one "$t" &
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
done
wait

failed=0
printf '%-22s %12s %9s %9s %7s %7s  %s\n' target executions exec/s cpu-s edges corpus result
for t in $targets; do
    IFS=$'\t' read -r day rev name execs rate cpu edges size status <"$work/$t.stats"
    result=ok
    if [ "$status" != 0 ]; then
        result="FAILED (exit $status): $work/$t.log; inputs in Fuzz/regressions/$t"
        failed=1
    fi
    printf '%-22s %12s %9s %9s %7s %7s  %s\n' "$name" "$execs" "$rate" "$cpu" "$edges" "$size" "$result"
    cat "$work/$t.stats" >>Fuzz/ledger.tsv
done
python3 scripts/fuzz-ledger.py Fuzz/ledger.tsv
exit "$failed"
