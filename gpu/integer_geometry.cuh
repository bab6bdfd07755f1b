// The integer kernel's geometry (gpu/me_cuda_kernel.cuh): threads, batches and the shared memory they need for a
// search range, the step-order table the host computes for it (with the window's spiral indices and their
// inverse), and the launch's arguments. Host and device code alike.
#pragma once
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/exp_golomb.h"
#include "gpu/me_twin.h"
#include "me/me_interface.h"
#include "me/spiral.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

namespace gme {
namespace {

constexpr int kThreads = 128;
// Groups of 4 horizontal positions per batch, one per stage-1 thread (the first kGroups threads). 96 rather than
// one per thread: the SAD buffer of a batch of 384 positions leaves room for 5 blocks per SM where 512 allow only 4.
constexpr int kGroups = 96;
static_assert(kGroups % 32 == 0 && kGroups <= kThreads, "stage 1 in whole warps");
constexpr int kBatch = 4 * kGroups;       // positions per batch
// Blocks per SM the kernel is built for (__launch_bounds__), and so the blocks an SM runs at once at least (the
// launch order's first wave): shared memory and registers must allow them (SharedMemoryAllowsTheBlocksPerSm in the
// tests). K > 8 keeps 4: its list needs the registers.
constexpr int kMinBlocksPerSm = 5;
GME_HOST_DEVICE constexpr int min_blocks_per_sm(int top_k) { return top_k <= 8 ? kMinBlocksPerSm : 4; }
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
// The sweep's shared words (gpu/integer_sweep.cuh): per partition 0x8000 - its bound in both u16 halves (kSeaParts
// words), the macroblock's 16 4x4 block sums, each in both halves, and each warp's survivors of a round, by round
// parity.
constexpr int kSeaParts = 44;  // 41, rounded up to a multiple of 4
constexpr int kSeaCurSums = kSeaParts;
constexpr int kSeaCounts = kSeaCurSums + 16;
constexpr int kSeaBytes = (kSeaCounts + 2 * 4) * 4;
// A word past the partitions' holds the block's batch span (batch_span).
constexpr int kSeaSpan = kNumPartitions;
static_assert(kSeaSpan < kSeaParts, "the span word lies among the partitions' padding");
// The mv bits table (bits_table_offset) in shared memory: 5 groups_per_row bytes, SearchRange 128 at most.
constexpr int kBitsBytes = (5 * ((2 * 128 + 1 + 3) / 4) + 15) / 16 * 16;
static_assert(kBitsBytes % 16 == 0, "the tile after the bits table stays aligned");
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
  g.smem = kSadBytes + kPenBytes + kHalfBytes + kCurBytes + kWorstBytes + kOrderBytes + kSeaBytes + kBitsBytes +
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
// the spiral's rings; then (bits_table_offset) a byte per window row or column d < 4 groups_per_row, the mv bits of
// the vector difference 4 (d - range), se_bits (0 past the window), and a byte per group column, the fewest bits of
// its 4 columns: a block whose penalty predictor is its window centre (every macroblock of the encoder's requests)
// copies them to shared memory (load_bits) and reads its penalties' mv bits there instead of computing them.
// Depends on the search range only.
GME_HOST_DEVICE inline int spiral_table_offset(int num_batches) {
  return (num_batches * kOrderWords + kSeedWords + 3) / 4 * 4;
}
GME_HOST_DEVICE inline int offset_table_offset(int num_batches, int win, int groups_per_row) {
  return spiral_table_offset(num_batches) + win * 4 * groups_per_row;
}

GME_HOST_DEVICE inline int bits_table_offset(int num_batches, int win, int groups_per_row) {
  return (offset_table_offset(num_batches, win, groups_per_row) + win * win + 3) / 4 * 4;
}
// Its length in words: a byte per entry (at most se_bits(4 * 128) = 21).
GME_HOST_DEVICE inline int bits_table_words(int groups_per_row) { return (5 * groups_per_row + 3) / 4; }
static_assert(((5 * ((2 * 128 + 1 + 3) / 4) + 3) / 4) * 4 <= kBitsBytes, "the largest window's bits fit");

inline std::vector<uint32_t> step_order_table(int range) {
  const Geometry g = geometry(range);
  const int num_batches = (g.num_groups + kGroups - 1) / kGroups;
  const size_t spiral_at = static_cast<size_t>(spiral_table_offset(num_batches));
  const size_t offsets_at = static_cast<size_t>(offset_table_offset(num_batches, g.win, g.groups_per_row));
  const size_t bits_at = static_cast<size_t>(bits_table_offset(num_batches, g.win, g.groups_per_row));
  std::vector<uint32_t> table(bits_at + static_cast<size_t>(bits_table_words(g.groups_per_row)), 0);
  {
    unsigned char* bits = reinterpret_cast<unsigned char*>(&table[bits_at]);
    for (int d = 0; d < g.win; ++d) bits[d] = static_cast<unsigned char>(se_bits(4 * (d - range)));
    for (int gx = 0; gx < g.groups_per_row; ++gx) {
      int fewest = INT_MAX;
      for (int d = 4 * gx; d < std::min(4 * gx + 4, g.win); ++d) fewest = std::min(fewest, static_cast<int>(bits[d]));
      bits[4 * g.groups_per_row + gx] = static_cast<unsigned char>(fewest);
    }
  }
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
  uint32_t mb_magic;         // row_magic(mb_width): a macroblock's row without a division
  int mb_first;              // first macroblock of this launch (launches cover runs of macroblock rows)
  int range, win, groups_per_row, num_groups, tile_words;
  uint32_t row_magic;        // row_of_group's multiplier: ceil(2^31 / groups_per_row)
  uint32_t tile_magic;       // the same for tile_words (tile_walk)
  int lambda;
  const short2* centre;      // this reference's (ref, mb) entries
  const short2* pred;
  const uint32_t* order;     // step_order_table(range): kOrderWords words per batch, the seed slots, the spiral,
                             // its inverse
  int spiral_at;             // where the spiral indices start in order (spiral_table_offset)
  int offsets_at;            // where their inverse starts (offset_table_offset)
  int bits_at;               // where the mv bits of the window's rows and columns start (bits_table_offset)
  uint2* out;                // this reference's candidates: (mv.x | mv.y << 16, sad)
  uint2* out_host;           // nullptr, or the same again in page-locked host memory (device-mapped): written
                             // straight over PCIe, so the host needs no download of its own
  const int* slot_mb;        // nullptr (block b takes macroblock mb_first + b), or the launch's part of the launch
                             // order (gpu/cost_order.h): block b's entry, its macroblock and half or a spare block
  uint32_t* cost;            // nullptr, or this reference's clock cycles per macroblock, written by its block
                             // (a split macroblock's: its two blocks' together)
  // With slot_mb: where the blocks of split macroblocks meet, pair j (blocks 2j and 2j + 1) at split_keys + 2 j
  // kNumPartitions K (each half's kNumPartitions x K keys) and split_meet + kMeetWords j (the arrivals, whose parity
  // says which half came second, and each half's cycles).
  uint64_t* split_keys;
  uint32_t* split_meet;
};

constexpr int kMeetWords = 4;

// The fields of a launch's arguments that follow from the request and the geometry; the caller sets the picture,
// parameter and output pointers and mb_first (gpu/me_cuda.cu, and the tests' host emulation of the launch).
inline KernelArgs kernel_args(const PictureSearchRequest& req, const Geometry& g) {
  KernelArgs a{};
  a.pitch = a.width = req.mb_width * 16;  // the device holds pictures without border
  a.height = req.mb_height * 16;
  a.mb_width = req.mb_width;
  a.mb_magic = row_magic(req.mb_width);
  a.range = req.search_range;
  a.win = g.win;
  a.groups_per_row = g.groups_per_row;
  a.num_groups = g.num_groups;
  a.tile_words = g.tile_words;
  a.lambda = req.lambda_factor;
  a.spiral_at = spiral_table_offset((g.num_groups + kGroups - 1) / kGroups);
  a.offsets_at = offset_table_offset((g.num_groups + kGroups - 1) / kGroups, g.win, g.groups_per_row);
  a.bits_at = bits_table_offset((g.num_groups + kGroups - 1) / kGroups, g.win, g.groups_per_row);
  a.row_magic = row_magic(g.groups_per_row);
  a.tile_magic = row_magic(g.tile_words);
  return a;
}

// Whether every vector is (0, 0), as the encoder's window centres and predictors are with GPUSearchCenter 0: the
// launch then reads a resident buffer of zeros instead of the request's vectors sent again. Four 8-byte lanes a step
// (the compiler vectorises them): the 1920x1080 call's 65 KB take about a microsecond.
inline bool all_zero_vectors(const std::vector<MV>& v) {
  static_assert(sizeof(MV) == 4, "an MV is two int16 without padding");
  constexpr size_t kLanes = 4;
  const size_t words = v.size() / 2;  // two vectors a word
  uint64_t any[kLanes] = {};
  size_t w = 0;
  for (; w + kLanes <= words; w += kLanes) {
    uint64_t x[kLanes];
    std::memcpy(x, v.data() + 2 * w, sizeof x);
    for (size_t l = 0; l < kLanes; ++l) any[l] |= x[l];
  }
  uint64_t all = any[0] | any[1] | any[2] | any[3];
  for (size_t i = 2 * w; i < v.size(); ++i) all |= static_cast<uint16_t>(v[i].x) | static_cast<uint16_t>(v[i].y);
  return all == 0;
}

}  // namespace
}  // namespace gme
