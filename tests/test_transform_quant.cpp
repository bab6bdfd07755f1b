// Transforms and (de)quantisation against the standard's formulas (8.5.9 - 8.5.12) and hand-worked values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "common/quant.h"
#include "common/transform.h"

namespace gme {
namespace {

// The scaling of 8.5.12.1 written literally with LevelScale4x4 = weightScale (16) * normAdjust.
int spec_scale_ac(int c, int qp, int i) {
  const int ls = 16 * dequant_scale(qp % 6, i);
  if (qp >= 24) return c * ls * (1 << (qp / 6 - 4));  // a product: << of a negative level is undefined in C++17
  return (c * ls + (1 << (3 - qp / 6))) >> (4 - qp / 6);
}

TEST(Transform, ForwardOfConstantIsDcOnly) {
  int x[16], y[16];
  for (int& v : x) v = 3;
  fdct4x4(x, y);
  EXPECT_EQ(y[0], 48);
  for (int i = 1; i < 16; ++i) EXPECT_EQ(y[i], 0);
}

TEST(Transform, InverseOfDcLevelHandWorked) {
  // Level 1 at DC, QP 28: d = 1 * 16 << 4 = 256; every residual sample is (256 + 32) >> 6 = 4.
  int lev[16] = {1}, d[16] = {}, r[16];
  dequant4x4(lev, 28, 0, d);
  EXPECT_EQ(d[0], 256);
  idct4x4(d, r);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(r[i], 4);
}

TEST(Transform, InverseMatchesMatrixDefinition) {
  // 8.5.12.2 as matrices: f = Ci * d (rows) then Ci^T, with the >> 1 taps, then (x + 32) >> 6.
  std::mt19937 rng(1);
  for (int iter = 0; iter < 500; ++iter) {
    int d[16], r[16];
    for (int& v : d) v = static_cast<int>(rng() % 2001) - 1000;
    idct4x4(d, r);
    int e[16], f[16];
    for (int i = 0; i < 4; ++i) {  // horizontal (rows)
      const int* c = d + 4 * i;
      int a0 = c[0] + c[2], a1 = c[0] - c[2], a2 = (c[1] >> 1) - c[3], a3 = c[1] + (c[3] >> 1);
      e[4 * i + 0] = a0 + a3; e[4 * i + 1] = a1 + a2; e[4 * i + 2] = a1 - a2; e[4 * i + 3] = a0 - a3;
    }
    for (int j = 0; j < 4; ++j) {
      int g0 = e[j] + e[8 + j], g1 = e[j] - e[8 + j], g2 = (e[4 + j] >> 1) - e[12 + j], g3 = e[4 + j] + (e[12 + j] >> 1);
      f[j] = g0 + g3; f[4 + j] = g1 + g2; f[8 + j] = g1 - g2; f[12 + j] = g0 - g3;
    }
    for (int i = 0; i < 16; ++i) ASSERT_EQ(r[i], (f[i] + 32) >> 6);
  }
}

TEST(Quant, DequantMatchesSpecFormulaAllQp) {
  for (int qp = 0; qp <= 51; ++qp) {
    for (int c = -40; c <= 40; c += 7) {
      int lev[16], d[16];
      for (int k = 0; k < 16; ++k) lev[k] = c + k;
      dequant4x4(lev, qp, 0, d);
      for (int k = 0; k < 16; ++k) {
        const int i = kZigzag4x4[k];
        ASSERT_EQ(d[i], spec_scale_ac(lev[k], qp, i)) << "qp " << qp;
      }
    }
  }
}

TEST(Quant, LumaDcDequantMatchesSpecFormula) {
  std::mt19937 rng(3);
  for (int qp = 0; qp <= 51; ++qp) {
    int lev[16], out[16], c[16], f[16];
    for (int& v : lev) v = static_cast<int>(rng() % 61) - 30;
    dequant_dc4x4(lev, qp, out);
    for (int k = 0; k < 16; ++k) c[kZigzag4x4[k]] = lev[k];
    // f = H c H with H = [[1,1,1,1],[1,1,-1,-1],[1,-1,-1,1],[1,-1,1,-1]]
    const int H[4][4] = {{1, 1, 1, 1}, {1, 1, -1, -1}, {1, -1, -1, 1}, {1, -1, 1, -1}};
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        int s = 0;
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b) s += H[i][a] * c[4 * a + b] * H[b][j];
        f[4 * i + j] = s;
      }
    const int ls = 16 * dequant_scale(qp % 6, 0);
    for (int i = 0; i < 16; ++i) {
      int expect = qp >= 36 ? f[i] * ls * (1 << (qp / 6 - 6)) : (f[i] * ls + (1 << (5 - qp / 6))) >> (6 - qp / 6);
      ASSERT_EQ(out[i], expect) << "qp " << qp;
    }
  }
}

