// Sweep points: command lines, file names, fingerprints, the completion marker and the resume check.
#include "rd/rdsweep_plan.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/sha256.h"
#include "common/text_fields.h"
#include "rd/rd_json.h"

namespace gme {
namespace {

std::string host_name() {
  char h[256] = {};
  ::gethostname(h, sizeof h - 1);
  return h;
}

// Whether `text` names `key`: lencod, like JM, compares keys without case (gpuintegerme=1 turns the GPU on).
bool names_key(const std::string& text, const std::string& key) {
  return strcasecmp(trim_space(text).c_str(), key.c_str()) == 0;
}

// The value of the last "-p KEY=V" on a command line, else of the last "KEY = V" in the cfg text; "" for neither.
std::string setting_value(const std::vector<std::string>& argv, const std::string& cfg_text, const std::string& key) {
  std::string value;
  for (size_t i = 0; i + 1 < argv.size(); i++) {
    if (argv[i] != "-p") continue;
    const std::string& kv = argv[i + 1];
    const size_t eq = kv.find('=');
    if (eq != std::string::npos && names_key(kv.substr(0, eq), key)) value = trim_space(kv.substr(eq + 1));
  }
  if (value.empty()) {
    std::istringstream in(cfg_text);
    for (std::string line; std::getline(in, line);) {
      line = line.substr(0, line.find('#'));
      const size_t eq = line.find('=');
      if (eq != std::string::npos && names_key(line.substr(0, eq), key)) value = trim_space(line.substr(eq + 1));
    }
  }
  return value;
}

bool runs_gpu_search(const std::vector<std::string>& argv, const std::string& cfg_text) {
  double v = 0;
  return field_to_double(setting_value(argv, cfg_text, "GPUIntegerME"), &v) && v != 0;
}

// Whether the settings pick the CUDA device themselves: any -p GPUDevice, or a GPUDevice in the cfg other than 0 (the
// default, which the shipped cfg files list with every other key, so it says nothing about this host's cards).
bool chooses_gpu_device(const std::vector<std::string>& argv, const std::string& cfg_text) {
  if (!setting_value(argv, "", "GPUDevice").empty()) return true;
  double v = 0;
  return field_to_double(setting_value({}, cfg_text, "GPUDevice"), &v) && v != 0;
}

// The -p keys of a point's command that its StatsFile's summary records in "config" (lencod/report.cpp), so that a
// StatsFile of another point or encode copied over stats.jsonl is seen.
constexpr std::pair<const char*, const char*> kRecordedSettings[] = {
    {"InputFile", "input"},         {"SourceWidth", "width"},           {"SourceHeight", "height"},
    {"FramesToBeEncoded", "frames"}, {"StartFrame", "start_frame"},     {"FrameSkip", "frame_skip"},
    {"FrameRate", "source_frame_rate"}, {"QPISlice", "qp_i"},           {"QPPSlice", "qp_p"},
    {"IntraPeriod", "intra_period"}, {"IDRPeriod", "idr_period"},       {"SearchRange", "search_range"},
    {"NumberReferenceFrames", "num_ref_frames"}, {"RDOptimization", "rd_optimization"},
    {"SliceMode", "slice_mode"},     {"GPUIntegerME", "gpu_integer_me"}, {"GPUTopK", "gpu_top_k"},
    {"GPUSearchCenter", "gpu_search_center"}, {"GPUSubpelDistortion", "gpu_subpel_distortion"},
    {"GPUSubpelRanks", "gpu_subpel_ranks"}, {"Threads", "threads"}};

bool same_setting(const std::string& a, const std::string& b) {
  double x = 0, y = 0;
  if (field_to_double(a, &x) && field_to_double(b, &y)) return std::fabs(x - y) <= 1e-6 * std::max(1.0, std::fabs(x));
  return a == b;
}

// What in the point's files disagrees with its point.json (whose command equals the point's): each item names the
// file, the field, and both values. Empty when they agree; *error when the stream cannot be read.
std::vector<std::string> file_mismatches(const SweepPoint& p, const PointStatus& st, const SweepFingerprints& prints,
                                         std::string* error) {
  std::vector<std::string> out;
  const std::string qpp = setting_value(p.argv, "", "QPPSlice");
  if (st.result.qp >= 0 && !qpp.empty() && !same_setting(std::to_string(st.result.qp), qpp))
    out.push_back("stats.jsonl summary qp is " + std::to_string(st.result.qp) + ", point.json's command sets QPPSlice=" +
                  qpp);
  for (const auto& [key, field] : kRecordedSettings) {
    const std::string want = setting_value(p.argv, "", key);
    const auto got = st.result.config.find(field);
    if (want.empty() || got == st.result.config.end() || same_setting(got->second, want)) continue;
    out.push_back("stats.jsonl config " + std::string(field) + " is " + got->second + ", point.json's command sets " +
                  key + "=" + want);
  }
  std::string hex;
  if (!cached_file_sha256(p.stream(), prints.hash_cache, &hex, error, prints.write_hash_cache)) return out;
  if (st.record.stream_sha256.empty())
    out.push_back("point.json records no stream SHA-256 to check stream.264 against");
  else if (hex != st.record.stream_sha256)
    out.push_back("stream.264's SHA-256 is " + hex.substr(0, 16) + "..., point.json records " +
                  st.record.stream_sha256.substr(0, 16) + "...");
  return out;
}

}  // namespace

std::string absolute_path(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char buf[4096];
  if (!::getcwd(buf, sizeof buf)) return p;
  std::string cwd = buf;
  std::string rel = p;
  while (rel.rfind("./", 0) == 0) rel = rel.substr(2);
  return rel.empty() || rel == "." ? cwd : cwd + "/" + rel;
}

std::string part_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + ".part";
  return path.substr(0, dot) + ".part" + path.substr(dot);
}

