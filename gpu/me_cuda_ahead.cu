// The CUDA search's calls queued ahead (PictureIntegerSearch::search_ahead, reference_rows): the next picture's search
// queued while the picture before it, its newest reference, is still being coded, its bands starting as the
// reference's rows are reported final. gpu/me_cuda.cu has the rest of CudaSearch (gpu/cuda_search.h); doc/GPU.md,
// "The picture boundary, pipelined", describes the design.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "gpu/cuda_resources.h"
#include "gpu/cuda_search.h"
#include "me/me_interface.h"

namespace gme {
namespace cuda_search {

// It runs beside the call whose answer the buffers hold (last_): in the other call slot, on pictures that call does
// not use (the current one and the growing reference sent as the bands launch), and a band of it writes the
// answer's buffers only after last_'s work on that band, on the device, and once the caller reported rows that
// imply its macroblock loop left that band (reference_rows).
bool CudaSearch::search_ahead(const PictureSearchRequest& req, int growing) {
  std::lock_guard<std::mutex> lock(m_);
  // A search taken up while its reference grows is still the one in ahead_ (and the buffers' next writer).
  if (feeding_) return false;
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
    c.timed = time_calls_;
    if (c.timed) CUDA_CHECK(cudaEventRecord(c.start.get(), copy_.get()));
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
        send_rows(ref, 0, ref.height, true);
        a.res.refs_sent = true;
      }
      if ((!fresh || static_cast<int>(r) != growing) && ensure_sums(ref)) a.res.refs_sent = true;
    }
    if (a.res.refs_sent) CUDA_CHECK(cudaEventRecord(c.refs.get(), copy_.get()));
    for (Resident* r : a.res.in_use) settle(*r);
    // A search likely to be taken up while its reference grows: the next picture's rows wait for its bands, which
    // wait for the reference's rows their windows reach, so thinner bands let them start sooner.
    const int nbands =
        req.reference_grows ? std::min(kBands, req.mb_height) : bands_queued_ahead(req.mb_width * req.mb_height);
    a.band_start = band_starts(req.mb_height, nbands);
    reserve_outputs(req, static_cast<int>(a.band_start.size()) - 1, c);
    stage_params(req, c);
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
  std::lock_guard<std::mutex> lock(m_);
  feed_rows(plane, id, rows);
}

void CudaSearch::feed_rows(const Plane& plane, int id, int rows) {
  if (!ahead_.active || id != ahead_.growing_id) return;
  rows = std::min(rows, ahead_.height);
  if (rows > ahead_.rows_reported) {
    ahead_.rows_reported = rows;
    if (feeding_) launched_.notify_all();  // a device failure's wait for the whole reference (wait_rows)
  }
  if (failed_) return;
  const int bands = static_cast<int>(ahead_.band_start.size()) - 1;
  // Rows are sent when a band can start on them (and the last ones whatever the bands need).
  if (rows < ahead_.height && (ahead_.next_band >= bands || rows < ahead_.need[ahead_.next_band])) return;
  try {
    CUDA_CHECK(cudaSetDevice(device_));
    send_ahead_rows(plane, rows);
    launch_ahead_bands();
    if (feeding_) {
      for (size_t i = fly_.launches.size(); i < ahead_.launches.size(); ++i) fly_.launches.push_back(ahead_.launches[i]);
      // Joined once every band is launched and the reference is whole (resident for later calls).
      if (ahead_.next_band == static_cast<int>(ahead_.band_start.size()) - 1 && ahead_.rows_sent == ahead_.height)
        finish_feeding();
      launched_.notify_all();
    }
  } catch (const CudaError& e) {
    fall_back(e);
    launched_.notify_all();
  }
}

void CudaSearch::send_ahead_rows(const Plane& plane, int rows) {
  if (rows <= ahead_.rows_sent) return;
  Resident& r = *ahead_.res.in_use[1 + static_cast<size_t>(ahead_.growing)];
  stage_rows(r, plane, ahead_.rows_sent, rows - ahead_.rows_sent);
  send_rows(r, ahead_.rows_sent, rows - ahead_.rows_sent, true);
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
  send_current_rows(r, *ahead_.req.cur, ahead_.cur_rows_sent, rows - ahead_.cur_rows_sent);
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
    std::vector<cudaEvent_t> waits = {c.params_sent.get()};
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
  timed_slot_ = -1;
  ahead_.active = false;
  join(req, ahead_.band_start, std::move(ahead_.launches), ahead_.slot, true);
  remember_call(req, ahead_.res);
  answer(req, out);
}

// search() with reference_grows while the growing reference is not final: the answer is the call in flight now, with
// the bands launched so far; the others launch as their rows come (feed_rows), and the call is joined and
// remembered once the last one is (finish_feeding).
void CudaSearch::adopt_growing(const PictureSearchRequest& req, PictureCandidates& out) {
  CUDA_CHECK(cudaSetDevice(device_));
  shape_answer(req, out);
  launch_ahead_bands();
  timing_ = ahead_.timing;
  timed_slot_ = -1;
  feeding_ = true;
  fly_.active = true;
  fly_.growing = true;
  fly_.slot = ahead_.slot;
  fly_.launches = ahead_.launches;
  fly_.band_start = ahead_.band_start;
  fly_.mb_height = req.mb_height;
  fly_.ready_rows = 0;
  fly_.tables = req.subpel_metric >= 0;
  fly_.uploaded = true;
  answer(req, out);  // progressive and zero-copy (search_ahead asks for both): returns at once
}

void CudaSearch::finish_feeding() {
  CallSlot& c = slots_[ahead_.slot];
  CUDA_CHECK(cudaEventRecord(c.uploaded.get(), copy_.get()));
  const int ready = fly_.ready_rows;
  join(ahead_.req, ahead_.band_start, ahead_.launches, ahead_.slot, true);
  fly_.ready_rows = ready;
  fly_.growing = false;
  remember_call(ahead_.req, ahead_.res);
  ahead_.active = false;
  feeding_ = false;
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

}  // namespace cuda_search
}  // namespace gme
