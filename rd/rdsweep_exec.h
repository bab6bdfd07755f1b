// Runs the encoder for the points of a sweep, several at a time, with a progress line per finished point, and makes
// each point complete (rdsweep_plan.h) on success. Also the signal handling that lets a sweep stop cleanly.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "rd/rd_input.h"
#include "rd/rdsweep_plan.h"

namespace gme {

struct SweepJobResult {
  bool ok = false;
  bool interrupted = false;  // stopped by a signal: neither complete nor failed
  std::string error;         // one line: exit status and the last line the encoder printed
  double wall_s = 0;
  RdPoint point;             // the StatsFile summary when ok
  std::vector<std::string> warnings;  // the encoder's warning lines (text after "warning: ")
};

struct SweepJobContext {
  int jobs = 1;                        // encoders at once
  int gpu_devices = 0;                 // CUDA devices to spread GPU points over (device_for_slot); 0 or 1: none
  bool strict = false;                 // a warning of the encoder fails its point
  const SweepFingerprints* prints = nullptr;  // recorded in point.json (must be set)
  PointRecord base;                    // host, cpu, gpus, engine, invocation, timing, jobs, rdsweep version
};

// Encodes `todo` (at most ctx.jobs encoders at once, started in the given order; each running encoder holds a worker
// slot, and a GPU point whose settings leave GPUDevice alone gets the slot's device, device_for_slot). Each encoder runs in its point's
// folder with stdout and stderr in lencod.log; its *.part.* files are renamed and point.json written only when it
// exits with status 0, its StatsFile has a summary and (under --strict) it printed no warning, so an interrupted
// or failed point never looks complete; a failed one gets failed.txt with the reason. When a stop signal arrives
// (install_stop_signals), no further encoder starts, the running ones get SIGTERM, and their results are marked
// interrupted.
std::vector<SweepJobResult> run_sweep_jobs(const std::vector<const SweepPoint*>& todo, const SweepJobContext& ctx,
                                           std::ostream& progress);

// The encoder's warnings in a log: lines "[PROGRAM: ]warning: TEXT" (any case), TEXT returned, in order.
std::vector<std::string> warnings_in_log(const std::string& log_text);

// SIGINT, SIGTERM and SIGHUP set a stop flag instead of ending rdsweep at once (its children are ended and waited
// for first). Encoders started afterwards also end when rdsweep itself is killed (PR_SET_PDEATHSIG).
void install_stop_signals();
// The signal that stopped the sweep, or 0.
int stop_signal();

// "1h02m", "4m10s", "12.3s": durations for progress lines.
std::string format_duration(double seconds);

}  // namespace gme
