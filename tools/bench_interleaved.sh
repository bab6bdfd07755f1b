#!/usr/bin/env bash
# End-to-end time of GPU runs from two builds against the unmodified run, INTERLEAVED encode by encode: on a shared
# host whose speed drifts from minute to minute, only encodes that alternate can be compared. For each round and QP: the unmodified run (NEW build, GPUIntegerME 0), the OLD build's GPU run, the NEW
# build's GPU run; OLD and NEW streams must be identical. Prints each encode's stage split, the sums per run
# (StatsFile summaries) and the seed paper's Eq. 3 time change of each GPU run.
# Usage: [MORE="tag:LENCOD ..."] tools/bench_interleaved.sh OLD_LENCOD NEW_LENCOD [CLIP] [ROUNDS] [OUTDIR]
#   CLIP: a sequences/manifest.csv name (default megamind_long_640x480, whole clip, raw input; megamind_full_640x480
#   is the whole 260-frame sequence, as the seed paper times it); ROUNDS default 2. MORE: further GPU builds timed
#   in the same loop after NEW (e.g. one built with another compile-time setting), each held to NEW's streams.
# Example (old build from a commit): git worktree add /tmp/old <commit> && make -C /tmp/old -j bin/lencod &&
#   tools/bench_interleaved.sh /tmp/old/bin/lencod bin/lencod
set -uo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: tools/bench_interleaved.sh OLD_LENCOD NEW_LENCOD [CLIP] [ROUNDS] [OUTDIR]}
new=${2:?usage: tools/bench_interleaved.sh OLD_LENCOD NEW_LENCOD [CLIP] [ROUNDS] [OUTDIR]}
clip=${3:-megamind_long_640x480}
rounds=${4:-2}
out=${5:-$(mktemp -d)}
mkdir -p "$out"
line=$(awk -F, -v n="$clip" '$1 == n' sequences/manifest.csv)
[ -n "$line" ] || { echo "bench_interleaved: $clip is not in sequences/manifest.csv" >&2; exit 2; }
IFS=, read -r _ file w h frames _ <<<"$line"
raw="$out/$clip.yuv"
case "$file" in *.gz) gzip -dc "$file" >"$raw" ;; *) cp "$file" "$raw" ;; esac || { echo "bench_interleaved: cannot read $file" >&2; exit 1; }
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(nproc) cores; $clip ${w}x$h, $frames frames, $rounds rounds"
enc() {  # binary tag qp params...
  local b=$1 t=$2 q=$3; shift 3
  "$b" -d cfg/encoder_baseline.cfg -p InputFile="$raw" -p SourceWidth="$w" -p SourceHeight="$h" -p FramesToBeEncoded="$frames" \
    -p QPISlice="$q" -p QPPSlice="$q" -p OutputFile="$out/$t.264" -p StatsFile="$out/st_$t.json" "$@" >"$out/$t.log" 2>&1 ||
    { echo "encode $t failed: $out/$t.log"; return 1; }
}
for r in $(seq 1 "$rounds"); do
  for q in 28 32 36 40; do
    enc "$new" "unmod_q${q}_r$r" "$q" -p GPUIntegerME=0
    enc "$old" "old_q${q}_r$r" "$q" -p GPUIntegerME=1
    enc "$new" "new_q${q}_r$r" "$q" -p GPUIntegerME=1
    cmp -s "$out/old_q${q}_r$r.264" "$out/new_q${q}_r$r.264" || echo "QP $q round $r: old and new GPU streams DIFFER"
    for m in ${MORE:-}; do
      enc "${m#*:}" "${m%%:*}_q${q}_r$r" "$q" -p GPUIntegerME=1
      cmp -s "$out/${m%%:*}_q${q}_r$r.264" "$out/new_q${q}_r$r.264" || echo "QP $q round $r: ${m%%:*} and new GPU streams DIFFER"
    done
  done
done
rm -f "$raw"
python3 - "$out" ${MORE:-} <<'PY'
import collections, glob, json, os, sys
keys = ['time_s', 'time_integer_me_s', 'time_picture_search_s', 'time_subpel_me_s', 'time_mode_decision_s',
        'time_coding_s', 'time_deblocking_s']
tot = collections.defaultdict(collections.Counter)
rnd = collections.defaultdict(float)
for f in sorted(glob.glob(os.path.join(sys.argv[1], 'st_*.json'))):
    run, _, r = os.path.basename(f)[3:-5].split('_')
    with open(f) as fh:
        d = json.loads(fh.read().strip().split('\n')[-1])['summary']
    for k in keys:
        tot[run][k] += d[k]
    tot[run]['frames'] += d.get('frames_coded', d.get('frames', 0))
    rnd[(run, r)] += d['time_s']
print('| run | total s | integer ME | (GPU call) | sub-pel | mode decision | coding | deblocking | other |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
more = [m.split(':')[0] for m in sys.argv[2:]]
for run in ['unmod', 'old', 'new'] + more:
    c = tot[run]
    other = c['time_s'] - sum(c[k] for k in keys[1:] if k != 'time_picture_search_s')
    print('| %s | %.3f | %s | %.3f |' % (run, c['time_s'], ' | '.join('%.3f' % c[k] for k in keys[1:]), other))
rounds = sorted({r for (_, r) in rnd})
for run in ['old', 'new'] + more:
    per = ', '.join('%.2f' % (100 * (rnd[(run, r)] - rnd[('unmod', r)]) / rnd[('unmod', r)]) for r in rounds)
    print('%s: Eq. 3 time change %.2f %% (rounds: %s)' % (
        run, 100 * (tot[run]['time_s'] - tot['unmod']['time_s']) / tot['unmod']['time_s'], per))
for run in ['new'] + more:
    print('%s against old: %.1f %%' % (run, 100 * (tot[run]['time_s'] / tot['old']['time_s'] - 1)))
PY
