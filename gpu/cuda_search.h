// The CUDA picture-level search object (gpu/me_cuda.h's create_cuda_search makes it): its declaration, shared by
// the host-side files of the CUDA path, gpu/me_cuda.cu (start-up, residency, one call's stages) and
// gpu/me_cuda_ahead.cu (a search queued ahead, which starts on the rows of its reference that are final). Private
// to gpu/: nothing outside includes it. doc/GPU.md describes the design.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/dsp.h"
#include "common/frame.h"
#include "gpu/bands.h"
#include "gpu/cuda_resources.h"
#include "gpu/me_cuda.h"
#include "gpu/me_twin.h"
#include "gpu/page_locks.h"

namespace gme {
namespace cuda_search {

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
// ---- Bands (gpu/bands.h) --------------------------------------------------------------------------------------------
// kStreams compute streams, so 1080p's 8 bands never queue behind one another.
constexpr int kStreams = 8;

class CudaSearch final : public GpuPictureSearch {
 public:
  CudaSearch(int device, const cudaDeviceProp& prop, StartupTrace& trace, const DspFuncs& dsp);
  ~CudaSearch() override {
    cudaDeviceSynchronize();  // no DMA (a call in flight, a preload) into or out of buffers about to be freed
    locks_->detach();         // its copy stream goes with it; the locks' handles may outlive it
  }
  void search(const PictureSearchRequest& req, PictureCandidates& out) override;
  const char* name() const override { return name_.c_str(); }
  bool runs_beside_cpu() const override { return true; }
  GpuSearchTiming last_timing() override;
  void time_calls(bool on) override {
    std::lock_guard<std::mutex> lock(m_);
    time_calls_ = on;
  }
  BlockCycles last_block_cycles() override;
  double peak_absdiff_per_s() const override { return peak_; }
  std::string device_description() const override { return desc_; }
  int wait_rows(int rows) override;
  void preload(const Plane& plane, int id) override;
  void set_threads(int threads) override { twin_.set_threads(threads); }
  bool search_ahead(const PictureSearchRequest& req, int growing) override;
  void reference_rows(const Plane& plane, int id, int rows) override;
  std::shared_ptr<void> page_lock(const void* data, size_t bytes) override {
    return failed_ ? nullptr : locks_->lock(data, bytes);
  }

 private:
  // A picture kept on the device (luma, no border), found again by its content id.
  struct Resident {
    int id = -1;
    int width = 0, height = 0;
    uint64_t last_use = 0;
    DeviceBuffer pixels;
    DeviceBuffer sums;     // its 4x4 block sums (block_sum_kernel), made as a reference's rows arrive
    DeviceBuffer padded;   // the picture with a replicated border (pad_kernel), made with the sums
    bool sums_ready = false;  // sums and padded are those of its pixels (rows sent as a current picture have neither)
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
    bool timed = false;  // this call records start and kernel_start (time_calls)
    std::vector<std::unique_ptr<Event>> done, tab;  // per launch: integer kernel, tables (with their download)
    std::vector<std::unique_ptr<Event>> cur_rows;   // per band: its rows of the current picture sent
    PinnedBuffer params;   // window centres and predictors, staged
    DeviceBuffer d_params; // the same on the device (sent on the copy stream, then `params_sent`)
    Event params_sent{cudaEventDisableTiming};
    bool params_zero = false;  // every centre and predictor (0, 0): the kernels read d_zero_params_, nothing sent
    // The launch order (gpu/cost_order.h): a call's blocks write their macroblocks' cycles to `cost`; at its join,
    // cost_order_kernel ranks them band by band into `slot_mb` (then `cost_order`), and the slot's next call (two
    // calls later: the next one's kernels never wait for the ranking) launches in that order where its bands are
    // the same. Its launches wait for `cost_order`: the kernel reads `cost`, which they write.
    DeviceBuffer cost, slot_mb;
    Event cost_order{cudaEventDisableTiming};
    bool cost_order_queued = false;   // an order kernel was launched: cost_order is recorded
    bool cost_order_splits = false;   // the order may split macroblocks (splits_windows of its call's list length)
    int cost_order_width = 0;         // the macroblock width and bands slot_mb orders (width 0: none)
    std::vector<int> cost_order_bands;
    // Where a launch's split macroblocks meet (KernelArgs::split_keys, split_meet): kMaxSplit pairs a launch.
    DeviceBuffer split_keys, split_meet;
  };
  // The last call whose answer the buffers hold: a search queued ahead writes a band of them only after this
  // call's work on that band (kernels, tables, downloads), and keeps its pictures.
  struct LastCall {
    int slot = -1;  // -1: none yet
    std::vector<Launch> launches;
    std::vector<Resident*> in_use;
    bool tables = false;
    int refs = 0, mbs = 0, top_k = 0, subpel_metric = -1, subpel_ranks = 0;  // the answer's layout
    int range = 0;
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
    bool growing = false;  // taken up from a search queued ahead while its reference was growing (feeding_)
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
    int rows_reported = 0;       // of the growing reference, by reference_rows() (also after a device failure)
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
  void stage_params(const PictureSearchRequest& req, CallSlot& c, bool rows_follow = false);
  void reserve_outputs(const PictureSearchRequest& req, int bands, CallSlot& c);
  // After a call's integer launches: cost_order_kernel on their costs, for the next call with the same bands.
  void queue_cost_order(const PictureSearchRequest& req, const std::vector<int>& band_start, size_t launches,
                        CallSlot& c);
  std::vector<Launch> launch_bands(const PictureSearchRequest& req, const Residency& res,
                                   const std::vector<int>& band_start, bool order_sent, CallSlot& c);
  // Band b's integer kernels, one per reference, appended to *launches; each stream first waits for `waits`.
  void launch_integer_band(const PictureSearchRequest& req, const Residency& res, const std::vector<int>& band_start,
                           int b, CallSlot& c, const std::vector<cudaEvent_t>& waits, std::vector<Launch>* launches);
  // Launch i's sub-pel tables and their download; the stream first waits for `waits` and launch i's kernel.
  void launch_table(const PictureSearchRequest& req, const Residency& res, const std::vector<int>& band_start,
                    const std::vector<Launch>& launches, size_t i, CallSlot& c, const std::vector<cudaEvent_t>& waits);
  // uploads_before_kernels: every upload of the call is one its kernels wait for (search_on_device's calls).
  void join(const PictureSearchRequest& req, const std::vector<int>& band_start, std::vector<Launch> launches,
            int slot, bool uploaded, bool uploads_before_kernels = false);
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
  // search() with reference_grows, the growing reference not final: the call in flight from now on, its bands
  // launching as feed_rows() gets their rows (feeding_); finish_feeding() once the last band is launched.
  void adopt_growing(const PictureSearchRequest& req, PictureCandidates& out);
  void finish_feeding();
  // reference_rows() under m_ (preload() of the growing reference too).
  void feed_rows(const Plane& plane, int id, int rows);
  // The rows the launched bands of a call being fed cover.
  int launched_rows() const { return ahead_.band_start[static_cast<size_t>(ahead_.next_band)]; }

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
  // with_sums: the block sums and the padded copy of the rows too (a reference's; a current picture needs neither).
  void send_rows(Resident& r, int y0, int rows, bool with_sums);
  // Rows [y0, y0 + rows) of a current picture to r's device copy on the copy stream: by DMA straight from `src`
  // where its rows lie in memory locked by page_lock(), else staged (stage_rows) and sent (send_rows).
  void send_current_rows(Resident& r, const Plane& src, int y0, int rows);
  // A resident picture about to serve as a reference without its block sums and padded copy (sent as a current
  // picture): queues them on the copy stream and returns true (its kernels must wait for the copy stream, as for a
  // reference sent).
  bool ensure_sums(Resident& r);
  static const Event& pool_event(std::vector<std::unique_ptr<Event>>& pool, size_t i,
                                 unsigned flags = cudaEventDefault);
  // A band's completion, never timed: without a timestamp the event is cheaper to record, and the host records one
  // per band launch between staging the bands.
  static const Event& done_event(std::vector<std::unique_ptr<Event>>& pool, size_t i) {
    return pool_event(pool, i, cudaEventDisableTiming);
  }

