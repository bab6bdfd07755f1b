// Lengths in bits of the Exp-Golomb codes ue(v) and se(v) (9.1): what the bit writer spends, what JM's motion cost
// charges for a vector component (its mvbits[] table), and what the GPU kernels charge for a window position. One
// definition for host and device (common/host_device.h), so the CPU search, its twin and the kernels cannot drift.
#pragma once
#include <cstdint>

#include "common/host_device.h"

namespace gme {

// Count of leading zero bits of x != 0.
GME_HOST_DEVICE inline int leading_zeros32(uint32_t x) {
#ifdef __CUDA_ARCH__
  return __clz(static_cast<int>(x));
#else
  return __builtin_clz(x);
#endif
}

// Length of the ue(v) code of code_num v: 2 * floor(log2(v + 1)) + 1 (v + 1 in 64 bits: v may be 2^32 - 1).
GME_HOST_DEVICE inline int ue_bits(uint32_t v) {
  const uint64_t x = static_cast<uint64_t>(v) + 1;
  const int log2 = (x >> 32) ? 32 : 31 - leading_zeros32(static_cast<uint32_t>(x));
  return 2 * log2 + 1;
}

// Length of the se(v) code of v: ue_bits(code_num), code_num = 2v - 1 for v > 0 and -2v otherwise. Called for every
// candidate of every motion search, hence no branch: code_num + 1 is 2v for v > 0 and 2|v| + 1 otherwise, and 2|v| + 1
// has the same highest bit in both cases (2v is even, so adding 1 crosses no power of two). |v| < 2^30.
GME_HOST_DEVICE inline int se_bits(int v) {
  const unsigned a = v < 0 ? 0u - static_cast<unsigned>(v) : static_cast<unsigned>(v);
  return 2 * (31 ^ leading_zeros32(2u * a + 1u)) + 1;
}

}  // namespace gme
