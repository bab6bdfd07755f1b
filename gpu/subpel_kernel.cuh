// CUDA kernel: the sub-pel distortion tables (me/me_interface.h, SubpelTable) of one reference, computed right
// after the integer search from its candidates. Its plain twin is subpel_tables_twin() (gpu/subpel_twin.cpp);
// tests hold the two bit-exact on the device and, through gpu/kernel_emu.h, on the host.
//
// One block per (macroblock, rank). A partition at offset (ox, oy) is the sum of its 4x4 blocks, so the work is 112
// tasks (7 partition levels x 16 blocks of 4x4), each the 49 offsets around the integer vector its partition's
// candidate of that rank has:
//   1. every task's 10x10 integer samples around its block, coordinates clamped (= unbounded edge replication);
//   2. per task the half-pel planes b (and its unrounded horizontal taps b1), h and j of 8.4.2.2.1, as in the
//      CPU's SubpelRegion: G, b, h, j over the 6x6 region around the block cover every quarter-pel sample within
//      +-3/4 pel, quarter-pel samples being rounded averages of two of them;
//   3. one thread per (task, offset): the 4x4 prediction and its SAD or JM SATD (exactly common/pixel.cpp's);
//   4. one thread per (partition, offset): the sum over the partition's blocks, written to the table.
// Uses only __syncthreads and dynamic shared memory, so gpu/kernel_emu.h runs it unchanged. Include it once per
// translation unit: like gpu/me_cuda_kernel.cuh it defines its contents in an unnamed namespace.
#pragma once
#include <cstdint>

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
constexpr int kSubpelTasks = 7 * 16;  // partition level x 4x4 block
constexpr int kSubpelRaw = 10;        // integer samples per side: X-3 .. X+6 around the block at X

struct SubpelKernelArgs {
  const uint8_t* cur;   // current luma, pitch bytes per row, width x height (coded size, no border)
  const uint8_t* ref;   // reference luma, same layout
  int pitch, width, height;
  int mb_width, mb_first;  // the launch covers macroblocks mb_first .. mb_first + gridDim.x / ranks - 1
  int top_k;
  int ranks;               // tables per macroblock: candidates 0 .. ranks - 1 of every list
  int metric;              // 0 SAD, 2 JM SATD
  const uint2* cands;      // this reference's candidates: (mb * 41 + part) * top_k + i, {MV as 2 x int16, SAD}
  SubpelTable* out;        // this reference's tables, indexed by mb * ranks + rank
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
  return a;
}

// Shared memory layout (bytes), all per task.
constexpr int kSubpelRawBytes = kSubpelTasks * kSubpelRaw * kSubpelRaw;  // uint8 raw[10][10]
constexpr int kSubpelB1Bytes = kSubpelTasks * 10 * 5 * 2;                // int16 b1[10][5]: region rows -2..7
constexpr int kSubpelBBytes = kSubpelTasks * 6 * 5;                      // uint8 b[6][5]
constexpr int kSubpelHBytes = kSubpelTasks * 5 * 6;                      // uint8 h[5][6]
constexpr int kSubpelJBytes = kSubpelTasks * 5 * 5;                      // uint8 j[5][5]
constexpr int kSubpelResBytes = kSubpelTasks * kSubpelOffsets * 2;       // uint16 distortion[49]
constexpr int kSubpelOrgBytes = kSubpelTasks * 8;                        // int32 X, Y
constexpr int kSubpelAliasBytes = kSubpelTasks * 4;                      // int32: task computing the same values
constexpr int kSubpelCurBytes = 256;
constexpr size_t kSubpelSmemBytes = kSubpelRawBytes + kSubpelB1Bytes + kSubpelBBytes + kSubpelHBytes +
                                    kSubpelJBytes + kSubpelResBytes + kSubpelOrgBytes + kSubpelAliasBytes +
                                    kSubpelCurBytes;

// Partition (me_interface.h numbering) of level L (0 16x16, 1 16x8, 2 8x16, 3 8x8, 4 8x4, 5 4x8, 6 4x4) that holds
// 4x4 block (bx, by).
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

