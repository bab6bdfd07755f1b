// CUDA picture-level integer motion estimation: for every macroblock, reference and the 41 partitions, the top_k
// window positions by (motion_cost, spiral index), bit-identical to the twin (gpu/me_twin.cpp). doc/GPU.md has
// the measurements behind each choice.
//
// One fused kernel replaces the paper's three (4x4 SADs -> partition tree + penalty -> reductions): intermediate
// SADs never leave shared memory. One block of 128 threads per (macroblock, reference) walks the window in
// batches of 512 positions, the batch holding the window centre first:
//   tile   : the reference rows the batch needs go to shared memory (edge replication by clamping each fetch into
//            the picture, so any window position is valid and only the picture itself lives on the device);
//   stage 1: each thread takes 4 horizontally adjacent positions. Per reference row it reads 5 aligned words once,
//            funnel-shifts them to the 4 offsets and feeds VABSDIFF4 with accumulate (4 absolute differences per
//            instruction) against the current row (one broadcast 16-byte load), so a loaded word serves 4
//            positions. The 16 4x4 SADs of 2 positions are packed as u16 pairs (a 16x16 SAD is at most 65280),
//            so one add builds a partition for 2 positions. All 41 partition SADs go to shared memory with each
//            position's penalty key, (lambda * mv_bits << 17) | spiral;
//   stage 2: 123 threads, 3 per partition, keep a sorted top-K of 64-bit keys in registers: key = penalty key +
//            (SAD << 33) = (cost << 17) | spiral, so one 64-bit comparison orders by (cost, spiral). A 32-bit
//            screen on key >> 33 rejects almost every position before the 64-bit insertion.
// After the window, the 3 lists per partition are merged and decoded back to (mv, SAD). SearchRange 1..128 only
// changes the number of batches and the tile size, not the thread mapping.
#include "gpu/me_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/frame.h"
#include "gpu/me_twin.h"

namespace gme {

namespace {

// ---- Errors and RAII ------------------------------------------------------------------------------------------
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void cuda_check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw CudaError(std::string(what) + ": " + cudaGetErrorString(e) + " (" + file + ":" + std::to_string(line) +
                    ")");
}
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
// Launch configuration errors show at once; execution errors surface at the next synchronising call.
#define CUDA_CHECK_LAUNCH(name) cuda_check(cudaGetLastError(), name, __FILE__, __LINE__)

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { if (p_) cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  // Grows (contents lost) when smaller than n bytes.
  void reserve(size_t n) {
    if (n <= size_) return;
    if (p_) { cudaFree(p_); p_ = nullptr; size_ = 0; }
    CUDA_CHECK(cudaMalloc(&p_, n));
    size_ = n;
  }
  template <typename T> T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
  size_t size_ = 0;
};

// Page-locked host memory: the only kind cudaMemcpyAsync copies without staging it synchronously first.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { if (p_) cudaFreeHost(p_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void reserve(size_t n) {
    if (n <= size_) return;
    if (p_) { cudaFreeHost(p_); p_ = nullptr; size_ = 0; }
    CUDA_CHECK(cudaMallocHost(&p_, n));
    size_ = n;
  }
  template <typename T> T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
  size_t size_ = 0;
};

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

float elapsed_ms(const Event& a, const Event& b) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

