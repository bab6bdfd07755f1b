#include "encoder/params_check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <sstream>

#include "common/yuv_io.h"

namespace gme {
namespace {

// FrameSkip's upper end: a POC step of 2 (FrameSkip + 1) must stay an int.
constexpr int kMaxFrameSkip = 1000000000;

// H.264 Table A-1: what a level allows (macroblocks per second, per frame, in the decoded picture buffer).
struct LevelLimits {
  int level_idc;  // as LevelIDC (9: level 1b)
  const char* name;
  int64_t max_mbps;
  int max_fs;
  int max_dpb_mbs;
};
constexpr LevelLimits kLevels[] = {
    {9, "1b", 1485, 99, 396},          {10, "1", 1485, 99, 396},          {11, "1.1", 3000, 396, 900},
    {12, "1.2", 6000, 396, 2376},      {13, "1.3", 11880, 396, 2376},     {20, "2", 11880, 396, 2376},
    {21, "2.1", 19800, 792, 4752},     {22, "2.2", 20250, 1620, 8100},    {30, "3", 40500, 1620, 8100},
    {31, "3.1", 108000, 3600, 18000},  {32, "3.2", 216000, 5120, 20480},  {40, "4", 245760, 8192, 32768},
    {41, "4.1", 245760, 8192, 32768},  {42, "4.2", 522240, 8704, 34816},  {50, "5", 589824, 22080, 110400},
    {51, "5.1", 983040, 36864, 184320}, {52, "5.2", 2073600, 36864, 184320}};

const LevelLimits* level_limits(int level_idc) {
  for (const LevelLimits& l : kLevels)
    if (l.level_idc == level_idc) return &l;
  return nullptr;
}

// The lowest level that allows pictures of `frame_mbs` macroblocks and whose picture buffer holds `refs` of them
// (nullptr: none).
const LevelLimits* lowest_level_for_refs(int frame_mbs, int refs) {
  for (const LevelLimits& l : kLevels)
    if (l.level_idc != 9 && l.max_fs >= frame_mbs && l.max_dpb_mbs / frame_mbs >= refs) return &l;
  return nullptr;
}

int frame_mbs(const EncoderParams& p) { return ((p.source_width + 15) / 16) * ((p.source_height + 15) / 16); }

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

class Checker {
 public:
  explicit Checker(std::vector<ParamProblem>* out) : out_(out) {}

