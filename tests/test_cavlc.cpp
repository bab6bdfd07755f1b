// CAVLC residual coding against hand-worked examples (the two classic 4x4 examples of I. Richardson, "H.264 and
// MPEG-4 Video Compression", 6.4.13, checked by hand against Tables 9-5, 9-7, 9-10 of the standard) and edge
// cases computed from the tables by hand.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/transform.h"
#include "encoder/cavlc.h"

namespace gme {
namespace {

std::string bits_of(BitWriter& bw) {
  const int64_t n = bw.bits();
  bw.align_zero();
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += ((bw.bytes()[i / 8] >> (7 - i % 8)) & 1) ? '1' : '0';
  return s;
}

// Raster 4x4 block -> zig-zag ordered levels.
void to_scan(const int raster[16], int zz[16]) {
  for (int k = 0; k < 16; ++k) zz[k] = raster[kZigzag4x4[k]];
}

TEST(Cavlc, RichardsonExample1) {
  const int block[16] = {0, 3, -1, 0, 0, -1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  int zz[16];
  to_scan(block, zz);
  BitWriter bw;
  EXPECT_EQ(write_residual_block(bw, zz, 16, 0), 5);
  // coeff_token(5, 3) 0000100, signs 011, levels 1 and 0010, total_zeros(3) 111, runs 10 1 1 01.
  EXPECT_EQ(bits_of(bw), "000010001110010111101101");
}

TEST(Cavlc, RichardsonExample2) {
  const int block[16] = {-2, 4, 0, -1, 3, 0, 0, 0, -3, 0, 0, 0, 0, 0, 0, 0};
  int zz[16];
  to_scan(block, zz);
  BitWriter bw;
  EXPECT_EQ(write_residual_block(bw, zz, 16, 0), 5);
  // coeff_token(5, 1) 0000000110, sign 1, levels -3: 0001, 3: 0010, 4: 00010 (suffixLength 1 -> 2),
  // -2: 1 11, total_zeros(2) 0011, run 00.
  EXPECT_EQ(bits_of(bw), "000000011010001001000010111001100");
}

TEST(Cavlc, EmptyBlocksPerNc) {
  const int zero[16] = {};
  const int nc[] = {0, 1, 2, 3, 4, 7, 8, 16};
  const char* expected[] = {"1", "1", "11", "11", "1111", "1111", "000011", "000011"};
  for (int i = 0; i < 8; ++i) {
    BitWriter bw;
    EXPECT_EQ(write_residual_block(bw, zero, 16, nc[i]), 0);
    EXPECT_EQ(bits_of(bw), expected[i]) << "nC " << nc[i];
  }
  BitWriter dc;
  write_residual_block(dc, zero, 4, -1);
  EXPECT_EQ(bits_of(dc), "01");
}

TEST(Cavlc, FixedLengthCoeffTokenForLargeNc) {
  // nC >= 8: 6-bit FLC (TotalCoeff - 1) << 2 | TrailingOnes. One coefficient -1 at position 0: 000001, sign 1,
  // total_zeros(TotalCoeff 1, 0 zeros) 1.
  int zz[16] = {-1};
  BitWriter bw;
  write_residual_block(bw, zz, 16, 9);
  EXPECT_EQ(bits_of(bw), "00000111");
}

TEST(Cavlc, ChromaDc) {
  // Chroma DC {1, 0, 0, -1}: TotalCoeff 2, T1 2: coeff_token 001 (Table 9-5 nC = -1), signs 1 0,
  // total_zeros(2 coeffs, 2 zeros) 0 ... Table 9-9a row TotalCoeff 2: tz 2 -> "00", run_before (zerosLeft 2, run 2) 00.
  int dc[4] = {1, 0, 0, -1};
  BitWriter bw;
  EXPECT_EQ(write_residual_block(bw, dc, 4, -1), 2);
  EXPECT_EQ(bits_of(bw), "001" "10" "00" "00");
}

TEST(Cavlc, EscapeLevelFitsLevelPrefix15) {
  // A single level 2063 at DC, nC 0: coeff_token(1, 0) 000101 (6 bits); levelCode 2 * 2063 - 2 - 2 = 4122,
  // suffixLength 0 -> escape level_prefix 15 (16 bits) + 12-bit suffix 4122 - 30 = 4092; total_zeros(1, 0) 1.
  int zz[16] = {2063};
  BitWriter bw;
  write_residual_block(bw, zz, 16, 0);
  EXPECT_EQ(bw.bits(), 6 + 16 + 12 + 1);
  EXPECT_EQ(bits_of(bw), std::string("000101") + "0000000000000001" + "111111111100" + "1");
}

TEST(Cavlc, SuffixLengthStartsAtOneForManyCoefficients) {
  // 11 coefficients of value 2 (TotalCoeff > 10, T1 0 -> suffixLength starts at 1); first level: levelCode
  // 2*2-2-2 = 0 -> prefix 0, suffix 0 -> "10". The following levels 2: levelCode 2 -> "010".
  int zz[16] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  BitWriter bw;
  write_residual_block(bw, zz, 16, 0);
  std::string s = bits_of(bw);
  // coeff_token(11, 0) for 0 <= nC < 2: length 15 (Table 9-5).
  EXPECT_EQ(s.substr(15, 2), "10");
  EXPECT_EQ(s.substr(17, 3), "010");
}

TEST(Cavlc, CodedBlockPatternMapping) {
  EXPECT_EQ(cbp_code_num(47, true), 0);
  EXPECT_EQ(cbp_code_num(31, true), 1);
  EXPECT_EQ(cbp_code_num(15, true), 2);
  EXPECT_EQ(cbp_code_num(0, true), 3);
  EXPECT_EQ(cbp_code_num(0, false), 0);
  EXPECT_EQ(cbp_code_num(16, false), 1);
  EXPECT_EQ(cbp_code_num(1, false), 2);
  EXPECT_EQ(cbp_code_num(47, false), 12);
  // Both columns are permutations of 0..47.
  for (int intra = 0; intra < 2; ++intra) {
    bool seen[48] = {};
    for (int cbp = 0; cbp < 48; ++cbp) seen[cbp_code_num(cbp, intra != 0)] = true;
    for (bool b : seen) EXPECT_TRUE(b);
  }
}

TEST(Cavlc, MbTypeAndNc) {
  EXPECT_EQ(mb_type_i16x16(0, 0, false), 1);
  EXPECT_EQ(mb_type_i16x16(3, 2, true), 24);
  EXPECT_EQ(mb_type_i16x16(2, 1, false), 7);
  EXPECT_EQ(predict_nc(true, 3, true, 4), 4);
  EXPECT_EQ(predict_nc(true, 3, false, 9), 3);
  EXPECT_EQ(predict_nc(false, 0, true, 9), 9);
  EXPECT_EQ(predict_nc(false, 5, false, 9), 0);
}

// residual_block_bits is the length write_residual_block writes, for every block kind and nC table, on random
// sparse and dense blocks with small and escape-sized levels.
TEST(Cavlc, ResidualBlockBitsMatchesWriter) {
  std::mt19937 rng(99);
  const int kinds[][2] = {{16, 0}, {16, 1}, {16, 2}, {16, 3}, {16, 5}, {16, 9}, {15, 0}, {15, 4}, {15, 8}, {4, -1}};
  for (int rep = 0; rep < 4000; ++rep) {
    const auto& k = kinds[rep % 10];
    int coeff[16] = {};
    const int density = static_cast<int>(rng() % 17);
    for (int i = 0; i < k[0]; ++i) {
      if (static_cast<int>(rng() % 16) >= density) continue;
      const int mag = (rng() % 8) ? 1 + static_cast<int>(rng() % 3) : 1 + static_cast<int>(rng() % 2063);
      coeff[i] = (rng() & 1) ? mag : -mag;
    }
    BitWriter bw;
    write_residual_block(bw, coeff, k[0], k[1]);
    ASSERT_EQ(residual_block_bits(coeff, k[0], k[1]), bw.bits()) << "rep " << rep;
  }
}

}  // namespace
}  // namespace gme
