#!/usr/bin/env bash
# Encode-speed benchmark (part of `make bench`): 640x480, one core (taskset -c 0 when available), median of 3 runs.
#  1. intra-only (IntraPeriod = 1) frames/s at RDOptimization 0 and 1;
#  2. the seed paper's configuration (cfg/encoder_baseline.cfg: I + P, SearchRange 32, 1 reference, RDO 0) frames/s
#     and the time split per stage, for the unmodified run and, when a CUDA GPU is present, the GPU run
#     (with the seed paper's Eq. 3 time change).
# Usage: tools/bench_encode.sh [CLIP [FRAMES]]   (default: sequences/megamind_640x480.yuv.gz, 10 frames)
set -uo pipefail
cd "$(dirname "$0")/.."
clip=${1:-sequences/megamind_640x480.yuv.gz}
frames=${2:-10}
[ -f "$clip" ] || clip=sequences/synthetic_640x480.yuv
[ -f "$clip" ] || { echo "bench_encode: no 640x480 clip (run sequences/make_clips.sh)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pin=(); command -v taskset >/dev/null && pin=(taskset -c 0)

# Runs one configuration 3 times; prints "fps total intme subpel md coding deblock" of the median run (by total).
measure() {
  local i
  for i in 1 2 3; do
    "${pin[@]}" bin/lencod -d cfg/encoder_baseline.cfg -p InputFile="$clip" -p SourceWidth=640 -p SourceHeight=480 \
      -p FramesToBeEncoded="$frames" -p OutputFile="$tmp/s.264" -p StatsFile="$tmp/st$i.jsonl" "$@" >/dev/null 2>&1 ||
      { echo "bench_encode: lencod failed: $*" >&2; return 1; }
    tail -1 "$tmp/st$i.jsonl" | python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]
print("%.6f %.4f %.4f %.4f %.4f %.4f %.4f" % (s["time_s"], s["frames"] / s["time_s"], s["time_integer_me_s"],
      s["time_subpel_me_s"], s["time_mode_decision_s"], s["time_coding_s"], s["time_deblocking_s"]))'
  done | sort -n | sed -n 2p
}

echo "clip: $clip, $frames frames, 640x480, pinned: ${pin[*]:-no}"
printf '%-34s %8s %8s %8s %8s %8s %8s %8s\n' run fps total_s int_me subpel md coding deblock
row() { local name=$1; shift; local r; r=$(measure "$@") || return 1
  set -- $r; printf '%-34s %8.2f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f\n' "$name" "$2" "$1" "$3" "$4" "$5" "$6" "$7"
  echo "$1" >"$tmp/last_total"; }
row "intra-only RDO 0" -p IntraPeriod=1 -p RDOptimization=0
row "intra-only RDO 1" -p IntraPeriod=1 -p RDOptimization=1
row "paper cfg, unmodified (CPU FFS)" -p GPUIntegerME=0 && t_cpu=$(cat "$tmp/last_total")
if nvidia-smi -L >/dev/null 2>&1; then
  row "paper cfg, GPU integer ME" -p GPUIntegerME=1 && t_gpu=$(cat "$tmp/last_total") &&
    python3 -c "print('Eq. 3 time change: %+.2f %%' % (($t_gpu - $t_cpu) / $t_cpu * 100))"
else
  echo "(no CUDA GPU: GPU run not timed; its twin is a correctness reference, not a speed path)"
fi
