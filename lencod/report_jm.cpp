#include "lencod/report_jm.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <stdexcept>

namespace gme {
namespace {

// printf into a std::string (JM's fprintf formats, kept literally).
void put(std::string& out, const char* format, ...) __attribute__((format(printf, 2, 3)));
void put(std::string& out, const char* format, ...) {
  char b[1024];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(b, sizeof b, format, ap);
  va_end(ap);
  out += b;
}

// JM's psnr() (ZEROSNR = 1) on the float SSE JM stores.
float jm_psnr(uint64_t sse, int64_t samples) {
  const float d = static_cast<float>(sse);
  return static_cast<float>(10.0 * std::log10(65025 * (static_cast<double>(samples) / (d < 1.0f ? 1.0 : d))));
}

// accumulate_metric: the running average in JM's float arithmetic.
void accumulate(float* avg, float cur, int frames) { *avg = (*avg * (frames - 1) + cur) / frames; }

const char* const kMetric[3] = {"SAD", "SSE", "Hadamard SAD"};

// Indices of common/mbinfo.h's MbType order (I4x4, I16x16, IPCM, PSkip, P16x16, P16x8, P8x16, P8x8, P8x8Ref0).
enum { kI4 = 0, kI16 = 1, kPcm = 2, kSkip = 3, k16x16 = 4, k16x8 = 5, k8x16 = 6, k8x8 = 7, k8x8Ref0 = 8 };

float out_rate(const EncoderParams& p) { return static_cast<float>(p.frame_rate / (p.frame_skip + 1)); }

// report(): bitrate_st and bitrate, in JM's float arithmetic.
float bitrate_of(int64_t bits, const EncoderParams& p, int frames) {
  return static_cast<float>(bits) * out_rate(p) / static_cast<float>(frames);
}

}  // namespace

void JmStats::add(const PictureResult& r, const uint64_t sse[3], int64_t luma_samples, int mb_count) {
  const int t = r.type == SliceType::I ? 0 : 1;
  ++frames;
  ++frames_of[t];
  for (int c = 0; c < 3; ++c) {
    const float v = jm_psnr(sse[c], c ? luma_samples / 4 : luma_samples);
    accumulate(&psnr_avg[c], v, frames);
    accumulate(&psnr_avg_of[t][c], v, frames_of[t]);
  }
  qp_sum[t] += static_cast<int64_t>(r.qp) * mb_count;
  mbs[t] += mb_count;
  pic_bits[t] += r.bits;
  param_set_bits += r.param_set_bits;
  bit_use[t] += r.bit_use;
  for (int i = 0; i < 9; ++i) mode_use[t][i] += r.mb_counts[i];
}

std::string jm_stats_dat(const EncoderParams& p, const JmStats& s) {
  std::string o;
  const int frames = s.frames > 0 ? s.frames : 1;
  const int64_t total_bits = s.pic_bits[0] + s.pic_bits[1] + s.param_set_bits;
  put(o, " -------------------------------------------------------------- \n");
  put(o, "  This file contains statistics for the last encoded sequence   \n");
  put(o, " -------------------------------------------------------------- \n");
  put(o, " Sequence                     : %s\n", p.input_file.c_str());
  put(o, " No.of coded pictures         : %4d\n", s.frames);
  put(o, " Freq. for encoded bitstream  : %4.0f\n", static_cast<double>(out_rate(p)));
  put(o, " I Slice Bitrate(kb/s)        : %6.2f\n", bitrate_of(s.pic_bits[0], p, frames) / 1000.0);
  put(o, " P Slice Bitrate(kb/s)        : %6.2f\n", bitrate_of(s.pic_bits[1], p, frames) / 1000.0);
  put(o, " B Slice Bitrate(kb/s)        : %6.2f\n", 0.0);
  put(o, " Total Bitrate(kb/s)          : %6.2f\n", bitrate_of(total_bits, p, frames) / 1000.0);
  const int metrics[3] = {p.me_distortion_fpel, p.me_distortion_hpel, p.me_distortion_qpel};
  for (int i = 0; i < 3; ++i) put(o, " ME Level %1d Metric            : %s\n", i, kMetric[metrics[i]]);
  put(o, " Mode Decision Metric         : %s\n", kMetric[p.md_distortion]);
  put(o, " ME for components            : Y\n");
  put(o, " Image format                 : %dx%d\n", p.source_width, p.source_height);
  put(o, " Error robustness             : Off\n");
  put(o, " Search range                 : %d\n", p.search_range);
  put(o, " Total number of references   : %d\n", p.num_ref_frames);
  put(o, " References for P slices      : %d\n", p.p_list0_refs ? p.p_list0_refs : p.num_ref_frames);
  put(o, " Profile/Level IDC            : (%d,%d)\n", p.profile_idc, p.level_idc);
  put(o, " Entropy coding method        : CAVLC\n");
  put(o, " Search range restrictions    : none\n");
  put(o, " RD-optimized mode decision   : %s\n", p.rd_optimization ? "used" : "not used");

  const float(*sl)[3] = s.psnr_avg_of;
  put(o, "\n ---------------------|----------------|---------------|");
  put(o, "\n     Item             |     Intra      |   All frames  |");
  put(o, "\n ---------------------|----------------|---------------|");
  put(o, "\n SNR Y(dB)            |");
  put(o, " %5.2f          |", static_cast<double>(sl[0][0]));
  put(o, " %5.2f         |", static_cast<double>(s.psnr_avg[0]));
  put(o, "\n SNR U/V (dB)         |");
  put(o, " %5.2f/%5.2f    |", static_cast<double>(sl[0][1]), static_cast<double>(sl[0][2]));
  put(o, " %5.2f/%5.2f   |", static_cast<double>(s.psnr_avg[1]), static_cast<double>(s.psnr_avg[2]));
  put(o, "\n ---------------------|----------------|---------------|");
  put(o, "\n");

  put(o, "\n ---------------------|----------------|---------------|---------------|");
  put(o, "\n     SNR              |        I       |       P       |       B       |");
  put(o, "\n ---------------------|----------------|---------------|---------------|");
  const char* rows[3] = {"\n SNR Y(dB)            |", "\n SNR U(dB)            |", "\n SNR V(dB)            |"};
  for (int c = 0; c < 3; ++c) {
    put(o, "%s      %5.3f    |     %5.3f    |     %5.3f    |", rows[c], static_cast<double>(sl[0][c]),
        static_cast<double>(sl[1][c]), 0.0);
  }
  put(o, "\n ---------------------|----------------|---------------|---------------|");
  put(o, "\n");

  auto ave_qp = [&](int t) {
    return static_cast<double>(static_cast<float>(s.qp_sum[t]) /
                               std::fmax(1.0, static_cast<float>(s.mbs[t])));
  };
  put(o, "\n ---------------------|----------------|---------------|---------------|");
  put(o, "\n     Ave Quant        |        I       |       P       |       B       |");
  put(o, "\n ---------------------|----------------|---------------|---------------|");
  put(o, "\n        QP            |      %5.3f    |     %5.3f    |     %5.3f    |", ave_qp(0), ave_qp(1), 0.0);
  put(o, "\n ---------------------|----------------|---------------|---------------|");
  put(o, "\n");

  const int64_t* mi = s.mode_use[0];
  put(o, "\n ---------------------|----------------|");
  put(o, "\n   Intra              |   Mode used    |");
  put(o, "\n ---------------------|----------------|");
  put(o, "\n Mode 0  intra 4x4    |  %5lld         |", static_cast<long long>(mi[kI4]));
  put(o, "\n Mode 1  intra 8x8    |  %5lld         |", 0LL);
  put(o, "\n Mode 2+ intra 16x16  |  %5lld         |", static_cast<long long>(mi[kI16]));
  put(o, "\n Mode    intra IPCM   |  %5lld         |", static_cast<long long>(mi[kPcm]));

  // report_slice_pred_stats: bit_use[P][0] is the number of P pictures (at least 1).
  const double p_pictures = s.frames_of[1] > 0 ? s.frames_of[1] : 1;
  double mean_motion_p = 0;
  if (s.frames_of[1] != 0) {
    const int64_t* mp = s.mode_use[1];
    const int64_t* bm = s.bit_use[1].motion_by_type;
    const int64_t p8 = mp[k8x8] + mp[k8x8Ref0], bm8 = bm[k8x8] + bm[k8x8Ref0];
    put(o, "\n ---------------------|----------------|-----------------|");
    put(o, "\n   %8s           |   Mode used    | MotionInfo bits |", "P Slice ");
    put(o, "\n ---------------------|----------------|-----------------|");
    put(o, "\n Mode  0  (copy)      |  %5lld         |    %8.2f     |", static_cast<long long>(mp[kSkip]),
        bm[kSkip] / p_pictures);
    put(o, "\n Mode  1  (16x16)     |  %5lld         |    %8.2f     |", static_cast<long long>(mp[k16x16]),
        bm[k16x16] / p_pictures);
    put(o, "\n Mode  2  (16x8)      |  %5lld         |    %8.2f     |", static_cast<long long>(mp[k16x8]),
        bm[k16x8] / p_pictures);
    put(o, "\n Mode  3  (8x16)      |  %5lld         |    %8.2f     |", static_cast<long long>(mp[k8x16]),
        bm[k8x16] / p_pictures);
    put(o, "\n Mode  4  (8x8)       |  %5lld         |    %8.2f     |", static_cast<long long>(p8), bm8 / p_pictures);
    put(o, "\n Mode  5  intra 4x4   |  %5lld         |-----------------|", static_cast<long long>(mp[kI4]));
    put(o, "\n Mode  6  intra 8x8   |  %5lld         |", 0LL);
    put(o, "\n Mode  7+ intra 16x16 |  %5lld         |", static_cast<long long>(mp[kI16]));
    put(o, "\n Mode     intra IPCM  |  %5lld         |", static_cast<long long>(mp[kPcm]));
    mean_motion_p = static_cast<double>(bm[kSkip] + bm[k16x16] + bm[k16x8] + bm[k8x16] + bm8) / p_pictures;
  }
  put(o, "\n ---------------------|----------------|");
  put(o, "\n");

  // Bit usage: JM divides by the number of pictures of the type as float (I may be 0 pictures: JM then prints
  // its inf/nan the same way).
  const float n_i = static_cast<float>(s.frames_of[0]), n_p = static_cast<float>(p_pictures);
  auto row = [&](const char* label, int64_t i, int64_t pp, bool four_columns) {
    put(o, "%s", label);
    put(o, " %10.2f     |", static_cast<double>(static_cast<float>(i) / n_i));
    put(o, " %10.2f     |", static_cast<double>(static_cast<float>(pp) / n_p));
    put(o, " %10.2f     |", 0.0);
    if (four_columns) put(o, " %10.2f     |", 0.0);
  };
  const PictureBitUse& bi = s.bit_use[0];
  const PictureBitUse& bp = s.bit_use[1];
  put(o, "\n ---------------------|----------------|----------------|----------------|----------------|");
  put(o, "\n  Bit usage:          |      Intra     |      Inter     |    B frame     |    SP frame    |");
  put(o, "\n ---------------------|----------------|----------------|----------------|----------------|");
  row("\n Header               |", bi.header, bp.header, false);
  row("\n Mode                 |", bi.mode, bp.mode, false);
  put(o, "\n Motion Info          |");
  put(o, "        ./.     |");
  put(o, " %10.2f     |", mean_motion_p);
  put(o, " %10.2f     |", 0.0);
  row("\n CBP Y/C              |", bi.cbp, bp.cbp, false);
  row("\n Coeffs. Y            |", bi.coeff_y, bp.coeff_y, true);
  row("\n Coeffs. C            |", bi.coeff_c, bp.coeff_c, true);
  row("\n Coeffs. CB           |", 0, 0, true);
  row("\n Coeffs. CR           |", 0, 0, true);
  row("\n Delta quant          |", bi.dquant, bp.dquant, false);
  row("\n Stuffing Bits        |", 0, 0, false);
  put(o, "\n ---------------------|----------------|----------------|----------------|");
  put(o, "\n average bits/frame   |");
  put(o, " %10.2f     |", static_cast<double>(static_cast<float>(bi.syntax()) / n_i));
  put(o, " %10.2f     |", static_cast<double>(static_cast<float>(bp.syntax()) / n_p));
  put(o, " %10.2f     |", 0.0);
  put(o, "\n ---------------------|----------------|----------------|----------------|");
  put(o, "\n");
  return o;
}

std::string jm_log_header() {
  const std::string rule(306, '-');
  std::string o;
  put(o, " %s \n", rule.c_str());
  put(o, "|%-306s|\n",
      "                          Encoder statistics. This file is generated during first encoding session, new "
      "sessions will be appended");
  put(o, " %s \n", rule.c_str());
  put(o, "|     ver     | Date  | Time  |               Sequence                 | #Img |P/MbInt| QPI| QPP| QPB| "
         "Format  |Iperiod| #B | FMES | Hdmd | S.R |#Ref | Freq |Coding|RD-opt|Intra upd|8x8Tr| SNRY 1| SNRU 1| "
         "SNRV 1| SNRY N| SNRU N| SNRV N|#Bitr I|#Bitr P|#Bitr B|#Bitr IPB|     Total Time   |      Me Time     |\n");
  put(o, " %s \n", rule.c_str());
  return o;
}

std::string jm_log_row(const EncoderParams& p, const JmStats& s, const std::string& version, double total_ms,
                       double me_ms, std::time_t now) {
  std::string o;
  put(o, "|%5s/%-5s", version.c_str(), "gme264");
  char date[64], clock[64];
  std::tm tmv;
  localtime_r(&now, &tmv);
  std::strftime(date, sizeof date, "%d-%b-%Y", &tmv);
  std::strftime(clock, sizeof clock, "%H:%M:%S", &tmv);
  put(o, "| %1.5s |", date);
  put(o, " %1.5s |", clock);
  const std::string& f = p.input_file;
  put(o, "%40.40s|", f.substr(f.size() > 40 ? f.size() - 40 : 0).c_str());  // the name's last 40 characters
  put(o, "%5d |  %d/%d  |", p.frames_to_encode, 0, 0);
  put(o, " %-3d| %-3d| %-3d|", p.qp_i, p.qp_p, 24);  // QPBSlice: JM's default (no B slices here)
  put(o, "%4dx%-4d|", p.source_width, p.source_height);
  put(o, "  %3d  |%3d |", p.intra_period, 0);
  put(o, "%s", p.search_mode == -1 ? "  FS  |" : "  FFS |");
  put(o, "  %1d%1d%1d |", p.me_distortion_fpel, p.me_distortion_hpel, p.me_distortion_qpel);
  put(o, " %3d | %2d  |", p.search_range, p.num_ref_frames);
  put(o, " %5.2f|", static_cast<double>(out_rate(p)));
  put(o, " CAVLC|");
  put(o, "   %d  |", p.rd_optimization);
  put(o, "   OFF   |");
  put(o, "  %d  |", 0);
  const float(*sl)[3] = s.psnr_avg_of;
  put(o, "%7.3f|%7.3f|%7.3f|", static_cast<double>(sl[0][0]), static_cast<double>(sl[0][1]),
      static_cast<double>(sl[0][2]));
  put(o, "%7.3f|%7.3f|%7.3f|", static_cast<double>(s.psnr_avg[0]), static_cast<double>(s.psnr_avg[1]),
      static_cast<double>(s.psnr_avg[2]));
  const int frames = s.frames > 0 ? s.frames : 1;
  put(o, "%7.0f|%7.0f|%7.0f|%9.0f|", static_cast<double>(bitrate_of(s.pic_bits[0], p, frames)),
      static_cast<double>(bitrate_of(s.pic_bits[1], p, frames)), 0.0,
      static_cast<double>(bitrate_of(s.pic_bits[0] + s.pic_bits[1] + s.param_set_bits, p, frames)));
  put(o, "   %12d   |   %12d   |", static_cast<int>(total_ms), static_cast<int>(me_ms));
  put(o, "\n");
  return o;
}

void append_jm_log(const std::string& path, const std::string& row) {
  struct stat st;
  const bool exists = stat(path.c_str(), &st) == 0;
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) throw std::runtime_error("cannot append to '" + path + "' (JM's log.dat of every run)");
  const std::string text = exists ? row : jm_log_header() + row;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("writing '" + path + "' failed");
}

}  // namespace gme
