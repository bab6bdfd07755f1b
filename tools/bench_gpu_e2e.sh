#!/usr/bin/env bash
# The encoder-level half of `make bench-gpu` (the per-picture integer ME table is tools/bench_gpu.sh):
#   A. end-to-end encode time of the GPU run against the unmodified run, paper configuration
#      (cfg/encoder_baseline.cfg: 640x480, SearchRange 32, 1 reference, RDOptimization 0), one encode at a time,
#      QP 28/32/36/40: the seed paper's Eq. 3 time change and the time split per stage (StatsFile summaries);
#   B. BD-rate / BD-PSNR of the paper-faithful GPU run (GPUTopK 1), of the default (GPUTopK 8) and of the default
#      with the temporal window centre (GPUSearchCenter 1) against the unmodified run on the real clips, whole
#      (parallel encodes: quality only, no timing).
# Usage: [E2E_CLIPS="megamind_full_640x480"] [E2E_FRAMES=-1] [RD_FRAMES=-1] [PARTS="time rd"]
#        tools/bench_gpu_e2e.sh [OUTDIR]
# Needs bin/ built and the clips of sequences/make_clips.sh. Without a usable GPU the "gpu" runs use the CPU twin
# (the report says so in its integer_me_path column), so the time figures only mean something on a GPU machine.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
clips=${E2E_CLIPS:-megamind_full_640x480}
e2e_frames=${E2E_FRAMES:--1}
rd_frames=${RD_FRAMES:--1}
parts=${PARTS:-time rd}
want() { case " $parts " in *" $1 "*) return 0;; esac; return 1; }
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /'

# The Table 2 block of each comparison in an rdsweep report.
summary() { awk '/^## .* vs /{p=1; print; next} p && /^\|/{print} p && /^Time \(%\)/{p=0; print ""}' "$1"; }
# Frames of a manifest clip (E2E_FRAMES=-1: the whole clip, as the seed paper encodes whole sequences).
clip_frames() { awk -F, -v n="$1" '$1 == n { print $5 }' sequences/manifest.csv; }

