// The CUDA picture-level integer search (gpu/me_cuda.h): host side. The kernels are in gpu/me_cuda_kernel.cuh
// (integer search) and gpu/subpel_kernel.cuh (sub-pel tables); doc/GPU.md describes the design.
//
// One call, in the order of search_on_device()'s stages:
//   send_step_order  stage 2's step order, when the search range changed
//   make_resident    every reference on the device: found by its id (the encoder preloads each reconstruction, so
//                    this is its case), or sent whole now, its kernels waiting for the copy
//   stage_params     window centres and predictors into page-locked memory, which the kernels read over PCIe
//   launch_bands     the picture in bands of macroblock rows: per band, its rows of the current picture staged into
//                    page-locked memory (the kernels read them there, so a band starts without waiting for a DMA),
//                    then one integer kernel per reference, which writes its candidates into device memory (for the
//                    tables) and into the page-locked answer; after the last band, one DMA of the current picture
//   launch_tables    the sub-pel tables of each band after its integer kernel and the uploads
//   join             one event after everything: what completing the call waits for and times
//   answer           views of the page-locked buffers; the caller waits for rows as it reaches them
//                    (wait_rows), or the call completes here and copies out
// Any request the contract allows takes this path; the encoder's (references resident, zero copy, progressive) is
// the one it is built for. A CUDA error switches the object to the twin for good (same candidates).
#include "gpu/me_cuda.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/dsp.h"
#include "common/frame.h"
#include "common/version.h"
#include "gpu/cuda_resources.h"
#include "gpu/me_cuda_kernel.cuh"  // kernel, geometry, KernelArgs (also compiled on the host by tests)
#include "gpu/me_twin.h"
#include "gpu/subpel_kernel.cuh"  // sub-pel tables (also compiled on the host by tests)

namespace gme {

namespace {

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

using KernelFn = void (*)(KernelArgs);
const KernelFn kKernels[kGpuMaxTopK] = {
    integer_search_kernel<1>,  integer_search_kernel<2>,  integer_search_kernel<3>,  integer_search_kernel<4>,
    integer_search_kernel<5>,  integer_search_kernel<6>,  integer_search_kernel<7>,  integer_search_kernel<8>,
    integer_search_kernel<9>,  integer_search_kernel<10>, integer_search_kernel<11>, integer_search_kernel<12>,
    integer_search_kernel<13>, integer_search_kernel<14>, integer_search_kernel<15>, integer_search_kernel<16>};

// The largest shared memory a block of the integer kernel needs (SearchRange 1..128).
size_t integer_kernel_smem() {
  size_t smem = 0;
  for (int range = 1; range <= 128; ++range) smem = std::max(smem, geometry(range).smem);
  return smem;
}

// Why device `device` cannot run this build's kernels, or "" when it can: its compute capability has no kernel image
// in the binary (the build's architectures: CUDA_ARCH), or it offers a block less shared memory than the largest
// search window needs. Loading every kernel image is the test: a PTX image JIT-compiles for any newer device.
std::string unusable_device_reason(int device, const cudaDeviceProp& prop) {
  const std::string who = "CUDA device " + std::to_string(device) + " (" + prop.name + ", compute capability " +
                          std::to_string(prop.major) + "." + std::to_string(prop.minor) + ")";
  for (KernelFn k : kKernels) {
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, k);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return who + " cannot run this build's kernels (" + cudaGetErrorString(e) + "; this build: " + version_cuda() +
             ")";
    }
  }
  const size_t smem = integer_kernel_smem();
  if (smem > prop.sharedMemPerBlockOptin)
    return who + " offers " + std::to_string(prop.sharedMemPerBlockOptin) + " bytes of shared memory per block, " +
           std::to_string(smem) + " needed";
  return "";
}

