// GME_PICTURE_TRACE=1: one line on stderr per step of each picture ("trace <ms> <step> <number>", milliseconds since
// the first mark), from which tools/picture_timeline.py gives the median time between steps. What it is for: the
// picture boundary (what runs serially between one picture's macroblock rows and the next's) is a small share of a
// picture's wall time with many threads, which per-stage CPU times summed over workers do not show.
// Off, it costs a cached check and a branch per step.
#pragma once

namespace gme {

bool picture_trace_on();
void picture_trace_mark(const char* step, long number);

// A step of picture `number` (or of whatever the number counts), if tracing is on.
inline void picture_trace(const char* step, long number) {
  if (picture_trace_on()) picture_trace_mark(step, number);
}

}  // namespace gme
