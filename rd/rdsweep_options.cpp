// Parsing of rdsweep's command line and of the sequence manifest.
#include "rd/rdsweep_options.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>

#include "rd/rd_input.h"
#include "common/text_fields.h"

namespace gme {

const char* const kSweepUsage =
    "Usage: rdsweep -f CFG [options] [NAME=FILE:WxH:FRAMES[:FPS] ...]\n"
    "Encodes every sequence at every QP with every run (bin/lencod, in parallel), keeps streams, reconstructions\n"
    "and StatsFiles under one folder, and writes results.csv, report.md (the seed paper's Table 2: dTime by Eq. 3,\n"
    "BD-PSNR and BD-rate of the combined PSNR (4Y+U+V)/6) and one RD-curve SVG per sequence.\n"
    "Options:\n"
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
    "  --out DIR            results folder (default results)\n"
    "  --lencod PATH        encoder program (default: lencod beside rdsweep)\n"
    "  --force              encode again points that are already complete\n"
    "  --pchip              PCHIP instead of the VCEG-M33 cubic fit for the Bjontegaard deltas\n"
    "  -n, --dry-run        print the encoder commands and exit\n"
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

SweepOptions parse_sweep_args(const std::vector<std::string>& args, int default_jobs,
                              const std::string& default_lencod) {
  SweepOptions o;
  o.jobs = std::max(1, default_jobs);
  o.lencod = default_lencod;
  bool runs_given = false, qps_given = false, jobs_given = false;
  o.command_line = "rdsweep";
  for (const auto& a : args) o.command_line += " " + a;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw SweepError("option " + a + " needs a value (see rdsweep --help)");
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "-f") {
      o.cfg = value();
    } else if (a == "--manifest") {
      o.manifest = value();
    } else if (a == "--seq") {
      for (const auto& n : split(value(), ',')) o.seq_filter.push_back(trim(n));
    } else if (a == "--qp") {
      if (!qps_given) o.qps.clear();
      qps_given = true;
      // Accept "--qp 28,32" and "--qp 28 32 36 40".
      std::vector<std::string> items = split(value(), ',');
      while (i + 1 < args.size() && !args[i + 1].empty() && std::isdigit(static_cast<unsigned char>(args[i + 1][0])) &&
             args[i + 1].find('=') == std::string::npos)
        items.push_back(args[++i]);
      for (const auto& q : items) {
        int v;
        if (!parse_int(q, &v) || v < 0 || v > 51) throw SweepError("--qp: '" + q + "' is not a QP in 0..51");
        o.qps.push_back(v);
      }
    } else if (a == "--run") {
      if (!runs_given) o.runs.clear();
      runs_given = true;
      o.runs.push_back(parse_run_item(value()));
    } else if (a == "--anchor") {
      o.anchor = value();
    } else if (a == "-p") {
      const std::string& kv = value();
      if (kv.find('=') == std::string::npos || kv.find('=') == 0)
        throw SweepError("-p '" + kv + "' is not Key=Value");
      o.overrides.push_back(kv);
    } else if (a == "--frames") {
      if (!parse_int(value(), &o.frames) || o.frames < 1)
        throw SweepError("--frames '" + args[i] + "' is not a positive integer");
    } else if (a == "-j" || (a.size() > 2 && a.rfind("-j", 0) == 0)) {
      const std::string v = a == "-j" ? value() : a.substr(2);
      if (!parse_int(v, &o.jobs) || o.jobs < 1) throw SweepError("-j '" + v + "' is not a positive integer");
      jobs_given = true;
    } else if (a == "--out") {
      o.out_dir = value();
    } else if (a == "--lencod") {
      o.lencod = value();
    } else if (a == "--force") {
      o.force = true;
    } else if (a == "-n" || a == "--dry-run") {
      o.dry_run = true;
    } else if (a == "--pchip") {
      o.pchip = true;
    } else if (!a.empty() && a[0] == '-') {
      throw SweepError("unknown option '" + a + "' (see rdsweep --help)");
    } else {
      o.sequences.push_back(parse_sequence_item(a));
    }
  }
  if (o.help) return o;
  if (o.cfg.empty()) throw SweepError("no configuration given, expected -f CFG (e.g. -f cfg/encoder_baseline.cfg)");
  if (!runs_given) o.runs = default_sweep_runs();
  std::set<std::string> names;
  for (const auto& r : o.runs)
    if (!names.insert(r.name).second) throw SweepError("run '" + r.name + "' is defined twice");
  if (!jobs_given) o.jobs = default_sweep_jobs(o, default_jobs);
  if (o.anchor.empty()) o.anchor = o.runs.front().name;
  if (!names.count(o.anchor)) throw SweepError("--anchor '" + o.anchor + "' is not one of the runs");
  std::set<int> qset(o.qps.begin(), o.qps.end());
  if (qset.size() != o.qps.size()) throw SweepError("--qp lists a QP twice");
  std::sort(o.qps.begin(), o.qps.end());
  std::set<std::string> seqs;
  for (const auto& s : o.sequences)
    if (!seqs.insert(s.name).second) throw SweepError("sequence '" + s.name + "' is given twice");
  return o;
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

std::vector<SweepSequence> select_sequences(const SweepOptions& o) {
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
    for (auto& s : out) s.frames = std::min(s.frames, o.frames);
  return out;
}

}  // namespace gme