// ---- Bands ------------------------------------------------------------------------------------------------------
// The picture is cut into bands of macroblock rows, each launched as soon as its rows of the current picture are
// staged. A band's last blocks leave SMs idle while other bands' blocks are still queued behind earlier ones, so
// small pictures gain less from starting early than they lose there: a band has at least kBandMbs macroblocks,
// there are 2 bands at least (the first starts on the first rows staged) and kBands at most (4 at 640x480, 8 at
// 1080p). kStreams compute streams, so 1080p's 8 bands never queue behind one another.
constexpr int kStreams = 8;
constexpr int kBands = 8;
constexpr int kBandMbs = 300;
int bands_for(int num_mbs) { return std::clamp(num_mbs / kBandMbs, 2, kBands); }
// Where equal bands would be large (more than kFirstBandSplitMbs macroblocks each), the first band is a fraction of
// the others (1 / kFirstBandDiv of their rows, one row at least): its kernel starts after fewer staged rows, and the
// GPU fills while the host stages the next band (1080p: 3/10/10/10/10/10/10/5 rows). Bands of 300 macroblocks
// (640x480: 8/8/8/6 rows) are not split: there the smaller first band makes the later ones end later.
constexpr int kFirstBandDiv = 3;
constexpr int kFirstBandSplitMbs = 600;

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
  CudaSearch(int device, const cudaDeviceProp& prop, StartupTrace& trace, const DspFuncs& dsp);
  ~CudaSearch() override {
    cudaDeviceSynchronize();  // no DMA (a call in flight, a preload) into or out of buffers about to be freed
  }
  void search(const PictureSearchRequest& req, PictureCandidates& out) override;
  const char* name() const override { return name_.c_str(); }
  bool runs_beside_cpu() const override { return true; }
  GpuSearchTiming last_timing() const override { return timing_; }
  double peak_absdiff_per_s() const override { return peak_; }
  std::string device_description() const override { return desc_; }
  int wait_rows(int rows) override;
  void preload(const Plane& plane, int id) override;
  void set_threads(int threads) override { twin_.set_threads(threads); }
  bool search_ahead(const PictureSearchRequest& req, int growing) override;
  void reference_rows(const Plane& plane, int id, int rows) override;

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
  // The pictures of a call: in_use[0] the current one, then the references. The current one is staged band by
  // band unless it is resident; references not resident were sent whole (refs_sent: their kernels wait for it).
  struct Residency {
    std::vector<Resident*> in_use;
    bool cur_pending = false;
    bool refs_sent = false;
  };
  struct Launch { int ref, band; };  // one (reference, band of macroblock rows) kernel
  // What a call has of its own while the call before it may still be landing (a search queued ahead runs beside
  // the current picture's): its events and the page-locked window centres and predictors its kernels read. Calls
  // take the two slots in turn.
  struct CallSlot {
    Event start, kernel_start, end, refs, uploaded;
    std::vector<std::unique_ptr<Event>> done, tab;  // per launch: integer kernel, tables (with their download)
    PinnedBuffer params;
  };
  // The last call whose answer the buffers hold: a search queued ahead writes a band of them only after this
  // call's work on that band (kernels, tables, downloads), and keeps its pictures.
  struct LastCall {
    int slot = -1;  // -1: none yet
    std::vector<Launch> launches;
    std::vector<Resident*> in_use;
    bool tables = false;
    int refs = 0, mbs = 0, top_k = 0, subpel_metric = -1, subpel_ranks = 0;  // the answer's layout
  };
  // The call whose bands may still be landing (a progressive answer): what wait_rows() and the next search()
  // complete. The request is kept for the twin, should the device fail before every row has landed.
  struct InFlight {
    bool active = false;
    int slot = 0;
    std::vector<Launch> launches;
    std::vector<int> band_start;  // band_starts()
    int mb_height = 0, ready_rows = 0;
    bool tables = false, uploaded = false;
    PictureSearchRequest req;
    PictureCandidates* out = nullptr;
  };
  // A search queued ahead (search_ahead): its bands start as the growing reference's rows are reported final.
  struct Ahead {
    bool active = false;
    int slot = 0;
    PictureSearchRequest req;
    Residency res;
    std::vector<int> band_start;
    std::vector<int> need;       // per band: the growing reference's rows its kernels read (all: the height)
    std::vector<Launch> launches;
    int growing = 0, growing_id = -1, height = 0;
    int rows_sent = 0;           // of the growing reference, on the copy stream
    // The current picture, when not resident: staged and sent band by band as the bands launch, so the copy runs
    // on the threads that report rows instead of before the caller's macroblock rows start.
    bool cur_by_band = false;
    int cur_id = -1, cur_rows_sent = 0;
    bool rows_event = false;     // ahead_rows_ recorded for this search
    int next_band = 0;           // the first band not launched
    LastCall before;             // the call whose answer the buffers hold meanwhile
    GpuSearchTiming timing;
  };
  // The stages of one call (search_on_device), in order.
  void shape_answer(const PictureSearchRequest& req, PictureCandidates& out);
  Residency make_resident(const PictureSearchRequest& req, CallSlot& c);
  bool send_step_order(int range);
  void stage_params(const PictureSearchRequest& req, CallSlot& c);
  void reserve_outputs(const PictureSearchRequest& req);
  std::vector<Launch> launch_bands(const PictureSearchRequest& req, const Residency& res,
                                   const std::vector<int>& band_start, bool order_sent, CallSlot& c);
  // Band b's integer kernels, one per reference, appended to *launches; each stream first waits for `waits`.
  void launch_integer_band(const PictureSearchRequest& req, const Residency& res, const std::vector<int>& band_start,
                           int b, CallSlot& c, const std::vector<cudaEvent_t>& waits, std::vector<Launch>* launches);
  // Launch i's sub-pel tables and their download; the stream first waits for `waits` and launch i's kernel.
  void launch_table(const PictureSearchRequest& req, const Residency& res, const std::vector<int>& band_start,
                    const std::vector<Launch>& launches, size_t i, CallSlot& c, const std::vector<cudaEvent_t>& waits);
  void join(const PictureSearchRequest& req, const std::vector<int>& band_start, std::vector<Launch> launches,
            int slot, bool uploaded);
  void remember_call(const PictureSearchRequest& req, const Residency& res);
  void answer(const PictureSearchRequest& req, PictureCandidates& out);
  void search_on_device(const PictureSearchRequest& req, PictureCandidates& out);
  // A search queued ahead: its bands whose rows of the growing reference are sent, the rows themselves, taking it
  // up in search(), and giving it up.
  void launch_ahead_bands();
  void send_ahead_rows(const Plane& plane, int rows);
  void send_ahead_current(int rows);
  void adopt_ahead(const PictureSearchRequest& req, PictureCandidates& out);
  void discard_ahead();

  // Waits for the bands holding rows [0, rows) of the call in flight (throws CudaError); the whole call: timings.
  void complete_rows(int rows);
  // Completes the call in flight without touching its answer (whose owner may be gone): for the next search().
  void drain();
  // After a CUDA error: warns, and switches this object to the twin for good.
  void fall_back(const std::exception& e);
  // The resident slot for `plane` under `id` (-1: none), found or taken from the least recently used slot that the
  // call does not need (in_use); a slot that must be filled is appended to `pending`.
  Resident* acquire(const Plane& plane, int id, const std::vector<Resident*>& in_use, size_t max_resident,
                    std::vector<Resident*>* pending);
  // Waits until a preload()'s copy out of r's staging buffer has finished (the host is about to refill the buffer,
  // or kernels on other streams are about to read r's pixels). Sent a picture's bookkeeping ago: rarely waits.
  static void settle(Resident& r);
  // Copies rows [y0, y0 + rows) of `src` into r's page-locked staging buffer, without the plane's border; then
  // send_rows() queues their DMA to r's device copy on the copy stream.
  void stage_rows(Resident& r, const Plane& src, int y0, int rows) const;
  void send_rows(Resident& r, int y0, int rows);
  static const Event& pool_event(std::vector<std::unique_ptr<Event>>& pool, size_t i,
                                 unsigned flags = cudaEventDefault);
  // A band's completion, never timed: without a timestamp the event is cheaper to record, and the host records one
  // per band launch between staging the bands.
  static const Event& done_event(std::vector<std::unique_ptr<Event>>& pool, size_t i) {
    return pool_event(pool, i, cudaEventDisableTiming);
  }

  int device_ = 0;
  std::string name_, desc_;
  double peak_ = 0;
  Stream copy_;
  Stream compute_[kStreams];
  Stream table_[kStreams];  // sub-pel tables: a band's tables start as soon as its own integer kernel ends
  // Band 0 (integer kernel and tables) on streams of the greatest priority: a progressive answer's macroblock loop
  // waits for it alone, while the other bands have the loop's whole duration to land.
  Stream first_{Stream::Urgent{}}, first_table_{Stream::Urgent{}};
  Stream join_;  // waits for every launch and upload of a call, then records its slot's `end`
  Event ev_order_;
  CallSlot slots_[2];
  int next_slot_ = 0;
  LastCall last_;
  Ahead ahead_;
  Event ahead_rows_;  // recorded after each send of a search queued ahead's growing reference
  std::vector<std::unique_ptr<Resident>> resident_;
  DeviceBuffer d_out_, d_order_, d_tab_;
  PinnedBuffer h_out_, h_order_, h_tab_;
  int order_range_ = 0;  // the search range d_order_ holds the step order of (0: none yet)
  uint64_t clock_ = 0;
  CopyRowsFn copy_rows_;  // the staging copy of the host's function table
  TwinPictureSearch twin_;  // top_k above kGpuMaxTopK, and everything after a device failure
  std::atomic<bool> failed_{false};  // set by wait_rows() or reference_rows() on a worker thread too
  GpuSearchTiming timing_;
  InFlight fly_;
};

