// The CUDA picture-level integer search (gpu/me_cuda.h): host side. The kernels are in gpu/me_cuda_kernel.cuh
// (integer search) and gpu/subpel_kernel.cuh (sub-pel tables); doc/GPU.md describes the design.
//
// One call, in the order of search_on_device()'s stages:
//   send_step_order  stage 2's step order, when the search range changed
//   make_resident    every reference on the device with its padded copy and 4x4 block sums (pad_kernel and
//                    block_sum_kernel, made on the copy stream with its rows): found by its id (the encoder preloads
//                    each reconstruction, so this is its case), or sent whole now, its kernels waiting for the copy
//   stage_params     window centres and predictors into page-locked memory and on to the device (one DMA; its
//                    event only where no rows of the current picture follow it on the copy stream)
//   launch_bands     the picture in bands of macroblock rows: per band, its rows of the current picture sent to the
//                    device (one DMA, straight from the caller's rows where page_lock() locked them, else from a
//                    page-locked copy the calling thread makes first), then one integer kernel per reference
//                    after it, which writes its candidates into device memory (for the tables) and into the
//                    page-locked answer
//   launch_tables    the sub-pel tables of each band after its integer kernel and the uploads
//   join             one event after everything: what completing the call waits for and times
//   answer           views of the page-locked buffers; the caller waits for rows as it reaches them
//                    (wait_rows), or the call completes here and copies out
// Any request the contract allows takes this path; the encoder's (references resident, zero copy, progressive) is
// the one it is built for. A CUDA error switches the object to the twin for good (same candidates). The class is
// declared in gpu/cuda_search.h; a search queued ahead of its picture is in gpu/me_cuda_ahead.cu.
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
#include <stdexcept>
#include <string>
#include <vector>

#include "common/dsp.h"
#include "common/frame.h"
#include "common/version.h"
#include "gpu/cuda_resources.h"
#include "gpu/cuda_search.h"
#include "gpu/cost_order_kernel.cuh"  // the launch order (also compiled on the host by tests)
#include "gpu/me_cuda_kernel.cuh"  // kernel, geometry, KernelArgs (also compiled on the host by tests)
#include "gpu/me_twin.h"
#include "gpu/subpel_kernel.cuh"  // sub-pel tables (also compiled on the host by tests)

namespace gme {

namespace {

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

}  // namespace

namespace cuda_search {

CudaSearch::CudaSearch(int device, const cudaDeviceProp& prop, StartupTrace& trace, const DspFuncs& dsp)
    : device_(device), copy_rows_(dsp.copy_rows), twin_(dsp) {
  trace.step("streams and events");
  int clock_khz = 0, driver = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  sms_ = prop.multiProcessorCount;
  clock_khz_ = clock_khz;
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
  int table_blocks_per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&table_blocks_per_sm, subpel_table_kernel, kSubpelThreads,
                                                           kSubpelSmemBytes));
  table_min_blocks_ = kTableWaves * std::max(1, table_blocks_per_sm) * prop.multiProcessorCount;
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
  victim->sums.reserve(sum_plane_elements(plane.width, plane.height) * sizeof(uint16_t));
  victim->padded.reserve(sum_plane_elements(plane.width, plane.height));
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
  copy_rows_(r.staging.as<uint8_t>() + static_cast<size_t>(y0) * r.width, r.width, src.row(y0), src.stride, r.width,
             rows);
}

void CudaSearch::send_current_rows(Resident& r, const Plane& src, int y0, int rows) {
  const uint8_t* first = src.row(y0);
  if (!locks_->covers(first, src.row(y0 + rows - 1) + r.width)) {
    stage_rows(r, src, y0, rows);
    send_rows(r, y0, rows, false);
    return;
  }
  CUDA_CHECK(cudaMemcpy2DAsync(r.pixels.as<uint8_t>() + static_cast<size_t>(y0) * r.width, r.width, first, src.stride,
                               r.width, rows, cudaMemcpyHostToDevice, copy_.get()));
  r.sums_ready = false;
}

