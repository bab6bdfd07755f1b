// rdsweep: encodes sequences x runs x QPs with bin/lencod (locally in parallel, one point per --run-point process,
// or as Slurm job arrays), resumes, and writes results.csv, report.md (the seed paper's Tables 2 and 3) and
// RD-curve SVGs. The pieces live in rd/rdsweep_*.h.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/energy.h"
#include "common/version.h"
#include "rd/rdsweep_exec.h"
#include "rd/rdsweep_gpus.h"
#include "rd/rdsweep_options.h"
#include "rd/rdsweep_plan.h"
#include "rd/rdsweep_report.h"
#include "rd/rdsweep_slurm.h"
#include "rd/rdsweep_svg.h"

namespace gme {
namespace {

// This program, absolute (lencod is looked for beside it; --run-point commands name it).
std::string self_path(const char* argv0) {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : absolute_path(argv0);
}

std::string host_name() {
  char h[256] = {};
  ::gethostname(h, sizeof h - 1);
  return h;
}

// NVML's GPU names, with CUDA_VISIBLE_DEVICES when set, or why there is none.
std::string gpu_description() {
  std::string why;
  const std::vector<std::string> names = nvidia_gpu_names(&why);
  if (names.empty()) return "none (" + why + ")";
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) s += " (CUDA_VISIBLE_DEVICES=" + std::string(v) + ")";
  return s;
}

// How many CUDA devices the local runner spreads GPU points over (0: none), said once on the console when it does.
int spread_gpus(const std::vector<const SweepPoint*>& todo, int jobs) {
  bool spreadable = false;
  for (const SweepPoint* p : todo) spreadable = spreadable || (p->needs_gpu && !p->sets_gpu_device);
  if (!spreadable || jobs < 2) return 0;
  std::string why;
  const VisibleGpus g = visible_gpus(std::getenv("CUDA_VISIBLE_DEVICES"), nvidia_gpu_names(&why));
  if (g.count < 2) return 0;
  std::fprintf(stderr, "rdsweep: GPU points spread over %d CUDA devices (%s): worker slot k of -j %d gets "
               "GPUDevice k mod %d (-p GPUDevice=N or CUDA_VISIBLE_DEVICES=N keeps them on one)\n", g.count,
               g.how.c_str(), jobs, g.count);
  return g.count;
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "rdsweep: error: %s\n", msg.c_str());
  return 2;
}

std::string plural(size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

// "8 stale: encoder binary changed" style summary of why points are to be encoded.
std::string reasons_text(const std::map<std::string, int>& reasons) {
  std::string s;
  for (const auto& [why, n] : reasons) s += (s.empty() ? "" : "; ") + std::to_string(n) + " " + why;
  return s;
}

bool read_text(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return true;
}

void sleep_seconds(double s) {
  // In short steps, so a stop signal is seen within a second.
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(s);
  while (!stop_signal() && std::chrono::steady_clock::now() < until) {
    const double left = std::chrono::duration<double>(until - std::chrono::steady_clock::now()).count();
    const double step = std::min(0.2, std::max(0.0, left));
    ::usleep(static_cast<useconds_t>(step * 1e6));
  }
}

struct Sweep {
  SweepOptions o;
  std::vector<SweepSequence> seqs;
  std::vector<SweepPoint> plan;
  SweepFingerprints prints;
  std::string self;
};

int complete_count(const Sweep& s) {
  int n = 0;
  for (const SweepPoint& p : s.plan)
    if (point_status(p, s.prints).state == PointState::kComplete) n++;
  return n;
}

int interrupted(const Sweep& s) {
  std::fprintf(stderr, "rdsweep: interrupted: %d of %zu points complete; rerun the same command to resume\n",
               complete_count(s), s.plan.size());
  return 128 + stop_signal();
}

PointRecord base_record(const Sweep& s, bool alone) {
  PointRecord r;
  r.rdsweep_version = version_string();
  r.host = host_name();
  r.cpu = cpu_description();
  r.gpus = gpu_description();
  r.invocation = r.host + ":" + std::to_string(::getpid()) + ":" +
                 std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                    std::chrono::system_clock::now().time_since_epoch()).count());
  if (alone) {
    const char* job = std::getenv("SLURM_JOB_ID");
    const char* array = std::getenv("SLURM_ARRAY_JOB_ID");
    const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
    r.engine = job ? "slurm" : "run-point";
    if (job) r.slurm_job = array && task ? std::string(array) + "_" + task : std::string(job);
    r.timing = "alone";
    r.jobs = 1;
  } else {
    r.engine = "local";
    r.timing = s.o.timing == SweepTiming::kSerial ? "serial" : "parallel";
    r.jobs = s.o.jobs;
  }
  return r;
}