CudaSearch::CudaSearch(int device, const cudaDeviceProp& prop, StartupTrace& trace, const DspFuncs& dsp)
    : device_(device), copy_rows_(dsp.copy_rows), twin_(dsp) {
  trace.step("streams and events");
  int clock_khz = 0, driver = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  name_ = std::string("cuda:") + prop.name;
  // Each SM issues 64 int32 lane operations per clock (4 sub-partitions x 16); one VABSDIFF4 does 4 differences.
  peak_ = static_cast<double>(prop.multiProcessorCount) * 64 * 4 * clock_khz * 1e3;
  desc_ = std::string(prop.name) + ", compute capability " + std::to_string(prop.major) + "." +
          std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
          std::to_string(clock_khz / 1000) + " MHz, driver API " + std::to_string(driver / 1000) + "." +
          std::to_string(driver % 1000 / 10);
  // The largest window needs more than the 48 KB of shared memory a block gets without opting in.
  const int smem = static_cast<int>(integer_kernel_smem());
  for (KernelFn k : kKernels) CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CUDA_CHECK(cudaFuncSetAttribute(subpel_table_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kSubpelSmemBytes)));
  trace.step("kernel images (17) loaded");
}

const Event& CudaSearch::pool_event(std::vector<std::unique_ptr<Event>>& pool, size_t i, unsigned flags) {
  while (pool.size() <= i) pool.push_back(std::make_unique<Event>(flags));
  return *pool[i];
}

CudaSearch::Resident* CudaSearch::acquire(const Plane& plane, int id, const std::vector<Resident*>& in_use,
                                          size_t max_resident, std::vector<Resident*>* pending) {
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
  pending->push_back(victim);
  timing_.uploaded_bytes += static_cast<int64_t>(bytes);
  ++timing_.pictures_uploaded;
  return victim;
}

void CudaSearch::settle(Resident& r) {
  if (!r.landing) return;
  CUDA_CHECK(cudaEventSynchronize(r.landed.get()));
  r.landing = false;
}

void CudaSearch::stage_rows(Resident& r, const Plane& src, int y0, int rows) const {
  copy_rows_(r.staging.as<uint8_t>() + static_cast<size_t>(y0) * r.width, r.width, src.row(y0), src.stride, r.width, rows);
}

void CudaSearch::send_rows(Resident& r, int y0, int rows) {
  const size_t off = static_cast<size_t>(y0) * r.width;
  CUDA_CHECK(cudaMemcpyAsync(r.pixels.as<uint8_t>() + off, r.staging.as<uint8_t>() + off,
                             static_cast<size_t>(rows) * r.width, cudaMemcpyHostToDevice, copy_.get()));
}

