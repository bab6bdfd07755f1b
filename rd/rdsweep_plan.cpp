// Sweep points: command lines, file names, resume check.
#include "rd/rdsweep_plan.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace gme {

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

std::vector<SweepPoint> build_plan(const SweepOptions& o, const std::vector<SweepSequence>& seqs) {
  std::vector<SweepPoint> plan;
  const std::string out = absolute_path(o.out_dir);
  for (const SweepSequence& s : seqs) {
    for (const SweepRun& r : o.runs) {
      for (int qp : o.qps) {
        SweepPoint p;
        p.seq = s;
        p.run = r.name;
        p.qp = qp;
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
        set("ReconFile=" + part_name(p.recon()));
        set("StatsFile=" + part_name(p.stats()));
        plan.push_back(p);
      }
    }
  }
  return plan;
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

bool point_is_complete(const SweepPoint& p, RdPoint* result, std::string* why) {
  struct stat st;
  if (::stat(p.stats().c_str(), &st) != 0) {
    *why = "not encoded yet";
    return false;
  }
  std::string reason;
  if (!read_stats_summary(p.stats(), result, &reason)) {
    *why = "incomplete: " + reason;
    return false;
  }
  std::ifstream in(p.command_file());
  std::string recorded;
  if (!in || !std::getline(in, recorded)) {
    *why = "no command.txt beside the stats file";
    return false;
  }
  if (recorded != command_text(p.argv)) {
    *why = "encoded with a different command (settings changed)";
    return false;
  }
  if (::stat(p.stream().c_str(), &st) != 0) {
    *why = "stream.264 is missing";
    return false;
  }
  return true;
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

}  // namespace gme
