#include "tests/conformance_util.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace gme::conf {

std::string bin_dir() {
  const char* b = std::getenv("GME_BIN");
  return b && *b ? b : "bin";
}

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' || c == '-' || c == '=' ||
          c == ',' || c == ':' || c == '+'))
      plain = false;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  const std::string full = "(" + cmd + ") </dev/null 2>&1";
  FILE* p = popen(full.c_str(), "r");
  if (!p) {
    r.output = "popen failed for: " + cmd;
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TempDir::TempDir(const std::string& tag) {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/gme_" + tag + "_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (!keep_ && !path_.empty()) run_command("rm -rf " + shell_quote(path_));
}

bool read_file(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::set<std::string> list_dir(const std::string& dir) {
  std::set<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.insert(n);
    }
    closedir(d);
  }
  return names;
}

std::vector<HashTableRow> read_hash_table(const std::string& path, size_t hash_columns) {
  // Tab-separated columns keep their empty fields (no parameters); words of the parameter column do not.
  auto split = [](const std::string& text, char sep) {
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep))
      if (!part.empty() || sep == '\t') out.push_back(part);
    return out;
  };
  std::vector<HashTableRow> rows;
  std::ifstream f(path);
  if (!f) {
    HashTableRow r;
    r.name = "missing_table";
    r.hashes.resize(hash_columns);
    rows.push_back(r);
    return rows;
  }
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cols = split(line, '\t');
    HashTableRow r;
    r.line = n;
    r.hashes.resize(hash_columns);
    if (cols.size() != 4 + hash_columns) {
      r.name = "malformed_line_" + std::to_string(n);
      rows.push_back(r);
      continue;
    }
    r.name = cols[0];
    r.clip = cols[1];
    r.frames = std::atoi(cols[2].c_str());
    r.params = split(cols[3], ' ');
    for (size_t i = 0; i < hash_columns; ++i) r.hashes[i] = cols[4 + i];
    rows.push_back(r);
  }
  return rows;
}

std::string absolute(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return p;
  return std::string(cwd) + "/" + p;
}

namespace {

std::mutex g_synth_mutex;

struct SynthCache {
  std::unique_ptr<TempDir> dir;
  std::map<std::string, Clip> clips;
};

SynthCache& synth_cache() {
  static SynthCache c;  // destroyed at exit: the directory goes with it
  return c;
}

}  // namespace

Clip synth_clip(int width, int height, int frames, const std::string& ext, const std::string& mode_args) {
  std::lock_guard<std::mutex> lock(g_synth_mutex);
  SynthCache& c = synth_cache();
  const std::string key = std::to_string(width) + "x" + std::to_string(height) + "_" + std::to_string(frames) +
                          "_" + mode_args + "." + ext;
  auto it = c.clips.find(key);
  if (it != c.clips.end()) return it->second;
  if (!c.dir) c.dir = std::make_unique<TempDir>("synth");
  std::string name;
  for (char ch : key) name += isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' ? ch : '_';
  Clip clip{c.dir->file(name), width, height, frames, ""};
  const std::string cmd = bin_dir() + "/synth -o " + shell_quote(clip.file) + " -s " + std::to_string(width) + "x" +
                          std::to_string(height) + " -n " + std::to_string(frames) +
                          (mode_args.empty() ? "" : " " + mode_args);
  const CommandResult r = run_command(cmd);
  if (r.status != 0) {
    ADD_FAILURE() << "bin/synth failed (status " << r.status << "): " << cmd << "\n" << r.output;
    return Clip{};
  }
  clip.made_by = cmd;
  c.clips[key] = clip;
  return clip;
}

