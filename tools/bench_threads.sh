#!/usr/bin/env bash
# Thread scaling (doc/THREADS.md, `make bench-threads`): frames/s of gme264's two runs - unmodified (GPUIntegerME 0)
# and GPU (GPUIntegerME 1) - at 1, 2, 4, 8 and 16 threads, at 640x480 and 1920x1080, next to x264 with an
# exhaustive search (--me esa --merange 32 --threads N) and the same structure: baseline profile, one reference, an
# I picture every 12 (no scene cuts, no B pictures), fixed QP, the same clip and frames.
#
# Usage: tools/bench_threads.sh [OUTDIR]
#   THREADS="1 2 4 8 16"  QPS="28 40"  SIZES="640x480 1920x1080"  ROUNDS=1 (each time: the best of this many runs;
#   the rounds go one after another over every configuration, so a host that drifts during the call touches all)
#   FRAMES_640x480="40 120"  FRAMES_1920x1080="6 30"   (each size runs at both counts, see "steady" below)
#   X264_DEBS=.x264   folder with libx264-dev_*.deb (apt-get download libx264-dev; the script unpacks it under
#                     /tmp and builds tools/x264_raw_bench.cpp against its libx264.a); without it, an `x264` on
#                     the PATH is used; without either, no x264 column.
# Columns: fps = frames / wall time of the whole process at the larger count (start-up, reading, writing included,
# as a user sees it; the fastest run); steady = (large - small) / (t_large - t_small) of the two runs of one round,
# taken one after the other, the median over the rounds: the frames/s once running, without the process and CUDA
# start-up; a difference of two whole-process times, so one slow run can throw it far off.
# pic/s = 1000 / the median milliseconds per picture at the larger count, the firmer figure: gme264's from
# GME_PICTURE_TRACE=1 (tools/picture_timeline.py: start to start, the pictures after the third), x264's from the
# times its pictures come out of the encoder, after the third (tools/x264_raw_bench.cpp; none from an x264 on the
# PATH). x = the rate before it / the same
# rate at 1 thread. "same" checks that gme264's stream is byte-identical at every thread count (per run, size and
# QP).
# The host's own ceiling at the same counts comes first (bin/cpu_ceiling, tools/cpu_ceiling_main.cpp).
# Needs bin/lencod (make) and the clips of sequences/make_clips.sh (the .yuv.gz are decompressed to /tmp first:
# inflating a 1080p picture costs more than coding it with 16 threads).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
threads=${THREADS:-1 2 4 8 16}
qps=${QPS:-28 40}
sizes=${SIZES:-640x480 1920x1080}
rounds=${ROUNDS:-1}
debs=${X264_DEBS:-.x264}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
report="$out/bench_threads.txt"
: >"$report"
say() { echo "$@" | tee -a "$report"; }

[ -x bin/lencod ] || { echo "bench_threads: bin/lencod is missing (run make)"; exit 1; }
say "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
if command -v nvidia-smi >/dev/null 2>&1; then
  say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
else
  say "gpu: none (the GPU run uses the CPU twin: its times say nothing about the GPU path)"
fi
say "gme264: $(git describe --always --dirty 2>/dev/null || echo unknown)"
say "times: the best of $rounds run(s) each (ROUNDS), the rounds taken one after another over every configuration"
# What the host allows: clocks that drop as more cores run, and logical CPUs that share a core (a VM may not say).
if [ -x bin/cpu_ceiling ]; then
  say "host ceiling (bin/cpu_ceiling: each thread an independent register-only loop; no encode can scale more):"
  bin/cpu_ceiling --threads "$threads" | tail -n +3 | sed 's/^/  threads /' | tee -a "$report"
fi

# ---- x264: the library's own driver on raw input (tools/x264_raw_bench.cpp), or an x264 on the PATH.
x264_cmd=""
deb=$(ls "$debs"/libx264-dev_*.deb 2>/dev/null | head -1)
if [ -n "$deb" ]; then
  dpkg -x "$deb" "$tmp/x264" &&
    lib=$(find "$tmp/x264" -name libx264.a | head -1) &&
    g++ -O2 -std=c++17 tools/x264_raw_bench.cpp -I"$tmp/x264/usr/include" "$lib" -lpthread -lm -ldl \
      -o "$tmp/x264_raw_bench" && x264_cmd=driver
  [ -n "$x264_cmd" ] && say "x264: libx264 $(sed -n 's/^#define X264_POINTVER "\(.*\)"/\1/p' "$tmp/x264/usr/include/x264_config.h") from $deb (tools/x264_raw_bench.cpp)"