  void add(const char* key, const std::string& value, const std::string& expected) {
    out_->push_back({key, value, expected});
  }
  // An integer in [lo, hi]; hi < 0: no upper end (">= lo").
  bool range(const char* key, int64_t v, int64_t lo, int64_t hi) {
    if (v >= lo && (hi < lo || v <= hi)) return true;
    add(key, std::to_string(v),
        hi < lo ? "expected an integer >= " + std::to_string(lo)
                : "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return false;
  }
  bool one_of(const char* key, int v, std::initializer_list<int> allowed) {
    std::string list;
    for (int a : allowed) {
      if (v == a) return true;
      list += (list.empty() ? "" : ", ") + std::to_string(a);
    }
    add(key, std::to_string(v), "not supported; expected one of " + list);
    return false;
  }

 private:
  std::vector<ParamProblem>* out_;
};

}  // namespace

std::vector<ParamProblem> check_params(const EncoderParams& p, ParamStage stage) {
  std::vector<ParamProblem> problems;
  Checker c(&problems);
  const bool before_input = stage == ParamStage::kBeforeInput;

  // ---- Input / output
  c.range("InputHeaderLength", p.input_header_length, 0, -1);
  c.range("StartFrame", p.start_frame, 0, -1);
  if (p.frames_to_encode < 1 && !(before_input && p.frames_to_encode == -1))
    c.add("FramesToBeEncoded", std::to_string(p.frames_to_encode),
          p.frames_to_encode == 0 ? "not enough frames to encode; expected >= 1, or -1 for the whole input"
                                  : "expected >= 1, or -1 for the whole input");
  c.range("FrameSkip", p.frame_skip, 0, kMaxFrameSkip);
  for (int i = 0; i < 2; ++i) {
    const char* key = i ? "SourceHeight" : "SourceWidth";
    const int v = i ? p.source_height : p.source_width;
    if (c.range(key, v, 2, kMaxPictureSide) && v % 2)
      c.add(key, std::to_string(v), std::string("expected an even ") + (i ? "height" : "width") + " (4:2:0 chroma)");
  }
  if (!(p.frame_rate > 0 && p.frame_rate <= 480)) c.add("FrameRate", num(p.frame_rate), "expected a number in (0, 480]");

  // ---- Sequence structure
  c.one_of("ProfileIDC", p.profile_idc, {66});
  c.one_of("LevelIDC", p.level_idc, {9, 10, 11, 12, 13, 20, 21, 22, 30, 31, 32, 40, 41, 42, 50, 51, 52});
  c.range("IntraPeriod", p.intra_period, 0, -1);
  c.range("IDRPeriod", p.idr_period, 0, -1);
  c.range("AdaptiveIntraPeriod", p.adaptive_intra_period, 0, 1);
  c.range("PreferDispOrder", p.prefer_disp_order, 0, 1);
  const bool refs_ok = c.range("NumberReferenceFrames", p.num_ref_frames, 1, 16);
  if (c.range("PList0References", p.p_list0_refs, 0, 16) && refs_ok && p.p_list0_refs > p.num_ref_frames)
    c.add("PList0References", std::to_string(p.p_list0_refs),
          "expected 0 or at most NumberReferenceFrames = " + std::to_string(p.num_ref_frames));
  const int log2_lo = before_input ? -1 : 0;
  const bool fnum_ok = c.range("Log2MaxFNumMinus4", p.log2_max_frame_num_minus4, log2_lo, 12);
  const bool poc_ok = c.range("Log2MaxPOCLsbMinus4", p.log2_max_poc_lsb_minus4, log2_lo, 12);
  c.one_of("PicOrderCntType", p.poc_type, {0, 2});

  // ---- Quantisation, slices
  c.range("QPISlice", p.qp_i, 0, 51);
  c.range("QPPSlice", p.qp_p, 0, 51);
  c.range("ChromaQPOffset", p.chroma_qp_offset, -12, 12);
  c.range("AdaptRndPeriod", p.adapt_rnd_period, 1, -1);
  c.range("AdaptRndWFactorIRef", p.adapt_rnd_wfactor_i_ref, 0, 4096);
  c.range("AdaptRndWFactorPRef", p.adapt_rnd_wfactor_p_ref, 0, 4096);
  c.one_of("SliceMode", p.slice_mode, {0, 1, 2});
  c.range("SliceArgument", p.slice_argument, 1, -1);

  // ---- Inter tools, mode decision
  c.range("SearchRange", p.search_range, 1, 128);
  c.one_of("SearchMode", p.search_mode, {-1, 0});
  c.one_of("MEDistortionFPel", p.me_distortion_fpel, {0});
  c.one_of("MEDistortionHPel", p.me_distortion_hpel, {0, 2});
  const bool qpel_ok = c.one_of("MEDistortionQPel", p.me_distortion_qpel, {0, 2});
  const bool md_ok = c.one_of("MDDistortion", p.md_distortion, {0, 2});
  c.one_of("RDOptimization", p.rd_optimization, {0, 1});

  // ---- Deblocking
  const char* df_disable[2] = {"DFDisableRefISlice", "DFDisableRefPSlice"};
  const char* df_alpha[2] = {"DFAlphaRefISlice", "DFAlphaRefPSlice"};
  const char* df_beta[2] = {"DFBetaRefISlice", "DFBetaRefPSlice"};
  for (int i = 0; i < 2; ++i) {
    c.range(df_disable[i], p.df_disable_idc[i], 0, 2);
    c.range(df_alpha[i], p.df_alpha[i], -6, 6);
    c.range(df_beta[i], p.df_beta[i], -6, 6);
  }

  // ---- Threads (0: one per core; the upper end keeps a typo from starting thousands of threads)
  c.range("Threads", p.threads, 0, 1024);

  // ---- GPU integer motion estimation
  c.range("GPUIntegerME", p.gpu_integer_me, 0, 1);
  c.range("GPUDevice", p.gpu_device, 0, 63);
  c.range("GPUTopK", p.gpu_top_k, 1, 16);
  c.range("GPUSearchCenter", p.gpu_search_center, 0, 1);
  c.range("GPUSubpelDistortion", p.gpu_subpel_distortion, 0, 2);
  c.range("GPUSubpelRanks", p.gpu_subpel_ranks, 1, 16);

  // ---- Rules between fields
  if (p.disable_intra4x4 && p.disable_intra16x16 && !p.enable_ipcm)
    c.add("DisableIntra16x16", "1",
          "with DisableIntra4x4 = 1 and EnableIPCM = 0 no intra prediction mode is left: at least one intra "
          "prediction mode needs to be enabled");
  bool any_inter = p.p_slice_skip;
  for (int i = 1; i <= 7; ++i) any_inter = any_inter || p.p_search[i];
  if (!any_inter && p.disable_intra_in_inter)
    c.add("DisableIntraInInter", "1",
          "with PSliceSkip = 0 and PSliceSearch16x16..PSliceSearch4x4 = 0 no macroblock type is left for P "
          "slices: enable at least one of them");
  if (p.rd_optimization == 0 && md_ok) {
    // JM 19.0 (configfile.c PatchInp): the last motion refinement stage must use the mode-decision metric.
    if (p.disable_subpel_me && p.me_distortion_fpel != p.md_distortion)
      c.add("MEDistortionFPel", std::to_string(p.me_distortion_fpel),
            "expected MDDistortion = " + std::to_string(p.md_distortion) +
                ": with RDOptimization = 0 and DisableSubpelME = 1 they must be equal (JM 19.0 rule)");
    if (!p.disable_subpel_me && qpel_ok && p.me_distortion_qpel != p.md_distortion)
      c.add("MEDistortionQPel", std::to_string(p.me_distortion_qpel),
            "expected MDDistortion = " + std::to_string(p.md_distortion) +
                ": with RDOptimization = 0 they must be equal (JM 19.0 rule)");
  }
  if (poc_ok && p.log2_max_poc_lsb_minus4 >= 0 &&
      (int64_t{1} << (p.log2_max_poc_lsb_minus4 + 3)) < int64_t{p.frame_skip} * 4)
    c.add("Log2MaxPOCLsbMinus4", std::to_string(p.log2_max_poc_lsb_minus4),
          "too small for FrameSkip = " + std::to_string(p.frame_skip) + " (JM 19.0 rule): increase it");
  // H.264 A.3.1: max_num_ref_frames <= MaxDpbFrames = Min(MaxDpbMbs / frame size in macroblocks, 16). A stream
  // past it is one its own level says a decoder need not hold.
  const LevelLimits* level = level_limits(p.level_idc);
  const bool size_ok = p.source_width >= 2 && p.source_width <= kMaxPictureSide && p.source_height >= 2 &&
                       p.source_height <= kMaxPictureSide;
  if (level && refs_ok && size_ok) {
    const int mbs = frame_mbs(p);
    const int dpb_frames = std::min(level->max_dpb_mbs / mbs, 16);
    if (p.num_ref_frames > dpb_frames) {
      const LevelLimits* enough = lowest_level_for_refs(mbs, p.num_ref_frames);
      const std::string raise = enough ? "set LevelIDC >= " + std::to_string(enough->level_idc) : "";
      const std::string lower = dpb_frames >= 1 ? "lower NumberReferenceFrames" : "";
      const std::string fix = raise.empty() ? lower : lower.empty() ? raise : raise + " or " + lower;
      c.add("NumberReferenceFrames", std::to_string(p.num_ref_frames),
            "level " + std::string(level->name) + " (LevelIDC = " + std::to_string(p.level_idc) + ") holds " +
                std::to_string(dpb_frames) + " reference frame" + (dpb_frames == 1 ? "" : "s") + " of " +
                std::to_string(p.source_width) + "x" + std::to_string(p.source_height) +
                " (MaxDpbMbs " + std::to_string(level->max_dpb_mbs) + ", H.264 Table A-1): " + fix);
    }
  }
  if (fnum_ok && refs_ok && p.log2_max_frame_num_minus4 == 0 && p.num_ref_frames == 16)
    c.add("Log2MaxFNumMinus4", "0",
          "with NumberReferenceFrames = 16 it may lead to an invalid frame_num (JM 19.0 rule): set "
          "Log2MaxFNumMinus4 >= 1");
  return problems;
}

std::vector<std::string> level_warnings(const EncoderParams& p) {
  std::vector<std::string> out;
  const LevelLimits* level = level_limits(p.level_idc);
  if (!level || p.source_width < 2 || p.source_height < 2) return out;
  const int mbs = frame_mbs(p);
  const std::string where = "LevelIDC = " + std::to_string(p.level_idc) + " (level " + level->name + ")";
  const std::string size = std::to_string(p.source_width) + "x" + std::to_string(p.source_height);
  if (mbs > level->max_fs)
    out.push_back(where + " allows pictures of at most " + std::to_string(level->max_fs) + " macroblocks; " + size +
                  " has " + std::to_string(mbs) + ": the stream claims a level it exceeds (H.264 Table A-1)");
  const double mbps = mbs * p.frame_rate;
  if (mbps > static_cast<double>(level->max_mbps))
    out.push_back(where + " allows " + std::to_string(level->max_mbps) + " macroblocks/s; " + size + " at FrameRate " +
                  num(p.frame_rate) + " needs " + std::to_string(static_cast<int64_t>(std::ceil(mbps))) +
                  ": the stream claims a level it exceeds (H.264 Table A-1)");
  return out;
}

}  // namespace gme
