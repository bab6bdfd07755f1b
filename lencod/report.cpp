#include "lencod/report.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "common/cpu.h"
#include "common/output_file.h"
#include "common/text_fields.h"
#include "common/version.h"
#include "encoder/slice.h"
#include "encoder/thread_pool.h"

namespace gme {
namespace {

// JSON numbers: finite, enough digits for PSNR/times without noise.
std::string jnum(double v, int decimals) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

const char* type_name(SliceType t) { return t == SliceType::I ? "I" : "P"; }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The bits by syntax element as a JSON object (doc/STATS.md "bit_use").
std::string bit_use_json(const PictureBitUse& b) {
  std::string j = "{\"header\":" + std::to_string(b.header) + ",\"mode\":" + std::to_string(b.mode) +
                  ",\"motion\":" + std::to_string(b.motion) + ",\"cbp\":" + std::to_string(b.cbp) +
                  ",\"dquant\":" + std::to_string(b.dquant) + ",\"coeff_y\":" + std::to_string(b.coeff_y) +
                  ",\"coeff_c\":" + std::to_string(b.coeff_c) + ",\"motion_by_type\":[";
  for (int i = 0; i < 9; ++i) j += (i ? "," : "") + std::to_string(b.motion_by_type[i]);
  return j + "]}";
}

// The GPU the integer search ran on ("gpu: cuda:NVIDIA H100 80GB HBM3" -> its name), as JSON; null without one.
std::string gpu_json(const std::string& integer_me_path) {
  const std::string prefix = "gpu: cuda:";
  if (integer_me_path.rfind(prefix, 0) != 0) return "null";
  return json_string(integer_me_path.substr(prefix.size()));
}

}  // namespace

void frame_sse(PlaneSsdFn ssd, const Frame& a, const Frame& b, uint64_t sse[3]) {
  for (int c = 0; c < 3; ++c) {
    const int w = c ? a.crop_width / 2 : a.crop_width;
    const int h = c ? a.crop_height / 2 : a.crop_height;
    sse[c] = ssd(a.plane[c].row(0), a.plane[c].stride, b.plane[c].row(0), b.plane[c].stride, w, h);
  }
}

double psnr_from_sse(double sse, int64_t samples) {
  return 10.0 * std::log10(255.0 * 255.0 * static_cast<double>(samples) / (sse < 1.0 ? 1.0 : sse));
}

Report::Report(const EncoderParams& p, std::ostream& console, OutputFile* stats, const DspFuncs& dsp)
    : p_(p), con_(console), stats_(stats), plane_ssd_(dsp.plane_ssd), simd_(cpu_flags_name(dsp.cpu)) {}

bool Report::stats_is_jm_text(const EncoderParams& p) { return ends_with(p.stats_file, ".dat"); }

void Report::print_header(const std::string& integer_me_path) {
  con_ << "Integer ME: " << integer_me_path << "\n";
  con_ << "-------------------------------------------------------------------------------\n"
          "Frame     Bit/pic    QP   SnrY    SnrU    SnrV    Time(ms) MET(ms) Frm/Fld Ref  \n"
          "-------------------------------------------------------------------------------\n";
  con_.flush();
}

void Report::add_picture(int64_t frame_in_file, const PictureResult& r, const Frame& src, const Frame& recon,
                         double time_s, const MbInfo* mbs, int mb_count) {
  uint64_t sse[3];
  frame_sse(plane_ssd_, src, recon, sse);
  const int64_t luma = static_cast<int64_t>(src.crop_width) * src.crop_height;
  const int64_t chroma = luma / 4;
  double psnr[3];
  for (int c = 0; c < 3; ++c) {
    psnr[c] = psnr_from_sse(static_cast<double>(sse[c]), c ? chroma : luma);
    psnr_sum_[c] += psnr[c];
    sse_sum_[c] += static_cast<double>(sse[c]);
  }
  const double yuv = psnr_yuv(psnr[0], psnr[1], psnr[2]);
  psnr_yuv_sum_ += yuv;
  const double me_s = r.times.integer_me + r.times.subpel_me;
  const int coded_index = frames_;
  bits_[r.type == SliceType::I ? 0 : 1] += r.bits;
  param_set_bits_ += r.param_set_bits;
  bit_use_ += r.bit_use;
  int picture_mbs = 0;
  for (int c : r.mb_counts) picture_mbs += c;
  jm_.add(r, sse, luma, picture_mbs);
  time_sum_ += time_s;
  me_time_sum_ += me_s;
  stages_ += r.times;
  ++frames_;
  ahead_ += r.encoded_ahead;

  // JM 19.0 ReportNALNonVLCBits and ReportSimple: the parameter sets written before the picture on a line of their
  // own, then "%05d(%3s)%8d   %2d %7.3f %7.3f %7.3f %9d %7d    %3s    %d" with the picture's number in coding
  // order times (FrameSkip + 1) (JM leaves StartFrame out) and nal_ref_idc (3 for IDR pictures, else 2).
  const char* jm_type = r.idr ? "IDR" : (r.type == SliceType::I ? " I " : " P ");
  char line[200];
  if (r.param_set_bits > 0) {
    std::snprintf(line, sizeof line, "%05d(NVB)%8lld \n", coded_index, static_cast<long long>(r.param_set_bits));
    con_ << line;
  }
  std::snprintf(line, sizeof line, "%05lld(%3s)%8lld   %2d %7.3f %7.3f %7.3f %9d %7d    %3s    %d\n",
                static_cast<long long>(coded_index) * (p_.frame_skip + 1), jm_type, static_cast<long long>(r.bits),
                r.qp, psnr[0], psnr[1], psnr[2], static_cast<int>(time_s * 1000.0), static_cast<int>(me_s * 1000.0),
                "FRM", r.idr ? 3 : 2);
  con_ << line;
  con_.flush();

  if (stats_ && !stats_is_jm_text(p_)) {
    std::string j = "{\"frame\":" + std::to_string(frame_in_file) + ",\"coded\":" + std::to_string(frames_ - 1) +
                    ",\"type\":\"" + type_name(r.type) + "\",\"idr\":" + (r.idr ? "true" : "false") +
                    ",\"qp\":" + std::to_string(r.qp) + ",\"bits\":" + std::to_string(r.bits) +
                    ",\"param_set_bits\":" + std::to_string(r.param_set_bits) +
                    ",\"bit_use\":" + bit_use_json(r.bit_use) +
                    ",\"slices\":" + std::to_string(r.num_slices) + ",\"poc\":" + std::to_string(r.poc) +
                    ",\"frame_num\":" + std::to_string(r.frame_num) + ",\"psnr_y\":" + jnum(psnr[0], 4) +
                    ",\"psnr_u\":" + jnum(psnr[1], 4) + ",\"psnr_v\":" + jnum(psnr[2], 4) +
                    ",\"psnr_yuv\":" + jnum(yuv, 4) + ",\"sse_y\":" + std::to_string(sse[0]) +
                    ",\"sse_u\":" + std::to_string(sse[1]) + ",\"sse_v\":" + std::to_string(sse[2]) +
                    ",\"time_s\":" + jnum(time_s, 6) + ",\"time_me_s\":" + jnum(me_s, 6) +
                    ",\"time_integer_me_s\":" + jnum(r.times.integer_me, 6) +
                    ",\"time_picture_search_s\":" + jnum(r.times.picture_search, 6) +
                    ",\"time_subpel_me_s\":" + jnum(r.times.subpel_me, 6) +
                    ",\"subpel_searches\":" + std::to_string(r.times.subpel_searches) +
                    ",\"subpel_from_tables\":" + std::to_string(r.times.subpel_from_tables) +
                    ",\"subpel_table_escapes\":" + std::to_string(r.times.subpel_table_escapes) +
                    ",\"time_mode_decision_s\":" + jnum(r.times.mode_decision, 6) +
                    ",\"time_coding_s\":" + jnum(r.times.coding, 6) +
                    ",\"time_deblocking_s\":" + jnum(r.times.deblocking, 6) +
                    ",\"time_encoder_s\":" + jnum(r.times.total, 6) +
                    ",\"encoded_ahead\":" + (r.encoded_ahead ? "true" : "false") + ",\"mb_counts\":[";
    for (int i = 0; i < 9; ++i) j += (i ? "," : "") + std::to_string(r.mb_counts[i]);
    j += "]";
    if (mbs) {
      // Motion vector of each macroblock's first 4x4 block in quarter pel (P_Skip included); null for intra.
      j += ",\"mb_mv\":[";
      for (int i = 0; i < mb_count; ++i) {
        if (i) j += ",";
        if (mbs[i].is_intra())
          j += "null";
        else
          j += "[" + std::to_string(mbs[i].mv[0].x) + "," + std::to_string(mbs[i].mv[0].y) + "]";
      }
      j += "]";
    }
    j += "}\n";
    stats_->write(j);
  }
}

std::string Report::jm_log_row() const {
  return gme::jm_log_row(p_, jm_, version_release(), total_time_s_ * 1000.0, me_time_sum_ * 1000.0, std::time(nullptr));
}

double Report::kbps() const {
  if (!frames_) return 0;
  // JM 19.0: bit rate = total bits * output frame rate / frames, output rate = FrameRate / (FrameSkip + 1).
  const double out_rate = p_.frame_rate / (p_.frame_skip + 1);
  return static_cast<double>(total_bits()) * out_rate / frames_ / 1000.0;
}

void Report::finish(double total_time_s, const std::string& integer_me_path) {
  total_time_s_ = total_time_s;
  const int n = frames_ ? frames_ : 1;
  const int64_t luma = static_cast<int64_t>(p_.source_width) * p_.source_height;
  const int64_t chroma = luma / 4;
  double avg[3], csnr[3], mse[3];
  for (int c = 0; c < 3; ++c) {
    avg[c] = psnr_sum_[c] / n;
    const double avg_sse = sse_sum_[c] / n;
    csnr[c] = psnr_from_sse(avg_sse, c ? chroma : luma);
    mse[c] = avg_sse / static_cast<double>(c ? chroma : luma);
  }
  const double avg_yuv = psnr_yuv_sum_ / n;
  const double out_rate = p_.frame_rate / (p_.frame_skip + 1);

  con_ << "-------------------------------------------------------------------------------\n";
  con_ << "------------------ Average data all frames  -----------------------------------\n\n";
  con_ << " Total encoding time for the seq.  : " << fmt("%7.3f", total_time_s) << " sec ("
       << fmt("%3.2f", total_time_s > 0 ? frames_ / total_time_s : 0.0) << " fps)\n";
  con_ << " Total ME time for sequence        : " << fmt("%7.3f", me_time_sum_) << " sec \n\n";
  const char* names[3] = {"Y", "U", "V"};
  for (int c = 0; c < 3; ++c) {
    char b[160];
    std::snprintf(b, sizeof b, " %s { PSNR (dB), cSNR (dB), MSE }   : { %7.3f, %7.3f, %9.5f }\n", names[c], avg[c],
                  csnr[c], mse[c]);
    con_ << b;
  }
  con_ << " YUV PSNR (4Y+U+V)/6 (dB)          : " << fmt("%7.3f", avg_yuv) << "\n\n";
  con_ << " Total bits                        : " << total_bits() << " (I " << bits_[0] << ", P " << bits_[1]
       << ", NVB " << param_set_bits_ << ") \n";
  con_ << " Bit rate (kbit/s)  @ " << fmt("%2.2f", out_rate) << " Hz     : " << fmt("%5.2f", kbps()) << "\n";
  con_ << " Integer ME                        : " << integer_me_path << "\n";
  con_ << " SIMD                              : " << simd_ << "\n";
  con_ << " Threads                           : " << resolve_thread_count(p_.threads) << " ("
       << macroblock_order_name(p_) << ")\n";
  if (ahead_ > 0) con_ << " Coded during the GPU start-up     : " << ahead_ << " I pictures, ahead of their turn\n";
  if (stages_.subpel_from_tables > 0)
    con_ << " Sub-pel distortions from tables   : " << stages_.subpel_from_tables << " of " << stages_.subpel_searches
         << " partition refinements (" << fmt("%.1f", 100.0 * stages_.subpel_from_tables / stages_.subpel_searches)
         << " %; " << stages_.subpel_table_escapes << " measured escaped entries)\n";
  if (stages_.searches_bounded > 0)
    con_ << " Partition searches left out       : " << stages_.searches_bounded
         << " (sub-pel tables' floors: their candidates could not win)\n";
  con_ << "-------------------------------------------------------------------------------\n";
  con_.flush();

  if (stats_ && stats_is_jm_text(p_)) {
    stats_->write(jm_stats_dat(p_, jm_));
  } else if (stats_) {
    std::string j = "{\"summary\":{\"frames\":" + std::to_string(frames_) +
                    ",\"total_bits\":" + std::to_string(total_bits()) + ",\"bits_i\":" + std::to_string(bits_[0]) +
                    ",\"bits_p\":" + std::to_string(bits_[1]) +
                    ",\"bits_param_sets\":" + std::to_string(param_set_bits_) +
                    ",\"bit_use\":" + bit_use_json(bit_use_) + ",\"kbps\":" + jnum(kbps(), 4) +
                    ",\"frame_rate\":" + jnum(out_rate, 4) + ",\"psnr_y\":" + jnum(avg[0], 4) +
                    ",\"psnr_u\":" + jnum(avg[1], 4) + ",\"psnr_v\":" + jnum(avg[2], 4) +
                    ",\"psnr_yuv\":" + jnum(avg_yuv, 4) + ",\"csnr_y\":" + jnum(csnr[0], 4) +
                    ",\"csnr_u\":" + jnum(csnr[1], 4) + ",\"csnr_v\":" + jnum(csnr[2], 4) +
                    ",\"mse_y\":" + jnum(mse[0], 6) + ",\"mse_u\":" + jnum(mse[1], 6) +
                    ",\"mse_v\":" + jnum(mse[2], 6) + ",\"time_s\":" + jnum(total_time_s, 6) +
                    ",\"time_pictures_s\":" + jnum(time_sum_, 6) + ",\"time_me_s\":" + jnum(me_time_sum_, 6) +
                    ",\"time_integer_me_s\":" + jnum(stages_.integer_me, 6) +
                    ",\"time_picture_search_s\":" + jnum(stages_.picture_search, 6) +
                    ",\"time_subpel_me_s\":" + jnum(stages_.subpel_me, 6) +
                    ",\"subpel_searches\":" + std::to_string(stages_.subpel_searches) +
                    ",\"subpel_from_tables\":" + std::to_string(stages_.subpel_from_tables) +
                    ",\"subpel_table_escapes\":" + std::to_string(stages_.subpel_table_escapes) +
                    ",\"searches_bounded\":" + std::to_string(stages_.searches_bounded) +
                    ",\"time_mode_decision_s\":" + jnum(stages_.mode_decision, 6) +
                    ",\"time_coding_s\":" + jnum(stages_.coding, 6) +
                    ",\"time_deblocking_s\":" + jnum(stages_.deblocking, 6) +
                    ",\"time_encoder_s\":" + jnum(stages_.total, 6) +
                    ",\"pictures_encoded_ahead\":" + std::to_string(ahead_) + ",\"qp_i\":" + std::to_string(p_.qp_i) +
                    ",\"qp_p\":" + std::to_string(p_.qp_p) +
                    ",\"integer_me_path\":" + json_string(integer_me_path) + ",\"simd\":" + json_string(simd_) +
                    ",\"threads\":" + std::to_string(resolve_thread_count(p_.threads)) +
                    ",\"macroblock_order\":" + json_string(macroblock_order_name(p_)) +
                    ",\"version\":" + json_string(version_string()) + ",\"cpu\":" + json_string(cpu_description()) +
                    ",\"gpu\":" + gpu_json(integer_me_path) +
                    summary_extra_ +
                    ",\"config\":{\"input\":" + json_string(p_.input_file) +
                    ",\"width\":" + std::to_string(p_.source_width) +
                    ",\"height\":" + std::to_string(p_.source_height) +
                    ",\"frames\":" + std::to_string(p_.frames_to_encode) +
                    ",\"start_frame\":" + std::to_string(p_.start_frame) +
                    ",\"frame_skip\":" + std::to_string(p_.frame_skip) +
                    ",\"source_frame_rate\":" + jnum(p_.frame_rate, 4) + ",\"qp_i\":" + std::to_string(p_.qp_i) +
                    ",\"qp_p\":" + std::to_string(p_.qp_p) + ",\"intra_period\":" + std::to_string(p_.intra_period) +
                    ",\"idr_period\":" + std::to_string(p_.idr_period) +
                    ",\"search_range\":" + std::to_string(p_.search_range) +
                    ",\"num_ref_frames\":" + std::to_string(p_.num_ref_frames) +
                    ",\"rd_optimization\":" + std::to_string(p_.rd_optimization) +
                    ",\"slice_mode\":" + std::to_string(p_.slice_mode) +
                    ",\"gpu_integer_me\":" + std::to_string(p_.gpu_integer_me) +
                    ",\"gpu_top_k\":" + std::to_string(p_.gpu_top_k) +
                    ",\"gpu_search_center\":" + std::to_string(p_.gpu_search_center) +
                    ",\"gpu_subpel_distortion\":" + std::to_string(p_.gpu_subpel_distortion) +
                    ",\"gpu_subpel_ranks\":" + std::to_string(p_.gpu_subpel_ranks) +
                    ",\"threads\":" + std::to_string(p_.threads) +
                    ",\"integer_me_path\":" + json_string(integer_me_path) + "}}}\n";
    stats_->write(j);
  }
}

}  // namespace gme
