// rdsweep's command line and its sequence list (sequences/manifest.csv or name=file:WxH:frames[:fps] items).
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gme {

// Bad command line, manifest or sequence item; what() is one line.
struct SweepError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SweepSequence {
  std::string name;
  std::string file;   // as lencod will be given it (resolved against the repository root for the manifest)
  int width = 0, height = 0;
  int frames = 0;
  double fps = 30.0;
};

// A run: a name and the -p Key=Value settings that distinguish it from the other runs.
struct SweepRun {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;
};

enum class SweepTiming { kParallel, kSerial };

// The Slurm engine's settings (--slurm): sbatch options of the job arrays.
struct SlurmSettings {
  bool enabled = false;                 // --slurm
  std::string partition;                // --partition P
  std::string time_limit;               // --time-limit T (sbatch --time)
  int cpus_per_task = 1;                // --cpus-per-task N
  int gpus_per_task = 1;                // --gpus-per-task N: --gres=gpu:N for points that run the GPU search
  std::vector<std::string> sbatch_args; // --sbatch-arg ARG (repeatable), passed to sbatch as they are
  bool no_wait = false;                 // --no-wait: submit and return
  double poll_s = 10;                   // --poll S: seconds between squeue calls while waiting
};

struct SweepOptions {
  std::string cfg;                              // -f (required unless --help)
  std::string manifest = "sequences/manifest.csv";
  std::vector<SweepSequence> sequences;         // inline items; when empty the manifest is read
  std::vector<std::string> seq_filter;          // --seq NAME (repeatable or comma list); empty: all
  std::vector<int> qps = {28, 32, 36, 40};      // --qp, each applied to QPISlice and QPPSlice
  std::vector<SweepRun> runs;                   // --run; default: unmodified (GPUIntegerME=0), gpu (=1)
  std::string anchor;                           // --anchor RUN; default: the first run
  std::vector<std::string> overrides;           // -p Key=Value for every run
  int jobs = 1;                                 // -j N; default: cores / Threads per encode
  bool jobs_given = false;
  std::string out_dir = "results";              // --out DIR
  std::string lencod;                           // --lencod PATH; default: lencod beside rdsweep
  int frames = 0;                               // --frames N: encode N frames of every sequence (0: all listed)
  bool force = false;                           // --force: encode points that are already complete
  bool dry_run = false;                         // -n: print the commands, run nothing
  bool pchip = false;                           // --pchip: PCHIP instead of VCEG-M33 in the report
  bool strict = false;                          // --strict: a lencod warning fails its point, a doubtful BD
                                                // result fails the sweep
  SweepTiming timing = SweepTiming::kParallel;  // --timing parallel|serial
  bool no_recon = false;                        // --no-recon: no reconstruction files
  std::string run_point;                        // --run-point ID: encode this one point (SEQ/RUN/qpNN or index)
  bool report_only = false;                     // --report-only: collect what is complete, encode nothing
  int shard_index = 0, shard_count = 0;         // --shard i/N (1 <= i <= N); 0/0: every point
  SlurmSettings slurm;
  bool help = false;
  bool version = false;
  std::string command_line;                     // the invocation, for the report
};

// The runs used when no --run is given.
std::vector<SweepRun> default_sweep_runs();

// Parses rdsweep's arguments (argv[0] excluded; GNU getopt_long: "--frames=2" and "--frames 2"). `default_jobs`
// and `default_lencod` fill -j and --lencod. Throws SweepError with one line.
SweepOptions parse_sweep_args(const std::vector<std::string>& args, int default_jobs,
                              const std::string& default_lencod);

// -j when not given: the cores divided by the most threads one encode runs (lencod's Threads from -p or a run's
// setting, 0 meaning every core; 1 when no setting names it), at least 1, so -j x Threads stays within the cores.
// A Threads set inside the -f configuration file is not seen: give it with -p, or give -j.
int default_sweep_jobs(const SweepOptions& o, int cores);

// "name=file:WxH:frames[:fps]".
SweepSequence parse_sequence_item(const std::string& item);
// "NAME" (a default run's name) or "NAME:Key=Value,Key=Value".
SweepRun parse_run_item(const std::string& item);
// The item text of a run, as parse_run_item reads it back ("NAME:Key=Value,...").
std::string run_item_text(const SweepRun& r);

// The arguments that make another rdsweep process plan exactly the same points (absolute paths, no engine
// options such as -j, --shard, --slurm, -n): the point runner's command line (--run-point, Slurm, dry run).
std::vector<std::string> plan_arguments(const SweepOptions& o);

// Reads sequences/manifest.csv (name,file,width,height,frames,fps; file relative to the repository root, which is
// the parent of the manifest's folder). Throws SweepError naming file, line and field.
std::vector<SweepSequence> read_manifest(const std::string& path);

// The sequences to encode: inline items or the manifest, filtered by --seq (an unknown name is an error), with
// --frames applied (never more frames than a clip has: *warnings gets one line per sequence that has fewer).
std::vector<SweepSequence> select_sequences(const SweepOptions& o, std::vector<std::string>* warnings = nullptr);

extern const char* const kSweepUsage;

}  // namespace gme
