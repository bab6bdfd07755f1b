#include "encoder/picture.h"

#include <errno.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>

#include "common/bitstream.h"
#include "common/cpu.h"
#include "common/halfpel.h"
#include "common/picture_trace.h"
#include "encoder/lambda.h"
#include "encoder/params_check.h"
#include "me/me_sources.h"
#include "encoder/mb_worker.h"
#include "encoder/slice.h"
#include "encoder/wavefront.h"
#include "common/quant.h"

namespace gme {
namespace {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// GPUIntegerME = 1: the picture-level search's request for P picture pp (the search started: picture_search_ready).
PictureSearchRequest integer_search_request(const EncoderState& s, const PictureParams& pp, const Frame& src,
                                            const std::vector<const Frame*>& refs) {
  const EncoderParams& p = s.p;
  const Lambdas lam = compute_lambdas(p, SliceType::P, pp.qp);
  std::vector<const Plane*> planes;
  std::vector<int> ids;
  for (const Frame* f : refs) { planes.push_back(&f->plane[0]); ids.push_back(f->id); }
  PictureSearchRequest req;
  req.cur = &src.plane[0];
  req.refs = planes;
  req.ref_ids = ids;
  req.mb_width = s.mb_w;
  req.mb_height = s.mb_h;
  req.search_range = p.search_range;
  req.top_k = p.gpu_top_k;
  req.zero_copy = true;  // the candidates are read during this picture only
  req.lambda_factor = lam.mf[0];
  const int nmb = s.mb_w * s.mb_h;
  req.centre.assign(static_cast<size_t>(nmb) * refs.size(), MV());
  if (p.gpu_search_center == 1 && static_cast<int>(s.prev_p_mv.size()) == nmb) {
    for (size_t r = 0; r < refs.size(); ++r)
      for (int m = 0; m < nmb; ++m) {
        const MV v = s.prev_p_mv[static_cast<size_t>(m)];
        // Full pel, rounded to nearest (halves up) as JM rounds its search centre.
        req.centre[r * nmb + m] = MV(((v.x + 2) >> 2) * 4, ((v.y + 2) >> 2) * 4);
      }
  }
  req.penalty_pred = req.centre;
  const PictureIntegerSearch& search = *s.picture_search;
  // Sub-pel distortions of the first GPUSubpelRanks candidates come with the candidates when a GPU computes them
  // (on the twin they would cost more than the refinement's own lazy evaluation, so only tests ask for them there).
  // One table metric serves both refinement stages when they agree, else the quarter-pel stage.
  const bool on_gpu = search.runs_beside_cpu();
  const int table_ranks = subpel_table_ranks(p.gpu_subpel_ranks, p.gpu_top_k, nmb, static_cast<int>(refs.size()));
  if (!p.disable_subpel_me && table_ranks > 0 &&
      (p.gpu_subpel_distortion == 2 || (p.gpu_subpel_distortion == 1 && on_gpu))) {
    req.subpel_metric = p.me_distortion_qpel;
    req.subpel_ranks = table_ranks;
  }
  // The macroblock loop starts on the first rows while the GPU still works on the last (encode_picture waits for
  // the rest before `cands` goes).
  req.progressive = true;
  return req;
}

// The integer-ME sources of a P picture (one per macroblock worker): the lazy fast full search (GPUIntegerME = 0),
// or the picture-level search (GPU or its twin) followed by re-ranking with the exact predictors (GPUIntegerME = 1).
std::unique_ptr<CandidateSourceFactory> make_integer_sources(EncoderState& s, const PictureParams& pp,
                                                             const Frame& src, const std::vector<const Frame*>& refs,
                                                             PictureCandidates& cands, double* seconds,
                                                             bool reference_grows) {
  const EncoderParams& p = s.p;
  const Lambdas lam = compute_lambdas(p, SliceType::P, pp.qp);
  if (p.gpu_integer_me == 0) {
    std::vector<const Plane*> planes;
    for (const Frame* f : refs) planes.push_back(&f->plane[0]);
    FullFastOptions opt;
    opt.rdo_low_complexity = p.rd_optimization == 0;
    opt.level_idc = p.level_idc;
    return fullfast_sources(src.plane[0], planes, p.search_range, lam.mf[0], s.dsp, opt);
  }
  const auto t0 = Clock::now();
  PictureIntegerSearch& search = picture_search_ready(s);
  PictureSearchRequest req = integer_search_request(s, pp, src, refs);
  req.reference_grows = reference_grows;
  picture_trace("search_call", pp.index);
  search.search(req, cands);
  picture_trace("search_returned", pp.index);
  *seconds += seconds_since(t0);
  return rerank_sources(cands, s.mb_w, lam.mf[0], std::move(req.penalty_pred), &search);
}

}  // namespace

RoundingConfig rounding_config(const EncoderParams& p) {
  RoundingConfig rc;
  rc.adaptive = p.adaptive_rounding;
  rc.fixed = p.adapt_rounding_fixed;
  rc.period = p.adapt_rnd_period;
  rc.chroma = p.adapt_rnd_chroma;
  rc.weight_i = p.adapt_rnd_wfactor_i_ref;
  rc.weight_p = p.adapt_rnd_wfactor_p_ref;
  return rc;
}

void init_encoder_state(EncoderState& s, const EncoderParams& p, PictureSearchFactory make_search) {
  const std::vector<ParamProblem> problems = check_params(p);
  if (!problems.empty()) throw std::runtime_error(problems.front().text());
  s.p = p;
  s.rounding = RoundingState(rounding_config(p));
  const int coded_w = (p.source_width + 15) / 16 * 16;
  const int coded_h = (p.source_height + 15) / 16 * 16;
  s.mb_w = coded_w / 16;
  s.mb_h = coded_h / 16;
  s.seq = make_sequence_header(p, coded_w, coded_h);
  if (p.threads < 0) throw std::runtime_error("Threads: expected 0 (every core) or a count >= 1");
  s.threads = resolve_thread_count(p.threads);
  s.rows = std::make_unique<RowScheduler>(s.threads);
  for (PictureSlot& slot : s.slots) {
    slot.workers.clear();
    for (int i = 0; i < s.threads; ++i) slot.workers.push_back(std::make_unique<MbWorker>());
    slot.mbs.assign(static_cast<size_t>(s.mb_w) * s.mb_h, MbInfo());
  }
  dsp_init(cpu_flags_for(p.no_simd), s.dsp);
  s.mbs.assign(static_cast<size_t>(s.mb_w) * s.mb_h, MbInfo());
  s.rec = std::make_shared<Frame>();
  s.rec->alloc(coded_w, coded_h, p.source_width, p.source_height);
  if (p.gpu_integer_me == 1) {
    if (!make_search) throw std::runtime_error("GPUIntegerME = 1: the encoder was given no picture-level search backend");
    s.make_picture_search = std::move(make_search);
    const int device = p.gpu_device;
    std::string* why = &s.pending_why;
    const PictureSearchFactory* make = &s.make_picture_search;
    const DspFuncs* dsp = &s.dsp;
    s.pending_search = std::async(std::launch::async, [make, device, dsp, why] { return (*make)(device, *dsp, why); });
    s.me_path = "gpu: starting CUDA device " + std::to_string(device);
  } else {
    s.me_path = "cpu fast full search";
  }
}

int subpel_table_ranks(int gpu_subpel_ranks, int gpu_top_k, int num_mbs, int num_refs) {
  const size_t per_rank = sizeof(SubpelTable) * static_cast<size_t>(std::max(1, num_mbs)) * std::max(1, num_refs);
  const int fit = static_cast<int>(std::min<size_t>(kSubpelTableBudget / per_rank, 16));
  return std::max(0, std::min({gpu_subpel_ranks, gpu_top_k, fit}));
}

PictureIntegerSearch& picture_search_ready(EncoderState& s) {
  if (!s.picture_search && s.pending_search.valid()) {
    s.picture_search = s.pending_search.get();
    s.picture_search->set_threads(s.threads);  // the twin's rows on every thread the encode has
    if (!s.pending_why.empty()) {
      // The program's own name (lencod, bench_gpu, ...) as the warning prefix of every gme264 program.
      std::cerr << program_invocation_short_name << ": warning: GPUIntegerME = 1 runs on the CPU twin: "
                << s.pending_why << "\n";
      s.me_path = "cpu twin: " + s.pending_why;
    } else {
      s.me_path = std::string("gpu: ") + s.picture_search->name();
    }
  }
  if (!s.picture_search) throw std::logic_error("picture_search_ready: GPUIntegerME = 1 was not set up");
  return *s.picture_search;
}

namespace {

// Where the intra period counts from: the last IDR picture with JM's AdaptiveIntraPeriod in coding order, else the
// first picture (encoder/params.h says why PreferDispOrder matters).
int intra_period_origin(const EncoderParams& p, int last_idr) {
  return p.adaptive_intra_period && !p.prefer_disp_order ? last_idr : 0;
}

// Type, frame_num, POC, QP and deblocking of picture n (coding order), given the state after picture s.coded - 1.
// For n > s.coded it assumes what holds when no IDR comes in between (picture_to_encode_ahead checks it): every
// picture is a reference, so frame_num steps by one per picture, and the POC counts from the same IDR.
PictureParams plan_picture(const EncoderState& s, int n) {
  const EncoderParams& p = s.p;
  PictureParams pp;
  pp.index = n;
  pp.idr = n == 0 || (p.idr_period > 0 && n % p.idr_period == 0);
  const int last_idr = pp.idr ? n : s.last_idr;
  const bool intra = pp.idr || (p.intra_period > 0 && (n - intra_period_origin(p, last_idr)) % p.intra_period == 0);
  pp.type = intra ? SliceType::I : SliceType::P;
  // As JM (header.c): the coding index's parity, so two IDR pictures in a row still differ (7.4.3).
  pp.idr_pic_id = n & 1;
  pp.frame_num = pp.idr ? 0 : (s.frame_num + (n - s.coded) + 1) % (1 << s.seq.log2_max_frame_num);
  // Cannot happen for the picture in turn (kept for safety); a later one's references are not known yet.
  if (pp.type == SliceType::P && s.refs.empty() && n == s.coded) pp.type = SliceType::I;
  // JM counts POC in source frames (2 per frame, FrameSkip included). A step of half the POC lsb range or more
  // would make the lsb ambiguous for decoders, so then coded pictures are counted instead.
  const int poc_step = 2 * (p.frame_skip + 1);
  pp.poc = (poc_step < (1 << s.seq.log2_max_poc_lsb) / 2 ? poc_step : 2) * (n - last_idr);
  pp.qp = pp.type == SliceType::I ? p.qp_i : p.qp_p;
  const int k = pp.type == SliceType::I ? 0 : 1;
  if (p.df_parameters_flag) {
    pp.deblock.disable_idc = p.df_disable_idc[k];
    pp.deblock.alpha_offset_div2 = p.df_alpha[k];
    pp.deblock.beta_offset_div2 = p.df_beta[k];
  }
  return pp;
}

// Whether the picture after `pp` (pp committed) is a P picture that is not an IDR one, within the encode.
bool next_is_p(const EncoderState& s, const PictureParams& pp) {
  const EncoderParams& p = s.p;
  const int n = pp.index + 1;
  if (n >= p.frames_to_encode || (p.idr_period > 0 && n % p.idr_period == 0)) return false;
  const int last_idr = pp.idr ? pp.index : s.last_idr;
  return !(p.intra_period > 0 && (n - intra_period_origin(p, last_idr)) % p.intra_period == 0);
}

// The half-pel planes of `need[i]` into planes[i], in bands of rows (the build filters rows independently:
// common/halfpel.h), a band per item.
class PlaneBands final : public RowJob {
 public:
  PlaneBands(EncoderState& s, PictureSlot& slot, const std::vector<Frame*>& need,
             const std::vector<std::shared_ptr<HalfpelPlanes>>& planes)
      : s_(s), slot_(slot), need_(need), planes_(planes), per_plane_(4 * s.threads) {
    for (size_t i = 0; i < need.size(); ++i) prepare_halfpel_planes(need[i]->plane[0], planes[i].get());
  }
  int items() const { return per_plane_ * static_cast<int>(need_.size()); }
  void run_item(int k, int worker) override {
    const Plane& luma = need_[static_cast<size_t>(k / per_plane_)]->plane[0];
    const int band = k % per_plane_;
    const int top = -kHalfpelPad, rows = luma.height + 2 * kHalfpelPad;
    const int y0 = top + static_cast<int>(static_cast<int64_t>(rows) * band / per_plane_);
    const int y1 = top + static_cast<int>(static_cast<int64_t>(rows) * (band + 1) / per_plane_);
    if (y1 > y0)
      build_halfpel_plane_rows(s_.dsp.halfpel, luma, planes_[static_cast<size_t>(k / per_plane_)].get(), y0, y1,
                               &slot_.workers[static_cast<size_t>(worker)]->halfpel);
  }