// ---- Kernel geometry ------------------------------------------------------------------------------------------
constexpr int kThreads = 128;
constexpr int kGroups = kThreads;         // groups of 4 horizontal positions per batch: one per thread
constexpr int kBatch = 4 * kGroups;       // positions per batch
constexpr int kSlices = 3;                // stage-2 threads per partition: 41 * 3 = 123 of 128
// Words per partition row of packed SAD pairs. 259 = 3 mod 32 puts stage-2 lane t (partition t/3, slice t%3) on
// bank t: conflict-free reads.
constexpr int kSadRow = kBatch / 2 + 3;
// Stage 2 reads whole chunks of 4 pairs per slice, up to kOverread pairs past the batch: rows and penalty arrays
// are padded so those reads stay in bounds, and padded positions carry the invalid penalty key.
constexpr int kOverread = 12;
constexpr int kPenSlots = kBatch + 2 * kOverread;
constexpr int kSadBytes = ((kNumPartitions * kSadRow + kOverread) * 4 + 15) / 16 * 16;
constexpr int kPenBytes = kPenSlots * 8;
constexpr int kHalfBytes = kPenSlots * 4;
constexpr int kCurBytes = 256;
// Penalty key of window slots past the right edge: above any real key even after adding a SAD << 33.
constexpr uint64_t kInvalidPenKey = 0xFFFC000000000000ull;
static_assert(kNumPartitions * kSlices <= kThreads, "stage 2 needs a thread per (partition, slice)");
static_assert(kNumPartitions * kSlices * kGpuMaxTopK * 8 <= kSadBytes, "merge lists reuse the SAD buffer");
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
  g.smem = kSadBytes + kPenBytes + kHalfBytes + kCurBytes + static_cast<size_t>(g.tile_rows) * g.tile_words * 4;
  return g;
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
  uint2* out;                // this reference's candidates: (mv.x | mv.y << 16, sad)
};

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
  uint32_t d;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(acc));
  return d;
}

// Sorted insertion into K registers (constant indices only, so the list never goes to local memory).
template <int K>
__device__ __forceinline__ void insert_key(uint64_t (&best)[K], uint64_t key) {
  if (key < best[K - 1]) {
#pragma unroll
    for (int i = K - 1; i > 0; --i) {
      const uint64_t above = best[i - 1];
      best[i] = key < above ? above : (key < best[i] ? key : best[i]);
    }
    best[0] = key < best[0] ? key : best[0];
  }
}

