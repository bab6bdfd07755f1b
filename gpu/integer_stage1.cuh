// Stage 1 of the integer kernel (gpu/me_cuda_kernel.cuh): each group's 4 positions' SADs, summed into the 41
// partitions, and their penalty keys.
#pragma once

#include <cstdint>

#include "common/exp_golomb.h"
#include "gpu/integer_block.cuh"

namespace gme {
namespace {

// The sixteen 4x4 SADs of the group's 4 positions (window x = 4 gx .. 4 gx + 3 of its row; t = the group's first
// reference word, in the tile or the padded reference, rows `words` apart), packed: q01 = positions 0 | 1 << 16,
// q23 = 2 | 3 << 16 (a 16x16 SAD is at most 65280, so every partition sum of two positions fits u16 pairs). Per
// reference row, 5 aligned words are read once and funnel-shifted to the 4 byte offsets, so a loaded word serves 4
// positions; the current row is one broadcast 16-byte read.
__device__ __forceinline__ void group_sads(const uint32_t* t, int words, const uint32_t* s_cur, uint32_t (&q01)[16],
                                           uint32_t (&q23)[16]) {
GME_UNROLL
  for (int by = 0; by < 4; ++by) {
    uint32_t acc[4][4];
GME_UNROLL
    for (int s = 0; s < 4; ++s)
GME_UNROLL
      for (int bx = 0; bx < 4; ++bx) acc[s][bx] = 0;
GME_UNROLL
    for (int r = 0; r < 4; ++r) {
      const int row = by * 4 + r;
      const uint4 c4 = reinterpret_cast<const uint4*>(s_cur)[row];
      const uint32_t c[4] = {c4.x, c4.y, c4.z, c4.w};
      const uint32_t* tr = t + row * words;
      uint32_t w[5];
GME_UNROLL
      for (int j = 0; j < 5; ++j) w[j] = tr[j];
GME_UNROLL
      for (int s = 0; s < 4; ++s)
GME_UNROLL
        for (int j = 0; j < 4; ++j) acc[s][j] = sad4_acc(__funnelshift_r(w[j], w[j + 1], 8 * s), c[j], acc[s][j]);
    }
GME_UNROLL
    for (int bx = 0; bx < 4; ++bx) {
      q01[by * 4 + bx] = acc[0][bx] | (acc[1][bx] << 16);
      q23[by * 4 + bx] = acc[2][bx] | (acc[3][bx] << 16);
    }
  }
}

// The 41 partition SADs of two positions (u16 pairs) from their packed 4x4 SADs, stored at dst[p * kSadRow]: the
// partition tree the twin's partition_sads() builds.
__device__ __forceinline__ void store_partitions(const uint32_t (&q)[16], uint32_t* dst) {
  uint32_t s8[4];
GME_UNROLL
  for (int b8 = 0; b8 < 4; ++b8) {
    const int o = (b8 >> 1) * 8 + (b8 & 1) * 2;
    const uint32_t a = q[o], b = q[o + 1], c = q[o + 4], d = q[o + 5];
    dst[(kPart4x4 + 4 * b8 + 0) * kSadRow] = a;
    dst[(kPart4x4 + 4 * b8 + 1) * kSadRow] = b;
    dst[(kPart4x4 + 4 * b8 + 2) * kSadRow] = c;
    dst[(kPart4x4 + 4 * b8 + 3) * kSadRow] = d;
    dst[(kPart8x4 + 2 * b8 + 0) * kSadRow] = a + b;
    dst[(kPart8x4 + 2 * b8 + 1) * kSadRow] = c + d;
    dst[(kPart4x8 + 2 * b8 + 0) * kSadRow] = a + c;
    dst[(kPart4x8 + 2 * b8 + 1) * kSadRow] = b + d;
    s8[b8] = a + b + c + d;
    dst[(kPart8x8 + b8) * kSadRow] = s8[b8];
  }
  const uint32_t top = s8[0] + s8[1], bottom = s8[2] + s8[3];
  dst[(kPart16x8 + 0) * kSadRow] = top;
  dst[(kPart16x8 + 1) * kSadRow] = bottom;
  dst[(kPart8x16 + 0) * kSadRow] = s8[0] + s8[2];
  dst[(kPart8x16 + 1) * kSadRow] = s8[1] + s8[3];
  dst[kPart16x16 * kSadRow] = top + bottom;
}

// The penalty keys (lambda * mv bits << 17) | spiral of the group's 4 positions (window row wy, word gx; the batch's
// group q), and their u16 screen halves; slots past the window's right edge get the invalid key.
__device__ __forceinline__ void penalty_keys(const KernelArgs& a, const Macroblock& m, int wy, int gx,
                                             const uint32_t* spiral, const SharedLayout& s, int q) {
  const int dy = wy - a.range;
  int bits_x[4];
  int bits_y;
  if (m.pred_centred) {  // the same in the whole block
    bits_y = s.bits[wy];
    const uint32_t b4 = reinterpret_cast<const uint32_t*>(s.bits)[gx];
GME_UNROLL
    for (int k = 0; k < 4; ++k) bits_x[k] = static_cast<int>((b4 >> (8 * k)) & 0xffu);
  } else {
    bits_y = se_bits(m.centre.y + 4 * dy - m.pred.y);
GME_UNROLL
    for (int k = 0; k < 4; ++k) bits_x[k] = se_bits(m.centre.x + 4 * (4 * gx + k - a.range) - m.pred.x);
  }
  const uint4 sp4 = __ldg(reinterpret_cast<const uint4*>(spiral + (wy * a.groups_per_row + gx) * 4));
  const uint32_t sp[4] = {sp4.x, sp4.y, sp4.z, sp4.w};
GME_UNROLL
  for (int k = 0; k < 4; ++k) {
    const int xi = 4 * gx + k;
    uint64_t pen = kInvalidPenKey;
    if (xi < a.win) {
      const int bits = bits_x[k] + bits_y;
      pen = ((static_cast<uint64_t>(a.lambda) * static_cast<uint64_t>(bits)) << kSpiralBits) |
            static_cast<uint64_t>(sp[k]);
    }
    s.pen[4 * q + k] = pen;
    s.half[4 * q + k] = static_cast<uint16_t>(min(pen >> 33, static_cast<uint64_t>(kHalfCap)));
  }
}

// Stage 1 of a batch: thread tid < groups takes group g0 + tid's SADs; meanwhile the threads past kGroups (the
// last warp, which has no group) write the batch's penalty keys, kPenWarpGroups groups each, and mark the slots of
// groups the last batch lacks invalid: stage 2 may still read them.
constexpr int kPenThreads = kThreads - kGroups;
constexpr int kPenWarpGroups = kGroups / kPenThreads;
static_assert(kPenThreads == 32 && kGroups % kPenThreads == 0, "one whole warp writes the penalty keys");
__device__ __forceinline__ void stage1(const KernelArgs& a, const Macroblock& m, const Batch& b,
                                       const SharedLayout& s, int tid) {
  if (tid < b.groups) {
    const int g = b.g0 + tid;
    const int wy = row_of_group(g, a.row_magic), gx = g - wy * a.groups_per_row;
    uint32_t q01[16], q23[16];
    group_sads(s.tile + (wy - b.wy_first) * a.tile_words + gx, a.tile_words, s.cur, q01, q23);
    store_partitions(q01, s.sad + 2 * tid);
    store_partitions(q23, s.sad + 2 * tid + 1);
  } else if (tid >= kGroups) {
    const uint32_t* spiral = a.order + a.spiral_at;
    for (int j = 0; j < kPenWarpGroups; ++j) {
      const int q = tid - kGroups + kPenThreads * j;  // the group's place in the batch
      if (q < b.groups) {
        const int g = b.g0 + q;
        const int wy = row_of_group(g, a.row_magic);
        penalty_keys(a, m, wy, g - wy * a.groups_per_row, spiral, s, q);
      } else {
        mark_group_invalid(s, q);
      }
    }
  }
}

}  // namespace
}  // namespace gme