// --run-point: one point, in this process, on whatever host runs it.
int run_one_point(const Sweep& s) {
  const SweepPoint* p = find_point(s.plan, s.o.run_point);
  if (!p) {
    std::string ids;
    for (size_t i = 0; i < s.plan.size() && i < 4; i++) ids += (i ? ", " : "") + s.plan[i].id();
    return fail("--run-point '" + s.o.run_point + "' is not a point of this sweep (points are SEQ/RUN/qpNN, e.g. " +
                ids + ", or 0.." + std::to_string(s.plan.size() - 1) + ")");
  }
  const PointStatus st = point_status(*p, s.prints);
  if (st.state == PointState::kComplete && !s.o.force) {
    std::fprintf(stderr, "rdsweep: %s is already complete\n", p->id().c_str());
    return 0;
  }
  if (::access(s.o.lencod.c_str(), X_OK) != 0)
    return fail(s.o.lencod + ": encoder not found or not executable");
  SweepJobContext ctx;
  ctx.jobs = 1;
  ctx.strict = s.o.strict;
  ctx.prints = &s.prints;
  ctx.base = base_record(s, true);
  const auto res = run_sweep_jobs({p}, ctx, std::cerr);
  if (res[0].interrupted) return 128 + stop_signal();
  for (const std::string& w : res[0].warnings) std::fprintf(stderr, "rdsweep: warning: lencod: %s\n", w.c_str());
  return res[0].ok ? 0 : 1;
}

// --slurm: submit what is missing, then wait for it unless --no-wait. Returns -1 to go on collecting, else the
// exit status.
int run_on_slurm(const Sweep& s, const std::vector<const SweepPoint*>& todo_in) {
  const std::map<std::string, std::string> submitted = slurm_submissions(s.o);
  std::set<std::string> active;
  std::string err;
  if (!submitted.empty() && !slurm_active_tasks(&active, &err)) return fail(err);
  // Points whose task from an earlier submission is still queued or running are waited for, not submitted again.
  std::vector<const SweepPoint*> todo;
  std::set<std::string> waiting_jobs;
  for (const SweepPoint* p : todo_in) {
    const auto it = submitted.find(p->id());
    if (it != submitted.end() && active.count(it->second)) {
      waiting_jobs.insert(it->second.substr(0, it->second.find('_')));
      continue;
    }
    todo.push_back(p);
  }
  if (todo.size() < todo_in.size())
    std::fprintf(stderr, "rdsweep: %s still queued or running from an earlier submission: not submitted again\n",
                 plural(todo_in.size() - todo.size(), "point").c_str());
  std::vector<SlurmArray> arrays = plan_slurm_arrays(todo, s.o, s.self);
  for (SlurmArray& a : arrays) {
    if (!submit_slurm_array(&a, s.o, &err)) return fail(err);
    waiting_jobs.insert(a.job_id);
    std::fprintf(stderr, "rdsweep: submitted job %s: %s as array tasks (%s)\n", a.job_id.c_str(),
                 plural(a.points.size(), "point").c_str(),
                 a.gpu ? ("--gres=gpu:" + std::to_string(s.o.slurm.gpus_per_task)).c_str() : "no GPU");
  }
  if (s.o.slurm.no_wait) {
    std::string jobs;
    for (const std::string& j : waiting_jobs) jobs += (jobs.empty() ? "" : " ") + j;
    std::fprintf(stderr, "rdsweep: not waiting (--no-wait); jobs %s. Collect with the same command plus "
                 "--report-only (instead of --slurm), or rerun it to wait\n", jobs.c_str());
    return 0;
  }
  int last_complete = -1;
  for (;;) {
    if (stop_signal()) {
      std::string jobs;
      for (const std::string& j : waiting_jobs) jobs += " " + j;
      std::fprintf(stderr, "rdsweep: the Slurm jobs keep running (scancel%s stops them)\n", jobs.c_str());
      return interrupted(s);
    }
    std::set<std::string> now;
    if (!slurm_active_tasks(&now, &err)) return fail(err);
    int still = 0;
    for (const std::string& j : waiting_jobs) still += now.count(j);
    const int complete = complete_count(s);
    if (complete != last_complete || still == 0) {
      std::fprintf(stderr, "rdsweep: slurm: %d of %zu points complete%s\n", complete, s.plan.size(),
                   still ? ", jobs still queued or running" : "");
      last_complete = complete;
    }
    if (still == 0) return -1;
    sleep_seconds(s.o.slurm.poll_s);
  }
}

