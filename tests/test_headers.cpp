// Parameter sets as JM 19.0 writes them where the standard leaves a choice (doc/RD.md "JM 19.0 equivalence"), and
// the SPS's profile/constraint/level bytes.
#include <gtest/gtest.h>

#include "encoder/headers.h"

namespace gme {
namespace {

SequenceHeader header(int level, int refs) {
  EncoderParams p;
  p.level_idc = level;
  p.num_ref_frames = refs;
  p.source_width = 176;
  p.source_height = 144;
  return make_sequence_header(p, 176, 144);
}

TEST(Headers, SpsProfileConstraintAndLevelBytes) {
  const std::vector<uint8_t> sps = write_sps(header(40, 1));
  ASSERT_GE(sps.size(), 3u);
  EXPECT_EQ(sps[0], 66);    // profile_idc
  EXPECT_EQ(sps[1], 0xC0);  // constraint_set0_flag, constraint_set1_flag: Constrained Baseline
  EXPECT_EQ(sps[2], 40);
  // Level 1b in the Baseline profile: level_idc 11 with constraint_set3_flag.
  const std::vector<uint8_t> sps1b = write_sps(header(9, 1));
  EXPECT_EQ(sps1b[1], 0xD0);
  EXPECT_EQ(sps1b[2], 11);
  EXPECT_EQ(write_sps(header(11, 1))[1], 0xC0);  // level 1.1 itself
}

TEST(Headers, PpsListOneDefaultEqualsListZeros) {
  // pps_id ue(0) '1', sps_id '1', entropy '0', bottom_field '0', slice groups ue(0) '1', then l0 and l1 defaults:
  // with 3 references both are ue(2) = '011'.
  const std::vector<uint8_t> pps = write_pps(header(40, 3));
  ASSERT_GE(pps.size(), 2u);
  const uint32_t bits = (static_cast<uint32_t>(pps[0]) << 8) | pps[1];
  EXPECT_EQ(bits >> 5, 0b11001011011u) << std::hex << bits;
}

}  // namespace
}  // namespace gme
