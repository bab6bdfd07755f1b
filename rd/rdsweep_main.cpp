// rdsweep: encodes sequences x runs x QPs with bin/lencod in parallel, resumes, and writes results.csv, report.md
// (the seed paper's Table 2) and RD-curve SVGs. The pieces live in rd/rdsweep_*.h.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "rd/rdsweep_exec.h"
#include "rd/rdsweep_options.h"
#include "rd/rdsweep_plan.h"
#include "rd/rdsweep_report.h"
#include "rd/rdsweep_svg.h"

namespace {

// lencod is looked for beside this program (bin/), whatever the current directory.
std::string default_lencod(const char* argv0) {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string self = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string(argv0);
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "lencod" : self.substr(0, slash) + "/lencod";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return b;
}

std::string machine() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores";
}

bool readable(const std::string& p) { return ::access(p.c_str(), R_OK) == 0; }

int fail(const std::string& msg) {
  std::fprintf(stderr, "rdsweep: error: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gme;
  SweepOptions o;
  std::vector<SweepSequence> seqs;
  try {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    o = parse_sweep_args(std::vector<std::string>(argv + 1, argv + argc), cores, default_lencod(argv[0]));
    if (o.help) {
      std::fputs(kSweepUsage, stdout);
      return 0;
    }
    seqs = select_sequences(o);
  } catch (const SweepError& e) {
    return fail(e.what());
  }
  if (seqs.empty()) return fail("no sequence to encode");
  const std::vector<SweepPoint> plan = build_plan(o, seqs);
  if (o.dry_run) {
    for (const auto& p : plan) std::printf("(cd %s && %s)\n", p.dir.c_str(), command_text(p.argv).c_str());
    return 0;
  }
  if (!readable(o.cfg)) return fail(o.cfg + ": cannot read the configuration file");
  for (const auto& s : seqs)
    if (!readable(s.file)) return fail("sequence " + s.name + ": cannot read " + s.file);

  std::vector<const SweepPoint*> todo;
  int complete = 0;
  for (const auto& p : plan) {
    RdPoint pt;
    std::string why;
    if (!o.force && point_is_complete(p, &pt, &why)) {
      complete++;
      continue;
    }
    todo.push_back(&p);
  }
  std::fprintf(stderr, "rdsweep: %zu points (%zu sequences x %zu runs x %zu QPs): %d complete, %zu to encode, -j %d\n",
               plan.size(), seqs.size(), o.runs.size(), o.qps.size(), complete, todo.size(), o.jobs);
  if (!todo.empty() && ::access(o.lencod.c_str(), X_OK) != 0)
    return fail(o.lencod + ": encoder not found or not executable (build it with make, or give --lencod PATH)");
  std::string err;
  if (!make_dirs(absolute_path(o.out_dir), &err)) return fail(err);

  const std::vector<SweepJobResult> jobs = run_sweep_jobs(todo, o.jobs, std::cerr);

  ReportInput rep;
  rep.options = &o;
  rep.sequences = seqs;
  rep.date = utc_now();
  rep.machine = machine();
  for (size_t i = 0; i < todo.size(); i++)
    if (!jobs[i].ok) rep.failures.push_back(todo[i]->label() + ": " + jobs[i].error);
  for (const auto& p : plan) {
    RdPoint pt;
    std::string why;
    if (point_is_complete(p, &pt, &why)) rep.results.push_back({p.seq, p.run, p.qp, pt});
  }

  const std::string out = absolute_path(o.out_dir);
  for (const auto& s : seqs) {
    PlotSpec plot;
    plot.title = s.name + " (" + std::to_string(s.width) + "x" + std::to_string(s.height) + ", " +
                 std::to_string(s.frames) + " frames)";
    plot.x_label = "bit rate (kbit/s)";
    plot.y_label = "PSNR YUV (4Y+U+V)/6 (dB)";
    for (const auto& run : o.runs) {
      PlotSeries ser;
      ser.name = run.name;
      std::vector<std::pair<double, double>> xy;
      for (const auto& r : rep.results)
        if (r.seq.name == s.name && r.run == run.name) xy.push_back({r.point.kbps, r.point.psnr_yuv});
      std::sort(xy.begin(), xy.end());
      for (const auto& [x, y] : xy) {
        ser.x.push_back(x);
        ser.y.push_back(y);
      }
      plot.series.push_back(ser);
    }
    const std::string rel = s.name + "/rd.svg";
    if (!make_dirs(out + "/" + s.name, &err) || !write_file_atomically(out + "/" + rel, render_svg_plot(plot), &err))
      return fail(err);
    rep.plots.push_back(rel);
  }
  if (!write_file_atomically(out + "/results.csv", format_results_csv(rep.results), &err)) return fail(err);
  if (!write_file_atomically(out + "/report.md", format_report(rep), &err)) return fail(err);

  // Console summary: the Table 2 rows of each compared run.
  const BdMethod method = o.pchip ? BdMethod::kPchip : BdMethod::kPolynomial;
  for (const auto& run : o.runs) {
    if (run.name == o.anchor) continue;
    const Table2 t = make_table2(rep.results, seqs, o.qps, o.anchor, run.name, method);
    std::printf("%s vs %s: %-24s %10s %12s %14s\n", run.name.c_str(), o.anchor.c_str(), "sequence", "Time (%)",
                "dPSNR (dB)", "dBitrate (%)");
    auto line = [&](const Table2Entry& e) {
      auto f = [](double v, const char* fmt) {
        char b[32];
        if (std::isnan(v)) return std::string("n/a");
        std::snprintf(b, sizeof b, fmt, v);
        return std::string(b);
      };
      std::printf("  %-40s %10s %12s %14s%s\n", e.sequence.c_str(), f(e.dtime_percent, "%.2f").c_str(),
                  f(e.dpsnr_db, "%.3f").c_str(), f(e.dbitrate_percent, "%.2f").c_str(),
                  e.ok ? "" : ("  (" + e.error + ")").c_str());
    };
    for (const auto& e : t.rows) line(e);
    if (t.average.ok) line(t.average);
  }
  std::printf("report: %s/report.md  results: %s/results.csv\n", out.c_str(), out.c_str());
  if (!rep.failures.empty()) {
    std::fprintf(stderr, "rdsweep: error: %zu point%s failed, first: %s\n", rep.failures.size(),
                 rep.failures.size() == 1 ? "" : "s", rep.failures.front().c_str());
    return 1;
  }
  return 0;
}
