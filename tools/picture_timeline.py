#!/usr/bin/env python3
"""Where a picture's wall time goes, from lencod's GME_PICTURE_TRACE=1 lines (common/picture_trace.h).

Usage: GME_PICTURE_TRACE=1 bin/lencod ... 2> trace.txt; tools/picture_timeline.py trace.txt [SKIP]

Prints, over the pictures after the first SKIP (default 3: the GPU start-up and the first references), the median
milliseconds of each step of the encoder's picture loop (encoder/picture.cpp) and of the waits for rows of the GPU's
answer (one waiter at a time; the other workers go on meanwhile, unless they need the same rows):
  setup        picture start -> search call (reconstruction buffer, parameter sets, reference planes' buffers)
  search_call  the picture-level search call (GPU: staging and launches; it returns before the kernels end)
  planes       search returned -> macroblock rows start (the references' half-pel planes, on every worker, beside
               queueing the next picture's search ahead where the encoder does: step search_ahead)
  rows         the macroblock rows, deblocking and slices (the wavefront)
  reference    borders extended, reconstruction sent to the GPU
  gap          to the next picture's start (the Encoder queue: the driver's picture, the next source frame);
               negative where the next picture started before this one was done (pictures in flight, Threads > 1:
               doc/THREADS.md), and then `total`, start to start, is the figure: the steps overlap
  row_waits    the rows' waits for the GPU's answer (wall time, one waiter at a time)
  gate_waits   the rows' or macroblocks' waits for the picture before, still being coded (pictures in flight:
               RowGate), summed over the workers that waited (thread time: several may wait at once)
  parks        rows that parked instead of waiting (for the row above, or at their start for the picture before),
               their workers taking other rows meanwhile; counted to the picture started last
A P picture of the unmodified run has no search call: its setup runs to the rows' start.
"""
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    skip = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    pictures, order, waits, gate_waits, parks = {}, [], {}, {}, {}
    current, waiting_since = None, None
    gate_since = {}  # waiting macroblock -> (time, picture)
    for line in open(sys.argv[1]):
        f = line.split()
        if len(f) != 4 or f[0] != "trace":
            continue
        t, step, n = float(f[1]), f[2], int(f[3])
        if step == "rows_wait":
            waiting_since = t
        elif step == "rows_landed":
            if waiting_since is not None and current is not None:
                waits[current] = waits.get(current, 0.0) + t - waiting_since
            waiting_since = None
        elif step == "gate_wait":
            gate_since[n] = (t, current)
        elif step == "row_park":
            if current is not None:
                parks[current] = parks.get(current, 0) + 1
        elif step == "gate_landed":
            since = gate_since.pop(n, None)
            if since is not None and since[1] is not None:
                gate_waits[since[1]] = gate_waits.get(since[1], 0.0) + t - since[0]
        else:
            if step == "picture":
                order.append(n)
                current = n
            pictures.setdefault(n, {}).setdefault(step, t)
    parts = {k: [] for k in ("setup", "search_call", "planes", "rows", "reference", "gap", "total", "row_waits",
                             "gate_waits", "parks")}
    for i, n in enumerate(order[:-1]):
        p, nxt = pictures[n], pictures[order[i + 1]]
        if i < skip or not all(k in p for k in ("rows_start", "slices", "reference")):
            continue
        call = p.get("search_call", p["rows_start"])
        back = p.get("search_returned", call)
        parts["setup"].append(call - p["picture"])
        parts["search_call"].append(back - call)
        parts["planes"].append(p["rows_start"] - back)
        parts["rows"].append(p["slices"] - p["rows_start"])
        parts["reference"].append(p["reference"] - p["slices"])
        parts["gap"].append(nxt["picture"] - p["reference"])
        parts["total"].append(nxt["picture"] - p["picture"])
        parts["row_waits"].append(waits.get(n, 0.0))
        parts["gate_waits"].append(gate_waits.get(n, 0.0))
        parts["parks"].append(parks.get(n, 0))
    if not parts["total"]:
        sys.exit("picture_timeline: no complete picture after the first %d in %s (GME_PICTURE_TRACE=1?)" % (skip, sys.argv[1]))
    print("pictures: %d (medians, ms)" % len(parts["total"]))
    for k, v in parts.items():
        print("  %-12s %8.2f" % (k, statistics.median(v)))


if __name__ == "__main__":
    main()