fi
if [ -z "$x264_cmd" ] && command -v x264 >/dev/null 2>&1; then
  x264_cmd=cli
  say "x264: $(x264 --version 2>/dev/null | head -1) (on the PATH)"
fi
[ -n "$x264_cmd" ] || say "x264: not found (no $debs/libx264-dev_*.deb, no x264 on the PATH): no x264 column"

clip_for() {
  case "$1" in
    640x480) echo sequences/megamind_long_640x480.yuv.gz ;;
    1920x1080) echo sequences/megamind_1920x1080.yuv.gz ;;
    *) echo "" ;;
  esac
}

# Seconds of wall time of one run of a command (its output goes to $tmp/log), or FAILED.
wall() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$tmp/log" 2>&1 || { echo "FAILED"; return 1; }
  t1=$(date +%s.%N)
  python3 -c "print('%.4f' % ($t1 - $t0))"
}

# One run of encoder $1 (unmodified, gpu, x264) at $2 threads on $3 frames: sets sec (seconds or FAILED) and, for
# gme264's runs at the larger count, pic (pictures/s of the median picture) and the stream's hash.
measure() {
  local run=$1 t=$2 n=$3 g trace opts
  pic=""
  case $run in
    unmodified | gpu)
      g=0; [ "$run" = gpu ] && g=1
      trace=""; [ "$n" = "$large" ] && trace=GME_PICTURE_TRACE=1
      sec=$(wall env $trace bin/lencod -d cfg/encoder_baseline.cfg -p InputFile="$raw" SourceWidth="$w" SourceHeight="$h" \
        FramesToBeEncoded="$n" IntraPeriod=12 NumberReferenceFrames=1 SearchRange=32 QPISlice="$qp" \
        QPPSlice="$qp" GPUIntegerME=$g Threads="$t" OutputFile="$tmp/gme.264") || return 1
      if [ "$n" = "$large" ]; then
        hashes[$run]+="$(md5sum <"$tmp/gme.264" | cut -c1-32) "
        pic=$(python3 tools/picture_timeline.py "$tmp/log" 2>/dev/null | awk '$1 == "total" { printf "%.2f", 1000 / $2 }')
      fi
      ;;
    x264)
      opts=(me=esa merange=32 threads="$t" keyint=12 min-keyint=12 scenecut=0 bframes=0 ref=1 qp="$qp")
      if [ "$x264_cmd" = driver ]; then
        sec=$(wall "$tmp/x264_raw_bench" "$w" "$h" "$n" "$raw" "$tmp/x.264" "${opts[@]}") || return 1
        # its median time between successive pictures (the driver's fourth field), as gme264's pic/s
        if [ "$n" = "$large" ]; then pic=$(awk 'NF == 4 && $4 != "-" { printf "%.2f", 1000 / $4 }' "$tmp/log"); fi
      else
        sec=$(wall x264 --profile baseline --me esa --merange 32 --threads "$t" --keyint 12 --min-keyint 12 \
          --scenecut 0 --bframes 0 --ref 1 --qp "$qp" --input-res "${w}x${h}" --frames "$n" -o "$tmp/x.264" "$raw") || return 1
      fi
      ;;
  esac
}

# The smaller of two numbers ("" and FAILED count as none), and the larger (for pictures/s).
lesser() { python3 -c "a, b = '$1', '$2'; v = [float(x) for x in (a, b) if x not in ('', 'FAILED', '-')]; print('%.4f' % min(v) if v else '')"; }
greater() { python3 -c "a, b = '$1', '$2'; v = [float(x) for x in (a, b) if x not in ('', 'FAILED', '-')]; print('%.2f' % max(v) if v else '-')"; }

