// CUDA kernel: the sub-pel distortion tables (me/me_interface.h, SubpelTable) of one reference, computed right
// after the integer search from its candidates. Its plain twin is subpel_tables_twin() (gpu/subpel_twin.cpp);
// tests hold the two bit-exact on the device and, through gpu/kernel_emu.h, on the host.
//
// One block per macroblock, every rank of it. A partition at offset (ox, oy) is the sum of its 4x4 blocks, so a
// rank's table needs 112 entries (7 partition levels x 16 blocks of 4x4), each the 49 offsets around the integer
// vector its partition's candidate of that rank has. The entries of all ranks share most of their (block, vector)
// pairs (a vector in the top K of one partition is mostly in the top K of the others, at another rank), so the
// block computes each distinct pair once, as a task:
//   0. every entry's block origin (block + vector); the entries of a group of ranks deduplicated: each entry takes
//      the first earlier entry of its 4x4 block with the same vector as its representative, the representatives
//      become the group's tasks. A group is as many ranks from the first not yet done as fit kSubpelTaskCap tasks
//      (mostly all of them; one rank always fits);
//   then per chunk of kSubpelChunk tasks, whose sample planes shared memory holds at once:
//   1. each task's 10x10 integer samples around its block, coordinates clamped (= unbounded edge replication);
//   2. per task the half-pel planes b (and its unrounded horizontal taps b1), h and j of 8.4.2.2.1, as in the CPU's
//      SubpelRegion: G, b, h, j over the 6x6 region around the block cover every quarter-pel sample within +-3/4
//      pel, quarter-pel samples being rounded averages of two of them;
//   3. one thread per (task, offset): the 4x4 prediction and its SAD or JM SATD (exactly common/pixel.cpp's);
//   then per rank of the group:
//   4. per (partition, slot) the sum over the partition's blocks (their entries' tasks), and per partition the
//      smallest sum (the row's base); then the table a word per thread: the bases, and each sum as its excess over
//      its base in a byte (kSubpelEscape from 255 up);
//   5. the rows' bases into the macroblock's floors (SubpelFloors: the minimum over every rank, taken with
//      atomicMin, as the launch sets them to UINT32_MAX first).
// Uses only __syncthreads, atomicMin, atomicAdd and dynamic shared memory, so gpu/kernel_emu.h runs it unchanged.
// Where a task lands in the list (atomicAdd) changes which thread computes it, never a value. Include it once per
// translation unit: like gpu/me_cuda_kernel.cuh it defines its contents in an unnamed namespace.
#pragma once
#include <algorithm>
#include <cstdint>

#include "gpu/me_twin.h"
#include "me/me_interface.h"

