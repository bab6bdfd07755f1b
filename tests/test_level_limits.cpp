// The level limits of H.264 Table A-1 that the parameters are held to: a reference count past the level's picture
// buffer is refused (check_params), a picture or macroblock rate past the level is a warning (level_warnings).
#include <gtest/gtest.h>

#include <string>

#include "encoder/params.h"
#include "encoder/params_check.h"

namespace gme {
namespace {

EncoderParams at(int level, int w, int h, int refs) {
  EncoderParams p;
  p.level_idc = level;
  p.source_width = w;
  p.source_height = h;
  p.num_ref_frames = refs;
  p.frame_rate = 30;
  return p;
}

// The NumberReferenceFrames problem of p, or "" when there is none.
std::string refs_problem(const EncoderParams& p) {
  for (const ParamProblem& pr : check_params(p))
    if (pr.key == "NumberReferenceFrames") return pr.text();
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(LevelLimits, ReferencesPastTheLevelsPictureBufferAreRefused) {
  // Level 4: MaxDpbMbs 32768; 1920x1080 is 120 x 68 = 8160 macroblocks, so 4 frames fit and 5 do not.
  EXPECT_EQ(refs_problem(at(40, 1920, 1080, 4)), "");
  const std::string m = refs_problem(at(40, 1920, 1080, 5));
  EXPECT_TRUE(contains(m, "NumberReferenceFrames = 5: level 4 (LevelIDC = 40) holds 4 reference frames of 1920x1080"))
      << m;
  EXPECT_TRUE(contains(m, "set LevelIDC >= 50")) << m;  // level 4.2's 34816 hold 4 too; level 5's 110400 hold 13
  // Level 1b: MaxDpbMbs 396 holds 4 QCIF frames (99 macroblocks each); the size rounds up to whole macroblocks.
  EXPECT_EQ(refs_problem(at(9, 176, 144, 4)), "");
  EXPECT_NE(refs_problem(at(9, 176, 144, 5)), "");
  EXPECT_NE(refs_problem(at(9, 178, 144, 4)), "");  // 12 x 9 = 108 macroblocks: 3 frames
  // At most 16 frames whatever the level: 176x144 at level 5.1 would hold 1861.
  EXPECT_EQ(refs_problem(at(51, 176, 144, 16)), "");
  // A picture larger than the buffer holds no frame at all.
  const std::string none = refs_problem(at(10, 640, 480, 1));
  EXPECT_TRUE(contains(none, "holds 0 reference frames of 640x480")) << none;
  EXPECT_TRUE(contains(none, ": set LevelIDC >= 22")) << none;  // the first level allowing 1200-macroblock pictures
  EXPECT_FALSE(contains(none, "lower NumberReferenceFrames")) << none;
}

TEST(LevelLimits, SuggestedLevelHoldsTheReferences) {
  const std::string m = refs_problem(at(40, 1920, 1080, 5));
  ASSERT_TRUE(contains(m, "set LevelIDC >= ")) << m;
  const int suggested = std::stoi(m.substr(m.find(">= ") + 3));
  EXPECT_EQ(suggested, 50) << m;
  EXPECT_EQ(refs_problem(at(suggested, 1920, 1080, 5)), "");
  // No level holds 16 frames of 4096x2304 (36864 macroblocks; level 5.1/5.2 hold 5).
  const std::string m2 = refs_problem(at(52, 4096, 2304, 16));
  EXPECT_TRUE(contains(m2, ": lower NumberReferenceFrames")) << m2;
  EXPECT_FALSE(contains(m2, "set LevelIDC")) << m2;
}

TEST(LevelLimits, PictureSizeAndRatePastTheLevelAreWarnings) {
  EXPECT_TRUE(level_warnings(at(40, 1920, 1080, 1)).empty());  // 8160 x 30 = 244800 <= 245760
  EncoderParams p = at(40, 1920, 1080, 1);
  p.frame_rate = 60;
  auto w = level_warnings(p);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(contains(w[0], "allows 245760 macroblocks/s; 1920x1080 at FrameRate 60 needs 489600")) << w[0];
  // Level 1b allows 99 macroblocks a picture: CIF's 396 fit its buffer (one frame) but not its picture size.
  w = level_warnings(at(9, 352, 288, 1));
  ASSERT_FALSE(w.empty());
  EXPECT_TRUE(contains(w[0], "LevelIDC = 9 (level 1b) allows pictures of at most 99 macroblocks; 352x288 has 396"))
      << w[0];
  EXPECT_EQ(refs_problem(at(9, 352, 288, 1)), "");
}

TEST(LevelLimits, ShippedDefaultsAreWithinTheirLevel) {
  EXPECT_TRUE(check_params(EncoderParams()).empty());
  EXPECT_TRUE(level_warnings(EncoderParams()).empty());
}

}  // namespace
}  // namespace gme
