// Parsing of rdsweep's command line and of the sequence manifest.
#include "rd/rdsweep_options.h"

#include <getopt.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <strings.h>

#include "rd/rd_input.h"
#include "rd/rdsweep_plan.h"
#include "common/text_fields.h"

namespace gme {

const char* const kSweepUsage =
    "Usage: rdsweep -f CFG [options] [NAME=FILE:WxH:FRAMES[:FPS] ...]\n"
    "Encodes every sequence at every QP with every run (bin/lencod, in parallel or on Slurm), keeps streams,\n"
    "reconstructions and StatsFiles under one folder, and writes results.csv, report.md (the seed paper's Table 2:\n"
    "dTime by Eq. 3, BD-PSNR and BD-rate of the combined PSNR (4Y+U+V)/6; Table 3: energy where measured) and one\n"
    "RD-curve SVG per sequence. Options (GNU style: --frames=2 or --frames 2):\n"
    "  -f CFG               encoder configuration (required)\n"
    "  --manifest FILE      sequence list when no NAME=... items are given (default sequences/manifest.csv)\n"
    "  --seq NAME[,NAME]    only these sequences (repeatable)\n"
    "  --qp Q[,Q...]        QPs, each used as QPISlice and QPPSlice (default 28,32,36,40)\n"
    "  --run NAME[:K=V,...] a run; the first --run replaces the default pair\n"
    "                       unmodified:GPUIntegerME=0 and gpu:GPUIntegerME=1 (a bare default name keeps its setting)\n"
    "  --anchor NAME        run the others are compared with (default: the first run)\n"
    "  -p KEY=VALUE         setting for every run (repeatable)\n"
    "  --frames N           encode only the first N frames of each sequence\n"
    "  -j N                 parallel encodes (default: cores / lencod Threads of a -p or --run setting)\n"
    "  --timing MODE        parallel (default: -j encodes at once) or serial (one encode at a time, anchor and\n"
    "                       test points of each QP back to back: the times a paper reports)\n"
    "  --out DIR            results folder (default results)\n"
    "  --lencod PATH        encoder program (default: lencod beside rdsweep)\n"
    "  --no-recon           write no reconstruction files\n"
    "  --strict             a lencod warning fails its point; a doubtful BD result fails the sweep (exit 1)\n"
    "  --force              encode again points that are already complete\n"
    "  --pchip              PCHIP instead of the VCEG-M33 cubic fit for the Bjontegaard deltas\n"
    "  -n, --dry-run        print the commands that would encode the missing points, run nothing\n"
    "  --run-point ID       encode the one point ID (SEQ/RUN/qpNN or its number in the plan) and mark it\n"
    "                       complete; any host sharing the results folder can run it\n"
    "  --shard I/N          encode only the I-th of N deterministic slices of the points (no report)\n"
    "  --report-only        encode nothing: results.csv, report.md and plots from the complete points, and the\n"
    "                       list of missing ones\n"
    "  --slurm              submit the missing points as Slurm job arrays (sbatch), wait, then collect\n"
    "  --partition P, --time-limit T, --cpus-per-task N, --gpus-per-task N (points with GPUIntegerME=1 only),\n"
    "  --sbatch-arg ARG (repeatable), --no-wait (submit and return), --poll S (squeue interval, default 10)\n"
    "  -V, --version        the version of this build\n"
    "  -h, --help           this text\n";

namespace {

std::string trim(const std::string& s) { return trim_space(s); }
bool parse_int(const std::string& s, int* v) { return field_to_int(s, v); }
bool parse_double(const std::string& s, double* v) { return field_to_double(s, v); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

// A name becomes a folder name and a CSV field: keep it to a safe alphabet.
void check_name(const std::string& what, const std::string& name) {
  if (name.empty()) throw SweepError(what + " name is empty");
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      throw SweepError(what + " name '" + name + "' may only use letters, digits, '_', '-' and '.'");
  if (name == "." || name == "..") throw SweepError(what + " name '" + name + "' is not allowed");
}

void check_sequence(const SweepSequence& s, const std::string& where) {
  if (s.width < 2 || s.height < 2 || (s.width & 1) || (s.height & 1))
    throw SweepError(where + ": size " + std::to_string(s.width) + "x" + std::to_string(s.height) +
                     " invalid, expected even width and height >= 2");
  if (s.frames < 1) throw SweepError(where + ": frames " + std::to_string(s.frames) + " invalid, expected >= 1");
  if (!(s.fps > 0)) throw SweepError(where + ": frame rate must be positive");
}

}  // namespace

std::vector<SweepRun> default_sweep_runs() {
  return {{"unmodified", {{"GPUIntegerME", "0"}}}, {"gpu", {{"GPUIntegerME", "1"}}}};
}

SweepSequence parse_sequence_item(const std::string& item) {
  const size_t eq = item.find('=');
  if (eq == std::string::npos)
    throw SweepError("sequence '" + item + "': expected NAME=FILE:WxH:FRAMES[:FPS]");
  SweepSequence s;
  s.name = item.substr(0, eq);
  check_name("sequence", s.name);
  // The file name may itself contain ':'; the size, frame and rate fields are taken from the right.
  std::vector<std::string> f = split(item.substr(eq + 1), ':');
  size_t size_idx = std::string::npos;
  for (size_t i = f.size(); i-- > 1;) {
    const size_t x = f[i].find('x');
    int w, h;
    if (x != std::string::npos && parse_int(f[i].substr(0, x), &w) && parse_int(f[i].substr(x + 1), &h)) {
      size_idx = i;
      s.width = w;
      s.height = h;
      break;
    }
  }
  if (size_idx == std::string::npos || size_idx + 1 >= f.size() || size_idx + 3 < f.size())
    throw SweepError("sequence '" + item + "': expected NAME=FILE:WxH:FRAMES[:FPS]");
  for (size_t i = 0; i < size_idx; i++) s.file += (i ? ":" : "") + f[i];
  if (s.file.empty()) throw SweepError("sequence '" + item + "': file name is empty");
  if (!parse_int(f[size_idx + 1], &s.frames))
    throw SweepError("sequence '" + item + "': frames '" + f[size_idx + 1] + "' is not an integer");
  if (size_idx + 2 < f.size() && !parse_double(f[size_idx + 2], &s.fps))
    throw SweepError("sequence '" + item + "': frame rate '" + f[size_idx + 2] + "' is not a number");
  check_sequence(s, "sequence '" + item + "'");
  return s;
}

// The lencod keys that build_plan sets on every point (rd/rdsweep_plan.cpp), with the rdsweep option that sets
// them instead. A -p or --run value for one of them was either overridden by the sweep (QPs, file names) while
// report.md listed it as a setting, or overrode the sequence behind the sweep's back (the report would name one
// clip, size or frame count and the encoder use another). lencod compares keys without case, so does this.
namespace {

const char* sweep_key_option(const std::string& key) {
  static const std::pair<const char*, const char*> kOwned[] = {
      {"QPISlice", "--qp"}, {"QPPSlice", "--qp"},
      {"OutputFile", "--out (the sweep names each point's files)"},
      {"ReconFile", "--out, or --no-recon for no reconstruction"},
      {"StatsFile", "--out (the sweep names each point's files)"},
      {"InputFile", "a sequence item NAME=FILE:WxH:FRAMES[:FPS] or --manifest"},
      {"SourceWidth", "a sequence item NAME=FILE:WxH:FRAMES[:FPS] or --manifest"},
      {"SourceHeight", "a sequence item NAME=FILE:WxH:FRAMES[:FPS] or --manifest"},
      {"FrameRate", "a sequence item NAME=FILE:WxH:FRAMES:FPS or --manifest"},
      {"FramesToBeEncoded", "--frames"}};
  const std::string k = trim(key);
  for (const auto& [name, option] : kOwned)
    if (strcasecmp(k.c_str(), name) == 0) return option;
  return nullptr;
}

void check_not_sweep_key(const std::string& key, const std::string& where) {
  if (const char* option = sweep_key_option(key))
    throw SweepError(where + ": " + trim(key) + " is set by the sweep itself for every point; use " + option);
}

}  // namespace

SweepRun parse_run_item(const std::string& item) {
  const size_t colon = item.find(':');
  SweepRun r;
  r.name = item.substr(0, colon);
  check_name("run", r.name);
  if (colon == std::string::npos) {
    for (const SweepRun& d : default_sweep_runs())
      if (d.name == r.name) return d;
    throw SweepError("run '" + item + "': expected NAME:Key=Value[,Key=Value] (only unmodified and gpu are "
                     "predefined)");
  }
  for (const std::string& kv : split(item.substr(colon + 1), ',')) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || trim(kv.substr(0, eq)).empty())
      throw SweepError("run '" + item + "': setting '" + kv + "' is not Key=Value");
    check_not_sweep_key(kv.substr(0, eq), "run '" + item + "'");
    r.params.emplace_back(trim(kv.substr(0, eq)), trim(kv.substr(eq + 1)));
  }
  return r;
}

