#include "common/halfpel.h"

#include <vector>

namespace gme {
namespace {

// (p0 + p5) - 5 (p1 + p4) + 20 (p2 + p3): the 6-tap filter of 8.4.2.2.1.
template <typename T>
inline int tap6(T p0, T p1, T p2, T p3, T p4, T p5) {
  return (p0 + p5) - 5 * (p1 + p4) + 20 * (p2 + p3);
}

}  // namespace

void build_halfpel_planes(const Plane& luma, HalfpelPlanes* out) {
  const int W = luma.width, H = luma.height, P = kHalfpelPad;
  for (Plane* p : {&out->g, &out->b, &out->h, &out->j})
    if (p->width != W || p->height != H || p->pad != P) p->alloc(W, H, P);
  // Rows -P-2 .. H+P+2 of G (edge-replicated, columns -P-2 .. W+P+3) and of the unrounded horizontal half-pel
  // intermediate b1 (columns -P .. W+P-1): the vertical taps of h and j read 2 rows above and 3 below.
  const int ext_w = W + 2 * P + 6, rows = H + 2 * P + 5, out_w = W + 2 * P;
  std::vector<uint8_t> gx(static_cast<size_t>(ext_w) * rows);
  std::vector<int16_t> b1(static_cast<size_t>(out_w) * rows);
  for (int r = 0; r < rows; ++r) {
    const uint8_t* src = luma.row(clip3(0, H - 1, r - P - 2));
    uint8_t* e = &gx[static_cast<size_t>(r) * ext_w];
    for (int c = 0; c < ext_w; ++c) e[c] = src[clip3(0, W - 1, c - P - 2)];
    int16_t* o = &b1[static_cast<size_t>(r) * out_w];
    for (int c = 0; c < out_w; ++c)  // b1 at column c - P: G columns c - P - 2 .. c - P + 3 = e[c .. c + 5]
      o[c] = static_cast<int16_t>(tap6<int>(e[c], e[c + 1], e[c + 2], e[c + 3], e[c + 4], e[c + 5]));
  }
  for (int y = -P; y < H + P; ++y) {
    const int r = y + P + 2;  // buffer row of picture row y
    const uint8_t* e[6];
    const int16_t* t[6];
    for (int k = 0; k < 6; ++k) {
      e[k] = &gx[static_cast<size_t>(r - 2 + k) * ext_w + 2];  // column 0 = picture column -P
      t[k] = &b1[static_cast<size_t>(r - 2 + k) * out_w];
    }
    uint8_t* g = out->g.row(y) - P;
    uint8_t* b = out->b.row(y) - P;
    uint8_t* h = out->h.row(y) - P;
    uint8_t* j = out->j.row(y) - P;
    for (int c = 0; c < out_w; ++c) {
      g[c] = e[2][c];
      b[c] = clip_pixel((t[2][c] + 16) >> 5);
      h[c] = clip_pixel((tap6<int>(e[0][c], e[1][c], e[2][c], e[3][c], e[4][c], e[5][c]) + 16) >> 5);
      j[c] = clip_pixel((tap6<int>(t[0][c], t[1][c], t[2][c], t[3][c], t[4][c], t[5][c]) + 512) >> 10);
    }
  }
}

}  // namespace gme
