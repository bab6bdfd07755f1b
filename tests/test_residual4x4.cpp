// checkasm for common/residual4x4.h: every variant against the plain C++ reference (itself the composition of
// fdct4x4 / quant4x4 / dequant4x4 / idct4x4, tested in test_transform_quant.cpp), bit for bit, on random and
// extreme samples, every qp, both rounding offsets, with and without the DC split, odd strides.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/quant.h"
#include "common/residual4x4.h"

namespace gme {
namespace {

std::vector<const Residual4x4Funcs*> variants() {
  const Residual4x4Funcs* v[4];
  const int n = residual4x4_variants(v, 4);
  return std::vector<const Residual4x4Funcs*>(v, v + n);
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

TEST(Residual4x4, VariantsRegistered) {
  const auto v = variants();
  ASSERT_GE(v.size(), 1u);
  EXPECT_EQ(v[0], &residual4x4_ref());
  EXPECT_EQ(&residual4x4_best(), v.back());
#if defined(__x86_64__)
  ASSERT_GE(v.size(), 2u);
#endif
}

TEST(Residual4x4, ForwardAndInverseMatchReference) {
  const auto v = variants();
  const Residual4x4Funcs& ref = residual4x4_ref();
  std::mt19937 rng(4242);
  std::vector<uint8_t> src(4 * 67 + 8), pred(4 * 67 + 8), out_ref(4 * 67 + 8), out(4 * 67 + 8);
  int checked = 0;
  for (int rep = 0; rep < 600; ++rep) {
    const int mode = rep % 5;
    for (size_t i = 0; i < src.size(); ++i) {
      src[i] = sample(rng, mode, 0);
      pred[i] = sample(rng, mode, 1);
    }
    const int ss = (rep & 1) ? 67 : 16, ps = (rep & 2) ? 4 : 33, ds = (rep & 4) ? 19 : 64;
    const int qp = rep % 52, offset = (rep / 52) & 1 ? kOffsetIntraSlice : kOffsetInterSlice;
    for (int first = 0; first < 2; ++first) {
      int lz_ref[16], dc_ref = 0;
      const int nz_ref = ref.fwd(src.data() + 1, ss, pred.data() + 3, ps, qp, offset, first, lz_ref, &dc_ref);
      // Inverse of the forward's levels (the encoder's use) and of arbitrary levels within the writable range.
      int lz_any[16];
      for (int& l : lz_any) l = static_cast<int>(rng() % (2 * kMaxLevel + 1)) - kMaxLevel;
      const int dc_in = static_cast<int>(rng() % 400001) - 200000;
      for (size_t k = 1; k < v.size(); ++k) {
        int lz[16], dc = 0;
        std::memset(lz, 0x5A, sizeof lz);
        const int nz = v[k]->fwd(src.data() + 1, ss, pred.data() + 3, ps, qp, offset, first, lz, &dc);
        ASSERT_EQ(nz, nz_ref) << v[k]->name << " qp " << qp;
        for (int i = 0; i < 16; ++i) ASSERT_EQ(lz[i], lz_ref[i]) << v[k]->name << " qp " << qp << " pos " << i;
        if (first) {
          ASSERT_EQ(dc, dc_ref) << v[k]->name;
        }
        for (const int* levels : {static_cast<const int*>(lz_ref), static_cast<const int*>(lz_any)})
          for (const int* dcp : {static_cast<const int*>(nullptr), &dc_in}) {
            std::fill(out_ref.begin(), out_ref.end(), 7);
            std::fill(out.begin(), out.end(), 7);
            ref.inv(levels, qp, first, dcp, pred.data() + 3, ps, out_ref.data() + 2, ds);
            v[k]->inv(levels, qp, first, dcp, pred.data() + 3, ps, out.data() + 2, ds);
            ASSERT_EQ(out, out_ref) << v[k]->name << " inverse qp " << qp << " first " << first;
            ++checked;
          }
      }
    }
  }
  if (v.size() > 1) {
    EXPECT_GT(checked, 0);
  }
}

// The reference forward on a hand-checkable block: a constant residual d has only a DC coefficient 16 d.
TEST(Residual4x4, ReferenceKnownValues) {
  std::vector<uint8_t> src(16, 110), pred(16, 100);
  int lz[16], dc = 0;
  const int nz = residual4x4_ref().fwd(src.data(), 4, pred.data(), 4, 28, kOffsetIntraSlice, 1, lz, &dc);
  EXPECT_EQ(dc, 160);
  EXPECT_EQ(nz, 0);
  uint8_t rec[16];
  residual4x4_ref().inv(lz, 28, 1, nullptr, pred.data(), 4, rec, 4);
  for (uint8_t p : rec) EXPECT_EQ(p, 100);
}

// add_dc4x4 is the inverse of a block whose levels are all 0 with only the DC given (chroma without AC levels):
// the same samples as every variant's inv() for random and extreme predictions and the whole range of DCs a
// dequantised chroma DC can take (and beyond, for the clipping).
TEST(Residual4x4, DcOnlyInverseMatchesTheTransform) {
  const auto v = variants();
  std::mt19937 rng(77);
  const int zero[16] = {};
  std::vector<uint8_t> pred(4 * 13), out(4 * 21), want(4 * 21);
  for (int rep = 0; rep < 20000; ++rep) {
    for (uint8_t& p : pred) p = sample(rng, rep % 5, rep & 1);
    const int dc = rep < 2000 ? rep - 1000 : static_cast<int>(rng() % 131072) - 65536;
    const int qp = rep % 52;
    for (const Residual4x4Funcs* f : v) {
      f->inv(zero, qp, 1, &dc, pred.data(), 13, want.data(), 21);
      add_dc4x4(pred.data(), 13, dc, out.data(), 21);
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x)
          ASSERT_EQ(out[y * 21 + x], want[y * 21 + x]) << f->name << " dc " << dc << " at " << x << "," << y;
    }
  }
}

}  // namespace
}  // namespace gme
