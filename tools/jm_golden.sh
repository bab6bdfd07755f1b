#!/usr/bin/env bash
# Recomputes the hashes of tests/golden/jm19.tsv from a JM 19.0 lencod that you built yourself (this script neither
# fetches nor builds JM). For every row it makes the row's clip with bin/synth exactly as tests/test_jm_golden.cpp
# does, runs JM with cfg/jm19_stock_baseline.cfg (JM 19.0 reads gme264's file of its stock settings) plus the row's
# parameters in a scratch directory, and writes the SHA-256 of JM's stream, reconstruction and stats.dat (without
# its " Sequence" line) into the table. Rows and parameters stay; rows whose hashes changed are printed.
# Usage: tools/jm_golden.sh /path/to/JM/bin/lencod.exe     (after `make`, for bin/synth)
set -euo pipefail
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: tools/jm_golden.sh /path/to/JM19/bin/lencod.exe (a JM 19.0 lencod built beforehand)" >&2
  exit 2
fi
jm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
root=$(pwd)
table=tests/golden/jm19.tsv
[ -x bin/synth ] || { echo "jm_golden: bin/synth is missing (run make)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT


sha() { sha256sum "$1" | cut -d' ' -f1; }

# The clip of a spec "synth:WxH[:noise|:shift]" with max(frames, 8) frames, as tests/conformance_util.cpp makes it.
make_clip() {
  local spec=$1 frames=$2 out=$3 size mode args=()
  size=$(echo "$spec" | cut -d: -f2)
  mode=$(echo "$spec" | cut -s -d: -f3)
  case "$mode" in
    "") ;;
    noise) args=(--mode noise) ;;
    shift) args=(--mode shift --shift 7,-3) ;;
    *) echo "jm_golden: clip spec $spec is not supported here" >&2; return 1 ;;
  esac
  [ "$frames" -lt 8 ] && frames=8
  bin/synth -o "$out" -s "$size" -n "$frames" "${args[@]}" >/dev/null
}

new=$work/table.new
: >"$new"
while IFS= read -r line; do
  if [ -z "$line" ] || [ "${line:0:1}" = "#" ]; then
    printf '%s\n' "$line" >>"$new"
    continue
  fi
  # cut, not read: tab is whitespace to read, which would merge an empty parameters column with its neighbours.
  name=$(cut -f1 <<<"$line") clip=$(cut -f2 <<<"$line") frames=$(cut -f3 <<<"$line") params=$(cut -f4 <<<"$line")
  old=$(cut -f5-7 <<<"$line" | tr '\t' ' ')
  dir=$work/$name
  mkdir -p "$dir"
  make_clip "$clip" "$frames" "$dir/in.yuv"
  size=$(echo "$clip" | cut -d: -f2)
  args=(-d "$root/cfg/jm19_stock_baseline.cfg" -p "InputFile=$dir/in.yuv" -p "SourceWidth=${size%x*}"
        -p "SourceHeight=${size#*x}" -p "FramesToBeEncoded=$frames" -p "OutputFile=s.264" -p "ReconFile=rec.yuv"
        -p "StatsFile=stats.dat")
  for kv in $params; do args+=(-p "$kv"); done
  if ! (cd "$dir" && "$jm" "${args[@]}" >jm.log 2>&1); then
    echo "jm_golden: JM failed on row $name (log: $dir/jm.log)" >&2
    trap - EXIT
    exit 1
  fi
  grep -q "JM 19.0" "$dir/jm.log" || echo "jm_golden: warning: $jm does not say it is JM 19.0" >&2
  grep -v '^ Sequence ' "$dir/stats.dat" >"$dir/stats.norm"
  stream=$(sha "$dir/s.264") recon=$(sha "$dir/rec.yuv") stats=$(sha "$dir/stats.norm")
  # "-" in the stream column stays: rows where JM's stream is not what its own reconstruction decodes from
  # (doc/RD.md: JM writes I_PCM samples of value 0 as 1), so no conformant encoder can reproduce it.
  [ "$(cut -f5 <<<"$line")" = "-" ] && stream=-
  if [ "$stream $recon $stats" != "$old" ]; then echo "changed: $name" >&2; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$clip" "$frames" "$params" "$stream" "$recon" "$stats" >>"$new"
  echo "$name done" >&2
done <"$table"
mv "$new" "$table"
echo "jm_golden: $table written from $jm"
