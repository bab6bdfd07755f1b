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

std::vector<const SweepResult*> points_of(const std::vector<SweepResult>& results, const std::string& seq,
                                          const std::string& run) {
  std::vector<const SweepResult*> out;
  for (const auto& r : results)
    if (r.seq.name == seq && r.run == run) out.push_back(&r);
  std::sort(out.begin(), out.end(), [](const SweepResult* a, const SweepResult* b) { return a->qp < b->qp; });
  return out;
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
  std::string qlist = "(";
  for (size_t i = 0; i < qps.size(); i++) qlist += (i ? "," : "") + std::to_string(qps[i]);
  qlist += ")";
  double sum_time = 0, sum_psnr = 0, sum_rate = 0, sum_me = 0, sum_py = 0, sum_ry = 0;
  int n_time = 0, n_me = 0, n_y = 0, frames_total = 0;
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
    BdCurve ca{anchor + " " + s.name, {}, {}}, cb{test + " " + s.name, {}, {}};
    BdCurve ya = ca, yb = cb;
    for (const auto* p : a) {
      ca.kbps.push_back(p->point.kbps);
      ca.psnr.push_back(p->point.psnr_yuv);
      ya.kbps.push_back(p->point.kbps);
      ya.psnr.push_back(p->point.psnr_y);
    }
    for (const auto* p : b) {
      cb.kbps.push_back(p->point.kbps);
      cb.psnr.push_back(p->point.psnr_yuv);
      yb.kbps.push_back(p->point.kbps);
      yb.psnr.push_back(p->point.psnr_y);
    }
    try {
      const BdResult r = bjontegaard(ca, cb, method);
      e.dpsnr_db = r.bd_psnr_db;
      e.dbitrate_percent = r.bd_rate_percent;
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
      frames_total += e.frames;
      sum_psnr += e.dpsnr_db;
      sum_rate += e.dbitrate_percent;
      if (!std::isnan(e.dtime_percent)) { sum_time += e.dtime_percent; n_time++; }
      if (!std::isnan(e.dme_time_percent)) { sum_me += e.dme_time_percent; n_me++; }
      if (!std::isnan(e.dpsnr_y_db)) { sum_py += e.dpsnr_y_db; sum_ry += e.dbitrate_y_percent; n_y++; }
    }
    t.rows.push_back(e);
  }
  Table2Entry& avg = t.average;
  avg.sequence = "Average";
  avg.qps = qlist;
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
    if (n_me) avg.dme_time_percent = sum_me / n_me;
    if (n_y) { avg.dpsnr_y_db = sum_py / n_y; avg.dbitrate_y_percent = sum_ry / n_y; }
  }
  return t;
}

std::string format_results_csv(const std::vector<SweepResult>& results) {
  std::string out = "sequence,run,qp,kbps,psnr_y,psnr_u,psnr_v,psnr_yuv,time_s,time_me_s,frames,integer_me_path\n";
  for (const auto& r : results) {
    const RdPoint& p = r.point;
    out += csv_text(r.seq.name) + "," + csv_text(r.run) + "," + std::to_string(r.qp) + "," + csv_num(p.kbps, "%.4f") +
           "," + csv_num(p.psnr_y, "%.4f") + "," + csv_num(p.psnr_u, "%.4f") + "," + csv_num(p.psnr_v, "%.4f") + "," +
           csv_num(p.psnr_yuv, "%.4f") + "," + csv_num(p.time_s, "%.4f") + "," + csv_num(p.time_me_s, "%.4f") + "," +
           std::to_string(p.frames > 0 ? p.frames : r.seq.frames) + "," + csv_text(p.integer_me_path) + "\n";
  }
  return out;
}

