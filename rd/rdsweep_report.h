// rdsweep's outputs: results.csv (one row per point) and report.md (provenance, the seed paper's Table 2 per
// sequence and on average, its Table 3 (energy) where counters were read, the points, the RD-curve plots, the
// encoder's warnings, failed and missing points).
//
// Table 2 columns, for each run compared with the anchor run over the sweep's QPs:
//   Time (%)      Eq. 3: (T_test - T_anchor) / T_anchor * 100, T = total encoding time summed over the QPs
//   dPSNR (dB)    BD-PSNR of the combined PSNR (4Y+U+V)/6 of Eq. 2
//   dBitrate (%)  BD-rate of the same combined PSNR
// The Average row is the mean of the sequence rows and the sum of their frames, as in the paper.
// Table 3 columns, per sequence, run and energy source (GPU by NVML, CPU package by RAPL, their sum), over the QPs:
//   Power (W) = Energy / Time, Time (s) = the measured intervals summed, Energy (J) summed, Energy x Time (J s),
//   and the ratio of the anchor's energy to each run's.
#pragma once
#include <string>
#include <vector>

#include "rd/bjontegaard.h"
#include "rd/rd_input.h"
#include "rd/rdsweep_options.h"
#include "rd/rdsweep_plan.h"

namespace gme {

struct SweepResult {
  SweepSequence seq;
  std::string run;
  int qp = 0;
  RdPoint point;
  PointRecord record;  // point.json: where, how and by what it was encoded
};

struct Table2Entry {
  std::string sequence, format;
  int frames = 0;
  std::string qps;                 // "(28,32,36,40)": the QPs Time (%) was summed over; " ‡" when fewer than the sweep's
  std::string partial;             // when a run lacks some of the sweep's QPs: which QPs each number used
  bool ok = false;
  std::string error;               // why the deltas are missing (too few points, non-monotonic curve, ...)
  std::vector<std::string> warnings;  // doubts about the combined-PSNR deltas (bjontegaard's warnings)
  double dtime_percent = kRdMissing;
  bool dtime_mixed = false;        // some QP's anchor and test points were timed in different invocations or hosts
  double dpsnr_db = kRdMissing, dbitrate_percent = kRdMissing;        // combined PSNR
  double dme_time_percent = kRdMissing;                               // Eq. 3 on ME time
  double dpsnr_y_db = kRdMissing, dbitrate_y_percent = kRdMissing;    // luma only
};

struct Table2 {
  std::string anchor_run, test_run;
  std::vector<Table2Entry> rows;
  Table2Entry average;             // ok when at least one row is
  int averaged = 0;                // rows in the average
};

// "QCIF", "CIF", "VGA", ... or "WxH".
std::string format_name(int width, int height);

Table2 make_table2(const std::vector<SweepResult>& results, const std::vector<SweepSequence>& seqs,
                   const std::vector<int>& qps, const std::string& anchor, const std::string& test, BdMethod method);

// One Table 3 row: a run's energy from one source over the sequence's QPs. `ok` only when every QP point of the
// run has the counter; otherwise `missing` says why (no cell is filled from a part of the points).
struct EnergyRow {
  std::string run;
  bool ok = false;
  double power_w = kRdMissing, time_s = kRdMissing, energy_j = kRdMissing, energy_time = kRdMissing;
  double ratio = kRdMissing;       // anchor energy / this run's energy (Table 3's "times better")
  std::string missing;
};

enum class EnergySourceKind { kGpu, kCpu, kBoth };
const char* energy_source_name(EnergySourceKind k);

// Rows for one sequence and source, runs in the given order; the anchor's row comes first. Empty when no point of
// the sequence has the counter.
std::vector<EnergyRow> make_table3(const std::vector<SweepResult>& results, const SweepSequence& seq,
                                   const std::vector<int>& qps, const std::vector<SweepRun>& runs,
                                   const std::string& anchor, EnergySourceKind source);

// results.csv text: sequence,run,qp,kbps,psnr_y,psnr_u,psnr_v,psnr_yuv,time_s,time_me_s,frames,integer_me_path,
// stream_sha256,version,energy_interval_s,energy_gpu_j,energy_cpu_j,host.
std::string format_results_csv(const std::vector<SweepResult>& results);

struct ReportInput {
  const SweepOptions* options = nullptr;
  std::vector<SweepSequence> sequences;
  std::vector<SweepResult> results;
  std::vector<std::string> failures;   // "label: error" of points without a result
  std::vector<std::string> missing;    // "SEQ/RUN/qpNN: why" of points not complete (collection)
  std::vector<std::string> plots;      // per sequence (same order), path of its SVG relative to report.md; "" none
  std::string date;                    // when the report was written
  std::string collector;               // rdsweep version, host, CPU and GPU that wrote the report
  SweepFingerprints prints;            // encoder, cfg and inputs the complete points match
};

std::string format_report(const ReportInput& in);

// Distinct lencod warnings over the results: text and the labels of the points that printed it.
struct WarningCount {
  std::string text;
  std::vector<std::string> points;
};
std::vector<WarningCount> collect_warnings(const std::vector<SweepResult>& results);

}  // namespace gme
