// Quantisation and dequantisation (H.264 8.5.9 .. 8.5.12 for the decoder side, flat scaling matrices).
//
// Forward quantisation follows JM 19.0: level = (|c| * Q + f) >> qbits, f = offset << (qbits - 11) where offset is
// a rounding offset in 1/2048 units. JM's default offsets are 682 (~1/3) for every block of an I slice and 342
// (~1/6) for every block of a P slice, intra macroblocks included (JM's INTRA4X4_*_INTERP lists); with
// AdaptiveRounding they become one offset per coefficient position that adapts as the picture is coded
// (common/quant_rounding.h, quant4x4_adaptive below).
#pragma once
#include <cstdint>

namespace gme {

constexpr int kOffsetIntraSlice = 682;  // JM Offset_intra_default_intra / _chroma
constexpr int kOffsetInterSlice = 342;  // JM Offset_intra_default_inter / Offset_inter_default
// Largest |level| written: keeps CAVLC level_prefix <= 15, as Baseline requires (see cavlc.cpp).
constexpr int kMaxLevel = 2063;

// QP'c from the chroma qPI (Table 8-15).
int chroma_qp(int qp_y, int chroma_qp_offset);

// Quantises a transformed 4x4 block (raster order in coef) into levels in zig-zag scan order. first = 1 skips
// the DC position (Intra16x16 AC, chroma AC). Returns the number of non-zero levels.
int quant4x4(const int coef[16], int qp, int offset, int first, int levels_zz[16]);
// JM 19.0 quant_4x4_around / quant_ac4x4_around (quant4x4_around.c): as quant4x4 with one offset per coefficient
// position (raster, 1/2048), also writing each position's adaptive-rounding adjustment into adjust (raster):
// round((weight * (|c| * Q - (level << qbits))) / 2^(qbits + 1)) for a non-zero level, 0 for a zero coefficient
// or level; positions below `first` (zig-zag) keep their adjust value. Levels are clipped to kMaxLevel before
// the adjustment is taken, and the arithmetic is JM's 32-bit int arithmetic.
int quant4x4_adaptive(const int coef[16], int qp, const int16_t offset[16], int weight, int first, int levels_zz[16],
                      int16_t adjust[16]);
// Quantises the 4x4 luma DC block (already Hadamard transformed and halved) into zig-zag levels.
int quant_dc4x4(const int dc[16], int qp, int offset, int levels_zz[16]);
// Quantises the 2x2 chroma DC block (Hadamard transformed), raster order levels.
int quant_dc2x2(const int dc[4], int qp, int offset, int levels[4]);

// Decoder-side scaling, bit exact with 8.5.12.1 (flat weights). levels_zz in scan order; writes raster d[16]
// (positions below `first` untouched).
void dequant4x4(const int levels_zz[16], int qp, int first, int d[16]);
// Luma DC (8.5.10): inverse Hadamard of the zig-zag levels, then scaling; out raster dcY[16].
void dequant_dc4x4(const int levels_zz[16], int qp, int dcY[16]);
// Chroma DC (8.5.11.2), 4:2:0.
void dequant_dc2x2(const int levels[4], int qp_c, int dcC[4]);

// Forward scaling factors (JM quant_coef) and normAdjust4x4 v (Table 8-? dequant_coef) at position raster i.
int quant_scale(int qp_rem, int i);
int dequant_scale(int qp_rem, int i);

}  // namespace gme