// The 41 partition SADs of two positions (u16 pairs) from their packed 4x4 SADs, stored at dst[p * kSadRow].
__device__ __forceinline__ void store_partitions(const uint32_t (&q)[16], uint32_t* dst) {
  uint32_t s8[4];
#pragma unroll
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
__global__ void __launch_bounds__(kThreads, 4) integer_search_kernel(const KernelArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  uint32_t* s_sad = reinterpret_cast<uint32_t*>(smem);
  uint64_t* s_pen = reinterpret_cast<uint64_t*>(smem + kSadBytes);
  uint32_t* s_half = reinterpret_cast<uint32_t*>(smem + kSadBytes + kPenBytes);  // penalty key >> 33
  uint32_t* s_cur = reinterpret_cast<uint32_t*>(smem + kSadBytes + kPenBytes + kHalfBytes);
  uint32_t* s_tile = s_cur + kCurBytes / 4;

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
    s_half[kBatch + tid] = static_cast<uint32_t>(kInvalidPenKey >> 33);
  }

  const int part = tid / kSlices, slice = tid - part * kSlices;
  const bool worker = part < kNumPartitions;
  uint64_t best[K];
#pragma unroll
  for (int i = 0; i < K; ++i) best[i] = ~0ull;

  // Batches in order of distance from the window centre: the centre batch first, then alternately below and
  // above. The mv penalty grows away from the centre and good matches cluster near it, so the lists fill with
  // good keys early and later positions rarely pass stage 2's screen. Any order gives the same result (keys are
  // unique, the top-K of a set does not depend on the visiting order).
  const int num_batches = (a.num_groups + kGroups - 1) / kGroups;
  const int centre_batch = min(num_batches - 1, (a.range * a.groups_per_row + a.groups_per_row / 2) / kGroups);
  for (int i = 0; i < 2 * num_batches; ++i) {
    const int batch = centre_batch + ((i & 1) ? (i + 1) / 2 : -(i / 2));
    if (batch < 0 || batch >= num_batches) continue;
    const int g0 = batch * kGroups;
    const int groups = min(kGroups, a.num_groups - g0);
    const int wy_first = g0 / a.groups_per_row;
    const int wy_last = (g0 + groups - 1) / a.groups_per_row;
    const int tile_rows = wy_last - wy_first + 16;
    __syncthreads();  // the previous batch's stage 2 has finished with s_sad, s_pen and the tile

    // Tile word (r, w) = reference bytes x = ox + 4w .. +3 of row oy + wy_first + r, each fetch clamped into the
    // picture: unbounded edge replication, whatever the vector.
    for (int idx = tid; idx < tile_rows * a.tile_words; idx += kThreads) {
      const int r = idx / a.tile_words, w = idx - r * a.tile_words;
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
#pragma unroll
        for (int b = 0; b < 4; ++b) v |= static_cast<uint32_t>(row[min(max(x + b, 0), a.width - 1)]) << (8 * b);
      }
      s_tile[idx] = v;
    }
    __syncthreads();

    // Stage 1: this thread's 4 positions (window x = 4 gx .. 4 gx + 3, window row wy).
    if (tid < groups) {
      const int g = g0 + tid;
      const int wy = g / a.groups_per_row, gx = g - wy * a.groups_per_row;
      const uint32_t* t = s_tile + (wy - wy_first) * a.tile_words + gx;
      uint32_t q01[16], q23[16];  // packed 4x4 SADs (raster block order): positions 0 | 1 << 16, 2 | 3 << 16
#pragma unroll
      for (int by = 0; by < 4; ++by) {
        uint32_t acc[4][4];
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
          for (int bx = 0; bx < 4; ++bx) acc[s][bx] = 0;
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int row = by * 4 + r;
          const uint4 c4 = reinterpret_cast<const uint4*>(s_cur)[row];
          const uint32_t c[4] = {c4.x, c4.y, c4.z, c4.w};
          const uint32_t* tr = t + row * a.tile_words;
          uint32_t w[5];
#pragma unroll
          for (int j = 0; j < 5; ++j) w[j] = tr[j];
#pragma unroll
          for (int s = 0; s < 4; ++s)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[s][j] = sad4_acc(__funnelshift_r(w[j], w[j + 1], 8 * s), c[j], acc[s][j]);
        }
#pragma unroll
        for (int bx = 0; bx < 4; ++bx) {
          q01[by * 4 + bx] = acc[0][bx] | (acc[1][bx] << 16);
          q23[by * 4 + bx] = acc[2][bx] | (acc[3][bx] << 16);
        }
      }
      store_partitions(q01, s_sad + 2 * tid);
      store_partitions(q23, s_sad + 2 * tid + 1);

      const int dy = wy - a.range;
      const int bits_y = se_bits_dev(centre.y + 4 * dy - pred.y);
#pragma unroll
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
        s_half[4 * tid + s] = static_cast<uint32_t>(pen >> 33);
      }
    } else {  // no group here in the last batch: stage 2 may still read these slots
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        s_pen[4 * tid + s] = kInvalidPenKey;
        s_half[4 * tid + s] = static_cast<uint32_t>(kInvalidPenKey >> 33);
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
    {
      const uint32_t* row = s_sad + min(part, kNumPartitions - 1) * kSadRow;
      const uint2* half2 = reinterpret_cast<const uint2*>(s_half);
      const int pairs = 2 * groups;
      uint32_t worst = static_cast<uint32_t>(best[K - 1] >> 33);
      for (int base = slice; base < pairs + slice; base += 4 * kSlices) {  // same trip count in every lane
        uint32_t v[4];
        bool maybe = false;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          v[j] = row[base + j * kSlices];
          const uint2 h = half2[base + j * kSlices];
          maybe |= (h.x + (v[j] & 0xffffu) <= worst) | (h.y + (v[j] >> 16) <= worst);
        }
        if (__any_sync(0xffffffffu, maybe)) {
          // Insert only this lane's passing positions, one at a time (a loop, so the warp pays for the busiest
          // lane's entrants, not for all eight insertions); each is re-read from shared memory by its index.
          uint32_t pass = 0;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const uint2 h = half2[base + j * kSlices];
            pass |= (h.x + (v[j] & 0xffffu) <= worst ? 1u : 0u) << (2 * j);
            pass |= (h.y + (v[j] >> 16) <= worst ? 1u : 0u) << (2 * j + 1);
          }
          while (pass) {
            const int e = __ffs(pass) - 1;
            pass &= pass - 1;
            const int m = base + (e >> 1) * kSlices;
            const uint32_t sad = (e & 1) ? row[m] >> 16 : row[m] & 0xffffu;
            insert_key<K>(best, s_pen[2 * m + (e & 1)] + (static_cast<uint64_t>(sad) << (kLambdaBits + kSpiralBits)));
          }
          worst = static_cast<uint32_t>(best[K - 1] >> 33);
        }
      }
    }
  }

  // Merge the 3 sorted lists of each partition, decode keys back to (mv, SAD).
  __syncthreads();
  uint64_t* s_merge = reinterpret_cast<uint64_t*>(smem);
  if (worker) {
#pragma unroll
    for (int i = 0; i < K; ++i) s_merge[(part * kSlices + slice) * K + i] = best[i];
  }
  __syncthreads();
  if (tid < kNumPartitions) {
    uint64_t fin[K];
#pragma unroll
    for (int i = 0; i < K; ++i) fin[i] = ~0ull;
    for (int j = 0; j < kSlices * K; ++j) insert_key<K>(fin, s_merge[tid * kSlices * K + j]);
    uint2* out = a.out + (static_cast<size_t>(mb) * kNumPartitions + tid) * K;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      int dx, dy;
      spiral_offset_dev(static_cast<int>(fin[i] & ((1u << kSpiralBits) - 1)), dx, dy);
      const int mvx = centre.x + 4 * dx, mvy = centre.y + 4 * dy;
      const uint64_t pen =
          static_cast<uint64_t>(a.lambda) * static_cast<uint64_t>(se_bits_dev(mvx - pred.x) + se_bits_dev(mvy - pred.y));
      const uint32_t sad = static_cast<uint32_t>(((fin[i] >> kSpiralBits) - pen) >> kLambdaBits);
      out[i] = make_uint2((static_cast<uint32_t>(mvx) & 0xffffu) | (static_cast<uint32_t>(mvy) << 16), sad);
    }
  }
}

