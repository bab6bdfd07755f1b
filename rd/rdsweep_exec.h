// Runs the encoder for the points of a sweep, several at a time, with a progress line per finished point.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "rd/rd_input.h"
#include "rd/rdsweep_plan.h"

namespace gme {

struct SweepJobResult {
  bool ok = false;
  std::string error;  // one line: exit status and the last line the encoder printed
  double wall_s = 0;
  RdPoint point;      // the StatsFile summary when ok
};

// Encodes `todo` (at most `jobs` encoders at once, started in order). Each encoder runs in its point's folder with
// stdout and stderr in lencod.log; its *.part.* files are renamed and command.txt written only when it exits with
// status 0 and its StatsFile has a summary, so an interrupted sweep never leaves a point that looks complete.
std::vector<SweepJobResult> run_sweep_jobs(const std::vector<const SweepPoint*>& todo, int jobs,
                                           std::ostream& progress);

// "1h02m", "4m10s", "12.3s": durations for progress lines.
std::string format_duration(double seconds);

}  // namespace gme
