// Conformance: every stream bin/lencod writes must decode with FFmpeg to exactly the encoder's reconstruction.
//
// The default suite runs a reduced matrix that still touches every option value once (2-3 frames per case);
// GME_CONFORMANCE_FULL=1 (make conformance-full) runs the cross products. Clips: synthetic ones made by bin/synth
// (always available) and, where named, the real clips of sequences/manifest.csv (sequences/make_clips.sh makes
// them; without them those cases are skipped, not passed).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/conformance_util.h"

namespace gme::conf {
namespace {

bool full_matrix() {
  const char* v = std::getenv("GME_CONFORMANCE_FULL");
  return v && std::string(v) == "1";
}

struct Case {
  std::string name;    // test name (letters, digits, _)
  std::string clip;    // "synth:WxH[:y4m|:gz|:noise]" or "real:<manifest name>" (noise: I_PCM-prone squares)
  int frames = 2;
  std::vector<std::string> params;
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
  os << c.clip << " x" << c.frames;
  for (const std::string& p : c.params) os << " " << p;
  return os;
}

// Synthetic clips are generated with a few frames more than any case uses.
Clip clip_for(const Case& c) { return clip_from_spec(c.clip, c.frames); }

std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

std::string size_name(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

Case make(const std::string& name, const std::string& clip, int frames, std::vector<std::string> params) {
  return Case{sanitize(name), clip, frames, std::move(params)};
}

// ---- Intra pictures -------------------------------------------------------------------------------------------

std::vector<std::string> qp_i(int qp) { return {"QPISlice=" + std::to_string(qp), "QPPSlice=" + std::to_string(qp)}; }

std::vector<std::string> join(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<std::pair<int, int>> kSizes = {{16, 16}, {176, 144}, {352, 288}, {640, 480}, {200, 120}, {720, 576}};

// Deblocking variants for I (k = 0) or P (k = 1) slices: on (default), off, idc 2 with offsets.
std::vector<std::pair<std::string, std::vector<std::string>>> deblock_variants(bool) {
  return {{"dbk_on", {}},
          {"dbk_off", {"DFParametersFlag=1", "DFDisableRefISlice=1", "DFDisableRefPSlice=1"}},
          {"dbk_idc2_offsets",
           {"DFParametersFlag=1", "DFDisableRefISlice=2", "DFDisableRefPSlice=2", "DFAlphaRefISlice=3",
            "DFBetaRefISlice=-2", "DFAlphaRefPSlice=-4", "DFBetaRefPSlice=5"}}};
}

std::vector<std::pair<std::string, std::vector<std::string>>> slice_variants(int w) {
  // SliceArgument in MBs chosen so that slices start in the middle of macroblock rows.
  const int mbs = (w / 16) > 1 ? (w / 16) * 3 / 2 + 1 : 2;
  return {{"slice0", {}},
          {"slice1", {"SliceMode=1", "SliceArgument=" + std::to_string(mbs)}},
          {"slice2", {"SliceMode=2", "SliceArgument=300"}}};
}

std::vector<std::pair<std::string, std::vector<std::string>>> intra_variants() {
  return {{"intra_all", {}},
          {"i4x4_only", {"DisableIntra16x16=1"}},
          {"i16x16_only", {"DisableIntra4x4=1"}},
          {"ipcm", {"EnableIPCM=1"}}};
}

std::vector<Case> intra_cases() {
  std::vector<Case> v;
  const std::vector<std::string> ionly = {"IntraPeriod=1"};
  if (!full_matrix()) {
    for (int qp : {0, 1, 12, 28, 40, 51}) v.push_back(make("qp" + std::to_string(qp), "synth:176x144", 2, join(ionly, qp_i(qp))));
    for (auto [w, h] : kSizes) {
      if (w == 176) continue;
      v.push_back(make("size" + size_name(w, h), "synth:" + size_name(w, h), w * h > 200000 ? 1 : 2, ionly));
    }
    for (auto& [n, p] : slice_variants(176))
      if (n != "slice0") v.push_back(make(n, "synth:176x144", 2, join(ionly, p)));
    v.push_back(make("slice1_200x120", "synth:200x120", 2, join(ionly, {"SliceMode=1", "SliceArgument=5"})));
    v.push_back(make("slice2_small_200x120", "synth:200x120", 2, join(ionly, {"SliceMode=2", "SliceArgument=60"})));
    v.push_back(make("dbk_off", "synth:176x144", 2, join(ionly, deblock_variants(false)[1].second)));
    v.push_back(make("dbk_idc2_offsets_slices", "synth:176x144", 2,
                     join(join(ionly, deblock_variants(false)[2].second), {"SliceMode=1", "SliceArgument=13"})));
    v.push_back(make("dbk_offsets_m6_p6_qp36", "synth:176x144", 2,
                     join(join(ionly, qp_i(36)), {"DFParametersFlag=1", "DFAlphaRefISlice=-6", "DFBetaRefISlice=6"})));
    v.push_back(make("dbk_offsets_p6_m6_qp22", "synth:176x144", 2,
                     join(join(ionly, qp_i(22)), {"DFParametersFlag=1", "DFAlphaRefISlice=6", "DFBetaRefISlice=-6"})));
    v.push_back(make("i4x4_only", "synth:176x144", 2, join(ionly, {"DisableIntra16x16=1"})));
    v.push_back(make("i16x16_only", "synth:176x144", 2, join(ionly, {"DisableIntra4x4=1"})));
    v.push_back(make("ipcm_rdo1_qp0", "synth:176x144:noise", 2, join(join(ionly, qp_i(0)), {"EnableIPCM=1", "RDOptimization=1"})));
    v.push_back(make("ipcm_rdo1_qp6_slices", "synth:176x144:noise", 2,
                     join(join(ionly, qp_i(6)), {"EnableIPCM=1", "RDOptimization=1", "SliceMode=1", "SliceArgument=13"})));
    v.push_back(make("ipcm_rdo1_qp28", "synth:176x144", 2, join(ionly, {"EnableIPCM=1", "RDOptimization=1"})));
    v.push_back(make("rdo1_qp28", "synth:176x144", 2, join(ionly, {"RDOptimization=1"})));
    v.push_back(make("rdo1_qp51", "synth:176x144", 2, join(join(ionly, qp_i(51)), {"RDOptimization=1"})));
    v.push_back(make("chroma_offset_m5", "synth:176x144", 2, join(join(ionly, qp_i(36)), {"ChromaQPOffset=-5"})));
    v.push_back(make("chroma_offset_p7", "synth:176x144", 2, join(join(ionly, qp_i(40)), {"ChromaQPOffset=7"})));
    v.push_back(make("input_y4m", "synth:176x144:y4m", 2, ionly));
    v.push_back(make("input_yuv_gz", "synth:176x144:gz", 2, ionly));
    v.push_back(make("real_megamind_176x144", "real:megamind_176x144", 2, ionly));
    v.push_back(make("real_tree_200x120", "real:tree_200x120", 2, ionly));
    return v;
  }
  // Full: QP x size x slice mode x deblocking x intra tools x RDO (one picture each).
  for (int qp : {0, 1, 12, 28, 40, 51})
    for (auto [w, h] : kSizes)
      for (auto& [sn, sp] : slice_variants(w))
        for (auto& [dn, dp] : deblock_variants(false))
          for (auto& [in, ip] : intra_variants())
            for (int rdo : {0, 1})
              v.push_back(make("qp" + std::to_string(qp) + "_" + size_name(w, h) + "_" + sn + "_" + dn + "_" + in +
                                   "_rdo" + std::to_string(rdo),
                               "synth:" + size_name(w, h) + (in == "ipcm" ? ":noise" : ""), 1,
                               join(join(join(join(ionly, qp_i(qp)), sp), dp),
                                    join(ip, {"RDOptimization=" + std::to_string(rdo)}))));
  for (const char* f : {"y4m", "gz"}) v.push_back(make(std::string("input_") + f, std::string("synth:352x288:") + f, 2, ionly));
  for (const char* r : {"megamind_176x144", "megamind_352x288", "megamind_640x480", "vtest_720x576", "tree_200x120"})
    v.push_back(make(std::string("real_") + r, std::string("real:") + r, 2, ionly));
  return v;
}

// ---- P pictures ---------------------------------------------------------------------------------------------

const char* kSearchKeys[8] = {"", "PSliceSearch16x16", "PSliceSearch16x8", "PSliceSearch8x16", "PSliceSearch8x8",
                              "PSliceSearch8x4", "PSliceSearch4x8", "PSliceSearch4x4"};

std::vector<std::pair<std::string, std::vector<std::string>>> search_variants() {
  std::vector<std::pair<std::string, std::vector<std::string>>> v = {{"allblocks", {}}};
  for (int k = 1; k <= 7; ++k) v.push_back({std::string("no") + (kSearchKeys[k] + 12), {std::string(kSearchKeys[k]) + "=0"}});
  std::vector<std::string> only16;
  for (int k = 2; k <= 7; ++k) only16.push_back(std::string(kSearchKeys[k]) + "=0");
  v.push_back({"only16x16", only16});
  std::vector<std::string> only4x4;
  for (int k = 1; k <= 6; ++k) only4x4.push_back(std::string(kSearchKeys[k]) + "=0");
  v.push_back({"only4x4", only4x4});
  return v;
}

std::vector<Case> inter_cases() {
  std::vector<Case> v;
  const std::vector<std::string> p0 = {"IntraPeriod=0"};
  const std::string q = "synth:176x144";
  if (!full_matrix()) {
    for (int qp : {0, 20, 28, 36, 51}) v.push_back(make("qp" + std::to_string(qp), q, 3, join(p0, qp_i(qp))));
    v.push_back(make("rdo1_qp28", q, 3, join(p0, {"RDOptimization=1"})));
    v.push_back(make("rdo1_qp36", q, 3, join(join(p0, qp_i(36)), {"RDOptimization=1"})));
    for (auto& [n, p] : search_variants())
      if (n != "allblocks") v.push_back(make(n, q, 3, join(p0, p)));
    v.push_back(make("no_pskip", q, 3, join(p0, {"PSliceSkip=0"})));
    v.push_back(make("no_pskip_rdo1", q, 3, join(p0, {"PSliceSkip=0", "RDOptimization=1"})));
    v.push_back(make("ipcm_in_p_qp6", "synth:176x144:noise", 3, join(join(p0, qp_i(6)), {"EnableIPCM=1", "RDOptimization=1"})));
    for (int sr : {1, 8, 16, 64}) v.push_back(make("sr" + std::to_string(sr), q, 3, join(p0, {"SearchRange=" + std::to_string(sr)})));
    v.push_back(make("refs3", q, 5, join(p0, {"NumberReferenceFrames=3", "SearchRange=8"})));
    v.push_back(make("refs5", q, 7, join(p0, {"NumberReferenceFrames=5", "SearchRange=8"})));
    v.push_back(make("refs5_rdo1", "synth:200x120", 6, join(p0, {"NumberReferenceFrames=5", "SearchRange=8", "RDOptimization=1"})));
    v.push_back(make("intraperiod1", q, 3, {"IntraPeriod=1"}));
    v.push_back(make("intraperiod2", q, 4, {"IntraPeriod=2"}));
    v.push_back(make("intraperiod12", q, 3, {"IntraPeriod=12"}));
    v.push_back(make("idrperiod3", q, 5, {"IntraPeriod=3", "IDRPeriod=3", "ResendSPS=2"}));
    // frame_num wraps after 16 pictures and pic_order_cnt_lsb after 8 (2 per frame), with references across it.
    v.push_back(make("framenum_poc_wrap", "synth:16x16", 20,
                     join(p0, {"Log2MaxFNumMinus4=0", "Log2MaxPOCLsbMinus4=0", "NumberReferenceFrames=3"})));
    v.push_back(make("poc_type2", q, 4, join(p0, {"PicOrderCntType=2"})));
    v.push_back(make("slice1", q, 3, join(p0, {"SliceMode=1", "SliceArgument=10"})));
    v.push_back(make("slice2", q, 3, join(p0, {"SliceMode=2", "SliceArgument=100"})));
    v.push_back(make("dbk_off", q, 3, join(p0, deblock_variants(true)[1].second)));
    v.push_back(make("dbk_idc2_offsets_slices", q, 3,
                     join(join(p0, deblock_variants(true)[2].second), {"SliceMode=1", "SliceArgument=13"})));
    v.push_back(make("dbk_offsets_qp36", q, 3,
                     join(join(p0, qp_i(36)), {"DFParametersFlag=1", "DFAlphaRefPSlice=6", "DFBetaRefPSlice=-6"})));
    v.push_back(make("chroma_offset_m4", q, 3, join(p0, {"ChromaQPOffset=-4"})));
    v.push_back(make("adaptive_rounding", q, 3, join(p0, {"AdaptiveRounding=1", "AdaptRndChroma=1"})));
    v.push_back(make("adaptive_rounding_rdo1_slices", q, 3,
                     join(p0, {"AdaptiveRounding=1", "RDOptimization=1", "SliceMode=2", "SliceArgument=200"})));
    v.push_back(make("constrained_intra", q, 3, join(p0, {"UseConstrainedIntraPred=1"})));
    v.push_back(make("size16x16", "synth:16x16", 4, p0));
    v.push_back(make("size200x120", "synth:200x120", 3, p0));
    v.push_back(make("size352x288", "synth:352x288", 2, p0));
    v.push_back(make("size640x480", "synth:640x480", 2, join(p0, {"SearchRange=16"})));
    v.push_back(make("size720x576", "synth:720x576", 2, join(p0, {"SearchRange=16"})));
    v.push_back(make("input_yuv_gz", "synth:176x144:gz", 3, p0));
    v.push_back(make("input_y4m", "synth:176x144:y4m", 3, p0));
    v.push_back(make("real_megamind_176x144", "real:megamind_176x144", 3, p0));
    v.push_back(make("real_tree_200x120_refs3", "real:tree_200x120", 4, join(p0, {"NumberReferenceFrames=3"})));
    v.push_back(make("real_vtest_352x288", "real:vtest_352x288", 2, p0));
    v.push_back(make("real_megamind_640x480", "real:megamind_640x480", 2, join(p0, {"SearchRange=16"})));
    v.push_back(make("gpu_me", q, 3, join(p0, {"GPUIntegerME=1"})));
    v.push_back(make("gpu_me_topk1", q, 3, join(p0, {"GPUIntegerME=1", "GPUTopK=1"})));
    v.push_back(make("gpu_me_center1_refs3", q, 5, join(p0, {"GPUIntegerME=1", "GPUSearchCenter=1", "NumberReferenceFrames=3"})));
    v.push_back(make("gpu_me_rdo1_slices", q, 3, join(p0, {"GPUIntegerME=1", "RDOptimization=1", "SliceMode=1", "SliceArgument=10"})));
    v.push_back(make("gpu_me_real_tree", "real:tree_200x120", 3, join(p0, {"GPUIntegerME=1"})));
    // Longer runs: reference lists filling up and sliding, intra refresh, real motion over several pictures.
    v.push_back(make("long_real_megamind_352x288_refs3_rdo1", "real:megamind_352x288", 8,
                     {"IntraPeriod=6", "NumberReferenceFrames=3", "RDOptimization=1"}));
    v.push_back(make("long_real_vtest_720x576", "real:vtest_720x576", 3, join(p0, {"SearchRange=16"})));
    v.push_back(make("long_real_megamind_640x480_gpu", "real:megamind_640x480", 4,
                     join(p0, {"GPUIntegerME=1", "GPUSearchCenter=1", "NumberReferenceFrames=2"})));
    v.push_back(make("long_synth_640x480_slices", "synth:640x480", 6,
                     {"IntraPeriod=4", "SliceMode=2", "SliceArgument=1500", "SearchRange=16"}));
    // Several threads (doc/THREADS.md; tests/test_golden.cpp runs every golden row at 2, 3 and 8 threads too).
    v.push_back(make("threads3_rdo1_qp36", q, 4, join(join(p0, qp_i(36)), {"RDOptimization=1", "Threads=3"})));
    v.push_back(make("threads2_gpu_me_slice1", q, 3,
                     join(p0, {"GPUIntegerME=1", "SliceMode=1", "SliceArgument=10", "Threads=2"})));
    v.push_back(make("threads4_slice2", q, 3, join(p0, {"SliceMode=2", "SliceArgument=100", "Threads=4"})));
    v.push_back(make("threads8_ipcm_in_p_qp6", "synth:176x144:noise", 3,
                     join(join(p0, qp_i(6)), {"EnableIPCM=1", "RDOptimization=1", "Threads=8"})));
    v.push_back(make("threads0_real_megamind_640x480", "real:megamind_640x480", 3, join(p0, {"Threads=0"})));
    return v;
  }
  // Full: QP x RDO x slice mode x deblocking x size, then every ME / reference / structure option crossed with
  // QP 28/36 x RDO 0/1 at 176x144, and the real clips with both integer-ME paths.
  for (int qp : {0, 20, 28, 36, 51})
    for (int rdo : {0, 1})
      for (auto [w, h] : kSizes)
        for (auto& [sn, sp] : slice_variants(w))
          for (auto& [dn, dp] : deblock_variants(true))
            v.push_back(make("qp" + std::to_string(qp) + "_rdo" + std::to_string(rdo) + "_" + size_name(w, h) + "_" +
                                 sn + "_" + dn,
                             "synth:" + size_name(w, h), w * h > 200000 ? 2 : 3,
                             join(join(join(p0, qp_i(qp)), join(sp, dp)),
                                  {"RDOptimization=" + std::to_string(rdo), "SearchRange=16"})));
  for (int qp : {28, 36})
    for (int rdo : {0, 1}) {
      const std::string base = "qp" + std::to_string(qp) + "_rdo" + std::to_string(rdo) + "_";
      const std::vector<std::string> bp = join(qp_i(qp), {"RDOptimization=" + std::to_string(rdo)});
      for (auto& [n, p] : search_variants())
        for (int skip : {0, 1})
          v.push_back(make(base + n + "_skip" + std::to_string(skip), q, 3,
                           join(join(join(p0, bp), p), {"PSliceSkip=" + std::to_string(skip)})));
      for (int sr : {1, 8, 16, 32, 64})
        for (int refs : {1, 3, 5})
          for (int ip : {0, 1, 12})
            for (int gpu : {0, 1})
              v.push_back(make(base + "sr" + std::to_string(sr) + "_refs" + std::to_string(refs) + "_ip" +
                                   std::to_string(ip) + "_gpu" + std::to_string(gpu),
                               q, refs + 2,
                               join(bp, {"SearchRange=" + std::to_string(sr), "NumberReferenceFrames=" + std::to_string(refs),
                                         "IntraPeriod=" + std::to_string(ip), "GPUIntegerME=" + std::to_string(gpu)})));
    }
  for (const char* r : {"megamind_176x144", "megamind_352x288", "megamind_640x480", "vtest_352x288", "vtest_720x576",
                        "tree_200x120"})
    for (int gpu : {0, 1})
      for (int threads : {1, 5})
        v.push_back(make(std::string("real_") + r + "_gpu" + std::to_string(gpu) +
                             (threads > 1 ? "_threads" + std::to_string(threads) : ""),
                         std::string("real:") + r, 4,
                         join(p0, {"NumberReferenceFrames=3", "GPUIntegerME=" + std::to_string(gpu),
                                   "Threads=" + std::to_string(threads), "RDOptimization=" + std::to_string(threads > 1)})));
  for (const char* f : {"y4m", "gz"}) v.push_back(make(std::string("input_") + f, std::string("synth:176x144:") + f, 3, p0));
  return v;
}

class ConformanceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ConformanceTest, DecodesToRecon) {
  const Case& c = GetParam();
  const Clip clip = clip_for(c);
  if (clip.file.empty()) {
    if (c.clip.rfind("real:", 0) == 0)
      GTEST_SKIP() << "clip " << c.clip.substr(5) << " not found: run sequences/make_clips.sh";
    FAIL() << "no clip for " << c.clip;
  }
  ASSERT_LE(c.frames, clip.frames) << "clip " << clip.file << " is too short";
  EncodeOutput out;
  ASSERT_TRUE(encode_and_verify(clip, c.frames, c.params, &out));
  // A slice-mode case must really cut pictures into several slices where it can (else it tested nothing): with
  // SliceMode 1 when a picture has more macroblocks than SliceArgument, with SliceMode 2 when the pictures' slice
  // data average more than twice SliceArgument bytes.
  int mode = 0, arg = 0;
  for (const std::string& p : c.params) {
    if (p.rfind("SliceMode=", 0) == 0) mode = std::stoi(p.substr(10));
    if (p.rfind("SliceArgument=", 0) == 0) arg = std::stoi(p.substr(14));
  }
  if (mode != 0 && arg > 0) {
    size_t slices = 0, slice_bytes = 0;
    for (const NalUnit& u : split_annexb(out.stream))
      if (u.type == 1 || u.type == 5) {
        ++slices;
        slice_bytes += u.size;
      }
    const int mbs = ((clip.width + 15) / 16) * ((clip.height + 15) / 16);
    const bool must_split = mode == 1 ? mbs > arg : slice_bytes > 2 * static_cast<size_t>(arg) * c.frames;
    if (must_split) {
      EXPECT_GT(slices, static_cast<size_t>(c.frames)) << "no picture has more than one slice\n  " << out.lencod_cmd;
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(ConformanceI, ConformanceTest, ::testing::ValuesIn(intra_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(ConformanceP, ConformanceTest, ::testing::ValuesIn(inter_cases()), case_name);

// I_PCM must really be chosen where it pays (else the ipcm cases above test nothing): the noise clip at QP 6 with
// EnableIPCM = 1 and RD mode decision, counted from the StatsFile's mb_counts (MbType order: I4x4, I16x16, IPCM, ...).
TEST(ConformanceIpcm, ChosenOnNoise) {
  const Clip clip = synth_clip(176, 144, 8, "yuv", "--mode noise");
  ASSERT_FALSE(clip.file.empty());
  EncodeOutput out;
  ASSERT_TRUE(encode_and_verify(clip, 2, {"IntraPeriod=0", "QPISlice=6", "QPPSlice=6", "EnableIPCM=1", "RDOptimization=1"},
                                &out, true));
  std::istringstream lines(out.stats);
  std::string line;
  int pictures = 0;
  while (std::getline(lines, line)) {
    const size_t k = line.find("\"mb_counts\":[");
    if (k == std::string::npos) continue;
    int counts[3] = {0, 0, 0};
    ASSERT_EQ(std::sscanf(line.c_str() + k, "\"mb_counts\":[%d,%d,%d", &counts[0], &counts[1], &counts[2]), 3) << line;
    EXPECT_GT(counts[2], 0) << "no I_PCM macroblock in picture " << pictures << ": " << line << "\n  " << clip.made_by
                            << "\n  " << out.lencod_cmd;
    ++pictures;
  }
  EXPECT_EQ(pictures, 2) << "StatsFile without mb_counts: " << out.stats.substr(0, 300);
}

// ---- Global motion: the estimated vectors must be the true ones -------------------------------------------------
//
// bin/synth --mode shift --shift 7,-3: every frame shows the previous one moved so that the true vector of every
// block is (+7, -3) pel = (28, -12) quarter pel. Two checks, both of which fail on a wrong estimate:
//  1. Rate: pictures 1-2 coded as P must cost under a quarter of the bits of the same pictures coded as I (counted
//     from the streams' non-IDR slice NAL units). (A SearchRange too small for the vector would not do as the
//     reference: the window follows the predictor, so the search walks to the true vector anyway.)
//  2. Vectors: the StatsFile's per-macroblock vectors (key "mb_mv" on P-picture lines, quarter pel, [x, y] per
//     macroblock in raster order, null for intra) must equal (28, -12) for at least 90% of the macroblocks whose
//     source block lies inside the picture after the shift, with the CPU and the GPU integer search; and for a
//     sub-pel shift (+2.25, -1.5) the most frequent vector must be (9, -6). A P line without the key fails.

struct MV2 {
  int x = 0, y = 0;
};

// Reads the "mb_mv" array of one StatsFile JSON line: [x, y] pairs or null. False if the key is absent or the
// array malformed.
bool parse_mb_mv(const std::string& line, std::vector<std::pair<bool, MV2>>* out) {
  size_t i = line.find("\"mb_mv\"");
  if (i == std::string::npos) return false;
  i = line.find('[', i);
  if (i == std::string::npos) return false;
  ++i;
  auto skip_ws = [&] { while (i < line.size() && (line[i] == ' ' || line[i] == ',')) ++i; };
  for (;;) {
    skip_ws();
    if (i >= line.size()) return false;
    if (line[i] == ']') return true;
    if (line.compare(i, 4, "null") == 0) {
      out->push_back({false, MV2{}});
      i += 4;
      continue;
    }
    if (line[i] != '[') return false;
    MV2 v;
    char* end = nullptr;
    v.x = static_cast<int>(std::strtol(line.c_str() + i + 1, &end, 10));
    i = static_cast<size_t>(end - line.c_str());
    skip_ws();
    v.y = static_cast<int>(std::strtol(line.c_str() + i, &end, 10));
    i = static_cast<size_t>(end - line.c_str());
    skip_ws();
    if (i >= line.size() || line[i] != ']') return false;
    ++i;
    out->push_back({true, v});
  }
}

constexpr int kShiftW = 352, kShiftH = 288, kShiftFrames = 3;

Clip shift_clip() { return synth_clip(kShiftW, kShiftH, kShiftFrames, "yuv", "--mode shift --shift 7,-3"); }

size_t slice_bytes(const std::vector<uint8_t>& stream, int nal_type) {
  size_t n = 0;
  for (const NalUnit& u : split_annexb(stream))
    if (u.type == nal_type) n += u.size;
  return n;
}

// Pictures 1 and 2 coded as P (found motion) against the same pictures coded as I: an exact global shift makes
// motion-compensated prediction nearly perfect, so P must cost a small fraction of I. Both integer-ME paths.
class ConformanceGlobalShiftRate : public ::testing::TestWithParam<int> {};

TEST_P(ConformanceGlobalShiftRate, PredictionFromTrueMotionIsCheap) {
  const Clip clip = shift_clip();
  ASSERT_FALSE(clip.file.empty());
  const std::string gpu = "GPUIntegerME=" + std::to_string(GetParam());
  EncodeOutput inter, intra;
  ASSERT_TRUE(encode_and_verify(clip, kShiftFrames, {"IntraPeriod=0", "SearchRange=32", gpu}, &inter));
  ASSERT_TRUE(encode_and_verify(clip, kShiftFrames, {"IntraPeriod=1", "IDRPeriod=0", gpu}, &intra));
  // Non-IDR slices (type 1) are pictures 1..2 in both streams: P in the first, I in the second.
  const size_t p_bits = 8 * slice_bytes(inter.stream, 1), i_bits = 8 * slice_bytes(intra.stream, 1);
  ASSERT_GT(i_bits, 0u) << "no non-IDR intra pictures in " << intra.lencod_cmd;
  EXPECT_LT(p_bits * 4, i_bits) << "P bits " << p_bits << " vs I bits " << i_bits << " for the same pictures\n  "
                                << clip.made_by << "\n  " << inter.lencod_cmd << "\n  " << intra.lencod_cmd;
}

INSTANTIATE_TEST_SUITE_P(ConformanceGlobalShift, ConformanceGlobalShiftRate, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) { return std::string(i.param ? "gpu" : "cpu"); });

// Inner-macroblock vectors of every P picture in a StatsFile (blocks whose source, displaced by (dx, dy) pel, lies
// inside the picture); a P line without a well-formed "mb_mv" key is a failure.
std::vector<std::vector<std::pair<bool, MV2>>> inner_p_vectors(const std::string& stats, int w, int h, double dx,
                                                                double dy) {
  std::vector<std::vector<std::pair<bool, MV2>>> pictures;
  std::istringstream lines(stats);
  std::string line;
  const int mbw = (w + 15) / 16, mbh = (h + 15) / 16;
  while (std::getline(lines, line)) {
    std::vector<std::pair<bool, MV2>> mvs;
    if (line.find("\"type\":\"P\"") == std::string::npos) continue;  // I pictures: every entry null
    if (!parse_mb_mv(line, &mvs)) {
      ADD_FAILURE() << "P picture without a well-formed mb_mv: " << line.substr(0, 200);
      continue;
    }
    EXPECT_EQ(static_cast<int>(mvs.size()), mbw * mbh) << "mb_mv entries: " << line.substr(0, 200);
    std::vector<std::pair<bool, MV2>> inner;
    for (int idx = 0; idx < static_cast<int>(mvs.size()) && idx < mbw * mbh; ++idx) {
      const int mx = idx % mbw, my = idx / mbw;
      const double sx = 16 * mx + dx, sy = 16 * my + dy;
      if (sx >= 1 && sy >= 1 && sx + 17 <= w && sy + 17 <= h) inner.push_back(mvs[idx]);
    }
    pictures.push_back(inner);
  }
  return pictures;
}

// (+7, -3) pel: at least 90% of the inner macroblocks carry exactly (28, -12), with either integer-ME path.
class ConformanceGlobalShiftStats : public ::testing::TestWithParam<int> {};

TEST_P(ConformanceGlobalShiftStats, VectorsAreTheTrueVector) {
  const Clip clip = shift_clip();
  ASSERT_FALSE(clip.file.empty());
  EncodeOutput out;
  ASSERT_TRUE(encode_and_verify(clip, kShiftFrames,
                                {"IntraPeriod=0", "SearchRange=32", "GPUIntegerME=" + std::to_string(GetParam())}, &out,
                                true));
  const auto pictures = inner_p_vectors(out.stats, kShiftW, kShiftH, 7, -3);
  ASSERT_EQ(static_cast<int>(pictures.size()), kShiftFrames - 1) << out.lencod_cmd;
  for (const auto& inner : pictures) {
    int right = 0;
    for (const auto& [coded, v] : inner) right += coded && v.x == 28 && v.y == -12;
    EXPECT_GE(right * 10, static_cast<int>(inner.size()) * 9)
        << right << " of " << inner.size() << " inner macroblocks have (28, -12)\n  " << clip.made_by << "\n  "
        << out.lencod_cmd;
  }
}

INSTANTIATE_TEST_SUITE_P(ConformanceGlobalShift, ConformanceGlobalShiftStats, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) { return std::string(i.param ? "gpu" : "cpu"); });

// Sub-pel motion (+2.25, -1.5) pel: the texture is not H.264's interpolation, so vectors scatter around the truth;
// the most frequent one must still be (9, -6) quarter pel.
TEST(ConformanceGlobalShift, StatsSubpelVectorIsTheMostFrequent) {
  const Clip clip = synth_clip(kShiftW, kShiftH, kShiftFrames, "yuv", "--mode shift --shift 2.25,-1.5");
  ASSERT_FALSE(clip.file.empty());
  EncodeOutput out;
  ASSERT_TRUE(encode_and_verify(clip, kShiftFrames, {"IntraPeriod=0"}, &out, true));
  const auto pictures = inner_p_vectors(out.stats, kShiftW, kShiftH, 2.25, -1.5);
  ASSERT_FALSE(pictures.empty()) << "no P picture in the StatsFile\n  " << out.lencod_cmd;
  std::map<std::pair<int, int>, int> histogram;
  for (const auto& inner : pictures)
    for (const auto& [coded, v] : inner)
      if (coded) ++histogram[{v.x, v.y}];
  ASSERT_FALSE(histogram.empty()) << "no inter macroblock\n  " << out.lencod_cmd;
  auto best = histogram.begin();
  for (auto it = histogram.begin(); it != histogram.end(); ++it)
    if (it->second > best->second) best = it;
  EXPECT_EQ(best->first, std::make_pair(9, -6))
      << "most frequent vector (" << best->first.first << ", " << best->first.second << ") in " << best->second
      << " macroblocks; (9, -6) in " << histogram[{9, -6}] << "\n  " << clip.made_by << "\n  " << out.lencod_cmd;
}

// An integer field of the StatsFile's summary line ("key":N), or -1.
long long summary_count(const std::string& stats, const std::string& key) {
  const size_t line = stats.rfind("{\"summary\"");
  if (line == std::string::npos) return -1;
  const size_t at = stats.find("\"" + key + "\":", line);
  return at == std::string::npos ? -1 : std::atoll(stats.c_str() + at + key.size() + 3);
}

// The GPU path's sub-pel tables (me_interface.h SubpelTable; GPUSubpelDistortion 2 has the CPU twin compute them as
// the GPU does with 1) change no decision: the stream is byte-identical to the one whose refinement measures every
// position itself (GPUSubpelDistortion 0), with both refinement metrics, two references and K 3, and decodes to
// the reconstruction. That includes the inter candidates the tables' floors leave unsearched (RDOptimization 0
// with SATD in both refinement stages: encoder/analyse_inter.cpp, CostBounds).
TEST(ConformanceSubpelTables, SameStreamAsCpuSubpel) {
  Clip clip;
  ASSERT_TRUE(manifest_clip("megamind_176x144", &clip)) << "sequences/make_clips.sh has not made megamind_176x144";
  const std::vector<std::vector<std::string>> variants = {
      {}, {"MEDistortionHPel=0", "MEDistortionQPel=0", "MDDistortion=0"}, {"MEDistortionHPel=0", "RDOptimization=1"},
      {"NumberReferenceFrames=2", "GPUTopK=3", "QPISlice=36", "QPPSlice=36"}};
  for (size_t i = 0; i < variants.size(); ++i) {
    const std::vector<std::string>& v = variants[i];
    const bool bounded = i == 0 || i == 3;  // SATD in both stages, RDOptimization 0
    EncodeOutput cpu, tables;
    std::vector<std::string> p = {"GPUIntegerME=1", "IntraPeriod=0"};
    p.insert(p.end(), v.begin(), v.end());
    p.push_back("GPUSubpelDistortion=0");
    ASSERT_TRUE(encode_and_verify(clip, 4, p, &cpu, true));
    p.back() = "GPUSubpelDistortion=2";
    ASSERT_TRUE(encode_and_verify(clip, 4, p, &tables, true));
    EXPECT_TRUE(cpu.stream == tables.stream) << "streams differ:\n  " << cpu.lencod_cmd << "\n  " << tables.lencod_cmd;
    // Not vacuous: the second run did read tables for most refinements, the first for none; where the floors bound
    // the candidates, the second run left some out (and their searches with them), the first none.
    const long long searches = summary_count(tables.stats, "subpel_searches");
    EXPECT_GT(searches, 0);
    EXPECT_EQ(summary_count(cpu.stats, "subpel_from_tables"), 0);
    EXPECT_GT(summary_count(tables.stats, "subpel_from_tables"), searches / 2) << tables.lencod_cmd;
    EXPECT_EQ(summary_count(cpu.stats, "searches_bounded"), 0);
    if (bounded) {
      EXPECT_GT(summary_count(tables.stats, "searches_bounded"), 0) << tables.lencod_cmd;
      EXPECT_EQ(searches + summary_count(tables.stats, "searches_bounded"), summary_count(cpu.stats, "subpel_searches"))
          << tables.lencod_cmd;
    } else {
      EXPECT_EQ(summary_count(tables.stats, "searches_bounded"), 0) << tables.lencod_cmd;
      EXPECT_EQ(searches, summary_count(cpu.stats, "subpel_searches")) << tables.lencod_cmd;
    }
  }
}

// The candidates and sub types the tables' floors leave unsearched (encoder/analyse_inter.cpp, CostBounds) change no
// decision over the settings the bounds read: QPs from 12 to 44 (lambda against distortion), K 1 and 4 (every rank
// has a table), three references (each floor taken over them, reference bits), sub types switched off (the cheapest
// enabled one), slices and threads, on a real clip and on noise (floors far below the chosen costs). The noise and
// the low QP also make refinements whose tables escaped entries that could win (me_interface.h, kSubpelEscape),
// measured from pixels instead: the same decisions again.
TEST(ConformanceSubpelTables, FloorBoundsChangeNoDecision) {
  Clip real;
  ASSERT_TRUE(manifest_clip("megamind_176x144", &real)) << "sequences/make_clips.sh has not made megamind_176x144";
  const Clip noise = synth_clip(176, 144, 4, "yuv", "--mode noise");
  const std::vector<std::pair<const Clip*, std::vector<std::string>>> variants = {
      {&real, {"QPISlice=12", "QPPSlice=12"}},
      {&real, {"QPISlice=44", "QPPSlice=44", "GPUTopK=1", "GPUSubpelRanks=1"}},
      {&real, {"NumberReferenceFrames=3", "GPUTopK=4", "GPUSubpelRanks=4", "QPISlice=32", "QPPSlice=32"}},
      {&real, {"PSliceSearch8x8=0", "PSliceSearch4x4=0", "PSliceSearch16x8=0", "SliceMode=1", "SliceArgument=20"}},
      {&noise, {"QPISlice=36", "QPPSlice=36", "Threads=3"}}};
  long long escapes = 0;
  for (const auto& [clip, v] : variants) {
    EncodeOutput cpu, tables;
    std::vector<std::string> p = {"GPUIntegerME=1", "IntraPeriod=0"};
    p.insert(p.end(), v.begin(), v.end());
    p.push_back("GPUSubpelDistortion=0");
    ASSERT_TRUE(encode_and_verify(*clip, 4, p, &cpu, true));
    p.back() = "GPUSubpelDistortion=2";
    ASSERT_TRUE(encode_and_verify(*clip, 4, p, &tables, true));
    EXPECT_TRUE(cpu.stream == tables.stream) << "streams differ:\n  " << cpu.lencod_cmd << "\n  " << tables.lencod_cmd;
    EXPECT_GT(summary_count(tables.stats, "searches_bounded"), 0) << tables.lencod_cmd;
    EXPECT_EQ(summary_count(tables.stats, "subpel_searches") + summary_count(tables.stats, "searches_bounded"),
              summary_count(cpu.stats, "subpel_searches")) << tables.lencod_cmd;
    escapes += summary_count(tables.stats, "subpel_table_escapes");
  }
  EXPECT_GT(escapes, 0);
}

}  // namespace
}  // namespace gme::conf
