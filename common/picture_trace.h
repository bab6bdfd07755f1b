// GME_PICTURE_TRACE=1: one line on stderr per step of each picture ("trace <ms> <step> <number>", milliseconds since
// the first mark), from which tools/picture_timeline.py gives the median time between steps. What it is for: the
// picture boundary (what runs serially between one picture's macroblock rows and the next's) is a few
// milliseconds out of a picture of 3-16 ms at 16 threads, which per-stage CPU times summed over workers do not show.
// Off (one cached getenv per call site's check), it costs a load and a branch per step.
#pragma once

namespace gme {

bool picture_trace_on();
void picture_trace_mark(const char* step, long number);

// A step of picture `number` (or of whatever the number counts), if tracing is on.
inline void picture_trace(const char* step, long number) {
  if (picture_trace_on()) picture_trace_mark(step, number);
}

}  // namespace gme
