#!/usr/bin/env bash
# make bench-gpu: picture-level integer ME on the GPU against its twin (tools/bench_gpu_main.cpp).
# Records what doc/PERFORMANCE.md needs: GPU and driver (nvidia-smi when present), date, then the table.
set -o pipefail
cd "$(dirname "$0")/.."
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | sed 's/^/gpu: /'
fi
exec bin/bench_gpu "$@"
