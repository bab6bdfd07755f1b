#!/usr/bin/env bash
# The seed paper's Table 3 (energy) measured on a machine with an NVIDIA GPU, in one run:
#   1. builds lencod, rdsweep, bdrate and the test program with CUDA;
#   2. runs the energy and rdsweep tests (the NVML loader against the real driver included);
#   3. sweeps one 640x480 clip, one GOP (12 frames, as the paper's Table 3), QP 28/32/36/40, unmodified against
#      the GPU run, one encode at a time (--timing serial), reading NVML's total-energy counter of the GPU (and
#      RAPL where readable) around every encode;
#   4. copies report.md (Tables 2 and 3, provenance), results.csv, every point's StatsFile summary and the logs
#      into OUTDIR (7 files).
# Usage: tools/device_energy.sh OUTDIR [FRAMES]
# Clip: sequences/megamind_640x480.yuv.gz when present (carry it to the device), else the synthetic 640x480 clip
# that bin/synth makes here.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/device_energy.sh OUTDIR [FRAMES]}
frames=${2:-12}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs=$(nproc)

{
  date -u "+%Y-%m-%d %H:%M:%S UTC"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.max.sm --format=csv
  nvidia-smi -q -d POWER | sed -n '1,40p'
  echo "RAPL:"; ls -l /sys/class/powercap/ 2>&1 | head -5
  for f in /sys/class/powercap/intel-rapl:*/energy_uj; do [ -e "$f" ] && { cat "$f" 2>&1 | head -1; }; done
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

echo "== 1. build"
export PATH="$PATH:/usr/local/cuda/bin"  # nvcc where the CUDA toolkit installs it, when it is not on the PATH
make -j"$jobs" CUDA=1 bin/lencod bin/rdsweep bin/bdrate bin/synth bin/gme_tests bin/libfake_nvml.so \
  > "$tmp/build.log" 2>&1
rc=$?
tail -3 "$tmp/build.log"
if [ $rc -ne 0 ]; then cp "$tmp/build.log" "$out/build.log"; echo "build failed"; exit 1; fi

echo "== 2. energy and rdsweep tests"
tests/run_tests.sh --gtest_filter='Energy*:Rdsweep*:Bjontegaard*:BdrateCli*' > "$out/tests.log" 2>&1
echo "tests rc=$?"; tail -2 "$out/tests.log"

echo "== 3. sweep ($frames frames, serial timing)"
clip=sequences/megamind_640x480.yuv.gz
seq="megamind_640x480=$clip:640x480:30:23.976"
if [ ! -r "$clip" ]; then
  sequences/make_clips.sh --synthetic-only > "$tmp/clips.log" 2>&1 || { tail -3 "$tmp/clips.log"; exit 1; }
  clip=sequences/synthetic_640x480.yuv
  seq="synthetic_640x480=$clip:640x480:10:30"
fi
echo "clip: $clip"
bin/rdsweep -f cfg/encoder_baseline.cfg --frames "$frames" --timing serial --no-recon --out "$tmp/sweep" "$seq" \
  > "$out/sweep.log" 2>&1
echo "rdsweep rc=$?"
cat "$out/sweep.log" | grep -v '^\[' | head -20
cp "$tmp/sweep/report.md" "$out/report.md" 2>/dev/null
cp "$tmp/sweep/results.csv" "$out/results.csv" 2>/dev/null
for f in "$tmp"/sweep/*/*/qp*/stats.jsonl; do
  printf '%s ' "${f#"$tmp"/sweep/}"
  tail -1 "$f"
done > "$out/summaries.txt"
sed -n '/## Energy/,/## lencod warnings\|## Points/p' "$out/report.md"
ls -l "$out"