int default_sweep_jobs(const SweepOptions& o, int cores) {
  cores = std::max(1, cores);
  // lencod's Threads (-p or a run's setting; the last -p wins, a run's setting over -p): 0 means every core.
  int global = 1, most = 1;
  for (const auto& kv : o.overrides)
    if (kv.rfind("Threads=", 0) == 0 && !parse_int(trim(kv.substr(8)), &global)) global = 1;
  for (const auto& r : o.runs) {
    int t = global;
    for (const auto& [k, v] : r.params)
      if (k == "Threads" && !parse_int(v, &t)) t = 1;
    most = std::max(most, t <= 0 ? cores : t);
  }
  if (o.runs.empty()) most = std::max(most, global <= 0 ? cores : global);
  return std::max(1, cores / most);
}

std::string run_item_text(const SweepRun& r) {
  std::string t = r.name;
  for (size_t i = 0; i < r.params.size(); i++)
    t += (i ? "," : ":") + r.params[i].first + "=" + r.params[i].second;
  return t;
}

namespace {

// Long options without a short form.
enum LongOnly {
  kManifest = 256, kSeq, kQp, kRun, kAnchor, kFrames, kOut, kLencod, kForce, kPchip, kStrict, kTiming, kNoRecon,
  kRunPoint, kShard, kReportOnly, kSlurm, kPartition, kTimeLimit, kCpusPerTask, kGpusPerTask, kSbatchArg, kNoWait,
  kPoll
};

const option kLongOptions[] = {
    {"help", no_argument, nullptr, 'h'},         {"version", no_argument, nullptr, 'V'},
    {"dry-run", no_argument, nullptr, 'n'},      {"jobs", required_argument, nullptr, 'j'},
    {"manifest", required_argument, nullptr, kManifest},
    {"seq", required_argument, nullptr, kSeq},   {"qp", required_argument, nullptr, kQp},
    {"run", required_argument, nullptr, kRun},   {"anchor", required_argument, nullptr, kAnchor},
    {"frames", required_argument, nullptr, kFrames},
    {"out", required_argument, nullptr, kOut},   {"lencod", required_argument, nullptr, kLencod},
    {"force", no_argument, nullptr, kForce},     {"pchip", no_argument, nullptr, kPchip},
    {"strict", no_argument, nullptr, kStrict},   {"timing", required_argument, nullptr, kTiming},
    {"no-recon", no_argument, nullptr, kNoRecon},
    {"run-point", required_argument, nullptr, kRunPoint},
    {"shard", required_argument, nullptr, kShard},
    {"report-only", no_argument, nullptr, kReportOnly},
    {"slurm", no_argument, nullptr, kSlurm},     {"partition", required_argument, nullptr, kPartition},
    {"time-limit", required_argument, nullptr, kTimeLimit},
    {"cpus-per-task", required_argument, nullptr, kCpusPerTask},
    {"gpus-per-task", required_argument, nullptr, kGpusPerTask},
    {"sbatch-arg", required_argument, nullptr, kSbatchArg},
    {"no-wait", no_argument, nullptr, kNoWait},  {"poll", required_argument, nullptr, kPoll},
    {nullptr, 0, nullptr, 0}};

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

SweepOptions parse_sweep_args(const std::vector<std::string>& args, int default_jobs,
                              const std::string& default_lencod) {
  SweepOptions o;
  o.jobs = std::max(1, default_jobs);
  o.lencod = default_lencod;
  bool runs_given = false, qps_given = false, slurm_option = false;
  o.command_line = "rdsweep";
  for (const auto& a : args) o.command_line += " " + a;
  // getopt_long wants a mutable argv; '-' returns the other arguments in order (code 1), so "--qp 28 32" can take
  // the numbers that follow it, and ':' reports a missing value as ':'.
  std::vector<std::string> store = args;
  std::vector<char*> argv;
  static char name[] = "rdsweep";
  argv.push_back(name);
  for (auto& a : store) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  const int argc = static_cast<int>(argv.size()) - 1;
  optind = 0;  // full re-initialisation of getopt's state (the parser may run more than once in a process)
  opterr = 0;
  bool after_qp = false;
  for (;;) {
    const int c = getopt_long(argc, argv.data(), "-:f:p:j:nhV", kLongOptions, nullptr);
    if (c == -1) break;
    const std::string opt = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    const std::string val = optarg ? optarg : "";
    const bool continues_qp = c == 1 && after_qp && all_digits(val);
    after_qp = false;
    auto add_qps = [&](const std::string& list) {
      if (!qps_given) o.qps.clear();
      qps_given = true;
      for (const auto& q : split(list, ',')) {
        int v;
        if (!parse_int(q, &v) || v < 0 || v > 51) throw SweepError("--qp: '" + q + "' is not a QP in 0..51");
        o.qps.push_back(v);
      }
      after_qp = true;  // "--qp 28 32 36 40": the numbers that follow are QPs too
    };
    auto positive = [&](const char* what, int* out) {
      if (!parse_int(val, out) || *out < 1) throw SweepError(std::string(what) + " '" + val + "' is not a positive integer");
    };
    switch (c) {
      case 1:
        if (continues_qp) add_qps(val);
        else o.sequences.push_back(parse_sequence_item(val));
        break;
      case 'h': o.help = true; break;
      case 'V': o.version = true; break;
      case 'f': o.cfg = val; break;
      case kManifest: o.manifest = val; break;
      case kSeq:
        for (const auto& n : split(val, ',')) o.seq_filter.push_back(trim(n));
        break;
      case kQp: add_qps(val); break;
      case kRun:
        if (!runs_given) o.runs.clear();
        runs_given = true;
        o.runs.push_back(parse_run_item(val));
        break;
      case kAnchor: o.anchor = val; break;
      case 'p':
        if (val.find('=') == std::string::npos || val.find('=') == 0)
          throw SweepError("-p '" + val + "' is not Key=Value");
        check_not_sweep_key(val.substr(0, val.find('=')), "-p '" + val + "'");
        o.overrides.push_back(val);
        break;
      case kFrames: positive("--frames", &o.frames); break;
      case 'j':
        positive("-j", &o.jobs);
        o.jobs_given = true;
        break;
      case kOut: o.out_dir = val; break;
      case kLencod: o.lencod = val; break;
      case kForce: o.force = true; break;
      case 'n': o.dry_run = true; break;
      case kPchip: o.pchip = true; break;
      case kStrict: o.strict = true; break;
      case kTiming:
        if (val == "serial") o.timing = SweepTiming::kSerial;
        else if (val == "parallel") o.timing = SweepTiming::kParallel;
        else throw SweepError("--timing '" + val + "': expected serial or parallel");
        break;
      case kNoRecon: o.no_recon = true; break;
      case kRunPoint:
        if (val.empty()) throw SweepError("--run-point needs a point (SEQ/RUN/qpNN or its number)");
        o.run_point = val;
        break;
      case kShard: {
        const size_t slash = val.find('/');
        if (slash == std::string::npos || !parse_int(val.substr(0, slash), &o.shard_index) ||
            !parse_int(val.substr(slash + 1), &o.shard_count) || o.shard_count < 1 || o.shard_index < 1 ||
            o.shard_index > o.shard_count)
          throw SweepError("--shard '" + val + "': expected I/N with 1 <= I <= N (e.g. --shard 1/2)");
        break;
      }
      case kReportOnly: o.report_only = true; break;
      case kSlurm: o.slurm.enabled = true; break;
      case kPartition: o.slurm.partition = val; slurm_option = true; break;
      case kTimeLimit: o.slurm.time_limit = val; slurm_option = true; break;
      case kCpusPerTask: positive("--cpus-per-task", &o.slurm.cpus_per_task); slurm_option = true; break;
      case kGpusPerTask: positive("--gpus-per-task", &o.slurm.gpus_per_task); slurm_option = true; break;
      case kSbatchArg: o.slurm.sbatch_args.push_back(val); slurm_option = true; break;
      case kNoWait: o.slurm.no_wait = true; slurm_option = true; break;
      case kPoll:
        if (!parse_double(val, &o.slurm.poll_s) || !(o.slurm.poll_s > 0) || o.slurm.poll_s > 3600)
          throw SweepError("--poll '" + val + "' is not a number of seconds in (0, 3600]");
        slurm_option = true;
        break;
      case ':':
        throw SweepError("option " + opt + " needs a value (see rdsweep --help)");
      default:
        throw SweepError("unknown option '" + opt + "' (see rdsweep --help)");
    }
  }
  if (o.help || o.version) return o;
  if (o.cfg.empty()) throw SweepError("no configuration given, expected -f CFG (e.g. -f cfg/encoder_baseline.cfg)");
  if (!runs_given) o.runs = default_sweep_runs();
  std::set<std::string> names;
  for (const auto& r : o.runs)
    if (!names.insert(r.name).second) throw SweepError("run '" + r.name + "' is defined twice");
  if (!o.jobs_given) o.jobs = default_sweep_jobs(o, default_jobs);
  if (o.anchor.empty()) o.anchor = o.runs.front().name;
  if (!names.count(o.anchor)) throw SweepError("--anchor '" + o.anchor + "' is not one of the runs");
  std::set<int> qset;
  for (int q : o.qps)
    if (!qset.insert(q).second) throw SweepError("--qp lists QP " + std::to_string(q) + " twice");
  std::sort(o.qps.begin(), o.qps.end());
  std::set<std::string> seqs;
  for (const auto& s : o.sequences)
    if (!seqs.insert(s.name).second) throw SweepError("sequence '" + s.name + "' is given twice");
  // Modes that exclude each other: say so rather than pick one.
  const int modes = !o.run_point.empty() + o.report_only + o.slurm.enabled + (o.shard_count > 0);
  if (modes > 1)
    throw SweepError("--run-point, --report-only, --slurm and --shard exclude each other (give one)");
  if (slurm_option && !o.slurm.enabled)
    throw SweepError("--partition, --time-limit, --cpus-per-task, --gpus-per-task, --sbatch-arg, --no-wait and "
                     "--poll apply to --slurm only");
  if (o.timing == SweepTiming::kSerial) {
    if (o.jobs_given && o.jobs != 1)
      throw SweepError("--timing serial runs one encode at a time: drop -j " + std::to_string(o.jobs));
    if (o.slurm.enabled)
      throw SweepError("--timing serial times every point on this machine, one at a time; with --slurm the points "
                       "run wherever Slurm places them (the report marks their times)");
    o.jobs = 1;
  }
  return o;
}

std::vector<std::string> plan_arguments(const SweepOptions& o) {
  std::vector<std::string> a = {"-f", absolute_path(o.cfg)};
  if (o.sequences.empty()) {
    a.push_back("--manifest=" + absolute_path(o.manifest));
    for (const std::string& s : o.seq_filter) a.push_back("--seq=" + s);
  } else if (!o.seq_filter.empty()) {
    for (const std::string& s : o.seq_filter) a.push_back("--seq=" + s);
  }
  std::string qps;
  for (int q : o.qps) qps += (qps.empty() ? "" : ",") + std::to_string(q);
  a.push_back("--qp=" + qps);
  for (const SweepRun& r : o.runs) a.push_back("--run=" + run_item_text(r));
  a.push_back("--anchor=" + o.anchor);
  for (const std::string& kv : o.overrides) {
    a.push_back("-p");
    a.push_back(kv);
  }
  if (o.frames > 0) a.push_back("--frames=" + std::to_string(o.frames));
  a.push_back("--out=" + absolute_path(o.out_dir));
  a.push_back("--lencod=" + absolute_path(o.lencod));
  if (o.no_recon) a.push_back("--no-recon");
  if (o.strict) a.push_back("--strict");
  for (const SweepSequence& s : o.sequences) {
    std::ostringstream fps;
    fps << s.fps;
    a.push_back(s.name + "=" + absolute_path(s.file) + ":" + std::to_string(s.width) + "x" + std::to_string(s.height) +
                ":" + std::to_string(s.frames) + ":" + fps.str());
  }
  return a;
}

std::vector<SweepSequence> read_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SweepError(path + ": cannot read the manifest");
  // The manifest names files relative to the repository root, the parent of the manifest's own folder.
  std::string root;
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) root = "../";
  else root = path.substr(0, slash + 1) + "../";
  std::vector<SweepSequence> out;
  std::string line;
  int ln = 0;
  std::vector<std::string> header;
  std::set<std::string> names;
  while (std::getline(in, line)) {
    ln++;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::vector<std::string> f = split_csv_line(t);
    for (auto& x : f) x = trim(x);
    const std::string where = path + ":" + std::to_string(ln);
    if (header.empty()) {
      header = f;
      const std::vector<std::string> want = {"name", "file", "width", "height", "frames"};
      for (size_t i = 0; i < want.size(); i++)
        if (i >= header.size() || header[i] != want[i])
          throw SweepError(where + ": header must start name,file,width,height,frames[,fps]");
      continue;
    }
    if (f.size() < 5 || f.size() > header.size())
      throw SweepError(where + ": " + std::to_string(f.size()) + " fields, expected " +
                       std::to_string(header.size()));
    SweepSequence s;
    s.name = f[0];
    try {
      check_name("sequence", s.name);
    } catch (const SweepError& e) {
      throw SweepError(where + ": " + e.what());
    }
    s.file = !f[1].empty() && f[1][0] == '/' ? f[1] : root + f[1];
    if (!parse_int(f[2], &s.width)) throw SweepError(where + ": width '" + f[2] + "' is not an integer");
    if (!parse_int(f[3], &s.height)) throw SweepError(where + ": height '" + f[3] + "' is not an integer");
    if (!parse_int(f[4], &s.frames)) throw SweepError(where + ": frames '" + f[4] + "' is not an integer");
    if (f.size() > 5 && !f[5].empty() && !parse_double(f[5], &s.fps))
      throw SweepError(where + ": fps '" + f[5] + "' is not a number");
    check_sequence(s, where);
    if (!names.insert(s.name).second) throw SweepError(where + ": sequence '" + s.name + "' listed twice");
    out.push_back(s);
  }
  if (header.empty()) throw SweepError(path + ": empty manifest");
  return out;
}

