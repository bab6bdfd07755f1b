// The integer-search kernel, its geometry and arguments (gpu/me_cuda.cu launches it; the design is described there
// and in doc/GPU.md). Kept apart from the host code so that tests/test_gpu_me.cpp can also compile it as plain C++
// under a small emulation of the CUDA execution model (gpu/kernel_emu.h) and hold its logic to the twin without a
// GPU. Include it once per translation unit: it defines its contents in an unnamed namespace.
#pragma once
#include <algorithm>
#include <cstddef>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "me/me_interface.h"
#include "gpu/me_twin.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

// Loop unrolling for nvcc; nothing for a host compiler (which would warn about an unknown pragma).
#ifdef __CUDACC__
#define GME_UNROLL _Pragma("unroll")
#else
#define GME_UNROLL
#endif

namespace gme {
namespace {


// ---- Kernel geometry ------------------------------------------------------------------------------------------
constexpr int kThreads = 128;
// Groups of 4 horizontal positions per batch, one per stage-1 thread (the first kGroups threads). 96 rather than
// one per thread (v13): the SAD buffer of a batch of 384 positions leaves room for 5 blocks per SM where 512 allowed
// 4 (doc/GPU.md); a build may set another multiple of 32 for measuring. (Measured and dropped: the idle warp
// computing the batch's penalty keys during stage 1, +3 % kernel time.)
#ifndef GME_ME_GROUPS
#define GME_ME_GROUPS 96
#endif
constexpr int kGroups = GME_ME_GROUPS;
static_assert(kGroups % 32 == 0 && kGroups <= kThreads, "stage 1 in whole warps");
constexpr int kBatch = 4 * kGroups;       // positions per batch
// Blocks per SM the kernel is built for (__launch_bounds__): shared memory and registers must allow them
// (GpuMeKernelEmu.SharedMemoryAllowsTheBlocksPerSm). K = 16 keeps 4: its list needs the registers.
#ifndef GME_ME_MIN_BLOCKS
#define GME_ME_MIN_BLOCKS 5
#endif
constexpr int kMinBlocksPerSm = GME_ME_MIN_BLOCKS;
template <int K> constexpr int min_blocks_per_sm() { return K <= 8 ? kMinBlocksPerSm : 4; }
constexpr int kSlices = 3;                // stage-2 threads per partition: 41 * 3 = 123 of 128
// Words per partition row of packed SAD pairs. kBatch / 2 + 3 = 3 mod 32 puts stage-2 lane t (partition t/3, slice
// t%3) on bank t: conflict-free reads.
constexpr int kSadRow = kBatch / 2 + 3;
static_assert(kSadRow % 32 == 3, "conflict-free stage-2 reads");
// Stage 2 reads whole chunks of 4 pairs per slice, up to kOverread pairs past the batch: rows and penalty arrays
// are padded so those reads stay in bounds, and padded positions carry the invalid penalty key.
constexpr int kOverread = 12;
constexpr int kPenSlots = kBatch + 2 * kOverread;
constexpr int kSadBytes = ((kNumPartitions * kSadRow + kOverread) * 4 + 15) / 16 * 16;
constexpr int kPenBytes = kPenSlots * 8;
// Stage 2's screen reads each position's penalty key >> 33 as a u16 (clamped), two positions to a word in the
// layout of the SAD pairs, so one packed add serves two positions (see add_min_u16x2).
constexpr int kHalfBytes = (kPenSlots * 2 + 15) / 16 * 16;
constexpr int kCurBytes = 256;
// Stage 2's screening bounds, double-buffered across batches (v9 "share"): each list's K-th key >> 33 at the end of
// a batch, read by its partition's 3 lists at the next batch.
constexpr int kWorstBytes = 2 * kThreads * 4;
// Stage 2's step order for the batch (v9): byte i = the step (12 pairs) visited i-th. A batch has at most
// ceil(2 kGroups / 12) = 22 steps.
constexpr int kStepPairs = 4 * kSlices;
constexpr int kMaxSteps = (2 * kGroups + kStepPairs - 1) / kStepPairs;
constexpr int kOrderBytes = 32;
constexpr int kOrderWords = kOrderBytes / 4;
static_assert(kMaxSteps <= kOrderBytes && kMaxSteps < 256, "step order: one byte per step");
// After the step orders, the seed of the first batch (v13): the batch slots of the window positions nearest the
// centre (smallest spiral index), kGpuMaxTopK u16 slots, 0xffff where the batch has fewer valid positions.
constexpr int kSeedWords = kGpuMaxTopK / 2;
constexpr uint16_t kNoSeed = 0xffffu;
// Stage 2's per-lane queue of entrants (v10): up to kQueueCap positions, as entries of (step, 8-bit mask of the
// step's positions) in u16, one column per thread (conflict-free). It shares the tile's memory: the tile is read in
// stage 1 only and the queue is used in stage 2 only, with a barrier between them and before the next tile.
constexpr int kQueueCap = 8;
// Measured on the H100 (doc/GPU.md, v10/v11): the queue took K = 16's kernel from 0.449 to 0.412 ms (640x480 SR32)
// but left K = 8 unchanged and K = 1 3 % slower, so lists shorter than this insert at once (v9's path).
constexpr int kQueueMinK = 10;
constexpr int kQueueBytes = kQueueCap * kThreads * 2;
// v14: after the centre batch, each list is bounded by the K-th key of its partition's 3 lists together; the lists
// are exchanged through the SAD buffer. GME_ME_POOL_ALL=1 pools after every batch (measured slower: doc/GPU.md).
#ifndef GME_ME_POOL_ALL
#define GME_ME_POOL_ALL 0
#endif
constexpr bool kPoolAll = GME_ME_POOL_ALL;
static_assert(kGpuMaxTopK * kThreads * 4 <= kNumPartitions * kSadRow * 4, "pooled lists pass through s_sad");
// Stage 2's pre-pass over the centre batch (v14): each lane's positions fall into 2 * ceil(K / 2) disjoint cosets
// (step mod ceil(K / 2), even or odd position of a pair), one u16 pair per step class; the lanes' coset minima are
// exchanged through the tile's memory (free in stage 2, shared with the queue: a barrier separates the two).
constexpr int kCosetBytes = (kGpuMaxTopK + 1) / 2 * kThreads * 4;
// Penalty key of window slots past the right edge: above any real key even after adding a SAD << 33.
constexpr uint64_t kInvalidPenKey = 0xFFFC000000000000ull;
static_assert(kNumPartitions * kSlices <= kThreads, "stage 2 needs a thread per (partition, slice)");
static_assert(kNumPartitions * (kSlices + 1) * kGpuMaxTopK * 8 <= kSadBytes,
              "merge lists and the staged output reuse the SAD buffer");
static_assert(kPenSlots - kBatch <= kThreads, "one thread per padding slot");
static_assert(kLambdaBits + kSpiralBits == 33, "stage 2 screens on key >> 33 = penalty >> 33 + SAD");
static_assert(sizeof(Candidate) == 8 && offsetof(Candidate, sad) == 4, "kernel writes Candidate as uint2");

struct Geometry {
  int win, groups_per_row, num_groups, tile_words, tile_rows;
  size_t smem;
};

Geometry geometry(int range) {
  Geometry g;
  g.win = 2 * range + 1;
  g.groups_per_row = (g.win + 3) / 4;
  g.num_groups = g.groups_per_row * g.win;
  // A group at word gx reads words gx..gx+4 of its rows; a batch of kGroups groups spans at most
  // (kGroups - 1) / G + 2 window rows, each needing 16 reference rows.
  g.tile_words = g.groups_per_row + 4;
  g.tile_rows = std::min(g.win, (kGroups - 1) / g.groups_per_row + 2) + 15;
  g.smem = kSadBytes + kPenBytes + kHalfBytes + kCurBytes + kWorstBytes + kOrderBytes +
           std::max({static_cast<size_t>(g.tile_rows) * g.tile_words * 4, static_cast<size_t>(kQueueBytes),
                     static_cast<size_t>(kCosetBytes)});
  return g;
}

// The first batch the kernel visits: the one holding the window centre.
__host__ __device__ inline int centre_batch_of(int range, int groups_per_row, int num_batches) {
  const int b = (range * groups_per_row + groups_per_row / 2) / kGroups;
  return b < num_batches - 1 ? b : num_batches - 1;
}

// Stage 2's visiting order of the steps of every batch of a window (KernelArgs::order): kOrderWords words per batch,
// byte i of a batch's words = the step visited i-th, steps sorted by the smallest Chebyshev distance of their
// positions from the window centre (ties: window order); then kSeedWords words of seed slots (kSeedWords above).
// Depends on the search range only.
std::vector<uint32_t> step_order_table(int range) {
  const Geometry g = geometry(range);
  const int num_batches = (g.num_groups + kGroups - 1) / kGroups;
  std::vector<uint32_t> table(static_cast<size_t>(num_batches) * kOrderWords + kSeedWords, 0);
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
  int pitch, width, height;  // both pictures: no border on the device, pitch = width
  int mb_width;
  int mb_first;              // first macroblock of this launch (launches cover runs of macroblock rows)
  int range, win, groups_per_row, num_groups, tile_words;
  int lambda;
  const short2* centre;      // this reference's (ref, mb) entries
  const short2* pred;
  const uint32_t* order;     // step_order_table(range): kOrderWords words per batch
  uint2* out;                // this reference's candidates: (mv.x | mv.y << 16, sad)
  uint2* out_host;           // nullptr, or the same again in page-locked host memory (device-mapped): written
                             // straight over PCIe, so the host needs no download of its own
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
  return a;
}

// ---- Device helpers (mirror me_interface.h / me_twin.cpp) ---------------------------------------------------
__device__ __forceinline__ int se_bits_dev(int v) {
  const unsigned code = v > 0 ? 2u * static_cast<unsigned>(v) - 1u : 2u * static_cast<unsigned>(-v);
  return 2 * (31 - __clz(static_cast<int>(code + 1))) + 1;
}

__device__ __forceinline__ int spiral_index_dev(int dx, int dy) {
  const int ax = abs(dx), ay = abs(dy);
  const int l = max(ax, ay);
  if (l == 0) return 0;
  const int base = (2 * l - 1) * (2 * l - 1);
  if (ay == l && ax < l) return base + 2 * (dx + l - 1) + (dy > 0 ? 1 : 0);
  return base + 2 * (2 * l - 1) + 2 * (dy + l) + (dx > 0 ? 1 : 0);
}

__device__ __forceinline__ void spiral_offset_dev(int s, int& dx, int& dy) {
  int q = static_cast<int>(sqrtf(static_cast<float>(s)));
  while (q * q > s) --q;
  while ((q + 1) * (q + 1) <= s) ++q;
  const int l = (q + 1) / 2;
  if (l == 0) { dx = 0; dy = 0; return; }
  const int r = s - (2 * l - 1) * (2 * l - 1);
  if (r < 2 * (2 * l - 1)) {
    dx = r / 2 - l + 1;
    dy = (r & 1) ? l : -l;
  } else {
    const int r2 = r - 2 * (2 * l - 1);
    dy = r2 / 2 - l;
    dx = (r2 & 1) ? l : -l;
  }
}

// Sum of the 4 byte absolute differences of a and b, plus acc. The PTX form with .add is one VABSDIFF4 with its
// accumulator; __vsadu4() + acc compiles to VABSDIFF4 + IADD (measured on the H100: 59 vs 41 per SM per clock).
__device__ __forceinline__ uint32_t sad4_acc(uint32_t a, uint32_t b, uint32_t acc) {
#ifdef __CUDA_ARCH__
  uint32_t d;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(acc));
  return d;
#else  // host emulation (gpu/kernel_emu.h)
  for (int i = 0; i < 32; i += 8) {
    const int x = static_cast<int>((a >> i) & 255u), y = static_cast<int>((b >> i) & 255u);
    acc += static_cast<uint32_t>(x > y ? x - y : y - x);
  }
  return acc;
#endif
}

// Per 16-bit half: (a + b) mod 2^16. Stage 2's screen adds u16 SAD pairs and u16 penalty pairs with it; a sum that
// wraps can only let a position through the screen that the exact 64-bit insertion then drops (see the screen).
__device__ __forceinline__ uint32_t add_u16x2(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t d;
  asm("add.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
#else  // host emulation (gpu/kernel_emu.h)
  return ((a + b) & 0xffffu) | (((a >> 16) + (b >> 16)) << 16);
#endif
}

// Per 16-bit half: min(a, b) (Hopper: one VIMNMX.U16x2).
__device__ __forceinline__ uint32_t min_u16x2(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t d;
  asm("min.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
#else  // host emulation (gpu/kernel_emu.h)
  return std::min(a & 0xffffu, b & 0xffffu) | (std::min(a >> 16, b >> 16) << 16);
#endif
}

// Per 16-bit half: min((a + b) mod 2^16, c), Hopper's DPX add-and-min: one packed instruction screens two positions
// where the 32-bit screen took an extract, an add and a compare for each.
__device__ __forceinline__ uint32_t add_min_u16x2(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t d;
  asm("{.reg .b32 t; add.u16x2 t, %1, %2; min.u16x2 %0, t, %3;}" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else  // host emulation (gpu/kernel_emu.h)
  return min_u16x2(add_u16x2(a, b), c);
#endif
}

// Per 16-bit half: min(min(a + b, 65535), c), the add saturated rather than wrapped: a + min(b, 65535 - a) never
// passes 65535. The coset pre-pass needs it (a wrapped sum would claim a cost no position has); the screen does not.
__device__ __forceinline__ uint32_t add_sat_min_u16x2(uint32_t a, uint32_t b, uint32_t c) {
  return add_min_u16x2(a, min_u16x2(b, ~a), c);
}

// The value of an empty list entry: above every real key (each is below 2^56: SAD << 33 < 2^49, lambda * bits <
// 2^38 shifted by 17) and below the keys of invalid window slots (kInvalidPenKey + SAD), which the insertion's
// guard therefore keeps out of lists that are not yet full (with ~0, as before v15, they went in and were pushed
// out later). Measured (H100, doc/GPU.md v15): the K = 8 kernel 0.248-0.251 -> 0.242-0.244 ms at 640x480 SR 32,
// 1.365-1.370 -> 1.325-1.327 ms at 1080p, in the same calls.
constexpr uint64_t kEmptyKey = 0x7FEFFFFFFFFFFFFFull;
static_assert(kEmptyKey < kInvalidPenKey, "keys of invalid slots must stay out of the lists");

// Sorted insertion into K registers (constant indices only, so the list never goes to local memory).
template <int K>
__device__ __forceinline__ void insert_key(uint64_t (&best)[K], uint64_t key) {
  // One comparison per entry (keys are unique, so key < best[i] decides both whether entry i moves down and whether
  // the key lands there), shared by entry i and entry i + 1. (Measured and dropped, v15: a min/max chain on the keys'
  // bits read as doubles, two DMNMX per entry: K = 8 +0.005 ms, K = 16 +0.04 ms; the chain is serial.)
  if (key < best[K - 1]) {
    bool below[K];  // key < best[i]
GME_UNROLL
    for (int i = 0; i < K; ++i) below[i] = key < best[i];
GME_UNROLL
    for (int i = K - 1; i > 0; --i) best[i] = below[i - 1] ? best[i - 1] : (below[i] ? key : best[i]);
    best[0] = below[0] ? key : best[0];
  }
}

// Stage 2 helpers. The 8 positions of a step for this lane: pairs base + 3j (j = 0..3), each a u16 SAD pair in v[j]
// and a u16 pair of penalty halves in h[j]; bit 2j + i of the mask = position i of pair j. w16 = min(bound, 65535).
__device__ __forceinline__ uint32_t screen_mask(const uint32_t (&v)[4], const uint32_t (&h)[4], uint32_t w16) {
  uint32_t pass = 0;
GME_UNROLL
  for (int j = 0; j < 4; ++j) {
    const uint32_t s = add_u16x2(v[j], h[j]);
    pass |= ((s & 0xffffu) <= w16 ? 1u : 0u) << (2 * j);
    pass |= ((s >> 16) <= w16 ? 1u : 0u) << (2 * j + 1);
  }
  return pass;
}

// Inserts the positions of `pass` one at a time (a loop: the warp pays for its busiest lane), each re-read from
// shared memory by its index.
template <int K>
__device__ __forceinline__ void insert_entrants(uint64_t (&best)[K], const uint32_t* row, const uint64_t* pen, int base,
                                                uint32_t pass) {
  while (pass) {
    const int e = __ffs(pass) - 1;
    pass &= pass - 1;
    const int m = base + (e >> 1) * kSlices;
    const uint32_t sad = (e & 1) ? row[m] >> 16 : row[m] & 0xffffu;
    insert_key<K>(best, pen[2 * m + (e & 1)] + (static_cast<uint64_t>(sad) << (kLambdaBits + kSpiralBits)));
  }
}

// Inserts this lane's queued entrants (queue = its column of s_queue) and empties the queue.
template <int K>
__device__ __forceinline__ void drain_queue(uint64_t (&best)[K], const uint32_t* row, const uint64_t* pen,
                                            const uint16_t* queue, int slice, int& entries, int& queued) {
  for (int q = 0; q < entries; ++q) {
    const uint32_t entry = queue[q * kThreads];
    insert_entrants<K>(best, row, pen, slice + kStepPairs * static_cast<int>(entry & 0xffu), entry >> 8);
  }
  entries = 0;
  queued = 0;
}

// The K-th smallest of three sorted lists of K values (element i of list s at lists[i * kThreads + s]): a three-way
// merge that stops after K values.
template <int K>
__device__ __forceinline__ uint32_t kth_of_three(const uint32_t* lists) {
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

// The 41 partition SADs of two positions (u16 pairs) from their packed 4x4 SADs, stored at dst[p * kSadRow].
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

template <int K>
__global__ void __launch_bounds__(kThreads, min_blocks_per_sm<K>()) integer_search_kernel(const KernelArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  uint32_t* s_sad = reinterpret_cast<uint32_t*>(smem);
  uint64_t* s_pen = reinterpret_cast<uint64_t*>(smem + kSadBytes);
  uint16_t* s_half = reinterpret_cast<uint16_t*>(smem + kSadBytes + kPenBytes);  // min(penalty key >> 33, 65535)
  uint32_t* s_cur = reinterpret_cast<uint32_t*>(smem + kSadBytes + kPenBytes + kHalfBytes);
  uint32_t* s_worst = s_cur + kCurBytes / 4;
  uint32_t* s_order = s_worst + kWorstBytes / 4;
  uint32_t* s_tile = s_order + kOrderWords;
  uint16_t* s_queue = reinterpret_cast<uint16_t*>(s_tile);  // stage 2 only (see kQueueBytes)

  const int tid = threadIdx.x;
  const int mb = a.mb_first + blockIdx.x;
  const int mb_px = (mb % a.mb_width) * 16, mb_py = (mb / a.mb_width) * 16;
  const short2 centre = a.centre[mb], pred = a.pred[mb];
  // Reference pixel under window position (0, 0), i.e. vector centre - range.
  const int ox = mb_px + (centre.x >> 2) - a.range, oy = mb_py + (centre.y >> 2) - a.range;

  if (tid < 64)
    s_cur[tid] = *reinterpret_cast<const uint32_t*>(a.cur + static_cast<size_t>(mb_py + (tid >> 2)) * a.pitch +
                                                    mb_px + 4 * (tid & 3));

  if (tid < kPenSlots - kBatch) {  // padding slots past the batch: never candidates
    s_pen[kBatch + tid] = kInvalidPenKey;
    s_half[kBatch + tid] = 0xffffu;
  }

  const int part = tid / kSlices, slice = tid - part * kSlices;
  const bool worker = part < kNumPartitions;
  const int list_part = min(part, kNumPartitions - 1);  // threads past the last worker rescan partition 40
  uint64_t best[K];
GME_UNROLL
  for (int i = 0; i < K; ++i) best[i] = kEmptyKey;
  s_worst[kThreads + tid] = ~0u;  // the bounds the first batch reads: none yet
  int done = 0;                   // batches processed: selects the s_worst half to write
  uint32_t pooled = ~0u;          // v14: the K-th smallest key >> 33 of the partition's 3 lists together

  // Batches in order of distance from the window centre: the centre batch first, then alternately below and
  // above. The mv penalty grows away from the centre and good matches cluster near it, so the lists fill with
  // good keys early and later positions rarely pass stage 2's screen. Any order gives the same result (keys are
  // unique, the top-K of a set does not depend on the visiting order).
  const int tile_r0 = tid / a.tile_words, tile_w0 = tid - tile_r0 * a.tile_words;  // this thread's first tile word
  const int tile_dr = kThreads / a.tile_words, tile_dw = kThreads - tile_dr * a.tile_words;
  const int num_batches = (a.num_groups + kGroups - 1) / kGroups;
  const int centre_batch = centre_batch_of(a.range, a.groups_per_row, num_batches);
  for (int i = 0; i < 2 * num_batches; ++i) {
    const int batch = centre_batch + ((i & 1) ? (i + 1) / 2 : -(i / 2));
    if (batch < 0 || batch >= num_batches) continue;
    const int g0 = batch * kGroups;
    const int groups = min(kGroups, a.num_groups - g0);
    const int wy_first = g0 / a.groups_per_row;
    const int wy_last = (g0 + groups - 1) / a.groups_per_row;
    const int tile_rows = wy_last - wy_first + 16;
    __syncthreads();  // the previous batch's stage 2 has finished with s_sad, s_pen, s_order and the tile
    if (tid < kOrderWords) s_order[tid] = __ldg(a.order + batch * kOrderWords + tid);
    // v14: after the centre batch (every batch with GME_ME_POOL_ALL, for measuring) each list's bound becomes the
    // K-th smallest key >> 33 of its partition's 3 lists together: K distinct positions at or below it, where each
    // list's own K-th key is about the 3K-th of what the partition has seen. The lists pass through s_sad, which
    // stage 1 writes only after the barrier that follows the pooling.
    const bool pool = kPoolAll ? done > 0 : done == 1;
    if (pool) {
GME_UNROLL
      for (int i = 0; i < K; ++i)
        s_sad[i * kThreads + tid] = static_cast<uint32_t>(min(best[i] >> 33, static_cast<uint64_t>(0xffffffffu)));
    }

    // Tile word (r, w) = reference bytes x = ox + 4w .. +3 of row oy + wy_first + r, each fetch clamped into the
    // picture: unbounded edge replication, whatever the vector.
    // (r, w) of idx, stepped without a division per word: kThreads = tile_dr rows + tile_dw words.
    for (int idx = tid, r = tile_r0, w = tile_w0; idx < tile_rows * a.tile_words; idx += kThreads) {
      const int y = min(max(oy + wy_first + r, 0), a.height - 1);
      const uint8_t* row = a.ref + static_cast<size_t>(y) * a.pitch;
      const int x = ox + 4 * w;
      uint32_t v;
      if (x >= 0 && x + 8 <= a.width) {  // two aligned words inside the row hold the four bytes
        const int xa = x & ~3;
        const uint32_t lo = __ldg(reinterpret_cast<const uint32_t*>(row + xa));
        const uint32_t hi = __ldg(reinterpret_cast<const uint32_t*>(row + xa + 4));
        v = __funnelshift_r(lo, hi, 8 * (x & 3));
      } else {
        v = 0;
GME_UNROLL
        for (int b = 0; b < 4; ++b) v |= static_cast<uint32_t>(row[min(max(x + b, 0), a.width - 1)]) << (8 * b);
      }
      s_tile[idx] = v;
      r += tile_dr;
      w += tile_dw;
      if (w >= a.tile_words) {
        w -= a.tile_words;
        ++r;
      }
    }
    __syncthreads();
    if (pool) {
      pooled = kth_of_three<K>(s_sad + kSlices * list_part);
      __syncthreads();  // stage 1 overwrites s_sad
    }

    // Stage 1: this thread's 4 positions (window x = 4 gx .. 4 gx + 3, window row wy).
    if (tid < groups) {
      const int g = g0 + tid;
      const int wy = g / a.groups_per_row, gx = g - wy * a.groups_per_row;
      const uint32_t* t = s_tile + (wy - wy_first) * a.tile_words + gx;
      uint32_t q01[16], q23[16];  // packed 4x4 SADs (raster block order): positions 0 | 1 << 16, 2 | 3 << 16
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
          const uint32_t* tr = t + row * a.tile_words;
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
      store_partitions(q01, s_sad + 2 * tid);
      store_partitions(q23, s_sad + 2 * tid + 1);

      const int dy = wy - a.range;
      const int bits_y = se_bits_dev(centre.y + 4 * dy - pred.y);
GME_UNROLL
      for (int s = 0; s < 4; ++s) {
        const int xi = 4 * gx + s;
        uint64_t pen = kInvalidPenKey;
        if (xi < a.win) {
          const int dx = xi - a.range;
          const int bits = se_bits_dev(centre.x + 4 * dx - pred.x) + bits_y;
          pen = ((static_cast<uint64_t>(a.lambda) * static_cast<uint64_t>(bits)) << kSpiralBits) |
                static_cast<uint64_t>(spiral_index_dev(dx, dy));
        }
        s_pen[4 * tid + s] = pen;
        s_half[4 * tid + s] = static_cast<uint16_t>(min(pen >> 33, static_cast<uint64_t>(0xffffu)));
      }
    } else if (tid < kGroups) {  // no group here in the last batch: stage 2 may still read these slots
GME_UNROLL
      for (int s = 0; s < 4; ++s) {
        s_pen[4 * tid + s] = kInvalidPenKey;
        s_half[4 * tid + s] = 0xffffu;
      }
    }
    __syncthreads();

    // Stage 2: key = penalty key + (SAD << (16 + 17)) = (cost << 17) | spiral.
    // key >> 33 = (penalty key >> 33) + SAD exactly (the SAD enters at bit 33), and a position whose key >> 33
    // exceeds that of the K-th best key cannot enter the list. So eight positions are screened with 32-bit adds
    // and compares against one word per position; only when a lane of the warp finds a possible entrant does the
    // warp take the 64-bit insertion path. The vote keeps that path a real branch (if-converted, its
    // instructions would issue for every position) and needs whole warps: threads past the last worker scan
    // partition 40 again and discard the result. Chunks may read past the batch into padding (invalid keys).
    // v9: (a) each list screens against the smallest K-th key >> 33 that its partition's 3 lists had at the end of
    // the previous batch, as well as its own: a position above any list's K-th key of its partition cannot be among
    // the partition's final top K (that list already holds K smaller keys), and one that can is still inserted
    // into its own list (the top K of all positions is the top K of any subset holding it), so the merge is
    // unchanged. (b) The steps of a batch (12 pairs each) are visited centre-out (step_order_table), so the lists
    // hold good keys early and fewer positions pass the screen; any visiting order gives the same lists.
    // v10 (K >= kQueueMinK since v11): a lane's entrants are queued (s_queue) rather than inserted at once, and the
    // warp inserts all queues together when some lane's queue would overflow and at the end of the batch: one
    // insertion pass pays for the busiest lane's entrants of several steps instead of once per step. Between drains
    // the bound is stale (larger), which only lets more positions through the screen; insert_key drops keys that no
    // longer make the list.
    {
      const uint32_t* row = s_sad + list_part * kSadRow;
      const uint32_t* half2 = reinterpret_cast<const uint32_t*>(s_half);  // u16 pairs, as the SAD pairs
      const unsigned char* order = reinterpret_cast<const unsigned char*>(s_order);
      const int steps = (2 * groups + kStepPairs - 1) / kStepPairs;  // same trip count in every lane
      const uint32_t* prev = s_worst + ((done & 1) ^ 1) * kThreads + kSlices * list_part;
      uint32_t worst = min(min(static_cast<uint32_t>(best[K - 1] >> 33), pooled), min(prev[0], min(prev[1], prev[2])));
      // v13: the first batch (the centre's) starts with a bound instead of empty lists: the largest key >> 33 of the
      // K positions nearest the window centre (step_order_table's seed slots). K real positions lie at or below it,
      // so the partition's final K-th key does too; without it each of the 3 lists first fills with K entrants.
      if (done == 0) {
        const uint16_t* seeds = reinterpret_cast<const uint16_t*>(a.order + num_batches * kOrderWords);
        uint32_t bound = 0;
GME_UNROLL
        for (int q = 0; q < K; ++q) {
          const int slot = __ldg(seeds + q);
          const uint32_t sad = slot == kNoSeed ? 0u : (row[slot >> 1] >> (16 * (slot & 1))) & 0xffffu;
          bound = slot == kNoSeed ? ~0u : max(bound, static_cast<uint32_t>(s_pen[slot == kNoSeed ? 0 : slot] >> 33) + sad);
        }
        worst = min(worst, bound);
        // v14: a pre-pass over the centre batch tightens that bound. Every position of the partition in this batch
        // belongs to one of 2 C cosets (C = ceil(K / 2); this lane's step st, even or odd half of a pair: coset
        // (st mod C, half)); the 3 lanes' minima of (penalty key >> 33) + SAD per coset are combined, and the K-th
        // smallest coset minimum is the bound: the cosets are disjoint, so K distinct positions lie at or below it.
        // Sums are saturated at 65535, which stands for "no bound" (a coset without a position under 2^16 gives
        // none); below that they are exact (the screen's argument). The cosets interleave finely (a step is 24
        // positions of one or two window rows), so each holds a position near the batch's best matches.
        constexpr int kClasses = (K + 1) / 2;
        uint32_t cm[kClasses];
GME_UNROLL
        for (int c = 0; c < kClasses; ++c) cm[c] = ~0u;
        for (int st0 = 0; st0 < steps; st0 += kClasses) {
GME_UNROLL
          for (int c = 0; c < kClasses; ++c) {
            if (st0 + c < steps) {
              const int b = slice + kStepPairs * (st0 + c);
GME_UNROLL
              for (int j = 0; j < 4; ++j) cm[c] = add_sat_min_u16x2(row[b + j * kSlices], half2[b + j * kSlices], cm[c]);
            }
          }
        }
        uint32_t* s_coset = s_tile;  // kCosetBytes: column tid, row c
GME_UNROLL
        for (int c = 0; c < kClasses; ++c) s_coset[c * kThreads + tid] = cm[c];
        __syncthreads();  // uniform: every thread's first batch is the centre batch
        uint32_t m1 = 0, m2 = 0;  // the largest and second largest coset minima
GME_UNROLL
        for (int c = 0; c < kClasses; ++c) {
          const uint32_t* col = s_coset + c * kThreads + kSlices * list_part;
          const uint32_t x = min_u16x2(col[0], min_u16x2(col[1], col[2]));
GME_UNROLL
          for (int e = 0; e < 2; ++e) {
            const uint32_t y = e ? x >> 16 : x & 0xffffu;
            m2 = max(m2, min(m1, y));
            m1 = max(m1, y);
          }
        }
        const uint32_t kth = (2 * kClasses == K) ? m1 : m2;  // odd K: K of K + 1 cosets
        worst = min(worst, kth >= 0xffffu ? ~0u : kth);
        if constexpr (K >= kQueueMinK) __syncthreads();  // the queue reuses s_coset's memory
      }
      // v12: the screen in u16 halves, two positions per packed add (add_min_u16x2). Exact for the kernel's result:
      // a position with (penalty key >> 33) + SAD <= bound has both terms and the sum below 2^16 when the bound is
      // (w16 = min(bound, 65535)), so it passes; what passes wrongly (a clamped penalty, a sum that wraps, every
      // position while the bound is 65535 or more) goes to insert_key, which compares whole 64-bit keys.
      uint32_t w16 = min(worst, 0xffffu);
      [[maybe_unused]] uint16_t* queue = s_queue + tid;  // the queue path (K >= kQueueMinK) only
      [[maybe_unused]] int entries = 0, queued = 0;  // this lane's queue entries and queued positions
      for (int step = 0; step < steps; ++step) {
        const int base = slice + kStepPairs * order[step];
        uint32_t v[4], h[4], m = ~0u;
GME_UNROLL
        for (int j = 0; j < 4; ++j) {
          v[j] = row[base + j * kSlices];
          h[j] = half2[base + j * kSlices];
          m = add_min_u16x2(v[j], h[j], m);
        }
        const bool maybe = min(m & 0xffffu, m >> 16) <= w16;
        if (__any_sync(0xffffffffu, maybe)) {
          uint32_t pass = screen_mask(v, h, w16);
          if constexpr (K >= kQueueMinK) {
            if (__any_sync(0xffffffffu, queued + __popc(pass) > kQueueCap)) {
              drain_queue<K>(best, row, s_pen, queue, slice, entries, queued);
              worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
              w16 = min(worst, 0xffffu);
              pass = screen_mask(v, h, w16);
            }
            if (pass) {
              queue[entries * kThreads] = static_cast<uint16_t>(order[step] | (pass << 8));
              ++entries;
              queued += __popc(pass);
            }
          } else {
            insert_entrants<K>(best, row, s_pen, base, pass);
            worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
            w16 = min(worst, 0xffffu);
          }
        }
      }
      if constexpr (K >= kQueueMinK) {
        drain_queue<K>(best, row, s_pen, queue, slice, entries, queued);
        worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
      }
      s_worst[(done & 1) * kThreads + tid] = worst;  // read at the next batch, after two barriers
    }
    ++done;
  }

  // Merge the 3 sorted lists of each partition, decode keys back to (mv, SAD).
  __syncthreads();
  uint64_t* s_merge = reinterpret_cast<uint64_t*>(smem);
  if (worker) {
GME_UNROLL
    for (int i = 0; i < K; ++i) s_merge[(part * kSlices + slice) * K + i] = best[i];
  }
  __syncthreads();
  // The block's 41 x K candidates are staged in shared memory (after the merge lists) and written out together:
  // consecutive threads write consecutive 16-byte pieces, so a warp store is 512 contiguous bytes (one partition
  // per thread, K x 8 bytes apart, would make 8-byte pieces: 41 x K separate transactions, which over PCIe to a
  // host buffer cost far more than the kernel).
  // v14: each of the 123 list threads places its own entries: the rank of its i-th key in the partition's union is
  // i plus the keys below it in the two other lists (sorted, so two pointers that only advance), and a key of rank
  // under K is the partition's rank-th candidate. Keys are unique, so the ranks are; the union holds the
  // partition's top K (unfilled entries, kEmptyKey, rank K or more). Before, 41 threads inserted 3 K keys each into a
  // fourth list, a serial chain of 3 K insertions per partition.
  uint2* s_out = reinterpret_cast<uint2*>(smem + kNumPartitions * kSlices * K * 8);
  if (worker) {
    const uint64_t* o1 = s_merge + (part * kSlices + (slice + 1) % kSlices) * K;
    const uint64_t* o2 = s_merge + (part * kSlices + (slice + 2) % kSlices) * K;
    int p1 = 0, p2 = 0;  // keys of o1 / o2 below the current key
GME_UNROLL
    for (int i = 0; i < K; ++i) {
      const uint64_t key = best[i];
      while (p1 < K && o1[p1] < key) ++p1;
      while (p2 < K && o2[p2] < key) ++p2;
      const int rank = i + p1 + p2;
      if (rank >= K) break;  // and so are the later keys of this list
      int dx, dy;
      spiral_offset_dev(static_cast<int>(key & ((1u << kSpiralBits) - 1)), dx, dy);
      const int mvx = centre.x + 4 * dx, mvy = centre.y + 4 * dy;
      const uint64_t pen =
          static_cast<uint64_t>(a.lambda) * static_cast<uint64_t>(se_bits_dev(mvx - pred.x) + se_bits_dev(mvy - pred.y));
      const uint32_t sad = static_cast<uint32_t>(((key >> kSpiralBits) - pen) >> kLambdaBits);
      s_out[part * K + rank] = make_uint2((static_cast<uint32_t>(mvx) & 0xffffu) | (static_cast<uint32_t>(mvy) << 16), sad);
    }
  }
  __syncthreads();
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

}  // namespace
}  // namespace gme
