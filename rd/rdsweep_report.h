// rdsweep's outputs: results.csv (one row per point) and report.md (the seed paper's Table 2 per sequence and on
// average, the points, the RD-curve plots and any failures).
//
// Table 2 columns, for each run compared with the anchor run over the sweep's QPs:
//   Time (%)      Eq. 3: (T_test - T_anchor) / T_anchor * 100, T = total encoding time summed over the QPs
//   dPSNR (dB)    BD-PSNR of the combined PSNR (4Y+U+V)/6 of Eq. 2
//   dBitrate (%)  BD-rate of the same combined PSNR
// The Average row is the mean of the sequence rows and the sum of their frames, as in the paper.
#pragma once
#include <string>
#include <vector>

#include "rd/bjontegaard.h"
#include "rd/rd_input.h"
#include "rd/rdsweep_options.h"

namespace gme {

struct SweepResult {
  SweepSequence seq;
  std::string run;
  int qp = 0;
  RdPoint point;
};

struct Table2Entry {
  std::string sequence, format;
  int frames = 0;
  std::string qps;                 // "(28,32,36,40)"
  bool ok = false;
  std::string error;               // why the deltas are missing (too few points, non-monotonic curve, ...)
  double dtime_percent = kRdMissing;
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

// results.csv text: sequence,run,qp,kbps,psnr_y,psnr_u,psnr_v,psnr_yuv,time_s,time_me_s,frames,integer_me_path.
std::string format_results_csv(const std::vector<SweepResult>& results);

struct ReportInput {
  const SweepOptions* options = nullptr;
  std::vector<SweepSequence> sequences;
  std::vector<SweepResult> results;
  std::vector<std::string> failures;   // "label: error" of points without a result
  std::vector<std::string> plots;      // per sequence (same order), path of its SVG relative to report.md; "" none
  std::string date, machine;           // for the record (guide rule 3)
};

std::string format_report(const ReportInput& in);

// Writes `text` to `path` through a temporary name (no half-written file on failure). Returns false with *error.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);

}  // namespace gme
