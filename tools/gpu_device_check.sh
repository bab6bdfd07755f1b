#!/usr/bin/env bash
# Everything the GPU path must show on a machine with an NVIDIA GPU, in one run of minutes, on a host that has the
# CUDA toolkit but may lack FFmpeg and a network (the working tree is there, built outputs need not be):
#   1. build: the default fat binary (every architecture of CUDA_ARCH), timed; cuobjdump lists its images;
#   2. the GPU tests on CUDA: GpuMe*, GpuSubpel* and the whole golden table with GME_REQUIRE_GPU=1 (its GPU rows must
#      run on the GPU; without FFmpeg the rows are held to their hashes alone, GME_GOLDEN_NO_DECODE=1);
#   3. a second build with compute_80 PTX only (CUDA_PTX_ONLY=1), which the driver JIT-compiles for this GPU: the
#      same GPU tests and golden table with its programs, and with the JIT disabled the device check's refusal;
#   4. bin/bench_gpu of this build against a base build (BASE), alternating in rounds in this one run (a GPU's
#      figures compare only so), on the synthetic pair or the pictures BENCH_CLIPS names, plus one whole
#      `make bench-gpu` table;
#   5. N = 1, 4, 8, 16 concurrent GPU encodes (lencod, 640x480 clip made by bin/synth): frames/s per encode and in
#      total, GPU memory per process (nvidia-smi); again under CUDA MPS where nvidia-cuda-mps-control exists;
#   6. compute-sanitizer (memcheck with leak check, racecheck, synccheck, initcheck) on GPU tests, in the time left
#      before DEADLINE seconds (default 540) after the start.
# Usage: tools/gpu_device_check.sh OUTDIR   (OUTDIR may also come as $OUT). At most 8 files land in OUTDIR; a
# summary table is printed last (and kept in OUTDIR/summary.txt).
# BASE: the source step 4 compares with, a revision (`git archive BASE`, where this copy's .git has it) or a tar file
# (made beforehand, e.g. `mkdir -p build && git archive -o build/base.tar REV`, for a copy whose .git lacks REV),
# built for this GPU's architecture alone; without BASE step 4 times this build alone. BENCH_CLIPS: bench_gpu's
# --clip arguments for every run of both builds (e.g. "--clip 640 /tmp/c640.yuv 40"); BENCH_ROUNDS: rounds (default
# 5). STEPS="build tests ptx bench concurrency sanitize" chooses steps (default: all); CUDA_ARCH narrows step 1's
# build as it does make's; CONC_N and CONC_FRAMES change step 5's process counts (default "1 4 8 16") and clip length
# (260, a whole clip of a sweep: each encode's time includes its CUDA start-up, as in a sweep).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-}}
[ -n "$out" ] || { echo "usage: tools/gpu_device_check.sh OUTDIR" >&2; exit 2; }
mkdir -p "$out"
steps=${STEPS:-build tests sanitize ptx bench concurrency}
want() { case " $steps " in *" $1 "*) return 0;; esac; return 1; }
jobs=$(nproc)
t0=$(date +%s)
deadline=${DEADLINE:-540}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sum="$out/summary.txt"
: >"$sum"
note() { echo "$*" | tee -a "$sum"; }
stamp() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
secs() { local a=$1; echo "$(( $(date +%s) - a ))"; }
# "N passed, N failed, N skipped" from a GoogleTest log.
gtest_counts() {
  local p f s
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$1" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*listed below.*/\1/p' "$1" | tail -1)
  s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*listed below.*/\1/p' "$1" | tail -1)
  echo "${p:-0} passed, ${f:-0} failed, ${s:-0} skipped"
}
export CUDA_CACHE_PATH="$tmp/jit-cache"  # a fresh JIT cache: the PTX build really compiles here

stamp "device"
{
  date -u '+%Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -2 | head -1
  echo "cores: $jobs"
} | tee "$out/build.log" | sed 's/^/  /'
note "device: $(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | head -1), $jobs cores"
if ! command -v ffmpeg >/dev/null 2>&1; then
  export GME_GOLDEN_NO_DECODE=1
  note "no ffmpeg here: golden rows are held to their hashes only (GME_GOLDEN_NO_DECODE=1)"
fi
gpu_filter='GpuMe*:GpuSubpel*:*Golden*'

