// H.264 integer transforms (clause 8.5.12 for the inverse; the forward ones are the usual encoder-side
// counterparts). Blocks are 16 ints in raster order (index x + 4 * y).
#pragma once
#include <cstdint>

namespace gme {

// Forward 4x4 core transform of a residual block (Cf * X * Cf^T), no scaling.
void fdct4x4(const int in[16], int out[16]);
// Inverse 4x4 transform of dequantised coefficients d (8.5.12.2), including the final (x + 32) >> 6:
// returns the residual r.
void idct4x4(const int d[16], int r[16]);

// Forward 4x4 Hadamard of the 16 luma DC coefficients of an Intra16x16 macroblock, with JM's halving of
// each output ((x) >> 1), raster in/out.
void fwd_hadamard4x4_dc(const int in[16], int out[16]);
// Inverse 4x4 Hadamard (8.5.10, the c -> f step, no scaling).
void inv_hadamard4x4(const int in[16], int out[16]);

// 2x2 Hadamard of the chroma DC coefficients (forward and inverse are the same matrix): index x + 2 * y.
void hadamard2x2(const int in[4], int out[4]);

// Zig-zag scan (frame macroblocks): kZigzag4x4[i] is the raster index of scan position i.
extern const uint8_t kZigzag4x4[16];

}  // namespace gme