__device__ __forceinline__ int subpel_level_of(int part) {
  return part == 0 ? 0 : part <= 2 ? 1 : part <= 4 ? 2 : part <= 8 ? 3 : part <= 16 ? 4 : part <= 24 ? 5 : 6;
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

// Region position (0, 0) of plane `kind` of task t, and its row stride.
__device__ __forceinline__ const uint8_t* subpel_plane(int kind, int t, const uint8_t* s_raw, const uint8_t* s_b,
                                                       const uint8_t* s_h, const uint8_t* s_j, int& stride) {
  switch (kind) {
    case 0: stride = 10; return s_raw + t * 100 + 2 * 10 + 2;  // G(r, c) = raw[r + 2][c + 2]
    case 1: stride = 5; return s_b + t * 30;
    case 2: stride = 6; return s_h + t * 30;
    default: stride = 5; return s_j + t * 25;
  }
}

__global__ void __launch_bounds__(kSubpelThreads, 4) subpel_table_kernel(const SubpelKernelArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  uint8_t* s_raw = smem;
  int16_t* s_b1 = reinterpret_cast<int16_t*>(smem + kSubpelRawBytes);
  uint8_t* s_b = smem + kSubpelRawBytes + kSubpelB1Bytes;
  uint8_t* s_h = s_b + kSubpelBBytes;
  uint8_t* s_j = s_h + kSubpelHBytes;
  uint16_t* s_res = reinterpret_cast<uint16_t*>(s_j + kSubpelJBytes);
  int* s_org = reinterpret_cast<int*>(smem + kSubpelRawBytes + kSubpelB1Bytes + kSubpelBBytes + kSubpelHBytes +
                                      kSubpelJBytes + kSubpelResBytes);
  int* s_alias = s_org + 2 * kSubpelTasks;
  uint8_t* s_cur = reinterpret_cast<uint8_t*>(s_alias + kSubpelTasks);

  const int tid = threadIdx.x;
  const int mb = a.mb_first + static_cast<int>(blockIdx.x) / a.ranks, rank = static_cast<int>(blockIdx.x) % a.ranks;
  const int mb_px = (mb % a.mb_width) * 16, mb_py = (mb / a.mb_width) * 16;

  s_cur[tid] = a.cur[(mb_py + (tid >> 4)) * a.pitch + mb_px + (tid & 15)];
  if (tid < kSubpelTasks) {
    const int level = tid >> 4, blk = tid & 15, bx = blk & 3, by = blk >> 2;
    const int part = subpel_partition_of(level, bx, by);
    const uint32_t packed = a.cands[(static_cast<size_t>(mb) * kNumPartitions + part) * a.top_k + rank].x;
    const int mvx = static_cast<int16_t>(packed & 0xFFFF), mvy = static_cast<int16_t>(packed >> 16);
    s_org[2 * tid] = mb_px + 4 * bx + mvx / 4;  // candidates are full-pel: exact
    s_org[2 * tid + 1] = mb_py + 4 * by + mvy / 4;
  }
  __syncthreads();
  // A block whose partition at a coarser level has the same first candidate has the same 49 values there: only
  // the coarsest level of each (block, vector) is computed (the levels of a macroblock's first candidates mostly
  // agree), the others read it.
  if (tid < kSubpelTasks) {
    int alias = tid;
    for (int t = tid - 16; t >= 0; t -= 16)  // the same block at the levels above
      if (s_org[2 * t] == s_org[2 * tid] && s_org[2 * t + 1] == s_org[2 * tid + 1]) alias = t;
    s_alias[tid] = alias;
  }
  __syncthreads();

  // 1. Integer samples raw[r][c] = ref(X - 3 + c, Y - 3 + r), clamped into the picture.
  for (int i = tid; i < kSubpelRawBytes; i += kSubpelThreads) {
    const int t = i / (kSubpelRaw * kSubpelRaw), rc = i % (kSubpelRaw * kSubpelRaw);
    if (s_alias[t] != t) continue;
    const int r = rc / kSubpelRaw, c = rc % kSubpelRaw;
    int x = s_org[2 * t] - 3 + c, y = s_org[2 * t + 1] - 3 + r;
    x = x < 0 ? 0 : x >= a.width ? a.width - 1 : x;
    y = y < 0 ? 0 : y >= a.height ? a.height - 1 : y;
    s_raw[i] = a.ref[static_cast<size_t>(y) * a.pitch + x];
  }
  __syncthreads();

  // 2a. Region coordinates: G(r, c) = raw[r + 2][c + 2], r, c in 0..5 (the block is rows/columns 1..4).
  //     b1 row rr (region row rr - 2), column c: horizontal taps centred between G columns c and c + 1;
  //     b(r, c) = Clip1((b1 + 16) >> 5) for rows 0..5, columns 0..4; h(r, c) half-pel below G(r, c), rows 0..4,
  //     columns 0..5.
  for (int i = tid; i < kSubpelTasks * 50; i += kSubpelThreads) {
    const int t = i / 50, rr = (i % 50) / 5, c = i % 5;
    if (s_alias[t] != t) continue;
    const uint8_t* p = s_raw + t * 100 + rr * 10 + c;
    const int v = subpel_tap6(p[0], p[1], p[2], p[3], p[4], p[5]);
    s_b1[i] = static_cast<int16_t>(v);
    if (rr >= 2 && rr < 8) s_b[t * 30 + (rr - 2) * 5 + c] = static_cast<uint8_t>(subpel_clip_pixel((v + 16) >> 5));
  }
  for (int i = tid; i < kSubpelTasks * 30; i += kSubpelThreads) {
    const int t = i / 30, r = (i % 30) / 6, c = i % 6;
    if (s_alias[t] != t) continue;
    const uint8_t* p = s_raw + t * 100 + r * 10 + c + 2;
    s_h[i] = static_cast<uint8_t>(subpel_clip_pixel((subpel_tap6(p[0], p[10], p[20], p[30], p[40], p[50]) + 16) >> 5));
  }
  __syncthreads();
  // 2b. j(r, c): vertical taps over b1 rows r - 2 .. r + 3 (b1 rows r .. r + 5), rows and columns 0..4.
  for (int i = tid; i < kSubpelTasks * 25; i += kSubpelThreads) {
    const int t = i / 25, r = (i % 25) / 5, c = i % 5;
    if (s_alias[t] != t) continue;
    const int16_t* p = s_b1 + t * 50 + r * 5 + c;
    s_j[i] = static_cast<uint8_t>(subpel_clip_pixel((subpel_tap6(p[0], p[5], p[10], p[15], p[20], p[25]) + 512) >> 10));
  }
  __syncthreads();

  // 3. One (task, offset) per thread: the prediction (Table 8-12 sample kinds, as SubpelRegion::predict) and its
  //    distortion against the source block.
  for (int i = tid; i < kSubpelTasks * kSubpelOffsets; i += kSubpelThreads) {
    const int t = i / kSubpelOffsets, oi = i % kSubpelOffsets;
    if (s_alias[t] != t) continue;
    const int ox = oi % 7 - 3, oy = oi / 7 - 3;
    const int fx = ox & 3, fy = oy & 3, c0 = (ox >> 2) + 1, r0 = (oy >> 2) + 1;
    // Every sample of the prediction is (A + B + 1) >> 1 of two plane samples at fixed offsets (A = B for full-
    // and half-pel positions), so the sample kind is chosen once per offset and the 16-sample loop is the same
    // for all lanes (a switch per sample would serialise the warp over the 16 kinds its lanes hold).
    int kind_a, dr_a, dc_a, kind_b, dr_b, dc_b;  // kind: 0 G, 1 b, 2 h, 3 j
    subpel_sample_sources(fy * 4 + fx, kind_a, dr_a, dc_a, kind_b, dr_b, dc_b);
    int stride_a, stride_b;
    const uint8_t* pa = subpel_plane(kind_a, t, s_raw, s_b, s_h, s_j, stride_a);
    const uint8_t* pb = subpel_plane(kind_b, t, s_raw, s_b, s_h, s_j, stride_b);
    pa += (r0 + dr_a) * stride_a + c0 + dc_a;
    pb += (r0 + dr_b) * stride_b + c0 + dc_b;
    const int blk = t & 15;
    const uint8_t* src = s_cur + (blk >> 2) * 64 + (blk & 3) * 4;
    int d[16];
GME_SUBPEL_UNROLL
    for (int y = 0; y < 4; ++y)
GME_SUBPEL_UNROLL
      for (int x = 0; x < 4; ++x)
        d[4 * y + x] = static_cast<int>(src[16 * y + x]) -
                       ((pa[y * stride_a + x] + pb[y * stride_b + x] + 1) >> 1);
    uint32_t dist = 0;
    if (a.metric == 2) {
      int m[16];
      for (int y = 0; y < 4; ++y) {  // horizontal butterflies, then vertical, as satd4x4_c
        const int* rw = d + 4 * y;
        const int s01 = rw[0] + rw[1], d01 = rw[0] - rw[1], s23 = rw[2] + rw[3], d23 = rw[2] - rw[3];
        m[4 * y + 0] = s01 + s23; m[4 * y + 1] = s01 - s23; m[4 * y + 2] = d01 - d23; m[4 * y + 3] = d01 + d23;
      }
      for (int x = 0; x < 4; ++x) {
        const int s01 = m[x] + m[4 + x], d01 = m[x] - m[4 + x], s23 = m[8 + x] + m[12 + x], d23 = m[8 + x] - m[12 + x];
        dist += abs(s01 + s23) + abs(s01 - s23) + abs(d01 - d23) + abs(d01 + d23);
      }
      dist = (dist + 1) >> 1;
    } else {
      for (int k = 0; k < 16; ++k) dist += abs(d[k]);
    }
    s_res[i] = static_cast<uint16_t>(dist);
  }
  __syncthreads();

  // 4. Partition sums, in the table's layout: one thread per (partition, row slot), so a warp writes consecutive
  //    slots of a row; padding slots get 0 (every byte that travels to the host was written).
  SubpelTable& out = a.out[static_cast<size_t>(mb) * a.ranks + rank];
  for (int i = tid; i < kNumPartitions * kSubpelRowSlots; i += kSubpelThreads) {
    const int part = i / kSubpelRowSlots, slot = i % kSubpelRowSlots;
    const int oi = c_subpel_slots.offset_of_slot[slot];
    uint32_t sum = 0;
    if (oi >= 0) {
      const int level = subpel_level_of(part);
      for (int blk = 0; blk < 16; ++blk)
        if (subpel_partition_of(level, blk & 3, blk >> 2) == part)
          sum += s_res[s_alias[level * 16 + blk] * kSubpelOffsets + oi];
    }
    if (part == 0) out.d16x16[slot] = sum;
    else out.d[part - 1][slot] = static_cast<uint16_t>(sum);
  }
}

}  // namespace
}  // namespace gme
