#!/usr/bin/env bash
# Runs the GoogleTest suite (arguments go to bin/gme_tests, e.g. --gtest_filter=...; GME_BIN=DIR runs DIR/gme_tests
# and the programs of DIR instead, e.g. the sanitizer builds' bin-asan). The last line printed is the
# one CI reads: "N passed, N failed". Skipped tests (e.g. GPU tests without a GPU, real clips not yet made) are
# neither: they are counted and named on the line before, because a skipped test is not a passed one.
# Exit status: non-zero if any test failed or the test program did not finish.
set -o pipefail
cd "$(dirname "$0")/.."
# GME_TEST_JOBS=N (default: the number of cores) runs the suite as N GoogleTest shards side by side
# (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX: each test runs in exactly one shard); their outputs follow one another.
jobs=${GME_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
prog="${GME_BIN:-bin}/gme_tests"
rc=0
if [ "$jobs" -eq 1 ]; then
  "$prog" --gtest_color=no "$@" 2>&1 | tee "$dir/0.log"
  rc=${PIPESTATUS[0]}
else
  # Job control: each shard in a process group of its own, and without the SIGINT/SIGQUIT "ignore" a
  # non-interactive shell gives background commands (the signal tests send those to the programs they start).
  set -m
  pids=()
  for ((i = 0; i < jobs; i++)); do
    GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$i "$prog" --gtest_color=no "$@" >"$dir/$i.log" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < jobs; i++)); do
    wait "${pids[$i]}" || rc=1
    echo "== shard $((i + 1)) of $jobs"
    cat "$dir/$i.log"
  done
  set +m
fi
# GoogleTest's summary: "[  PASSED  ] N tests." counts passed tests only (skipped ones are not in it);
# "[  SKIPPED ] N tests, listed below:" and "[  FAILED  ] N tests, listed below:" follow.
# Summed over the shards.
count() { cat "$dir"/*.log | sed -n "s/$1/\1/p" | awk '{ n += $1 } END { print n + 0 }'; }
passed=$(count '^\[  PASSED  \] \([0-9]*\) test.*')
failed=$(count '^\[  FAILED  \] \([0-9]*\) test.*listed below.*')
skipped=$(count '^\[  SKIPPED \] \([0-9]*\) test.*listed below.*')
passed=${passed:-0}; failed=${failed:-0}; skipped=${skipped:-0}
# A crash or an abort leaves no summary: count it as a failure.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo
if [ "$skipped" -gt 0 ]; then echo "${skipped} skipped (see the SKIPPED lines above; not counted as passed)"; fi
echo "${passed} passed, ${failed} failed"
[ "$rc" -eq 0 ]
