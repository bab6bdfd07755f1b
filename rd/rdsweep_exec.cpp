// Process management for rdsweep: fork/exec of lencod, bounded parallelism, atomic completion of each point,
// stopping on signals.
#include "rd/rdsweep_exec.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "common/version.h"
#include "rd/rdsweep_gpus.h"

namespace gme {
namespace {

using Clock = std::chrono::steady_clock;

// A signal handler can only talk to the program through a static flag of this type.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }
extern "C" void on_child(int) {}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string last_line_of(const std::string& path) {
  std::istringstream in(read_all(path));
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

// Child side: never returns. `args`: the point's command, with the runner's GPUDevice when it chose one.
[[noreturn]] void exec_encoder(const SweepPoint& p, const std::vector<std::string>& args, pid_t parent,
                               const sigset_t& mask) {
  // End with rdsweep even when it is killed outright (SIGKILL cannot be caught to forward it).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) _exit(126);  // the parent died before prctl took effect
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  const int log = ::open(p.log().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  const int null_in = ::open("/dev/null", O_RDONLY);
  if (log < 0 || ::chdir(p.dir.c_str()) != 0) _exit(126);
  if (null_in >= 0) ::dup2(null_in, 0);
  ::dup2(log, 1);
  ::dup2(log, 2);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  const std::string msg = "rdsweep: cannot run " + args[0] + ": " + std::strerror(errno) + "\n";
  if (::write(2, msg.data(), msg.size()) < 0) {}
  _exit(127);
}

void record_failure(const SweepPoint& p, const std::string& error) {
  std::string ignored;
  write_file_atomically(p.failed_file(), error + "\n", &ignored);
}

// Parent side, after the child ended: decides success and makes the point's files final.
SweepJobResult finish(const SweepPoint& p, int status, double wall, const SweepJobContext& ctx,
                      const std::string& started, int cuda_device) {
  SweepJobResult r;
  r.wall_s = wall;
  r.warnings = warnings_in_log(read_all(p.log()));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                        : "killed by signal " + std::to_string(WTERMSIG(status));
    const std::string last = last_line_of(p.log());
    r.error = how + (last.empty() ? "" : ": " + last) + " (see " + p.log() + ")";
    remove_parts(p);
    if (stop_signal()) r.interrupted = true;
    else record_failure(p, r.error);
    return r;
  }
  auto fail = [&](const std::string& e) {
    r.error = e;
    remove_parts(p);
    record_failure(p, e);
    return r;
  };
  if (ctx.strict && !r.warnings.empty())
    return fail("lencod warned (--strict): " + r.warnings.front() +
                (r.warnings.size() > 1 ? " (+" + std::to_string(r.warnings.size() - 1) + " more)" : ""));
  std::string why;
  if (!read_stats_summary(part_name(p.stats()), &r.point, &why))
    return fail("encoder exited 0 but its StatsFile is unusable: " + why);
  PointRecord rec = ctx.base;
  std::string error;
  struct stat st;
  for (const std::string& f : {p.stream(), p.recon(), p.stats()}) {
    const std::string part = part_name(f);
    if (::stat(part.c_str(), &st) != 0) {
      if (f == p.recon()) {
        ::unlink(f.c_str());  // an older reconstruction must not sit beside a newer stream
        continue;             // --no-recon, or an encoder that skips the reconstruction
      }
      return fail(part + " was not written");
    }
    if (::rename(part.c_str(), f.c_str()) != 0) return fail(part + ": cannot rename (" + std::strerror(errno) + ")");
  }
  // Hashed under its final name through the sweep's cache: every later check of the point against point.json
  // finds the hash there instead of reading the stream again.
  if (!cached_file_sha256(p.stream(), ctx.prints->hash_cache, &rec.stream_sha256, &error,
                          ctx.prints->write_hash_cache))
    return fail(p.stream() + " was not written (" + error + ")");
  // For people only (nothing reads it back): the shell comment keeps it runnable with sh.
  if (!write_file_atomically(p.command_file(), "# rdsweep " + version_string() + "\n" + command_text(p.argv) + "\n",
                             &error))
    return fail(error);
  rec.command = command_text(p.argv);
  rec.encoder_sha256 = ctx.prints->encoder_sha256;
  rec.cfg_sha256 = ctx.prints->cfg_sha256;
  const auto in = ctx.prints->inputs.find(absolute_path(p.seq.file));
  if (in != ctx.prints->inputs.end()) rec.input_sha256 = in->second;
  rec.encoder_version = r.point.version;
  rec.started_utc = started;
  rec.wall_s = wall;
  rec.cuda_device = cuda_device;
  rec.warnings = r.warnings;
  ::unlink(p.failed_file().c_str());
  if (!write_point_record(p, rec, &error)) return fail(error);  // the marker last: complete only when all is there
  r.point.origin = p.stats();
  r.ok = true;
  return r;
}

}  // namespace

std::vector<std::string> warnings_in_log(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string low = line;
    for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t at = low.find("warning:");
    if (at == std::string::npos) continue;
    // Only at the start of the line, or after one "PROGRAM: " prefix (lencod: warning: ...).
    const size_t lead = low.find_first_not_of(" \t");
    const bool at_start = at == lead;
    const size_t colon = low.find(": ");
    const bool after_prefix = colon != std::string::npos && colon + 2 == at &&
                              low.substr(lead, colon - lead).find(' ') == std::string::npos;
    if (!at_start && !after_prefix) continue;
    std::string w = line.substr(at + 8);
    const size_t b = w.find_first_not_of(" \t");
    out.push_back(b == std::string::npos ? "" : w.substr(b));
  }
  return out;
}

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns and sees the flag
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // nohup: keep ignoring what the caller chose to ignore
    ::sigaction(sig, &sa, nullptr);
  }
}

