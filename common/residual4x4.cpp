#include "common/residual4x4.h"

#include <cstring>

#include "common/quant.h"
#include "common/residual4x4_simd.h"
#include "common/transform.h"
#include "common/types.h"

namespace gme {
namespace {

// The plain versions: the separate steps (transform.h, quant.h) in their order.
int fwd_c(const uint8_t* src, int ss, const uint8_t* pred, int ps, int qp, int offset, int first, int levels_zz[16],
          int* dc) {
  int d[16], coef[16];
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) d[4 * y + x] = src[y * ss + x] - pred[y * ps + x];
  fdct4x4(d, coef);
  if (first) *dc = coef[0];
  return quant4x4(coef, qp, offset, first, levels_zz);
}

void inv_c(const int levels_zz[16], int qp, int first, const int* dc, const uint8_t* pred, int ps, uint8_t* dst,
           int ds) {
  int dq[16] = {}, r[16];
  dequant4x4(levels_zz, qp, first, dq);
  if (dc) dq[0] = *dc;
  idct4x4(dq, r);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) dst[y * ds + x] = clip_pixel(pred[y * ps + x] + r[4 * y + x]);
}

}  // namespace

void add_dc4x4(const uint8_t* pred, int pred_stride, int dc, uint8_t* dst, int dst_stride) {
  const int r = (dc + 32) >> 6;
  if (r == 0) {  // the usual case (no chroma residual at all): the prediction itself
    for (int y = 0; y < 4; ++y) std::memcpy(dst + y * dst_stride, pred + y * pred_stride, 4);
    return;
  }
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) dst[y * dst_stride + x] = clip_pixel(pred[y * pred_stride + x] + r);
}

void residual4x4_init(uint32_t cpu, Residual4x4Funcs& f) {
  f = {fwd_c, inv_c};
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) residual4x4_fill_sse2(f);
#else
  (void)cpu;
#endif
}

}  // namespace gme
