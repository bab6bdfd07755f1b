// CUDA picture-level integer motion estimation: for every macroblock, reference and the 41 partitions, the top_k
// window positions by (motion_cost, spiral index), bit-identical to the twin (gpu/me_twin.cpp). doc/GPU.md has
// the measurements behind each choice. The kernel itself is in gpu/me_cuda_kernel.cuh.
//
// One fused kernel replaces the paper's three (4x4 SADs -> partition tree + penalty -> reductions): intermediate
// SADs never leave shared memory. One block of 128 threads per (macroblock, reference) walks the window in
// batches of 384 positions (kBatch, v13), the batch holding the window centre first:
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
//            screen on key >> 33 rejects almost every position before the 64-bit insertion; the screen's bound is
//            shared by a partition's 3 lists across batches, a batch's steps are visited centre-out, and entrants
//            are queued per lane and inserted by the whole warp together (v9, v10 in doc/GPU.md).
// After the window, the 3 lists per partition are merged and decoded back to (mv, SAD). SearchRange 1..128 only
// changes the number of batches and the tile size, not the thread mapping.
#include "gpu/me_cuda.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/copy_rows.h"
#include "common/frame.h"
#include "gpu/me_cuda_kernel.cuh"  // kernel, geometry, KernelArgs (also compiled on the host by tests)
#include "gpu/me_twin.h"
#include "gpu/subpel_kernel.cuh"  // sub-pel tables (also compiled on the host by tests)

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
// Buffers of kHugeMin bytes or more (the candidates, 3 MB at 640x480 K = 8, and the sub-pel tables, 52 MB) are
// read by the macroblock loop at scattered places, one partition's row per query: with 4 KB pages each macroblock's
// tables span 11 pages and a picture's 12,600, far beyond the TLB. They are mapped with transparent huge pages
// where the kernel offers them (madvise; 2 MB pages) and then page-locked with cudaHostRegister; anything that
// fails there falls back to cudaMallocHost (same bytes, 4 KB pages).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void reserve(size_t n) {
    if (n <= size_) return;
    release();
    if (n < kHugeMin || !map_huge(n)) {
      CUDA_CHECK(cudaMallocHost(&p_, n));
      size_ = n;
    }
    // Page-locked memory is mapped into the device's address space (unified addressing): kernels can write it.
    CUDA_CHECK(cudaHostGetDevicePointer(&device_, p_, 0));
  }
  template <typename T> T* as() const { return static_cast<T*>(p_); }
  template <typename T> T* device_as() const { return static_cast<T*>(device_); }

 private:
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kHugeMin = size_t{2} << 20;
  bool map_huge(size_t n) {
    const size_t len = (n + kHugePage - 1) / kHugePage * kHugePage;
    // Over-map by one huge page so the buffer can start on a 2 MB boundary.
    void* raw = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return false;
    const uintptr_t base = (reinterpret_cast<uintptr_t>(raw) + kHugePage - 1) & ~(kHugePage - 1);
    void* p = reinterpret_cast<void*>(base);
    madvise(p, len, MADV_HUGEPAGE);  // a hint: without THP the pages stay 4 KB, which is still correct
    if (cudaHostRegister(p, len, cudaHostRegisterDefault) != cudaSuccess) {
      cudaGetLastError();  // clear the error: the fallback is ordinary
      munmap(raw, len + kHugePage);
      return false;
    }
    p_ = p;
    size_ = n;
    map_ = raw;
    map_len_ = len + kHugePage;
    if (std::getenv("GME_CUDA_TRACE")) {  // whether the kernel gave huge pages (AnonHugePages of the process)
      std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
      char line[256];
      while (f && std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "AnonHugePages:", 14) == 0)
          std::fprintf(stderr, "gme: pinned %zu MB on huge pages where offered; process %s", n >> 20, line);
      if (f) std::fclose(f);
    }
    return true;
  }
  void release() {
    if (map_) {
      cudaHostUnregister(p_);
      munmap(map_, map_len_);
    } else if (p_) {
      cudaFreeHost(p_);
    }
    p_ = map_ = device_ = nullptr;
    size_ = map_len_ = 0;
  }
  void* p_ = nullptr;
  void* device_ = nullptr;  // p_ as kernels address it
  size_t size_ = 0;
  void* map_ = nullptr;  // the mmap'd region holding p_ (huge-page buffers), or nullptr (cudaMallocHost)
  size_t map_len_ = 0;
};

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  struct Urgent {};  // the device's greatest priority: its blocks are dispatched before other streams' waiting ones
  explicit Stream(Urgent) {
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, greatest));
  }
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
  explicit Event(unsigned flags) { CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// GME_CUDA_TRACE=1: the start-up steps' times on stderr (what an encode's first P picture waits for).
class StartupTrace {
 public:
  StartupTrace() : on_(std::getenv("GME_CUDA_TRACE") != nullptr), t_(std::chrono::steady_clock::now()) {}
  void step(const char* what) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "gme: CUDA start-up: %-40s %8.1f ms\n", what,
                 std::chrono::duration<double, std::milli>(now - t_).count());
    t_ = now;
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point t_;
};