using KernelFn = void (*)(KernelArgs);
const KernelFn kKernels[kGpuMaxTopK] = {
    integer_search_kernel<1>,  integer_search_kernel<2>,  integer_search_kernel<3>,  integer_search_kernel<4>,
    integer_search_kernel<5>,  integer_search_kernel<6>,  integer_search_kernel<7>,  integer_search_kernel<8>,
    integer_search_kernel<9>,  integer_search_kernel<10>, integer_search_kernel<11>, integer_search_kernel<12>,
    integer_search_kernel<13>, integer_search_kernel<14>, integer_search_kernel<15>, integer_search_kernel<16>};

// ---- Host side ----------------------------------------------------------------------------------------------
// Pipelining: the picture is cut into bands of macroblock rows. Uploads go band by band on one copy stream; each
// (reference, band) kernel runs on one of kStreams compute streams as soon as the rows it reads have arrived, and
// its candidates are downloaded on that stream while other bands still compute. The host copies each band's
// candidates out as they land. Without pipelining (for kernel-only timing) one kernel per reference runs after
// all uploads, on one stream.
constexpr int kStreams = 4;
constexpr int kBands = 8;

class CudaSearch final : public GpuPictureSearch {
 public:
  explicit CudaSearch(int device);
  void search(const PictureSearchRequest& req, PictureCandidates& out) override;
  const char* name() const override { return name_.c_str(); }
  GpuSearchTiming last_timing() const override { return timing_; }
  double peak_absdiff_per_s() const override { return peak_; }
  std::string device_description() const override { return desc_; }
  void set_pipelined(bool on) override { pipelined_ = on; }