  int device_ = 0;
  int sms_ = 0, clock_khz_ = 0;
  std::string name_, desc_;
  double peak_ = 0;
  // A sub-pel table launch has at least this many blocks where its macroblocks' ranks allow (kTableWaves waves of
  // the blocks the device holds at once; subpel_ranks_per_block): on an H100, a 640x480 band's macroblocks take
  // their 8 ranks in 4 blocks each, so that the first band lands as soon as with a block per rank, and 1920x1080's
  // bands after the first a block each.
  static constexpr int kTableWaves = 3;
  int table_min_blocks_ = 0;
  Stream copy_;
  Stream compute_[kStreams];
  Stream table_[kStreams];  // sub-pel tables: a band's tables start as soon as its own integer kernel ends
  // Band 0 (integer kernel and tables) on streams of the greatest priority: a progressive answer's macroblock loop
  // waits for it alone, while the other bands have the loop's whole duration to land.
  Stream first_{Stream::Urgent{}}, first_table_{Stream::Urgent{}};
  Stream join_;  // waits for every launch and upload of a call, then records its slot's `end`
  Event ev_order_;
  Stream order_;  // cost_order_kernel (CallSlot::cost)
  CallSlot slots_[2];
  int next_slot_ = 0;
  LastCall last_;
  Ahead ahead_;
  Event ahead_rows_;  // recorded after each send of a search queued ahead's growing reference
  std::vector<std::unique_ptr<Resident>> resident_;
  DeviceBuffer d_out_, d_order_, d_tab_, d_floor_;
  DeviceBuffer d_zero_params_;  // zeros for calls whose centres and predictors are all (0, 0)
  size_t zero_params_bytes_ = 0;
  PinnedBuffer h_out_, h_order_, h_tab_, h_floor_;
  int order_range_ = 0;  // the search range d_order_ holds the step order of (0: none yet)
  uint64_t clock_ = 0;
  CopyRowsFn copy_rows_;  // the staging copy of the host's function table
  std::shared_ptr<PageLocks> locks_ = std::make_shared<PageLocks>(device_, copy_.get());  // page_lock()'s ranges
  TwinPictureSearch twin_;  // top_k above kGpuMaxTopK, and everything after a device failure
  std::atomic<bool> failed_{false};  // set by wait_rows() or reference_rows() on a worker thread too
  GpuSearchTiming timing_;
  // The completed call whose device times last_timing() reads from its slot's events (-1: none, or read), and
  // whether it uploaded; a call that starts forgets them (its slot may be the one read).
  int timed_slot_ = -1;
  bool time_calls_ = false;
  bool timed_uploaded_ = false;
  InFlight fly_;
  // The public calls under m_: a search taken up while its reference grows (feeding_: ahead_ holds it, fly_ its
  // bands launched so far) gets that reference's rows from the threads coding the picture before, beside the
  // calls of the threads reading its answer (wait_rows) and the caller's next calls. wait_rows() waits on
  // launched_ for bands not launched yet.
  std::mutex m_;
  std::condition_variable launched_;
  bool feeding_ = false;
};

}  // namespace cuda_search
}  // namespace gme
