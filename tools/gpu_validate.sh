#!/usr/bin/env bash
# Everything the GPU path must show on a machine with a CUDA GPU, in one run:
#   1. the whole GoogleTest suite, GPU tests included (none may be skipped there);
#   2. compute-sanitizer memcheck/racecheck/synccheck on the GPU tests and memcheck on a GPU encode;
#   3. make bench-gpu (integer ME per picture, kernel-only time, twin time);
#   4. an RD sweep of the GPU path against the unmodified run for several GPUTopK / GPUSearchCenter settings on
#      the real clips (BD-rate/BD-PSNR), and the end-to-end timing of tools/bench_gpu_e2e.sh (Eq. 3 time change,
#      stage split; whole clips, raw input, one encode at a time).
# Usage: [STEPS="tests sanitize bench rd time"] tools/gpu_validate.sh OUTDIR [FRAMES]
# (expects bin/ built and the clips of sequences/make_clips.sh). At most 7 files land in OUTDIR.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_validate.sh OUTDIR [FRAMES]}
frames=${2:-12}
mkdir -p "$out"
steps=${STEPS:-tests sanitize bench rd time}
want() { case " $steps " in *" $1 "*) return 0;; esac; return 1; }
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
tmp=$(mktemp -d)

if want tests; then
echo "== 1. test suite"
GME_BIN=bin tests/run_tests.sh >"$out/tests.log" 2>&1; echo "tests rc=$?"; tail -3 "$out/tests.log"
fi

if want sanitize; then
echo "== 2. compute-sanitizer"
san() { local tool=$1; shift; compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" >>"$out/sanitizer.log" 2>&1;
        echo "$tool rc=$? : $*" | tee -a "$out/sanitizer.log"; }
san memcheck --leak-check full bin/gme_tests --gtest_filter='GpuMeCuda.MatchesTwinSmall:GpuMeCuda.KeepsPicturesResidentById:GpuMeCuda.MatchesTwinAtRange64And128:GpuMeCuda.SubpelTablesMatchTwin:GpuMeCuda.ProgressiveAnswerLandsRowByRow:GpuMeCuda.PreloadedReferencesAreNotSentAgain'
san racecheck bin/gme_tests --gtest_filter='GpuMeCuda.MatchesTwinSmall:GpuMeCuda.SubpelTablesMatchTwin:GpuMeCuda.ProgressiveAnswerLandsRowByRow:GpuMeCuda.PreloadedReferencesAreNotSentAgain'
san synccheck bin/gme_tests --gtest_filter='GpuMeCuda.MatchesTwinSmall:GpuMeCuda.SubpelTablesMatchTwin'
san initcheck bin/gme_tests --gtest_filter='GpuMeCuda.MatchesTwinSmall:GpuMeCuda.PreloadedReferencesAreNotSentAgain'
san memcheck bin/lencod -d cfg/encoder_baseline.cfg -p InputFile=sequences/megamind_176x144.yuv.gz -p SourceWidth=176 \
  -p SourceHeight=144 -p FramesToBeEncoded=4 -p GPUIntegerME=1 -p NumberReferenceFrames=2 -p OutputFile=$tmp/s.264
grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY" "$out/sanitizer.log" | sort | uniq -c
fi

if want bench; then
echo "== 3. bench-gpu"
tools/bench_gpu.sh >"$out/bench_gpu.log" 2>&1; tail -30 "$out/bench_gpu.log"
fi

if want rd; then
echo "== 4a. RD sweep, GPU settings vs unmodified"
seqs=megamind_640x480,megamind_352x288,vtest_720x576,vtest_352x288,tree_200x120,megamind_1920x1080
bin/rdsweep -f cfg/encoder_baseline.cfg --frames "$frames" -j "$(($(nproc) - 2))" --out "$tmp/rd" --seq "$seqs" \
  --run unmodified --run k1:GPUIntegerME=1,GPUTopK=1,GPUSearchCenter=0 --run k4:GPUIntegerME=1,GPUTopK=4 \
  --run k8:GPUIntegerME=1,GPUTopK=8 --run k16:GPUIntegerME=1,GPUTopK=16 \
  --run k4t:GPUIntegerME=1,GPUTopK=4,GPUSearchCenter=1 --run k8t:GPUIntegerME=1,GPUTopK=8,GPUSearchCenter=1 \
  >"$out/rd_sweep.log" 2>&1
echo "rdsweep rc=$?"; cp "$tmp/rd/report.md" "$out/rd_report.md"; cp "$tmp/rd/results.csv" "$out/rd_results.csv"
fi

if want time; then
echo "== 4b. end-to-end time, GPU run vs unmodified, one encode at a time (tools/bench_gpu_e2e.sh)"
PARTS=time tools/bench_gpu_e2e.sh "$tmp/e2e" >"$out/time_report.md" 2>&1; echo "e2e rc=$?"; cat "$out/time_report.md"
fi
rm -rf "$tmp"
