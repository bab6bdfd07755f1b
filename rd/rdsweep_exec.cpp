// Process management for rdsweep: fork/exec of lencod, bounded parallelism, atomic completion of each point.
#include "rd/rdsweep_exec.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gme {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  }
  return last;
}

void remove_parts(const SweepPoint& p) {
  for (const std::string& f : {p.stream(), p.recon(), p.stats()}) ::unlink(part_name(f).c_str());
}

// Child side: never returns.
[[noreturn]] void exec_encoder(const SweepPoint& p) {
  const int log = ::open(p.log().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  const int null_in = ::open("/dev/null", O_RDONLY);
  if (log < 0 || ::chdir(p.dir.c_str()) != 0) _exit(126);
  if (null_in >= 0) ::dup2(null_in, 0);
  ::dup2(log, 1);
  ::dup2(log, 2);
  std::vector<char*> argv;
  for (const std::string& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  const std::string msg = "rdsweep: cannot run " + p.argv[0] + ": " + std::strerror(errno) + "\n";
  if (::write(2, msg.data(), msg.size()) < 0) {}
  _exit(127);
}

// Parent side, after the child ended: decides success and makes the point's files final.
SweepJobResult finish(const SweepPoint& p, int status, double wall) {
  SweepJobResult r;
  r.wall_s = wall;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                        : "killed by signal " + std::to_string(WTERMSIG(status));
    const std::string last = last_line_of(p.log());
    r.error = how + (last.empty() ? "" : ": " + last) + " (see " + p.log() + ")";
    remove_parts(p);
    return r;
  }
  std::string why;
  if (!read_stats_summary(part_name(p.stats()), &r.point, &why)) {
    r.error = "encoder exited 0 but its StatsFile is unusable: " + why;
    remove_parts(p);
    return r;
  }
  struct stat st;
  for (const std::string& f : {p.stream(), p.recon(), p.stats()}) {
    const std::string part = part_name(f);
    if (::stat(part.c_str(), &st) != 0) {
      if (f == p.recon()) continue;  // an encoder may legitimately skip the reconstruction
      r.error = part + " was not written";
      remove_parts(p);
      return r;
    }
    if (::rename(part.c_str(), f.c_str()) != 0) {
      r.error = part + ": cannot rename (" + std::strerror(errno) + ")";
      return r;
    }
  }
  const std::string tmp = p.command_file() + ".tmp";
  {
    std::ofstream out(tmp);
    out << command_text(p.argv) << "\n";
    if (!out) {
      r.error = tmp + ": cannot write";
      return r;
    }
  }
  if (::rename(tmp.c_str(), p.command_file().c_str()) != 0) {
    r.error = p.command_file() + ": cannot write";
    return r;
  }
  r.point.origin = p.stats();
  r.ok = true;
  return r;
}

}  // namespace

std::string format_duration(double s) {
  char b[32];
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  if (s < 60) std::snprintf(b, sizeof b, "%.1fs", s);
  else if (s < 3600) std::snprintf(b, sizeof b, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(b, sizeof b, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) / 60) % 60);
  return b;
}

std::vector<SweepJobResult> run_sweep_jobs(const std::vector<const SweepPoint*>& todo, int jobs,
                                           std::ostream& progress) {
  std::vector<SweepJobResult> results(todo.size());
  std::map<pid_t, std::pair<size_t, Clock::time_point>> running;
  const Clock::time_point start = Clock::now();
  size_t next = 0, done = 0;
  while (done < todo.size()) {
    while (next < todo.size() && static_cast<int>(running.size()) < jobs) {
      const SweepPoint& p = *todo[next];
      std::string err;
      if (!make_dirs(p.dir, &err)) {
        results[next].error = err;
        done++;
        progress << "[" << done << "/" << todo.size() << "] " << p.label() << ": FAILED " << err << std::endl;
        next++;
        continue;
      }
      remove_parts(p);
      const pid_t pid = ::fork();
      if (pid == 0) exec_encoder(p);
      if (pid < 0) {
        results[next].error = std::string("cannot start the encoder: ") + std::strerror(errno);
        done++;
        progress << "[" << done << "/" << todo.size() << "] " << p.label() << ": FAILED " << results[next].error
                 << std::endl;
        next++;
        continue;
      }
      running[pid] = {next, Clock::now()};
      next++;
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // no children left that we know of: nothing more to wait for
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const size_t idx = it->second.first;
    const double wall = seconds_since(it->second.second);
    running.erase(it);
    results[idx] = finish(*todo[idx], status, wall);
    done++;
    const double elapsed = seconds_since(start);
    const double eta = elapsed / static_cast<double>(done) * static_cast<double>(todo.size() - done);
    std::ostringstream line;
    line << "[" << done << "/" << todo.size() << "] " << todo[idx]->label() << ": ";
    if (results[idx].ok) {
      char b[96];
      std::snprintf(b, sizeof b, "%.2f kbit/s, %.3f dB Y, %s", results[idx].point.kbps, results[idx].point.psnr_y,
                    format_duration(wall).c_str());
      line << b;
    } else {
      line << "FAILED " << results[idx].error;
    }
    line << "  (elapsed " << format_duration(elapsed);
    if (done < todo.size()) line << ", ETA " << format_duration(eta);
    line << ")";
    progress << line.str() << std::endl;
  }
  return results;
}

}  // namespace gme
