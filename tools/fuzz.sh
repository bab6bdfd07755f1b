#!/usr/bin/env bash
# Runs each libFuzzer harness that `make fuzz` built (BIN_DIR/fuzz_*) for SECONDS, FUZZ_JOBS of them at a time
# (default: the number of cores; each fuzzer is one process on one core), starting from its seed corpus
# tests/fuzz/corpus/NAME/ (read only: new inputs go to a scratch corpus under $TMPDIR).
# Prints one line per fuzzer: "fuzz: NAME: N execs in S s, clean" (or the crash, whose input is kept under
# build-fuzz/crashes/NAME/); the exit status is non-zero when any fuzzer found a crash.
#   tools/fuzz.sh BIN_DIR [SECONDS] [NAME...]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: tools/fuzz.sh BIN_DIR [SECONDS] [NAME...]}
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$bin"/fuzz_*; do [ -x "$f" ] && names+=("$(basename "$f")"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "fuzz: no fuzzer in $bin (run make fuzz)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
# One fuzzer: its line goes to $scratch/NAME.result, its exit status to $scratch/NAME.rc.
run_one() {
  local name=$1 log="$scratch/$1.log" rc execs secs
  mkdir -p "$scratch/$name" "build-fuzz/crashes/$name"
  # -rss_limit_mb: the readers may allocate one 16384x16384 picture (~400 MB) and its padded frame.
  "$bin/$name" -max_total_time="$seconds" -rss_limit_mb=3072 -timeout=30 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/crashes/$name/" "$scratch/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::\(average_exec_per_sec\): *//p' "$log" | tail -1)
  if [ "$rc" -eq 0 ]; then
    echo "fuzz: $name: ${execs:-?} execs in $seconds s (${secs:-?}/s), clean"
  else
    echo "fuzz: $name: FAILED after ${execs:-?} execs (exit $rc); inputs in build-fuzz/crashes/$name/"
    grep -E "ERROR|runtime error|SUMMARY|==ERROR|deadly signal|uncaught" "$log" | head -5 | sed 's/^/  /'
  fi >"$scratch/$name.result"
  echo "$rc" >"$scratch/$name.rc"
}
running=0
for name in "${names[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  run_one "$name" &
  running=$((running + 1))
done
wait
failed=0
for name in "${names[@]}"; do
  cat "$scratch/$name.result" 2>/dev/null || echo "fuzz: $name: no result (the runner died)"
  [ "$(cat "$scratch/$name.rc" 2>/dev/null)" = 0 ] || failed=1
done
exit "$failed"
