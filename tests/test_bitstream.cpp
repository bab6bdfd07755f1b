// Bit writer, Exp-Golomb codes and the NAL layer (emulation prevention, Annex B start codes).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/bitstream.h"
#include "common/types.h"

namespace gme {
namespace {

std::string bits_of(BitWriter& bw) {
  // Pads with zeros to a byte boundary and prints the first bw.bits() bits.
  const int64_t n = bw.bits();
  bw.align_zero();
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += ((bw.bytes()[i / 8] >> (7 - i % 8)) & 1) ? '1' : '0';
  return s;
}

TEST(Bitstream, ExpGolombUnsigned) {
  const char* expected[] = {"1", "010", "011", "00100", "00101", "00110", "00111", "0001000", "0001001"};
  for (uint32_t v = 0; v < 9; ++v) {
    BitWriter bw;
    bw.ue(v);
    EXPECT_EQ(bits_of(bw), expected[v]) << "ue(" << v << ")";
    EXPECT_EQ(ue_bits(v), static_cast<int>(std::string(expected[v]).size()));
  }
  BitWriter bw;
  bw.ue(65534);  // codeNum 65534: 15 zeros, then 16 bits of 65535
  EXPECT_EQ(bw.bits(), 31);
  EXPECT_EQ(ue_bits(65534), 31);
  EXPECT_EQ(ue_bits(0xFFFFFFFFu), 65);  // code_num + 1 = 2^32: 32 zeros, then 33 bits
}

// se_bits (common/exp_golomb.h, the motion-cost table) against the bits the writer actually spends, over every vector
// component a SearchRange 128 search can produce and beyond (quarter pel, +-2^17).
TEST(Bitstream, SeBitsMatchesWriterOverMvRange) {
  for (int v = -(1 << 17); v <= (1 << 17); ++v) {
    if ((v & 1023) != 0 && (v < -4096 || v > 4096)) continue;  // every value near 0, a sample further out
    BitWriter bw;
    bw.se(v);
    ASSERT_EQ(se_bits(v), bw.bits()) << "se(" << v << ")";
  }
  for (int e = 1; e < 30; ++e)  // the code length steps at code_num + 1 = 2^e
    for (int v : {1 << (e - 1), -(1 << (e - 1)), (1 << (e - 1)) - 1, -((1 << (e - 1)) - 1)}) {
      BitWriter bw;
      bw.se(v);
      EXPECT_EQ(se_bits(v), bw.bits()) << v;
    }
}

TEST(Bitstream, ExpGolombSignedAndTruncated) {
  const int values[] = {0, 1, -1, 2, -2, 3};
  const char* expected[] = {"1", "010", "011", "00100", "00101", "00110"};
  for (int i = 0; i < 6; ++i) {
    BitWriter bw;
    bw.se(values[i]);
    EXPECT_EQ(bits_of(bw), expected[i]) << "se(" << values[i] << ")";
    EXPECT_EQ(se_bits(values[i]), static_cast<int>(std::string(expected[i]).size()));
  }
  BitWriter a, b, c;
  a.te(1, 0);
  b.te(1, 1);
  c.te(3, 2);  // cMax > 1: plain ue
  EXPECT_EQ(bits_of(a), "1");
  EXPECT_EQ(bits_of(b), "0");
  EXPECT_EQ(bits_of(c), "011");
}

TEST(Bitstream, FixedLengthTrailingBitsAndRewind) {
  BitWriter bw;
  bw.put(3, 5);
  bw.put(32, 0xDEADBEEF);
  BitWriter::Mark m = bw.mark();
  bw.put(7, 0x7F);
  bw.rewind(m);
  EXPECT_EQ(bw.bits(), 35);
  bw.rbsp_trailing_bits();
  ASSERT_TRUE(bw.byte_aligned());
  ASSERT_EQ(bw.bytes().size(), 5u);
  // 101 11011110101011011011111011101111 1 0000
  EXPECT_EQ(bw.bytes()[0], 0xBB);
  EXPECT_EQ(bw.bytes()[1], 0xD5);
  EXPECT_EQ(bw.bytes()[2], 0xB7);
  EXPECT_EQ(bw.bytes()[3], 0xDD);
  EXPECT_EQ(bw.bytes()[4], 0xF0);
}

TEST(Bitstream, EmulationPreventionKnownCases) {
  std::vector<uint8_t> out;
  write_nal_annexb(out, 3, kNalSps, {0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x04, 0x00, 0x00, 0x03});
  const std::vector<uint8_t> expected = {0x00, 0x00, 0x00, 0x01, 0x67,                    // start code, header
                                         0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x01,         // 00 00 00 00 01
                                         0x00, 0x00, 0x04,                                 // 00 00 04 is allowed
                                         0x00, 0x00, 0x03, 0x03};                          // 00 00 03 escaped
  EXPECT_EQ(out, expected);
}

// Decoder side of 7.4.1: drop every 03 that follows two zero bytes.
std::vector<uint8_t> unescape(const std::vector<uint8_t>& nal) {
  std::vector<uint8_t> r;
  int zeros = 0;
  for (uint8_t b : nal) {
    if (zeros == 2 && b == 3) { zeros = 0; continue; }
    r.push_back(b);
    zeros = b == 0 ? zeros + 1 : 0;
  }
  return r;
}

TEST(Bitstream, EmulationPreventionRoundTripRandom) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<uint8_t> rbsp(1 + rng() % 64);
    for (auto& b : rbsp) b = static_cast<uint8_t>(rng() % 5);  // many zeros and small values
    rbsp.back() = 0x80;                                         // an RBSP ends with the stop bit
    std::vector<uint8_t> out;
    size_t n = write_nal_annexb(out, 1, kNalSlice, rbsp);
    ASSERT_EQ(n, out.size());
    std::vector<uint8_t> payload(out.begin() + 5, out.end());
    for (size_t i = 0; i + 2 < payload.size(); ++i)
      ASSERT_FALSE(payload[i] == 0 && payload[i + 1] == 0 && payload[i + 2] < 3)
          << "forbidden sequence at " << i;
    EXPECT_EQ(unescape(payload), rbsp);
  }
}

}  // namespace
}  // namespace gme
