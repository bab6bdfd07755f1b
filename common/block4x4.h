// Distortions of the 4x4 blocks of one 4-row strip, one value per block (not summed). Sub-pel refinement memoises
// distortions per 4x4 block (me/motion_search.cpp): a partition's SAD or JM SATD is exactly the sum of the
// values of its 4x4 blocks (common/pixel.cpp sums satd4x4 per block), so partitions of one macroblock that
// refine around the same vector reuse each other's work. Plain C++ versions plus SIMD ones, chosen by
// block4x4_init() from the CPU flags; part of DspFuncs (common/dsp.h), checked by tests/test_checkasm.cpp.
#pragma once
#include <cstdint>

namespace gme {

// n in {1, 2, 4} blocks side by side; reads exactly 4 rows of 4 * n bytes from a and b; writes out[0 .. n).
using Strip4x4Fn = void (*)(const uint8_t* a, int as, const uint8_t* b, int bs, int n, uint16_t* out);

// Sum of the d[i] (i = 0..15, each at most 8160) whose bit i is set in mask: a partition's distortion from the
// memoised values of the macroblock's sixteen 4x4 blocks.
using MaskedSum16Fn = uint32_t (*)(const uint16_t d[16], uint16_t mask);

struct Block4x4Funcs {
  Strip4x4Fn satd;  // JM Hadamard SATD per block: (sum |H d H^T| + 1) >> 1, at most 8160 for 8-bit samples
  Strip4x4Fn sad;   // SAD per block, at most 4080
  MaskedSum16Fn masked_sum;
};

// Fills f for the CPU flags (common/cpu.h).
void block4x4_init(uint32_t cpu, Block4x4Funcs& f);

}  // namespace gme