runs="unmodified gpu"
[ -n "$x264_cmd" ] && runs+=" x264"
for size in $sizes; do
  w=${size%x*}
  h=${size#*x}
  clip=$(clip_for "$size")
  [ -n "$clip" ] && [ -f "$clip" ] || { say "== $size: no clip ($clip; run sequences/make_clips.sh)"; continue; }
  raw="$tmp/clip_$size.yuv"
  gzip -dc "$clip" >"$raw"
  var="FRAMES_$size"
  counts=${!var:-}
  [ -n "$counts" ] || { [ "$size" = 640x480 ] && counts="40 120" || counts="6 30"; }
  small=${counts% *}
  large=${counts#* }
  for qp in $qps; do
    say ""
    say "== $size, $clip, QP $qp, frames $small and $large: frames/s (fps: whole process at $large frames; steady: ($large - $small) frames / time difference)"
    declare -A best=()      # [run,threads,frames] -> the fastest run's seconds
    declare -A best_pic=()  # [run,threads] -> the best pictures/s
    declare -A failed=()
    declare -A steadies=()  # [run,threads] -> each round's steady rate
    declare -A hashes=()
    # Round by round over every configuration, so a host whose speed drifts during the call touches every thread
    # count alike (each figure is the best of its ROUNDS runs, taken across the whole call).
    for ((r = 0; r < rounds; r++)); do
      for t in $threads; do
        for run in $runs; do
          round_secs=()
          for n in $small $large; do
            k="$run,$t,$n"
            if measure "$run" "$t" "$n"; then
              best[$k]=$(lesser "${best[$k]:-}" "$sec")
              round_secs+=("$sec")
              [ "$n" = "$large" ] && best_pic[$run,$t]=$(greater "${best_pic[$run,$t]:-}" "$pic")
            else
              failed[$run,$t]=1
              tail -3 "$tmp/log" | sed "s/^/  $run t=$t: /" | tee -a "$report"
            fi
          done
          # This round's steady rate: its two runs were taken one after the other, under the same host conditions.
          [ ${#round_secs[@]} = 2 ] && steadies[$run,$t]+="$(python3 -c "
ts, tl = ${round_secs[0]}, ${round_secs[1]}
print('%.4f' % (($large - $small) / (tl - ts)) if tl > ts else '-')") "
        done
      done
    done
    printf '%-8s | %-42s | %-42s | %-42s\n' threads "unmodified fps steady x pic/s x" "gpu fps steady x pic/s x" \
      "x264 esa fps steady x pic/s x" | tee -a "$report"
    declare -A base=()
    declare -A base_pic=()
    for t in $threads; do
      line=$(printf '%-8s' "$t")
      for run in unmodified gpu x264; do
        if [[ " $runs " != *" $run "* ]] || [ -n "${failed[$run,$t]:-}" ]; then
          line+=$(printf ' | %42s' "-")
          continue
        fi
        # steady: the median over the rounds of each round's rate ("-" where the larger count did not take longer:
        # too few frames to tell)
        read -r fps steady <<<"$(python3 -c "
import statistics
l, tl = $large, ${best[$run,$t,$large]}
v = [float(x) for x in '${steadies[$run,$t]:-}'.split() if x != '-']
print('%.2f %s' % (l / tl, '%.2f' % statistics.median(v) if v else '-'))")"
        [ -n "${base[$run]:-}" ] || base[$run]=$steady
        x=$(python3 -c "
a, b = '$steady', '${base[$run]}'
print('%.2f' % (float(a) / float(b)) if a != '-' and b != '-' else '-')")
        line+=$(printf ' | %8s %8s %7sx' "$fps" "$steady" "$x")
        pic=${best_pic[$run,$t]:--}
        [ -n "${base_pic[$run]:-}" ] || base_pic[$run]=$pic
        xp=$(python3 -c "
a, b = '$pic', '${base_pic[$run]}'
print('%.2f' % (float(a) / float(b)) if a != '-' and b != '-' else '-')")
        line+=$(printf ' %8s %6sx' "$pic" "$xp")
      done
      echo "$line" | tee -a "$report"
    done
    for run in unmodified gpu; do
      n=$(echo "${hashes[$run]:-}" | tr ' ' '\n' | sed '/^$/d' | sort -u | wc -l)
      say "same $run stream at every thread count: $([ "$n" = 1 ] && echo yes || echo "NO ($n different streams)")"
    done
    unset best best_pic failed steadies hashes base base_pic
  done
  rm -f "$raw"
done
say ""
say "(report: $report)"
