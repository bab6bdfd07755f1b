#include "common/pixel.h"

#include <cstdlib>

#include "common/cpu.h"
#include "common/pixel_simd_impl.h"

namespace gme {
namespace {

template <int W, int H>
uint32_t sad_c(const uint8_t* a, int as, const uint8_t* b, int bs) {
  uint32_t s = 0;
  for (int y = 0; y < H; ++y, a += as, b += bs)
    for (int x = 0; x < W; ++x) s += static_cast<uint32_t>(std::abs(a[x] - b[x]));
  return s;
}

template <int W, int H>
uint64_t ssd_c(const uint8_t* a, int as, const uint8_t* b, int bs) {
  uint64_t s = 0;
  for (int y = 0; y < H; ++y, a += as, b += bs)
    for (int x = 0; x < W; ++x) { int d = a[x] - b[x]; s += static_cast<uint64_t>(d * d); }
  return s;
}

uint32_t satd4x4_c(const uint8_t* a, int as, const uint8_t* b, int bs) {
  int d[16], m[16];
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) d[4 * y + x] = a[y * as + x] - b[y * bs + x];
  for (int y = 0; y < 4; ++y) {  // horizontal
    int* r = d + 4 * y;
    int s01 = r[0] + r[1], d01 = r[0] - r[1], s23 = r[2] + r[3], d23 = r[2] - r[3];
    m[4 * y + 0] = s01 + s23; m[4 * y + 1] = s01 - s23; m[4 * y + 2] = d01 - d23; m[4 * y + 3] = d01 + d23;
  }
  uint32_t s = 0;
  for (int x = 0; x < 4; ++x) {  // vertical
    int s01 = m[x] + m[4 + x], d01 = m[x] - m[4 + x], s23 = m[8 + x] + m[12 + x], d23 = m[8 + x] - m[12 + x];
    s += std::abs(s01 + s23) + std::abs(s01 - s23) + std::abs(d01 - d23) + std::abs(d01 + d23);
  }
  return (s + 1) >> 1;
}

template <int W, int H>
uint32_t satd_c(const uint8_t* a, int as, const uint8_t* b, int bs) {
  uint32_t s = 0;
  for (int y = 0; y < H; y += 4)
    for (int x = 0; x < W; x += 4) s += satd4x4_c(a + y * as + x, as, b + y * bs + x, bs);
  return s;
}

void sad_4x4_x16_c(const uint8_t* cur, int cs, const uint8_t* ref, int rs, uint32_t out[16]) {
  for (int i = 0; i < 16; ++i)
    out[i] = sad_c<4, 4>(cur + (i >> 2) * 4 * cs + (i & 3) * 4, cs, ref + (i >> 2) * 4 * rs + (i & 3) * 4, rs);
}

uint32_t hadamard_ac_16x16_c(const uint8_t* a, int as, const uint8_t* b, int bs, int dc[16], uint32_t budget) {
  uint32_t ac = 0;
  for (int blk = 0; blk < 16; ++blk) {
    if ((blk & 3) == 0 && blk > 0 && ac >= budget) return ac;  // a row of four blocks done: over budget already
    const int bx = 4 * (blk & 3), by = 4 * (blk >> 2);
    int t[16];
    for (int y = 0; y < 4; ++y) {  // horizontal pass on the differences
      int r[4];
      for (int x = 0; x < 4; ++x) r[x] = a[(by + y) * as + bx + x] - b[(by + y) * bs + bx + x];
      const int s03 = r[0] + r[3], d03 = r[0] - r[3], s12 = r[1] + r[2], d12 = r[1] - r[2];
      t[4 * y + 0] = s03 + s12; t[4 * y + 1] = d03 + d12; t[4 * y + 2] = s03 - s12; t[4 * y + 3] = d03 - d12;
    }
    for (int x = 0; x < 4; ++x) {  // vertical pass, each output halved
      const int s03 = t[x] + t[12 + x], d03 = t[x] - t[12 + x], s12 = t[4 + x] + t[8 + x], d12 = t[4 + x] - t[8 + x];
      const int o[4] = {(s03 + s12) >> 1, (d03 + d12) >> 1, (s03 - s12) >> 1, (d03 - d12) >> 1};
      for (int k = 0; k < 4; ++k)
        if (x != 0 || k != 0) ac += static_cast<uint32_t>(std::abs(o[k]));
      if (x == 0) dc[blk] = o[0];
    }
  }
  return ac;
}

void satd_4x4_xn_c(const uint8_t* src, int ss, const uint8_t* preds, int n, uint32_t* out) {
  for (int i = 0; i < n; ++i) out[i] = satd4x4_c(src, ss, preds + 16 * i, 4);
}

const PixelFuncs kRef = {
    {sad_c<16, 16>, sad_c<16, 8>, sad_c<8, 16>, sad_c<8, 8>, sad_c<8, 4>, sad_c<4, 8>, sad_c<4, 4>},
    {satd_c<16, 16>, satd_c<16, 8>, satd_c<8, 16>, satd_c<8, 8>, satd_c<8, 4>, satd_c<4, 8>, satd_c<4, 4>},
    {ssd_c<16, 16>, ssd_c<16, 8>, ssd_c<8, 16>, ssd_c<8, 8>, ssd_c<8, 4>, ssd_c<4, 8>, ssd_c<4, 4>},
    sad_4x4_x16_c,
    hadamard_ac_16x16_c,
    satd_4x4_xn_c,
};

}  // namespace

const PixelFuncs& pixel_ref() { return kRef; }

void pixel_init(uint32_t cpu, PixelFuncs& f) {
  f = kRef;
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) pixel_fill_sse2(f);
  if (cpu & kCpuAvx2) pixel_fill_avx2(f);
#else
  (void)cpu;
#endif
}

}  // namespace gme