std::vector<SweepPoint> build_plan(const SweepOptions& o, const std::vector<SweepSequence>& seqs,
                                   const std::string& cfg_text) {
  std::vector<SweepPoint> plan;
  const std::string out = absolute_path(o.out_dir);
  for (const SweepSequence& s : seqs) {
    for (const SweepRun& r : o.runs) {
      for (int qp : o.qps) {
        SweepPoint p;
        p.seq = s;
        p.run = r.name;
        p.qp = qp;
        p.index = static_cast<int>(plan.size());
        p.dir = out + "/" + s.name + "/" + r.name + "/qp" + std::to_string(qp);
        auto set = [&](const std::string& kv) {
          p.argv.push_back("-p");
          p.argv.push_back(kv);
        };
        p.argv.push_back(absolute_path(o.lencod));
        p.argv.push_back("-f");
        p.argv.push_back(absolute_path(o.cfg));
        std::ostringstream fps;
        fps << s.fps;
        set("InputFile=" + absolute_path(s.file));
        set("SourceWidth=" + std::to_string(s.width));
        set("SourceHeight=" + std::to_string(s.height));
        set("FramesToBeEncoded=" + std::to_string(s.frames));
        set("FrameRate=" + fps.str());
        for (const std::string& kv : o.overrides) set(kv);
        for (const auto& kv : r.params) set(kv.first + "=" + kv.second);
        set("QPISlice=" + std::to_string(qp));
        set("QPPSlice=" + std::to_string(qp));
        set("OutputFile=" + part_name(p.stream()));
        // JM's quoted empty value: no reconstruction at all (rather than one written and deleted).
        set(o.no_recon ? "ReconFile=\"\"" : "ReconFile=" + part_name(p.recon()));
        set("StatsFile=" + part_name(p.stats()));
        p.needs_gpu = runs_gpu_search(p.argv, cfg_text);
        p.sets_gpu_device = chooses_gpu_device(p.argv, cfg_text);
        plan.push_back(p);
      }
    }
  }
  return plan;
}