 private:
  // A picture kept on the device (luma, no border), found again by its content id.
  struct Resident {
    int id = -1;
    int width = 0, height = 0;
    uint64_t last_use = 0;
    DeviceBuffer pixels;
    PinnedBuffer staging;
  };
  struct Pending {  // a picture to send in this call
    Resident* dst;
    const Plane* src;
  };

  void search_on_device(const PictureSearchRequest& req, PictureCandidates& out);
  Resident* acquire(const Plane& plane, int id, const std::vector<Resident*>& in_use, size_t max_resident,
                    std::vector<Pending>& pending);
  static const Event& pool_event(std::vector<std::unique_ptr<Event>>& pool, size_t i);

  int device_ = 0;
  std::string name_, desc_;
  double peak_ = 0;
  bool pipelined_ = true;
  Stream copy_;
  Stream compute_[kStreams];
  Event ev_start_, ev_params_, ev_kernel_start_, ev_kernel_end_;
  std::vector<std::unique_ptr<Event>> upload_ev_, done_ev_;
  std::vector<std::unique_ptr<Resident>> resident_;
  DeviceBuffer d_params_, d_out_;
  PinnedBuffer h_params_, h_out_;
  uint64_t clock_ = 0;
  TwinPictureSearch twin_;  // top_k above kGpuMaxTopK, and everything after a device failure
  bool failed_ = false;
  GpuSearchTiming timing_;
};

CudaSearch::CudaSearch(int device) : device_(device) {
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (prop.major < 9)
    throw CudaError("device " + std::to_string(device) + " (" + prop.name + ") has compute capability " +
                    std::to_string(prop.major) + "." + std::to_string(prop.minor) + "; built for sm_90 and newer");
  int clock_khz = 0, driver = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  name_ = std::string("cuda:") + prop.name;
  // Each SM issues 64 int32 lane operations per clock (4 sub-partitions x 16); one VABSDIFF4 does 4 differences.
  peak_ = static_cast<double>(prop.multiProcessorCount) * 64 * 4 * clock_khz * 1e3;
  desc_ = std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
          std::to_string(clock_khz / 1000) + " MHz, driver API " + std::to_string(driver / 1000) + "." +
          std::to_string(driver % 1000 / 10);
  // Every kernel image must load on this device, and the largest window needs more than 48 KB of shared memory.
  size_t smem = 0;
  for (int range = 1; range <= 128; ++range) smem = std::max(smem, geometry(range).smem);
  if (smem > prop.sharedMemPerBlockOptin)
    throw CudaError("device " + std::string(prop.name) + " offers " + std::to_string(prop.sharedMemPerBlockOptin) +
                    " bytes of shared memory per block, " + std::to_string(smem) + " needed");
  for (KernelFn k : kKernels) {
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, k));
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  }
}

const Event& CudaSearch::pool_event(std::vector<std::unique_ptr<Event>>& pool, size_t i) {
  while (pool.size() <= i) pool.push_back(std::make_unique<Event>());
  return *pool[i];
}

CudaSearch::Resident* CudaSearch::acquire(const Plane& plane, int id, const std::vector<Resident*>& in_use,
                                          size_t max_resident, std::vector<Pending>& pending) {
  if (id >= 0) {
    for (auto& r : resident_) {
      if (r->id == id && r->width == plane.width && r->height == plane.height) {
        r->last_use = ++clock_;
        ++timing_.pictures_reused;
        return r.get();
      }
      if (r->id == id) r->id = -1;  // same id, other size: stale
    }
  }
  Resident* victim = nullptr;
  if (resident_.size() < max_resident) {
    resident_.push_back(std::make_unique<Resident>());
    victim = resident_.back().get();
  } else {
    for (auto& r : resident_) {  // least recently used among those this call does not need
      if (std::find(in_use.begin(), in_use.end(), r.get()) != in_use.end()) continue;
      if (!victim || r->last_use < victim->last_use) victim = r.get();
    }
  }
  const size_t bytes = static_cast<size_t>(plane.width) * plane.height;
  victim->pixels.reserve(bytes);
  victim->staging.reserve(bytes);
  victim->width = plane.width;
  victim->height = plane.height;
  victim->id = id;
  victim->last_use = ++clock_;
  pending.push_back({victim, &plane});
  timing_.uploaded_bytes += static_cast<int64_t>(bytes);
  ++timing_.pictures_uploaded;
  return victim;
}

