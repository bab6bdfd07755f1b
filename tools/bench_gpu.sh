#!/usr/bin/env bash
# make bench-gpu: picture-level integer ME on the GPU against its twin (tools/bench_gpu_main.cpp).
# Records what doc/PERFORMANCE.md needs: GPU and driver (nvidia-smi when present), date, then the table. Without
# arguments, and where sequences/make_clips.sh has made the clips, the table again on real pictures: a kernel's
# bounds, and so its work, depend on the content, and the synthetic pair's shifted noise is a hard case.
set -o pipefail
cd "$(dirname "$0")/.."
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | sed 's/^/gpu: /'
fi
bin/bench_gpu "$@" || exit
clip640=sequences/megamind_long_640x480.yuv.gz clip1080=sequences/megamind_1920x1080.yuv.gz
if [ $# -eq 0 ] && [ -f "$clip640" ] && [ -f "$clip1080" ]; then
  echo
  echo "Real pictures: $clip640 frames 39-40, $clip1080 frames 19-20"
  bin/bench_gpu --no-twin --clip 640 "$clip640" 40 --clip 1920 "$clip1080" 20
fi