const SweepPoint* find_point(const std::vector<SweepPoint>& plan, const std::string& id) {
  for (const SweepPoint& p : plan)
    if (p.id() == id) return &p;
  int index = -1;
  if (field_to_int(id, &index) && index >= 0 && index < static_cast<int>(plan.size())) return &plan[index];
  return nullptr;
}

std::vector<const SweepPoint*> interleaved(const std::vector<SweepPoint>& plan) {
  std::vector<const SweepPoint*> out;
  for (const SweepPoint& p : plan) out.push_back(&p);
  // Plan order is sequence, run, QP; stable sort by (sequence position, QP) puts the runs of a QP side by side.
  std::map<std::string, int> seq_pos;
  for (const SweepPoint& p : plan) seq_pos.emplace(p.seq.name, static_cast<int>(seq_pos.size()));
  std::stable_sort(out.begin(), out.end(), [&](const SweepPoint* a, const SweepPoint* b) {
    const int sa = seq_pos[a->seq.name], sb = seq_pos[b->seq.name];
    return sa != sb ? sa < sb : a->qp < b->qp;
  });
  return out;
}

bool in_shard(const SweepPoint& p, const std::vector<SweepPoint>& plan, int index, int count) {
  if (count <= 0) return true;
  // Groups numbered in order of first appearance in the plan.
  std::map<std::pair<std::string, int>, int> group;
  for (const SweepPoint& q : plan) group.emplace(std::make_pair(q.seq.name, q.qp), static_cast<int>(group.size()));
  return group[{p.seq.name, p.qp}] % count == index - 1;
}

std::string shell_quote(const std::string& a) {
  const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                       "0123456789_-./=:,+@%") == std::string::npos;
  if (plain) return a;
  std::string out = "'";
  for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

bool cached_file_sha256(const std::string& path, const std::string& cache_dir, std::string* hex, std::string* error,
                        bool write_cache) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  // Identity of this version of the file: any write changes the size, mtime or ctime (ctime cannot be set by
  // hand), a replacement changes the inode.
  char id[256];
  std::snprintf(id, sizeof id, "%llu %llu %lld %lld.%09ld %lld.%09ld", static_cast<unsigned long long>(st.st_dev),
                static_cast<unsigned long long>(st.st_ino), static_cast<long long>(st.st_size),
                static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec,
                static_cast<long long>(st.st_ctim.tv_sec), st.st_ctim.tv_nsec);
  const std::string key = sha256_hex(path.data(), path.size()) + "-" + sha256_hex(id, std::strlen(id));
  const std::string entry = cache_dir.empty() ? "" : cache_dir + "/" + key;
  if (!entry.empty()) {
    std::ifstream in(entry);
    std::string cached;
    if (in >> cached && cached.size() == 64 && cached.find_first_not_of("0123456789abcdef") == std::string::npos) {
      *hex = cached;
      return true;
    }
  }
  std::string why;
  if (!sha256_file(path, hex, &why)) {
    *error = path + ": cannot read (" + why + ")";
    return false;
  }
  std::string ignored;
  if (!entry.empty() && write_cache && make_dirs(cache_dir, &ignored))
    write_file_atomically(entry, *hex + "\n", &ignored);
  return true;
}

bool compute_fingerprints(const SweepOptions& o, const std::vector<SweepSequence>& seqs, SweepFingerprints* f,
                          std::string* error, bool write_cache) {
  const std::string cache = absolute_path(o.out_dir) + "/.rdsweep/hash";
  f->hash_cache = cache;
  f->write_hash_cache = write_cache;
  if (!cached_file_sha256(absolute_path(o.lencod), cache, &f->encoder_sha256, error, write_cache)) return false;
  if (!cached_file_sha256(absolute_path(o.cfg), cache, &f->cfg_sha256, error, write_cache)) return false;
  for (const SweepSequence& s : seqs) {
    const std::string path = absolute_path(s.file);
    if (f->inputs.count(path)) continue;
    if (!cached_file_sha256(path, cache, &f->inputs[path], error, write_cache)) return false;
  }
  return true;
}

