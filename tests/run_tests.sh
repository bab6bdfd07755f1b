#!/usr/bin/env bash
# Runs the GoogleTest suite (arguments go to bin/gme_tests, e.g. --gtest_filter=...; GME_BIN=DIR runs DIR/gme_tests
# and the programs of DIR instead, e.g. the sanitizer builds' bin-asan). The last line printed is the
# one CI reads: "N passed, N failed". Skipped tests (e.g. GPU tests without a GPU, real clips not yet made) are
# neither: they are counted and named on the line before, because a skipped test is not a passed one.
# Exit status: non-zero if any test failed or the test program did not finish.
set -o pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"${GME_BIN:-bin}/gme_tests" --gtest_color=no "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# GoogleTest's summary: "[  PASSED  ] N tests." counts passed tests only (skipped ones are not in it);
# "[  SKIPPED ] N tests, listed below:" and "[  FAILED  ] N tests, listed below:" follow.
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*listed below.*/\1/p' "$log" | tail -1)
skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*listed below.*/\1/p' "$log" | tail -1)
passed=${passed:-0}; failed=${failed:-0}; skipped=${skipped:-0}
# A crash or an abort leaves no summary: count it as a failure.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo
if [ "$skipped" -gt 0 ]; then echo "${skipped} skipped (see the SKIPPED lines above; not counted as passed)"; fi
echo "${passed} passed, ${failed} failed"
[ "$rc" -eq 0 ]