float elapsed_ms(const Event& a, const Event& b) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
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
// Build-time overrides, for measuring other pipelines (tools/bench_gpu.sh).
#ifndef GME_CUDA_BANDS
#define GME_CUDA_BANDS 8
#endif
#ifndef GME_CUDA_BAND_MBS
#define GME_CUDA_BAND_MBS 300
#endif
#ifndef GME_CUDA_STREAMS
#define GME_CUDA_STREAMS 8
#endif
constexpr int kStreams = GME_CUDA_STREAMS;  // 8: 1080p's 8 bands never queue behind one another (-0.02 ms)
constexpr int kBands = GME_CUDA_BANDS;  // at most
// Each band is a launch whose last blocks leave SMs idle while other bands' blocks are still queued behind earlier
// ones on the same stream: small pictures lose more to that than they gain from starting before the whole upload
// (measured on the H100, 640x480: 8 bands 0.32-0.35 ms, 4 bands 0.30-0.31 ms per picture in the encoder's steady
// state; 1080p: 4 bands 0.1 ms slower than 8). So a band has at least kBandMbs macroblocks, and there are 2 bands
// at least (the first starts on the first chunk of the upload).
constexpr int kBandMbs = GME_CUDA_BAND_MBS;
int bands_for(int num_mbs) { return kBandMbs > 0 ? std::clamp(num_mbs / kBandMbs, 2, kBands) : kBands; }
// Where equal bands would be large (more than kFirstBandSplitMbs macroblocks each), the first band is a fraction of
// the others (1 / kFirstBandDiv of their rows, one row at least): its kernel starts as soon as its rows are staged,
// and the GPU fills while the host stages the next band. Measured on the H100 (RESULTS.md, eighth session): at
// 1080p (8 bands of 1020 macroblocks) the split took 0.03 ms off the picture; at 640x480 (4 bands of 300) it added
// 0.01-0.02 ms at K = 1 (the 10-row bands end later) and nothing at K = 8, hence the size rule.
#ifndef GME_CUDA_FIRST_BAND_DIV
#define GME_CUDA_FIRST_BAND_DIV 3
#endif
#ifndef GME_CUDA_FIRST_BAND_SPLIT_MBS
#define GME_CUDA_FIRST_BAND_SPLIT_MBS 600
#endif
constexpr int kFirstBandDiv = GME_CUDA_FIRST_BAND_DIV;
constexpr int kFirstBandSplitMbs = GME_CUDA_FIRST_BAND_SPLIT_MBS;
// Macroblock row where each of `bands` bands starts, and mb_height at the end.
std::vector<int> band_starts(int mb_width, int mb_height, int bands) {
  std::vector<int> start = {0};
  if (bands > 1) {
    const int equal = (mb_height + bands - 1) / bands;
    const int first = equal * mb_width > kFirstBandSplitMbs ? std::max(1, equal / kFirstBandDiv) : equal;
    start.push_back(std::min(mb_height, first));
    const int rest = (mb_height - start.back() + bands - 2) / (bands - 1);
    while (start.back() < mb_height) start.push_back(std::min(mb_height, start.back() + std::max(1, rest)));
  } else {
    start.push_back(mb_height);
  }
  return start;
}
// The band holding macroblock row `row` (band_starts' layout).
int band_of_row(const std::vector<int>& start, int row) {
  return static_cast<int>(std::upper_bound(start.begin(), start.end(), row) - start.begin()) - 1;
}

class CudaSearch final : public GpuPictureSearch {
 public:
  CudaSearch(int device, StartupTrace& trace);
  ~CudaSearch() override {
    cudaDeviceSynchronize();  // no DMA (a call in flight, a preload) into or out of buffers about to be freed
  }
  void search(const PictureSearchRequest& req, PictureCandidates& out) override;
  const char* name() const override { return name_.c_str(); }
  bool runs_beside_cpu() const override { return true; }
  GpuSearchTiming last_timing() const override { return timing_; }
  double peak_absdiff_per_s() const override { return peak_; }
  std::string device_description() const override { return desc_; }
  void set_pipelined(bool on) override { pipelined_ = on; }
  void set_direct_candidates(bool on) override { direct_ = on; }
  int wait_rows(int rows) override;
  void preload(const Plane& plane, int id) override;