# ---- 1. Build ------------------------------------------------------------------------------------------------------
if want build; then
  stamp "1. build (default CUDA_ARCH)"
  a=$(date +%s)
  make -j"$jobs" CUDA=1 WERROR=${WERROR:-1} build/gpu/me_cuda.cu.o >>"$out/build.log" 2>&1; rc1=$?
  nvcc_s=$(secs "$a")
  make -j"$jobs" CUDA=1 WERROR=${WERROR:-1} all >>"$out/build.log" 2>&1; rc2=$?
  note "build (fat binary): rc $rc1/$rc2, gpu/me_cuda.cu ${nvcc_s} s, whole build $(secs "$a") s on $jobs cores"
  { echo "== cuobjdump --list-elf bin/lencod"; cuobjdump --list-elf bin/lencod;
    echo "== cuobjdump --list-ptx bin/lencod"; cuobjdump --list-ptx bin/lencod; } >"$out/cuobjdump.txt" 2>&1
  note "cuobjdump --list-elf bin/lencod: $(grep -o 'sm_[0-9]*' "$out/cuobjdump.txt" | sort -u -t_ -k2 -n | tr '\n' ' ')"
fi

# The two other builds go in the background while the tests run (the tests are not timed).
based=0
if want ptx; then
  ( make -j"$jobs" CUDA=1 WERROR=${WERROR:-1} CUDA_ARCH=80 CUDA_PTX_ONLY=1 BUILD=build-ptx80 BIN=bin-ptx80 all \
      >"$tmp/build_ptx80.log" 2>&1; echo "rc $?" >>"$tmp/build_ptx80.log" ) &
  ptx_pid=$!
  ptx_start=$(date +%s)
fi
if want bench && [ -n "${BASE:-}" ]; then
  base="$tmp/base"
  mkdir -p "$base"
  if [ -f "$BASE" ]; then
    tar -xf "$BASE" -C "$base" && based=1
  elif git rev-parse -q --verify "$BASE^{commit}" >/dev/null 2>&1; then
    git archive "$BASE" | tar -x -C "$base" && based=1
  fi
  if [ "$based" = 1 ]; then
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
    ( make -C "$base" -j"$jobs" CUDA=1 CUDA_ARCH="$arch" bin/bench_gpu >"$tmp/build_base.log" 2>&1
      echo "rc $?" >>"$tmp/build_base.log" ) &
    base_pid=$!
  else
    note "bench: BASE=$BASE is neither a file nor a revision of this copy: this build alone"
  fi
fi

# ---- 2. GPU tests --------------------------------------------------------------------------------------------------
if want tests; then
  stamp "2. GPU tests, fat binary"
  GME_REQUIRE_GPU=1 GME_BIN=bin bin/gme_tests --gtest_color=no --gtest_filter="$gpu_filter" >"$out/tests.log" 2>&1
  note "tests (bin/, $gpu_filter, GME_REQUIRE_GPU=1): $(gtest_counts "$out/tests.log")"
fi

# ---- 3. compute_80 PTX only, JIT-compiled by the driver --------------------------------------------------------------
if want ptx; then
  stamp "3. compute_80 PTX-only build"
  wait "$ptx_pid"
  cat "$tmp/build_ptx80.log" >>"$out/build.log"
  note "build (CUDA_ARCH=80 CUDA_PTX_ONLY=1): $(tail -1 "$tmp/build_ptx80.log"), done $(secs "$ptx_start") s after its start"
  { echo "== cuobjdump --list-elf bin-ptx80/lencod (none expected)"; cuobjdump --list-elf bin-ptx80/lencod;
    echo "== cuobjdump --list-ptx bin-ptx80/lencod"; cuobjdump --list-ptx bin-ptx80/lencod; } >>"$out/cuobjdump.txt" 2>&1
  a=$(date +%s)
  GME_REQUIRE_GPU=1 GME_BIN=bin-ptx80 bin-ptx80/gme_tests --gtest_color=no --gtest_filter="$gpu_filter" \
    >"$out/tests_ptx80.log" 2>&1
  note "tests (bin-ptx80/, JIT from compute_80 PTX, GME_REQUIRE_GPU=1): $(gtest_counts "$out/tests_ptx80.log"), $(secs "$a") s"
  # The device check's refusal: with the JIT disabled this build has no image the GPU can run.
  bin/synth -o "$tmp/small.yuv" -s 176x144 -n 3 >/dev/null 2>&1
  CUDA_DISABLE_PTX_JIT=1 bin-ptx80/lencod -d cfg/encoder_baseline.cfg -p InputFile="$tmp/small.yuv" -p SourceWidth=176 \
    -p SourceHeight=144 -p FramesToBeEncoded=3 -p GPUIntegerME=1 -p OutputFile="$tmp/small.264" \
    >"$tmp/nojit.log" 2>&1
  echo "== CUDA_DISABLE_PTX_JIT=1 bin-ptx80/lencod: rc $?" >>"$out/tests_ptx80.log"
  cat "$tmp/nojit.log" >>"$out/tests_ptx80.log"
  note "refusal without JIT: $(grep -i -m1 'warning' "$tmp/nojit.log")"