// Rows arrive in order from row 0, so after rows [y0, y0 + rows) the padded copy of those rows (pad_kernel) and the
// block sums of rows [y0 - 3, y0 + rows - 3) can be made (block_sum_kernel), the border above the picture with the
// first rows and the border below with the last; on the copy stream, so that whatever waits for the rows (an event
// recorded after this) waits for them too.
void CudaSearch::send_rows(Resident& r, int y0, int rows, bool with_sums) {
  const size_t off = static_cast<size_t>(y0) * r.width;
  CUDA_CHECK(cudaMemcpyAsync(r.pixels.as<uint8_t>() + off, r.staging.as<uint8_t>() + off,
                             static_cast<size_t>(rows) * r.width, cudaMemcpyHostToDevice, copy_.get()));
  if (!with_sums) {
    r.sums_ready = false;
    return;
  }
  if (y0 == 0) r.sums_ready = true;
  // The border's rows above the picture come with its first rows, those below with its last.
  const bool last = y0 + rows == r.height;
  const int p0 = y0 == 0 ? -kSumBorder : y0, p1 = last ? r.height + kSumBorder : y0 + rows;
  uint8_t* padded = r.padded.as<uint8_t>() + sum_origin(r.width);
  pad_kernel<<<p1 - p0, kSumThreads, 0, copy_.get()>>>(r.pixels.as<uint8_t>(), padded, r.width, r.height, p0);
  CUDA_CHECK_LAUNCH("pad_kernel");
  const int s0 = y0 == 0 ? -kSumBorder : y0 - 3, s1 = last ? r.height + kSumBorder - 3 : y0 + rows - 3;
  if (s1 > s0) {
    block_sum_kernel<<<s1 - s0, kSumThreads, 0, copy_.get()>>>(padded, r.sums.as<uint16_t>() + sum_origin(r.width),
                                                               r.width, s0);
    CUDA_CHECK_LAUNCH("block_sum_kernel");
  }
}

bool CudaSearch::ensure_sums(Resident& r) {
  if (r.sums_ready) return false;
  uint8_t* padded = r.padded.as<uint8_t>() + sum_origin(r.width);
  pad_kernel<<<r.height + 2 * kSumBorder, kSumThreads, 0, copy_.get()>>>(r.pixels.as<uint8_t>(), padded, r.width,
                                                                         r.height, -kSumBorder);
  CUDA_CHECK_LAUNCH("pad_kernel");
  block_sum_kernel<<<r.height + 2 * kSumBorder - 3, kSumThreads, 0, copy_.get()>>>(
      padded, r.sums.as<uint16_t>() + sum_origin(r.width), r.width, -kSumBorder);
  CUDA_CHECK_LAUNCH("block_sum_kernel");
  r.sums_ready = true;
  return true;
}

void CudaSearch::preload(const Plane& plane, int id) {
  std::lock_guard<std::mutex> lock(m_);
  if (ahead_.active && id >= 0 && id == ahead_.growing_id) {  // a search queued ahead is waiting for these rows
    feed_rows(plane, id, plane.height);
    return;
  }
  if (failed_ || id < 0) return;
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
    send_rows(*r, 0, plane.height, true);
    CUDA_CHECK(cudaEventRecord(r->landed.get(), copy_.get()));
    r->landing = true;
  } catch (const CudaError& e) {
    fall_back(e);
  }
}