void CudaSearch::preload(const Plane& plane, int id) {
  if (failed_ || id < 0) return;
  if (ahead_.active && id == ahead_.growing_id) {  // a search queued ahead is waiting for these rows
    reference_rows(plane, id, plane.height);
    return;
  }
  try {
    drain();  // a call in flight may read any resident picture
    if (failed_) return;
    CUDA_CHECK(cudaSetDevice(device_));
    std::vector<Resident*> pending;
    const std::vector<Resident*>& keep = ahead_.active ? ahead_.res.in_use : std::vector<Resident*>{};
    // Room for one picture more than the pictures held (3 at least: a call's current picture and reference, and
    // this one); otherwise the least recently used goes, which after a search is that call's current picture.
    Resident* r = acquire(plane, id, keep, std::max<size_t>(resident_.size(), 3), &pending);
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
  if (ahead_.active) {
    if (!failed_ && same_search_request(ahead_.req, req)) {
      try {
        adopt_ahead(req, out);
        return;
      } catch (const CudaError& e) {
        fall_back(e);
      }
    } else {
      discard_ahead();
    }
  }
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
  if (failed_.exchange(true)) return;
  std::fprintf(stderr, "gme: CUDA integer search failed (%s); using the CPU twin from now on\n", e.what());
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
  CallSlot& c = slots_[fly_.slot];
  if (rows >= fly_.mb_height) {  // the whole call: its join event follows every launch and upload
    CUDA_CHECK(cudaEventSynchronize(c.end.get()));
    timing_.total_ms = elapsed_ms(c.start, c.end);
    timing_.kernel_ms = elapsed_ms(c.kernel_start, c.end);
    if (fly_.uploaded) timing_.upload_ms = elapsed_ms(c.start, c.uploaded);
    fly_.ready_rows = fly_.mb_height;
    fly_.active = false;
    fly_.out = nullptr;
    return;
  }
  const int bands = static_cast<int>(fly_.band_start.size()) - 1;
  const int last_band = std::min(bands - 1, band_of_row(fly_.band_start, std::min(rows, fly_.mb_height) - 1));
  for (size_t i = 0; i < fly_.launches.size(); ++i) {
    if (fly_.launches[i].band > last_band) continue;
    CUDA_CHECK(cudaEventSynchronize(done_event(c.done, i).get()));
    if (fly_.tables) CUDA_CHECK(cudaEventSynchronize(pool_event(c.tab, i).get()));
  }
  fly_.ready_rows = std::min(fly_.mb_height, fly_.band_start[last_band + 1]);
  if (fly_.ready_rows >= fly_.mb_height) complete_rows(fly_.mb_height);  // the last band: time the call
}

// ---- The stages of a call ----------------------------------------------------------------------------------------
// The answer's shape. resize() clears every candidate; that pass over memory is skipped when the shape is already
// right. A zero_copy answer needs no `data` at all: it is a view of the page-locked buffers (answer()).
void CudaSearch::shape_answer(const PictureSearchRequest& req, PictureCandidates& out) {
  const int num_refs = static_cast<int>(req.refs.size());
  const int num_mbs = req.mb_width * req.mb_height;
  const int k = req.top_k;
  out.view = nullptr;
  if (req.zero_copy) {
    out.num_refs = num_refs;
    out.num_mbs = num_mbs;
    out.top_k = k;
    out.data.clear();
  } else if (out.num_refs != num_refs || out.num_mbs != num_mbs || out.top_k != k ||
             out.data.size() != static_cast<size_t>(num_refs) * num_mbs * kNumPartitions * k) {
    out.resize(num_refs, num_mbs, k);
  }
  out.subpel_metric = -1;
  out.subpel_ranks = 0;
  out.subpel_view = nullptr;
}

// Which pictures must travel: those not resident under their id (the current one first: every kernel reads it).
// A reference not resident is sent whole now (its kernels wait for the slot's `refs`); the current picture is
// staged band by band in launch_bands().
CudaSearch::Residency CudaSearch::make_resident(const PictureSearchRequest& req, CallSlot& c) {
  Residency res;
  std::vector<Resident*> pending;
  const size_t max_resident = req.refs.size() + 2;
  res.in_use.push_back(acquire(*req.cur, req.cur_id, res.in_use, max_resident, &pending));
  res.cur_pending = !pending.empty();
  for (size_t r = 0; r < req.refs.size(); ++r) {
    const size_t before = pending.size();
    res.in_use.push_back(acquire(*req.refs[r], req.ref_ids.empty() ? -1 : req.ref_ids[r], res.in_use, max_resident,
                                 &pending));
    if (pending.size() > before) {
      Resident& ref = *pending.back();
      stage_rows(ref, *req.refs[r], 0, ref.height);
      send_rows(ref, 0, ref.height);
      res.refs_sent = true;
    }
  }
  // A reference that is this call's current picture (the same id): it cannot wait for the current picture's DMA
  // after the last band, so the whole picture goes now, as a reference does.
  if (res.cur_pending && std::find(res.in_use.begin() + 1, res.in_use.end(), res.in_use[0]) != res.in_use.end()) {
    stage_rows(*res.in_use[0], *req.cur, 0, req.cur->height);
    send_rows(*res.in_use[0], 0, req.cur->height);
    res.cur_pending = false;
    res.refs_sent = true;
  }
  if (res.refs_sent) CUDA_CHECK(cudaEventRecord(c.refs.get(), copy_.get()));
  for (Resident* r : res.in_use) settle(*r);  // a preloaded reference: the kernels (other streams) read it
  return res;
}

// Stage 2's step order depends on the search range only: sent when that changes; the kernels of the call wait for
// ev_order_.
bool CudaSearch::send_step_order(int range) {
  if (order_range_ == range) return false;
  const std::vector<uint32_t> order = step_order_table(range);
  const size_t bytes = order.size() * sizeof(uint32_t);
  h_order_.reserve(bytes);
  d_order_.reserve(bytes);
  std::memcpy(h_order_.as<void>(), order.data(), bytes);
  order_range_ = 0;
  CUDA_CHECK(cudaMemcpyAsync(d_order_.as<void>(), h_order_.as<void>(), bytes, cudaMemcpyHostToDevice, copy_.get()));
  CUDA_CHECK(cudaEventRecord(ev_order_.get(), copy_.get()));
  order_range_ = range;
  return true;
}

// Window centres, then penalty predictors, ref-major as in the request: each block reads its 8 bytes over PCIe,
// cheaper than a copy the first band would wait for.
void CudaSearch::stage_params(const PictureSearchRequest& req, CallSlot& c) {
  static_assert(sizeof(MV) == sizeof(short2), "MV is read as short2");
  const size_t n = req.centre.size();
  c.params.reserve(2 * n * sizeof(MV));
  std::memcpy(c.params.as<MV>(), req.centre.data(), n * sizeof(MV));
  std::memcpy(c.params.as<MV>() + n, req.penalty_pred.data(), n * sizeof(MV));
}

void CudaSearch::reserve_outputs(const PictureSearchRequest& req) {
  const size_t n = req.refs.size() * static_cast<size_t>(req.mb_width) * req.mb_height;
  const size_t out_bytes = n * kNumPartitions * req.top_k * sizeof(Candidate);
  d_out_.reserve(out_bytes);
  h_out_.reserve(out_bytes);
  if (req.subpel_metric >= 0) {
    d_tab_.reserve(n * req.subpel_ranks * sizeof(SubpelTable));
    h_tab_.reserve(n * req.subpel_ranks * sizeof(SubpelTable));
  }
}

void CudaSearch::launch_integer_band(const PictureSearchRequest& req, const Residency& res,
                                     const std::vector<int>& band_start, int b, CallSlot& c,
                                     const std::vector<cudaEvent_t>& waits, std::vector<Launch>* launches) {
  const int num_refs = static_cast<int>(req.refs.size());
  const int num_mbs = req.mb_width * req.mb_height;
  const size_t per_mb = static_cast<size_t>(kNumPartitions) * req.top_k;
  const Geometry g = geometry(req.search_range);
  Resident& cur = *res.in_use[0];
  const short2* params = c.params.device_as<short2>();
  const int row0 = band_start[b], row1 = band_start[b + 1];
  for (int r = 0; r < num_refs; ++r) {
    const size_t i = launches->size();
    cudaStream_t st = b == 0 ? first_.get() : compute_[i % kStreams].get();
    for (cudaEvent_t e : waits) CUDA_CHECK(cudaStreamWaitEvent(st, e, 0));
    if (i == 0) CUDA_CHECK(cudaEventRecord(c.kernel_start.get(), st));
    KernelArgs a = kernel_args(req, g);
    a.cur = res.cur_pending ? cur.staging.device_as<uint8_t>() : cur.pixels.as<uint8_t>();
    a.ref = res.in_use[1 + r]->pixels.as<uint8_t>();
    a.mb_first = row0 * req.mb_width;
    a.centre = params + static_cast<size_t>(r) * num_mbs;
    a.pred = params + req.centre.size() + static_cast<size_t>(r) * num_mbs;
    a.order = d_order_.as<uint32_t>();
    a.out = d_out_.as<uint2>() + static_cast<size_t>(r) * num_mbs * per_mb;
    a.out_host = h_out_.device_as<uint2>() + static_cast<size_t>(r) * num_mbs * per_mb;
    kKernels[req.top_k - 1]<<<(row1 - row0) * req.mb_width, kThreads, g.smem, st>>>(a);
    CUDA_CHECK_LAUNCH("integer_search_kernel");
    CUDA_CHECK(cudaEventRecord(done_event(c.done, i).get(), st));
    launches->push_back({r, b});
  }
}

// Per band: its rows of the current picture staged (unless resident), then its kernels, one per reference, on their
// own streams (band 0 on the urgent one), each followed by its completion event. After the last band the current
// picture's DMA (the next call's reference; the tables read it on the device).
std::vector<CudaSearch::Launch> CudaSearch::launch_bands(const PictureSearchRequest& req, const Residency& res,
                                                         const std::vector<int>& band_start, bool order_sent,
                                                         CallSlot& c) {
  const int bands = static_cast<int>(band_start.size()) - 1;
  Resident& cur = *res.in_use[0];
  std::vector<cudaEvent_t> waits;
  if (res.refs_sent) waits.push_back(c.refs.get());  // recorded after ev_order_
  else if (order_sent) waits.push_back(ev_order_.get());
  std::vector<Launch> launches;
  for (int b = 0; b < bands; ++b) {
    const int row0 = band_start[b], row1 = band_start[b + 1];
    if (res.cur_pending) stage_rows(cur, *req.cur, 16 * row0, 16 * (row1 - row0));
    launch_integer_band(req, res, band_start, b, c, waits, &launches);
  }
  if (res.cur_pending) send_rows(cur, 0, req.cur->height);
  if (res.cur_pending || res.refs_sent) CUDA_CHECK(cudaEventRecord(c.uploaded.get(), copy_.get()));
  return launches;
}

// The sub-pel tables of launch i's macroblocks, after its integer kernel (whose candidates they read) and the
// uploads they read (their +-3/4-pel samples reach rows the integer band never read), each on a table stream of its
// own, so band 0's tables (what the macroblock loop needs first) do not queue behind a later band's integer kernel.
void CudaSearch::launch_table(const PictureSearchRequest& req, const Residency& res,
                              const std::vector<int>& band_start, const std::vector<Launch>& launches, size_t i,
                              CallSlot& c, const std::vector<cudaEvent_t>& waits) {
  const int num_mbs = req.mb_width * req.mb_height;
  const size_t per_mb = static_cast<size_t>(kNumPartitions) * req.top_k;
  const size_t ranks = static_cast<size_t>(req.subpel_ranks);
  const Launch& l = launches[i];
  cudaStream_t st = l.band == 0 ? first_table_.get() : table_[i % kStreams].get();
  for (cudaEvent_t e : waits) CUDA_CHECK(cudaStreamWaitEvent(st, e, 0));
  CUDA_CHECK(cudaStreamWaitEvent(st, done_event(c.done, i).get(), 0));
  const int row0 = band_start[l.band], row1 = band_start[l.band + 1];
  SubpelKernelArgs sa = subpel_kernel_args(req);
  sa.cur = res.in_use[0]->pixels.as<uint8_t>();
  sa.ref = res.in_use[1 + l.ref]->pixels.as<uint8_t>();
  sa.mb_first = row0 * req.mb_width;
  sa.cands = d_out_.as<uint2>() + static_cast<size_t>(l.ref) * num_mbs * per_mb;
  sa.out = d_tab_.as<SubpelTable>() + static_cast<size_t>(l.ref) * num_mbs * ranks;
  const int blocks = (row1 - row0) * req.mb_width * static_cast<int>(ranks);
  subpel_table_kernel<<<blocks, kSubpelThreads, kSubpelSmemBytes, st>>>(sa);
  CUDA_CHECK_LAUNCH("subpel_table_kernel");
  const size_t off = (static_cast<size_t>(l.ref) * num_mbs + sa.mb_first) * ranks * sizeof(SubpelTable);
  CUDA_CHECK(cudaMemcpyAsync(h_tab_.as<uint8_t>() + off, d_tab_.as<uint8_t>() + off, blocks * sizeof(SubpelTable),
                             cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaEventRecord(pool_event(c.tab, i).get(), st));
}

// One event after every band, table and upload of the call: completing the whole call waits for it (one
// synchronisation instead of one per launch), and a completed call has its staging buffers free for the next.
void CudaSearch::join(const PictureSearchRequest& req, const std::vector<int>& band_start,
                      std::vector<Launch> launches, int slot, bool uploaded) {
  CallSlot& c = slots_[slot];
  const bool tables = req.subpel_metric >= 0;
  for (size_t i = 0; i < launches.size(); ++i) {
    CUDA_CHECK(cudaStreamWaitEvent(join_.get(), done_event(c.done, i).get(), 0));
    if (tables) CUDA_CHECK(cudaStreamWaitEvent(join_.get(), pool_event(c.tab, i).get(), 0));
  }
  if (uploaded) CUDA_CHECK(cudaStreamWaitEvent(join_.get(), c.uploaded.get(), 0));
  CUDA_CHECK(cudaEventRecord(c.end.get(), join_.get()));
  fly_.active = true;
  fly_.slot = slot;
  fly_.launches = std::move(launches);
  fly_.band_start = band_start;
  fly_.mb_height = req.mb_height;
  fly_.ready_rows = 0;
  fly_.tables = tables;
  fly_.uploaded = uploaded;
}

void CudaSearch::remember_call(const PictureSearchRequest& req, const Residency& res) {
  last_.slot = fly_.slot;
  last_.launches = fly_.launches;
  last_.in_use = res.in_use;
  last_.tables = fly_.tables;
  last_.refs = static_cast<int>(req.refs.size());
  last_.mbs = req.mb_width * req.mb_height;
  last_.top_k = req.top_k;
  last_.subpel_metric = req.subpel_metric;
  last_.subpel_ranks = req.subpel_metric >= 0 ? req.subpel_ranks : 0;
}

// The answer points into the page-locked buffers from now on. A progressive zero-copy answer returns at once (the
// caller waits for rows as it reaches them); any other completes the call, and a copied one is copied out.
void CudaSearch::answer(const PictureSearchRequest& req, PictureCandidates& out) {
  const bool tables = req.subpel_metric >= 0;
  if (tables) {
    out.subpel_metric = req.subpel_metric;
    out.subpel_ranks = req.subpel_ranks;
  }
  if (req.zero_copy) {
    out.view = h_out_.as<Candidate>();
    if (tables) {
      out.subpel.clear();
      out.subpel_view = h_tab_.as<SubpelTable>();
    }
    if (req.progressive) {
      fly_.req = req;
      fly_.out = &out;
      return;
    }
  }
  complete_rows(req.mb_height);
  if (!req.zero_copy) {
    std::memcpy(out.data.data(), h_out_.as<void>(), out.size() * sizeof(Candidate));
    if (tables) {
      out.subpel.resize(out.subpel_tables());
      std::memcpy(out.subpel.data(), h_tab_.as<void>(), out.subpel.size() * sizeof(SubpelTable));
    }
  }
}

void CudaSearch::search_on_device(const PictureSearchRequest& req, PictureCandidates& out) {
  CUDA_CHECK(cudaSetDevice(device_));
  timing_ = GpuSearchTiming{};
  shape_answer(req, out);
  if (req.refs.empty()) return;
  const int slot = next_slot_;
  next_slot_ ^= 1;
  CallSlot& c = slots_[slot];
  CUDA_CHECK(cudaEventRecord(c.start.get(), copy_.get()));
  const bool order_sent = send_step_order(req.search_range);  // before the references: `refs` then covers it
  const Residency res = make_resident(req, c);
  stage_params(req, c);
  reserve_outputs(req);
  const std::vector<int> band_start =
      band_starts(req.mb_width, req.mb_height, bands_for(req.mb_width * req.mb_height));
  std::vector<Launch> launches = launch_bands(req, res, band_start, order_sent, c);
  if (req.subpel_metric >= 0) {
    std::vector<cudaEvent_t> waits;
    if (res.cur_pending || res.refs_sent) waits.push_back(c.uploaded.get());
    for (size_t i = 0; i < launches.size(); ++i) launch_table(req, res, band_start, launches, i, c, waits);
  }
  join(req, band_start, std::move(launches), slot, res.cur_pending || res.refs_sent);
  remember_call(req, res);
  answer(req, out);
}

// ---- A search queued ahead -----------------------------------------------------------------------------------
// It runs beside the call whose answer the buffers hold (last_): in the other call slot, on pictures that call does
// not use (the current one and the growing reference sent as the bands launch), and a band of it writes the
// answer's buffers only after last_'s work on that band, on the device, and once the caller reported rows that
// imply its macroblock loop left that band (reference_rows).
bool CudaSearch::search_ahead(const PictureSearchRequest& req, int growing) {
  if (failed_ || req.top_k > kGpuMaxTopK || !req.zero_copy || !req.progressive || req.refs.empty()) return false;
  if (growing < 0 || growing >= static_cast<int>(req.refs.size()) || req.ref_ids.size() != req.refs.size() ||
      req.ref_ids[static_cast<size_t>(growing)] < 0)
    return false;
  // The call in flight keeps its step order and its answer's layout (the buffers are not reallocated under it).
  if (order_range_ != req.search_range) return false;
  if (last_.slot >= 0 &&
      (last_.refs != static_cast<int>(req.refs.size()) || last_.mbs != req.mb_width * req.mb_height ||
       last_.top_k != req.top_k || last_.subpel_metric != req.subpel_metric ||
       last_.subpel_ranks != (req.subpel_metric >= 0 ? req.subpel_ranks : 0)))
    return false;
  check_search_request(req);
  if (ahead_.active) discard_ahead();
  if (failed_) return false;
  try {
    CUDA_CHECK(cudaSetDevice(device_));
    const GpuSearchTiming current = timing_;  // the call in flight's; this search keeps its own
    timing_ = GpuSearchTiming{};
    Ahead a;
    a.slot = last_.slot >= 0 ? last_.slot ^ 1 : next_slot_;
    CallSlot& c = slots_[a.slot];
    CUDA_CHECK(cudaEventRecord(c.start.get(), copy_.get()));
    // The pictures: none that the call in flight reads may be evicted (its kernels may still read them).
    std::vector<Resident*> keep = last_.slot >= 0 ? last_.in_use : std::vector<Resident*>{};
    const size_t max_resident = req.refs.size() + 2 + keep.size();
    std::vector<Resident*> pending;
    auto take = [&](const Plane& plane, int id) {
      std::vector<Resident*> avoid = keep;
      avoid.insert(avoid.end(), a.res.in_use.begin(), a.res.in_use.end());
      pending.clear();
      Resident* r = acquire(plane, id, avoid, max_resident, &pending);
      a.res.in_use.push_back(r);
      return !pending.empty();
    };
    if (take(*req.cur, req.cur_id)) {  // sent band by band (send_ahead_current); not resident until whole
      a.cur_by_band = true;
      a.cur_id = req.cur_id;
      a.res.in_use[0]->id = -1;
    }
    a.growing = growing;
    a.growing_id = req.ref_ids[static_cast<size_t>(growing)];
    a.height = req.refs[static_cast<size_t>(growing)]->height;
    for (size_t r = 0; r < req.refs.size(); ++r) {
      const bool fresh = take(*req.refs[r], req.ref_ids[r]);
      Resident& ref = *a.res.in_use.back();
      if (static_cast<int>(r) == growing) {
        if (fresh) ref.id = -1;  // not resident until every row is sent (send_ahead_rows)
        a.rows_sent = fresh ? 0 : a.height;
      } else if (fresh) {
        stage_rows(ref, *req.refs[r], 0, ref.height);
        send_rows(ref, 0, ref.height);
        a.res.refs_sent = true;
      }
    }
    if (a.res.refs_sent) CUDA_CHECK(cudaEventRecord(c.refs.get(), copy_.get()));
    for (Resident* r : a.res.in_use) settle(*r);
    stage_params(req, c);
    reserve_outputs(req);
    a.band_start = band_starts(req.mb_width, req.mb_height, bands_for(req.mb_width * req.mb_height));
    // The rows of the growing reference a band reads: its window's (centre + range + the partition) and the
    // tables' +-3/4-pel taps beyond, with a margin.
    const int bands = static_cast<int>(a.band_start.size()) - 1;
    const int nmb = req.mb_width * req.mb_height;
    for (int b = 0; b < bands; ++b) {
      int bottom = 0;
      for (int mb = a.band_start[b] * req.mb_width; mb < a.band_start[b + 1] * req.mb_width; ++mb) {
        const MV centre = req.centre[static_cast<size_t>(growing) * nmb + mb];
        bottom = std::max(bottom, 16 * (mb / req.mb_width) + (centre.y >> 2));
      }
      a.need.push_back(std::min(a.height, std::max(0, bottom + req.search_range + 16 + 8)));
    }
    a.req = req;
    a.before = last_;
    a.active = true;
    a.timing = timing_;
    timing_ = current;
    next_slot_ = a.slot ^ 1;
    ahead_ = std::move(a);
    launch_ahead_bands();
    return true;
  } catch (const CudaError& e) {
    fall_back(e);
    ahead_.active = false;
    return false;
  }
}

void CudaSearch::reference_rows(const Plane& plane, int id, int rows) {
  if (!ahead_.active || failed_ || id != ahead_.growing_id) return;
  rows = std::min(rows, ahead_.height);
  const int bands = static_cast<int>(ahead_.band_start.size()) - 1;
  // Rows are sent when a band can start on them (and the last ones whatever the bands need).
  if (rows < ahead_.height && (ahead_.next_band >= bands || rows < ahead_.need[ahead_.next_band])) return;
  try {
    CUDA_CHECK(cudaSetDevice(device_));
    send_ahead_rows(plane, rows);
    launch_ahead_bands();
  } catch (const CudaError& e) {
    fall_back(e);
  }
}

void CudaSearch::send_ahead_rows(const Plane& plane, int rows) {
  if (rows <= ahead_.rows_sent) return;
  Resident& r = *ahead_.res.in_use[1 + static_cast<size_t>(ahead_.growing)];
  stage_rows(r, plane, ahead_.rows_sent, rows - ahead_.rows_sent);
  send_rows(r, ahead_.rows_sent, rows - ahead_.rows_sent);
  CUDA_CHECK(cudaEventRecord(ahead_rows_.get(), copy_.get()));
  ahead_.rows_event = true;
  ahead_.rows_sent = rows;
  if (rows == ahead_.height) {  // resident from now on, for later calls too
    r.id = ahead_.growing_id;
    CUDA_CHECK(cudaEventRecord(r.landed.get(), copy_.get()));
    r.landing = true;
  }
}

// The current picture's rows [cur_rows_sent, rows): the kernels and tables of the bands launched after this wait
// for them through ahead_rows_, as for the growing reference's.
void CudaSearch::send_ahead_current(int rows) {
  if (rows <= ahead_.cur_rows_sent) return;
  Resident& r = *ahead_.res.in_use[0];
  stage_rows(r, *ahead_.req.cur, ahead_.cur_rows_sent, rows - ahead_.cur_rows_sent);
  send_rows(r, ahead_.cur_rows_sent, rows - ahead_.cur_rows_sent);
  CUDA_CHECK(cudaEventRecord(ahead_rows_.get(), copy_.get()));
  ahead_.rows_event = true;
  ahead_.cur_rows_sent = rows;
  if (rows == r.height) r.id = ahead_.cur_id;  // resident from now on
}

// Each band whose rows are sent: its integer kernels after those rows, the pictures sent whole, and the previous
// call's work on the same band (which read and download the buffers this band writes); then its tables.
void CudaSearch::launch_ahead_bands() {
  const int bands = static_cast<int>(ahead_.band_start.size()) - 1;
  CallSlot& c = slots_[ahead_.slot];
  while (ahead_.next_band < bands && ahead_.need[ahead_.next_band] <= ahead_.rows_sent) {
    const int b = ahead_.next_band++;
    if (ahead_.cur_by_band) send_ahead_current(16 * ahead_.band_start[b + 1]);
    std::vector<cudaEvent_t> waits;
    if (ahead_.res.refs_sent) waits.push_back(c.refs.get());
    if (ahead_.rows_event) waits.push_back(ahead_rows_.get());
    if (ahead_.before.slot >= 0) {
      CallSlot& prev = slots_[ahead_.before.slot];
      for (size_t i = 0; i < ahead_.before.launches.size(); ++i) {
        if (ahead_.before.launches[i].band != b) continue;
        waits.push_back(done_event(prev.done, i).get());
        if (ahead_.before.tables) waits.push_back(pool_event(prev.tab, i).get());
      }
    }
    const size_t first = ahead_.launches.size();
    launch_integer_band(ahead_.req, ahead_.res, ahead_.band_start, b, c, waits, &ahead_.launches);
    if (ahead_.req.subpel_metric < 0) continue;
    std::vector<cudaEvent_t> table_waits;
    if (ahead_.res.refs_sent) table_waits.push_back(c.refs.get());
    if (ahead_.rows_event) table_waits.push_back(ahead_rows_.get());
    for (size_t i = first; i < ahead_.launches.size(); ++i)
      launch_table(ahead_.req, ahead_.res, ahead_.band_start, ahead_.launches, i, c, table_waits);
  }
}

// search() with the request queued ahead: the rest of the growing reference (final now) and of the bands, then the
// answer as any call's.
void CudaSearch::adopt_ahead(const PictureSearchRequest& req, PictureCandidates& out) {
  CUDA_CHECK(cudaSetDevice(device_));
  shape_answer(req, out);
  send_ahead_rows(*req.refs[static_cast<size_t>(ahead_.growing)], ahead_.height);
  launch_ahead_bands();
  CallSlot& c = slots_[ahead_.slot];
  CUDA_CHECK(cudaEventRecord(c.uploaded.get(), copy_.get()));
  timing_ = ahead_.timing;
  ahead_.active = false;
  join(req, ahead_.band_start, std::move(ahead_.launches), ahead_.slot, true);
  remember_call(req, ahead_.res);
  answer(req, out);
}

// A search queued ahead that no call takes up: its work finishes (it writes buffers and reads pictures that the
// next call may reuse), and a growing reference not sent whole is not resident.
void CudaSearch::discard_ahead() {
  if (!ahead_.active) return;
  ahead_.active = false;
  if (failed_) return;
  try {
    CUDA_CHECK(cudaSetDevice(device_));
    CallSlot& c = slots_[ahead_.slot];
    for (size_t i = 0; i < ahead_.launches.size(); ++i) {
      CUDA_CHECK(cudaEventSynchronize(done_event(c.done, i).get()));
      if (ahead_.req.subpel_metric >= 0) CUDA_CHECK(cudaEventSynchronize(pool_event(c.tab, i).get()));
    }
    CUDA_CHECK(cudaStreamSynchronize(copy_.get()));
  } catch (const CudaError& e) {
    fall_back(e);
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

std::unique_ptr<GpuPictureSearch> create_cuda_search(int device, const DspFuncs& dsp, std::string* why) {
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
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    const std::string unusable = unusable_device_reason(device, prop);
    if (!unusable.empty()) {
      if (why) *why = unusable;
      return nullptr;
    }
    auto s = std::make_unique<CudaSearch>(device, prop, trace, dsp);
    if (why) why->clear();
    return s;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace gme
