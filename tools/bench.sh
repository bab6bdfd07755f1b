#!/usr/bin/env bash
# make bench: the CPU benchmarks, one bin/ program per line (each prints its own table). Records what
# doc/PERFORMANCE.md needs: date and CPU model first (make perf-doc writes the tables there).
set -o pipefail
cd "$(dirname "$0")/.."
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores online," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
run() { echo; echo "== $*"; "$@" || status=1; }

run bin/bench_me          # CPU motion estimation: integer ME ms/picture (640x480, SR 32), pixel primitive speeds
run tools/bench_encode.sh  # encode speed: intra-only RDO 0/1 and the paper configuration, one core, stage split

exit $status