bool write_point_record(const SweepPoint& p, const PointRecord& r, std::string* error) {
  std::string warnings = "[";
  for (size_t i = 0; i < r.warnings.size(); i++) warnings += (i ? "," : "") + json_string(r.warnings[i]);
  warnings += "]";
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.3f", r.wall_s);
  const std::string text =
      "{\"point\":" + json_string(p.id()) + ",\n \"command\":" + json_string(r.command) +
      ",\n \"encoder_sha256\":" + json_string(r.encoder_sha256) + ",\n \"cfg_sha256\":" + json_string(r.cfg_sha256) +
      ",\n \"input_sha256\":" + json_string(r.input_sha256) + ",\n \"stream_sha256\":" + json_string(r.stream_sha256) +
      ",\n \"rdsweep_version\":" + json_string(r.rdsweep_version) +
      ",\n \"encoder_version\":" + json_string(r.encoder_version) + ",\n \"host\":" + json_string(r.host) +
      ",\n \"cpu\":" + json_string(r.cpu) + ",\n \"gpus\":" + json_string(r.gpus) +
      ",\n \"engine\":" + json_string(r.engine) + ",\n \"invocation\":" + json_string(r.invocation) +
      ",\n \"timing\":" + json_string(r.timing) + ",\n \"jobs\":" + std::to_string(r.jobs) +
      ",\n \"cuda_device\":" + std::to_string(r.cuda_device) +
      ",\n \"slurm_job\":" + json_string(r.slurm_job) + ",\n \"started\":" + json_string(r.started_utc) +
      ",\n \"wall_s\":" + wall + ",\n \"warnings\":" + warnings + "}\n";
  return write_file_atomically(p.record_file(), text, error);
}

bool read_point_record(const std::string& path, PointRecord* r, std::string* why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str(), err;
  for (char& c : text)
    if (c == '\n') c = ' ';
  JsonValue v;
  if (!parse_json(text, &v, &err) || v.kind != JsonValue::Kind::kObject) {
    *why = "not a JSON object (" + err + ")";
    return false;
  }
  *r = PointRecord();
  r->command = v.string_or("command", "");
  r->encoder_sha256 = v.string_or("encoder_sha256", "");
  r->cfg_sha256 = v.string_or("cfg_sha256", "");
  r->input_sha256 = v.string_or("input_sha256", "");
  r->stream_sha256 = v.string_or("stream_sha256", "");
  r->rdsweep_version = v.string_or("rdsweep_version", "");
  r->encoder_version = v.string_or("encoder_version", "");
  r->host = v.string_or("host", "");
  r->cpu = v.string_or("cpu", "");
  r->gpus = v.string_or("gpus", "");
  r->engine = v.string_or("engine", "");
  r->invocation = v.string_or("invocation", "");
  r->timing = v.string_or("timing", "");
  const double jobs = v.number_or("jobs", 1);
  r->jobs = std::isfinite(jobs) && jobs >= 1 && jobs <= 1e6 ? static_cast<int>(jobs) : 1;
  const double device = v.number_or("cuda_device", -1);
  r->cuda_device = std::isfinite(device) && device >= 0 && device <= 63 ? static_cast<int>(device) : -1;
  r->slurm_job = v.string_or("slurm_job", "");
  r->started_utc = v.string_or("started", "");
  r->wall_s = v.number_or("wall_s", 0);
  if (const JsonValue* w = v.find("warnings"))
    for (const JsonValue& x : w->array)
      if (x.kind == JsonValue::Kind::kString) r->warnings.push_back(x.string);
  if (r->command.empty()) {
    *why = "no command in it";
    return false;
  }
  return true;
}