int run(int argc, char** argv) {
  Sweep s;
  s.self = self_path(argv[0]);
  try {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const std::string lencod = s.self.substr(0, s.self.rfind('/') + 1) + "lencod";
    s.o = parse_sweep_args(std::vector<std::string>(argv + 1, argv + argc), cores, lencod);
    if (s.o.help) {
      std::fputs(kSweepUsage, stdout);
      return 0;
    }
    if (s.o.version) {
      std::printf("rdsweep %s\n", version_string().c_str());
      return 0;
    }
    std::vector<std::string> warnings;
    s.seqs = select_sequences(s.o, &warnings);
    for (const std::string& w : warnings) std::fprintf(stderr, "rdsweep: warning: %s\n", w.c_str());
  } catch (const SweepError& e) {
    return fail(e.what());
  }
  const SweepOptions& o = s.o;
  if (s.seqs.empty()) return fail("no sequence to encode");
  std::string cfg_text;
  if (!read_text(o.cfg, &cfg_text)) return fail(o.cfg + ": cannot read the configuration file");
  for (const auto& q : s.seqs)
    if (::access(q.file.c_str(), R_OK) != 0) return fail("sequence " + q.name + ": cannot read " + q.file);
  s.plan = build_plan(o, s.seqs, cfg_text);
  install_stop_signals();

  std::string err;
  // Collecting creates no folder: --report-only with a typo'd --out must not leave one behind (hash cache included).
  struct stat out_st;
  const bool out_exists = ::stat(absolute_path(o.out_dir).c_str(), &out_st) == 0 && S_ISDIR(out_st.st_mode);
  if (!compute_fingerprints(o, s.seqs, &s.prints, &err, !o.dry_run && (out_exists || !o.report_only))) {
    if (!o.report_only) return fail(err + (err.find(absolute_path(o.lencod)) == 0
                                               ? " (build it with make, or give --lencod PATH)" : ""));
    // Collecting without the encoder: the points cannot be checked against it; say so and go on.
    std::fprintf(stderr, "rdsweep: warning: %s: points are not checked against the encoder binary\n", err.c_str());
    s.prints = SweepFingerprints();
    cached_file_sha256(absolute_path(o.cfg), "", &s.prints.cfg_sha256, &err);
    s.prints.hash_cache = absolute_path(o.out_dir) + "/.rdsweep/hash";
    s.prints.write_hash_cache = !o.dry_run && out_exists;
  }
  if (!o.run_point.empty()) return run_one_point(s);

  // What is to encode, and why.
  std::vector<const SweepPoint*> todo;
  std::map<std::string, int> reasons;
  int complete = 0, in_slice = 0;
  for (const SweepPoint* p : interleaved(s.plan)) {
    if (!in_shard(*p, s.plan, o.shard_index, o.shard_count)) continue;
    in_slice++;
    const PointStatus st = point_status(*p, s.prints);
    if (st.state == PointState::kComplete && !o.force) {
      complete++;
      continue;
    }
    if (st.files_changed) {
      // Named point by point: someone or something wrote over a finished point's files.
      if (o.report_only) std::fprintf(stderr, "rdsweep: error: %s: %s\n", p->id().c_str(), st.why.c_str());
      else std::fprintf(stderr, "rdsweep: %s is stale, encoding it again: %s\n", p->id().c_str(), st.why.c_str());
      reasons["stale: files do not match point.json"]++;
      todo.push_back(p);
      continue;
    }
    const char* kind = st.state == PointState::kStale ? "stale: " : "";
    reasons[st.state == PointState::kComplete ? "forced (--force)" : kind + st.why]++;
    todo.push_back(p);
  }
  const std::string what = o.shard_count ? "shard " + std::to_string(o.shard_index) + "/" +
                                               std::to_string(o.shard_count) + " of " + plural(s.plan.size(), "point") +
                                               ": " + plural(in_slice, "point")
                                         : plural(s.plan.size(), "point");
  std::fprintf(stderr, "rdsweep: %s (%zu sequences x %zu runs x %zu QPs): %d complete, %zu to %s%s%s%s\n",
               what.c_str(), s.seqs.size(), o.runs.size(), o.qps.size(), complete, todo.size(),
               o.report_only ? "collect as missing" : "encode", todo.empty() ? "" : " (",
               reasons_text(reasons).c_str(), todo.empty() ? "" : ")");
  if (!o.report_only && !o.slurm.enabled && !o.dry_run && !todo.empty())
    std::fprintf(stderr, "rdsweep: timing: %s\n", o.timing == SweepTiming::kSerial
                     ? "serial (one encode at a time, anchor and test of each QP back to back)"
                     : ("parallel, -j " + std::to_string(o.jobs)).c_str());

  if (o.dry_run) {
    if (o.slurm.enabled) {
      for (const SlurmArray& a : plan_slurm_arrays(todo, o, s.self)) {
        const std::string path = slurm_dir(o) + "/" + a.name + ".sh";
        std::printf("# ---- %s (submitted with: %s)\n%s", path.c_str(),
                    command_text(sbatch_command(o, path)).c_str(), a.script.c_str());
      }
      return 0;
    }
    std::printf("# %zu points to encode; each command below encodes one and marks it complete (any host that "
                "shares %s can run it)\n", todo.size(), absolute_path(o.out_dir).c_str());
    std::vector<std::string> base = {s.self};
    for (const std::string& a : plan_arguments(o)) base.push_back(a);
    for (const SweepPoint* p : todo) {
      std::vector<std::string> cmd = base;
      cmd.push_back("--run-point=" + p->id());
      std::printf("# %s: in %s: %s\n%s\n", p->label().c_str(), p->dir.c_str(), command_text(p->argv).c_str(),
                  command_text(cmd).c_str());
    }
    return 0;
  }
  if (o.report_only && !o.shard_count) {
    // Collecting writes over report.md and results.csv; with nothing to collect (a typo'd --out, options that do
    // not match the sweep) it would leave empty ones in a new folder or replace a good report with an empty one.
    if (!out_exists)
      return fail("--report-only: " + absolute_path(o.out_dir) + " is not a folder of a sweep (check --out); "
                  "nothing written");
    if (complete == 0) {
      std::string first;
      for (const SweepPoint* p : todo) {
        first = p->id() + ": " + point_status(*p, s.prints).why;
        break;
      }
      return fail("--report-only: none of the " + plural(s.plan.size(), "point") + " of this sweep is complete in " +
                  absolute_path(o.out_dir) + " (first: " + first + "); check --out and the sweep's options; "
                  "nothing written");
    }
  }
  if (!make_dirs(absolute_path(o.out_dir), &err)) return fail(err);

  std::vector<std::string> failures;
  std::set<std::string> failed_ids;
  if (o.slurm.enabled) {
    const int rc = run_on_slurm(s, todo);
    if (rc >= 0) return rc;
  } else if (!o.report_only && !todo.empty()) {
    if (::access(o.lencod.c_str(), X_OK) != 0)
      return fail(o.lencod + ": encoder not found or not executable (build it with make, or give --lencod PATH)");
    SweepJobContext ctx;
    ctx.jobs = o.jobs;
    ctx.strict = o.strict;
    ctx.prints = &s.prints;
    ctx.base = base_record(s, false);
    ctx.gpu_devices = spread_gpus(todo, o.jobs);
    const std::vector<SweepJobResult> jobs = run_sweep_jobs(todo, ctx, std::cerr);
    if (stop_signal()) return interrupted(s);
    for (size_t i = 0; i < todo.size(); i++)
      if (!jobs[i].ok) {
        failures.push_back(todo[i]->label() + ": " + jobs[i].error);
        failed_ids.insert(todo[i]->id());
      }
  }
  if (o.shard_count) {
    std::fprintf(stderr, "rdsweep: shard %d/%d done%s; collect every shard's points with the same command plus "
                 "--report-only (instead of --shard)\n", o.shard_index, o.shard_count,
                 failures.empty() ? "" : (", " + plural(failures.size(), "point") + " failed").c_str());
    return failures.empty() ? 0 : 1;
  }

  // ---- Collect: every complete point of the plan, whoever encoded it.
  ReportInput rep;
  rep.options = &o;
  rep.sequences = s.seqs;
  rep.date = utc_now();
  rep.collector = "rdsweep " + version_string() + " on " + host_name() + " (" + cpu_description() + "; GPU: " +
                  gpu_description() + ")";
  rep.prints = s.prints;
  rep.failures = failures;
  const std::map<std::string, std::string> submitted = slurm_submissions(o);
  for (const SweepPoint& p : s.plan) {
    const PointStatus st = point_status(p, s.prints);
    if (st.state == PointState::kComplete) {
      rep.results.push_back({p.seq, p.run, p.qp, st.result, st.record});
      continue;
    }
    std::string why = st.why;
    const auto sub = submitted.find(p.id());
    if (sub != submitted.end() && st.state != PointState::kFailed)
      why += "; Slurm task " + sub->second + ", its output: " + slurm_dir(o) + "/" + sub->second + ".out";
    if (!failed_ids.count(p.id())) rep.missing.push_back(p.id() + ": " + why);
  }

  const std::string out = absolute_path(o.out_dir);
  for (const auto& q : s.seqs) {
    PlotSpec plot;
    plot.title = q.name + " (" + std::to_string(q.width) + "x" + std::to_string(q.height) + ", " +
                 std::to_string(q.frames) + " frames)";
    plot.x_label = "bit rate (kbit/s)";
    plot.y_label = "PSNR YUV (4Y+U+V)/6 (dB)";
    plot.provenance = "rdsweep " + version_string() + ", " + rep.date;
    for (const auto& run : o.runs) {
      PlotSeries ser;
      ser.name = run.name;
      std::vector<std::pair<double, double>> xy;
      for (const auto& r : rep.results)
        if (r.seq.name == q.name && r.run == run.name) xy.push_back({r.point.kbps, r.point.psnr_yuv});
      std::sort(xy.begin(), xy.end());
      for (const auto& [x, y] : xy) {
        ser.x.push_back(x);
        ser.y.push_back(y);
      }
      plot.series.push_back(ser);
    }
    const std::string rel = q.name + "/rd.svg";
    if (!make_dirs(out + "/" + q.name, &err) || !write_file_atomically(out + "/" + rel, render_svg_plot(plot), &err))
      return fail(err);
    rep.plots.push_back(rel);
  }
  if (!write_file_atomically(out + "/results.csv", format_results_csv(rep.results), &err)) return fail(err);
  if (!write_file_atomically(out + "/report.md", format_report(rep), &err)) return fail(err);

  // Console summary: the Table 2 rows of each compared run, then what the reader must know about them.
  const BdMethod method = o.pchip ? BdMethod::kPchip : BdMethod::kPolynomial;
  int doubtful = 0;
  for (const auto& run : o.runs) {
    if (run.name == o.anchor) continue;
    const Table2 t = make_table2(rep.results, s.seqs, o.qps, o.anchor, run.name, method);
    std::printf("%s vs %s: %-24s %10s %12s %14s\n", run.name.c_str(), o.anchor.c_str(), "sequence", "Time (%)",
                "dPSNR (dB)", "dBitrate (%)");
    auto line = [&](const Table2Entry& e) {
      auto f = [](double v, const char* fmt) {
        char b[32];
        if (std::isnan(v)) return std::string("n/a");
        std::snprintf(b, sizeof b, fmt, v);
        return std::string(b);
      };
      std::string note = e.ok ? "" : "  (" + e.error + ")";
      if (e.dtime_mixed) note += "  (time: anchor and test timed in different invocations)";
      if (!e.warnings.empty()) note += "  (doubtful deltas, see report.md)";
      std::printf("  %-40s %10s %12s %14s%s\n", e.sequence.c_str(), f(e.dtime_percent, "%.2f").c_str(),
                  f(e.dpsnr_db, "%.3f").c_str(), f(e.dbitrate_percent, "%.2f").c_str(), note.c_str());
    };
    for (const auto& e : t.rows) {
      line(e);
      for (const auto& w : e.warnings) {
        std::fprintf(stderr, "rdsweep: %s: %s %s: %s\n", o.strict ? "error" : "warning", run.name.c_str(),
                     e.sequence.c_str(), w.c_str());
        doubtful++;
      }
    }
    if (t.average.ok) line(t.average);
    std::map<std::string, int> twin;
    int run_points = 0;
    for (const auto& r : rep.results) {
      if (r.run != run.name) continue;
      run_points++;
      if (r.point.integer_me_path.rfind("cpu twin", 0) == 0) twin[r.point.integer_me_path]++;
    }
    for (const auto& [path, n] : twin)
      std::printf("  note: run %s used the CPU twin, not a GPU, for integer ME on %d of its %d points (%s): its "
                  "times are CPU-twin times\n", run.name.c_str(), n, run_points, path.c_str());
  }
  for (const WarningCount& w : collect_warnings(rep.results))
    std::fprintf(stderr, "rdsweep: warning: lencod: %s (%s, e.g. %s)\n", w.text.c_str(),
                 plural(w.points.size(), "point").c_str(), w.points.front().c_str());
  std::printf("report: %s/report.md  results: %s/results.csv\n", out.c_str(), out.c_str());
  int rc = 0;
  if (!rep.failures.empty()) {
    std::fprintf(stderr, "rdsweep: error: %zu point%s failed, first: %s\n", rep.failures.size(),
                 rep.failures.size() == 1 ? "" : "s", rep.failures.front().c_str());
    rc = 1;
  }
  if (!rep.missing.empty()) {
    std::fprintf(stderr, "rdsweep: error: %s not complete (listed in report.md), first: %s\n",
                 plural(rep.missing.size(), "point").c_str(), rep.missing.front().c_str());
    rc = 1;
  }
  if (doubtful > 0 && o.strict) {
    std::fprintf(stderr, "rdsweep: error: %d doubtful Bjontegaard result%s (--strict)\n", doubtful,
                 doubtful == 1 ? "" : "s");
    rc = 1;
  }
  return rc;
}

}  // namespace
}  // namespace gme

int main(int argc, char** argv) { return gme::run(argc, argv); }
