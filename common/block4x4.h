// Distortions of the 4x4 blocks of one 4-row strip, one value per block (not summed). Sub-pel refinement memoises
// distortions per 4x4 block (me/motion_search.cpp): a partition's SAD or JM SATD is exactly the sum of the
// values of its 4x4 blocks (common/pixel.cpp sums satd4x4 per block), so partitions of one macroblock that
// refine around the same vector reuse each other's work. Plain C++ reference plus SIMD variants, compared bit for
// bit by tests/test_block4x4.cpp.
#pragma once
#include <cstdint>

namespace gme {

// n in {1, 2, 4} blocks side by side; reads exactly 4 rows of 4 * n bytes from a and b; writes out[0 .. n).
using Strip4x4Fn = void (*)(const uint8_t* a, int as, const uint8_t* b, int bs, int n, uint16_t* out);

struct Block4x4Funcs {
  Strip4x4Fn satd;  // JM Hadamard SATD per block: (sum |H d H^T| + 1) >> 1, at most 8160 for 8-bit samples
  Strip4x4Fn sad;   // SAD per block, at most 4080
  const char* name;
};

const Block4x4Funcs& block4x4_ref();
const Block4x4Funcs& block4x4_best();
// All variants that run on this CPU, reference first. Returns the count.
int block4x4_variants(const Block4x4Funcs** out, int max);

}  // namespace gme
