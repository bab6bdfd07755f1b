// results.csv and report.md of rdsweep.
#include "rd/rdsweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

namespace gme {
namespace {

std::string num(double v, const char* f) {
  if (std::isnan(v)) return "n/a";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// CSV field: empty for a missing number.
std::string csv_num(double v, const char* f) { return std::isnan(v) ? "" : num(v, f); }

std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Markdown table cells must not contain '|'.
std::string md(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

bool twin_path(const std::string& path) { return path.rfind("cpu twin", 0) == 0; }

// The encoder's version as recorded in its StatsFile, else its SHA-256 (which build made the number).
std::string point_version(const SweepResult& r) {
  if (!r.point.version.empty()) return r.point.version;
  if (!r.record.encoder_sha256.empty()) return "lencod sha256 " + r.record.encoder_sha256.substr(0, 16);
  return "";
}

std::vector<const SweepResult*> points_of(const std::vector<SweepResult>& results, const std::string& seq,
                                          const std::string& run) {
  std::vector<const SweepResult*> out;
  for (const auto& r : results)
    if (r.seq.name == seq && r.run == run) out.push_back(&r);
  std::sort(out.begin(), out.end(), [](const SweepResult* a, const SweepResult* b) { return a->qp < b->qp; });
  return out;
}

// Timed under the same conditions: one rdsweep invocation on one host (points without a record are unknown).
bool timed_together(const PointRecord& a, const PointRecord& b) {
  return !a.invocation.empty() && a.invocation == b.invocation && a.host == b.host;
}

double eq3(double t_test, double t_anchor) {
  if (std::isnan(t_test) || std::isnan(t_anchor) || !(t_anchor > 0)) return kRdMissing;
  return (t_test - t_anchor) / t_anchor * 100.0;
}

}  // namespace

std::string format_name(int w, int h) {
  static const struct { int w, h; const char* name; } kNames[] = {
      {176, 144, "QCIF"}, {352, 288, "CIF"}, {640, 480, "VGA"}, {704, 576, "4CIF"},
      {1280, 720, "720p"}, {1920, 1080, "1080p"}};
  for (const auto& n : kNames)
    if (n.w == w && n.h == h) return n.name;
  return std::to_string(w) + "x" + std::to_string(h);
}

Table2 make_table2(const std::vector<SweepResult>& results, const std::vector<SweepSequence>& seqs,
                   const std::vector<int>& qps, const std::string& anchor, const std::string& test, BdMethod method) {
  Table2 t;
  t.anchor_run = anchor;
  t.test_run = test;
  auto list_of = [](const std::vector<int>& v) {
    std::string l;
    for (size_t i = 0; i < v.size(); i++) l += (i ? "," : "") + std::to_string(v[i]);
    return l.empty() ? std::string("none") : l;
  };
  std::vector<int> sweep_qps = qps;
  std::sort(sweep_qps.begin(), sweep_qps.end());
  const std::string qlist = "(" + list_of(qps) + ")";
  bool avg_partial = false;
  double sum_time = 0, sum_psnr = 0, sum_rate = 0, sum_me = 0, sum_py = 0, sum_ry = 0;
  int n_time = 0, n_me = 0, n_y = 0, frames_total = 0;
  bool avg_mixed = false, avg_doubtful = false;
  for (const SweepSequence& s : seqs) {
    Table2Entry e;
    e.sequence = s.name;
    e.format = format_name(s.width, s.height);
    e.qps = qlist;
    const auto a = points_of(results, s.name, anchor), b = points_of(results, s.name, test);
    e.frames = s.frames;
    for (const auto* p : a)
      if (p->point.frames > 0) e.frames = p->point.frames;
    // Eq. 3 over the QPs both runs completed, so a missing point does not skew the time ratio.
    double ta = 0, tb = 0, ma = 0, mb = 0;
    int common = 0;
    for (const auto* pa : a) {
      for (const auto* pb : b) {
        if (pa->qp != pb->qp) continue;
        common++;
        ta += pa->point.time_s;
        tb += pb->point.time_s;
        ma += pa->point.time_me_s;
        mb += pb->point.time_me_s;
      }
    }
    if (common > 0) {
      e.dtime_percent = eq3(tb, ta);
      e.dme_time_percent = eq3(mb, ma);
    }
    // The row names the QPs its numbers come from: a run that lost a point gives a time ratio over fewer QPs and
    // a Bjontegaard delta over fewer points than the sweep's, which the sweep's QP list would hide.
    std::vector<int> qa, qb, qc;
    for (const auto* p : a) qa.push_back(p->qp);
    for (const auto* p : b) qb.push_back(p->qp);
    for (int q : qa)
      if (std::find(qb.begin(), qb.end(), q) != qb.end()) qc.push_back(q);
    if (qa != sweep_qps || qb != sweep_qps) {
      e.qps = "(" + list_of(qc) + ") ‡";
      e.partial = "Time (%) over QPs " + list_of(qc) + " only; ΔPSNR/ΔBitrate from " + anchor + " QPs " +
                  list_of(qa) + " and " + test + " QPs " + list_of(qb) + " (sweep QPs " + list_of(qps) + ")";
    }
    for (const auto* pa : a)
      for (const auto* pb : b)
        if (pa->qp == pb->qp && !timed_together(pa->record, pb->record)) e.dtime_mixed = true;
    BdCurve ca{anchor + " " + s.name, {}, {}}, cb{test + " " + s.name, {}, {}};
    BdCurve ya = ca, yb = cb;
    // A fit's error names the point by its QP and the file it was read from.
    const auto origin = [](const SweepResult* p) {
      return "QP " + std::to_string(p->qp) + (p->point.origin.empty() ? "" : ", " + p->point.origin);
    };
    for (const auto* p : a) {
      ca.kbps.push_back(p->point.kbps);
      ca.psnr.push_back(p->point.psnr_yuv);
      ya.kbps.push_back(p->point.kbps);
      ya.psnr.push_back(p->point.psnr_y);
      ca.origin.push_back(origin(p));
      ya.origin.push_back(origin(p));
    }
    for (const auto* p : b) {
      cb.kbps.push_back(p->point.kbps);
      cb.psnr.push_back(p->point.psnr_yuv);
      yb.kbps.push_back(p->point.kbps);
      yb.psnr.push_back(p->point.psnr_y);
      cb.origin.push_back(origin(p));
      yb.origin.push_back(origin(p));
    }
    try {
      const BdResult r = bjontegaard(ca, cb, method);
      e.dpsnr_db = r.bd_psnr_db;
      e.dbitrate_percent = r.bd_rate_percent;
      e.warnings = r.warnings;
      e.ok = true;
    } catch (const BdError& err) {
      e.error = err.what();
    }
    try {
      const BdResult r = bjontegaard(ya, yb, method);
      e.dpsnr_y_db = r.bd_psnr_db;
      e.dbitrate_y_percent = r.bd_rate_percent;
    } catch (const BdError&) {
      // Reported through the combined-PSNR error above, or luma alone is degenerate: leave n/a.
    }
    if (e.ok) {
      t.averaged++;
      avg_partial |= !e.partial.empty();
      frames_total += e.frames;
      sum_psnr += e.dpsnr_db;
      sum_rate += e.dbitrate_percent;
      if (!std::isnan(e.dtime_percent)) { sum_time += e.dtime_percent; n_time++; avg_mixed |= e.dtime_mixed; }
      if (!e.warnings.empty()) avg_doubtful = true;
      if (!std::isnan(e.dme_time_percent)) { sum_me += e.dme_time_percent; n_me++; }
      if (!std::isnan(e.dpsnr_y_db)) { sum_py += e.dpsnr_y_db; sum_ry += e.dbitrate_y_percent; n_y++; }
    }
    t.rows.push_back(e);
  }
  Table2Entry& avg = t.average;
  avg.sequence = "Average";
  avg.qps = qlist + (avg_partial ? " ‡" : "");
  if (avg_partial) avg.partial = "the average includes rows computed from fewer QPs than the sweep's";
  avg.frames = frames_total;
  std::set<std::string> formats;
  for (const auto& e : t.rows)
    if (e.ok) formats.insert(e.format);
  avg.format = formats.size() == 1 ? *formats.begin() : "mixed";
  if (t.averaged > 0) {
    avg.ok = true;
    avg.dpsnr_db = sum_psnr / t.averaged;
    avg.dbitrate_percent = sum_rate / t.averaged;
    if (n_time) avg.dtime_percent = sum_time / n_time;
    avg.dtime_mixed = avg_mixed;
    if (avg_doubtful) avg.warnings.push_back("the average includes doubtful sequence rows");
    if (n_me) avg.dme_time_percent = sum_me / n_me;
    if (n_y) { avg.dpsnr_y_db = sum_py / n_y; avg.dbitrate_y_percent = sum_ry / n_y; }
  }
  return t;
}

std::string format_results_csv(const std::vector<SweepResult>& results) {
  std::string out = "sequence,run,qp,kbps,psnr_y,psnr_u,psnr_v,psnr_yuv,time_s,time_me_s,frames,integer_me_path,"
                    "stream_sha256,version,energy_interval_s,energy_gpu_j,energy_cpu_j,host\n";
  for (const auto& r : results) {
    const RdPoint& p = r.point;
    out += csv_text(r.seq.name) + "," + csv_text(r.run) + "," + std::to_string(r.qp) + "," + csv_num(p.kbps, "%.4f") +
           "," + csv_num(p.psnr_y, "%.4f") + "," + csv_num(p.psnr_u, "%.4f") + "," + csv_num(p.psnr_v, "%.4f") + "," +
           csv_num(p.psnr_yuv, "%.4f") + "," + csv_num(p.time_s, "%.4f") + "," + csv_num(p.time_me_s, "%.4f") + "," +
           std::to_string(p.frames > 0 ? p.frames : r.seq.frames) + "," + csv_text(p.integer_me_path) + "," +
           r.record.stream_sha256 + "," + csv_text(point_version(r)) + "," + csv_num(p.energy_interval_s, "%.4f") +
           "," + csv_num(p.energy_gpu_j, "%.3f") + "," + csv_num(p.energy_cpu_j, "%.3f") + "," +
           csv_text(r.record.host) + "\n";
  }
  return out;
}

std::vector<WarningCount> collect_warnings(const std::vector<SweepResult>& results) {
  std::vector<WarningCount> out;
  for (const SweepResult& r : results) {
    for (const std::string& w : r.record.warnings) {
      auto it = std::find_if(out.begin(), out.end(), [&](const WarningCount& c) { return c.text == w; });
      if (it == out.end()) it = out.insert(out.end(), WarningCount{w, {}});
      const std::string label = r.seq.name + " " + r.run + " QP " + std::to_string(r.qp);
      if (std::find(it->points.begin(), it->points.end(), label) == it->points.end()) it->points.push_back(label);
    }
  }
  return out;
}

const char* energy_source_name(EnergySourceKind k) {
  switch (k) {
    case EnergySourceKind::kGpu: return "GPU (NVML)";
    case EnergySourceKind::kCpu: return "CPU package (RAPL)";
    case EnergySourceKind::kBoth: return "GPU + CPU package";
  }
  return "";
}

std::vector<EnergyRow> make_table3(const std::vector<SweepResult>& results, const SweepSequence& seq,
                                   const std::vector<int>& qps, const std::vector<SweepRun>& runs,
                                   const std::string& anchor, EnergySourceKind source) {
  auto joules = [&](const RdPoint& p) {
    switch (source) {
      case EnergySourceKind::kGpu: return p.energy_gpu_j;
      case EnergySourceKind::kCpu: return p.energy_cpu_j;
      case EnergySourceKind::kBoth: return p.energy_gpu_j + p.energy_cpu_j;  // NaN unless both were measured
    }
    return kRdMissing;
  };
  auto reason = [&](const RdPoint& p) {
    const std::string& g = p.energy_gpu_what;
    const std::string& c = p.energy_cpu_what;
    const std::string why = source == EnergySourceKind::kGpu ? g
                            : source == EnergySourceKind::kCpu ? c
                            : std::isnan(p.energy_gpu_j) ? g : c;
    return why.empty() ? std::string("the StatsFile has no energy fields (an encoder without energy counters)")
                       : why;
  };
  std::vector<std::string> order = {anchor};
  for (const SweepRun& r : runs)
    if (r.name != anchor) order.push_back(r.name);
  std::vector<EnergyRow> rows;
  bool any = false;
  for (const std::string& run : order) {
    EnergyRow row;
    row.run = run;
    double e = 0, t = 0;
    int have = 0, points = 0;
    std::string why;
    for (const auto* p : points_of(results, seq.name, run)) {
      if (std::find(qps.begin(), qps.end(), p->qp) == qps.end()) continue;
      points++;
      const double j = joules(p->point);
      if (std::isnan(j) || std::isnan(p->point.energy_interval_s)) {
        if (why.empty()) why = reason(p->point);
        continue;
      }
      have++;
      e += j;
      t += p->point.energy_interval_s;
    }
    any |= have > 0;
    if (points < static_cast<int>(qps.size())) {
      row.missing = std::to_string(qps.size() - points) + " of its " + std::to_string(qps.size()) +
                    " QP points are not complete";
    } else if (have < points) {
      row.missing = std::to_string(points - have) + " of " + std::to_string(points) + " points without this counter: " +
                    why;
    } else if (t > 0) {
      row.ok = true;
      row.energy_j = e;
      row.time_s = t;
      row.power_w = e / t;
      row.energy_time = e * t;
    }
    rows.push_back(row);
  }
  if (!any) return {};
  for (EnergyRow& r : rows)
    if (r.ok && rows.front().ok && r.energy_j > 0) r.ratio = rows.front().energy_j / r.energy_j;
  return rows;
}

namespace {

// "N points" / "1 point".
std::string count(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// Provenance: which build, machine and timing produced the numbers (guide rule 4: every output carries it).
std::string provenance(const ReportInput& in) {
  const SweepOptions& o = *in.options;
  std::string r = "## Provenance\n\n";
  r += "- Report written by: " + in.collector + (in.date.empty() ? "" : ", " + in.date) + "\n";
  r += "- Command: `" + o.command_line + "`\n";
  r += "- Encoder: `" + absolute_path(o.lencod) + "`" +
       (in.prints.encoder_sha256.empty() ? "" : " (SHA-256 " + in.prints.encoder_sha256 + ")");
  std::map<std::string, int> versions;
  for (const auto& res : in.results) versions[res.point.version.empty() ? "" : res.point.version]++;
  for (const auto& [v, n] : versions)
    r += v.empty() ? "; " + count(n, "point") + " without a version in its StatsFile (identified by the SHA-256)"
                   : "; version `" + v + "` (" + count(n, "point") + ")";
  r += "\n- Configuration: `" + o.cfg + "`" +
       (in.prints.cfg_sha256.empty() ? "" : " (SHA-256 " + in.prints.cfg_sha256 + ")");
  for (const auto& kv : o.overrides) r += " `-p " + kv + "`";
  r += "\n- Inputs:";
  for (const SweepSequence& s : in.sequences) {
    const auto it = in.prints.inputs.find(absolute_path(s.file));
    r += " " + md(s.name) + " `" + s.file + "`" + (it == in.prints.inputs.end() ? "" : " (SHA-256 " +
                                                                                       it->second.substr(0, 16) + "…)");
  }
  r += "\n- QPs (QPISlice = QPPSlice):";
  for (int q : o.qps) r += " " + std::to_string(q);
  r += "\n- Runs:";
  for (const auto& run : o.runs) {
    r += " **" + run.name + "**" + (run.name == o.anchor ? " (anchor)" : "") + " `";
    for (size_t i = 0; i < run.params.size(); i++)
      r += (i ? "," : "") + run.params[i].first + "=" + run.params[i].second;
    r += "`";
  }
  r += "\n- Bjontegaard method: " + std::string(bd_method_name(o.pchip ? BdMethod::kPchip : BdMethod::kPolynomial)) +
       "\n";
  // Machines: every distinct (host, CPU, GPU) that encoded points.
  std::map<std::string, int> machines;
  for (const auto& res : in.results) {
    const PointRecord& p = res.record;
    machines[p.host.empty() ? "unknown host (no point.json)" : p.host + ": " + p.cpu + "; GPU: " + p.gpus]++;
  }
  r += "- Machines that encoded the points:\n";
  for (const auto& [m, n] : machines) r += "  - " + md(m) + " (" + count(n, "point") + ")\n";
  // Timing: every distinct invocation with its mode and parallelism.
  struct Inv {
    std::string host, engine, timing, first, slurm_job;
    int jobs = 1, points = 0;
    std::set<int> devices;  // the GPUDevice values the local runner gave its GPU points
  };
  std::map<std::string, Inv> invs;
  for (const auto& res : in.results) {
    const PointRecord& p = res.record;
    Inv& v = invs[p.invocation];
    v.host = p.host;
    v.engine = p.engine;
    v.timing = p.timing;
    v.jobs = p.jobs;
    v.slurm_job = p.slurm_job;
    if (p.cuda_device >= 0) v.devices.insert(p.cuda_device);
    if (v.first.empty() || p.started_utc < v.first) v.first = p.started_utc;
    v.points++;
  }
  r += "- Timing: " + count(in.results.size(), "point") + " timed in " + count(invs.size(), "invocation") + ":\n";
  int parallel = 0;
  for (const auto& [id, v] : invs) {
    std::string how;
    if (id.empty()) how = "no record of how they were timed (encoded by an older rdsweep)";
    else if (v.timing == "serial") how = "--timing serial: one encode at a time, anchor and test of each QP back to back";
    else if (v.timing == "alone")
      how = "one point per process (" + (v.slurm_job.empty() ? v.engine : "Slurm task " + v.slurm_job) +
            "), other load on the host unknown";
    else how = "parallel, -j " + std::to_string(v.jobs) + " (" + std::to_string(v.jobs) + " encodes at once)";
    if (!v.devices.empty()) {
      std::string list;
      for (int d : v.devices) list += (list.empty() ? "" : ", ") + std::to_string(d);
      how += "; GPU points spread over CUDA device" + std::string(v.devices.size() == 1 ? " " : "s ") + list;
    }
    if (v.timing == "parallel" && v.jobs > 1) parallel += v.points;
    r += "  - " + (id.empty() ? std::string("unknown") : "`" + md(id) + "`") + " on " +
         (v.host.empty() ? "?" : md(v.host)) + ", from " + (v.first.empty() ? "?" : v.first) + ": " +
         count(v.points, "point") + ", " + how + "\n";
  }
  if (parallel > 0)
    r += "\n> **Timing:** " + count(parallel, "point") + " were timed while other encodes ran at once (-j > 1): "
         "cores, caches and memory bandwidth were shared, so their times are not those of a lone encode. "
         "For times to publish, run with `--timing serial`.\n";
  r += "\n";
  return r;
}

std::string energy_section(const ReportInput& in) {
  const SweepOptions& o = *in.options;
  std::string r = "## Energy (Table 3 form)\n\n";
  bool any_table = false;
  std::map<std::string, std::set<std::string>> unavailable;  // source -> reasons
  std::map<std::string, std::set<std::string>> measured;     // source -> what was read
  for (const auto& res : in.results) {
    const RdPoint& p = res.point;
    auto note = [&](const char* src, double j, const std::string& what) {
      const std::string w = what.empty() ? "the StatsFile has no energy fields" : what;
      if (std::isnan(j)) unavailable[src].insert(w);
      else measured[src].insert(res.run + ": " + w);
    };
    note("GPU (NVML)", p.energy_gpu_j, p.energy_gpu_what);
    note("CPU package (RAPL)", p.energy_cpu_j, p.energy_cpu_what);
  }
  for (const SweepSequence& s : in.sequences) {
    std::string block;
    for (EnergySourceKind k : {EnergySourceKind::kGpu, EnergySourceKind::kCpu, EnergySourceKind::kBoth}) {
      const auto rows = make_table3(in.results, s, o.qps, o.runs, o.anchor, k);
      if (rows.empty()) continue;
      block += "**" + std::string(energy_source_name(k)) + "**\n\n";
      block += "| Run | Power (W) | Time (s) | Energy (J) | Energy×Time (J·s) | " + o.anchor + " / run |\n";
      block += "|---|---:|---:|---:|---:|---:|\n";
      std::string notes;
      for (const EnergyRow& e : rows) {
        if (!e.ok) {
          block += "| " + md(e.run) + " | — | — | — | — | — |\n";
          notes += "- " + md(e.run) + ": not in the table: " + md(e.missing) + "\n";
          continue;
        }
        block += "| " + md(e.run) + " | " + num(e.power_w, "%.2f") + " | " + num(e.time_s, "%.3f") + " | " +
                 num(e.energy_j, "%.2f") + " | " + num(e.energy_time, "%.2f") + " | " +
                 (std::isnan(e.ratio) ? std::string("—") : num(e.ratio, "%.2f") + "×") + " |\n";
      }
      block += "\n" + notes + (notes.empty() ? "" : "\n");
    }
    if (block.empty()) continue;
    any_table = true;
    r += "### " + md(s.name) + " (" + std::to_string(s.frames) + " frames, QPs summed)\n\n" + block;
  }
  if (any_table)
    r += "Power = Energy / Time over the measured intervals (the whole lencod run of each point), summed over the "
         "QPs; the last column is the anchor's energy divided by the run's (Table 3's \"times better\"). The "
         "counters cover the whole GPU and CPU package, other processes on them included; the anchor's GPU "
         "energy is the idle draw of the GPU during its CPU-only encodes.\n\n";
  // Counters read while other encodes ran hold their draw too: a sum over such points counts the shared energy
  // once per encode that shared it.
  int shared = 0;
  for (const auto& res : in.results)
    if (res.record.timing == "parallel" && res.record.jobs > 1 &&
        (!std::isnan(res.point.energy_gpu_j) || !std::isnan(res.point.energy_cpu_j)))
      shared++;
  if (any_table && shared > 0)
    r += "> **Energy:** " + count(static_cast<size_t>(shared), "point") +
         " had their counters read while other encodes ran at once (-j > 1): each reading holds the draw of every "
         "encode on the same GPU and CPU package, so these energies overstate a lone encode's, by up to the number "
         "of encodes that ran together. For energies to publish, run with `--timing serial`.\n\n";
  for (const auto& [src, whats] : measured) {
    r += "Measured, " + src + ":";
    for (const auto& w : whats) r += " " + md(w) + ";";
    r += "\n\n";
  }
  for (const auto& [src, reasons] : unavailable) {
    r += "Not available, " + src + ":";
    for (const auto& w : reasons) r += " " + md(w) + ";";
    r += "\n\n";
  }
  return r;
}

}  // namespace

std::string format_report(const ReportInput& in) {
  const SweepOptions& o = *in.options;
  const BdMethod method = o.pchip ? BdMethod::kPchip : BdMethod::kPolynomial;
  std::string r = "# RD sweep report\n\n";
  r += provenance(in);

  for (const auto& run : o.runs) {
    if (run.name == o.anchor) continue;
    const Table2 t = make_table2(in.results, in.sequences, o.qps, o.anchor, run.name, method);
    r += "## " + run.name + " vs " + o.anchor + " (Table 2 form)\n\n";
    r += "| Sequence | Format | Frames | QPs | Time (%) | ΔPSNR (dB) | ΔBitrate (%) |\n";
    r += "|---|---|---:|---|---:|---:|---:|\n";
    bool any_mixed = false, any_doubt = false, any_partial = false;
    auto row = [&](const Table2Entry& e, bool bold) {
      const std::string b = bold ? "**" : "";
      const std::string mixed = e.dtime_mixed && !std::isnan(e.dtime_percent) ? " †" : "";
      const std::string doubt = e.warnings.empty() ? "" : " ‼";
      any_mixed |= !mixed.empty();
      any_doubt |= !doubt.empty();
      any_partial |= !e.partial.empty();
      r += "| " + b + md(e.sequence) + b + " | " + e.format + " | " + std::to_string(e.frames) + " | " + e.qps + " | " +
           num(e.dtime_percent, "%.2f") + mixed + " | " + num(e.dpsnr_db, "%.3f") + doubt + " | " +
           num(e.dbitrate_percent, "%.2f") + doubt + " |\n";
    };
    for (const auto& e : t.rows) row(e, false);
    if (t.average.ok) row(t.average, true);
    r += "\nTime (%): Eq. 3 on the total encoding time summed over the QPs; ΔPSNR: BD-PSNR and ΔBitrate: BD-rate of "
         "the combined PSNR (4Y+U+V)/6 (Eq. 2). Negative time = faster than " + o.anchor +
         "; negative ΔPSNR / positive ΔBitrate = RD loss.";
    if (t.average.ok && t.averaged < static_cast<int>(t.rows.size()))
      r += " The average covers the " + std::to_string(t.averaged) + " sequences with deltas.";
    r += "\n\n";
    if (any_mixed)
      r += "† The " + o.anchor + " and " + run.name + " points of at least one QP were timed in different "
           "invocations or on different hosts (see Provenance): the time ratio compares measurements made under "
           "different conditions.\n\n";
    if (any_partial) {
      r += "‡ Computed from fewer points than the sweep's QPs:\n\n";
      for (const auto& e : t.rows)
        if (!e.partial.empty()) r += "- " + md(e.sequence) + ": " + md(e.partial) + "\n";
      if (!t.average.partial.empty() && t.average.ok) r += "- Average: " + md(t.average.partial) + "\n";
      r += "\n";
    }
    if (any_doubt) {
      r += "‼ Doubtful Bjontegaard deltas (do not publish them as they are):\n\n";
      for (const auto& e : t.rows)
        for (const auto& w : e.warnings) r += "- " + md(e.sequence) + ": " + md(w) + "\n";
      r += "\n";
    }
    bool any_error = false;
    for (const auto& e : t.rows) {
      if (e.ok) continue;
      if (!any_error) r += "Sequences without deltas:\n\n";
      any_error = true;
      r += "- " + md(e.sequence) + ": " + md(e.error) + "\n";
    }
    if (any_error) r += "\n";
    r += "Luma only and motion-estimation time:\n\n";
    r += "| Sequence | ME time (%) | ΔPSNR Y (dB) | ΔBitrate Y (%) |\n|---|---:|---:|---:|\n";
    for (const auto& e : t.rows)
      r += "| " + md(e.sequence) + " | " + num(e.dme_time_percent, "%.2f") + " | " + num(e.dpsnr_y_db, "%.3f") +
           " | " + num(e.dbitrate_y_percent, "%.2f") + " |\n";
    if (t.average.ok)
      r += "| **Average** | " + num(t.average.dme_time_percent, "%.2f") + " | " + num(t.average.dpsnr_y_db, "%.3f") +
           " | " + num(t.average.dbitrate_y_percent, "%.2f") + " |\n";
    r += "\n";
    // Guide rule 2: without a usable GPU the encoder runs the CPU twin. Times then say nothing about the GPU.
    std::map<std::string, int> twin;
    int run_points = 0;
    for (const auto& res : in.results) {
      if (res.run != run.name) continue;
      run_points++;
      if (twin_path(res.point.integer_me_path)) twin[res.point.integer_me_path]++;
    }
    for (const auto& [path, n] : twin)
      r += "> **Note:** run " + run.name + " used the CPU twin for integer motion estimation on " +
           std::to_string(n) + " of its " + std::to_string(run_points) + " points (`" + path +
           "`), so its times are CPU-twin times, not GPU times.\n\n";
  }

  r += energy_section(in);

  const std::vector<WarningCount> warnings = collect_warnings(in.results);
  if (!warnings.empty()) {
    r += "## lencod warnings\n\nEach distinct warning the encoder printed (in the points' lencod.log):\n\n";
    for (const WarningCount& w : warnings) {
      r += "- `" + md(w.text) + "` — " + count(w.points.size(), "point") + ": ";
      for (size_t i = 0; i < w.points.size() && i < 6; i++) r += (i ? ", " : "") + md(w.points[i]);
      if (w.points.size() > 6) r += ", …";
      r += "\n";
    }
    r += "\n";
  }

  r += "## Points\n\n";
  for (size_t i = 0; i < in.sequences.size(); i++) {
    const SweepSequence& s = in.sequences[i];
    r += "### " + md(s.name) + " (" + std::to_string(s.width) + "x" + std::to_string(s.height) + ", " +
         std::to_string(s.frames) + " frames)\n\n";
    r += "| Run | QP | kbit/s | PSNR Y | PSNR U | PSNR V | PSNR YUV | Time (s) | ME time (s) | Integer ME | Host |\n";
    r += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
    for (const auto& run : o.runs) {
      for (const auto* p : points_of(in.results, s.name, run.name)) {
        const RdPoint& q = p->point;
        r += "| " + run.name + " | " + std::to_string(p->qp) + " | " + num(q.kbps, "%.2f") + " | " +
             num(q.psnr_y, "%.3f") + " | " + num(q.psnr_u, "%.3f") + " | " + num(q.psnr_v, "%.3f") + " | " +
             num(q.psnr_yuv, "%.3f") + " | " + num(q.time_s, "%.3f") + " | " + num(q.time_me_s, "%.3f") + " | " +
             md(q.integer_me_path) + " | " + md(p->record.host) + " |\n";
      }
    }
    r += "\n";
    if (i < in.plots.size() && !in.plots[i].empty()) r += "![RD curve of " + s.name + "](" + in.plots[i] + ")\n\n";
  }
  if (!in.failures.empty()) {
    r += "## Failed points\n\n";
    for (const auto& f : in.failures) r += "- " + md(f) + "\n";
    r += "\n";
  }
  if (!in.missing.empty()) {
    r += "## Missing points\n\n" + count(in.missing.size(), "point") + " of the sweep " +
         (in.missing.size() == 1 ? "is" : "are") + " not complete; the tables above leave them out:\n\n";
    for (const auto& m : in.missing) r += "- " + md(m) + "\n";
    r += "\n";
  }
  return r;
}

}  // namespace gme
