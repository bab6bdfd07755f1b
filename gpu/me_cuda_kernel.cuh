// The integer-search kernel, its geometry and arguments (gpu/me_cuda.cu launches it; doc/GPU.md describes the
// design). Kept apart from the host code so that the tests can also compile it as plain C++ under a small emulation
// of the CUDA execution model (gpu/kernel_emu.h) and hold its logic to the twin without a GPU, once as Hopper and
// once as an older GPU (GME_EMU_ARCH). Include it once per translation unit: it defines its contents in an unnamed
// namespace.
//
// What one block computes: for one (macroblock, reference), every integer position of the window centre
// +- SearchRange and each of the 41 partitions, the top K positions by key = (motion cost << 17) | spiral index
// (me/spiral.h), i.e. by (cost, spiral): the twin's order (gpu/me_twin.cpp). One fused kernel does what the seed
// paper's three kernels do (4x4 SADs, partition tree with penalty, reductions); no intermediate SAD leaves shared
// memory. The outline, in the order of the functions below (kThreads = 128 threads per block):
//
//   integer_search_kernel
//     load_current          the macroblock's 16x16 pixels to shared memory
//     mark_padding          the slots stage 2 may read past a batch: invalid keys
//     for each batch of kBatch = 384 window positions (96 groups of 4 horizontally adjacent ones), the centre's
//     batch first, then alternately below and above it (batch_at):
//       batch_key_floor     a floor under the batch's keys: a block none of whose lists' bounds reaches it skips the
//                           batch
//       load_step_order     the batch's stage-2 step order (step_order_table, computed on the host)
//       load_tile           the reference rows the batch reads, every fetch clamped into the picture (whole
//                           aligned words, one column per thread, where the window allows)
//       stage 1 (threads 0..95, one group each; beside them threads 96..127, 3 groups each)
//         group_sads        16 4x4 SADs of the group's 4 positions (VABSDIFF4 on funnel-shifted words)
//         store_partitions  the 41 partition SADs, two positions per u16 pair, to shared memory
//         penalty_keys      (threads 96..127) each position's penalty key (lambda * mv bits << 17 | spiral) and u16
//                           screen half
//       stage 2 (threads 0..122, 3 list threads per partition, each a third of the batch's positions)
//         list_bound        the screen's bound: the list's own K-th key, the pooled and previous-batch bounds
//                           and the split bound of the lists' published keys (publish_bound, at the batch's end)
//         seed_bound        centre batch: the largest key of the K positions nearest the window centre
//         coset_minima, coset_bound   centre batch: the K-th smallest of 16 disjoint coset minima
//         screen_batch      16 positions per step against the bound in packed u16 halves (a warp none of whose
//                           lists' bounds reaches the batch's key floor skips it); a warp with a possible entrant
//                           inserts (insert_entrants, or per-lane queues drained by drain_queue for K >= kQueueMinK)
//                           into the sorted register list (insert_key)
//     after the centre batch: pool_bound (the K-th key >> 33 of a partition's 3 lists together), then, where the
//     window lies within the padded reference (window_summed), the sweep instead of the other batches:
//       group_may_enter     per group of 4 positions, whether a lower bound from 4x4 block sums (block_sum_kernel)
//                           plus the group's fewest mv bits can reach some partition's bound (refused at once where
//                           that penalty alone passes the largest bound, least_slack); the survivors listed
//       stage1_chunk        every kGroups survivors: SADs and penalty keys, then stage 2 as for a batch
//     merge_lists           each list thread ranks its keys in the partition's union and places those of rank < K,
//                           decoded back to (mv, SAD)
//     write_out             the block's 41 x K candidates to device memory (and the page-locked host buffer)
//
// Every bound is exact: a position whose key >> 33 exceeds a bound that K distinct positions of its partition
// lie at or below cannot be in the partition's top K, and one that can passes every screen, so the lists' union
// holds the partition's top K whatever the bounds, the visiting order or the batch order.
#pragma once
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common/exp_golomb.h"
#include "gpu/me_twin.h"
#include "me/me_interface.h"
#include "me/spiral.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

// Loop unrolling for nvcc; nothing for a host compiler (which would warn about an unknown pragma).
#ifdef __CUDACC__
#define GME_UNROLL _Pragma("unroll")
#else
#define GME_UNROLL
#endif

// The instruction set the source is compiled for: the device pass's __CUDA_ARCH__; for the host emulation the
// test's GME_EMU_ARCH (900: Hopper's packed u16 instructions, modelled by gpu/kernel_emu.h; anything lower: the
// portable code older GPUs run); 0 in nvcc's host pass, which compiles no kernel code.
#if defined(__CUDA_ARCH__)
#define GME_ME_ARCH __CUDA_ARCH__
#elif defined(GME_EMU_ARCH)
#define GME_ME_ARCH GME_EMU_ARCH
#else
#define GME_ME_ARCH 0
#endif

