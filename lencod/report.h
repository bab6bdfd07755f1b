// What lencod tells the user: PSNR per picture, JM 19.0-style console lines and summary, and the StatsFile: JM's
// text stats.dat when its name ends in ".dat" (plus the log.dat row, lencod/report_jm.h), JSON lines otherwise
// (doc/STATS.md). The driver feeds one record per coded picture; nothing here touches the encoder's state.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include "common/dsp.h"
#include "common/frame.h"
#include "common/mbinfo.h"
#include "common/text_fields.h"
#include "encoder/encoder.h"
#include "encoder/params.h"
#include "lencod/report_jm.h"

namespace gme {

class OutputFile;

// Sum of squared differences over the visible area (crop_width x crop_height, chroma halved), per plane, by ssd.
void frame_sse(PlaneSsdFn ssd, const Frame& a, const Frame& b, uint64_t sse[3]);

// JM 19.0 (ZEROSNR = 1): 10 log10(255^2 * samples / max(sse, 1)). A perfect picture therefore reports the finite
// 10 log10(255^2 * samples) (e.g. 102.9 dB for 640x480 luma), never infinity.
double psnr_from_sse(double sse, int64_t samples);

// Combined PSNR of the seed paper (Eq. 2): (4 PSNR_Y + PSNR_U + PSNR_V) / 6.
inline double psnr_yuv(double y, double u, double v) { return (4.0 * y + u + v) / 6.0; }

class Report {
 public:
  // `stats` (may be null) receives the StatsFile (JM text if stats_is_jm_text(p), else JSON lines); `console` the
  // JM-style text. dsp: the encoder's function table (Encoder::dsp()): its plane SSD gives the PSNRs, its CPU flags
  // are reported.
  Report(const EncoderParams& p, std::ostream& console, OutputFile* stats, const DspFuncs& dsp);
  // StatsFile names ending in ".dat" get JM's text formats (stats.dat, and a log.dat row per run).
  static bool stats_is_jm_text(const EncoderParams& p);

  void print_header(const std::string& integer_me_path);
  // One coded picture: `frame_in_file` its source frame number, `time_s` the wall time of encode().
  // `mbs` (optional, mb_count entries in raster order): the picture's macroblocks, for the "mb_mv" key.
  void add_picture(int64_t frame_in_file, const PictureResult& r, const Frame& src, const Frame& recon,
                   double time_s, const MbInfo* mbs = nullptr, int mb_count = 0);
  // Averages, totals, bit rate; the final {"summary":...} line or the text stats.dat. `total_time_s`: wall time of
  // the whole encode.
  void finish(double total_time_s, const std::string& integer_me_path);
  // Further members for the summary line (",\"key\":value..."), e.g. common/energy.h's energy_json_members.
  void add_summary_members(const std::string& json_members) { summary_extra_ += json_members; }
  // JM's log.dat row of this run (after finish), `ver` column from common/version.h.
  std::string jm_log_row() const;

  // Results so far (for tests and the driver).
  int frames() const { return frames_; }
  int64_t total_bits() const { return bits_[0] + bits_[1] + param_set_bits_; }
  double avg_psnr(int plane) const { return frames_ ? psnr_sum_[plane] / frames_ : 0.0; }
  double kbps() const;

 private:
  const EncoderParams& p_;
  std::ostream& con_;
  OutputFile* stats_;
  PlaneSsdFn plane_ssd_;
  std::string simd_;  // cpu_flags_name() of the table
  int frames_ = 0;
  int ahead_ = 0;  // pictures coded ahead of their turn while the GPU started (PictureResult::encoded_ahead)
  int64_t bits_[2] = {0, 0};     // I, P pictures (slice NAL units; JM's Bit/pic)
  int64_t param_set_bits_ = 0;   // SPS/PPS (JM's NVB)
  PictureBitUse bit_use_;
  JmStats jm_;
  double total_time_s_ = 0;
  double psnr_sum_[3] = {0, 0, 0};
  double psnr_yuv_sum_ = 0;
  double sse_sum_[3] = {0, 0, 0};
  double time_sum_ = 0, me_time_sum_ = 0;
  StageTimes stages_;
  std::string summary_extra_;
};

}  // namespace gme