std::vector<SweepSequence> select_sequences(const SweepOptions& o, std::vector<std::string>* warnings) {
  std::vector<SweepSequence> all = o.sequences.empty() ? read_manifest(o.manifest) : o.sequences;
  std::vector<SweepSequence> out;
  if (o.seq_filter.empty()) {
    out = all;
  } else {
    for (const auto& name : o.seq_filter) {
      const auto it = std::find_if(all.begin(), all.end(), [&](const SweepSequence& s) { return s.name == name; });
      if (it == all.end()) {
        std::string known;
        for (const auto& s : all) known += (known.empty() ? "" : ", ") + s.name;
        throw SweepError("--seq '" + name + "' is not a known sequence (known: " + known + ")");
      }
      if (std::none_of(out.begin(), out.end(), [&](const SweepSequence& s) { return s.name == name; }))
        out.push_back(*it);
    }
  }
  if (o.frames > 0)
    for (auto& s : out) {
      if (s.frames < o.frames && warnings)
        warnings->push_back("--frames " + std::to_string(o.frames) + ": sequence " + s.name + " has " +
                            std::to_string(s.frames) + " frame" + (s.frames == 1 ? "" : "s") + "; encoding " +
                            std::to_string(s.frames));
      s.frames = std::min(s.frames, o.frames);
    }
  return out;
}

}  // namespace gme
