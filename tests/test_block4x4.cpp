// common/block4x4.h, the plain versions (tests/test_checkasm.cpp holds every SIMD version to them): a strip's
// values against the summed primitives of pixel_ref() (a partition's distortion is the sum of its 4x4 values, which
// the sub-pel memo relies on), the masked sums, and hand-checkable values.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/block4x4.h"
#include "common/pixel.h"

namespace gme {
namespace {

Block4x4Funcs plain() {
  Block4x4Funcs f;
  block4x4_init(0, f);
  return f;
}

TEST(Block4x4, StripsSumToThePixelPrimitives) {
  const Block4x4Funcs b4 = plain();
  std::mt19937 rng(77);
  std::vector<uint8_t> a(4 * 80 + 32), b(4 * 80 + 32);
  for (int rep = 0; rep < 400; ++rep) {
    const int mode = rep % 4;  // random, extremes 0/255, all equal, one side 0 other 255
    for (size_t i = 0; i < a.size(); ++i) {
      const uint32_t r = rng();
      a[i] = mode == 0 ? static_cast<uint8_t>(r) : mode == 1 ? ((r & 1) ? 255 : 0) : mode == 2 ? 77 : 0;
      b[i] = mode == 0 ? static_cast<uint8_t>(r >> 8) : mode == 1 ? ((r & 2) ? 255 : 0) : mode == 2 ? 77 : 255;
    }
    for (int as : {16, 17, 33, 64})
      for (int bs : {16, 19, 32, 80})
        for (int n : {1, 2}) {  // 16x4 (n = 4) has no pixel.h size
          const uint8_t* pa = a.data() + a.size() - (3 * as + 4 * n);
          const uint8_t* pb = b.data() + b.size() - (3 * bs + 4 * n) - static_cast<int>(rng() % 8);
          uint16_t satd[4], sad[4];
          b4.satd(pa, as, pb, bs, n, satd);
          b4.sad(pa, as, pb, bs, n, sad);
          uint32_t sum_satd = 0, sum_sad = 0;
          for (int i = 0; i < n; ++i) {
            sum_satd += satd[i];
            sum_sad += sad[i];
          }
          const BlockSize bsz = n == 1 ? kB4x4 : kB8x4;
          ASSERT_EQ(sum_satd, pixel_ref().satd[bsz](pa, as, pb, bs));
          ASSERT_EQ(sum_sad, pixel_ref().sad[bsz](pa, as, pb, bs));
        }
  }
}

// A constant difference d on a 4x4 has one Hadamard coefficient 16 d: SATD = 8 d; the maximum fits 16 bits.
TEST(Block4x4, KnownValues) {
  const Block4x4Funcs b4 = plain();
  std::vector<uint8_t> z(16 * 4, 0), f(16 * 4, 255);
  uint16_t out[4];
  b4.satd(z.data(), 16, f.data(), 16, 4, out);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 8 * 255);
  b4.sad(z.data(), 16, f.data(), 16, 4, out);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 16 * 255);
  uint16_t d[16];
  for (int i = 0; i < 16; ++i) d[i] = static_cast<uint16_t>(i + 1);
  EXPECT_EQ(b4.masked_sum(d, 0), 0u);
  EXPECT_EQ(b4.masked_sum(d, 0xFFFF), 136u);
  EXPECT_EQ(b4.masked_sum(d, 0x8001), 17u);  // d[0] + d[15]
  for (uint16_t& v : d) v = 8160;              // the largest 4x4 SATD
  EXPECT_EQ(b4.masked_sum(d, 0xFFFF), 16u * 8160u);
}

}  // namespace
}  // namespace gme
