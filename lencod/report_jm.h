// JM 19.0's text reports, for a JM user's scripts: the StatsFile `stats.dat` (lencod/src/report.c report_stats) and
// the row every run appends to `log.dat` (report_log). Same layout, labels and number formats as JM; the values are
// gme264's, accumulated as JM accumulates them (float running PSNR averages, bits by syntax element, macroblock
// modes per slice type). doc/STATS.md describes both files.
#pragma once
#include <cstdint>
#include <ctime>
#include <string>

#include "encoder/encoder.h"
#include "encoder/params.h"

namespace gme {

// The sequence's statistics as JM keeps them (StatParameters, DistortionParams), per slice type: [0] I, [1] P.
struct JmStats {
  int frames = 0;
  int frames_of[2] = {0, 0};
  float psnr_avg[3] = {0, 0, 0};         // running average over all pictures (JM accumulate_metric, float)
  float psnr_avg_of[2][3] = {};          // the same per slice type (avslice)
  int64_t qp_sum[2] = {0, 0};            // sum of the macroblocks' QP (Ave Quant)
  int64_t mbs[2] = {0, 0};
  int64_t pic_bits[2] = {0, 0};          // sum of Bit/pic (bit_counter)
  int64_t param_set_bits = 0;            // NVB
  PictureBitUse bit_use[2];
  int64_t mode_use[2][9] = {};           // macroblocks per MbType

  // One coded picture: its result, SSE of Y, U, V over the visible area, luma samples and macroblock count.
  void add(const PictureResult& r, const uint64_t sse[3], int64_t luma_samples, int mb_count);
};

// The text of stats.dat for the sequence `p` encoded (input name as given).
std::string jm_stats_dat(const EncoderParams& p, const JmStats& s);
// log.dat's header rows (JM writes them when it creates the file) and one row per run: `version` fills the `ver`
// column (gme264's release), times in milliseconds, `now` the local time of the row.
std::string jm_log_header();
std::string jm_log_row(const EncoderParams& p, const JmStats& s, const std::string& version, double total_ms,
                       double me_ms, std::time_t now);
// Appends the row to the file at `path`, writing the header first when the file does not exist (JM's report_log).
// Throws std::runtime_error naming the file when it cannot be written.
void append_jm_log(const std::string& path, const std::string& row);

}  // namespace gme
