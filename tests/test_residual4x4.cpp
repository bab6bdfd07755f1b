// common/residual4x4.h beyond the twins (tests/test_checkasm.cpp holds every SIMD version to the plain one, itself
// the composition of fdct4x4 / quant4x4 / dequant4x4 / idct4x4, tested in test_transform_quant.cpp): hand-checkable
// values, and add_dc4x4 against the inverse transform.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/quant.h"
#include "common/residual4x4.h"

namespace gme {
namespace {

Residual4x4Funcs plain() {
  Residual4x4Funcs f;
  residual4x4_init(0, f);
  return f;
}

uint8_t sample(std::mt19937& rng, int mode, int which) {
  const uint32_t r = rng();
  switch (mode) {
    case 0: return static_cast<uint8_t>(r);
    case 1: return (r & 1) ? 255 : 0;                      // extremes
    case 2: return which ? 255 : 0;                         // largest residual of one sign
    case 3: return which ? 0 : 255;                         // ... and of the other
    default: return static_cast<uint8_t>(128 + (r % 7) - 3);  // small residuals: few levels
  }
}

// The plain forward on a hand-checkable block: a constant residual d has only a DC coefficient 16 d.
TEST(Residual4x4, KnownValues) {
  std::vector<uint8_t> src(16, 110), pred(16, 100);
  int lz[16], dc = 0;
  const int nz = plain().fwd(src.data(), 4, pred.data(), 4, 28, kOffsetIntraSlice, 1, lz, &dc);
  EXPECT_EQ(dc, 160);
  EXPECT_EQ(nz, 0);
  uint8_t rec[16];
  plain().inv(lz, 28, 1, nullptr, pred.data(), 4, rec, 4);
  for (uint8_t p : rec) EXPECT_EQ(p, 100);
}

// add_dc4x4 is the inverse of a block whose levels are all 0 with only the DC given (chroma without AC levels):
// the same samples as inv() for random and extreme predictions and the whole range of DCs a
// dequantised chroma DC can take (and beyond, for the clipping).
TEST(Residual4x4, DcOnlyInverseMatchesTheTransform) {
  const Residual4x4Funcs f = plain();
  std::mt19937 rng(77);
  const int zero[16] = {};
  std::vector<uint8_t> pred(4 * 13), out(4 * 21), want(4 * 21);
  for (int rep = 0; rep < 20000; ++rep) {
    for (uint8_t& p : pred) p = sample(rng, rep % 5, rep & 1);
    const int dc = rep < 2000 ? rep - 1000 : static_cast<int>(rng() % 131072) - 65536;
    const int qp = rep % 52;
    f.inv(zero, qp, 1, &dc, pred.data(), 13, want.data(), 21);
    add_dc4x4(pred.data(), 13, dc, out.data(), 21);
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x)
        ASSERT_EQ(out[y * 21 + x], want[y * 21 + x]) << "dc " << dc << " at " << x << "," << y;
  }
}

}  // namespace
}  // namespace gme