namespace gme {
namespace {

// ---- Kernel geometry ------------------------------------------------------------------------------------------
constexpr int kThreads = 128;
// Groups of 4 horizontal positions per batch, one per stage-1 thread (the first kGroups threads). 96 rather than
// one per thread: the SAD buffer of a batch of 384 positions leaves room for 5 blocks per SM where 512 allow only 4.
constexpr int kGroups = 96;
static_assert(kGroups % 32 == 0 && kGroups <= kThreads, "stage 1 in whole warps");
constexpr int kBatch = 4 * kGroups;       // positions per batch
// Blocks per SM the kernel is built for (__launch_bounds__): shared memory and registers must allow them
// (SharedMemoryAllowsTheBlocksPerSm in the tests). K > 8 keeps 4: its list needs the registers.
constexpr int kMinBlocksPerSm = 5;
template <int K> constexpr int min_blocks_per_sm() { return K <= 8 ? kMinBlocksPerSm : 4; }
constexpr int kSlices = 3;                // stage-2 threads per partition: 41 * 3 = 123 of 128
// Words per partition row of packed SAD pairs. kBatch / 2 + 3 = 3 mod 32 puts stage-2 lane t (partition t/3, slice
// t%3) on bank t: conflict-free reads.
constexpr int kSadRow = kBatch / 2 + 3;
static_assert(kSadRow % 32 == 3, "conflict-free stage-2 reads");
// Stage 2 works in steps of kStepPairs pairs, kLanePairs of them (every third pair of the step) per list thread:
// a step's loop overhead, bound test and warp vote serve 2 kLanePairs positions. More pairs per step would cost
// registers the K = 8 kernel does not have, and a lane's pairs stay spread over the step because matches cluster in
// neighbouring positions and a warp's insertion pays for its busiest lane. Whole steps are read, up to kOverread
// pairs past the batch: rows and penalty arrays are padded so those reads stay in bounds, and padded positions
// carry the invalid penalty key.
constexpr int kLanePairs = 8;
constexpr int kStepPairs = kLanePairs * kSlices;
constexpr int kOverread = kStepPairs;
static_assert(2 * kLanePairs <= 24, "a queue entry holds the step and a lane's mask of the step's positions");
constexpr int kPenSlots = kBatch + 2 * kOverread;
constexpr int kSadBytes = ((kNumPartitions * kSadRow + kOverread) * 4 + 15) / 16 * 16;
constexpr int kPenBytes = kPenSlots * 8;
// Stage 2's screen reads each position's penalty key >> 33 as a u16 (clamped), two positions to a word in the
// layout of the SAD pairs, so one packed add serves two positions (see add_min_u16x2).
constexpr int kHalfBytes = (kPenSlots * 2 + 15) / 16 * 16;
// The screen's u16 penalty of window slots past the edge and padding slots, and the clamp of real ones. The add is
// mod 2^16: with 0xffff an invalid slot's sum would be its SAD - 1, small, and nearly every such slot would pass the
// screen only to be refused by the insertion. With 2^15 - 1 the sum stays at 2^15 - 1 or more, above any bound of the
// small partitions, unless a 16x16 or 16x8 SAD passes 2^15 (a mean difference over 128), which only sends a slot to
// the exact insertion. A sum of 2^15 - 1 or more therefore says nothing about a position: coset_bound takes it as
// no bound.
constexpr uint16_t kHalfCap = 0x7fffu;
constexpr int kCurBytes = 256;
// Stage 2's bounds, double-buffered across batches: each list's bound at the end of a batch and two of its keys
// (kSplitLow, kSplitHigh), read by its partition's 3 lists at the next batch: [batch parity][field][thread].
constexpr int kWorstFields = 3;
constexpr int kWorstBytes = 2 * kWorstFields * kThreads * 4;
// Stage 2's step order for the batch: byte i = the step (kStepPairs pairs) visited i-th. A batch has at most
// ceil(2 kGroups / kStepPairs) steps.
constexpr int kMaxSteps = (2 * kGroups + kStepPairs - 1) / kStepPairs;
constexpr int kOrderBytes = 32;
constexpr int kOrderWords = kOrderBytes / 4;
static_assert(kMaxSteps <= kOrderBytes && kMaxSteps < 256, "step order: one byte per step");
// After the step orders, the seed of the centre batch: the batch slots of the window positions nearest the centre
// (smallest spiral index), kGpuMaxTopK u16 slots, kNoSeed where the batch has fewer valid positions.
constexpr int kSeedWords = kGpuMaxTopK / 2;
constexpr uint16_t kNoSeed = 0xffffu;
// Stage 2's per-lane queue of entrants: up to kQueueCap positions, as entries of (step, 16-bit mask of the step's
// positions) in a word, one column per thread (conflict-free). It shares the tile's memory: the tile is read in stage
// 1 only and the queue is used in stage 2 only, with a barrier between them and before the next tile. Long lists
// queue (one insertion pass pays for the busiest lane's entrants of several steps); short lists insert at once,
// where the queue's bookkeeping costs more than the passes it saves.
constexpr int kQueueCap = 8;
constexpr int kQueueMinK = 10;
constexpr int kQueueBytes = kQueueCap * kThreads * 4;
static_assert(kGpuMaxTopK * kThreads * 4 <= kNumPartitions * kSadRow * 4, "pooled lists pass through s_sad");
// The coset minima of the centre batch: kCosetClasses u16 pairs per thread (classes by stage-2 step, as many as a
// full batch has steps), exchanged through the tile's memory (free in stage 2, shared with the queue: a barrier
// separates the two).
constexpr int kCosetClasses = 8;
constexpr int kCosetBytes = kCosetClasses * kThreads * 4;
// Penalty key of window slots past the right edge: above any real key even after adding a SAD << 33.
constexpr uint64_t kInvalidPenKey = 0xFFFC000000000000ull;
// The value of an empty list entry: above every real key (each is below 2^56: SAD << 33 < 2^49, lambda * bits <
// 2^38 shifted by 17) and below the keys of invalid window slots (kInvalidPenKey + SAD), which the insertion's
// guard therefore keeps out of lists that are not yet full.
constexpr uint64_t kEmptyKey = 0x7FEFFFFFFFFFFFFFull;
static_assert(kEmptyKey < kInvalidPenKey, "keys of invalid slots must stay out of the lists");
static_assert(kNumPartitions * kSlices <= kThreads, "stage 2 needs a thread per (partition, slice)");
// The sweep's shared words (see sweep below): per partition 0x8000 - its bound in both u16 halves (kSeaParts words),
// the macroblock's 16 4x4 block sums, each in both halves, and each warp's survivors of a round, by round parity.
constexpr int kSeaParts = 44;  // 41, rounded up to a multiple of 4
constexpr int kSeaCurSums = kSeaParts;
constexpr int kSeaCounts = kSeaCurSums + 16;
constexpr int kSeaBytes = (kSeaCounts + 2 * 4) * 4;
static_assert(kSeaBytes % 16 == 0 && kSeaParts >= kNumPartitions, "the tile after the sweep's words stays aligned");
// A partition bound from which on the sweep's u16 test cannot work (0x8000 - bound must stay positive, and the capped
// 16x16 lower bound plus it below 2^16): a block with such a bound after its centre batch does not sweep.
constexpr uint32_t kSeaCap = 0x7fffu;
// The sweep's list of surviving groups (u16 window group numbers) lives in the tile's memory: at most a chunk's
// kGroups not yet processed plus a round's kThreads.
constexpr int kSweepList = kGroups + kThreads;
static_assert(kSweepList * 2 <= kQueueBytes, "the tile's memory is at least the queue's");
static_assert(kNumPartitions * (kSlices + 1) * kGpuMaxTopK * 8 <= kSadBytes,
              "merge lists and the staged output reuse the SAD buffer");
static_assert(kPenSlots - kBatch <= kThreads, "one thread per padding slot");
static_assert(kLambdaBits + kSpiralBits == 33, "stage 2 screens on key >> 33 = penalty >> 33 + SAD");
static_assert(sizeof(Candidate) == 8 && offsetof(Candidate, sad) == 4, "kernel writes Candidate as uint2");

// load_tile's fast path gives each thread one column of the tile: a tile row (at SearchRange 128, the largest
// check_search_request accepts) must have fewer words than the block has threads.
static_assert((2 * 128 + 1 + 3) / 4 + 4 < kThreads, "a tile row per block of threads");

struct Geometry {
  int win, groups_per_row, num_groups, tile_words, tile_rows;
  size_t smem;
};

inline Geometry geometry(int range) {
  Geometry g;
  g.win = 2 * range + 1;
  g.groups_per_row = (g.win + 3) / 4;
  g.num_groups = g.groups_per_row * g.win;
  // A group at word gx reads words gx..gx+4 of its rows; a batch of kGroups groups spans at most
  // (kGroups - 1) / G + 2 window rows, each needing 16 reference rows.
  g.tile_words = g.groups_per_row + 4;
  g.tile_rows = std::min(g.win, (kGroups - 1) / g.groups_per_row + 2) + 15;
  g.smem = kSadBytes + kPenBytes + kHalfBytes + kCurBytes + kWorstBytes + kOrderBytes + kSeaBytes +
           std::max({static_cast<size_t>(g.tile_rows) * g.tile_words * 4, static_cast<size_t>(kQueueBytes),
                     static_cast<size_t>(kCosetBytes)});
  return g;
}

// The window row of group g, g / groups_per_row, as one multiply-high: with M = ceil(2^31 / d) = (2^31 + e) / d,
// e < d (M fits 32 bits for d = 1 too), 2g M / 2^32 = g / d + g e / (d 2^31), and the error term stays below 1 / d
// (so the floor is exact) while g e < 2^31, which holds for every window check_search_request accepts (at
// SearchRange 128: d = 65 and g < 65 x 257 + kGroups). An integer division by a value known only at run time costs
// about twenty instructions.
inline uint32_t row_magic(int groups_per_row) {
  return static_cast<uint32_t>(((uint64_t{1} << 31) + static_cast<uint64_t>(groups_per_row) - 1) /
                               static_cast<uint64_t>(groups_per_row));
}
__device__ __forceinline__ int row_of_group(int g, uint32_t magic) {
  return static_cast<int>(__umulhi(2u * static_cast<uint32_t>(g), magic));
}

// The first batch the kernel visits: the one holding the window centre.
GME_HOST_DEVICE inline int centre_batch_of(int range, int groups_per_row, int num_batches) {
  const int b = (range * groups_per_row + groups_per_row / 2) / kGroups;
  return b < num_batches - 1 ? b : num_batches - 1;
}

// Stage 2's visiting order of the steps of every batch of a window (KernelArgs::order): kOrderWords words per batch,
// byte i of a batch's words = the step visited i-th, steps sorted by the smallest Chebyshev distance of their
// positions from the window centre (ties: window order), so the lists hold good keys early and fewer positions
// pass the screen; then kSeedWords words of seed slots (kSeedWords above); then, from the next multiple of 4 words
// (spiral_table_offset), the spiral index of every window position, a row of 4 groups_per_row words per window row
// (0 past the right edge), which stage 1 reads a group's 4 at a time instead of computing them; then
// (offset_table_offset) the inverse: for each spiral index of the window, its vector offset from the window centre
// in quarter pels, x in the low 16 bits and y in the high, both signed, which merge_lists reads instead of solving
// the spiral's rings. Depends on the search range only.
GME_HOST_DEVICE inline int spiral_table_offset(int num_batches) {
  return (num_batches * kOrderWords + kSeedWords + 3) / 4 * 4;
}
GME_HOST_DEVICE inline int offset_table_offset(int num_batches, int win, int groups_per_row) {
  return spiral_table_offset(num_batches) + win * 4 * groups_per_row;
}

inline std::vector<uint32_t> step_order_table(int range) {
  const Geometry g = geometry(range);
  const int num_batches = (g.num_groups + kGroups - 1) / kGroups;
  const size_t spiral_at = static_cast<size_t>(spiral_table_offset(num_batches));
  const size_t offsets_at = static_cast<size_t>(offset_table_offset(num_batches, g.win, g.groups_per_row));
  std::vector<uint32_t> table(offsets_at + static_cast<size_t>(g.win) * g.win, 0);
  for (int wy = 0; wy < g.win; ++wy)
    for (int xi = 0; xi < g.win; ++xi) {
      const int s = spiral_index(xi - range, wy - range);
      table[spiral_at + static_cast<size_t>(wy) * 4 * g.groups_per_row + xi] = static_cast<uint32_t>(s);
      table[offsets_at + static_cast<size_t>(s)] = (static_cast<uint32_t>(4 * (xi - range)) & 0xffffu) |
                                                   (static_cast<uint32_t>(4 * (wy - range)) << 16);
    }
  {
    const int b = centre_batch_of(range, g.groups_per_row, num_batches);
    const int g0 = b * kGroups, groups = std::min(kGroups, g.num_groups - g0);
    std::vector<std::pair<int, int>> near;  // (spiral index, batch slot) of the batch's valid positions
    for (int slot = 0; slot < 4 * groups; ++slot) {
      const int grp = g0 + slot / 4, wy = grp / g.groups_per_row, xi = 4 * (grp % g.groups_per_row) + slot % 4;
      if (xi < g.win) near.push_back({spiral_index(xi - range, wy - range), slot});
    }
    std::sort(near.begin(), near.end());
    uint16_t* seeds = reinterpret_cast<uint16_t*>(&table[static_cast<size_t>(num_batches) * kOrderWords]);
    for (int q = 0; q < kGpuMaxTopK; ++q)
      seeds[q] = q < static_cast<int>(near.size()) ? static_cast<uint16_t>(near[q].second) : kNoSeed;
  }
  for (int b = 0; b < num_batches; ++b) {
    const int g0 = b * kGroups, groups = std::min(kGroups, g.num_groups - g0);
    const int steps = (2 * groups + kStepPairs - 1) / kStepPairs;
    int dist[kMaxSteps], order[kMaxSteps];
    for (int t = 0; t < steps; ++t) {
      order[t] = t;
      dist[t] = INT_MAX;
      for (int p = 2 * kStepPairs * t; p < 2 * kStepPairs * (t + 1) && p < 4 * groups; ++p) {  // positions
        const int grp = g0 + p / 4, wy = grp / g.groups_per_row, xi = 4 * (grp % g.groups_per_row) + p % 4;
        if (xi < g.win) dist[t] = std::min(dist[t], std::max(std::abs(xi - range), std::abs(wy - range)));
      }
    }
    std::stable_sort(order, order + steps, [&dist](int x, int y) { return dist[x] < dist[y]; });
    unsigned char* bytes = reinterpret_cast<unsigned char*>(&table[static_cast<size_t>(b) * kOrderWords]);
    for (int t = 0; t < steps; ++t) bytes[t] = static_cast<unsigned char>(order[t]);
  }
  return table;
}

struct KernelArgs {
  const uint8_t* cur;
  const uint8_t* ref;
  const uint16_t* sums;      // the reference's 4x4 block sums at (0, 0) (block_sum_kernel), sum_pitch(width) a row
  const uint8_t* padded;     // the reference with a replicated border at (0, 0) (pad_kernel), sum_pitch(width) a row
  int pitch, width, height;  // both pictures: no border on the device, pitch = width
  int mb_width;
  int mb_first;              // first macroblock of this launch (launches cover runs of macroblock rows)
  int range, win, groups_per_row, num_groups, tile_words;
  uint32_t row_magic;        // row_of_group's multiplier: ceil(2^31 / groups_per_row)
  int lambda;
  const short2* centre;      // this reference's (ref, mb) entries
  const short2* pred;
  const uint32_t* order;     // step_order_table(range): kOrderWords words per batch, the seed slots, the spiral,
                             // its inverse
  int spiral_at;             // where the spiral indices start in order (spiral_table_offset)
  int offsets_at;            // where their inverse starts (offset_table_offset)
  uint2* out;                // this reference's candidates: (mv.x | mv.y << 16, sad)
  uint2* out_host;           // nullptr, or the same again in page-locked host memory (device-mapped): written
                             // straight over PCIe, so the host needs no download of its own
  const int* slot_mb;        // nullptr (block b takes macroblock mb_first + b), or the macroblock of each slot
                             // mb_first + b: a permutation within each launch's macroblocks (cost_order_kernel)
  uint32_t* cost;            // nullptr, or this reference's clock cycles per macroblock, written by its block
};

// The fields of a launch's arguments that follow from the request and the geometry; the caller sets the picture,
// parameter and output pointers and mb_first (gpu/me_cuda.cu, and the tests' host emulation of the launch).
inline KernelArgs kernel_args(const PictureSearchRequest& req, const Geometry& g) {
  KernelArgs a{};
  a.pitch = a.width = req.mb_width * 16;  // the device holds pictures without border
  a.height = req.mb_height * 16;
  a.mb_width = req.mb_width;
  a.range = req.search_range;
  a.win = g.win;
  a.groups_per_row = g.groups_per_row;
  a.num_groups = g.num_groups;
  a.tile_words = g.tile_words;
  a.lambda = req.lambda_factor;
  a.spiral_at = spiral_table_offset((g.num_groups + kGroups - 1) / kGroups);
  a.offsets_at = offset_table_offset((g.num_groups + kGroups - 1) / kGroups, g.win, g.groups_per_row);
  a.row_magic = row_magic(g.groups_per_row);
  return a;
}

// ---- Packed byte and u16 arithmetic ---------------------------------------------------------------------------
// PTX instructions the kernel names. The host emulation has models of them in gpu/kernel_emu.h.
#ifdef __CUDACC__
// Sum of the 4 byte absolute differences of a and b, plus c: one VABSDIFF4 with its accumulator, where
// __vsadu4(a, b) + c compiles to VABSDIFF4 and a separate add.
__device__ __forceinline__ uint32_t ptx_vabsdiff4_add(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Hopper's packed u16 instructions (DPX): per 16-bit half, (a + b) mod 2^16, min(a, b), and the fused add-and-min
// (one VIADDMNMX.U16x2).
__device__ __forceinline__ uint32_t ptx_add_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("add.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t ptx_min_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("min.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t ptx_max_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t ptx_add_min_u16x2(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("{.reg .b32 t; add.u16x2 t, %1, %2; min.u16x2 %0, t, %3;}" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#endif

__device__ __forceinline__ uint32_t sad4_acc(uint32_t a, uint32_t b, uint32_t acc) {
  return ptx_vabsdiff4_add(a, b, acc);
}

// Per 16-bit half: (a + b) mod 2^16. Stage 2's screen adds u16 SAD pairs and u16 penalty pairs with it; a sum that
// wraps can only let a position through the screen that the exact 64-bit insertion then drops (see screen_batch).
__device__ __forceinline__ uint32_t add_u16x2(uint32_t a, uint32_t b) {
#if GME_ME_ARCH >= 900
  return ptx_add_u16x2(a, b);
#else  // the low halves' carry must not reach the high half: add 15-bit halves, then set each top bit by xor
  return ((a & 0x7fff7fffu) + (b & 0x7fff7fffu)) ^ ((a ^ b) & 0x80008000u);
#endif
}

// Per 16-bit half: min(a, b).
__device__ __forceinline__ uint32_t min_u16x2(uint32_t a, uint32_t b) {
#if GME_ME_ARCH >= 900
  return ptx_min_u16x2(a, b);
#else
  return min(a & 0xffffu, b & 0xffffu) | (min(a >> 16, b >> 16) << 16);
#endif
}

// Per 16-bit half: |a - b|, as max - min (no half borrows from the other).
__device__ __forceinline__ uint32_t absdiff_u16x2(uint32_t a, uint32_t b) {
#if GME_ME_ARCH >= 900
  return ptx_max_u16x2(a, b) - ptx_min_u16x2(a, b);
#else
  return (max(a & 0xffffu, b & 0xffffu) | (max(a >> 16, b >> 16) << 16)) - min_u16x2(a, b);
#endif
}

// Per 16-bit half: min((a + b) mod 2^16, c): with the packed u16 instructions one instruction screens two positions.
__device__ __forceinline__ uint32_t add_min_u16x2(uint32_t a, uint32_t b, uint32_t c) {
#if GME_ME_ARCH >= 900
  return ptx_add_min_u16x2(a, b, c);
#else
  return min_u16x2(add_u16x2(a, b), c);
#endif
}

// Per 16-bit half: min(min(a + b, 65535), c), the add saturated rather than wrapped: a + min(b, 65535 - a) never
// passes 65535. The coset pre-pass needs it (a wrapped sum would claim a cost no position has); the screen does not.
__device__ __forceinline__ uint32_t add_sat_min_u16x2(uint32_t a, uint32_t b, uint32_t c) {
  return add_min_u16x2(a, min_u16x2(b, ~a), c);
}

// ---- Shared memory and the block's macroblock -----------------------------------------------------------------
struct SharedLayout {
  uint32_t* sad;     // [partition][kSadRow]: the batch's partition SADs, u16 pairs of 2 positions
  uint64_t* pen;     // [kPenSlots]: each position's penalty key
  uint16_t* half;    // [kPenSlots]: min(penalty key >> 33, 65535), the screen's u16
  uint32_t* cur;     // the macroblock, 16 rows of 4 words
  uint32_t* worst;   // [2][kThreads]: each list's bound at the end of a batch, by batch parity
  uint32_t* order;   // kOrderWords: the batch's step order
  uint32_t* sea;     // the sweep's words (kSeaBytes)
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
  s.tile = s.sea + kSeaBytes / 4;
  return s;
}

struct Macroblock {
  int index, px, py;   // macroblock number and its top-left pixel
  short2 centre, pred;  // window centre and penalty predictor (quarter pel)
  int ox, oy;          // reference pixel under window position (0, 0), i.e. vector centre - range
};

__device__ __forceinline__ Macroblock block_macroblock(const KernelArgs& a) {
  Macroblock m;
  m.index = a.slot_mb ? a.slot_mb[a.mb_first + blockIdx.x] : a.mb_first + static_cast<int>(blockIdx.x);
  m.px = (m.index % a.mb_width) * 16;
  m.py = (m.index / a.mb_width) * 16;
  m.centre = a.centre[m.index];
  m.pred = a.pred[m.index];
  m.ox = m.px + (m.centre.x >> 2) - a.range;
  m.oy = m.py + (m.centre.y >> 2) - a.range;
  return m;
}

__device__ __forceinline__ void load_current(const KernelArgs& a, const Macroblock& m, uint32_t* s_cur, int tid) {
  if (tid < 64)
    s_cur[tid] = *reinterpret_cast<const uint32_t*>(a.cur + static_cast<size_t>(m.py + (tid >> 2)) * a.pitch + m.px +
                                                    4 * (tid & 3));
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
// whose bound is below it has nothing to screen in the batch (the bounds are exact: see the top of this file), and a
// block all of whose lists are so skips the batch: far from the window centre the penalty alone passes the bounds of
// flat and still macroblocks.
__device__ __forceinline__ uint32_t batch_key_floor(const KernelArgs& a, const Macroblock& m, const Batch& b) {
  const int bits = fewest_se_bits(m.centre.y - m.pred.y, b.wy_first - a.range, b.wy_last - a.range) +
                   fewest_se_bits(m.centre.x - m.pred.x, -a.range, a.range);
  return static_cast<uint32_t>((static_cast<uint64_t>(a.lambda) * static_cast<uint64_t>(bits)) >> 16);
}

// Where this thread's words of the tile start and how it steps through them, without a division per word:
// kThreads = dr rows + dw words.
struct TileWalk {
  int r0, w0, dr, dw;
};

__device__ __forceinline__ TileWalk tile_walk(const KernelArgs& a, int tid) {
  TileWalk t;
  t.r0 = tid / a.tile_words;
  t.w0 = tid - t.r0 * a.tile_words;
  t.dr = kThreads / a.tile_words;
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
    if (tid < t.dr * a.tile_words) {  // t.dr >= 1 (the static_assert above Geometry)
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

// ---- Stage 1 ---------------------------------------------------------------------------------------------------
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
  const int bits_y = se_bits(m.centre.y + 4 * dy - m.pred.y);
  const uint4 sp4 = __ldg(reinterpret_cast<const uint4*>(spiral + (wy * a.groups_per_row + gx) * 4));
  const uint32_t sp[4] = {sp4.x, sp4.y, sp4.z, sp4.w};
GME_UNROLL
  for (int k = 0; k < 4; ++k) {
    const int xi = 4 * gx + k;
    uint64_t pen = kInvalidPenKey;
    if (xi < a.win) {
      const int dx = xi - a.range;
      const int bits = se_bits(m.centre.x + 4 * dx - m.pred.x) + bits_y;
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
GME_UNROLL
        for (int k = 0; k < 4; ++k) {
          s.pen[4 * q + k] = kInvalidPenKey;
          s.half[4 * q + k] = kHalfCap;
        }
      }
    }
  }
}

// ---- The sweep: successive elimination after the centre batch --------------------------------------------------
// Outside the centre batch most window positions cannot enter any partition's top K, and a lower bound on their SADs
// says so for much less than computing them: a 4x4 block's SAD is at least the absolute difference of the block's
// pixel sum and the reference's under it (Li and Salari's successive elimination), so a partition's SAD is at least
// the sum of those differences over its blocks. After the centre batch, a block whose window lies within the padded
// reference (window_summed) sweeps the rest of its window instead of visiting it batch by batch: in rounds of
// kThreads groups, every thread tests one group (group_may_enter: can any of its 4 positions, with the lower bound and
// the fewest mv bits of the group, reach some partition's bound?), the surviving groups are listed, and each kGroups
// of them are computed (SADs straight from the padded reference, without a tile) and screened as a batch of their
// own. The bounds are exact (the top of this file), and so are the lower bounds, hence the candidates do not change;
// what changes is the work: on real pictures a tenth or less of the groups survive, and a block's rest of the window
// takes a few barriers instead of three a batch. The reference's copy with a replicated border (pad_kernel) and its
// block sums at every pixel (block_sum_kernel) are made once per uploaded picture, so that windows at the picture's
// edges sweep too, reading whole words; a test reads 16 sums for each pair of positions, 4 positions in two words.

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
// 0x8000 less it is the largest bound.
__device__ __forceinline__ uint32_t least_slack(const uint32_t* s_sea) {
  uint32_t least = s_sea[kNumPartitions - 1] & 0xffffu;
GME_UNROLL
  for (int i = 0; i < (kNumPartitions - 1) / 4; ++i) {
    const uint4 w = reinterpret_cast<const uint4*>(s_sea)[i];
    least = min(least, min(min(w.x & 0xffffu, w.y & 0xffffu), min(w.z & 0xffffu, w.w & 0xffffu)));
  }
  return least;
}
static_assert((kNumPartitions - 1) % 4 == 0, "least_slack reads 40 words as 16-byte words, then the 41st");

// Whether any position of window group g may be in some partition's top K: for some partition p, (lower bound of its
// SAD) + (the group's fewest penalty) <= bound of p, i.e. lower bound + (0x8000 - bound) <= 0x8000 - penalty, with
// every term below 2^16 (bounds below kSeaCap, the 16x16 lower bound capped: a smaller lower bound only keeps more).
__device__ __forceinline__ bool group_may_enter(const KernelArgs& a, const Macroblock& m, int g, const uint32_t* s_sea,
                                                uint32_t slack) {
  const int wy = row_of_group(g, a.row_magic), gx = g - wy * a.groups_per_row;
  const int bits = se_bits(m.centre.y + 4 * (wy - a.range) - m.pred.y) +
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
GME_UNROLL
    for (int k = 0; k < 4; ++k) {
      s.pen[4 * tid + k] = kInvalidPenKey;
      s.half[4 * tid + k] = kHalfCap;
    }
  }
}

// ---- Stage 2 ---------------------------------------------------------------------------------------------------
// key = penalty key + (SAD << 33) = (cost << 17) | spiral, so key >> 33 = (penalty key >> 33) + SAD exactly (the SAD
// enters at bit 33), and a position whose key >> 33 exceeds a bound that K positions of its partition lie at or
// below cannot enter the partition's top K. So positions are screened with cheap adds and compares, and only a
// warp in which some lane has a possible entrant takes the 64-bit insertion path.

// Sorted insertion into K registers (constant indices only, so the list never goes to local memory). One comparison
// per entry (keys are unique, so key < best[i] decides both whether entry i moves down and whether the key lands
// there), shared by entry i and entry i + 1.
template <int K>
__device__ __forceinline__ void insert_key(uint64_t (&best)[K], uint64_t key) {
  if (key < best[K - 1]) {
    bool below[K];  // key < best[i]
GME_UNROLL
    for (int i = 0; i < K; ++i) below[i] = key < best[i];
GME_UNROLL
    for (int i = K - 1; i > 0; --i) best[i] = below[i - 1] ? best[i - 1] : (below[i] ? key : best[i]);
    best[0] = below[0] ? key : best[0];
  }
}

// The 2 kLanePairs positions of a step for this lane that pass: pairs base + 3j (j < kLanePairs), each a u16 SAD
// pair in v[j] and a u16 pair of penalty halves in h[j]; bit j of the mask = the low half of pair j, bit
// kLanePairs + j its high half. w16 = min(bound, 65535). Each half's sum is capped at W = w16 + 1 (one add-and-min)
// and W subtracted mod 2^16: a half that passes is below W by at most W, so while W <= 2^15 the difference has its
// top bit set exactly where the position passes (two instructions a pair and a shift into the mask, against a
// compare, a select and an or per position). A lane whose bound is larger (a 16x16 SAD above 2^15, or no bound yet)
// passes every position: the insertion compares whole keys, so a position passed in excess costs only time.
static_assert(kLanePairs <= 16, "the mask's halves: bits 0..15 and 16..31 before they are joined");
__device__ __forceinline__ uint32_t screen_mask(const uint32_t (&v)[kLanePairs], const uint32_t (&h)[kLanePairs],
                                                uint32_t w16) {
  if (w16 >= 0x8000u) return (1u << (2 * kLanePairs)) - 1;
  const uint32_t cap = (w16 + 1) * 0x10001u;             // W in both halves
  const uint32_t minus = (0x10000u - (w16 + 1)) * 0x10001u;  // -W mod 2^16 in both halves
  uint32_t top = 0;  // the low half of pair j at bit j, its high half at bit 16 + j
GME_UNROLL
  for (int j = 0; j < kLanePairs; ++j)
    top |= (add_u16x2(add_min_u16x2(v[j], h[j], cap), minus) & 0x80008000u) >> (15 - j);
  return (top & 0xffffu) | ((top >> 16) << kLanePairs);
}

// Inserts the positions of `pass` one at a time (a loop: the warp pays for its busiest lane), each re-read from
// shared memory by its index.
template <int K>
__device__ __forceinline__ void insert_entrants(uint64_t (&best)[K], const uint32_t* row, const uint64_t* pen, int base,
                                                uint32_t pass) {
  while (pass) {
    const int e = __ffs(pass) - 1;
    pass &= pass - 1;
    const int high = e >= kLanePairs ? 1 : 0;  // screen_mask's layout
    const int m = base + (e - high * kLanePairs) * kSlices;
    const uint32_t sad = high ? row[m] >> 16 : row[m] & 0xffffu;
    insert_key<K>(best, pen[2 * m + high] + (static_cast<uint64_t>(sad) << (kLambdaBits + kSpiralBits)));
  }
}

// Inserts this lane's queued entrants (queue = its column of the queue) and empties the queue.
template <int K>
__device__ __forceinline__ void drain_queue(uint64_t (&best)[K], const uint32_t* row, const uint64_t* pen,
                                            const uint32_t* queue, int slice, int& entries, int& queued) {
  for (int q = 0; q < entries; ++q) {
    const uint32_t entry = queue[q * kThreads];
    insert_entrants<K>(best, row, pen, slice + kStepPairs * static_cast<int>(entry & 0xffu), entry >> 8);
  }
  entries = 0;
  queued = 0;
}

// Each list's keys >> 33 (clamped to 32 bits) to s_sad, column tid, for pool_bound after the next barrier.
template <int K>
__device__ __forceinline__ void publish_lists(const uint64_t (&best)[K], uint32_t* s_sad, int tid) {
GME_UNROLL
  for (int i = 0; i < K; ++i)
    s_sad[i * kThreads + tid] = static_cast<uint32_t>(min(best[i] >> 33, static_cast<uint64_t>(0xffffffffu)));
}

// The K-th smallest of the partition's three sorted lists of K values (element i of list s at
// lists[i * kThreads + s]): a three-way merge that stops after K values. K distinct positions lie at or below it,
// where each list's own K-th key is about the 3K-th of what the partition has seen.
template <int K>
__device__ __forceinline__ uint32_t pool_bound(const uint32_t* lists) {
  const uint32_t *la = lists, *lb = lists + 1, *lc = lists + 2;
  int ia = 0, ib = 0, ic = 0;
  uint32_t va = la[0], vb = lb[0], vc = lc[0], x = 0;
  for (int n = 0; n < K; ++n) {
    if (va <= vb && va <= vc) {
      x = va;
      va = ++ia < K ? la[ia * kThreads] : ~0u;
    } else if (vb <= vc) {
      x = vb;
      vb = ++ib < K ? lb[ib * kThreads] : ~0u;
    } else {
      x = vc;
      vc = ++ic < K ? lc[ic * kThreads] : ~0u;
    }
  }
  return x;
}

// The ranks (1-based) of the two keys each list publishes at the end of a batch, K / 3 and ceil(K / 3): for any
// counts k0 + k1 + k2 = K, the largest of list 0's k0-th key, list 1's k1-th and list 2's k2-th has K distinct
// positions at or below it (the lists hold disjoint positions), so it bounds the partition's final K-th key. With
// the counts as even as they go, that is about the partition's (K + 3)-th key so far, where the smallest of the
// lists' own K-th keys is about its 3K-th. Rank 0 stands for no key (value 0).
template <int K> constexpr int kSplitLow = K / 3;
template <int K> constexpr int kSplitHigh = (K + 2) / 3;

// What a list publishes at the end of a batch for list_bound (s.worst, column tid, the batch's parity half): its
// bound and its keys >> 33 at the two split ranks.
template <int K>
__device__ __forceinline__ void publish_bound(const uint64_t (&best)[K], uint32_t worst, uint32_t* half, int tid) {
  half[tid] = worst;
  half[kThreads + tid] = kSplitLow<K> ? static_cast<uint32_t>(best[kSplitLow<K> - 1] >> 33) : 0u;
  half[2 * kThreads + tid] = static_cast<uint32_t>(best[kSplitHigh<K> - 1] >> 33);
}

// The bound a list screens a batch against: the smallest of its own K-th key >> 33, the pooled bound, the bounds its
// partition's 3 lists had at the end of the previous batch and their split bound (prev: the partition's first
// column of the previous batch's s.worst half; any list's K-th key bounds the partition's final K-th key from
// above, and a position that can be in the partition's top K is in the top K of any subset holding it, so its own
// list still keeps it).
template <int K>
__device__ __forceinline__ uint32_t list_bound(const uint64_t (&best)[K], uint32_t pooled, const uint32_t* prev) {
  const uint32_t* lo = prev + kThreads;      // keys at rank kSplitLow
  const uint32_t* hi = prev + 2 * kThreads;  // keys at rank kSplitHigh
  uint32_t split;
  if constexpr (K % 3 == 0) {
    split = max(lo[0], max(lo[1], lo[2]));
  } else if constexpr (K % 3 == 1) {  // one list gives K / 3 + 1 keys, the others K / 3
    split = min(max(hi[0], max(lo[1], lo[2])), min(max(lo[0], max(hi[1], lo[2])), max(lo[0], max(lo[1], hi[2]))));
  } else {  // two lists give K / 3 + 1 keys, one K / 3
    split = min(max(lo[0], max(hi[1], hi[2])), min(max(hi[0], max(lo[1], hi[2])), max(hi[0], max(hi[1], lo[2]))));
  }
  return min(min(min(static_cast<uint32_t>(best[K - 1] >> 33), pooled), min(prev[0], min(prev[1], prev[2]))), split);
}

// Centre batch, before any list holds a key: the largest key >> 33 of the K positions nearest the window centre
// (smallest spiral index; their batch slots follow the step orders in the table). K real positions lie at or below
// it. ~0 where the batch holds fewer than K valid positions.
template <int K>
__device__ __forceinline__ uint32_t seed_bound(const KernelArgs& a, int num_batches, const uint32_t* row,
                                               const uint64_t* pen) {
  const uint16_t* seeds = reinterpret_cast<const uint16_t*>(a.order + num_batches * kOrderWords);
  uint32_t bound = 0;
GME_UNROLL
  for (int q = 0; q < K; ++q) {
    const int slot = __ldg(seeds + q);
    const uint32_t sad = slot == kNoSeed ? 0u : (row[slot >> 1] >> (16 * (slot & 1))) & 0xffffu;
    bound = slot == kNoSeed ? ~0u : max(bound, static_cast<uint32_t>(pen[slot == kNoSeed ? 0 : slot] >> 33) + sad);
  }
  return bound;
}

// Centre batch: every position of the partition in the batch belongs to one of 2 kCosetClasses disjoint cosets (this
// lane's step st, even or odd half of a pair: coset (st mod kCosetClasses, half)). Each lane writes its minima of
// (penalty key >> 33) + SAD per coset, saturated at 65535 (below kHalfCap the sums are exact and belong to real
// positions; coset_bound takes anything from kHalfCap up as "no bound"), to column tid of s_coset. The cosets
// interleave finely (a step is 48 positions of one or two window rows), so each holds a position near the batch's
// best matches.
__device__ __forceinline__ void coset_minima(const uint32_t* row, const uint32_t* half2, int slice, int steps,
                                             uint32_t* s_coset, int tid) {
  uint32_t cm[kCosetClasses];
GME_UNROLL
  for (int c = 0; c < kCosetClasses; ++c) cm[c] = ~0u;
  for (int st0 = 0; st0 < steps; st0 += kCosetClasses) {
GME_UNROLL
    for (int c = 0; c < kCosetClasses; ++c) {
      if (st0 + c < steps) {
        const int b = slice + kStepPairs * (st0 + c);
GME_UNROLL
        for (int j = 0; j < kLanePairs; ++j)
          cm[c] = add_sat_min_u16x2(row[b + j * kSlices], half2[b + j * kSlices], cm[c]);
      }
    }
  }
GME_UNROLL
  for (int c = 0; c < kCosetClasses; ++c) s_coset[c * kThreads + tid] = cm[c];
}

// After coset_minima and a barrier: the partition's coset minima are the smallest of its 3 lanes'; the K-th smallest
// of the 2 kCosetClasses is a bound (the cosets are disjoint, so K distinct positions lie at or below it), found by
// sorting them (a bitonic network, once a block). ~0 where it is kHalfCap or more: such a minimum may come from an
// invalid slot or a clamped penalty, "no bound".
template <int K>
__device__ __forceinline__ uint32_t coset_bound(const uint32_t* s_coset, int list_part) {
  constexpr int kCosets = 2 * kCosetClasses;
  static_assert(K <= kCosets && (kCosets & (kCosets - 1)) == 0, "the K-th of a power-of-two number of minima");
  uint32_t v[kCosets];
GME_UNROLL
  for (int c = 0; c < kCosetClasses; ++c) {
    const uint32_t* col = s_coset + c * kThreads + kSlices * list_part;
    const uint32_t x = min_u16x2(col[0], min_u16x2(col[1], col[2]));
    v[2 * c] = x & 0xffffu;
    v[2 * c + 1] = x >> 16;
  }
GME_UNROLL
  for (int k = 2; k <= kCosets; k *= 2)
GME_UNROLL
    for (int j = k / 2; j > 0; j /= 2)
GME_UNROLL
      for (int i = 0; i < kCosets; ++i) {
        const int l = i ^ j;
        if (l > i) {
          const uint32_t lo = min(v[i], v[l]), hi = max(v[i], v[l]);
          v[i] = (i & k) == 0 ? lo : hi;
          v[l] = (i & k) == 0 ? hi : lo;
        }
      }
  return v[K - 1] >= kHalfCap ? ~0u : v[K - 1];
}

// Screens the batch's positions of this lane (its slice of partition row `row`) step by step in the order of
// s_order, and inserts the entrants; returns the bound at the end. The screen works on u16 halves, two positions per
// packed add-and-min: a position with (penalty key >> 33) + SAD <= bound has both terms and the sum below 2^16 when
// the bound is (w16 = min(bound, 65535)), so it passes (a penalty clamped to kHalfCap only makes its sum smaller);
// what passes wrongly (a clamped penalty, a sum that wraps, every position while the bound is 65535 or more) goes to
// insert_key, which compares whole 64-bit keys. The vote
// keeps the insertion a real branch (if-converted, its instructions would issue for every position) and needs whole
// warps: threads past the last list thread scan partition 40 again and discard the result. With K >= kQueueMinK the
// entrants are queued per lane and the warp inserts all queues together when some lane's queue would overflow and
// at the end of the batch; between drains the bound is stale (larger), which only lets more positions through.
template <int K>
__device__ __forceinline__ uint32_t screen_batch(uint64_t (&best)[K], uint32_t worst, uint32_t key_floor,
                                                 const uint32_t* row, const uint32_t* half2, const uint64_t* pen,
                                                 const unsigned char* order, int steps, int slice,
                                                 [[maybe_unused]] uint32_t* queue) {
  // No position of the batch can pass any of the warp's lists (batch_key_floor): nothing to read.
  if (!__any_sync(0xffffffffu, key_floor <= worst)) return worst;
  uint32_t w16 = min(worst, 0xffffu);
  [[maybe_unused]] int entries = 0, queued = 0;  // this lane's queue entries and queued positions
  for (int step = 0; step < steps; ++step) {
    const int base = slice + kStepPairs * order[step];
    uint32_t v[kLanePairs], h[kLanePairs], m = ~0u;
GME_UNROLL
    for (int j = 0; j < kLanePairs; ++j) {
      v[j] = row[base + j * kSlices];
      h[j] = half2[base + j * kSlices];
      m = add_min_u16x2(v[j], h[j], m);
    }
    const bool maybe = min(m & 0xffffu, m >> 16) <= w16;
    if (__any_sync(0xffffffffu, maybe)) {
      uint32_t pass = screen_mask(v, h, w16);
      if constexpr (K >= kQueueMinK) {
        if (__any_sync(0xffffffffu, queued + __popc(pass) > kQueueCap)) {
          drain_queue<K>(best, row, pen, queue, slice, entries, queued);
          worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
          w16 = min(worst, 0xffffu);
          pass = screen_mask(v, h, w16);
        }
        if (pass) {
          queue[entries * kThreads] = order[step] | (pass << 8);
          ++entries;
          queued += __popc(pass);
        }
      } else {
        insert_entrants<K>(best, row, pen, base, pass);
        worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
        w16 = min(worst, 0xffffu);
      }
    }
  }
  if constexpr (K >= kQueueMinK) {
    drain_queue<K>(best, row, pen, queue, slice, entries, queued);
    worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
  }
  return worst;
}

// ---- Merge and output ------------------------------------------------------------------------------------------
// Each of the 123 list threads places its own keys: the rank of its i-th key in the partition's union is i plus the
// keys below it in the two other lists (counted), and a key of rank under K is the partition's rank-th candidate
// (keys are unique, so ranks are; unfilled entries, kEmptyKey, rank K or more). The keys are decoded back to (mv,
// SAD): the spiral index gives the vector (offsets: the order table's inverse of the spiral), the recomputed penalty
// the SAD.
template <int K>
__device__ __forceinline__ void merge_lists(const uint64_t (&best)[K], const uint64_t* s_merge, uint2* s_out, int part,
                                            int slice, const Macroblock& m, int lambda, const uint32_t* offsets) {
  const uint64_t* o1 = s_merge + (part * kSlices + (slice + 1) % kSlices) * K;
  const uint64_t* o2 = s_merge + (part * kSlices + (slice + 2) % kSlices) * K;
  // The other lists' keys in registers, loaded at once, and each rank counted by independent compares: a two-pointer
  // walk through shared memory waits for one load per step, at the end of every block.
  uint64_t r1[K], r2[K];
GME_UNROLL
  for (int j = 0; j < K; ++j) {
    r1[j] = o1[j];
    r2[j] = o2[j];
  }
GME_UNROLL
  for (int i = 0; i < K; ++i) {
    const uint64_t key = best[i];
    int rank = i;
GME_UNROLL
    for (int j = 0; j < K; ++j) rank += (r1[j] < key ? 1 : 0) + (r2[j] < key ? 1 : 0);
    if (rank >= K) break;  // and so are the later keys of this list
    const uint32_t off = __ldg(offsets + static_cast<uint32_t>(key & ((1u << kSpiralBits) - 1)));
    const int mvx = m.centre.x + static_cast<int16_t>(off & 0xffffu);
    const int mvy = m.centre.y + static_cast<int16_t>(off >> 16);
    const uint64_t pen =
        static_cast<uint64_t>(lambda) * static_cast<uint64_t>(se_bits(mvx - m.pred.x) + se_bits(mvy - m.pred.y));
    const uint32_t sad = static_cast<uint32_t>(((key >> kSpiralBits) - pen) >> kLambdaBits);
    s_out[part * K + rank] = make_uint2((static_cast<uint32_t>(mvx) & 0xffffu) | (static_cast<uint32_t>(mvy) << 16), sad);
  }
}

// The block's 41 x K candidates, staged in shared memory, written out together: consecutive threads write
// consecutive 16-byte pieces, so a warp store is 512 contiguous bytes (8-byte pieces K x 8 bytes apart would be
// 41 x K separate transactions, which over PCIe to a host buffer cost far more than the kernel).
template <int K>
__device__ __forceinline__ void write_out(const KernelArgs& a, const uint2* s_out, int mb, int tid) {
  const size_t first = static_cast<size_t>(mb) * kNumPartitions * K;  // this block's first candidate
  if constexpr (K % 2 == 0) {  // 41 K candidates = 41 K / 2 aligned 16-byte pieces (first is even)
    const uint4* src = reinterpret_cast<const uint4*>(s_out);
    for (int i = tid; i < kNumPartitions * K / 2; i += kThreads) {
      const uint4 v = src[i];
      reinterpret_cast<uint4*>(a.out + first)[i] = v;
      if (a.out_host) reinterpret_cast<uint4*>(a.out_host + first)[i] = v;
    }
  } else {
    for (int i = tid; i < kNumPartitions * K; i += kThreads) {
      const uint2 v = s_out[i];
      a.out[first + i] = v;
      if (a.out_host) a.out_host[first + i] = v;
    }
  }
}

// ---- The kernel -------------------------------------------------------------------------------------------------
template <int K>
__global__ void __launch_bounds__(kThreads, min_blocks_per_sm<K>()) integer_search_kernel(const KernelArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const SharedLayout s = shared_layout(smem);
  const int tid = threadIdx.x;
  const long long start = clock64();
  const Macroblock m = block_macroblock(a);
  load_current(a, m, s.cur, tid);
  mark_padding(s, tid);

  // Stage-2 roles: list thread (partition, slice); threads past the last one rescan partition 40.
  const int part = tid / kSlices, slice = tid - part * kSlices;
  const bool lister = part < kNumPartitions;
  const int list_part = min(part, kNumPartitions - 1);
  uint64_t best[K];
GME_UNROLL
  for (int i = 0; i < K; ++i) best[i] = kEmptyKey;
  // What the first batch reads: no bound.
  for (int f = 0; f < kWorstFields; ++f) s.worst[(kWorstFields + f) * kThreads + tid] = ~0u;
  if (tid < kSeaParts) s.sea[tid] = 0;  // no partition bound for the sweep yet
  int done = 0;                   // batches processed: selects the s.worst half to write
  uint32_t pooled = ~0u;          // pool_bound after the centre batch
  uint32_t bound = ~0u;           // this list's bound after the last batch it screened

  const uint32_t* row = s.sad + list_part * kSadRow;
  const uint32_t* half2 = reinterpret_cast<const uint32_t*>(s.half);  // u16 pairs, as the SAD pairs
  // A batch's (or a sweep chunk's) bound from what the lists published at the end of the previous one.
  auto previous_bound = [&]() {
    return list_bound<K>(best, pooled, s.worst + ((done & 1) ^ 1) * kWorstFields * kThreads + kSlices * list_part);
  };
  // Stage 2 of a batch or sweep chunk, whose slots stage 1 filled, from bound `worst`.
  auto screen = [&](uint32_t worst, uint32_t key_floor, int steps) {
    worst = screen_batch<K>(best, worst, key_floor, row, half2, s.pen, reinterpret_cast<const unsigned char*>(s.order),
                            steps, slice, s.tile + tid);
    bound = worst;
    publish_bound<K>(best, worst, s.worst + (done & 1) * kWorstFields * kThreads, tid);  // read after two barriers
    ++done;
  };

  // Batches in order of distance from the window centre: the mv penalty grows away from the centre and good
  // matches cluster near it, so the lists fill with good keys early and later positions rarely pass the screen.
  const TileWalk walk = tile_walk(a, tid);
  const int num_batches = (a.num_groups + kGroups - 1) / kGroups;
  const int centre_batch = centre_batch_of(a.range, a.groups_per_row, num_batches);
  for (int i = 0; i < 2 * num_batches; ++i) {
    if (i == 1) {  // after the centre batch: the pooled bound, then the sweep where the block can
      __syncthreads();  // stage 2 is done with s.sad
      publish_lists<K>(best, s.sad, tid);
      __syncthreads();
      pooled = pool_bound<K>(s.sad + kSlices * list_part);
      const uint32_t pb = min(bound, pooled);
      if (lister && pb < kSeaCap) atomicMax(s.sea + part, (0x8000u - pb) * 0x10001u);  // the smallest of the 3
      if (!__syncthreads_or(lister && pb >= kSeaCap) && window_summed(a, m)) {  // uniform
        if (tid < kOrderWords) s.order[tid] = 0x03020100u + 0x04040404u * static_cast<uint32_t>(tid);  // in turn
        uint16_t* list = reinterpret_cast<uint16_t*>(s.tile);
        const int centre_first = centre_batch * kGroups;  // the centre batch's groups are done
        int listed = 0;  // listed groups not yet processed, the same in every thread
        const int rounds = (a.num_groups + kThreads - 1) / kThreads;
        // Rounds from the centre batch outwards, alternately below and above it, so that the bounds the chunks
        // tighten meet the farther rows.
        const int centre_round = min((centre_first + kGroups / 2) / kThreads, rounds - 1);
        int visited = 0;
        uint32_t slack = least_slack(s.sea);  // after the pooled bounds' barrier; again after each chunk's
        for (int n = 0; visited < rounds; ++n) {
          const int r = centre_round + ((n & 1) ? (n + 1) / 2 : -(n / 2));
          if (r < 0 || r >= rounds) continue;
          const bool last_round = ++visited == rounds;
          const int g = r * kThreads + tid;
          const bool keep = g < a.num_groups && (g < centre_first || g >= centre_first + kGroups) &&
                            group_may_enter(a, m, g, s.sea, slack);
          const unsigned mask = __ballot_sync(0xffffffffu, keep);
          uint32_t* counts = s.sea + kSeaCounts + 4 * (visited & 1);  // by parity: a warp may write the next round's
          if ((tid & 31) == 0) counts[tid >> 5] = static_cast<uint32_t>(__popc(mask));
          __syncthreads();
          int at = listed;
          for (int w = 0; w < kThreads / 32; ++w) {
            const int c = static_cast<int>(counts[w]);
            at += w < (tid >> 5) ? c : 0;
            listed += c;
          }
          if (keep) list[at + __popc(mask & ((1u << (tid & 31)) - 1u))] = static_cast<uint16_t>(g);
          // Whole chunks of kGroups listed groups, and at the end what is left.
          while (listed >= kGroups || (last_round && listed > 0)) {
            __syncthreads();  // the list is written
            const int chunk = min(listed, kGroups), rest = listed - chunk;
            const int steps = (2 * chunk + kStepPairs - 1) / kStepPairs;
            stage1_chunk(a, m, s, list, chunk, steps, tid);
            const uint16_t carry = tid < rest ? list[kGroups + tid] : 0;  // stage 2's queues overwrite the list
            __syncthreads();
            screen(previous_bound(), 0u, steps);
            // The tests of the rounds left take the lists' new bounds.
            if (lister && bound < kSeaCap) atomicMax(s.sea + part, (0x8000u - bound) * 0x10001u);
            __syncthreads();  // stage 2 is done with s.sad and the tile's memory
            if (tid < rest) list[tid] = carry;
            listed = rest;
            slack = least_slack(s.sea);
          }
        }
        break;
      }
    }
    const int batch = centre_batch + ((i & 1) ? (i + 1) / 2 : -(i / 2));
    if (batch < 0 || batch >= num_batches) continue;
    const Batch b = batch_at(a, batch);
    const uint32_t key_floor = batch_key_floor(a, m, b);
    // The previous batch's stage 2 has finished with s.sad, s.pen, s.order and the tile; a batch that no list can
    // take anything from is skipped (the batches after it on its side lie farther out, but their floors are
    // computed alike).
    if (!__syncthreads_or(lister && key_floor <= bound)) continue;
    load_step_order(a, batch, s.order, tid);
    load_tile(a, m, b, walk, s.tile, tid);
    __syncthreads();
    stage1(a, m, b, s, tid);
    __syncthreads();

    uint32_t worst = previous_bound();
    if (done == 0) {  // the centre batch; uniform, so its barriers are too
      macroblock_block_sums(s.cur, s.sea, tid);
      worst = min(worst, seed_bound<K>(a, num_batches, row, s.pen));
      coset_minima(row, half2, slice, b.steps, s.tile, tid);
      __syncthreads();
      worst = min(worst, coset_bound<K>(s.tile, list_part));
      if constexpr (K >= kQueueMinK) __syncthreads();  // the queue reuses the coset minima's memory
    }
    screen(worst, key_floor, b.steps);
  }

  // Merge the 3 sorted lists of each partition through shared memory (the SAD buffer), then write out.
  __syncthreads();
  uint64_t* s_merge = reinterpret_cast<uint64_t*>(smem);
  if (lister) {
GME_UNROLL
    for (int i = 0; i < K; ++i) s_merge[(part * kSlices + slice) * K + i] = best[i];
  }
  __syncthreads();
  uint2* s_out = reinterpret_cast<uint2*>(smem + kNumPartitions * kSlices * K * 8);
  if (lister) merge_lists<K>(best, s_merge, s_out, part, slice, m, a.lambda, a.order + a.offsets_at);
  __syncthreads();
  write_out<K>(a, s_out, m.index, tid);
  if (a.cost && tid == 0)
    a.cost[m.index] = static_cast<uint32_t>(min(clock64() - start, static_cast<long long>(UINT32_MAX)));
}

}  // namespace
}  // namespace gme