int stop_signal() { return g_stop_signal; }

std::string format_duration(double s) {
  char b[32];
  if (!(s >= 0) || !std::isfinite(s) || s > 3.6e9) return "?";
  if (s < 60) std::snprintf(b, sizeof b, "%.1fs", s);
  else if (s < 3600) std::snprintf(b, sizeof b, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(b, sizeof b, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) / 60) % 60);
  return b;
}

std::vector<SweepJobResult> run_sweep_jobs(const std::vector<const SweepPoint*>& todo, const SweepJobContext& ctx,
                                           std::ostream& progress) {
  std::vector<SweepJobResult> results(todo.size());
  struct Running {
    size_t index;
    Clock::time_point start;
    std::string started_utc;
    int slot;         // the worker slot it holds (0 .. jobs - 1)
    int cuda_device;  // the GPUDevice given to it, -1 for none
  };
  std::map<pid_t, Running> running;
  std::vector<bool> slot_busy(static_cast<size_t>(std::max(1, ctx.jobs)), false);
  const Clock::time_point start = Clock::now();
  const pid_t self = ::getpid();
  // SIGCHLD and the stop signals stay blocked except inside sigsuspend, so none can slip in between the check of
  // the flag and the wait (the race a plain waitpid loop has).
  struct sigaction child {};
  child.sa_handler = on_child;
  sigemptyset(&child.sa_mask);
  struct sigaction old_child {};
  ::sigaction(SIGCHLD, &child, &old_child);
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
  ::sigprocmask(SIG_BLOCK, &block, &old_mask);

  size_t next = 0, done = 0;
  bool stopping = false;
  auto report = [&](size_t idx) {
    const SweepPoint& p = *todo[idx];
    const SweepJobResult& r = results[idx];
    const double elapsed = seconds_since(start);
    std::ostringstream line;
    line << "[" << done << "/" << todo.size() << "] " << p.label() << ": ";
    if (r.ok) {
      char b[96];
      std::snprintf(b, sizeof b, "%.2f kbit/s, %.3f dB Y, %s", r.point.kbps, r.point.psnr_y,
                    format_duration(r.wall_s).c_str());
      line << b;
      if (!r.warnings.empty())
        line << ", " << r.warnings.size() << " lencod warning" << (r.warnings.size() == 1 ? "" : "s");
    } else if (r.interrupted) {
      line << "interrupted";
    } else {
      line << "FAILED " << r.error;
    }
    line << "  (elapsed " << format_duration(elapsed);
    if (done < todo.size() && !stopping) {
      const double eta = elapsed / static_cast<double>(done) * static_cast<double>(todo.size() - done);
      line << ", ETA " << format_duration(eta);
    }
    line << ")";
    progress << line.str() << std::endl;
  };

  while (done < todo.size()) {
    if (stop_signal() && !stopping) {
      stopping = true;
      for (const auto& [pid, run] : running) ::kill(pid, SIGTERM);
    }
    if (stopping) {
      // Points never started are neither complete nor failed.
      for (; next < todo.size(); next++) results[next].interrupted = true;
      if (running.empty()) break;
    }
    while (!stopping && next < todo.size() && static_cast<int>(running.size()) < ctx.jobs) {
      const SweepPoint& p = *todo[next];
      std::string err;
      if (!make_dirs(p.dir, &err)) {
        results[next].error = err;
        done++;
        report(next++);
        continue;
      }
      // The old marker goes first: from here until the new one is written the point is not complete.
      ::unlink(p.record_file().c_str());
      ::unlink(p.failed_file().c_str());
      remove_parts(p);
      const int slot = static_cast<int>(std::find(slot_busy.begin(), slot_busy.end(), false) - slot_busy.begin());
      std::vector<std::string> args = p.argv;
      const int device = p.needs_gpu && !p.sets_gpu_device ? device_for_slot(slot, ctx.gpu_devices) : -1;
      if (device >= 0) {  // the settings' last word, so it wins over the cfg; lencod.log shows it
        args.push_back("-p");
        args.push_back("GPUDevice=" + std::to_string(device));
      }
      const std::string started = utc_now();
      const pid_t pid = ::fork();
      if (pid == 0) exec_encoder(p, args, self, old_mask);
      if (pid < 0) {
        results[next].error = std::string("cannot start the encoder: ") + std::strerror(errno);
        done++;
        report(next++);
        continue;
      }
      running[pid] = {next, Clock::now(), started, slot, device};
      slot_busy[static_cast<size_t>(slot)] = true;
      next++;
    }
    if (running.empty()) {
      if (next >= todo.size() || stopping) break;
      continue;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      ::sigsuspend(&old_mask);  // returns after a handler ran: a child ended or a stop signal came
      continue;
    }
    if (pid < 0) break;  // no children left that we know of
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const Running run = it->second;
    running.erase(it);
    slot_busy[static_cast<size_t>(run.slot)] = false;
    results[run.index] =
        finish(*todo[run.index], status, seconds_since(run.start), ctx, run.started_utc, run.cuda_device);
    done++;
    report(run.index);
  }
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGCHLD, &old_child, nullptr);
  return results;
}

}  // namespace gme
