// checkasm: every pixel variant this CPU runs (pixel_variants()) against the plain C++ reference, bit for bit,
// on random and edge inputs, unaligned pointers and odd strides.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/pixel.h"
#include "common/copy_rows.h"
#include "common/plane_ssd.h"

namespace gme {
namespace {

enum class Fill { kRandom, kZero, k255, kAlternating, kExtremes };

struct Buffers {
  // Big enough for 16 rows at stride up to 67 plus offsets; a block starts at `offset` so pointers are unaligned.
  std::vector<uint8_t> a, b;
  Buffers() : a(16 * 80 + 64), b(16 * 80 + 64) {}
  void fill(Fill fa, Fill fb, std::mt19937& rng) {
    auto f = [&](std::vector<uint8_t>& v, Fill k, int phase) {
      for (size_t i = 0; i < v.size(); ++i) {
        switch (k) {
          case Fill::kRandom: v[i] = static_cast<uint8_t>(rng()); break;
          case Fill::kZero: v[i] = 0; break;
          case Fill::k255: v[i] = 255; break;
          case Fill::kAlternating: v[i] = ((i + phase) & 1) ? 255 : 0; break;
          case Fill::kExtremes: v[i] = (rng() & 1) ? 255 : 0; break;
        }
      }
    };
    f(a, fa, 0);
    f(b, fb, 1);
  }
};

const Fill kFills[] = {Fill::kRandom, Fill::kZero, Fill::k255, Fill::kAlternating, Fill::kExtremes};
const int kStrides[] = {16, 17, 31, 33, 64, 67};

std::vector<const PixelFuncs*> variants() {
  const PixelFuncs* v[8];
  int n = pixel_variants(v, 8);
  return std::vector<const PixelFuncs*>(v, v + n);
}

TEST(Checkasm, ReferenceIsFirstAndSimdRegisteredOnX86) {
  auto v = variants();
  ASSERT_GE(v.size(), 1u);
  EXPECT_EQ(v[0], &pixel_ref());
#if defined(__x86_64__)
  // SSE2 is part of x86-64: a missing SIMD variant would mean the dispatcher is broken, not the CPU.
  ASSERT_GE(v.size(), 2u);
  EXPECT_STREQ(v[1]->name, "sse2");
  if (__builtin_cpu_supports("avx2")) {
    ASSERT_GE(v.size(), 3u);
    EXPECT_STREQ(v[2]->name, "avx2");
  }
#endif
  EXPECT_EQ(&pixel_best(), v.back());
}

// Runs `check(funcs, a, as, b, bs)` for all variants against the reference on all fills/strides/offsets.
template <typename Check>
void for_all_inputs(Check check) {
  std::mt19937 rng(1234);
  Buffers buf;
  for (Fill fa : kFills)
    for (Fill fb : kFills)
      for (int rep = 0; rep < 3; ++rep) {
        buf.fill(fa, fb, rng);
        for (int as : kStrides)
          for (int bs : kStrides) {
            const int oa = static_cast<int>(rng() % 16), ob = static_cast<int>(rng() % 16);
            check(buf.a.data() + oa, as, buf.b.data() + ob, bs);
          }
      }
}

TEST(Checkasm, SadSatdSsdAllSizes) {
  const auto v = variants();
  const PixelFuncs& ref = pixel_ref();
  int checked = 0;
  for_all_inputs([&](const uint8_t* a, int as, const uint8_t* b, int bs) {
    for (int s = 0; s < kNumBlockSizes; ++s) {
      const uint32_t sad = ref.sad[s](a, as, b, bs);
      const uint32_t satd = ref.satd[s](a, as, b, bs);
      const uint64_t ssd = ref.ssd[s](a, as, b, bs);
      for (size_t k = 1; k < v.size(); ++k) {
        ASSERT_EQ(v[k]->sad[s](a, as, b, bs), sad) << v[k]->name << " sad size " << s;
        ASSERT_EQ(v[k]->satd[s](a, as, b, bs), satd) << v[k]->name << " satd size " << s;
        ASSERT_EQ(v[k]->ssd[s](a, as, b, bs), ssd) << v[k]->name << " ssd size " << s;
        ++checked;
      }
    }
  });
  if (v.size() > 1) {
    EXPECT_GT(checked, 0);
  }
}

TEST(Checkasm, Sad4x4x16) {
  const auto v = variants();
  const PixelFuncs& ref = pixel_ref();
  for_all_inputs([&](const uint8_t* a, int as, const uint8_t* b, int bs) {
    uint32_t want[16], got[16];
    ref.sad_4x4_x16(a, as, b, bs, want);
    for (size_t k = 1; k < v.size(); ++k) {
      std::memset(got, 0xAB, sizeof got);
      v[k]->sad_4x4_x16(a, as, b, bs, got);
      for (int i = 0; i < 16; ++i) ASSERT_EQ(got[i], want[i]) << v[k]->name << " block " << i;
    }
  });
}

TEST(Checkasm, HadamardAc16x16) {
  const auto v = variants();
  const PixelFuncs& ref = pixel_ref();
  for_all_inputs([&](const uint8_t* a, int as, const uint8_t* b, int bs) {
    int want_dc[16], got_dc[16];
    const uint32_t want = ref.hadamard_ac_16x16(a, as, b, bs, want_dc, UINT32_MAX);
    for (size_t k = 1; k < v.size(); ++k) {
      std::memset(got_dc, 0xAB, sizeof got_dc);
      ASSERT_EQ(v[k]->hadamard_ac_16x16(a, as, b, bs, got_dc, UINT32_MAX), want) << v[k]->name;
      for (int i = 0; i < 16; ++i) ASSERT_EQ(got_dc[i], want_dc[i]) << v[k]->name << " block " << i;
    }
    // With a budget: every variant stops after the same row of blocks (a partial sum >= budget, the same in all),
    // or, under budget, returns the whole sum and every DC.
    for (const uint32_t budget : {0u, 1u, want / 4, want / 2, want - (want > 0), want, want + 1}) {
      int ref_dc[16];
      const uint32_t r = ref.hadamard_ac_16x16(a, as, b, bs, ref_dc, budget);
      if (r < budget) {
        ASSERT_EQ(r, want) << "budget " << budget;
      } else {
        ASSERT_LE(r, want) << "budget " << budget;
      }
      for (size_t k = 1; k < v.size(); ++k) {
        std::memset(got_dc, 0xAB, sizeof got_dc);
        ASSERT_EQ(v[k]->hadamard_ac_16x16(a, as, b, bs, got_dc, budget), r) << v[k]->name << " budget " << budget;
        if (r < budget) {
          for (int i = 0; i < 16; ++i) ASSERT_EQ(got_dc[i], want_dc[i]) << v[k]->name << " block " << i;
        }
      }
    }
  });
}

TEST(Checkasm, Satd4x4xn) {
  const auto v = variants();
  const PixelFuncs& ref = pixel_ref();
  for_all_inputs([&](const uint8_t* a, int as, const uint8_t* b, int) {
    for (int n = 1; n <= 9; ++n) {  // b read as n contiguous 4x4 predictions (odd and even counts)
      uint32_t want[9], got[9];
      ref.satd_4x4_xn(a, as, b, n, want);
      for (int i = 0; i < n; ++i) ASSERT_EQ(want[i], ref.satd[kB4x4](a, as, b + 16 * i, 4)) << "reference " << i;
      for (size_t k = 1; k < v.size(); ++k) {
        std::memset(got, 0xAB, sizeof got);
        v[k]->satd_4x4_xn(a, as, b, n, got);
        for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << v[k]->name << " n " << n << " pred " << i;
      }
    }
  });
}

// The reference itself on hand-checkable inputs, so a wrong reference cannot make all variants "agree".
TEST(Checkasm, ReferenceKnownValues) {
  const PixelFuncs& r = pixel_ref();
  std::vector<uint8_t> z(16 * 16, 0), f(16 * 16, 255);
  EXPECT_EQ(r.sad[kB16x16](z.data(), 16, f.data(), 16), 256u * 255u);
  EXPECT_EQ(r.ssd[kB8x8](z.data(), 16, f.data(), 16), 64ull * 255 * 255);
  // A constant difference d on a 4x4 has one Hadamard coefficient 16 d: SATD = (16 d + 1) >> 1 = 8 d.
  EXPECT_EQ(r.satd[kB4x4](z.data(), 16, f.data(), 16), 8u * 255u);
  EXPECT_EQ(r.satd[kB16x16](z.data(), 16, f.data(), 16), 16u * 8u * 255u);
  // A single differing pixel (value 1): all 16 coefficients are +-1 -> (16 + 1) >> 1 = 8.
  std::vector<uint8_t> one(16 * 16, 0);
  one[5] = 1;
  EXPECT_EQ(r.satd[kB4x4](z.data(), 16, one.data() + 4, 16), 8u);
  uint32_t out[16];
  r.sad_4x4_x16(z.data(), 16, one.data(), 16, out);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], i == 1 ? 1u : 0u);
  // Constant difference -255: each block's only coefficient is the DC, 16 * -255 halved; no AC at all.
  int dc[16];
  EXPECT_EQ(r.hadamard_ac_16x16(z.data(), 16, f.data(), 16, dc, UINT32_MAX), 0u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(dc[i], -8 * 255);
  // One pixel differing by -1 in block 1: its 16 raw coefficients are +-1, halved to 0 or -1 (arithmetic
  // shift); the DC is -1 >> 1 = -1 and of the 15 AC coefficients those with raw -1 count 1 each.
  EXPECT_EQ(r.hadamard_ac_16x16(z.data(), 16, one.data(), 16, dc, UINT32_MAX), 7u);
  // The first row of blocks alone reaches a budget of 7: the sum stops there (rows 2-4 have no AC).
  EXPECT_EQ(r.hadamard_ac_16x16(z.data(), 16, one.data(), 16, dc, 7), 7u);
  EXPECT_EQ(dc[1], -1);
  EXPECT_EQ(dc[0], 0);
}

// plane_ssd (the PSNR's sum of squared differences): every variant against the reference on random areas of every
// width 1..70 (whole 16-sample steps plus every remainder), odd strides and offsets, and the extreme 0 / 255
// areas whose squares are largest.
TEST(Checkasm, PlaneSsd) {
  PlaneSsdFn fns[4];
  const char* names[4];
  const int n = plane_ssd_variants(fns, names, 4);
  ASSERT_GE(n, 1);
  EXPECT_STREQ(names[0], "c");
  std::mt19937 rng(4242);
  const int stride = 83;
  std::vector<uint8_t> a(stride * 40 + 16), b(stride * 40 + 16);
  for (int v = 1; v < n; ++v)
    for (int rep = 0; rep < 600; ++rep) {
      const int kind = rep % 3;
      for (size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<uint8_t>(kind == 1 ? 255 : rng());
        b[i] = static_cast<uint8_t>(kind == 1 ? 0 : rng());
      }
      const int w = 1 + rep % 70, h = 1 + rep % 37, oa = rep % 5, ob = rep % 3;
      ASSERT_EQ(fns[v](a.data() + oa, stride, b.data() + ob, stride, w, h), plane_ssd_c(a.data() + oa, stride, b.data() + ob, stride, w, h))
          << names[v] << " " << w << "x" << h;
    }
  // The reference itself on a hand-checkable case: differences 1, 2, 3 -> 1 + 4 + 9.
  const uint8_t x[3] = {10, 20, 30}, y[3] = {11, 18, 33};
  EXPECT_EQ(plane_ssd_c(x, 3, y, 3, 3, 1), 14u);
}

// copy_rows (the GPU path's staging copy): every variant against the reference, which against memcpy's own row
// copies, on every width 1..70 (the aligned middle and each head and tail length), destination offsets 0..15 so
// each alignment of the first streamed store occurs, odd strides, and bytes beside each row left untouched.
TEST(Checkasm, CopyRows) {
  CopyRowsFn fns[4];
  const char* names[4];
  const int n = copy_rows_variants(fns, names, 4);
  ASSERT_GE(n, 1);
  EXPECT_STREQ(names[0], "c");
#if defined(__x86_64__)
  ASSERT_GE(n, 2);  // SSE2 is part of x86-64
  EXPECT_STREQ(names[1], "sse2");
#endif
  std::mt19937 rng(777);
  const int src_stride = 89, dst_stride = 97;
  std::vector<uint8_t> src(src_stride * 24 + 32);
  for (int v = 0; v < n; ++v)
    for (int rep = 0; rep < 1200; ++rep) {
      for (uint8_t& b : src) b = static_cast<uint8_t>(rng());
      const int w = 1 + rep % 70, h = 1 + rep % 23, os = rep % 7, od = rep % 16;
      std::vector<uint8_t> got(dst_stride * 24 + 32, 0xA5), want = got;
      for (int y = 0; y < h; ++y)
        std::memcpy(want.data() + od + y * dst_stride, src.data() + os + y * src_stride, static_cast<size_t>(w));
      fns[v](got.data() + od, dst_stride, src.data() + os, src_stride, w, h);
      ASSERT_EQ(got, want) << names[v] << " " << w << "x" << h << " dst offset " << od;
    }
}

}  // namespace
}  // namespace gme