 private:
  EncoderState& s_;
  PictureSlot& slot_;
  const std::vector<Frame*>& need_;
  const std::vector<std::shared_ptr<HalfpelPlanes>>& planes_;
  const int per_plane_;  // small enough that the coder thread finds bands left after `first`
};

// The half-pel planes of `need[i]` into planes[i], attached to the frames, on every thread, while the coder thread
// first runs `first` (the integer searches: a GPU's calls return once queued, and the CPU twin's runs beside the
// build) and then joins in. Returns the seconds of the build beyond `first`.
double build_planes_on_workers(EncoderState& s, PictureSlot& slot, const std::vector<Frame*>& need,
                               const std::vector<std::shared_ptr<HalfpelPlanes>>& planes,
                               const std::function<void()>& first) {
  PlaneBands bands(s, slot, need, planes);
  s.rows->submit(bands, bands.items());
  try {
    first();
  } catch (...) {
    try {
      s.rows->wait(bands);
    } catch (...) {
    }
    throw;
  }
  const auto t0 = Clock::now();
  s.rows->wait(bands);
  for (size_t i = 0; i < need.size(); ++i) need[i]->halfpel = planes[i];
  return seconds_since(t0);
}

// The reference list of the picture after `pp` once `rec` (pp's reconstruction) is committed: commit_picture's
// sliding window (or the state's list where pp is committed already), then PList0References as start_picture
// applies it.
std::vector<const Frame*> next_reference_list(const EncoderState& s, const PictureParams& pp, const Frame& rec) {
  std::vector<const Frame*> refs;
  if (s.coded > pp.index) {
    for (const auto& f : s.refs) refs.push_back(f.get());
  } else {
    refs.push_back(&rec);
    if (!pp.idr)
      for (const auto& f : s.refs) refs.push_back(f.get());
  }
  int n = std::min(static_cast<int>(refs.size()), s.p.num_ref_frames);
  if (s.p.p_list0_refs > 0 && s.p.p_list0_refs < n) n = s.p.p_list0_refs;
  refs.resize(static_cast<size_t>(std::max(n, 1)));
  return refs;
}

// The picture boundary, pipelined (doc/GPU.md): while picture pp is coded into `rec`, the search of the picture
// after it (source `next`) is queued on the GPU, its bands starting as rec's rows are deblocked; that picture's own
// search() then takes it up (its request is the same). Only where that request is known now: a GPU search already
// started, a P picture next, and window centres that do not wait for this picture's vectors (GPUSearchCenter = 0).
// Returns whether the search took it.
bool queue_next_search(EncoderState& s, const PictureParams& pp, const Frame& rec, const Frame* next) {
  const EncoderParams& p = s.p;
  if (!next || p.gpu_integer_me != 1 || p.gpu_search_center != 0 || !s.picture_search ||
      !s.picture_search->runs_beside_cpu() || pp.index + 1 >= p.frames_to_encode)
    return false;
  const PictureParams np = plan_picture(s, pp.index + 1);
  if (np.type != SliceType::P || np.idr) return false;
  PictureSearchRequest req = integer_search_request(s, np, *next, next_reference_list(s, pp, rec));
  req.reference_grows = s.threads > 1;  // the next picture will likely start before this one is done
  picture_trace("search_ahead", pp.index);
  return s.picture_search->search_ahead(req, 0);
}

}  // namespace

// The unmodified run with RDOptimization 0 keeps (0, 0) in every window (me/me_fullfast.cpp fullfast_window_centre:
// the centre within +-SearchRange), so its integer vectors lie within 2 SearchRange, the sub-pel ones 3/4 pel
// further (the gate's margin), and P_Skip's is the median of such. The GPU search with GPUSearchCenter = 0 centres
// every window on (0, 0): SearchRange.
int vector_reach(const EncoderParams& p) {
  if (p.gpu_integer_me == 0 && p.rd_optimization == 0) return 2 * p.search_range;
  if (p.gpu_integer_me == 1 && p.gpu_search_center == 0) return p.search_range;
  return -1;
}

// With RDOptimization 1 the unmodified run centres each window on the 16x16 predictor (fullfast_window_centre),
// which follows the neighbours' vectors.
int predictor_window(const EncoderParams& p) {
  return p.gpu_integer_me == 0 && p.rd_optimization != 0 ? p.search_range : 0;
}

// A picture between start_picture and finish_picture. Members are destroyed in reverse order: the rows (which read
// everything above them) first.
struct PictureInFlight {
  EncoderState* s = nullptr;
  PictureParams pp;
  PictureResult res;
  bool from_ahead = false;        // coded ahead of its turn: `res`, `bytes`, `rec` and `mbs` hold it whole
  std::vector<MbInfo> ahead_mbs;
  std::vector<uint8_t> bytes;     // parameter sets, then (at finish) the slices
  int slot = 0;
  const Frame* src = nullptr;
  std::shared_ptr<Frame> rec;
  std::vector<const Frame*> refs;
  // The references held until the picture is finished: the state's list lets go of the oldest when the next
  // picture starts, and its last holder gives it back to the pool for reuse.
  std::vector<std::shared_ptr<Frame>> ref_hold;
  Clock::time_point t_start;
  double picture_me_seconds = 0, planes_seconds = 0;
  bool in_order = false;
  SliceLoopStats st;              // the in-order loop's (coded in start_picture)
  PictureCandidates cands;
  std::unique_ptr<CandidateSourceFactory> sources;
  std::shared_ptr<HalfpelPlanes> planes;    // rec's, built row by row (final_rows), for the next P picture
  std::shared_ptr<FinalRows> final_rows;
  std::shared_ptr<FinalRows> gate_rows;     // the picture before's, while this one's rows may wait for it
  const Frame* next = nullptr;    // the next picture's source, if known when this one started
  bool queued_next = false;       // the next picture's search is queued ahead on this one's rows
  bool queue_later = false;       // started beside the picture before: its search is queued once that one is done
  WavefrontPicturePtr wavefront;
};

void PictureInFlightDeleter::operator()(PictureInFlight* f) const { delete f; }

std::shared_ptr<Frame> picture_recon(const PictureInFlight& f) { return f.rec; }

bool overlap_pictures(const EncoderState& s, const PictureInFlight& before) {
  if (s.threads <= 1 || s.p.slice_mode == 2 || picture_in_order(s) || before.from_ahead || !before.final_rows)
    return false;
  if (s.p.gpu_integer_me == 0 || plan_picture(s, s.coded).type == SliceType::I) return true;
  // The GPU search: the next picture's search must be queued ahead on this one's rows (it is taken up while they
  // are still reported); any other search call would read this one's reconstruction whole.
  return before.queued_next;
}

void queue_search_after(EncoderState& s, PictureInFlight& f) {
  if (!f.queue_later) return;
  f.queue_later = false;
  f.queued_next = queue_next_search(s, f.pp, *f.rec, f.next);
  if (f.queued_next && f.final_rows) f.final_rows->attach(s.picture_search.get());
}

namespace {

// Sets up a planned picture (references, planes, reconstruction, searches) and queues its rows; the in-order loop
// codes them here.
void start_coding(EncoderState& s, PictureInFlight& f, const Frame* next, PictureInFlight* before) {
  PictureParams& pp = f.pp;
  const Frame& src = *f.src;
  f.t_start = Clock::now();
  picture_trace("picture", pp.index);
  if (src.width != s.mb_w * 16 || src.height != s.mb_h * 16)
    throw std::runtime_error("Encoder::encode: source frame has coded size " + std::to_string(src.width) + "x" +
                             std::to_string(src.height) + ", expected " + std::to_string(s.mb_w * 16) + "x" +
                             std::to_string(s.mb_h * 16));
  const EncoderParams& p = s.p;
  std::vector<Frame*> need_planes;  // references whose half-pel planes are not built yet
  if (pp.type == SliceType::P) {
    int nrefs = static_cast<int>(s.refs.size());
    if (p.p_list0_refs > 0 && p.p_list0_refs < nrefs) nrefs = p.p_list0_refs;
    for (int i = 0; i < nrefs; ++i) {
      Frame& f2 = *s.refs[i];
      if (!p.disable_subpel_me && !f2.halfpel) need_planes.push_back(&f2);
      f.refs.push_back(&f2);
      f.ref_hold.push_back(s.refs[i]);
    }
    pp.num_ref_idx_active = nrefs;
  }
  PictureSlot& slot = s.slots[f.slot];
  // The planes sub-pel refinement reads, built when a picture is first used as a reference (not for a last picture
  // or an intra-only run, which never are); part of the sub-pel stage's cost. With the picture-level search they are
  // built on another thread while search() waits for the GPU, and only a wait beyond the search counts. Where the
  // picture before built them row by row as its rows were deblocked (final_rows), they are attached already.
  // Planes taken here, on this thread (the pool is the state's); build() reuses their memory when the size matches
  // and gives them a new serial, so nothing of their last picture survives.
  std::vector<std::shared_ptr<HalfpelPlanes>> planes_for(need_planes.size());
  for (auto& pl : planes_for) pl = s.plane_pool.take();
  auto build_planes = [&s, need_planes, planes_for] {
    for (size_t i = 0; i < need_planes.size(); ++i) {
      build_halfpel_planes(s.dsp.halfpel, need_planes[i]->plane[0], planes_for[i].get(), &s.halfpel_scratch);
      need_planes[i]->halfpel = planes_for[i];
    }
  };
  // With several threads the planes are built in bands on all of them, beside the integer search call; with one, on
  // another thread beside the search call (GPUIntegerME = 1) or here.
  const bool planes_on_workers = s.threads > 1;
  std::future<void> planes_job;
  if (!need_planes.empty() && !planes_on_workers) {
    if (p.gpu_integer_me == 1) {
      planes_job = std::async(std::launch::async, build_planes);
    } else {
      const auto t_hp = Clock::now();
      build_planes();
      f.planes_seconds = seconds_since(t_hp);
    }
  }

  PictureResult& res = f.res;
  res.type = pp.type;
  res.idr = pp.idr;
  res.qp = pp.qp;
  res.poc = pp.poc;
  res.frame_num = pp.frame_num;
  if (pp.idr) {
    write_nal_annexb(f.bytes, 3, kNalSps, write_sps(s.seq));
    write_nal_annexb(f.bytes, 3, kNalPps, write_pps(s.seq));
  }
  res.param_set_bits = static_cast<int64_t>(f.bytes.size()) * 8;

  // A recycled picture keeps its samples: the macroblocks write every one, and the borders follow from them.
  f.rec = s.frame_pool.take();
  Frame& rec = *f.rec;
  rec.reshape(src.width, src.height, p.source_width, p.source_height);
  rec.frame_num = pp.frame_num;
  rec.poc = pp.poc;
  rec.id = s.next_frame_id++;
  rec.is_idr = pp.idr;
  // (the slot's macroblocks: the macroblock loop clears each macroblock before it codes it.)

  f.next = next;
  // This picture's search, then the next picture's queued ahead (queue_next_search), beside the planes' build. With
  // the picture before still in flight, its answer is completed first (its last rows no longer wait for the
  // search, which takes up this picture's call on that picture's rows), and the next picture's search waits until
  // the picture before is done (queue_search_after): the search holds one call queued ahead, and the rows of this
  // picture would otherwise overwrite the answer the picture before still reads.
  const auto start_searches = [&] {
    if (pp.type == SliceType::P) {
      if (before && before->sources) before->sources->complete();
      f.sources = make_integer_sources(s, pp, src, f.refs, f.cands, &f.picture_me_seconds, before != nullptr);
    }
    if (before) {
      f.queue_later = true;
      return;
    }
    const auto t_ahead = Clock::now();
    f.queued_next = queue_next_search(s, pp, rec, next);
    f.picture_me_seconds += seconds_since(t_ahead);
  };
  if (!need_planes.empty() && planes_on_workers)
    f.planes_seconds = build_planes_on_workers(s, slot, need_planes, planes_for, start_searches);
  else
    start_searches();
  if (planes_job.valid()) {
    const auto t_hp = Clock::now();
    planes_job.get();
    f.planes_seconds = seconds_since(t_hp);
  }

  s.rounding.start_picture(pp.type == SliceType::P, pp.qp, chroma_qp(pp.qp, p.chroma_qp_offset));
  f.in_order = picture_in_order(s);
  picture_trace("rows_start", pp.index);  // references' planes built, search call returned
  if (f.in_order) {
    f.st = code_slices_in_order(s, slot, pp, src, rec, f.refs, f.sources.get(), f.bytes);
    return;
  }
  // The next picture's planes, row by row as this one's rows are final, where it will refine against them: several
  // threads (one thread builds them beside the next picture's search call) and rows deblocked in the wavefront.
  if (s.threads > 1 && p.slice_mode != 2 && !p.disable_subpel_me && next_is_p(s, pp)) {
    f.planes = s.plane_pool.take();
    prepare_halfpel_planes(rec.plane[0], f.planes.get());
    rec.halfpel = f.planes;
  }
  f.final_rows = std::make_shared<FinalRows>(rec, s.mb_h, f.queued_next ? s.picture_search.get() : nullptr,
                                             &s.dsp.halfpel, f.planes.get());
  RowGate gate;
  if (before && before->final_rows && pp.type == SliceType::P) {
    f.gate_rows = before->final_rows;
    gate.rows = f.gate_rows.get();
    gate.reach = vector_reach(p);
    gate.window = predictor_window(p);
  }
  f.wavefront = start_wavefront(s, slot, pp, src, rec, f.refs, f.sources.get(), f.final_rows.get(), gate);
}

// The picture's place in the state: sliding-window reference marking (the newest picture first, the oldest
// dropped beyond NumberReferenceFrames), the last reconstruction, frame_num and the counters.
void commit_picture(EncoderState& s, const PictureParams& pp, std::shared_ptr<Frame> rec) {
  s.refs.insert(s.refs.begin(), rec);
  s.rec = std::move(rec);
  // The oldest goes back to s.frame_pool once nothing else (the driver's EncodedPicture) holds it.
  while (static_cast<int>(s.refs.size()) > s.p.num_ref_frames) s.refs.pop_back();
  s.frame_num = pp.frame_num;
  ++s.coded;
}

}  // namespace

PictureInFlightPtr start_picture(EncoderState& s, const Frame& src, const Frame* next, PictureInFlight* before) {
  PictureInFlightPtr f(new PictureInFlight);
  f->s = &s;
  if (!s.ahead.empty() && s.ahead.front().index == s.coded) {  // coded while the GPU started: its turn now
    AheadPicture a = std::move(s.ahead.front());
    s.ahead.pop_front();
    f->from_ahead = true;
    f->pp = a.pp;
    f->res = a.result;
    f->res.encoded_ahead = true;
    f->bytes = std::move(a.bytes);
    f->ahead_mbs = std::move(a.mbs);
    f->rec = a.rec;
    commit_picture(s, a.pp, std::move(a.rec));
    return f;
  }
  f->pp = plan_picture(s, s.coded);
  if (f->pp.idr) {
    s.refs.clear();  // IDR: every reference is marked unused
    s.last_idr = s.coded;
  }
  f->src = &src;
  f->slot = s.next_slot;
  s.next_slot ^= 1;
  start_coding(s, *f, next, before);
  commit_picture(s, f->pp, f->rec);
  return f;
}

PictureResult finish_picture(EncoderState& s, PictureInFlight& f, std::vector<uint8_t>& out) {
  if (f.from_ahead) {
    out.insert(out.end(), f.bytes.begin(), f.bytes.end());
    s.mbs = std::move(f.ahead_mbs);
    return f.res;
  }
  const PictureParams& pp = f.pp;
  PictureResult& res = f.res;
  PictureSlot& slot = s.slots[f.slot];
  SliceLoopStats st = f.in_order ? f.st : finish_wavefront(*f.wavefront, f.bytes);
  f.wavefront.reset();
  f.gate_rows.reset();
  if (f.sources) {  // rows no partition search asked for (none, in practice) land before `cands` goes
    const auto t_wait = Clock::now();
    f.sources->complete();
    f.picture_me_seconds += seconds_since(t_wait);
  }
  f.sources.reset();
  picture_trace("slices", pp.index);  // rows decided, coded and deblocked, slices written
  res.num_slices = st.num_slices;
  res.times = st.times;
  res.times.split_partition_searches();
  res.times.integer_me += f.picture_me_seconds;  // the waits inside the loop are in st.times.integer_me already
  res.times.subpel_me += f.planes_seconds;
  res.times.picture_search = f.picture_me_seconds + st.wait_seconds;
  std::swap(s.mbs, slot.mbs);  // the state shows the last finished picture's; the slot's are overwritten row by row
  if (pp.type == SliceType::P) {  // co-located vectors for GPUSearchCenter = 1
    s.prev_p_mv.resize(s.mbs.size());
    for (size_t m = 0; m < s.mbs.size(); ++m) s.prev_p_mv[m] = s.mbs[m].is_intra() ? MV() : s.mbs[m].mv[0];
  }
  for (int i = 0; i < 9; ++i) res.mb_counts[i] = st.mb_counts[i];

  Frame& rec = *f.rec;
  if (!f.final_rows || !f.final_rows->borders_extended()) rec.extend_borders();  // loops that deblock after the rows
  if (s.picture_search) {  // GPUIntegerME = 1 and started: the next P picture's reference goes to the GPU now
    const auto t_pre = Clock::now();
    s.picture_search->preload(rec.plane[0], rec.id);
    const double pre = seconds_since(t_pre);
    res.times.integer_me += pre;
    res.times.picture_search += pre;
  }
  picture_trace("reference", pp.index);  // borders extended, sent to the search
  res.bits = static_cast<int64_t>(f.bytes.size()) * 8 - res.param_set_bits;
  res.bit_use = st.bit_use;
  res.times.total = seconds_since(f.t_start);
  out.insert(out.end(), f.bytes.begin(), f.bytes.end());
  return res;
}

PictureResult encode_picture(EncoderState& s, const Frame& src, std::vector<uint8_t>& out, const Frame* next) {
  PictureInFlightPtr f = start_picture(s, src, next, nullptr);
  return finish_picture(s, *f, out);
}

int next_picture_ahead(const EncoderState& s) {
  const EncoderParams& p = s.p;
  if (p.intra_period <= 0 || static_cast<int>(s.ahead.size()) >= kMaxPicturesAhead) return -1;
  const int after = s.ahead.empty() ? s.coded + 1 : s.ahead.back().index + 1;
  const int origin = intra_period_origin(p, s.last_idr);
  const int n = origin + (after - origin + p.intra_period - 1) / p.intra_period * p.intra_period;
  if (n >= p.frames_to_encode) return -1;
  // No IDR in (s.coded, n]: an IDR resets frame_num, the POC origin and the references, which plan_picture assumes
  // unchanged.
  if (p.idr_period > 0 && (s.coded / p.idr_period + 1) * p.idr_period <= n) return -1;
  return n;
}

bool next_picture_waits_for_gpu(const EncoderState& s) {
  if (!s.pending_search.valid() || s.picture_search) return false;  // no GPU start-up under way
  if (s.pending_search.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return false;
  if (!s.ahead.empty() && s.ahead.front().index == s.coded) return false;  // coded already: no wait
  return s.coded > 0 && plan_picture(s, s.coded).type == SliceType::P;  // only a P picture waits
}

int picture_to_encode_ahead(const EncoderState& s) { return next_picture_waits_for_gpu(s) ? next_picture_ahead(s) : -1; }

void encode_picture_ahead(EncoderState& s, int index, const Frame& src) {
  if (index < 0 || index != next_picture_ahead(s))
    throw std::logic_error("encode_picture_ahead: picture " + std::to_string(index) + " is not the next to code ahead");
  PictureInFlight f;
  f.s = &s;
  f.pp = plan_picture(s, index);
  if (f.pp.type != SliceType::I || f.pp.idr) throw std::logic_error("encode_picture_ahead: not a non-IDR I picture");
  f.src = &src;
  f.slot = s.next_slot;
  s.next_slot ^= 1;
  start_coding(s, f, nullptr, nullptr);
  AheadPicture a;
  a.index = index;
  a.pp = f.pp;
  a.result = finish_picture(s, f, a.bytes);
  // The picture's own macroblock array: s.mbs goes on showing the last picture's (Encoder::last_mb_info()).
  std::swap(s.mbs, s.slots[f.slot].mbs);
  a.mbs = s.slots[f.slot].mbs;
  a.rec = f.rec;
  s.ahead.push_back(std::move(a));
}

}  // namespace gme
