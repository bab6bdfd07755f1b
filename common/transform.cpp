#include "common/transform.h"

namespace gme {

const uint8_t kZigzag4x4[16] = {0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15};

void fdct4x4(const int in[16], int out[16]) {
  int t[16];
  for (int y = 0; y < 4; ++y) {  // rows
    const int* r = in + 4 * y;
    int s03 = r[0] + r[3], d03 = r[0] - r[3], s12 = r[1] + r[2], d12 = r[1] - r[2];
    t[4 * y + 0] = s03 + s12;
    t[4 * y + 1] = 2 * d03 + d12;
    t[4 * y + 2] = s03 - s12;
    t[4 * y + 3] = d03 - 2 * d12;
  }
  for (int x = 0; x < 4; ++x) {  // columns
    int s03 = t[x] + t[12 + x], d03 = t[x] - t[12 + x], s12 = t[4 + x] + t[8 + x], d12 = t[4 + x] - t[8 + x];
    out[x] = s03 + s12;
    out[4 + x] = 2 * d03 + d12;
    out[8 + x] = s03 - s12;
    out[12 + x] = d03 - 2 * d12;
  }
}

void idct4x4(const int d[16], int r[16]) {
  int f[16];
  for (int y = 0; y < 4; ++y) {  // rows first, as 8.5.12.2 specifies
    const int* c = d + 4 * y;
    int e0 = c[0] + c[2], e1 = c[0] - c[2], e2 = (c[1] >> 1) - c[3], e3 = c[1] + (c[3] >> 1);
    f[4 * y + 0] = e0 + e3;
    f[4 * y + 1] = e1 + e2;
    f[4 * y + 2] = e1 - e2;
    f[4 * y + 3] = e0 - e3;
  }
  for (int x = 0; x < 4; ++x) {
    int g0 = f[x] + f[8 + x], g1 = f[x] - f[8 + x], g2 = (f[4 + x] >> 1) - f[12 + x], g3 = f[4 + x] + (f[12 + x] >> 1);
    r[x] = (g0 + g3 + 32) >> 6;
    r[4 + x] = (g1 + g2 + 32) >> 6;
    r[8 + x] = (g1 - g2 + 32) >> 6;
    r[12 + x] = (g0 - g3 + 32) >> 6;
  }
}

namespace {
void hadamard4(const int in[16], int out[16], int shift) {
  int t[16];
  for (int y = 0; y < 4; ++y) {
    const int* r = in + 4 * y;
    int s03 = r[0] + r[3], d03 = r[0] - r[3], s12 = r[1] + r[2], d12 = r[1] - r[2];
    t[4 * y + 0] = s03 + s12;
    t[4 * y + 1] = d03 + d12;
    t[4 * y + 2] = s03 - s12;
    t[4 * y + 3] = d03 - d12;
  }
  for (int x = 0; x < 4; ++x) {
    int s03 = t[x] + t[12 + x], d03 = t[x] - t[12 + x], s12 = t[4 + x] + t[8 + x], d12 = t[4 + x] - t[8 + x];
    out[x] = (s03 + s12) >> shift;
    out[4 + x] = (d03 + d12) >> shift;
    out[8 + x] = (s03 - s12) >> shift;
    out[12 + x] = (d03 - d12) >> shift;
  }
}
}  // namespace

void fwd_hadamard4x4_dc(const int in[16], int out[16]) { hadamard4(in, out, 1); }
void inv_hadamard4x4(const int in[16], int out[16]) { hadamard4(in, out, 0); }

void hadamard2x2(const int in[4], int out[4]) {
  out[0] = in[0] + in[1] + in[2] + in[3];
  out[1] = in[0] - in[1] + in[2] - in[3];
  out[2] = in[0] + in[1] - in[2] - in[3];
  out[3] = in[0] - in[1] - in[2] + in[3];
}

}  // namespace gme
