// The integer kernel's sweep (gpu/me_cuda_kernel.cuh): successive elimination of the window's groups after the
// centre batch, from the reference's 4x4 block sums (made by the kernels here), and its chunks of survivors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/exp_golomb.h"
#include "gpu/integer_stage1.cuh"

namespace gme {
namespace {

// ---- The sweep: successive elimination after the centre batch --------------------------------------------------
// Outside the centre batch most window positions cannot enter any partition's top K, and a lower bound on their SADs
// says so for much less than computing them: a 4x4 block's SAD is at least the absolute difference of the block's pixel
// sum and the reference's under it (Li and Salari's successive elimination), so a partition's SAD is at least the sum
// of those differences over its blocks. After the centre batch, a block whose window lies within the padded reference
// (window_summed) sweeps the rest of its window instead of visiting it batch by batch: in rounds of kThreads groups,
// every thread tests one group (group_may_enter: can any of its 4 positions, with the lower bound and the fewest mv
// bits of the group, reach some partition's bound?), the surviving groups are listed, and each kGroups of them are
// computed (SADs straight from the padded reference, without a tile) and screened as a batch of their own. The bounds
// are exact (the top of gpu/me_cuda_kernel.cuh), and so are the lower bounds, hence the candidates do not change; what
// changes is the work: on real pictures a tenth or less of the groups survive, and a block's rest of the window takes a
// few barriers instead of three a batch. The reference's copy with a replicated border (pad_kernel) and its block sums
// at every pixel (block_sum_kernel) are made once per uploaded picture, so that windows at the picture's edges sweep
// too, reading whole words; a test reads 16 sums for each pair of positions, 4 positions in two words.

// The reference's copy with a replicated border (pad_kernel) and its 4x4 block sums (block_sum_kernel, read from that
// copy) span x from -kSumBorder to width + kSumBorder - 1 and y from -kSumBorder to height + kSumBorder - 1 (the sums
// to 4 less), rows sum_pitch(width) elements apart; the pointers the kernels take point at (0, 0).
constexpr int kSumThreads = 128;
constexpr int kSumBorder = 64;  // covers the windows at the picture's edges up to SearchRange 48 about a zero centre
GME_HOST_DEVICE inline int sum_pitch(int width) { return width + 2 * kSumBorder; }
GME_HOST_DEVICE inline size_t sum_plane_elements(int width, int height) {
  return static_cast<size_t>(sum_pitch(width)) * static_cast<size_t>(height + 2 * kSumBorder);
}
GME_HOST_DEVICE inline size_t sum_origin(int width) {
  return static_cast<size_t>(kSumBorder) * static_cast<size_t>(sum_pitch(width)) + kSumBorder;
}
// The sums of the 16 pixels at (x..x+3, y..y+3) of the padded copy for every x of the row and rows y0 .. y0 + gridDim
// - 1; one block a row. The copy's rows y0 .. y0 + gridDim + 2 must be made.
__global__ void __launch_bounds__(kSumThreads, 1) block_sum_kernel(const uint8_t* padded, uint16_t* sums, int width,
                                                                   int y0) {
  const int y = y0 + static_cast<int>(blockIdx.x), pitch = sum_pitch(width);
  uint16_t* out = sums + static_cast<ptrdiff_t>(y) * pitch;
  for (int x = static_cast<int>(threadIdx.x) - kSumBorder; x <= width + kSumBorder - 4; x += kSumThreads) {
    const int xa = x & ~3, shift = 8 * (x & 3);  // whole words: the copy's origin and pitch are multiples of 4
    uint32_t sum = 0;
GME_UNROLL
    for (int r = 0; r < 4; ++r) {
      const uint32_t* w = reinterpret_cast<const uint32_t*>(padded + static_cast<ptrdiff_t>(y + r) * pitch + xa);
      const uint32_t v = shift ? __funnelshift_r(__ldg(w), __ldg(w + 1), shift) : __ldg(w);  // w + 1 <= x + 3
      sum = sad4_acc(v, 0u, sum);
    }
    out[x] = static_cast<uint16_t>(sum);
  }
}

// Rows y0 .. y0 + gridDim - 1 (from -kSumBorder to height + kSumBorder - 1) of the picture with a replicated border
// of kSumBorder pels, `padded` pointing at its (0, 0), rows sum_pitch(width) bytes apart; one block a row, a word a
// thread at a time.
__global__ void __launch_bounds__(kSumThreads, 1) pad_kernel(const uint8_t* pic, uint8_t* padded, int width,
                                                             int height, int y0) {
  const int y = y0 + static_cast<int>(blockIdx.x);
  const uint8_t* row = pic + static_cast<size_t>(min(max(y, 0), height - 1)) * width;
  uint32_t* out = reinterpret_cast<uint32_t*>(padded + static_cast<ptrdiff_t>(y) * sum_pitch(width) - kSumBorder);
  for (int w = static_cast<int>(threadIdx.x); w < sum_pitch(width) / 4; w += kSumThreads) {
    const int x = 4 * w - kSumBorder;
    uint32_t v = 0;
    if (x >= 0 && x + 4 <= width) {
      v = __ldg(reinterpret_cast<const uint32_t*>(row + x));
    } else {
      for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>(row[min(max(x + k, 0), width - 1)]) << (8 * k);
    }
    out[w] = v;
  }
}

// The macroblock's 16 block sums, each in both u16 halves, to s.sea (once, after s.cur is written).
__device__ __forceinline__ void macroblock_block_sums(const uint32_t* s_cur, uint32_t* s_sea, int tid) {
  if (tid < 16) {
    uint32_t sum = 0;
GME_UNROLL
    for (int r = 0; r < 4; ++r) sum = sad4_acc(s_cur[(4 * (tid >> 2) + r) * 4 + (tid & 3)], 0u, sum);
    s_sea[kSeaCurSums + tid] = sum * 0x10001u;
  }
}

// acc = min(acc, lower bound of p + 0x8000 - bound of p) per u16 half (two positions) over the partitions inside 8x8
// block b8, whose 4x4 blocks' lower bounds are a, b (top) and c, d; returns the 8x8 lower bound. e: the partitions'
// words (the tree of store_partitions).
__device__ __forceinline__ uint32_t sea_quadrant(uint32_t a, uint32_t b, uint32_t c, uint32_t d, const uint32_t* e,
                                                 int b8, uint32_t& acc) {
  acc = add_min_u16x2(a, e[kPart4x4 + 4 * b8 + 0], acc);
  acc = add_min_u16x2(b, e[kPart4x4 + 4 * b8 + 1], acc);
  acc = add_min_u16x2(c, e[kPart4x4 + 4 * b8 + 2], acc);
  acc = add_min_u16x2(d, e[kPart4x4 + 4 * b8 + 3], acc);
  acc = add_min_u16x2(a + b, e[kPart8x4 + 2 * b8 + 0], acc);
  acc = add_min_u16x2(c + d, e[kPart8x4 + 2 * b8 + 1], acc);
  acc = add_min_u16x2(a + c, e[kPart4x8 + 2 * b8 + 0], acc);
  acc = add_min_u16x2(b + d, e[kPart4x8 + 2 * b8 + 1], acc);
  const uint32_t s8 = a + b + c + d;
  acc = add_min_u16x2(s8, e[kPart8x8 + b8], acc);
  return s8;
}

// The same for the partitions of two or four 8x8 blocks; the 16x16 lower bound capped at 2^15 - 1.
__device__ __forceinline__ void sea_macroblock(const uint32_t (&s8)[4], const uint32_t* e, uint32_t& acc) {
  const uint32_t top = s8[0] + s8[1], bottom = s8[2] + s8[3];
  acc = add_min_u16x2(top, e[kPart16x8 + 0], acc);
  acc = add_min_u16x2(bottom, e[kPart16x8 + 1], acc);
  acc = add_min_u16x2(s8[0] + s8[2], e[kPart8x16 + 0], acc);
  acc = add_min_u16x2(s8[1] + s8[3], e[kPart8x16 + 1], acc);
  acc = add_min_u16x2(min_u16x2(top + bottom, 0x7fff7fffu), e[kPart16x16], acc);
}

// Whether the block sums and the padded reference cover the whole window at aligned words (a group reads words
// gx .. gx + 4 of 16 rows).
__device__ __forceinline__ bool window_summed(const KernelArgs& a, const Macroblock& m) {
  return (m.ox & 3) == 0 && m.ox >= -kSumBorder && m.ox + 4 * a.tile_words <= a.width + kSumBorder &&
         m.oy >= -kSumBorder && m.oy + a.win + 15 <= a.height + kSumBorder;
}

// The smallest 0x8000 - bound over the partitions (s.sea's words, low halves; 0 where a partition has no bound yet):
// 0x8000 less it is the largest bound. Each warp reads the 41 words a lane or two at a time and takes their minimum
// by shuffles, so every thread has it without a barrier and for a few instructions. Call it from whole warps.
__device__ __forceinline__ uint32_t least_slack(const uint32_t* s_sea) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  uint32_t least = s_sea[lane] & 0xffffu;
  if (lane < kNumPartitions - 32) least = min(least, s_sea[32 + lane] & 0xffffu);
GME_UNROLL
  for (int m = 16; m > 0; m >>= 1)
    least = min(least, static_cast<uint32_t>(__shfl_xor_sync(0xffffffffu, static_cast<int>(least), m)));
  return least;
}
static_assert(kNumPartitions > 32 && kNumPartitions <= 64, "least_slack: one or two words a lane");

// Whether any position of window group g may be in some partition's top K: for some partition p, (lower bound of its
// SAD) + (the group's fewest penalty) <= bound of p, i.e. lower bound + (0x8000 - bound) <= 0x8000 - penalty, with
// every term below 2^16 (bounds below kSeaCap, the 16x16 lower bound capped: a smaller lower bound only keeps more).
__device__ __forceinline__ bool group_may_enter(const KernelArgs& a, const Macroblock& m, int g, const uint32_t* s_sea,
                                                const unsigned char* s_bits, uint32_t slack) {
  const int wy = row_of_group(g, a.row_magic), gx = g - wy * a.groups_per_row;
  const int bits =
      m.pred_centred  // the same in the whole block
          ? s_bits[wy] + s_bits[4 * a.groups_per_row + gx]
          : se_bits(m.centre.y + 4 * (wy - a.range) - m.pred.y) +
                fewest_se_bits(m.centre.x - m.pred.x, 4 * gx - a.range, min(4 * gx + 3, a.win - 1) - a.range);
  const uint32_t pen = static_cast<uint32_t>(
      min((static_cast<uint64_t>(a.lambda) * static_cast<uint64_t>(bits)) >> 16, static_cast<uint64_t>(0x8000u)));
  // Every lower bound is at least 0: a penalty above every partition's bound (0x8000 - slack, slack = least_slack)
  // rules the group out without its block sums (far from the predictor wherever the bounds are tight).
  if (pen + slack > 0x8000u) return false;
  const int pitch = sum_pitch(a.width);
  const uint16_t* at = a.sums + ((m.oy + wy) * pitch + m.ox + 4 * gx);
  uint32_t acc = ~0u, s01[4], s23[4];  // positions 0 and 1, 2 and 3
GME_UNROLL
  for (int b8 = 0; b8 < 4; ++b8) {  // a quadrant at a time: few registers live beside the lists
    uint32_t l01[4], l23[4];
GME_UNROLL
    for (int j = 0; j < 4; ++j) {  // its 4x4 blocks in raster order
      const int i = (b8 >> 1) * 8 + (b8 & 1) * 2 + (j >> 1) * 4 + (j & 1);
      const uint2 ref = __ldg(reinterpret_cast<const uint2*>(at + 4 * (i >> 2) * pitch) + (i & 3));
      const uint32_t cur = s_sea[kSeaCurSums + i];
      l01[j] = absdiff_u16x2(ref.x, cur);
      l23[j] = absdiff_u16x2(ref.y, cur);
    }
    s01[b8] = sea_quadrant(l01[0], l01[1], l01[2], l01[3], s_sea, b8, acc);
    s23[b8] = sea_quadrant(l23[0], l23[1], l23[2], l23[3], s_sea, b8, acc);
  }
  sea_macroblock(s01, s_sea, acc);
  sea_macroblock(s23, s_sea, acc);
  return min(acc & 0xffffu, acc >> 16) <= 0x8000u - pen;
}

// Stage 1 of a sweep chunk: thread t < n takes listed group list[t] into batch slot t, its SADs straight from the
// padded reference (whole words: the window lies within it) and its penalty keys; the threads after it mark the
// slots the chunk's last stage-2 step reads invalid.
__device__ __forceinline__ void stage1_chunk(const KernelArgs& a, const Macroblock& m, const SharedLayout& s,
                                             const uint16_t* list, int n, int steps, int tid) {
  if (tid < n) {
    const int g = list[tid];
    const int wy = row_of_group(g, a.row_magic), gx = g - wy * a.groups_per_row;
    const uint32_t* ref = reinterpret_cast<const uint32_t*>(
                              a.padded + ((m.oy + wy) * sum_pitch(a.width) + m.ox)) + gx;
    uint32_t q01[16], q23[16];
    group_sads(ref, sum_pitch(a.width) / 4, s.cur, q01, q23);
    store_partitions(q01, s.sad + 2 * tid);
    store_partitions(q23, s.sad + 2 * tid + 1);
    penalty_keys(a, m, wy, gx, a.order + a.spiral_at, s, tid);
  } else if (tid < steps * kStepPairs / 2) {
    mark_group_invalid(s, tid);
  }
}

}  // namespace
}  // namespace gme