// "synth:WxH" or "synth:WxH:KIND" (y4m, gz, noise, shift). Parsed by hand: gcc 12's <regex> trips
// -Wmaybe-uninitialized (a false positive inside std::function) in the -Werror sanitizer builds.
static bool parse_synth_spec(const std::string& spec, int* w, int* h, std::string* kind) {
  if (spec.rfind("synth:", 0) != 0) return false;
  const std::string rest = spec.substr(6);
  const size_t x = rest.find('x'), colon = rest.find(':');
  if (x == std::string::npos || (colon != std::string::npos && colon < x)) return false;
  const std::string ws = rest.substr(0, x);
  const std::string hs = rest.substr(x + 1, colon == std::string::npos ? colon : colon - x - 1);
  auto digits = [](const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; };
  if (!digits(ws) || !digits(hs)) return false;
  *kind = colon == std::string::npos ? "" : rest.substr(colon + 1);
  if (!kind->empty() && *kind != "y4m" && *kind != "gz" && *kind != "noise" && *kind != "shift") return false;
  *w = std::stoi(ws);
  *h = std::stoi(hs);
  return true;
}

Clip clip_from_spec(const std::string& spec, int frames) {
  int w = 0, h = 0;
  std::string kind;
  if (parse_synth_spec(spec, &w, &h, &kind)) {
    const std::string ext = kind == "y4m" ? "y4m" : (kind == "gz" ? "yuv.gz" : "yuv");
    const std::string mode = kind == "noise" ? "--mode noise" : (kind == "shift" ? "--mode shift --shift 7,-3" : "");
    return synth_clip(w, h, frames > 8 ? frames : 8, ext, mode);
  }
  if (spec.rfind("real:", 0) == 0) {
    Clip clip;
    if (manifest_clip(spec.substr(5), &clip)) return clip;
    return Clip{};
  }
  ADD_FAILURE() << "bad clip spec " << spec;
  return Clip{};
}

bool manifest_clip(const std::string& name, Clip* out) {
  std::ifstream f("sequences/manifest.csv");
  std::string line;
  while (std::getline(f, line)) {
    std::stringstream ss(line);
    std::string n, file, w, h, frames;
    if (!std::getline(ss, n, ',') || n != name) continue;
    std::getline(ss, file, ',');
    std::getline(ss, w, ',');
    std::getline(ss, h, ',');
    std::getline(ss, frames, ',');
    if (!file_exists(file)) return false;
    *out = Clip{file, std::atoi(w.c_str()), std::atoi(h.c_str()), std::atoi(frames.c_str()), ""};
    return true;
  }
  return false;
}

std::string first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int width, int height) {
  const size_t luma = static_cast<size_t>(width) * height;
  const size_t chroma = static_cast<size_t>(width / 2) * (height / 2);
  const size_t frame = luma + 2 * chroma;
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;
    const size_t f = i / frame, o = i % frame;
    std::ostringstream m;
    if (o < luma) {
      m << "frame " << f << " plane Y (" << o % width << ", " << o / width << ")";
    } else {
      const size_t c = (o - luma) / chroma, oc = (o - luma) % chroma;
      m << "frame " << f << " plane " << (c ? "Cr" : "Cb") << " (" << oc % (width / 2) << ", " << oc / (width / 2)
        << ")";
    }
    m << ": " << int(a[i]) << " vs " << int(b[i]);
    return m.str();
  }
  if (a.size() != b.size()) {
    std::ostringstream m;
    m << "sizes differ: " << a.size() << " vs " << b.size() << " bytes (" << a.size() / double(frame) << " vs "
      << b.size() / double(frame) << " frames)";
    return m.str();
  }
  return "";
}

std::vector<NalUnit> split_annexb(const std::vector<uint8_t>& s) {
  std::vector<NalUnit> nals;
  std::vector<size_t> starts;  // first byte after each start code
  for (size_t i = 0; i + 2 < s.size(); ++i)
    if (s[i] == 0 && s[i + 1] == 0 && s[i + 2] == 1) {
      starts.push_back(i + 3);
      i += 2;
    }
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t end = k + 1 < starts.size() ? starts[k + 1] - 3 : s.size();
    while (end > starts[k] && s[end - 1] == 0) --end;  // zero_byte of the next start code / trailing zeros
    if (end > starts[k]) nals.push_back(NalUnit{s[starts[k]] & 0x1f, end - starts[k]});
  }
  return nals;
}

