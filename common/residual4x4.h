// One 4x4 block of residual coding, fused: forward (src - pred, core transform, JM quantisation into zig-zag
// levels) and inverse (dequantisation, inverse transform, pred + residual clipped into the picture). These run
// hundreds of times per macroblock (every Intra4x4 block is coded in every macroblock, RDOptimization 1 codes
// every mode and candidate), so the composition of diff / fdct4x4 / quant4x4 and dequant4x4 / idct4x4 / add
// is worth one SIMD pass. The plain C++ version is exactly that composition; residual4x4_init() installs the SIMD
// ones the CPU flags allow (part of DspFuncs, common/dsp.h; compared bit for bit by tests/test_checkasm.cpp).
#pragma once
#include <cstdint>

namespace gme {

// Forward. first = 1 leaves zig-zag position 0 (the DC) out of quantisation (Intra16x16 and chroma AC; it is then
// 0 in levels_zz) and stores the unquantised DC coefficient in *dc; first = 0 quantises all 16 (dc unused, may
// be null). offset: JM rounding offset in 1/2048 (quant.h). Returns the number of non-zero levels written.
using Fwd4x4Fn = int (*)(const uint8_t* src, int src_stride, const uint8_t* pred, int pred_stride, int qp,
                         int offset, int first, int levels_zz[16], int* dc);
// Inverse. Dequantises levels_zz positions >= first (dequant4x4); with dc != null raster position 0 becomes *dc
// (the already dequantised DC of Intra16x16 / chroma) instead; then idct4x4 and dst = clip(pred + residual).
using Inv4x4Fn = void (*)(const int levels_zz[16], int qp, int first, const int* dc, const uint8_t* pred,
                          int pred_stride, uint8_t* dst, int dst_stride);

struct Residual4x4Funcs {
  Fwd4x4Fn fwd;
  Inv4x4Fn inv;
};

// The inverse of a block whose only coefficient is its (already dequantised) DC: the inverse transform (8.5.12)
// gives every sample (dc + 32) >> 6, so dst = clip(pred + (dc + 32) >> 6). Equal to inv() with all levels 0 and
// *dc = dc (tests/test_residual4x4.cpp).
void add_dc4x4(const uint8_t* pred, int pred_stride, int dc, uint8_t* dst, int dst_stride);

// Fills f for the CPU flags (common/cpu.h).
void residual4x4_init(uint32_t cpu, Residual4x4Funcs& f);

}  // namespace gme
