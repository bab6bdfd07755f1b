// The points of an RD sweep (sequence x run x QP), where their files live, the encoder command of each, and whether
// a point is complete (resume, collection).
//
// Layout under the results folder: SEQ/RUN/qpNN/{stream.264, recon.yuv, stats.jsonl, lencod.log, command.txt,
// point.json}. The encoder runs inside the point's folder (so JM-style side files such as log.dat stay there) and
// writes *.part.* names; whoever runs the point (rdsweep's own runner, `rdsweep --run-point` on any host sharing
// the folder, a Slurm array task) renames them when the encoder exits with status 0, then writes point.json, the
// completion marker, last and atomically. point.json records what the result depends on: the command, and the
// SHA-256 of the encoder binary, of the cfg file and of the input sequence, so a rebuilt encoder, an edited cfg
// at the same path or a replaced clip make the point stale; and where and how it was timed (host, CPU, GPU, -j,
// invocation), for the report.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "rd/rd_input.h"
#include "rd/rdsweep_options.h"

namespace gme {

struct SweepPoint {
  SweepSequence seq;
  std::string run;
  int qp = 0;
  int index = 0;                  // position in the plan (sequences, then runs, then QPs)
  bool needs_gpu = false;         // runs the GPU search (GPUIntegerME != 0): Slurm asks a GPU for it
  bool sets_gpu_device = false;   // a -p setting, or the cfg with a value other than 0, chooses GPUDevice: the local
                                  // runner leaves it alone
  std::string dir;                // absolute folder of the point
  std::vector<std::string> argv;  // lencod and its arguments (absolute paths)