::testing::AssertionResult encode_and_verify(const Clip& clip, int frames, const std::vector<std::string>& params,
                                             EncodeOutput* out, bool want_stats, bool decode) {
  if (clip.file.empty()) return ::testing::AssertionFailure() << "no input clip";
  TempDir dir("conf");
  const std::string stream = dir.file("s.264"), recon = dir.file("rec.yuv"), dec = dir.file("dec.yuv"),
                    stats = dir.file("stats.jsonl");
  // GME_CONF_CFG chooses the default configuration (-d); set it empty to pass none (built-in JM defaults).
  const char* cfg_env = std::getenv("GME_CONF_CFG");
  const std::string cfg = cfg_env ? cfg_env : "cfg/encoder_baseline.cfg";
  std::string cmd = bin_dir() + "/lencod" + (cfg.empty() ? "" : " -d " + shell_quote(cfg));
  auto p = [&cmd](const std::string& kv) { cmd += " -p " + shell_quote(kv); };
  p("InputFile=" + clip.file);
  p("SourceWidth=" + std::to_string(clip.width));
  p("SourceHeight=" + std::to_string(clip.height));
  p("FramesToBeEncoded=" + std::to_string(frames));
  p("OutputFile=" + stream);
  p("ReconFile=" + recon);
  if (want_stats) p("StatsFile=" + stats);
  for (const std::string& kv : params) p(kv);
  const std::string ffmpeg = "ffmpeg -nostdin -y -v error -i " + shell_quote(stream) +
                             " -f rawvideo -pix_fmt yuv420p " + shell_quote(dec);
  if (out) {
    out->lencod_cmd = cmd;
    out->ffmpeg_cmd = ffmpeg;
  }
  auto fail = [&](const std::string& what, const std::string& output) {
    dir.keep();
    return ::testing::AssertionFailure() << what << (clip.made_by.empty() ? "" : "\n  input:  " + clip.made_by)
                                         << "\n  encode: " << cmd << "\n  decode: " << ffmpeg
                                         << "\n  (files kept in " << dir.path() << ")\n"
                                         << (output.size() > 3000 ? output.substr(output.size() - 3000) : output);
  };

  const CommandResult enc = run_command(cmd);
  if (out) out->console = enc.output;
  if (enc.status != 0) return fail("lencod exited with status " + std::to_string(enc.status), enc.output);
  std::vector<uint8_t> rec_bytes, dec_bytes;
  if (!read_file(recon, &rec_bytes)) return fail("no ReconFile written", enc.output);
  const size_t frame_bytes = static_cast<size_t>(clip.width) * clip.height * 3 / 2;
  if (rec_bytes.size() != frame_bytes * frames)
    return fail("ReconFile holds " + std::to_string(rec_bytes.size()) + " bytes, expected " +
                    std::to_string(frames) + " pictures of " + std::to_string(frame_bytes),
                enc.output);
  if (out && !read_file(stream, &out->stream)) return fail("no OutputFile written", enc.output);
  if (out) out->recon = rec_bytes;
  if (want_stats && out) {
    std::vector<uint8_t> st;
    if (read_file(stats, &st)) out->stats.assign(st.begin(), st.end());
  }
  if (!decode) return ::testing::AssertionSuccess();
  const CommandResult d = run_command(ffmpeg);
  if (d.status != 0) return fail("ffmpeg exited with status " + std::to_string(d.status), d.output);
  if (!d.output.empty()) return fail("ffmpeg reported errors while decoding", d.output);
  if (!read_file(dec, &dec_bytes)) return fail("ffmpeg wrote no output", d.output);
  const std::string diff = first_difference(dec_bytes, rec_bytes, clip.width, clip.height);
  if (!diff.empty()) return fail("decoded (first) != ReconFile (second): " + diff, enc.output);
  return ::testing::AssertionSuccess();
}

}  // namespace gme::conf