 private:
  // A picture kept on the device (luma, no border), found again by its content id.
  struct Resident {
    int id = -1;
    int width = 0, height = 0;
    uint64_t last_use = 0;
    DeviceBuffer pixels;
    PinnedBuffer staging;
    Event landed;          // recorded after a preload()'s copy
    bool landing = false;  // a preload()'s copy may still be under way: wait for `landed` before use or reuse
  };
  struct Pending {  // a picture to send in this call
    Resident* dst;
    const Plane* src;
  };
  struct Launch { int ref, band, chunk; };  // one (reference, band of macroblock rows) kernel
  // The call whose bands may still be landing (a progressive answer): what wait_rows() and the next search()
  // complete. The request is kept for the twin, should the device fail before every row has landed.
  struct InFlight {
    bool active = false;
    std::vector<Launch> launches;
    std::vector<int> band_start;  // band_starts()
    int bands = 0, mb_height = 0, ready_rows = 0;
    bool tables = false, uploaded = false;
    PictureSearchRequest req;
    PictureCandidates* out = nullptr;
  };

  void search_on_device(const PictureSearchRequest& req, PictureCandidates& out);
  // Waits for the bands holding rows [0, rows) of the call in flight (throws CudaError); the whole call: timings.
  void complete_rows(int rows);
  // Completes the call in flight without touching its answer (whose owner may be gone): for the next search().
  void drain();
  // After a CUDA error: warns, and switches this object to the twin for good.
  void fall_back(const std::exception& e);
  Resident* acquire(const Plane& plane, int id, const std::vector<Resident*>& in_use, size_t max_resident,
                    std::vector<Pending>& pending);
  // Waits until a preload()'s copy out of r's staging buffer has finished (the host is about to refill the buffer,
  // or kernels on other streams are about to read r's pixels). Sent a picture's bookkeeping ago: rarely waits.
  static void settle(Resident& r);
  // Copies rows [y0, y0 + rows) of `src` into r's page-locked staging buffer, without the plane's border; then
  // send_rows() queues their DMA to r's device copy on the copy stream.
  static void stage_rows(Resident& r, const Plane& src, int y0, int rows);
  void send_rows(Resident& r, int y0, int rows);
  static const Event& pool_event(std::vector<std::unique_ptr<Event>>& pool, size_t i,
                                 unsigned flags = cudaEventDefault);
  // A band's completion, never timed: without a timestamp the event is cheaper to record, and the host records
  // one per band launch between staging the bands (measured with the deferred send below: -0.003 ms per picture).
  static const Event& done_event(std::vector<std::unique_ptr<Event>>& pool, size_t i) {
    return pool_event(pool, i, cudaEventDisableTiming);
  }

  int device_ = 0;
  std::string name_, desc_;
  double peak_ = 0;
  bool pipelined_ = true;
  bool direct_ = true;  // kernels write the host's candidates themselves (no download per band)
  Stream copy_;
  Stream compute_[kStreams];
  Event ev_start_, ev_params_, ev_kernel_start_, ev_kernel_end_;
  Stream join_;  // waits for every launch of a pipelined call, then records ev_end_
  Event ev_end_;
  Stream table_[kStreams];  // sub-pel tables: a band's table starts as soon as its own integer kernel ends
  // Band 0 (integer kernel and tables) on streams of the greatest priority: a progressive answer's macroblock loop
  // waits for it alone, while the other bands have the loop's whole duration to land.
  Stream first_{Stream::Urgent{}}, first_table_{Stream::Urgent{}};
  std::vector<std::unique_ptr<Event>> upload_ev_, done_ev_, kernel_ev_;
  std::vector<std::unique_ptr<Resident>> resident_;
  DeviceBuffer d_params_, d_out_, d_order_, d_tab_;
  PinnedBuffer h_params_, h_out_, h_order_, h_tab_;
  Event ev_uploaded_;
  std::vector<std::unique_ptr<Event>> tab_ev_;
  int order_range_ = 0;  // the search range d_order_ holds the step order of (0: none yet)
  uint64_t clock_ = 0;
  TwinPictureSearch twin_;  // top_k above kGpuMaxTopK, and everything after a device failure
  bool failed_ = false;
  GpuSearchTiming timing_;
  InFlight fly_;
};