  std::string stream() const { return dir + "/stream.264"; }
  std::string recon() const { return dir + "/recon.yuv"; }
  std::string stats() const { return dir + "/stats.jsonl"; }
  std::string log() const { return dir + "/lencod.log"; }
  std::string command_file() const { return dir + "/command.txt"; }
  std::string record_file() const { return dir + "/point.json"; }
  std::string failed_file() const { return dir + "/failed.txt"; }
  std::string label() const { return seq.name + " " + run + " QP " + std::to_string(qp); }
  std::string id() const { return seq.name + "/" + run + "/qp" + std::to_string(qp); }
};

// Absolute form of a path (relative to the current directory); the path need not exist.
std::string absolute_path(const std::string& p);

// The temporary name the encoder writes before the rename: ".part" before the extension, so that programs that
// look at extensions (.264, .yuv) still see the right one.
std::string part_name(const std::string& path);

// Every point, sequences outermost, then runs, then QPs. Settings order on the command line: the cfg, sequence keys
// (InputFile, SourceWidth/Height, FramesToBeEncoded, FrameRate), the global -p overrides, the run's settings, and
// last the QP and output names, which the sweep must control. `cfg_text` (the cfg file's contents) tells whether a
// point runs the GPU search when no -p setting says so.
std::vector<SweepPoint> build_plan(const SweepOptions& o, const std::vector<SweepSequence>& seqs,
                                   const std::string& cfg_text = "");

// The point named by `id` (SEQ/RUN/qpNN, or its index in the plan); nullptr when there is none.
const SweepPoint* find_point(const std::vector<SweepPoint>& plan, const std::string& id);

// The order in which points are encoded: per sequence, per QP, every run back to back (anchor and test points of
// one QP are timed next to each other, so a drift of the machine's speed touches both alike).
std::vector<const SweepPoint*> interleaved(const std::vector<SweepPoint>& plan);

// Shard `index` of `count` (1-based): whole (sequence, QP) groups, dealt round-robin in plan order, so both runs
// of a QP are always timed in the same invocation. Deterministic: every host computes the same slices.
bool in_shard(const SweepPoint& p, const std::vector<SweepPoint>& plan, int index, int count);

// The command as one shell-quoted line (command.txt, --dry-run).
std::string command_text(const std::vector<std::string>& argv);
std::string shell_quote(const std::string& word);

// ---- Fingerprints: what a result depends on besides its command line ----

struct SweepFingerprints {
  std::string encoder_sha256;                 // the encoder binary
  std::string cfg_sha256;                     // the -f cfg file
  std::map<std::string, std::string> inputs;  // absolute sequence file -> its SHA-256
  // Where point_status caches the hashes of the points' streams ("" for no cache), and whether it may write there.
  std::string hash_cache;
  bool write_hash_cache = true;
};

// Hashes the encoder, the cfg and every sequence file. A file's hash is cached under OUT/.rdsweep/hash/, keyed by
// its identity (device, inode, size, modification and change times): a clip is read again only when it changed.
// Returns false with *error (file and the system's reason) when a file cannot be read. `write_cache` false: the
// cache is read but nothing is written (a dry run leaves the results folder as it is).
bool compute_fingerprints(const SweepOptions& o, const std::vector<SweepSequence>& seqs, SweepFingerprints* f,
                          std::string* error, bool write_cache = true);

// SHA-256 of a file through the cache in `cache_dir` (created when missing; "" for no cache).
bool cached_file_sha256(const std::string& path, const std::string& cache_dir, std::string* hex, std::string* error,
                        bool write_cache = true);

// ---- The completion marker ----

struct PointRecord {
  std::string command, encoder_sha256, cfg_sha256, input_sha256, stream_sha256;
  std::string rdsweep_version;    // the program that ran the point
  std::string encoder_version;    // from the StatsFile when the encoder records it, else ""
  std::string host, cpu, gpus;    // where it was encoded (gme::cpu_description(), NVML's GPU names or why none)
  std::string engine;             // "local", "run-point" or "slurm"
  std::string invocation;         // one id per rdsweep process: points with equal ids were timed in one run
  std::string timing;             // "parallel", "serial" or "alone" (a --run-point process encodes one point)
  int jobs = 1;                   // encodes that ran at once in that invocation
  int cuda_device = -1;           // the GPUDevice the local runner gave the encode to spread GPU points over the
                                  // host's cards, -1 for none (the command's own GPUDevice applied); it changes no
                                  // bit of the result, so it is not part of the command
  std::string slurm_job;          // "JOBID_TASK" under Slurm
  std::string started_utc;
  double wall_s = 0;
  std::vector<std::string> warnings;  // lencod's warning lines (text after "warning: ")
};

bool write_point_record(const SweepPoint& p, const PointRecord& r, std::string* error);
bool read_point_record(const std::string& path, PointRecord* r, std::string* why);

enum class PointState { kComplete, kMissing, kIncomplete, kStale, kFailed };

struct PointStatus {
  PointState state = PointState::kMissing;
  std::string why;      // for every state but complete: one line ("not encoded yet", "encoder binary changed")
  RdPoint result;       // complete: the StatsFile summary
  PointRecord record;   // complete or stale: point.json
  // Stale because its files no longer match its point.json (a StatsFile of another point copied over, a stream
  // written over after the encode), not because the sweep changed: `why` names the file and the field.
  bool files_changed = false;
};

// Complete: point.json readable and matching the command and fingerprints, stats.jsonl with its summary, and
// stream.264 present, the StatsFile's QPs and configuration agreeing with the -p settings of point.json's command
// and the stream's SHA-256 with the one point.json records. `prints` may leave a field empty to skip that
// comparison (--report-only without the encoder binary).
PointStatus point_status(const SweepPoint& p, const SweepFingerprints& prints);

// Creates a folder and its parents. Returns false with *error on failure.
bool make_dirs(const std::string& path, std::string* error);

// Writes `text` to `path` through a temporary name in the same folder (so a reader on any host of a shared
// filesystem sees the old file or the whole new one). Returns false with *error.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);

// "2024-05-01 12:00:00 UTC".
std::string utc_now();

}  // namespace gme
