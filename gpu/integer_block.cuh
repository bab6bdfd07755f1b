// A block of the integer kernel (gpu/me_cuda_kernel.cuh) and its data: the shared memory's layout, the block's
// macroblock, the batches of window positions and the reference tile each reads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/exp_golomb.h"
#include "gpu/cost_order.h"
#include "gpu/integer_geometry.cuh"
#include "gpu/integer_ops.cuh"

namespace gme {
namespace {

struct SharedLayout {
  uint32_t* sad;     // [partition][kSadRow]: the batch's partition SADs, u16 pairs of 2 positions
  uint64_t* pen;     // [kPenSlots]: each position's penalty key
  uint16_t* half;    // [kPenSlots]: min(penalty key >> 33, 65535), the screen's u16
  uint32_t* cur;     // the macroblock, 16 rows of 4 words
  uint32_t* worst;   // [2][kThreads]: each list's bound at the end of a batch, by batch parity
  uint32_t* order;   // kOrderWords: the batch's step order
  uint32_t* sea;     // the sweep's words (kSeaBytes)
  unsigned char* bits;  // the mv bits table (bits_table_offset), kBitsBytes
  uint32_t* tile;    // the batch's reference rows; in stage 2 the queue or the coset minima
};

__device__ __forceinline__ SharedLayout shared_layout(unsigned char* smem) {
  SharedLayout s;
  s.sad = reinterpret_cast<uint32_t*>(smem);
  s.pen = reinterpret_cast<uint64_t*>(smem + kSadBytes);
  s.half = reinterpret_cast<uint16_t*>(smem + kSadBytes + kPenBytes);
  s.cur = reinterpret_cast<uint32_t*>(smem + kSadBytes + kPenBytes + kHalfBytes);
  s.worst = s.cur + kCurBytes / 4;
  s.order = s.worst + kWorstBytes / 4;
  s.sea = s.order + kOrderWords;
  s.bits = reinterpret_cast<unsigned char*>(s.sea + kSeaBytes / 4);
  s.tile = s.sea + (kSeaBytes + kBitsBytes) / 4;
  return s;
}

struct Macroblock {
  int index, px, py;   // macroblock number and its top-left pixel
  short2 centre, pred;  // window centre and penalty predictor (quarter pel)
  bool pred_centred;    // pred == centre: the mv bits of window row or column d are the table's (bits_table_offset)
  int ox, oy;          // reference pixel under window position (0, 0), i.e. vector centre - range
};

// Which half of a split window the block searches (-1: the whole window), from its entry in the launch order.
// Computed where it is needed rather than kept: a register held through the batches makes the K 8 kernel spill.
__device__ __forceinline__ int block_half(const KernelArgs& a) {
  return a.slot_mb ? entry_half(__ldg(a.slot_mb + blockIdx.x)) : -1;
}

// The batches the block searches, first | end << 16, bit 31 set for a split window's half: all, or the centre batch
// and those before it, or those after it. Kept in shared memory (s.sea's word kSeaSpan) and read there after
// barriers, for the same reason as block_half.
constexpr uint32_t kHalfSpan = 1u << 31;
__device__ __forceinline__ uint32_t batch_span(const KernelArgs& a) {
  const int batches = (a.num_groups + kGroups - 1) / kGroups;
  const int after_centre = centre_batch_of(a.range, a.groups_per_row, batches) + 1;
  const int half = block_half(a);
  return static_cast<uint32_t>(half == 1 ? after_centre : 0) |
         (static_cast<uint32_t>(half == 0 ? after_centre : batches) << 16) | (half >= 0 ? kHalfSpan : 0u);
}
__device__ __forceinline__ bool in_span(uint32_t span, int batch) {
  return batch >= static_cast<int>(span & 0xffffu) && batch < static_cast<int>((span & ~kHalfSpan) >> 16);
}
__device__ __forceinline__ bool whole_span(uint32_t span) { return (span & kHalfSpan) == 0; }

__device__ __forceinline__ Macroblock block_macroblock(const KernelArgs& a) {
  Macroblock m;
  m.index = a.slot_mb ? entry_mb(a.slot_mb[blockIdx.x]) : a.mb_first + static_cast<int>(blockIdx.x);
  // m.index / mb_width by row_of_group's multiply-high: exact while m.index (mb_width - 1) < 2^31, far beyond any
  // picture check_search_request accepts.
  const int mb_row = row_of_group(m.index, a.mb_magic);
  m.px = (m.index - mb_row * a.mb_width) * 16;
  m.py = mb_row * 16;
  m.centre = a.centre[m.index];
  m.pred = a.pred[m.index];
  m.pred_centred = m.centre.x == m.pred.x && m.centre.y == m.pred.y;
  m.ox = m.px + (m.centre.x >> 2) - a.range;
  m.oy = m.py + (m.centre.y >> 2) - a.range;
  return m;
}

__device__ __forceinline__ void load_current(const KernelArgs& a, const Macroblock& m, uint32_t* s_cur, int tid) {
  if (tid < 64)
    s_cur[tid] = *reinterpret_cast<const uint32_t*>(a.cur + static_cast<size_t>(m.py + (tid >> 2)) * a.pitch + m.px +
                                                    4 * (tid & 3));
}

// The mv bits table (bits_table_offset) to shared memory, where a block whose predictor is its window centre takes
// its penalties' mv bits (penalty_keys, group_may_enter); read after the block's first barrier. The last threads
// copy it, beside load_current's first 64.
__device__ __forceinline__ void load_bits(const KernelArgs& a, const Macroblock& m, unsigned char* s_bits, int tid) {
  const int words = bits_table_words(a.groups_per_row);
  if (m.pred_centred && tid >= kThreads - words)
    reinterpret_cast<uint32_t*>(s_bits)[tid - (kThreads - words)] =
        __ldg(a.order + a.bits_at + (tid - (kThreads - words)));
}

// Group slot q's four positions: never candidates (stage 2 may read a slot no group of the batch or chunk filled).
__device__ __forceinline__ void mark_group_invalid(const SharedLayout& s, int q) {
GME_UNROLL
  for (int k = 0; k < 4; ++k) {
    s.pen[4 * q + k] = kInvalidPenKey;
    s.half[4 * q + k] = kHalfCap;
  }
}

// Padding slots past the batch, which stage 2's chunks may read: never candidates.
__device__ __forceinline__ void mark_padding(const SharedLayout& s, int tid) {
  if (tid < kPenSlots - kBatch) {
    s.pen[kBatch + tid] = kInvalidPenKey;
    s.half[kBatch + tid] = kHalfCap;
  }
}

// ---- Batches --------------------------------------------------------------------------------------------------
struct Batch {
  int g0, groups;        // first group, groups in the batch
  int wy_first, wy_last; // first and last window row
  int rows;              // reference rows of the tile
  int steps;             // stage-2 steps (kStepPairs pairs each); the same trip count in every lane
};

__device__ __forceinline__ Batch batch_at(const KernelArgs& a, int batch) {
  Batch b;
  b.g0 = batch * kGroups;
  b.groups = min(kGroups, a.num_groups - b.g0);
  b.wy_first = row_of_group(b.g0, a.row_magic);
  b.wy_last = row_of_group(b.g0 + b.groups - 1, a.row_magic);
  b.rows = b.wy_last - b.wy_first + 16;
  b.steps = (2 * b.groups + kStepPairs - 1) / kStepPairs;
  return b;
}

__device__ __forceinline__ void load_step_order(const KernelArgs& a, int batch, uint32_t* s_order, int tid) {
  if (tid < kOrderWords) s_order[tid] = __ldg(a.order + batch * kOrderWords + tid);
}

// The fewest mv bits, se_bits(c + 4 d), of any d in [d0, d1] (d0 <= d1): se_bits grows with |c + 4 d|, so the d
// nearest -c / 4, clamped into the range, has them.
__device__ __forceinline__ int fewest_se_bits(int c, int d0, int d1) {
  const int d = min(max(-c / 4, d0), d1);
  int bits = se_bits(c + 4 * d);
  if (d > d0) bits = min(bits, se_bits(c + 4 * (d - 1)));
  if (d < d1) bits = min(bits, se_bits(c + 4 * (d + 1)));
  return bits;
}

// A floor under the key >> 33 of every position of the batch: its penalty part (lambda * mv bits) >> 16 can be no
// smaller than with the fewest bits any of its window rows and any window column have, and the SAD adds to it. A list
// whose bound is below it has nothing to screen in the batch (the bounds are exact: see the top of
// gpu/me_cuda_kernel.cuh), and a block all of whose lists are so skips the batch: far from the window centre the
// penalty alone passes the bounds of flat and still macroblocks.
__device__ __forceinline__ uint32_t batch_key_floor(const KernelArgs& a, const Macroblock& m, const Batch& b) {
  const int bits = fewest_se_bits(m.centre.y - m.pred.y, b.wy_first - a.range, b.wy_last - a.range) +
                   fewest_se_bits(m.centre.x - m.pred.x, -a.range, a.range);
  return static_cast<uint32_t>((static_cast<uint64_t>(a.lambda) * static_cast<uint64_t>(bits)) >> 16);
}

// Where this thread's words of the tile start and how it steps through them, without a division per word:
// kThreads = dr rows + dw words (its own two divisions by tile_words are multiplies-high, as in row_of_group).
struct TileWalk {
  int r0, w0, dr, dw;
};

__device__ __forceinline__ TileWalk tile_walk(const KernelArgs& a, int tid) {
  TileWalk t;
  t.r0 = row_of_group(tid, a.tile_magic);  // tid / tile_words
  t.w0 = tid - t.r0 * a.tile_words;
  t.dr = row_of_group(kThreads, a.tile_magic);
  t.dw = kThreads - t.dr * a.tile_words;
  return t;
}

// Whether the batch's tile is whole aligned words inside the picture (load_tile's fast path).
__device__ __forceinline__ bool tile_inside(const KernelArgs& a, const Macroblock& m, const Batch& b) {
  const int y0 = m.oy + b.wy_first;
  return (m.ox & 3) == 0 && m.ox >= 0 && m.ox + 4 * a.tile_words <= a.width && y0 >= 0 && y0 + b.rows <= a.height;
}

// Tile word (r, w) = reference bytes x = ox + 4w .. +3 of row oy + wy_first + r, each fetch clamped into the picture:
// unbounded edge replication, whatever the vector.
//
// Most blocks need neither the clamp nor the shift: with the window centred on a whole multiple of 4 pels (a zero
// centre, GPUSearchCenter 0, the usual case) ox is a multiple of 4, and away from the picture's edges every word of
// the batch's rows lies inside the picture. Those blocks load whole aligned words, each thread one column of the
// tile (its walk's first word) every t.dr rows: one load and one store a word instead of the general path's two
// loads, clamps and shift (the same words: the clamp and shift change nothing there).
__device__ __forceinline__ void load_tile(const KernelArgs& a, const Macroblock& m, const Batch& b, const TileWalk& t,
                                          uint32_t* s_tile, int tid) {
  const int y0 = m.oy + b.wy_first;
  if (tile_inside(a, m, b)) {
    if (tid < t.dr * a.tile_words) {  // t.dr >= 1 (the static_assert above Geometry, integer_geometry.cuh)
      const uint32_t* src =
          reinterpret_cast<const uint32_t*>(a.ref + static_cast<size_t>(y0 + t.r0) * a.pitch + m.ox) + t.w0;
      const size_t step = static_cast<size_t>(t.dr) * (a.pitch / 4);  // the pitch is a whole number of macroblocks
      for (int r = t.r0; r < b.rows; r += t.dr, src += step) s_tile[r * a.tile_words + t.w0] = __ldg(src);
    }
    return;
  }
  for (int idx = tid, r = t.r0, w = t.w0; idx < b.rows * a.tile_words; idx += kThreads) {
    const int y = min(max(m.oy + b.wy_first + r, 0), a.height - 1);
    const uint8_t* row = a.ref + static_cast<size_t>(y) * a.pitch;
    const int x = m.ox + 4 * w;
    uint32_t v;
    if (x >= 0 && x + 8 <= a.width) {  // two aligned words inside the row hold the four bytes
      const int xa = x & ~3;
      const uint32_t lo = __ldg(reinterpret_cast<const uint32_t*>(row + xa));
      const uint32_t hi = __ldg(reinterpret_cast<const uint32_t*>(row + xa + 4));
      v = __funnelshift_r(lo, hi, 8 * (x & 3));
    } else {
      v = 0;
GME_UNROLL
      for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>(row[min(max(x + k, 0), a.width - 1)]) << (8 * k);
    }
    s_tile[idx] = v;
    r += t.dr;
    w += t.dw;
    if (w >= a.tile_words) {
      w -= a.tile_words;
      ++r;
    }
  }
}

}  // namespace
}  // namespace gme