CudaSearch::CudaSearch(int device, StartupTrace& trace) : device_(device) {
  trace.step("streams and events");
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
  trace.step("device properties");
  for (KernelFn k : kKernels) {
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, k));
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  }
  CUDA_CHECK(cudaFuncSetAttribute(subpel_table_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kSubpelSmemBytes)));
  trace.step("kernel images (17) loaded");
}

const Event& CudaSearch::pool_event(std::vector<std::unique_ptr<Event>>& pool, size_t i, unsigned flags) {
  while (pool.size() <= i) pool.push_back(std::make_unique<Event>(flags));
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
  settle(*victim);  // its staging buffer is about to be refilled
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

void CudaSearch::settle(Resident& r) {
  if (!r.landing) return;
  CUDA_CHECK(cudaEventSynchronize(r.landed.get()));
  r.landing = false;
}

void CudaSearch::stage_rows(Resident& r, const Plane& src, int y0, int rows) {
  copy_rows(r.staging.as<uint8_t>() + static_cast<size_t>(y0) * r.width, r.width, src.row(y0), src.stride, r.width, rows);
}

void CudaSearch::send_rows(Resident& r, int y0, int rows) {
  const size_t off = static_cast<size_t>(y0) * r.width;
  CUDA_CHECK(cudaMemcpyAsync(r.pixels.as<uint8_t>() + off, r.staging.as<uint8_t>() + off,
                             static_cast<size_t>(rows) * r.width, cudaMemcpyHostToDevice, copy_.get()));
}

void CudaSearch::preload(const Plane& plane, int id) {
  if (failed_ || id < 0) return;
  try {
    drain();  // a call in flight may read any resident picture
    if (failed_) return;
    CUDA_CHECK(cudaSetDevice(device_));
    std::vector<Resident*> none;
    std::vector<Pending> pending;
    // Room for one picture more than the pictures held (3 at least: a call's current picture and reference, and
    // this one); otherwise the least recently used goes, which after a search is that call's current picture.
    Resident* r = acquire(plane, id, none, std::max<size_t>(resident_.size(), 3), pending);
    if (pending.empty()) return;  // already on the device under this id
    stage_rows(*r, plane, 0, plane.height);
    send_rows(*r, 0, plane.height);
    CUDA_CHECK(cudaEventRecord(r->landed.get(), copy_.get()));
    r->landing = true;
  } catch (const CudaError& e) {
    fall_back(e);
  }
}

void CudaSearch::search(const PictureSearchRequest& req, PictureCandidates& out) {
  check_search_request(req);  // bad requests throw std::invalid_argument on either path
  drain();  // a progressive answer still landing: its buffers are about to be reused
  if (failed_ || req.top_k > kGpuMaxTopK) {
    twin_.search(req, out);
    return;
  }
  try {
    search_on_device(req, out);
  } catch (const CudaError& e) {
    fall_back(e);
    twin_.search(req, out);
  }
}

int CudaSearch::wait_rows(int rows) {
  if (!fly_.active) return INT32_MAX;
  if (rows <= fly_.ready_rows) return fly_.ready_rows;
  try {
    complete_rows(rows);
  } catch (const CudaError& e) {
    // As in search(): the rows still outstanding come from the twin, and so does everything after.
    fall_back(e);
    twin_.search(fly_.req, *fly_.out);
    return INT32_MAX;
  }
  return fly_.active ? fly_.ready_rows : INT32_MAX;
}

void CudaSearch::fall_back(const std::exception& e) {
  // The GPU went away mid-run: warn once; the caller answers from the twin, and so does every later call.
  std::fprintf(stderr, "gme: CUDA integer search failed (%s); using the CPU twin from now on\n", e.what());
  failed_ = true;
  name_ = "cpu-twin";
  fly_.active = false;
}

void CudaSearch::drain() {
  if (!fly_.active) return;
  try {
    complete_rows(INT32_MAX);
  } catch (const CudaError& e) {
    fall_back(e);
  }
}

void CudaSearch::complete_rows(int rows) {
  CUDA_CHECK(cudaSetDevice(device_));
  if (rows >= fly_.mb_height) {  // the whole call: its join event follows every launch
    CUDA_CHECK(cudaEventSynchronize(ev_end_.get()));
    timing_.total_ms = elapsed_ms(ev_start_, ev_end_);
    if (fly_.uploaded) timing_.upload_ms = elapsed_ms(ev_start_, pool_event(upload_ev_, fly_.bands - 1));
    fly_.ready_rows = fly_.mb_height;
    fly_.active = false;
    fly_.out = nullptr;
    return;
  }
  const int last_band = std::min(fly_.bands - 1, band_of_row(fly_.band_start, std::min(rows, fly_.mb_height) - 1));
  for (size_t i = 0; i < fly_.launches.size(); ++i) {
    if (fly_.launches[i].band > last_band) continue;
    CUDA_CHECK(cudaEventSynchronize(done_event(done_ev_, i).get()));
    if (fly_.tables) CUDA_CHECK(cudaEventSynchronize(pool_event(tab_ev_, i).get()));
  }
  fly_.ready_rows = std::min(fly_.mb_height, fly_.band_start[last_band + 1]);
  if (fly_.ready_rows >= fly_.mb_height) complete_rows(fly_.mb_height);  // the last band: time the call
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
  for (Resident* r : in_use) settle(*r);  // a preloaded reference: the kernels (other streams) read it

  // Mapped inputs (pipelined with direct candidates, the encoder's case): the integer kernels read the window centres
  // and predictors, and the current picture while it is still in transit, straight from the page-locked buffers the
  // host has just filled (each block reads its 256 pixels and 8 bytes of parameters once), so a band starts as soon
  // as the host has staged its rows instead of after their DMA (the upload still goes on: the picture is the next
  // call's reference, and the sub-pel tables read it on the device).
  const bool mapped = pipelined_ && direct_;
  // Stage 2's step order depends on the search range only: sent when that changes (before the parameters, so the
  // kernels' wait on the parameters covers it).
  const bool order_sent = order_range_ != req.search_range;
  if (order_sent) {
    const std::vector<uint32_t> order = step_order_table(req.search_range);
    const size_t bytes = order.size() * sizeof(uint32_t);
    h_order_.reserve(bytes);
    d_order_.reserve(bytes);
    std::memcpy(h_order_.as<void>(), order.data(), bytes);
    order_range_ = 0;
    CUDA_CHECK(cudaMemcpyAsync(d_order_.as<void>(), h_order_.as<void>(), bytes, cudaMemcpyHostToDevice, copy_.get()));
    order_range_ = req.search_range;
  }
  // Window centres and penalty predictors, ref-major as in the request (small: sent first, on the copy stream).
  const size_t n = static_cast<size_t>(num_refs) * num_mbs;
  static_assert(sizeof(MV) == sizeof(short2), "MV is uploaded as short2");
  h_params_.reserve(2 * n * sizeof(MV));
  d_params_.reserve(2 * n * sizeof(MV));
  std::memcpy(h_params_.as<MV>(), req.centre.data(), n * sizeof(MV));
  std::memcpy(h_params_.as<MV>() + n, req.penalty_pred.data(), n * sizeof(MV));
  if (!mapped)
    CUDA_CHECK(cudaMemcpyAsync(d_params_.as<void>(), h_params_.as<void>(), 2 * n * sizeof(MV),
                               cudaMemcpyHostToDevice, copy_.get()));
  CUDA_CHECK(cudaEventRecord(ev_params_.get(), copy_.get()));
  const size_t out_bytes = out.size() * sizeof(Candidate);
  d_out_.reserve(out_bytes);
  h_out_.reserve(out_bytes);
  const bool tables = req.subpel_metric >= 0;
  out.subpel_metric = -1;
  out.subpel_ranks = 0;
  out.subpel_view = nullptr;
  const size_t ranks = tables ? static_cast<size_t>(req.subpel_ranks) : 0;
  if (tables) {
    d_tab_.reserve(n * ranks * sizeof(SubpelTable));
    h_tab_.reserve(n * ranks * sizeof(SubpelTable));
  }

  // Bands of macroblock rows; upload chunk u carries band u's pixel rows of every pending
  // picture, so a band's kernel needs chunks up to the one holding the lowest row it reads of a picture in transit:
  // its own rows of the current picture, its windows' lowest row of the reference.
  const int height = req.cur->height;
  const int bands_wanted = pipelined_ ? bands_for(num_mbs) : 1;
  const std::vector<int> band_start = band_starts(req.mb_width, req.mb_height, bands_wanted);
  const int bands = static_cast<int>(band_start.size()) - 1;
  const int streams = pipelined_ ? kStreams : 1;
  std::vector<Launch> launches;
  auto in_transit = [&pending](const Resident* r) {
    return std::any_of(pending.begin(), pending.end(), [r](const Pending& p) { return p.dst == r; });
  };
  for (int r = 0; r < num_refs; ++r)
    for (int b = 0; b < bands; ++b) {
      const int row0 = band_start[b], row1 = band_start[b + 1];
      int lowest = in_transit(in_use[0]) ? 16 * row1 - 1 : 0;
      if (in_transit(in_use[1 + r])) {
        int max_cy = INT_MIN;
        for (int mb = row0 * req.mb_width; mb < row1 * req.mb_width; ++mb)
          max_cy = std::max(max_cy, req.centre[static_cast<size_t>(r) * num_mbs + mb].y / 4);
        lowest = std::max(lowest, std::min(height - 1, std::max(16 * row1 - 1, 16 * row1 - 1 + max_cy + req.search_range)));
      }
      launches.push_back({r, b, pipelined_ ? band_of_row(band_start, lowest / 16) : bands - 1});
    }
  std::stable_sort(launches.begin(), launches.end(), [](const Launch& x, const Launch& y) { return x.chunk < y.chunk; });

  const Geometry g = geometry(req.search_range);
  size_t next = 0;
  auto launch_ready = [&](int chunks_sent) {
    for (; next < launches.size() && (pending.empty() || launches[next].chunk < chunks_sent); ++next) {
      const Launch& l = launches[next];
      cudaStream_t st = pipelined_ && l.band == 0 ? first_.get() : compute_[next % streams].get();
      // Upload events come after the parameters (and a new step order) on the copy stream, so either wait covers
      // them. Mapped, only a reference in transit (and a step order sent now) is waited for.
      cudaEvent_t wait = pending.empty() ? ev_params_.get() : pool_event(upload_ev_, l.chunk).get();
      if (mapped && !in_transit(in_use[1 + l.ref])) wait = order_sent ? ev_params_.get() : nullptr;
      if (wait) CUDA_CHECK(cudaStreamWaitEvent(st, wait, 0));
      if (next == 0) CUDA_CHECK(cudaEventRecord(ev_kernel_start_.get(), st));
      const int row0 = band_start[l.band], row1 = band_start[l.band + 1];
      KernelArgs a = kernel_args(req, g);
      a.cur = mapped && in_transit(in_use[0]) ? in_use[0]->staging.device_as<uint8_t>() : in_use[0]->pixels.as<uint8_t>();
      a.ref = in_use[1 + l.ref]->pixels.as<uint8_t>();
      a.mb_first = row0 * req.mb_width;
      const short2* params = mapped ? h_params_.device_as<short2>() : d_params_.as<short2>();
      a.centre = params + static_cast<size_t>(l.ref) * num_mbs;
      a.pred = params + n + static_cast<size_t>(l.ref) * num_mbs;
      a.order = d_order_.as<uint32_t>();
      a.out = d_out_.as<uint2>() + static_cast<size_t>(l.ref) * num_mbs * per_mb;
      a.out_host = direct_ ? h_out_.device_as<uint2>() + static_cast<size_t>(l.ref) * num_mbs * per_mb : nullptr;
      const int blocks = (row1 - row0) * req.mb_width;
      kKernels[k - 1]<<<blocks, kThreads, g.smem, st>>>(a);
      CUDA_CHECK_LAUNCH("integer_search_kernel");
      if (pipelined_) {
        if (!direct_) {  // (direct: the kernel's end is done_ev_, recorded next)
          CUDA_CHECK(cudaEventRecord(pool_event(kernel_ev_, next).get(), st));
          const size_t off = (static_cast<size_t>(l.ref) * num_mbs + a.mb_first) * per_mb * sizeof(Candidate);
          CUDA_CHECK(cudaMemcpyAsync(h_out_.as<uint8_t>() + off, d_out_.as<uint8_t>() + off,
                                     blocks * per_mb * sizeof(Candidate), cudaMemcpyDeviceToHost, st));
        }
        CUDA_CHECK(cudaEventRecord(done_event(done_ev_, next).get(), st));
      }
    }
  };
  // The sub-pel tables of launch i's macroblocks, after its integer kernel (whose candidates they read) and every
  // upload (their +-3/4-pel samples may reach below the rows the integer band waited for). Pipelined, on a table
  // stream of their own, so band 0's tables (what the macroblock loop needs first) do not queue behind band 4's
  // integer kernel.
  auto launch_subpel = [&](size_t i, cudaStream_t st) {
    const Launch& l = launches[i];
    if (!pending.empty()) CUDA_CHECK(cudaStreamWaitEvent(st, ev_uploaded_.get(), 0));
    if (pipelined_) CUDA_CHECK(cudaStreamWaitEvent(st, pool_event(direct_ ? done_ev_ : kernel_ev_, i).get(), 0));
    const int row0 = band_start[l.band], row1 = band_start[l.band + 1];
    SubpelKernelArgs sa = subpel_kernel_args(req);
    sa.cur = in_use[0]->pixels.as<uint8_t>();
    sa.ref = in_use[1 + l.ref]->pixels.as<uint8_t>();
    sa.mb_first = row0 * req.mb_width;
    sa.cands = d_out_.as<uint2>() + static_cast<size_t>(l.ref) * num_mbs * per_mb;
    sa.out = d_tab_.as<SubpelTable>() + static_cast<size_t>(l.ref) * num_mbs * ranks;
    const int blocks = (row1 - row0) * req.mb_width * static_cast<int>(ranks);
    subpel_table_kernel<<<blocks, kSubpelThreads, kSubpelSmemBytes, st>>>(sa);
    CUDA_CHECK_LAUNCH("subpel_table_kernel");
    const size_t off = (static_cast<size_t>(l.ref) * num_mbs + sa.mb_first) * ranks * sizeof(SubpelTable);
    CUDA_CHECK(cudaMemcpyAsync(h_tab_.as<uint8_t>() + off, d_tab_.as<uint8_t>() + off,
                               blocks * sizeof(SubpelTable), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaEventRecord(pool_event(tab_ev_, i).get(), st));
  };
  if (pending.empty()) {
    // Everything resident: the parameters are the only upload.
    launch_ready(0);
  } else {
    // Mapped with every reference resident (the encoder's steady state: it preloads each reconstruction), a band's
    // kernel needs only its rows of the current picture staged, not sent: it is launched before the chunk's DMA
    // is queued, which takes that call off the path to the kernel.
    const bool early = mapped && std::none_of(in_use.begin() + 1, in_use.end(), in_transit);
    for (int u = 0; u < bands; ++u) {
      // Strip the border into page-locked memory (and, unless early, send at once: the host copy of the next chunk
      // overlaps this chunk's DMA); the kernels of earlier bands run meanwhile.
      const int y0 = 16 * band_start[u], rows = std::min(16 * band_start[u + 1], height) - y0;
      for (const Pending& p : pending) {
        stage_rows(*p.dst, *p.src, y0, rows);
        if (!early) send_rows(*p.dst, y0, rows);  // this picture's DMA overlaps the next one's staging
      }
      if (!early) CUDA_CHECK(cudaEventRecord(pool_event(upload_ev_, u).get(), copy_.get()));
      launch_ready(u + 1);
    }
    // Early, no kernel waits for the DMA (they read the staged rows): one copy of each picture after the last
    // launch takes ~4 us of API time per band off the path between one band's launch and the next (measured:
    // -0.003 to -0.02 ms per picture, doc/RESULTS.md ninth session). The sub-pel tables and the next call wait for it.
    if (early) {
      for (const Pending& p : pending) send_rows(*p.dst, 0, height);
      CUDA_CHECK(cudaEventRecord(pool_event(upload_ev_, bands - 1).get(), copy_.get()));
    }
  }
  if (!pending.empty()) CUDA_CHECK(cudaEventRecord(ev_uploaded_.get(), copy_.get()));
  // The answer's shape; zero-copy views point into the page-locked download buffers from now on.
  if (tables) {
    out.subpel_metric = req.subpel_metric;
    out.subpel_ranks = req.subpel_ranks;
    if (req.zero_copy) {
      out.subpel.clear();
      out.subpel_view = h_tab_.as<SubpelTable>();
    }
  }
  if (req.zero_copy) out.view = h_out_.as<Candidate>();
  if (pipelined_) {
    if (tables)
      for (size_t i = 0; i < launches.size(); ++i)
        launch_subpel(i, launches[i].band == 0 ? first_table_.get() : table_[i % streams].get());
    // One event after every band (and table) of the call: what completing the whole call waits for and times, in
    // one synchronisation and one elapsed-time query instead of one of each per launch after the last band.
    for (size_t i = 0; i < launches.size(); ++i) {
      CUDA_CHECK(cudaStreamWaitEvent(join_.get(), done_event(done_ev_, i).get(), 0));
      if (tables) CUDA_CHECK(cudaStreamWaitEvent(join_.get(), pool_event(tab_ev_, i).get(), 0));
    }
    // And the uploads, which no kernel waits for when they only carry the mapped current picture: a completed call
    // has its staging buffers free for the next call to refill, and its upload event can be timed.
    if (!pending.empty()) CUDA_CHECK(cudaStreamWaitEvent(join_.get(), ev_uploaded_.get(), 0));
    CUDA_CHECK(cudaEventRecord(ev_end_.get(), join_.get()));
    fly_.active = true;
    fly_.launches = launches;
    fly_.band_start = band_start;
    fly_.bands = bands;
    fly_.mb_height = req.mb_height;
    fly_.ready_rows = 0;
    fly_.tables = tables;
    fly_.uploaded = !pending.empty();
    if (req.progressive && req.zero_copy) {  // the caller waits for rows as it reaches them
      fly_.req = req;
      fly_.out = &out;
      return;
    }
    for (size_t i = 0; !req.zero_copy && i < launches.size(); ++i) {  // copy each band out as it lands
      CUDA_CHECK(cudaEventSynchronize(done_event(done_ev_, i).get()));
      const Launch& l = launches[i];
      const int row0 = band_start[l.band], row1 = band_start[l.band + 1];
      const size_t first = (static_cast<size_t>(l.ref) * num_mbs + static_cast<size_t>(row0) * req.mb_width) * per_mb;
      std::memcpy(out.data.data() + first, h_out_.as<Candidate>() + first,
                  static_cast<size_t>(row1 - row0) * req.mb_width * per_mb * sizeof(Candidate));
    }
    complete_rows(req.mb_height);
  } else {
    cudaStream_t st = compute_[0].get();
    CUDA_CHECK(cudaEventRecord(ev_kernel_end_.get(), st));
    if (!direct_)
      CUDA_CHECK(cudaMemcpyAsync(h_out_.as<void>(), d_out_.as<void>(), out_bytes, cudaMemcpyDeviceToHost, st));
    if (tables)
      for (size_t i = 0; i < launches.size(); ++i) launch_subpel(i, st);
    CUDA_CHECK(cudaEventRecord(ev_end_.get(), st));
    CUDA_CHECK(cudaEventSynchronize(ev_end_.get()));
    if (!req.zero_copy) std::memcpy(out.data.data(), h_out_.as<void>(), out_bytes);
    timing_.kernel_ms = elapsed_ms(ev_kernel_start_, ev_kernel_end_);
    timing_.total_ms = elapsed_ms(ev_start_, ev_end_);
    if (!pending.empty()) timing_.upload_ms = elapsed_ms(ev_start_, pool_event(upload_ev_, bands - 1));
  }
  if (tables && !req.zero_copy) {
    out.subpel.resize(n * ranks);
    std::memcpy(out.subpel.data(), h_tab_.as<void>(), n * ranks * sizeof(SubpelTable));
  }
}

// Why cudaGetDeviceCount failed, in the user's terms: the runtime says "driver version is insufficient" both when
// no NVIDIA driver is installed at all and when it is too old, so look for the driver library itself.
std::string no_device_reason(cudaError_t e) {
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver) return "no NVIDIA driver found (libcuda.so.1 is not installed): no GPU to use";
    dlclose(driver);
    if (e == cudaErrorNoDevice) return "no NVIDIA GPU found (the NVIDIA driver is installed)";
    int driver_version = 0, runtime_version = 0;
    cudaDriverGetVersion(&driver_version);
    cudaRuntimeGetVersion(&runtime_version);
    return "the NVIDIA driver supports CUDA " + std::to_string(driver_version / 1000) + "." +
           std::to_string(driver_version % 1000 / 10) + ", this build needs CUDA " +
           std::to_string(runtime_version / 1000) + "." + std::to_string(runtime_version % 1000 / 10) +
           ": update the driver";
  }
  return std::string("no CUDA device: ") + cudaGetErrorString(e);
}

}  // namespace

std::unique_ptr<GpuPictureSearch> create_cuda_search(int device, std::string* why) {
  try {
    StartupTrace trace;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      if (why) *why = no_device_reason(e);
      cudaGetLastError();  // clear the sticky-free error so later runtime calls start clean
      return nullptr;
    }
    if (count == 0) {
      if (why) *why = "no NVIDIA GPU found (the NVIDIA driver is installed)";
      return nullptr;
    }
    if (device < 0 || device >= count) {
      if (why) *why = "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                      " found)";
      return nullptr;
    }
    trace.step("cudaGetDeviceCount (driver init)");
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaFree(nullptr));  // creates the context now, so the trace can tell it apart
    trace.step("context creation");
    auto s = std::make_unique<CudaSearch>(device, trace);
    if (why) why->clear();
    return s;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace gme
