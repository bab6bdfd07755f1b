// Block distortion primitives. Each has a plain C++ reference (pixel.cpp); pixel_init() replaces those the CPU
// flags allow by SIMD versions (pixel_simd_*.cpp). The table is part of DspFuncs (common/dsp.h), where
// tests/test_checkasm.cpp compares every SIMD entry with the plain one bit for bit.
#pragma once
#include <cstdint>

namespace gme {

// Block sizes indexed as in JM's block types: 16x16, 16x8, 8x16, 8x8, 8x4, 4x8, 4x4.
enum BlockSize { kB16x16 = 0, kB16x8, kB8x16, kB8x8, kB8x4, kB4x8, kB4x4, kNumBlockSizes };
constexpr int kBlockW[kNumBlockSizes] = {16, 16, 8, 8, 8, 4, 4};
constexpr int kBlockH[kNumBlockSizes] = {16, 8, 16, 8, 4, 8, 4};

using SadFn = uint32_t (*)(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride);
using SsdFn = uint64_t (*)(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride);

struct PixelFuncs {
  SadFn sad[kNumBlockSizes];
  // Sum of absolute Hadamard-transformed differences, JM convention: 4x4 transforms summed and halved,
  // i.e. SATD(4x4) = (sum |H d H^T| + 1) >> 1 per 4x4 block, summed over the block.
  SadFn satd[kNumBlockSizes];
  SsdFn ssd[kNumBlockSizes];
  // Sixteen 4x4 SADs of a 16x16 block at once (raster order of the 4x4 blocks): the inner loop of full search.
  void (*sad_4x4_x16)(const uint8_t* cur, int cur_stride, const uint8_t* ref, int ref_stride, uint32_t out[16]);
  // First stage of JM's Intra16x16 SATD (distI16x16_satd) on a 16x16 block: each 4x4 block of a - b goes through
  // the 4x4 Hadamard with every coefficient halved (x >> 1, JM hadamard4x4). Returns the sum of |AC| over the 16
  // blocks and writes each block's halved DC to dc[] (raster order of the 4x4 blocks). It stops after the first row
  // of four blocks at which the sum so far reaches `budget` and returns that partial sum (then >= budget; dc[] of
  // the rows not done is unset): a caller that rejects any mode costing budget or more needs no more than that.
  // UINT32_MAX never stops.
  uint32_t (*hadamard_ac_16x16)(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride, int dc[16],
                                uint32_t budget);
  // SATD (as satd[kB4x4]) of one 4x4 source block against n predictions of 16 contiguous bytes each (stride 4):
  // the Intra4x4 decision scores all nine modes of a block against the same source.
  void (*satd_4x4_xn)(const uint8_t* src, int src_stride, const uint8_t* preds, int n, uint32_t* out);
};

// Fills f for the CPU flags (common/cpu.h): the plain versions, then the SIMD ones the flags allow.
void pixel_init(uint32_t cpu, PixelFuncs& f);
// The plain table (pixel_init with no flags), for code that is plain C++ by design (gpu/subpel_twin.cpp).
const PixelFuncs& pixel_ref();

}  // namespace gme