std::string format_report(const ReportInput& in) {
  const SweepOptions& o = *in.options;
  const BdMethod method = o.pchip ? BdMethod::kPchip : BdMethod::kPolynomial;
  std::string r = "# RD sweep report\n\n";
  r += "- Command: `" + o.command_line + "`\n";
  if (!in.date.empty()) r += "- Date: " + in.date + "\n";
  if (!in.machine.empty()) r += "- Machine: " + in.machine + "\n";
  r += "- Configuration: `" + o.cfg + "`";
  for (const auto& kv : o.overrides) r += " `-p " + kv + "`";
  r += "\n- QPs (QPISlice = QPPSlice):";
  for (int q : o.qps) r += " " + std::to_string(q);
  r += "\n- Runs:";
  for (const auto& run : o.runs) {
    r += " **" + run.name + "**" + (run.name == o.anchor ? " (anchor)" : "") + " `";
    for (size_t i = 0; i < run.params.size(); i++)
      r += (i ? "," : "") + run.params[i].first + "=" + run.params[i].second;
    r += "`";
  }
  r += "\n- Bjontegaard method: " + std::string(bd_method_name(method)) + "\n\n";

  for (const auto& run : o.runs) {
    if (run.name == o.anchor) continue;
    const Table2 t = make_table2(in.results, in.sequences, o.qps, o.anchor, run.name, method);
    r += "## " + run.name + " vs " + o.anchor + " (Table 2 form)\n\n";
    r += "| Sequence | Format | Frames | QPs | Time (%) | ΔPSNR (dB) | ΔBitrate (%) |\n";
    r += "|---|---|---:|---|---:|---:|---:|\n";
    auto row = [&](const Table2Entry& e, bool bold) {
      const std::string b = bold ? "**" : "";
      r += "| " + b + md(e.sequence) + b + " | " + e.format + " | " + std::to_string(e.frames) + " | " + e.qps + " | " +
           num(e.dtime_percent, "%.2f") + " | " + num(e.dpsnr_db, "%.3f") + " | " + num(e.dbitrate_percent, "%.2f") +
           " |\n";
    };
    for (const auto& e : t.rows) row(e, false);
    if (t.average.ok) row(t.average, true);
    r += "\nTime (%): Eq. 3 on the total encoding time summed over the QPs; ΔPSNR: BD-PSNR and ΔBitrate: BD-rate of "
         "the combined PSNR (4Y+U+V)/6 (Eq. 2). Negative time = faster than " + o.anchor +
         "; negative ΔPSNR / positive ΔBitrate = RD loss.";
    if (t.average.ok && t.averaged < static_cast<int>(t.rows.size()))
      r += " The average covers the " + std::to_string(t.averaged) + " sequences with deltas.";
    r += "\n\n";
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
    for (const auto& [path, count] : twin)
      r += "> **Note:** run " + run.name + " used the CPU twin for integer motion estimation on " +
           std::to_string(count) + " of its " + std::to_string(run_points) + " points (`" + path +
           "`), so its times are CPU-twin times, not GPU times.\n\n";
  }

  r += "## Points\n\n";
  for (size_t i = 0; i < in.sequences.size(); i++) {
    const SweepSequence& s = in.sequences[i];
    r += "### " + md(s.name) + " (" + std::to_string(s.width) + "x" + std::to_string(s.height) + ", " +
         std::to_string(s.frames) + " frames)\n\n";
    r += "| Run | QP | kbit/s | PSNR Y | PSNR U | PSNR V | PSNR YUV | Time (s) | ME time (s) | Integer ME |\n";
    r += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& run : o.runs) {
      for (const auto* p : points_of(in.results, s.name, run.name)) {
        const RdPoint& q = p->point;
        r += "| " + run.name + " | " + std::to_string(p->qp) + " | " + num(q.kbps, "%.2f") + " | " +
             num(q.psnr_y, "%.3f") + " | " + num(q.psnr_u, "%.3f") + " | " + num(q.psnr_v, "%.3f") + " | " +
             num(q.psnr_yuv, "%.3f") + " | " + num(q.time_s, "%.3f") + " | " + num(q.time_me_s, "%.3f") + " | " +
             md(q.integer_me_path) + " |\n";
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
  return r;
}

bool write_file_atomically(const std::string& path, const std::string& text, std::string* error) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      *error = tmp + ": cannot write";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = path + ": cannot rename the temporary file into place";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace gme
