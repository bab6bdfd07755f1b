// checkasm for common/block4x4.h: every variant against the plain C++ reference, bit for bit, on random and
// extreme inputs, unaligned pointers and odd strides; and the reference against the summed primitives of
// pixel_ref() (a partition's distortion is the sum of its 4x4 values, which the sub-pel memo relies on).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/block4x4.h"
#include "common/pixel.h"

namespace gme {
namespace {

std::vector<const Block4x4Funcs*> variants() {
  const Block4x4Funcs* v[4];
  const int n = block4x4_variants(v, 4);
  return std::vector<const Block4x4Funcs*>(v, v + n);
}

TEST(Block4x4, VariantsMatchReference) {
  const auto v = variants();
  ASSERT_GE(v.size(), 1u);
  EXPECT_EQ(v[0], &block4x4_ref());
  EXPECT_EQ(&block4x4_best(), v.back());
#if defined(__x86_64__)
  ASSERT_GE(v.size(), 2u);
#endif
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
        for (int n : {1, 2, 4}) {
          // The last block ends at the buffers' last bytes: variants must not read past 4 * n per row.
          const uint8_t* pa = a.data() + a.size() - (3 * as + 4 * n);
          const uint8_t* pb = b.data() + b.size() - (3 * bs + 4 * n) - static_cast<int>(rng() % 8);
          uint16_t want[2][4];
          block4x4_ref().satd(pa, as, pb, bs, n, want[0]);
          block4x4_ref().sad(pa, as, pb, bs, n, want[1]);
          uint32_t sum_satd = 0, sum_sad = 0;
          for (int i = 0; i < n; ++i) {
            sum_satd += want[0][i];
            sum_sad += want[1][i];
          }
          const BlockSize bsz = n == 1 ? kB4x4 : kB8x4;  // n == 4 (16x4) has no pixel.h size
          if (n != 4) {
            ASSERT_EQ(sum_satd, pixel_ref().satd[bsz](pa, as, pb, bs));
            ASSERT_EQ(sum_sad, pixel_ref().sad[bsz](pa, as, pb, bs));
          }
          for (size_t k = 1; k < v.size(); ++k) {
            uint16_t got[2][4];
            std::memset(got, 0xAB, sizeof got);
            v[k]->satd(pa, as, pb, bs, n, got[0]);
            v[k]->sad(pa, as, pb, bs, n, got[1]);
            for (int i = 0; i < n; ++i) {
              ASSERT_EQ(got[0][i], want[0][i]) << v[k]->name << " satd n " << n << " block " << i;
              ASSERT_EQ(got[1][i], want[1][i]) << v[k]->name << " sad n " << n << " block " << i;
            }
          }
        }
  }
}

// A constant difference d on a 4x4 has one Hadamard coefficient 16 d: SATD = 8 d; the maximum fits 16 bits.
TEST(Block4x4, ReferenceKnownValues) {
  std::vector<uint8_t> z(16 * 4, 0), f(16 * 4, 255);
  uint16_t out[4];
  block4x4_ref().satd(z.data(), 16, f.data(), 16, 4, out);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 8 * 255);
  block4x4_ref().sad(z.data(), 16, f.data(), 16, 4, out);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 16 * 255);
}

}  // namespace
}  // namespace gme
