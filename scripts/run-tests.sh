#!/usr/bin/env bash
# Runs `swift test --skip-build "$@"`, keeping the whole log in .build/test-logs/, and on failure ends with the
# failing tests' lines, so that the last screen of a CI log says what failed.
set -uo pipefail
mkdir -p .build/test-logs
log=".build/test-logs/$(date +%Y%m%d-%H%M%S)-$$.log"
"${SWIFT:-swift}" test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "run-tests: failed (exit $status); full log in $log. What failed:"
    grep -E '^✘ |error:|Fatal error|Crash|unexpected signal' "$log" | grep -v '^✘ Test run with' | cut -c1-400 | head -n 30
    grep -E '^✘ Test run with' "$log" | tail -n 1
fi
exit "$status"