PointStatus point_status(const SweepPoint& p, const SweepFingerprints& prints) {
  PointStatus st;
  struct stat sb;
  const bool have_record = ::stat(p.record_file().c_str(), &sb) == 0;
  if (!have_record) {
    std::ifstream failed(p.failed_file());
    std::string line;
    if (failed && std::getline(failed, line)) {
      st.state = PointState::kFailed;
      st.why = "failed before: " + line;
    } else if (::stat(p.stats().c_str(), &sb) == 0 || ::stat(part_name(p.stats()).c_str(), &sb) == 0) {
      st.state = PointState::kIncomplete;
      st.why = "incomplete (no point.json: interrupted, or encoded by an older rdsweep)";
    } else {
      st.state = PointState::kMissing;
      st.why = "not encoded yet";
    }
    return st;
  }
  std::string why;
  if (!read_point_record(p.record_file(), &st.record, &why)) {
    st.state = PointState::kIncomplete;
    st.why = "point.json unreadable (" + why + ")";
    return st;
  }
  // Stale: the result was made by something else than what the sweep would run now.
  std::vector<std::string> changed;
  if (st.record.command != command_text(p.argv)) changed.push_back("settings changed");
  if (!prints.encoder_sha256.empty() && st.record.encoder_sha256 != prints.encoder_sha256)
    changed.push_back("encoder binary changed");
  if (!prints.cfg_sha256.empty() && st.record.cfg_sha256 != prints.cfg_sha256)
    changed.push_back("configuration file changed");
  const auto in = prints.inputs.find(absolute_path(p.seq.file));
  if (in != prints.inputs.end() && st.record.input_sha256 != in->second) changed.push_back("input file changed");
  if (!changed.empty()) {
    st.state = PointState::kStale;
    for (size_t i = 0; i < changed.size(); i++) st.why += (i ? ", " : "") + changed[i];
    return st;
  }
  if (!read_stats_summary(p.stats(), &st.result, &why)) {
    st.state = PointState::kIncomplete;
    st.why = "incomplete: " + why;
    return st;
  }
  if (::stat(p.stream().c_str(), &sb) != 0) {
    st.state = PointState::kIncomplete;
    st.why = "stream.264 is missing";
    return st;
  }
  // The files themselves, checked against point.json: a complete point's files can still be written over by hand
  // or by a script, and a copied StatsFile would report one QP at another QP's rate without this.
  std::string error;
  const std::vector<std::string> mismatches = file_mismatches(p, st, prints, &error);
  if (!error.empty()) {
    st.state = PointState::kIncomplete;
    st.why = "stream.264 unreadable (" + error + ")";
    return st;
  }
  if (!mismatches.empty()) {
    st.state = PointState::kStale;
    st.files_changed = true;
    st.why = "files do not match point.json: ";
    for (size_t i = 0; i < mismatches.size(); i++) st.why += (i ? "; " : "") + mismatches[i];
    return st;
  }
  st.state = PointState::kComplete;
  return st;
}

bool make_dirs(const std::string& path, std::string* error) {
  std::string cur;
  std::stringstream ss(path);
  if (!path.empty() && path[0] == '/') cur = "/";
  for (std::string part; std::getline(ss, part, '/');) {
    if (part.empty()) continue;
    cur += part + "/";
    if (::mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST) {
      *error = cur + ": cannot create folder (" + std::strerror(errno) + ")";
      return false;
    }
  }
  return true;
}

bool write_file_atomically(const std::string& path, const std::string& text, std::string* error) {
  // Host and process in the temporary name: hosts sharing the folder never write the same temporary file.
  const std::string tmp = path + ".tmp-" + host_name() + "-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) {
    *error = tmp + ": cannot create (" + std::strerror(errno) + ")";
    return false;
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = tmp + ": cannot write (" + std::strerror(errno) + ")";
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) {
    *error = tmp + ": cannot write (" + std::strerror(errno) + ")";
    ::close(fd);
    ::unlink(tmp.c_str());
    return false;
  }
  if (::close(fd) != 0) {
    *error = tmp + ": cannot write (" + std::strerror(errno) + ")";
    ::unlink(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = path + ": cannot rename the temporary file into place (" + std::strerror(errno) + ")";
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return b;
}

}  // namespace gme
