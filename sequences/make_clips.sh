#!/usr/bin/env bash
# Makes the test clips listed in sequences/manifest.csv (documented in sequences/README.md):
#   - synthetic clips with bin/synth (deterministic, no download; built here when missing);
#   - crops / scalings of the sample videos of Debian's opencv-doc package, converted with ffmpeg to 4:2:0.
# Clips that already exist are kept (use --force to remake them). Every file is written under a temporary name
# and renamed when complete, so an interrupted run leaves no truncated clip behind.
#
# usage: sequences/make_clips.sh [--synthetic-only] [--force]
set -euo pipefail
cd "$(dirname "$0")/.."

synthetic_only=0
force=0
for arg in "$@"; do
  case "$arg" in
    --synthetic-only) synthetic_only=1 ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "make_clips.sh: unknown argument '$arg' (expected --synthetic-only or --force)" >&2; exit 2 ;;
  esac
done

SEQ=sequences
say() { echo "make_clips: $*"; }
die() { echo "make_clips: error: $*" >&2; exit 1; }

# Runs apt-get as root directly, through sudo otherwise.
apt_install() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "need root (or sudo) to install $*"
    sudo="sudo"
  fi
  say "installing $* with apt-get"
  $sudo apt-get update -qq >/dev/null || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null || die "apt-get install $* failed"
}

# ---- synthetic clips (always) ----
if [ ! -x bin/synth ] || [ sequences/synth_main.cpp -nt bin/synth ]; then
  say "building bin/synth"
  make -s -j2 bin/synth >/dev/null || die "building bin/synth failed (make bin/synth)"
fi

# synth_clip FILE SIZE FRAMES [synth options...]
synth_clip() {
  local file="$SEQ/$1" size="$2" frames="$3"
  shift 3
  if [ -s "$file" ] && [ "$force" -eq 0 ]; then return 0; fi
  say "synthesising $file ($size, $frames frames)"
  bin/synth -o "$file" -s "$size" -n "$frames" "$@" || die "bin/synth failed for $file"
}

synth_clip synthetic_640x480.yuv 640x480 10
synth_clip synthetic_176x144.yuv 176x144 10
synth_clip synthetic_shift_352x288.y4m 352x288 5 --mode shift --shift 7,-3
synth_clip synthetic_1920x1080.yuv.gz 1920x1080 10

[ "$synthetic_only" -eq 1 ] && { say "done (synthetic clips only)"; exit 0; }

# ---- clips from opencv-doc sample videos ----
command -v ffmpeg >/dev/null || apt_install ffmpeg
DATA=/usr/share/doc/opencv-doc/examples/data
if [ ! -e "$DATA/Megamind.avi" ] && [ ! -e "$DATA/Megamind.avi.gz" ]; then
  apt_install opencv-doc
fi

tmpdir=$(mktemp -d)
trap 'rm -rf "$tmpdir"' EXIT

# Path of a sample video, decompressed into $tmpdir if Debian stored it gzip-compressed.
source_video() {
  local name="$1"
  if [ -f "$DATA/$name" ]; then
    echo "$DATA/$name"
  elif [ -f "$DATA/$name.gz" ]; then
    [ -f "$tmpdir/$name" ] || zcat "$DATA/$name.gz" > "$tmpdir/$name" || die "cannot decompress $DATA/$name.gz"
    echo "$tmpdir/$name"
  else
    die "$DATA/$name not found (is opencv-doc installed?)"
  fi
}