fi

# ---- 4. Kernel benchmark: this build against BASE ------------------------------------------------------------------
# The value of column `name` in bench_gpu's row for WIDTH (the header names the columns; a row's first field is
# WIDTHxHEIGHT alone, which the line naming a clip's frames, "WIDTHxHEIGHT: frames ...", is not).
col() {  # file width name
  awk -v w="$2" -v name="$3" '$1 == "size" { for (i = 1; i <= NF; ++i) if ($i == name) c = i }
       c && $1 ~ "^" w "x[0-9]+$" { print $c; exit }' "$1"
}
if want bench; then
  stamp "4. bench_gpu A/B"
  if [ "$based" = 1 ]; then
    wait "$base_pid"
    { echo "== build of BASE ($BASE)"; cat "$tmp/build_base.log"; } >>"$out/build.log"
    [ -x "$base/bin/bench_gpu" ] || { note "bench: the BASE build failed (build.log)"; based=0; }
  fi
  builds="this"
  [ "$based" = 1 ] && builds="base this"
  rounds=${BENCH_ROUNDS:-5}
  : >"$out/bench.log"
  : >"$tmp/ab.tsv"
  for round in $(seq "$rounds"); do
    for b in $builds; do
      exe=bin/bench_gpu
      [ "$b" = base ] && exe="$base/bin/bench_gpu"
      for cfg in "640 32 8" "640 32 1" "1920 32 8"; do
        set -- $cfg
        # shellcheck disable=SC2086  # BENCH_CLIPS is a list of arguments
        "$exe" --no-twin --reps 50 --only $cfg ${BENCH_CLIPS:-} >"$tmp/one.txt" 2>&1
        { echo "== round $round $b --only $cfg"; cat "$tmp/one.txt"; } >>"$out/bench.log"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$b" "$1x$2x$3" "$(col "$tmp/one.txt" "$1" wall)" \
          "$(col "$tmp/one.txt" "$1" enc)" "$(col "$tmp/one.txt" "$1" resid)" "$(col "$tmp/one.txt" "$1" kernel)" \
          "$round" >>"$tmp/ab.tsv"
      done
    done
  done
  { echo "== make bench-gpu table (this build)"; tools/bench_gpu.sh --reps 20; } >>"$out/bench.log" 2>&1
  note ""
  note "bench_gpu (ms per picture, min / median of $rounds rounds, builds alternating; kernel: the integer kernels"
  note "alone; pictures: ${BENCH_CLIPS:-the synthetic pair}; base: ${BASE:-none}):"
  note "$(printf '%-7s %-10s %15s %15s %15s %15s' build config wall enc resid kernel)"
  for b in $builds; do
    for c in 640x32x8 640x32x1 1920x32x8; do
      line=$(printf '%-7s %-10s' "$b" "$c")
      for f in 3 4 5 6; do
        line+=$(awk -F'\t' -v b="$b" -v c="$c" -v f="$f" '$1 == b && $2 == c && $f != "" { print $f }' "$tmp/ab.tsv" |
          sort -g | awk '{ v[n++] = $1 } END { if (!n) printf "%15s", "-";
                          else printf "%15s", sprintf("%.3f / %.3f", v[0], v[int((n - 1) / 2)]) }')
      done
      note "$line"
    done
  done
fi