TEST(Quant, ChromaDcDequantMatchesSpecFormula) {
  for (int qp = 0; qp <= 39; ++qp) {
    int lev[4] = {5, -3, 2, 1}, out[4];
    dequant_dc2x2(lev, qp, out);
    const int f[4] = {5 - 3 + 2 + 1, 5 + 3 + 2 - 1, 5 - 3 - 2 - 1, 5 + 3 - 2 + 1};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], (f[i] * 16 * dequant_scale(qp % 6, 0) * (1 << (qp / 6))) >> 5);
  }
}

TEST(Quant, ChromaQpTable) {
  EXPECT_EQ(chroma_qp(29, 0), 29);
  EXPECT_EQ(chroma_qp(30, 0), 29);
  EXPECT_EQ(chroma_qp(34, 0), 32);
  EXPECT_EQ(chroma_qp(39, 0), 35);
  EXPECT_EQ(chroma_qp(51, 0), 39);
  EXPECT_EQ(chroma_qp(51, 12), 39);
  EXPECT_EQ(chroma_qp(0, -12), 0);
  EXPECT_EQ(chroma_qp(40, -4), 34);  // qPI 36
}

TEST(Quant, RoundingOffsetThreshold) {
  // QP 28 (per 4, rem 4): DC scale 8192, qbits 19. Level 1 needs |c| * 8192 + f >= 2^19.
  // Intra offset 682/2048 -> f = 682 << 8: threshold |c| >= (524288 - 174592) / 8192 = 42.69 -> 43.
  int coef[16] = {}, lev[16];
  coef[0] = 42;
  EXPECT_EQ(quant4x4(coef, 28, kOffsetIntraSlice, 0, lev), 0);
  coef[0] = -43;
  EXPECT_EQ(quant4x4(coef, 28, kOffsetIntraSlice, 0, lev), 1);
  EXPECT_EQ(lev[0], -1);
  // Inter offset 342: threshold (524288 - 87552) / 8192 = 53.3 -> 54.
  coef[0] = 53;
  EXPECT_EQ(quant4x4(coef, 28, kOffsetInterSlice, 0, lev), 0);
  coef[0] = 54;
  EXPECT_EQ(quant4x4(coef, 28, kOffsetInterSlice, 0, lev), 1);
}

TEST(Quant, LevelsAreClippedForBaselineCavlc) {
  int coef[16] = {}, lev[16];
  coef[0] = 100000;
  quant4x4(coef, 0, kOffsetIntraSlice, 0, lev);
  EXPECT_EQ(lev[0], kMaxLevel);
}

TEST(TransformQuant, RoundTripErrorBoundedByStepSize) {
  std::mt19937 rng(11);
  for (int qp = 0; qp <= 51; ++qp) {
    // Qstep doubles every 6 QP: 0.625 at QP 0.
    const double qstep = 0.625 * std::pow(2.0, qp / 6.0);
    double err = 0;
    int n = 0;
    for (int iter = 0; iter < 200; ++iter) {
      int x[16], c[16], lev[16], d[16], r[16];
      for (int& v : x) v = static_cast<int>(rng() % 101) - 50;
      fdct4x4(x, c);
      quant4x4(c, qp, 1024, 0, lev);  // mid-point rounding for this check
      dequant4x4(lev, qp, 0, d);
      idct4x4(d, r);
      for (int i = 0; i < 16; ++i, ++n) err += std::abs(r[i] - x[i]);
    }
    EXPECT_LE(err / n, qstep * 0.6 + 0.6) << "qp " << qp;
  }
}

TEST(Transform, HadamardsInvertWithGain) {
  int x[16], h[16], back[16];
  for (int i = 0; i < 16; ++i) x[i] = 3 * i - 17;
  inv_hadamard4x4(x, h);
  inv_hadamard4x4(h, back);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back[i], 16 * x[i]);
  int c[4] = {7, -2, 5, 1}, f[4], g[4];
  hadamard2x2(c, f);
  hadamard2x2(f, g);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(g[i], 4 * c[i]);
}

}  // namespace
}  // namespace gme