namespace gme {
namespace {

#ifdef __CUDACC__
#define GME_SUBPEL_UNROLL _Pragma("unroll")
#else
#define GME_SUBPEL_UNROLL
#endif

// The table's row order (me_interface.h, kSubpelSlots) where the device can read it.
__constant__ SubpelSlotMap c_subpel_slots = kSubpelSlots;

constexpr int kSubpelThreads = 256;
constexpr int kSubpelRankEntries = 7 * 16;  // a rank's entries: partition level x 4x4 block
constexpr int kSubpelMaxEntries = kGpuMaxTopK * kSubpelRankEntries;
// Distinct (block, vector) tasks a group of ranks may have: their distortions stay in shared memory until the group's
// tables are written. Three ranks' worth, so that the block fits the 64 KB a compute capability 7.5 block can have;
// the 8 ranks of the default GPUTopK mostly have fewer together.
constexpr int kSubpelTaskCap = 3 * kSubpelRankEntries;
// Tasks whose sample planes are in shared memory at once (steps 1-3 run chunk by chunk).
constexpr int kSubpelChunk = 56;

struct SubpelKernelArgs {
  const uint8_t* cur;   // current luma, pitch bytes per row, width x height (coded size, no border)
  const uint8_t* ref;   // reference luma, same layout
  int pitch, width, height;
  int mb_width, mb_first;  // the launch covers macroblocks mb_first .. mb_first + gridDim.x / blocks_per_mb - 1
  int top_k;
  int ranks;               // tables per macroblock: candidates 0 .. ranks - 1 of every list (at most kGpuMaxTopK)
  int ranks_per_block;     // a block's ranks (subpel_ranks_per_block); the last block of a macroblock may have fewer
  int blocks_per_mb;       // ceil(ranks / ranks_per_block)
  int metric;              // 0 SAD, 2 JM SATD
  const uint2* cands;      // this reference's candidates: (mb * 41 + part) * top_k + i, {MV as 2 x int16, SAD}
  SubpelTable* out;        // this reference's tables, indexed by mb * ranks + rank
  SubpelFloors* floors;    // this reference's floors, indexed by mb, UINT32_MAX before the launch; nullptr: none
};

// The fields that follow from the request; the caller sets the pointers and mb_first.
inline SubpelKernelArgs subpel_kernel_args(const PictureSearchRequest& req) {
  SubpelKernelArgs a{};
  a.pitch = a.width = req.mb_width * 16;
  a.height = req.mb_height * 16;
  a.mb_width = req.mb_width;
  a.top_k = req.top_k;
  a.ranks = req.subpel_ranks;
  a.metric = req.subpel_metric;
  a.ranks_per_block = a.ranks;
  a.blocks_per_mb = 1;
  return a;
}

// How many ranks one block takes. A block shares the tasks of its ranks, so fewer blocks with more ranks each do
// less work in all; but a launch of fewer blocks than the GPU holds at once ends with the latency of its longest
// block, which grows with its ranks. A launch of `mbs` macroblocks therefore splits each macroblock's ranks into as
// many blocks as `min_blocks` asks (the caller's: a few waves of the device's resident blocks), no more.
inline int subpel_ranks_per_block(int mbs, int ranks, int min_blocks) {
  const int split = std::min(ranks, std::max(1, (min_blocks + mbs - 1) / std::max(1, mbs)));
  return std::max(1, ranks / split);  // rounded down: ceil(ranks / result) >= split blocks
}
inline void set_subpel_ranks_per_block(SubpelKernelArgs& a, int ranks_per_block) {
  a.ranks_per_block = ranks_per_block;
  a.blocks_per_mb = (a.ranks + ranks_per_block - 1) / ranks_per_block;
}

// Shared memory layout (bytes). Each task's sample planes lie together (kSubpelPlaneBytes apart), so that a
// quarter-pel offset's two source samples are at fixed offsets from the task's planes whatever their kinds
// (SubpelSources): the prediction loop is then the same code for every lane.
constexpr int kSubpelRaw = 10;                 // integer samples per side: X-3 .. X+6 around the block at X
constexpr int kSubpelPlaneG = 0;               // uint8 raw[10][10]; G(r, c) = raw[r + 2][c + 2]
constexpr int kSubpelPlaneB = 100;             // uint8 b[6][5]
constexpr int kSubpelPlaneH = 130;             // uint8 h[5][6]
constexpr int kSubpelPlaneJ = 160;             // uint8 j[5][5]
constexpr int kSubpelPlaneBytes = 188;         // 185 rounded up to a word
constexpr int kSubpelPlanesBytes = kSubpelChunk * kSubpelPlaneBytes;     // a chunk's planes; then the sums
constexpr int kSubpelB1Bytes = kSubpelChunk * 10 * 5 * 2;               // int16 b1[10][5]: region rows -2..7
constexpr int kSubpelResBytes = kSubpelTaskCap * kSubpelOffsets * 2;    // uint16 distortion[49] per task
constexpr int kSubpelEntryOrgBytes = kSubpelMaxEntries * 4;             // per entry: X, Y as int16 halves
constexpr int kSubpelEntryTaskBytes = kSubpelMaxEntries * 2;            // per entry: its task (first its
                                                                        // representative, see step 0)
constexpr int kSubpelTaskOrgBytes = kSubpelTaskCap * 4;                 // per task: X, Y as int16 halves
constexpr int kSubpelTaskBlockBytes = kSubpelTaskCap;                   // per task: its 4x4 block
constexpr int kSubpelSourceBytes = 52 * 4;                              // uint32 SubpelSources per offset
constexpr int kSubpelSlotBytes = (kSubpelOffsets + 3) / 4 * 4;          // int8 offset of each table slot
constexpr int kSubpelCurBytes = 256;
constexpr int kSubpelFloorBytes = 2 * kNumPartitions * 4;               // uint32 per partition, by rank parity
constexpr int kSubpelCountBytes = (kGpuMaxTopK + 1) * 4;                // new tasks per rank; tasks of the group
static_assert(kSubpelPlanesBytes % 16 == 0 && kSubpelB1Bytes % 16 == 0 && kSubpelResBytes % 16 == 0 &&
                  kSubpelEntryOrgBytes % 16 == 0 && kSubpelEntryTaskBytes % 16 == 0 && kSubpelTaskOrgBytes % 16 == 0 &&
                  kSubpelTaskBlockBytes % 4 == 0,
              "the arrays stay aligned");
constexpr size_t kSubpelSmemBytes = kSubpelPlanesBytes + kSubpelB1Bytes + kSubpelResBytes + kSubpelEntryOrgBytes +
                                    kSubpelEntryTaskBytes + kSubpelTaskOrgBytes + kSubpelTaskBlockBytes +
                                    kSubpelSourceBytes + kSubpelSlotBytes + kSubpelCurBytes + kSubpelFloorBytes +
                                    kSubpelCountBytes;
static_assert(kSubpelTaskCap >= kSubpelRankEntries, "a rank's entries always fit a group");
static_assert(kSubpelMaxEntries < 0x8000, "an entry's representative is marked by bit 15 of its task word");

// The rectangle of 4x4 blocks (x0, y0, w, h) partition `part` (me_interface.h numbering) covers, and its level
// (0 16x16, 1 16x8, 2 8x16, 3 8x8, 4 8x4, 5 4x8, 6 4x4).
struct SubpelRect {
  int level, x0, y0, w, h;
};
__device__ __forceinline__ SubpelRect subpel_rect(int part) {
  if (part == 0) return {0, 0, 0, 4, 4};
  if (part <= 2) return {1, 0, 2 * (part - 1), 4, 2};
  if (part <= 4) return {2, 2 * (part - 3), 0, 2, 4};
  if (part <= 8) {
    const int b8 = part - 5;
    return {3, 2 * (b8 & 1), 2 * (b8 >> 1), 2, 2};
  }
  if (part <= 16) {
    const int q = part - 9, b8 = q >> 1;
    return {4, 2 * (b8 & 1), 2 * (b8 >> 1) + (q & 1), 2, 1};
  }
  if (part <= 24) {
    const int q = part - 17, b8 = q >> 1;
    return {5, 2 * (b8 & 1) + (q & 1), 2 * (b8 >> 1), 1, 2};
  }
  const int q = part - 25, b8 = q >> 2;
  return {6, 2 * (b8 & 1) + (q & 1), 2 * (b8 >> 1) + ((q >> 1) & 1), 1, 1};
}

// The partition of level `level` that holds 4x4 block (bx, by).
__device__ __forceinline__ int subpel_partition_of(int level, int bx, int by) {
  const int b8 = (by >> 1) * 2 + (bx >> 1);
  switch (level) {
    case 0: return 0;
    case 1: return 1 + (by >> 1);
    case 2: return 3 + (bx >> 1);
    case 3: return 5 + b8;
    case 4: return 9 + 2 * b8 + (by & 1);
    case 5: return 17 + 2 * b8 + (bx & 1);
    default: return 25 + 4 * b8 + 2 * (by & 1) + (bx & 1);
  }
}

__device__ __forceinline__ int subpel_tap6(int p0, int p1, int p2, int p3, int p4, int p5) {
  return p0 - 5 * p1 + 20 * p2 + 20 * p3 - 5 * p4 + p5;
}

__device__ __forceinline__ int subpel_clip_pixel(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

// The two plane samples whose rounded average is the quarter-pel sample of Table 8-12 kind `k` (fy * 4 + fx) at
// region position (r, c): (kind, row offset, column offset) each, as SubpelRegion::predict picks them on the CPU.
__device__ __forceinline__ void subpel_sample_sources(int k, int& ka, int& ra, int& ca, int& kb, int& rb, int& cb) {
  ra = ca = rb = cb = 0;
  switch (k) {
    case 0: ka = kb = 0; break;                         // G
    case 1: ka = 0; kb = 1; break;                      // a = (G + b)
    case 2: ka = kb = 1; break;                         // b
    case 3: ka = 0; ca = 1; kb = 1; break;              // c = (G right + b)
    case 4: ka = 0; kb = 2; break;                      // d = (G + h)
    case 5: ka = 1; kb = 2; break;                      // e = (b + h)
    case 6: ka = 1; kb = 3; break;                      // f = (b + j)
    case 7: ka = 1; kb = 2; cb = 1; break;              // g = (b + h right)
    case 8: ka = kb = 2; break;                         // h
    case 9: ka = 2; kb = 3; break;                      // i = (h + j)
    case 10: ka = kb = 3; break;                        // j
    case 11: ka = 3; kb = 2; cb = 1; break;             // k = (j + h right)
    case 12: ka = 0; ra = 1; kb = 2; break;             // n = (G below + h)
    case 13: ka = 2; kb = 1; rb = 1; break;             // p = (h + b below)
    case 14: ka = 3; kb = 1; rb = 1; break;             // q = (j + b below)
    default: ka = 2; ca = 1; kb = 1; rb = 1; break;     // r = (h right + b below)
  }
}

// Where the samples of quarter-pel offset oi come from, packed in a word: byte 0 the offset of the first source's
// sample (0, 0) in a task's planes, byte 1 its row stride; bytes 2 and 3 the same for the second source.
__device__ __forceinline__ uint32_t subpel_sources(int oi) {
  const int ox = oi % 7 - 3, oy = oi / 7 - 3;
  const int fx = ox & 3, fy = oy & 3, c0 = (ox >> 2) + 1, r0 = (oy >> 2) + 1;
  int ka, ra, ca, kb, rb, cb;
  subpel_sample_sources(fy * 4 + fx, ka, ra, ca, kb, rb, cb);
  const int base[4] = {kSubpelPlaneG + 2 * kSubpelRaw + 2, kSubpelPlaneB, kSubpelPlaneH, kSubpelPlaneJ};
  const int stride[4] = {kSubpelRaw, 5, 6, 5};
  const uint32_t off_a = static_cast<uint32_t>(base[ka] + (r0 + ra) * stride[ka] + c0 + ca);
  const uint32_t off_b = static_cast<uint32_t>(base[kb] + (r0 + rb) * stride[kb] + c0 + cb);
  return off_a | static_cast<uint32_t>(stride[ka]) << 8 | off_b << 16 | static_cast<uint32_t>(stride[kb]) << 24;
}

// JM's 4x4 SATD of the differences d (common/pixel.cpp's satd4x4_c): horizontal butterflies, then vertical.
__device__ __forceinline__ uint32_t subpel_satd4x4(const int (&d)[16]) {
  int m[16];
GME_SUBPEL_UNROLL
  for (int y = 0; y < 4; ++y) {
    const int* rw = d + 4 * y;
    const int s01 = rw[0] + rw[1], d01 = rw[0] - rw[1], s23 = rw[2] + rw[3], d23 = rw[2] - rw[3];
    m[4 * y + 0] = s01 + s23;
    m[4 * y + 1] = s01 - s23;
    m[4 * y + 2] = d01 - d23;
    m[4 * y + 3] = d01 + d23;
  }
  uint32_t dist = 0;
GME_SUBPEL_UNROLL
  for (int x = 0; x < 4; ++x) {
    const int s01 = m[x] + m[4 + x], d01 = m[x] - m[4 + x], s23 = m[8 + x] + m[12 + x], d23 = m[8 + x] - m[12 + x];
    dist += abs(s01 + s23) + abs(s01 - s23) + abs(d01 - d23) + abs(d01 + d23);
  }
  return (dist + 1) >> 1;
}

// Five vertical 6-tap outputs down a column of 10 samples (src, every src_stride elements):
// dst[r * dst_stride] = Clip1((taps over rows r .. r + 5 + round) >> shift), r = 0..4. The h plane from integer
// samples (round 16, shift 5) and j from b's unrounded taps (512, 10), as 8.4.2.2.1 forms them.
template <typename T>
__device__ __forceinline__ void subpel_column_taps(const T* src, int src_stride, uint8_t* dst, int dst_stride,
                                                   int round, int shift) {
  int v[kSubpelRaw];
GME_SUBPEL_UNROLL
  for (int r = 0; r < kSubpelRaw; ++r) v[r] = src[r * src_stride];
GME_SUBPEL_UNROLL
  for (int r = 0; r < 5; ++r)
    dst[r * dst_stride] = static_cast<uint8_t>(
        subpel_clip_pixel((subpel_tap6(v[r], v[r + 1], v[r + 2], v[r + 3], v[r + 4], v[r + 5]) + round) >> shift));
}

// Unpacks a block origin stored as two int16 halves.
__device__ __forceinline__ int subpel_org_x(uint32_t v) { return static_cast<int16_t>(v & 0xffffu); }
__device__ __forceinline__ int subpel_org_y(uint32_t v) { return static_cast<int16_t>(v >> 16); }

__global__ void __launch_bounds__(kSubpelThreads, 3) subpel_table_kernel(const SubpelKernelArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned char* p = smem;
  const auto take = [&p](int bytes) {
    unsigned char* q = p;
    p += bytes;
    return q;
  };
  uint8_t* s_pl = take(kSubpelPlanesBytes);
  int16_t* s_b1 = reinterpret_cast<int16_t*>(take(kSubpelB1Bytes));
  uint16_t* s_res = reinterpret_cast<uint16_t*>(take(kSubpelResBytes));
  uint32_t* s_eorg = reinterpret_cast<uint32_t*>(take(kSubpelEntryOrgBytes));
  uint16_t* s_etask = reinterpret_cast<uint16_t*>(take(kSubpelEntryTaskBytes));
  uint32_t* s_torg = reinterpret_cast<uint32_t*>(take(kSubpelTaskOrgBytes));
  uint8_t* s_tblk = take(kSubpelTaskBlockBytes);
  uint32_t* s_src = reinterpret_cast<uint32_t*>(take(kSubpelSourceBytes));
  int8_t* s_slot = reinterpret_cast<int8_t*>(take(kSubpelSlotBytes));
  uint8_t* s_cur = take(kSubpelCurBytes);
  uint32_t* s_floor = reinterpret_cast<uint32_t*>(take(kSubpelFloorBytes));  // [rank parity][partition]
  uint32_t* s_new = reinterpret_cast<uint32_t*>(take(kSubpelCountBytes));    // [rank]; [kGpuMaxTopK]: tasks

  const int tid = threadIdx.x;
  const int mb = a.mb_first + static_cast<int>(blockIdx.x) / a.blocks_per_mb;
  const int mb_px = (mb % a.mb_width) * 16, mb_py = (mb / a.mb_width) * 16;
  const int rank_first = static_cast<int>(blockIdx.x) % a.blocks_per_mb * a.ranks_per_block;  // this block's ranks
  const int rank_end = min(a.ranks, rank_first + a.ranks_per_block);
  const int entries = rank_end * kSubpelRankEntries;

  s_cur[tid] = a.cur[(mb_py + (tid >> 4)) * a.pitch + mb_px + (tid & 15)];
  if (tid < kSubpelOffsets) {  // tables every lane reads at its own index (not __constant__, which serves one
    s_src[tid] = subpel_sources(tid);  // address at a time)
  } else if (tid >= 64 && tid < 64 + kSubpelOffsets) {
    s_slot[tid - 64] = c_subpel_slots.offset_of_slot[tid - 64];
  } else if (tid >= 128 && tid < 128 + 2 * kNumPartitions) {
    s_floor[tid - 128] = UINT32_MAX;
  } else if (tid >= 224 && tid <= 224 + kGpuMaxTopK) {
    s_new[tid - 224] = 0;
  }
  static_assert(64 + kSubpelOffsets <= 128 && 128 + 2 * kNumPartitions <= 224 && 224 + kGpuMaxTopK < kSubpelThreads,
                "set-up: one item per thread");
  // 0. Every entry's block origin: entry e = rank * 112 + level * 16 + block (the partition level's candidate of
  //    that rank, at that 4x4 block).
  for (int e = rank_first * kSubpelRankEntries + tid; e < entries; e += kSubpelThreads) {
    const int rank = e / kSubpelRankEntries, lb = e - rank * kSubpelRankEntries;
    const int level = lb >> 4, blk = lb & 15, bx = blk & 3, by = blk >> 2;
    const int part = subpel_partition_of(level, bx, by);
    const uint32_t packed = a.cands[(static_cast<size_t>(mb) * kNumPartitions + part) * a.top_k + rank].x;
    const int mvx = static_cast<int16_t>(packed & 0xFFFF), mvy = static_cast<int16_t>(packed >> 16);
    const int x = mb_px + 4 * bx + mvx / 4, y = mb_py + 4 * by + mvy / 4;  // candidates are full-pel: exact
    s_eorg[e] = static_cast<uint32_t>(x & 0xffff) | static_cast<uint32_t>(y & 0xffff) << 16;
  }
  __syncthreads();

  uint32_t floor_all = UINT32_MAX;  // thread tid < 41: partition tid's smallest base over the ranks done
  for (int r0 = rank_first, parity = 0; r0 < rank_end;) {
    //  The group's entries from rank r0 on: each scans the earlier ones of its block (ranks r0 .. its own, coarser
    //  levels first) for its vector; the first found is its representative (bit 15 marks the reference), an entry
    //  without one is a new task of its rank.
    if (tid == 0) s_new[kGpuMaxTopK] = 0;
    for (int e = r0 * kSubpelRankEntries + tid; e < entries; e += kSubpelThreads) {
      const uint32_t org = s_eorg[e];
      const int blk = e & 15;  // kSubpelRankEntries is a multiple of 16
      int rep = e;
      for (int f = r0 * kSubpelRankEntries + blk; f < e; f += 16)
        if (s_eorg[f] == org) {
          rep = f;
          break;
        }
      s_etask[e] = static_cast<uint16_t>(rep == e ? e : (0x8000 | rep));
      if (rep == e) atomicAdd(&s_new[e / kSubpelRankEntries], 1u);
    }
    __syncthreads();
    //  The group: ranks r0 .. r1 - 1, as many as kSubpelTaskCap tasks hold (every thread finds the same r1). Its
    //  representatives take their task slots, then (after the barrier) the other entries their representative's.
    int r1 = r0, tasks = 0;
    while (r1 < rank_end && tasks + static_cast<int>(s_new[r1]) <= kSubpelTaskCap) tasks += static_cast<int>(s_new[r1++]);
    const int group_end = r1 * kSubpelRankEntries;
    for (int e = r0 * kSubpelRankEntries + tid; e < group_end; e += kSubpelThreads)
      if (s_etask[e] == e) {
        const uint32_t t = atomicAdd(&s_new[kGpuMaxTopK], 1u);
        s_torg[t] = s_eorg[e];
        s_tblk[t] = static_cast<uint8_t>(e & 15);
        s_etask[e] = static_cast<uint16_t>(t);
      }
    __syncthreads();
    for (int e = r0 * kSubpelRankEntries + tid; e < group_end; e += kSubpelThreads) {
      const uint16_t v = s_etask[e];
      if (v & 0x8000) s_etask[e] = s_etask[v & 0x7fff];
    }
    if (tid < kGpuMaxTopK) s_new[tid] = 0;  // every thread has read them (r1) before the barrier above
    __syncthreads();

    for (int c0 = 0; c0 < tasks; c0 += kSubpelChunk) {
      const int n = min(kSubpelChunk, tasks - c0);
      // 1. Integer samples raw[r][c] = ref(X - 3 + c, Y - 3 + r), clamped into the picture: a row of a task per
      //    item.
      for (int i = tid; i < n * kSubpelRaw; i += kSubpelThreads) {
        const int t = i / kSubpelRaw, r = i - t * kSubpelRaw;
        const uint32_t org = s_torg[c0 + t];
        int y = subpel_org_y(org) - 3 + r;
        y = y < 0 ? 0 : y >= a.height ? a.height - 1 : y;
        const uint8_t* src = a.ref + static_cast<size_t>(y) * a.pitch;
        uint8_t* dst = s_pl + t * kSubpelPlaneBytes + kSubpelPlaneG + r * kSubpelRaw;
        const int x0 = subpel_org_x(org) - 3;
        if (x0 >= 0 && x0 + kSubpelRaw <= a.width) {
GME_SUBPEL_UNROLL
          for (int c = 0; c < kSubpelRaw; ++c) dst[c] = __ldg(src + x0 + c);
        } else {
          for (int c = 0; c < kSubpelRaw; ++c) {
            const int x = x0 + c;
            dst[c] = src[x < 0 ? 0 : x >= a.width ? a.width - 1 : x];
          }
        }
      }
      __syncthreads();

      // 2a. Region coordinates: G(r, c) = raw[r + 2][c + 2], r, c in 0..5 (the block is rows/columns 1..4).
      //     b1 row rr (region row rr - 2), column c: horizontal taps centred between G columns c and c + 1;
      //     b(r, c) = Clip1((b1 + 16) >> 5) for rows 0..5, columns 0..4: a raw row per item.
      for (int i = tid; i < n * kSubpelRaw; i += kSubpelThreads) {
        const int t = i / kSubpelRaw, rr = i - t * kSubpelRaw;
        const uint8_t* q = s_pl + t * kSubpelPlaneBytes + kSubpelPlaneG + rr * kSubpelRaw;
        int v[kSubpelRaw];
GME_SUBPEL_UNROLL
        for (int c = 0; c < kSubpelRaw; ++c) v[c] = q[c];
        int16_t* b1 = s_b1 + t * 50 + rr * 5;
        uint8_t* b = s_pl + t * kSubpelPlaneBytes + kSubpelPlaneB + (rr - 2) * 5;
GME_SUBPEL_UNROLL
        for (int c = 0; c < 5; ++c) {
          const int tap = subpel_tap6(v[c], v[c + 1], v[c + 2], v[c + 3], v[c + 4], v[c + 5]);
          b1[c] = static_cast<int16_t>(tap);
          if (rr >= 2 && rr < 8) b[c] = static_cast<uint8_t>(subpel_clip_pixel((tap + 16) >> 5));
        }
      }
      //     h(r, c) half-pel below G(r, c), rows 0..4, columns 0..5: a raw column per item.
      for (int i = tid; i < n * 6; i += kSubpelThreads) {
        const int t = i / 6, c = i - t * 6;
        subpel_column_taps(s_pl + t * kSubpelPlaneBytes + kSubpelPlaneG + c + 2, kSubpelRaw,
                           s_pl + t * kSubpelPlaneBytes + kSubpelPlaneH + c, 6, 16, 5);
      }
      __syncthreads();
      // 2b. j(r, c): vertical taps over b1 rows r .. r + 5 (region rows r - 2 .. r + 3), rows and columns 0..4: a b1
      //     column per item.
      for (int i = tid; i < n * 5; i += kSubpelThreads) {
        const int t = i / 5, c = i - t * 5;
        subpel_column_taps(s_b1 + t * 50 + c, 5, s_pl + t * kSubpelPlaneBytes + kSubpelPlaneJ + c, 5, 512, 10);
      }
      __syncthreads();

      // 3. One (task, offset) per item: the prediction (Table 8-12 sample kinds, as SubpelRegion::predict) and its
      //    distortion against the source block. Every sample of the prediction is (A + B + 1) >> 1 of two plane
      //    samples at fixed offsets (A = B for full- and half-pel positions), read through the offset's
      //    SubpelSources.
      for (int i = tid; i < n * kSubpelOffsets; i += kSubpelThreads) {
        const int t = i / kSubpelOffsets, oi = i - t * kSubpelOffsets;
        const uint32_t srcs = s_src[oi];
        const uint8_t* planes = s_pl + t * kSubpelPlaneBytes;
        const uint8_t* pa = planes + (srcs & 0xffu);
        const uint8_t* pb = planes + ((srcs >> 16) & 0xffu);
        const int stride_a = static_cast<int>((srcs >> 8) & 0xffu), stride_b = static_cast<int>(srcs >> 24);
        const int blk = s_tblk[c0 + t];
        const uint32_t* cur = reinterpret_cast<const uint32_t*>(s_cur + (blk >> 2) * 64 + (blk & 3) * 4);
        int d[16];
GME_SUBPEL_UNROLL
        for (int y = 0; y < 4; ++y) {
          const uint32_t c4 = cur[4 * y];
GME_SUBPEL_UNROLL
          for (int x = 0; x < 4; ++x)
            d[4 * y + x] = static_cast<int>((c4 >> (8 * x)) & 0xffu) -
                           ((pa[y * stride_a + x] + pb[y * stride_b + x] + 1) >> 1);
        }
        uint32_t dist = 0;
        if (a.metric == 2) {
          dist = subpel_satd4x4(d);
        } else {
GME_SUBPEL_UNROLL
          for (int k = 0; k < 16; ++k) dist += abs(d[k]);
        }
        s_res[(c0 + t) * kSubpelOffsets + oi] = static_cast<uint16_t>(dist);
      }
      __syncthreads();
    }

    // 4. Rank by rank: partition sums, every (partition, slot) into the planes' space (read no more), and each row's
    //    smallest sum (the table's base for it, this rank's share of the floors).
    uint32_t* s_sum = reinterpret_cast<uint32_t*>(s_pl);  // [partition][slot]
    static_assert(kNumPartitions * kSubpelOffsets * 4 <= kSubpelPlanesBytes, "the sums fit where the planes were");
    for (int rank = r0; rank < r1; ++rank, parity ^= 1) {
      const uint16_t* etask = s_etask + rank * kSubpelRankEntries;
      uint32_t* floor = s_floor + parity * kNumPartitions;
      for (int i = tid; i < kNumPartitions * kSubpelOffsets; i += kSubpelThreads) {
        const int part = i / kSubpelOffsets, slot = i - part * kSubpelOffsets;
        const int oi = s_slot[slot];
        const SubpelRect rect = subpel_rect(part);
        uint32_t sum = 0;
        for (int by = rect.y0; by < rect.y0 + rect.h; ++by)
          for (int bx = rect.x0; bx < rect.x0 + rect.w; ++bx)
            sum += s_res[etask[rect.level * 16 + by * 4 + bx] * kSubpelOffsets + oi];
        s_sum[i] = sum;
        atomicMin(&floor[part], sum);
      }
      __syncthreads();
      //    The table (SubpelTable's layout) a word per item, consecutive words over the threads: each row's base
      //    and near part's excesses, then the far parts' excesses (their rows of 21 bytes straddle words), then the
      //    tail's zeros: every byte that travels to the host is written, so tables compare whole.
      const auto excess = [&](int part, int slot) {
        const uint32_t e = s_sum[part * kSubpelOffsets + slot] - floor[part];
        return e < kSubpelEscape ? e : static_cast<uint32_t>(kSubpelEscape);
      };
      uint32_t* out = reinterpret_cast<uint32_t*>(&a.out[static_cast<size_t>(mb) * a.ranks + rank]);
      static_assert(sizeof(SubpelRow) == 32 && offsetof(SubpelRow, near) == 4 && kSubpelFarOffset % 4 == 0 &&
                        sizeof(SubpelTable) % 4 == 0,
                    "a row is its base's word and 7 words of 4 excesses");
      for (int w = tid; w < static_cast<int>(sizeof(SubpelTable) / 4); w += kSubpelThreads) {
        const int b = 4 * w;
        uint32_t word = 0;
        if (b < kSubpelFarOffset) {
          const int part = b / 32, in_row = b % 32;
          if (in_row == 0) {
            word = floor[part];
          } else {
            const int slot = in_row - 4;
            word = excess(part, slot) | excess(part, slot + 1) << 8 | excess(part, slot + 2) << 16 |
                   excess(part, slot + 3) << 24;
          }
        } else {
GME_SUBPEL_UNROLL
          for (int j = 0; j < 4; ++j) {
            const int f = b + j - kSubpelFarOffset;
            if (f < kNumPartitions * kSubpelFarSlots)
              word |= excess(f / kSubpelFarSlots, kSubpelNearSlots + f % kSubpelFarSlots) << (8 * j);
          }
        }
        out[w] = word;
      }
      //    This rank's bases into the running minimum; the other parity's bases (read before the last barrier)
      //    start again for the next rank.
      if (tid < kNumPartitions) {
        floor_all = min(floor_all, floor[tid]);
        s_floor[(parity ^ 1) * kNumPartitions + tid] = UINT32_MAX;
      }
      __syncthreads();
    }
    r0 = r1;
  }
  // 5. The floors (SubpelFloors): the partition minima over every rank into the macroblock's.
  if (a.floors && tid < kNumPartitions) atomicMin(&a.floors[mb].d[tid], floor_all);
}

}  // namespace
}  // namespace gme
