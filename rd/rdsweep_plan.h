// The points of an RD sweep (sequence x run x QP), where their files live, the encoder command of each, and whether
// a point is already complete (resume).
//
// Layout under the results folder: SEQ/RUN/qpNN/{stream.264, recon.yuv, stats.jsonl, lencod.log, command.txt}.
// The encoder runs inside the point's folder (so JM-style side files such as log.dat stay there) and writes
// *.part.* names; rdsweep renames them when the encoder exits with status 0, then writes command.txt. A point is
// complete when stats.jsonl has its summary line and command.txt equals the command the sweep would run now, so
// a changed configuration or setting is encoded again rather than silently reused.
#pragma once
#include <string>
#include <vector>

#include "rd/rd_input.h"
#include "rd/rdsweep_options.h"

namespace gme {

struct SweepPoint {
  SweepSequence seq;
  std::string run;
  int qp = 0;
  std::string dir;                // absolute folder of the point
  std::vector<std::string> argv;  // lencod and its arguments (absolute paths)

  std::string stream() const { return dir + "/stream.264"; }
  std::string recon() const { return dir + "/recon.yuv"; }
  std::string stats() const { return dir + "/stats.jsonl"; }
  std::string log() const { return dir + "/lencod.log"; }
  std::string command_file() const { return dir + "/command.txt"; }
  std::string label() const { return seq.name + " " + run + " QP " + std::to_string(qp); }
};

// Absolute form of a path (relative to the current directory); the path need not exist.
std::string absolute_path(const std::string& p);

// The temporary name the encoder writes before the rename: ".part" before the extension, so that programs that
// look at extensions (.264, .yuv) still see the right one.
std::string part_name(const std::string& path);

// Every point, sequences outermost, then runs, then QPs. Settings order on the command line: the cfg, sequence keys
// (InputFile, SourceWidth/Height, FramesToBeEncoded, FrameRate), the global -p overrides, the run's settings, and
// last the QP and output names, which the sweep must control.
std::vector<SweepPoint> build_plan(const SweepOptions& o, const std::vector<SweepSequence>& seqs);

// The command as one shell-quoted line (command.txt, --dry-run).
std::string command_text(const std::vector<std::string>& argv);

// Complete as described above; *why says what is missing (for the progress output) when not.
bool point_is_complete(const SweepPoint& p, RdPoint* result, std::string* why);

// Creates a folder and its parents. Returns false with *error on failure.
bool make_dirs(const std::string& path, std::string* error);

}  // namespace gme