void CudaSearch::search(const PictureSearchRequest& req, PictureCandidates& out) {
  check_search_request(req);  // bad requests throw std::invalid_argument on either path
  std::unique_lock<std::mutex> lock(m_);
  // A call taken up while its reference grew: the rest of that reference comes from the threads still coding it.
  launched_.wait(lock, [&] { return !feeding_ || failed_; });
  drain();  // a progressive answer still landing: its buffers are about to be reused
  const bool queued = ahead_.active && same_search_request(ahead_.req, req);
  // Any other search would read the growing reference as it is now.
  if (req.reference_grows && !queued)
    throw std::logic_error("CudaSearch::search: reference_grows, but no search queued ahead for this request");
  if (req.reference_grows && ahead_.rows_reported < ahead_.height) {
    if (!failed_) {
      try {
        adopt_growing(req, out);
        return;
      } catch (const CudaError& e) {
        fall_back(e);
      }
    }
    // The device failed: the twin answers in wait_rows(), once the reference is whole.
    fly_ = InFlight{};
    fly_.active = fly_.growing = true;
    fly_.req = req;
    fly_.out = &out;
    fly_.mb_height = req.mb_height;
    fly_.band_start = {0, req.mb_height};
    feeding_ = true;
    return;
  }
  if (ahead_.active) {
    if (!failed_ && queued) {
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
  std::unique_lock<std::mutex> lock(m_);
  if (!fly_.active) return INT32_MAX;
  if (rows <= fly_.ready_rows) return fly_.ready_rows;
  // A call taken up while its reference grows: its bands launch as the reference's rows are reported.
  // The last band's rows: the whole call, joined once the reference is whole (finish_feeding).
  const int want = std::min(rows, fly_.mb_height);
  const bool whole = want > fly_.band_start[fly_.band_start.size() - 2];
  launched_.wait(lock, [&] { return !feeding_ || failed_ || (!whole && launched_rows() >= want); });
  if (failed_ && fly_.growing) {  // the twin answers once the whole reference is final
    launched_.wait(lock, [&] { return ahead_.rows_reported >= ahead_.height; });
    twin_.search(fly_.req, *fly_.out);
    fly_.active = fly_.growing = feeding_ = ahead_.active = false;
    launched_.notify_all();
    return INT32_MAX;
  }
  if (!fly_.active) return INT32_MAX;
  try {
    complete_rows(rows);
  } catch (const CudaError& e) {
    // As in search(): the rows still outstanding come from the twin, and so does everything after.
    fall_back(e);
    if (fly_.growing) {
      launched_.wait(lock, [&] { return ahead_.rows_reported >= ahead_.height; });
      fly_.active = fly_.growing = feeding_ = ahead_.active = false;
      launched_.notify_all();
    }
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
  if (!fly_.growing) fly_.active = false;  // a call being fed is answered by the twin in wait_rows()
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
    timed_slot_ = c.timed ? fly_.slot : -1;  // its times are read when asked (last_timing)
    timed_uploaded_ = fly_.uploaded;
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

GpuSearchTiming CudaSearch::last_timing() {
  std::lock_guard<std::mutex> lock(m_);
  if (timed_slot_ < 0 || failed_) return timing_;
  try {
    CUDA_CHECK(cudaSetDevice(device_));
    const CallSlot& c = slots_[timed_slot_];
    timing_.total_ms = elapsed_ms(c.start, c.end);
    timing_.kernel_ms = elapsed_ms(c.kernel_start, c.end);
    if (timed_uploaded_) {  // done before the kernels that waited for it, but c.end may follow them on their stream
      CUDA_CHECK(cudaEventSynchronize(c.uploaded.get()));
      timing_.upload_ms = elapsed_ms(c.start, c.uploaded);
    }
  } catch (const CudaError& e) {
    fall_back(e);
  }
  timed_slot_ = -1;
  return timing_;
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
  out.floors_view = nullptr;
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
      send_rows(ref, 0, ref.height, true);
      res.refs_sent = true;
    }
  }
  // A reference that is this call's current picture (the same id): it cannot wait for the current picture's DMA
  // after the last band, so the whole picture goes now, as a reference does.
  if (res.cur_pending && std::find(res.in_use.begin() + 1, res.in_use.end(), res.in_use[0]) != res.in_use.end()) {
    stage_rows(*res.in_use[0], *req.cur, 0, req.cur->height);
    send_rows(*res.in_use[0], 0, req.cur->height, true);
    res.cur_pending = false;
    res.refs_sent = true;
  }
  // After that case: a reference's sums come from the pixels it holds now.
  for (size_t r = 1; r < res.in_use.size(); ++r)
    if (ensure_sums(*res.in_use[r])) res.refs_sent = true;
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

// Window centres, then penalty predictors, ref-major as in the request, sent to the device on the copy stream: each
// block reads its 8 bytes there instead of over PCIe at its start. Every kernel waits for `params_sent` or, where
// the current picture's rows follow on the copy stream (rows_follow), for its band's rows' event, which covers this
// DMA: then `params_sent` is not recorded (one API call less before the first launch). Where every centre and
// predictor is (0, 0) (the encoder with GPUSearchCenter 0) nothing is staged or sent: the kernels read a resident
// buffer of zeros, and stay as they are (a null pointer would need a test in them, which costs the K 8 kernel
// registers).
void CudaSearch::stage_params(const PictureSearchRequest& req, CallSlot& c, bool rows_follow) {
  static_assert(sizeof(MV) == sizeof(short2), "MV is read as short2");
  const size_t n = req.centre.size();
  c.params_zero = all_zero_vectors(req.centre) && all_zero_vectors(req.penalty_pred);
  if (c.params_zero) {
    const size_t bytes = 2 * n * sizeof(MV);
    if (zero_params_bytes_ < bytes) {  // zeroed on the copy stream: the kernels' waits on it cover this
      d_zero_params_.reserve(bytes);
      CUDA_CHECK(cudaMemsetAsync(d_zero_params_.as<void>(), 0, bytes, copy_.get()));
      zero_params_bytes_ = bytes;
    }
    if (!rows_follow) CUDA_CHECK(cudaEventRecord(c.params_sent.get(), copy_.get()));
    return;
  }
  c.params.reserve(2 * n * sizeof(MV));
  c.d_params.reserve(2 * n * sizeof(MV));
  std::memcpy(c.params.as<MV>(), req.centre.data(), n * sizeof(MV));
  std::memcpy(c.params.as<MV>() + n, req.penalty_pred.data(), n * sizeof(MV));
  CUDA_CHECK(cudaMemcpyAsync(c.d_params.as<void>(), c.params.as<void>(), 2 * n * sizeof(MV), cudaMemcpyHostToDevice,
                             copy_.get()));
  if (!rows_follow) CUDA_CHECK(cudaEventRecord(c.params_sent.get(), copy_.get()));
}

void CudaSearch::reserve_outputs(const PictureSearchRequest& req, int bands, CallSlot& c) {
  const size_t n = req.refs.size() * static_cast<size_t>(req.mb_width) * req.mb_height;
  const size_t out_bytes = n * kNumPartitions * req.top_k * sizeof(Candidate);
  d_out_.reserve(out_bytes);
  h_out_.reserve(out_bytes);
  // Growing drops what the slot's order buffers held: wait for an order kernel still reading them, and forget its
  // order.
  const size_t num_mbs = static_cast<size_t>(req.mb_width) * req.mb_height;
  const size_t entries = cost_order_entries(static_cast<int>(num_mbs), kCostOrderMaxBands);
  if (c.cost.size() < n * sizeof(uint32_t) || c.slot_mb.size() < entries * sizeof(int)) {
    if (c.cost_order_queued) CUDA_CHECK(cudaEventSynchronize(c.cost_order.get()));
    c.cost_order_width = 0;
    c.cost.reserve(n * sizeof(uint32_t));
    c.slot_mb.reserve(entries * sizeof(int));
  }
  // Where split macroblocks meet, per launch (reference and band); the arrival counts start at zero, on the copy
  // stream before anything the kernels wait for (this comes before stage_params).
  const size_t launches = splits_windows(req.top_k) ? req.refs.size() * static_cast<size_t>(bands) : 0;
  c.split_keys.reserve(launches * kMaxSplit * 2 * kNumPartitions * req.top_k * sizeof(uint64_t));
  const size_t meet_bytes = launches * kMaxSplit * kMeetWords * sizeof(uint32_t);
  if (c.split_meet.size() < meet_bytes) {
    c.split_meet.reserve(meet_bytes);
    CUDA_CHECK(cudaMemsetAsync(c.split_meet.as<void>(), 0, c.split_meet.size(), copy_.get()));
  }
  if (req.subpel_metric >= 0) {
    d_tab_.reserve(n * req.subpel_ranks * sizeof(SubpelTable));
    h_tab_.reserve(n * req.subpel_ranks * sizeof(SubpelTable));
    d_floor_.reserve(n * sizeof(SubpelFloors));
    h_floor_.reserve(n * sizeof(SubpelFloors));
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
  const short2* params = (c.params_zero ? d_zero_params_ : c.d_params).as<short2>();
  const int row0 = band_start[b], row1 = band_start[b + 1];
  // An order with split macroblocks serves only a kernel that splits them; one that does has spare blocks.
  const bool splits = splits_windows(req.top_k);
  const bool ordered = c.cost_order_width == req.mb_width && c.cost_order_bands == band_start &&
                       (splits || !c.cost_order_splits);
  const int band_mbs = (row1 - row0) * req.mb_width;
  for (int r = 0; r < num_refs; ++r) {
    const size_t i = launches->size();
    cudaStream_t st = b == 0 ? first_.get() : compute_[i % kStreams].get();
    for (cudaEvent_t e : waits) CUDA_CHECK(cudaStreamWaitEvent(st, e, 0));
    if (c.cost_order_queued) CUDA_CHECK(cudaStreamWaitEvent(st, c.cost_order.get(), 0));
    if (i == 0 && c.timed) CUDA_CHECK(cudaEventRecord(c.kernel_start.get(), st));
    KernelArgs a = kernel_args(req, g);
    a.cur = cur.pixels.as<uint8_t>();
    a.ref = res.in_use[1 + r]->pixels.as<uint8_t>();
    a.sums = res.in_use[1 + r]->sums.as<uint16_t>() + sum_origin(res.in_use[1 + r]->width);
    a.padded = res.in_use[1 + r]->padded.as<uint8_t>() + sum_origin(res.in_use[1 + r]->width);
    a.mb_first = row0 * req.mb_width;
    a.centre = params + static_cast<size_t>(r) * num_mbs;
    a.pred = params + req.centre.size() + static_cast<size_t>(r) * num_mbs;
    a.order = d_order_.as<uint32_t>();
    a.out = d_out_.as<uint2>() + static_cast<size_t>(r) * num_mbs * per_mb;
    a.out_host = h_out_.device_as<uint2>() + static_cast<size_t>(r) * num_mbs * per_mb;
    a.cost = c.cost.as<uint32_t>() + static_cast<size_t>(r) * num_mbs;
    if (ordered) {  // the band's blocks in the launch order, split macroblocks and spare blocks among them
      a.slot_mb = c.slot_mb.as<int>() + a.mb_first + b * kMaxSplit;
      if (splits) {
        a.split_keys = c.split_keys.as<uint64_t>() + i * kMaxSplit * 2 * kNumPartitions * req.top_k;
        a.split_meet = c.split_meet.as<uint32_t>() + i * kMaxSplit * kMeetWords;
      }
    }
    kKernels[req.top_k - 1]<<<band_mbs + (ordered && splits ? kMaxSplit : 0), kThreads, g.smem, st>>>(a);
    CUDA_CHECK_LAUNCH("integer_search_kernel");
    CUDA_CHECK(cudaEventRecord(done_event(c.done, i).get(), st));
    launches->push_back({r, b});
  }
}

// Per band: its rows of the current picture sent (unless resident: send_current_rows), then its kernels, one per
// reference, on their own streams (band 0 on the urgent one) after those rows, each followed by its completion
// event. The kernels read the current picture in device memory: a band's DMA costs less than its blocks' reads of
// host memory over PCIe, each at the start of a block.
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
    std::vector<cudaEvent_t> band_waits = waits;
    if (res.cur_pending) {  // the rows' event follows the parameters' DMA on the copy stream
      send_current_rows(cur, *req.cur, 16 * row0, 16 * (row1 - row0));
      band_waits.push_back(pool_event(c.cur_rows, static_cast<size_t>(b), cudaEventDisableTiming).get());
      CUDA_CHECK(cudaEventRecord(band_waits.back(), copy_.get()));
    } else {
      band_waits.push_back(c.params_sent.get());
    }
    launch_integer_band(req, res, band_start, b, c, band_waits, &launches);
  }
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
  sa.floors = d_floor_.as<SubpelFloors>() + static_cast<size_t>(l.ref) * num_mbs;
  const int band_mbs = (row1 - row0) * req.mb_width;
  set_subpel_ranks_per_block(sa, subpel_ranks_per_block(band_mbs, sa.ranks, table_min_blocks_));
  const int blocks = band_mbs * sa.blocks_per_mb;
  // The band's floors start at UINT32_MAX: the kernel takes each macroblock's minimum over its ranks into them.
  const size_t floor_off = (static_cast<size_t>(l.ref) * num_mbs + sa.mb_first) * sizeof(SubpelFloors);
  const size_t floor_bytes = static_cast<size_t>(band_mbs) * sizeof(SubpelFloors);
  CUDA_CHECK(cudaMemsetAsync(d_floor_.as<uint8_t>() + floor_off, 0xFF, floor_bytes, st));
  subpel_table_kernel<<<blocks, kSubpelThreads, kSubpelSmemBytes, st>>>(sa);
  CUDA_CHECK_LAUNCH("subpel_table_kernel");
  const size_t off = (static_cast<size_t>(l.ref) * num_mbs + sa.mb_first) * ranks * sizeof(SubpelTable);
  CUDA_CHECK(cudaMemcpyAsync(h_tab_.as<uint8_t>() + off, d_tab_.as<uint8_t>() + off,
                             static_cast<size_t>(band_mbs) * ranks * sizeof(SubpelTable),
                             cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaMemcpyAsync(h_floor_.as<uint8_t>() + floor_off, d_floor_.as<uint8_t>() + floor_off, floor_bytes,
                             cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaEventRecord(pool_event(c.tab, i).get(), st));
}

// Where every band fits the order kernel: it ranks the bands' macroblocks by the cycles this call's blocks took, once
// they are all done, on a stream of its own (the tables and the answer do not wait for it).
void CudaSearch::queue_cost_order(const PictureSearchRequest& req, const std::vector<int>& band_start,
                                  size_t launches, CallSlot& c) {
  c.cost_order_width = 0;  // none, unless ranked below
  CostOrderBands bands;
  bands.count = static_cast<int>(band_start.size()) - 1;
  if (bands.count > kCostOrderMaxBands || launches == 0) return;
  int widest = 0;
  for (int b = 0; b <= bands.count; ++b) {
    bands.start_mb[b] = band_start[b] * req.mb_width;
    if (b > 0) widest = std::max(widest, bands.start_mb[b] - bands.start_mb[b - 1]);
  }
  if (widest > kCostOrderMaxMbs) return;
  for (size_t i = 0; i < launches; ++i) CUDA_CHECK(cudaStreamWaitEvent(order_.get(), done_event(c.done, i).get(), 0));
  const int chunks = (widest + kCostOrderThreads - 1) / kCostOrderThreads;
  // The blocks the GPU runs at once: what a split macroblock's share is measured against, and the mixed order's
  // first wave.
  const int wave = sms_ * min_blocks_per_sm(req.top_k);
  const bool splits = splits_windows(req.top_k);
  cost_order_kernel<<<bands.count * chunks, kCostOrderThreads,
                      kCostOrderThreads * sizeof(uint64_t) + widest * sizeof(uint32_t), order_.get()>>>(
      c.cost.as<uint32_t>(), static_cast<int>(req.refs.size()), req.mb_width * req.mb_height, bands, chunks, wave,
      splits, mixes_order(req.top_k) ? kMixRun : 0, c.slot_mb.as<int>());
  CUDA_CHECK_LAUNCH("cost_order_kernel");
  CUDA_CHECK(cudaEventRecord(c.cost_order.get(), order_.get()));
  c.cost_order_queued = true;
  c.cost_order_splits = splits;
  c.cost_order_width = req.mb_width;
  c.cost_order_bands = band_start;
}

// One event after every band, table and upload of the call: completing the whole call waits for it (one
// synchronisation instead of one per launch), and a completed call has its staging buffers free for the next. A call
// of one launch without tables whose kernel waited for every upload of the call records it on that launch's stream,
// right after the kernel: the join stream's waits would add a hop between streams to a small picture's call.
void CudaSearch::join(const PictureSearchRequest& req, const std::vector<int>& band_start,
                      std::vector<Launch> launches, int slot, bool uploaded, bool uploads_before_kernels) {
  CallSlot& c = slots_[slot];
  const bool tables = req.subpel_metric >= 0;
  if (launches.size() == 1 && !tables && uploads_before_kernels) {
    CUDA_CHECK(cudaEventRecord(c.end.get(), first_.get()));  // launch_integer_band: band 0's stream
  } else {
    for (size_t i = 0; i < launches.size(); ++i) {
      CUDA_CHECK(cudaStreamWaitEvent(join_.get(), done_event(c.done, i).get(), 0));
      if (tables) CUDA_CHECK(cudaStreamWaitEvent(join_.get(), pool_event(c.tab, i).get(), 0));
    }
    if (uploaded) CUDA_CHECK(cudaStreamWaitEvent(join_.get(), c.uploaded.get(), 0));
    CUDA_CHECK(cudaEventRecord(c.end.get(), join_.get()));
  }
  queue_cost_order(req, band_start, launches.size(), c);  // off the answer's path
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
  last_.range = req.search_range;
}

BlockCycles CudaSearch::last_block_cycles() {
  std::lock_guard<std::mutex> lock(m_);
  BlockCycles b;
  if (last_.slot < 0 || last_.refs == 0) return b;
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaDeviceSynchronize());
  b.cycles.resize(static_cast<size_t>(last_.refs) * static_cast<size_t>(last_.mbs));
  CUDA_CHECK(cudaMemcpy(b.cycles.data(), slots_[last_.slot].cost.as<uint32_t>(), b.cycles.size() * sizeof(uint32_t),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b.blocks_per_sm, kKernels[last_.top_k - 1], kThreads,
                                                           geometry(last_.range).smem));
  b.sms = sms_;
  b.clock_mhz = clock_khz_ / 1000.0;
  return b;
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
      out.floors.clear();
      out.floors_view = h_floor_.as<SubpelFloors>();
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
      out.floors.resize(out.subpel_floor_count());
      std::memcpy(out.floors.data(), h_floor_.as<void>(), out.floors.size() * sizeof(SubpelFloors));
    }
  }
}

void CudaSearch::search_on_device(const PictureSearchRequest& req, PictureCandidates& out) {
  CUDA_CHECK(cudaSetDevice(device_));
  timing_ = GpuSearchTiming{};
  timed_slot_ = -1;
  shape_answer(req, out);
  if (req.refs.empty()) return;
  const int slot = next_slot_;
  next_slot_ ^= 1;
  CallSlot& c = slots_[slot];
  c.timed = time_calls_;
  if (c.timed) CUDA_CHECK(cudaEventRecord(c.start.get(), copy_.get()));
  const bool order_sent = send_step_order(req.search_range);  // before the references: `refs` then covers it
  const Residency res = make_resident(req, c);
  const std::vector<int> band_start = band_starts(req.mb_height, bands_for(req.mb_width * req.mb_height));
  reserve_outputs(req, static_cast<int>(band_start.size()) - 1, c);
  stage_params(req, c, res.cur_pending);  // the current picture's rows follow: their events cover the parameters
  std::vector<Launch> launches = launch_bands(req, res, band_start, order_sent, c);
  if (req.subpel_metric >= 0) {
    std::vector<cudaEvent_t> waits;
    if (res.cur_pending || res.refs_sent) waits.push_back(c.uploaded.get());
    for (size_t i = 0; i < launches.size(); ++i) launch_table(req, res, band_start, launches, i, c, waits);
  }
  join(req, band_start, std::move(launches), slot, res.cur_pending || res.refs_sent, /*uploads_before_kernels=*/true);
  remember_call(req, res);
  answer(req, out);
}

}  // namespace cuda_search

namespace {

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
    cuda_search::StartupTrace trace;
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
    const char* connections = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");  // its cost grows with them (gpu_me.h)
    trace.step(("context creation (" + std::string(connections ? connections : "the driver's default") +
                " connections)").c_str());
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    const std::string unusable = unusable_device_reason(device, prop);
    if (!unusable.empty()) {
      if (why) *why = unusable;
      return nullptr;
    }
    auto s = std::make_unique<cuda_search::CudaSearch>(device, prop, trace, dsp);
    if (why) why->clear();
    return s;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace gme
