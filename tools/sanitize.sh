#!/usr/bin/env bash
# Runs what `make sanitize` (ASan + UBSan) or `make tsan` (TSan) built into BIN_DIR: the unit tests with that
# directory's programs (GME_BIN), then a few encodes through paths the tests touch lightly (GPUIntegerME = 1 on the
# CPU twin, RD mode decision with slices and 4 references, y4m and pipe input, a y4m reconstruction). Any sanitizer
# report fails the run. The last line is the suite's "N passed, N failed".
#   tools/sanitize.sh BIN_DIR [--gtest_filter=...]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: tools/sanitize.sh BIN_DIR [gtest arguments]}
shift
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== encodes under $bin"
fail=0
encode() {
  if ! "$bin/lencod" "$@" -p OutputFile="$work/o.264" >"$work/log.txt" 2>&1; then
    echo "sanitize: encode failed: lencod $*"
    tail -30 "$work/log.txt"
    fail=1
  fi
}
"$bin/synth" -o "$work/a.yuv" -s 96x64 -n 6 >/dev/null || fail=1
"$bin/synth" -o "$work/b.y4m" -s 80x48 -n 4 --mode noise >/dev/null || fail=1
common=(-p InputFile="$work/a.yuv" -p SourceWidth=96 -p SourceHeight=64 -p FramesToBeEncoded=6)
encode "${common[@]}" -p GPUIntegerME=1 -p GPUSubpelDistortion=2 -p StatsFile="$work/s.jsonl"
encode "${common[@]}" -p RDOptimization=1 -p SliceMode=1 -p SliceArgument=7 -p NumberReferenceFrames=4 \
       -p EnableIPCM=1 -p ReconFile="$work/r.y4m"
encode -p InputFile="$work/b.y4m" -p FramesToBeEncoded=-1 -p IntraPeriod=2 -p SearchRange=8
encode -p InputFile=- -p FramesToBeEncoded=-1 <"$work/b.y4m"
[ "$fail" -eq 0 ] && echo "sanitize: encodes clean"

echo "== unit tests under $bin"
GME_BIN="$bin" tests/run_tests.sh "$@"
rc=$?
[ "$fail" -eq 0 ] || { echo "sanitize: an encode failed (see above)"; exit 1; }
exit "$rc"