void CudaSearch::search(const PictureSearchRequest& req, PictureCandidates& out) {
  check_search_request(req);  // bad requests throw std::invalid_argument on either path
  if (failed_ || req.top_k > kGpuMaxTopK) {
    twin_.search(req, out);
    return;
  }
  try {
    search_on_device(req, out);
  } catch (const CudaError& e) {
    // The GPU went away mid-run: warn once, and give the same candidates from the twin from now on.
    std::fprintf(stderr, "gme: CUDA integer search failed (%s); using the CPU twin from now on\n", e.what());
    failed_ = true;
    name_ = "cpu-twin";
    twin_.search(req, out);
  }
}

void CudaSearch::search_on_device(const PictureSearchRequest& req, PictureCandidates& out) {
  CUDA_CHECK(cudaSetDevice(device_));
  timing_ = GpuSearchTiming{};
  const int num_refs = static_cast<int>(req.refs.size());
  const int num_mbs = req.mb_width * req.mb_height;
  const int k = req.top_k;
  const size_t per_mb = static_cast<size_t>(kNumPartitions) * k;  // candidates per (ref, mb)
  // resize() clears every candidate; skip that pass over memory when the shape is already right. A zero_copy answer
  // needs no `data` at all: the view into h_out_ is set once every band has landed.
  out.view = nullptr;
  if (req.zero_copy) {
    out.num_refs = num_refs;
    out.num_mbs = num_mbs;
    out.top_k = k;
    out.data.clear();
  } else if (out.num_refs != num_refs || out.num_mbs != num_mbs || out.top_k != k ||
             out.data.size() != static_cast<size_t>(num_refs) * num_mbs * per_mb) {
    out.resize(num_refs, num_mbs, k);
  }
  if (num_refs == 0) return;

  CUDA_CHECK(cudaEventRecord(ev_start_.get(), copy_.get()));
  // Which pictures must travel: those not resident under their id (the current one first: every kernel reads it).
  std::vector<Resident*> in_use;
  std::vector<Pending> pending;
  const size_t max_resident = static_cast<size_t>(num_refs) + 2;
  in_use.push_back(acquire(*req.cur, req.cur_id, in_use, max_resident, pending));
  for (int r = 0; r < num_refs; ++r)
    in_use.push_back(acquire(*req.refs[r], req.ref_ids.empty() ? -1 : req.ref_ids[r], in_use, max_resident, pending));

  // Window centres and penalty predictors, ref-major as in the request (small: sent first, on the copy stream).
  const size_t n = static_cast<size_t>(num_refs) * num_mbs;
  static_assert(sizeof(MV) == sizeof(short2), "MV is uploaded as short2");
  h_params_.reserve(2 * n * sizeof(MV));
  d_params_.reserve(2 * n * sizeof(MV));
  std::memcpy(h_params_.as<MV>(), req.centre.data(), n * sizeof(MV));
  std::memcpy(h_params_.as<MV>() + n, req.penalty_pred.data(), n * sizeof(MV));
  CUDA_CHECK(cudaMemcpyAsync(d_params_.as<void>(), h_params_.as<void>(), 2 * n * sizeof(MV),
                             cudaMemcpyHostToDevice, copy_.get()));
  CUDA_CHECK(cudaEventRecord(ev_params_.get(), copy_.get()));
  const size_t out_bytes = out.size() * sizeof(Candidate);
  d_out_.reserve(out_bytes);
  h_out_.reserve(out_bytes);

  // Bands of macroblock rows; upload chunk u carries pixel rows [u * band_px, (u + 1) * band_px) of every pending
  // picture, so a band's kernel needs chunks up to the one holding the lowest reference row its window reads.
  const int height = req.cur->height, width = req.cur->width;
  const int band_mbs = pipelined_ ? (req.mb_height + kBands - 1) / kBands : req.mb_height;
  const int bands = (req.mb_height + band_mbs - 1) / band_mbs;
  const int band_px = 16 * band_mbs;
  const int streams = pipelined_ ? kStreams : 1;
  struct Launch { int ref, band, chunk; };
  std::vector<Launch> launches;
  for (int r = 0; r < num_refs; ++r)
    for (int b = 0; b < bands; ++b) {
      const int row0 = b * band_mbs, row1 = std::min(req.mb_height, row0 + band_mbs);
      int max_cy = INT_MIN;
      for (int mb = row0 * req.mb_width; mb < row1 * req.mb_width; ++mb)
        max_cy = std::max(max_cy, req.centre[static_cast<size_t>(r) * num_mbs + mb].y / 4);
      const int lowest = std::min(height - 1, std::max(16 * row1 - 1, 16 * row1 - 1 + max_cy + req.search_range));
      launches.push_back({r, b, pipelined_ ? lowest / band_px : bands - 1});
    }
  std::stable_sort(launches.begin(), launches.end(), [](const Launch& x, const Launch& y) { return x.chunk < y.chunk; });

  const Geometry g = geometry(req.search_range);
  size_t next = 0;
  auto launch_ready = [&](int chunks_sent) {
    for (; next < launches.size() && (pending.empty() || launches[next].chunk < chunks_sent); ++next) {
      const Launch& l = launches[next];
      cudaStream_t st = compute_[next % streams].get();
      // Upload events come after the parameters on the copy stream, so either wait covers them.
      CUDA_CHECK(cudaStreamWaitEvent(st, pending.empty() ? ev_params_.get() : pool_event(upload_ev_, l.chunk).get(), 0));
      if (next == 0) CUDA_CHECK(cudaEventRecord(ev_kernel_start_.get(), st));
      const int row0 = l.band * band_mbs, row1 = std::min(req.mb_height, row0 + band_mbs);
      KernelArgs a;
      a.cur = in_use[0]->pixels.as<uint8_t>();
      a.ref = in_use[1 + l.ref]->pixels.as<uint8_t>();
      a.pitch = width;
      a.width = width;
      a.height = height;
      a.mb_width = req.mb_width;
      a.mb_first = row0 * req.mb_width;
      a.range = req.search_range;
      a.win = g.win;
      a.groups_per_row = g.groups_per_row;
      a.num_groups = g.num_groups;
      a.tile_words = g.tile_words;
      a.lambda = req.lambda_factor;
      a.centre = d_params_.as<short2>() + static_cast<size_t>(l.ref) * num_mbs;
      a.pred = d_params_.as<short2>() + n + static_cast<size_t>(l.ref) * num_mbs;
      a.out = d_out_.as<uint2>() + static_cast<size_t>(l.ref) * num_mbs * per_mb;
      const int blocks = (row1 - row0) * req.mb_width;
      kKernels[k - 1]<<<blocks, kThreads, g.smem, st>>>(a);
      CUDA_CHECK_LAUNCH("integer_search_kernel");
      if (pipelined_) {
        const size_t off = (static_cast<size_t>(l.ref) * num_mbs + a.mb_first) * per_mb * sizeof(Candidate);
        CUDA_CHECK(cudaMemcpyAsync(h_out_.as<uint8_t>() + off, d_out_.as<uint8_t>() + off,
                                   blocks * per_mb * sizeof(Candidate), cudaMemcpyDeviceToHost, st));
        CUDA_CHECK(cudaEventRecord(pool_event(done_ev_, next).get(), st));
      }
    }
  };
  if (pending.empty()) {
    // Everything resident: the parameters are the only upload.
    launch_ready(0);
  } else {
    for (int u = 0; u < bands; ++u) {
      // Strip the border into page-locked memory and send at once: the host copy of the next chunk overlaps this
      // chunk's DMA, and the kernels of earlier bands.
      const int y0 = u * band_px, rows = std::min(band_px, height - y0);
      for (const Pending& p : pending) {
        uint8_t* dst = p.dst->staging.as<uint8_t>() + static_cast<size_t>(y0) * width;
        for (int y = 0; y < rows; ++y) std::memcpy(dst + static_cast<size_t>(y) * width, p.src->row(y0 + y), width);
        CUDA_CHECK(cudaMemcpyAsync(p.dst->pixels.as<uint8_t>() + static_cast<size_t>(y0) * width, dst,
                                   static_cast<size_t>(rows) * width, cudaMemcpyHostToDevice, copy_.get()));
      }
      CUDA_CHECK(cudaEventRecord(pool_event(upload_ev_, u).get(), copy_.get()));
      launch_ready(u + 1);
    }
  }
  if (pipelined_) {
    for (size_t i = 0; i < launches.size(); ++i) {
      CUDA_CHECK(cudaEventSynchronize(pool_event(done_ev_, i).get()));
      if (req.zero_copy) continue;
      const Launch& l = launches[i];
      const int row0 = l.band * band_mbs, row1 = std::min(req.mb_height, row0 + band_mbs);
      const size_t first = (static_cast<size_t>(l.ref) * num_mbs + static_cast<size_t>(row0) * req.mb_width) * per_mb;
      std::memcpy(out.data.data() + first, h_out_.as<Candidate>() + first,
                  static_cast<size_t>(row1 - row0) * req.mb_width * per_mb * sizeof(Candidate));
    }
    float last = 0;  // bands finish out of order: the call ends with the latest
    for (size_t i = 0; i < launches.size(); ++i) last = std::max(last, elapsed_ms(ev_start_, pool_event(done_ev_, i)));
    timing_.total_ms = last;
  } else {
    cudaStream_t st = compute_[0].get();
    CUDA_CHECK(cudaEventRecord(ev_kernel_end_.get(), st));
    CUDA_CHECK(cudaMemcpyAsync(h_out_.as<void>(), d_out_.as<void>(), out_bytes, cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaEventRecord(pool_event(done_ev_, 0).get(), st));
    CUDA_CHECK(cudaEventSynchronize(pool_event(done_ev_, 0).get()));
    if (!req.zero_copy) std::memcpy(out.data.data(), h_out_.as<void>(), out_bytes);
    timing_.kernel_ms = elapsed_ms(ev_kernel_start_, ev_kernel_end_);
    timing_.total_ms = elapsed_ms(ev_start_, pool_event(done_ev_, 0));
  }
  if (!pending.empty()) timing_.upload_ms = elapsed_ms(ev_start_, pool_event(upload_ev_, bands - 1));
  if (req.zero_copy) out.view = h_out_.as<Candidate>();
}

}  // namespace

std::unique_ptr<GpuPictureSearch> create_cuda_search(int device, std::string* why) {
  try {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      if (why) *why = std::string("no CUDA device: ") + cudaGetErrorString(e);
      cudaGetLastError();  // clear the sticky-free error so later runtime calls start clean
      return nullptr;
    }
    if (count == 0) {
      if (why) *why = "no CUDA device found";
      return nullptr;
    }
    if (device < 0 || device >= count) {
      if (why) *why = "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                      " found)";
      return nullptr;
    }
    CUDA_CHECK(cudaSetDevice(device));
    auto s = std::make_unique<CudaSearch>(device);
    if (why) why->clear();
    return s;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace gme
