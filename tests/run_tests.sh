#!/usr/bin/env bash
# Runs the GoogleTest suite and ends with the line CI reads: "N passed, N failed[, N skipped]".
set -o pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
bin/gme_tests --gtest_color=no "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*listed below.*/\1/p' "$log" | tail -1)
skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
rm -f "$log"
passed=${passed:-0}; failed=${failed:-0}; skipped=${skipped:-0}
# GoogleTest counts skipped tests inside PASSED; report them apart.
passed=$((passed - skipped))
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$rc" -eq 0 ]