# video_clip FILE SOURCE FIRST_FRAME FRAMES FILTER: frames FIRST_FRAME.. of SOURCE through the ffmpeg filter FILTER,
# as raw I420; FILE ending in .gz is gzip-compressed (-n: no time stamp, so the bytes depend on the pixels only).
video_clip() {
  local file="$SEQ/$1" src first="$3" frames="$4" filter="$5"
  if [ -s "$file" ] && [ "$force" -eq 0 ]; then return 0; fi
  src=$(source_video "$2")
  say "converting $file from $2 (frames $first..$((first + frames - 1)), $filter)"
  local tmp="$file.tmp$$"
  if [[ "$file" == *.gz ]]; then
    ffmpeg -nostdin -v error -i "$src" -vf "select=gte(n\,$first),$filter,format=yuv420p" -vsync 0 \
      -frames:v "$frames" -f rawvideo -pix_fmt yuv420p - | gzip -6 -n > "$tmp" \
      || { rm -f "$tmp"; die "ffmpeg/gzip failed for $file"; }
  else
    ffmpeg -nostdin -v error -y -i "$src" -vf "select=gte(n\,$first),$filter,format=yuv420p" -vsync 0 \
      -frames:v "$frames" -f rawvideo -pix_fmt yuv420p "$tmp" || { rm -f "$tmp"; die "ffmpeg failed for $file"; }
  fi
  mv -f "$tmp" "$file"
}

# Megamind.avi: 720x528, 23.976 fps, animated film (dialogue scene; slow camera, face and hand motion). Frame 0
# is black: start at 10.
video_clip megamind_640x480.yuv.gz   Megamind.avi 10 30 "crop=640:480:40:24"
# The same window over 120 frames (5 s), for end-to-end timing over a sequence long enough that start-up costs
# (CUDA context creation) weigh as they do on whole sequences (tools/bench_gpu_e2e.sh).
video_clip megamind_long_640x480.yuv.gz Megamind.avi 10 120 "crop=640:480:40:24"
# The whole clip (frames 10..269: all but the black lead-in), as the seed paper encodes whole sequences of 220-260
# frames for its Table 2 time figures: the GPU run's fixed start-up (CUDA driver and context) weighs per frame as
# it does there (tools/bench_gpu_e2e.sh, tools/bench_interleaved.sh).
video_clip megamind_full_640x480.yuv.gz Megamind.avi 10 260 "crop=640:480:40:24"
video_clip megamind_352x288.yuv.gz   Megamind.avi 10 30 "crop=352:288:184:120"
video_clip megamind_176x144.yuv.gz   Megamind.avi 10 30 "crop=176:144:272:192"
# 16:9 window of the picture scaled to 1080p, for GPU timing.
video_clip megamind_1920x1080.yuv.gz Megamind.avi 10 30 "crop=720:404:0:62,scale=1920:1080:flags=lanczos"
# vtest.avi: 768x576, 10 fps, fixed camera over a square with walking people.
video_clip vtest_720x576.yuv.gz      vtest.avi 0 30 "crop=720:576:24:0"
video_clip vtest_352x288.yuv.gz      vtest.avi 0 30 "crop=352:288:208:144"
# tree.avi: 320x240, 15 fps, hand-held camera on a tree (shaking, fine texture). 68 frames in all.
video_clip tree_200x120.yuv.gz       tree.avi 0 30 "crop=200:120:60:60"

# Check every clip of the manifest against its declared size.
bad=0
while IFS=, read -r name file width height frames fps; do
  [ "$name" = "name" ] && continue
  [ -f "$file" ] || { echo "make_clips: missing $file ($name)" >&2; bad=1; continue; }
  want=$((width * height * 3 / 2 * frames))
  case "$file" in
    *.yuv.gz) have=$(gzip -dc "$file" | wc -c) ;;
    *.y4m) have=$(( $(wc -c < "$file") - $(head -1 "$file" | wc -c) - 6 * frames )) ;;
    *) have=$(wc -c < "$file") ;;
  esac
  if [ "$have" -ne "$want" ]; then
    echo "make_clips: $file holds $have bytes of pictures, manifest says $frames frames of ${width}x$height ($want)" >&2
    bad=1
  fi
done < "$SEQ/manifest.csv"
[ "$bad" -eq 0 ] || die "some clips do not match sequences/manifest.csv"
say "done: $(grep -vc '^name,' "$SEQ/manifest.csv") clips in $SEQ/"