# ---- 5. Concurrent encodes -------------------------------------------------------------------------------------------
if want concurrency; then
  stamp "5. concurrent GPU encodes"
  frames=${CONC_FRAMES:-260}
  clip="$tmp/c640.yuv"
  bin/synth -o "$clip" -s 640x480 -n "$frames" >/dev/null 2>&1
  : >"$out/concurrency.log"
  run_batch() {  # label n [environment for lencod]
    local label=$1 n=$2 i pids=() a
    shift 2
    rm -f "$tmp"/enc_*.time "$tmp"/enc_*.log "$tmp/smi.csv"
    ( while :; do nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >>"$tmp/smi.csv" 2>/dev/null
        sleep 0.2; done ) &
    local smi=$!
    a=$(date +%s.%N)
    for i in $(seq 1 "$n"); do
      ( s=$(date +%s.%N)
        env "$@" bin/lencod -d cfg/encoder_baseline.cfg -p InputFile="$clip" -p SourceWidth=640 -p SourceHeight=480 \
          -p FramesToBeEncoded="$frames" -p GPUIntegerME=1 -p OutputFile="$tmp/enc_$i.264" >"$tmp/enc_$i.log" 2>&1
        echo "$? $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')" >"$tmp/enc_$i.time" ) &
      pids+=($!)
    done
    wait "${pids[@]}"
    local wall
    wall=$(awk -v a="$a" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
    local on_gpu fails per mem
    on_gpu=$(grep -lE "Integer ME +: gpu:" "$tmp"/enc_*.log | wc -l)
    fails=$(awk '$1 != 0' "$tmp"/enc_*.time | wc -l)
    per=$(awk -v f="$frames" '{ s += f / $2; n++ } END { printf "%.1f", s / n }' "$tmp"/enc_*.time)
    # GPU memory per process: each process's largest reading, then the median over processes.
    mem=$(awk -F', *' '$2 + 0 > m[$1] + 0 { m[$1] = $2 } END { for (p in m) print m[p] }' "$tmp/smi.csv" 2>/dev/null |
          sort -g | awk '{ v[n++] = $1 } END { if (!n) print "-"; else print v[int((n - 1) / 2)] }')
    {
      echo "== $label N=$n: wall $wall s, on GPU $on_gpu/$n, failed $fails"
      cat "$tmp"/enc_*.time
      grep -h "Integer ME\|Total encoding time\|Warning" "$tmp"/enc_*.log | sort | uniq -c
      echo "-- nvidia-smi samples (pid, MiB):"; sort -u "$tmp/smi.csv" | head -40
    } >>"$out/concurrency.log"
    note "$(printf '%-5s %3d %14s %12s %12s %10s %8s' "$label" "$n" "$per" \
      "$(awk -v n="$n" -v f="$frames" -v w="$wall" 'BEGIN { printf "%.1f", n * f / w }')" "$mem" "$on_gpu/$n" "$fails")"
  }
  note ""
  note "concurrent GPU encodes (640x480, $frames frames, cfg/encoder_baseline.cfg + GPUIntegerME=1; $jobs cores):"
  note "$(printf '%-5s %3s %14s %12s %12s %10s %8s' mode N 'fps/encode' 'fps total' 'GPU MiB/proc' 'on GPU' failed)"
  for n in ${CONC_N:-1 4 8 16}; do run_batch plain "$n"; done
  # The driver's own default of 8 connections (lencod sets 2 unless the environment says: gpu/gpu_me.h).
  for n in 1 16; do run_batch conn8 "$n" CUDA_DEVICE_MAX_CONNECTIONS=8; done
  if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    export CUDA_MPS_PIPE_DIRECTORY="$tmp/mps-pipe" CUDA_MPS_LOG_DIRECTORY="$tmp/mps-log"
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d >>"$out/concurrency.log" 2>&1; then
      for n in 1 8 16; do run_batch mps "$n"; done
      echo quit | timeout 20 nvidia-cuda-mps-control >>"$out/concurrency.log" 2>&1
    else
      note "mps: nvidia-cuda-mps-control -d failed (concurrency.log)"
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  else
    note "mps: nvidia-cuda-mps-control not found"
  fi
fi

# ---- 6. compute-sanitizer, last: it gets the time left before DEADLINE -----------------------------------------
if want sanitize; then
  stamp "6. compute-sanitizer"
  san() {  # tool share filter [options]: the tool gets 1/share of the time left
    local tool=$1 share=$2 filter=$3; shift 3
    local left=$(( (deadline - ($(date +%s) - t0)) / share ))
    if [ "$left" -lt 15 ]; then note "sanitizer $tool: skipped, no time left before DEADLINE"; return; fi
    timeout "$left" compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" bin/gme_tests --gtest_color=no \
      --gtest_filter="$filter" >>"$out/sanitizer.log" 2>&1
    local rc=$?
    echo "$tool rc=$rc: $filter" | tee -a "$out/sanitizer.log"
    note "sanitizer $tool: rc $rc ($(tail -n 400 "$out/sanitizer.log" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1))"
  }
  san memcheck 2 'GpuMeCuda.MatchesTwinSmall:GpuMeCuda.SubpelTablesMatchTwin:GpuMeCuda.ProgressiveAnswerLandsRowByRow:GpuMeCuda.PreloadedReferencesAreNotSentAgain:GpuMeCuda.SearchesAPictureAgainstItselfById:GpuMeCuda.KeepsPicturesResidentById' --leak-check full
  san racecheck 2 'GpuMeCuda.MatchesTwinSmall:GpuMeCuda.PreloadedReferencesAreNotSentAgain'
  san synccheck 2 'GpuMeCuda.MatchesTwinSmall'
  san initcheck 1 'GpuMeCuda.MatchesTwinSmall:GpuMeCuda.PreloadedReferencesAreNotSentAgain'
fi

stamp "done"
echo
echo "==================== summary ($(( $(date +%s) - t0 )) s) ===================="
cat "$sum"
