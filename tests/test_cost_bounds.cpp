// The lower bounds of inter candidates' costs that the sub-pel tables' floors give (encoder/analyse_inter.cpp,
// CostBounds): with EncoderState::check_cost_bounds every candidate is searched and each bound is held against the
// cost the search found. A bound above its cost would let the encoder leave out a candidate that might have won;
// the stream tests (ConformanceSubpelTables.*) catch that only where such a candidate does win, this test wherever a
// bound is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/frame.h"
#include "encoder/encoder.h"
#include "encoder/params.h"
#include "encoder/picture.h"
#include "gpu/gpu_me.h"

namespace gme {
namespace {

// A smooth random texture moving by a different quarter-pel step in each quadrant, with a noisy strip: real
// sub-pel motion (floors near the chosen costs) beside content no vector fits (floors far below them).
Frame moving_texture(int w, int h, int t) {
  Frame f;
  f.alloc(w, h, w, h);
  for (int c = 0; c < 3; ++c) {
    Plane& p = f.plane[c];
    const int s = c ? 2 : 1;
    std::mt19937 noise(77 + 131 * t + c);
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x) {
        const int X = x * s, Y = y * s;
        const int q = (X >= w / 2) + 2 * (Y >= h / 2);
        const double dx = 0.25 * (q + 1) * t, dy = 0.75 * (q - 1) * t;
        const double u = X - dx, v = Y - dy;
        int val = static_cast<int>(128 + 60 * std::sin(u * 0.21 + v * 0.07) * std::cos(v * 0.17 - u * 0.05) +
                                   20 * std::sin(u * 0.9 + v * 1.3));
        if (Y >= h - 24 && X < w / 3) val = static_cast<int>(noise() % 256);
        p.at(x, y)[0] = static_cast<uint8_t>(val < 0 ? 0 : val > 255 ? 255 : val);
      }
  }
  f.extend_borders();
  return f;
}

StageTimes encode_checking(EncoderParams p) {
  EncoderState s;
  init_encoder_state(s, p, [](int, const DspFuncs& dsp, std::string* why) {
    if (why) why->clear();
    return make_picture_search_twin(dsp);
  });
  s.check_cost_bounds = true;
  StageTimes sum;
  for (int n = 0; n < p.frames_to_encode; ++n) {
    std::vector<uint8_t> bytes;
    sum += encode_picture(s, moving_texture(p.source_width, p.source_height, n), bytes).times;
  }
  return sum;
}

TEST(CostBounds, NeverAboveTheCostFound) {
  struct Case {
    int qp, refs, top_k;
    bool sub_types;  // all P8x8 sub types, else 8x8 and 4x8 only
  };
  const Case cases[] = {{12, 1, 8, true}, {28, 1, 8, true}, {44, 1, 1, true}, {32, 3, 4, true}, {36, 2, 8, false}};
  for (const Case& k : cases) {
    EncoderParams p;
    p.source_width = 96;
    p.source_height = 80;
    p.frames_to_encode = 4;
    p.search_range = 8;
    p.qp_i = p.qp_p = k.qp;
    p.num_ref_frames = k.refs;
    p.me_distortion_hpel = p.me_distortion_qpel = 2;  // SATD in both stages: the tables serve them all
    p.gpu_integer_me = 1;
    p.gpu_subpel_distortion = 2;                      // the twin's tables, as a GPU's
    p.gpu_top_k = p.gpu_subpel_ranks = k.top_k;
    if (!k.sub_types) p.p_search[5] = p.p_search[7] = false;
    const StageTimes t = encode_checking(p);
    const std::string what = "QP " + std::to_string(k.qp) + ", " + std::to_string(k.refs) + " references, K " +
                             std::to_string(k.top_k);
    EXPECT_GT(t.bound_checks, 500) << what;  // not vacuous: bounds were there to check
    EXPECT_EQ(t.bound_violations, 0) << what;
    EXPECT_EQ(t.searches_bounded, 0) << what;  // checking leaves nothing out
  }
}

TEST(CostBounds, AbsentWhereTheTablesCannotBoundEveryCandidate) {
  // Fewer ranks with tables than candidates (a candidate without a table may be chosen), a SAD half-pel stage (it
  // starts from the integer cost), and RDOptimization 1 (every candidate is coded): no bound is formed.
  for (int variant = 0; variant < 3; ++variant) {
    EncoderParams p;
    p.source_width = 64;
    p.source_height = 48;
    p.frames_to_encode = 3;
    p.search_range = 8;
    p.qp_i = p.qp_p = 28;
    p.me_distortion_hpel = p.me_distortion_qpel = 2;
    p.gpu_integer_me = 1;
    p.gpu_subpel_distortion = 2;
    if (variant == 0) p.gpu_subpel_ranks = 4;
    if (variant == 1) p.me_distortion_hpel = 0;
    if (variant == 2) p.rd_optimization = 1;
    const StageTimes t = encode_checking(p);
    EXPECT_EQ(t.bound_checks, 0) << "variant " << variant;
    EXPECT_GT(t.subpel_searches, 0) << "variant " << variant;
  }
}

}  // namespace
}  // namespace gme
