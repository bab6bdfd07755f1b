#include "common/quant.h"

#include <cstdlib>

#include "common/transform.h"
#include "common/types.h"

namespace gme {
namespace {

// Position class in a 4x4 block: 0 for (even, even), 1 for (odd, odd), 2 otherwise.
inline int pos_class(int i) {
  int x = i & 3, y = i >> 2;
  if (!(x & 1) && !(y & 1)) return 0;
  if ((x & 1) && (y & 1)) return 1;
  return 2;
}

const int kQuant[6][3] = {{13107, 5243, 8066}, {11916, 4660, 7490}, {10082, 4194, 6554},
                          {9362, 3647, 5825},  {8192, 3355, 5243},  {7282, 2893, 4559}};
const int kDequant[6][3] = {{10, 16, 13}, {11, 18, 14}, {13, 20, 16}, {14, 23, 18}, {16, 25, 20}, {18, 29, 23}};

const uint8_t kChromaQp[52] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17,
                               18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 29, 30, 31, 32, 32, 33,
                               34, 34, 35, 35, 36, 36, 37, 37, 37, 38, 38, 38, 39, 39, 39, 39};

inline int quant_one(int c, int q, int f, int qbits) {
  int level = static_cast<int>((static_cast<int64_t>(std::abs(c)) * q + f) >> qbits);
  if (level > kMaxLevel) level = kMaxLevel;
  return c < 0 ? -level : level;
}

// JM quant_coef by zig-zag scan position: quant4x4 walks the scan, so the position class and the raster index
// are looked up once here rather than per coefficient. kZigzag4x4 is constant-initialised (no init-order issue).
struct QuantByScan {
  int q[6][16];
  int raster[16];
  QuantByScan() {
    for (int k = 0; k < 16; ++k) {
      raster[k] = kZigzag4x4[k];
      for (int r = 0; r < 6; ++r) q[r][k] = kQuant[r][pos_class(kZigzag4x4[k])];
    }
  }
};
const QuantByScan kQuantByScan;

}  // namespace

int quant_scale(int qp_rem, int i) { return kQuant[qp_rem][pos_class(i)]; }
int dequant_scale(int qp_rem, int i) { return kDequant[qp_rem][pos_class(i)]; }

int chroma_qp(int qp_y, int chroma_qp_offset) { return kChromaQp[clip3(0, 51, qp_y + chroma_qp_offset)]; }

int quant4x4(const int coef[16], int qp, int offset, int first, int levels_zz[16]) {
  const int qbits = 15 + qp / 6, rem = qp % 6;
  const int f = offset << (qbits - 11);
  const int* q = kQuantByScan.q[rem];
  int nz = 0;
  for (int k = 0; k < first; ++k) levels_zz[k] = 0;
  for (int k = first; k < 16; ++k) {
    levels_zz[k] = quant_one(coef[kQuantByScan.raster[k]], q[k], f, qbits);
    nz += levels_zz[k] != 0;
  }
  return nz;
}

namespace {

// JM's rshift_rnd_sf on an int product (x + 2^(a-1)) >> a, in its 32-bit wrap-around arithmetic.
inline int32_t jm_round_shift(int64_t x, int a) {
  const uint32_t wrapped = static_cast<uint32_t>(x) + (1u << (a - 1));
  return static_cast<int32_t>(wrapped) >> a;
}

}  // namespace

int quant4x4_adaptive(const int coef[16], int qp, const int16_t offset[16], int weight, int first, int levels_zz[16],
                      int16_t adjust[16]) {
  const int per = qp / 6, rem = qp % 6, qbits = 15 + per;
  int nz = 0;
  for (int k = 0; k < first; ++k) levels_zz[k] = 0;
  for (int k = first; k < 16; ++k) {
    const int i = kQuantByScan.raster[k];
    const int c = coef[i];
    levels_zz[k] = 0;
    adjust[i] = 0;
    if (c == 0) continue;
    const int scaled = std::abs(c) * kQuantByScan.q[rem][k];
    int level = (scaled + (offset[i] << (qbits - 11))) >> qbits;
    if (level == 0) continue;
    if (level > kMaxLevel) level = kMaxLevel;
    // JM stores the adjustment as int and adds it to its offset list as short: the truncation is the same here.
    adjust[i] = static_cast<int16_t>(
        jm_round_shift(static_cast<int64_t>(weight) * static_cast<int32_t>(static_cast<uint32_t>(scaled) -
                                                                         (static_cast<uint32_t>(level) << qbits)),
                       qbits + 1));
    levels_zz[k] = c < 0 ? -level : level;
    ++nz;
  }
  return nz;
}

int quant_dc4x4(const int dc[16], int qp, int offset, int levels_zz[16]) {
  // One more bit of shift than AC: the DC path carries the extra gain of the Hadamard (halved already).
  const int qbits = 16 + qp / 6, rem = qp % 6;
  const int f = offset << (qbits - 11);
  int nz = 0;
  for (int k = 0; k < 16; ++k) {
    levels_zz[k] = quant_one(dc[kZigzag4x4[k]], kQuant[rem][0], f, qbits);
    nz += levels_zz[k] != 0;
  }
  return nz;
}

int quant_dc2x2(const int dc[4], int qp, int offset, int levels[4]) {
  const int qbits = 16 + qp / 6, rem = qp % 6;
  const int f = offset << (qbits - 11);
  int nz = 0;
  for (int k = 0; k < 4; ++k) {
    levels[k] = quant_one(dc[k], kQuant[rem][0], f, qbits);
    nz += levels[k] != 0;
  }
  return nz;
}

void dequant4x4(const int levels_zz[16], int qp, int first, int d[16]) {
  // LevelScale4x4 = 16 * v with flat weights; (c * 16v) << (qp/6 - 4) (rounded right shift below qp 24) is
  // exactly (c * v) << (qp/6).
  const int per = qp / 6, rem = qp % 6;
  for (int k = first; k < 16; ++k) {
    int i = kZigzag4x4[k];
    d[i] = (levels_zz[k] * dequant_scale(rem, i)) * (1 << per);
  }
}

void dequant_dc4x4(const int levels_zz[16], int qp, int dcY[16]) {
  int c[16], f[16];
  for (int k = 0; k < 16; ++k) c[kZigzag4x4[k]] = levels_zz[k];
  inv_hadamard4x4(c, f);
  const int per = qp / 6, scale = 16 * kDequant[qp % 6][0];
  for (int i = 0; i < 16; ++i) {
    if (qp >= 36) dcY[i] = (f[i] * scale) * (1 << (per - 6));
    else dcY[i] = (f[i] * scale + (1 << (5 - per))) >> (6 - per);
  }
}

void dequant_dc2x2(const int levels[4], int qp_c, int dcC[4]) {
  int f[4];
  hadamard2x2(levels, f);
  const int per = qp_c / 6, scale = 16 * kDequant[qp_c % 6][0];
  for (int i = 0; i < 4; ++i) dcC[i] = ((f[i] * scale) * (1 << per)) >> 5;
}

}  // namespace gme