if want time; then
  for clip in $clips; do
    n=$e2e_frames; [ "$n" = "-1" ] && n=$(clip_frames "$clip")
    [ -n "$n" ] || { echo "bench_gpu_e2e: $clip is not in sequences/manifest.csv"; continue; }
    echo "== A. end-to-end time: $clip, $n frames, one encode at a time"
    # Raw input, as JM users time it: inflating a .yuv.gz clip would be a large share of the GPU run's time per
    # frame.
    file=$(awk -F, -v n="$clip" '$1 == n { print $2 }' sequences/manifest.csv)
    size=$(awk -F, -v n="$clip" '$1 == n { print $3 "x" $4 }' sequences/manifest.csv)
    raw=$(mktemp -d)/$clip.yuv
    case "$file" in *.gz) gzip -dc "$file" >"$raw" ;; *) cp "$file" "$raw" ;; esac
    # gpu_cpu_subpel (E2E_SUBPEL_AB=1, default): the GPU run with its sub-pel distortions computed on the CPU
    # (GPUSubpelDistortion 0), to show what the GPU's sub-pel tables save; its streams must equal the gpu run's.
    ab=(); [ "${E2E_SUBPEL_AB:-1}" = 1 ] && ab=(--run gpu_cpu_subpel:GPUIntegerME=1,GPUSubpelDistortion=0)
    bin/rdsweep -f cfg/encoder_baseline.cfg -j 1 --out "$out/time_$clip" "$clip=$raw:$size:$n" \
      --run unmodified --run gpu "${ab[@]}" >"$out/time_$clip.log" 2>&1 || { echo "rdsweep failed: $out/time_$clip.log"; continue; }
    rm -rf "$(dirname "$raw")"
    summary "$out/time_$clip/report.md"
    if [ ${#ab[@]} -gt 0 ]; then
      same=0; total=0
      for d in "$out/time_$clip/$clip/gpu"/qp*; do
        total=$((total + 1))
        o="$out/time_$clip/$clip/gpu_cpu_subpel/$(basename "$d")"
        cmp -s "$d/stream.264" "$o/stream.264" && cmp -s "$d/recon.yuv" "$o/recon.yuv" && same=$((same + 1))
      done
      echo "gpu (GPU sub-pel tables) vs gpu_cpu_subpel: $same of $total QPs with identical stream and recon"
    fi
    # Stage split summed over the four QPs, from each encode's StatsFile summary.
    python3 - "$out/time_$clip" <<'EOF'
import glob, json, os, sys
root = sys.argv[1]
keys = ["time_s", "time_integer_me_s", "time_subpel_me_s", "time_mode_decision_s", "time_coding_s",
        "time_deblocking_s"]
rows = {}
for f in sorted(glob.glob(os.path.join(root, "**", "stats.jsonl"), recursive=True)):
    run = f.split(os.sep)[-3]
    with open(f) as fh:
        s = json.loads(fh.read().splitlines()[-1])["summary"]
    r = rows.setdefault(run, {k: 0.0 for k in keys + ["frames"]})
    for k in keys:
        r[k] += s[k]
    r["frames"] += s["frames"]
    r["search"] = r.get("search", 0.0) + s.get("time_picture_search_s", 0.0)
    r["refinements"] = r.get("refinements", 0) + s.get("subpel_searches", 0)
    r["from_tables"] = r.get("from_tables", 0) + s.get("subpel_from_tables", 0)
    r["path"] = s.get("integer_me_path", "")
print("| run | frames | total s | ms/frame | integer ME | (GPU call) | sub-pel | mode decision | coding | deblocking | other |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for run, r in sorted(rows.items(), key=lambda kv: kv[0] != "unmodified"):
    other = r["time_s"] - sum(r[k] for k in keys[1:])
    print("| %s | %d | %.3f | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
        run, r["frames"], r["time_s"], 1000 * r["time_s"] / r["frames"], r["time_integer_me_s"], r["search"],
        r["time_subpel_me_s"], r["time_mode_decision_s"], r["time_coding_s"], r["time_deblocking_s"], other))
if "unmodified" in rows and "gpu" in rows:
    u, g = rows["unmodified"]["time_s"], rows["gpu"]["time_s"]
    print("\ntotal time change (Eq. 3 over the 4 QPs): %+.2f %%; gpu path: %s" % (100 * (g - u) / u, rows["gpu"]["path"]))
    if rows["gpu"]["refinements"]:
        print("gpu run: %.1f %% of %d sub-pel refinements read the GPU's tables" % (
            100.0 * rows["gpu"]["from_tables"] / rows["gpu"]["refinements"], rows["gpu"]["refinements"]))
EOF
  done
fi

if want rd; then
  seqs=megamind_640x480,megamind_long_640x480,megamind_352x288,vtest_720x576,vtest_352x288,tree_200x120
  limit=(); [ "$rd_frames" != "-1" ] && limit=(--frames "$rd_frames")
  echo "== B. BD-rate of the GPU run against the unmodified run: $seqs, frames: ${limit[*]:-whole clips}"
  jobs=$(nproc); [ "$jobs" -gt 2 ] && jobs=$((jobs - 1))
  bin/rdsweep -f cfg/encoder_baseline.cfg "${limit[@]}" -j "$jobs" --out "$out/rd" --seq "$seqs" \
    --run unmodified --run k1:GPUIntegerME=1,GPUTopK=1 --run k8:GPUIntegerME=1,GPUTopK=8 \
    --run k8t:GPUIntegerME=1,GPUTopK=8,GPUSearchCenter=1 \
    >"$out/rd.log" 2>&1 || { echo "rdsweep failed: $out/rd.log"; exit 1; }
  summary "$out/rd/report.md"
fi
