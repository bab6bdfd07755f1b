// The encoder's state across pictures and the picture loop: picture type (IntraPeriod / IDRPeriod), frame_num
// and POC, parameter sets before IDR pictures, the slices, deblocking, border extension and the sliding-window
// reference list.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/dsp.h"
#include "common/frame.h"
#include "common/halfpel.h"
#include "common/mbinfo.h"
#include "common/quant_rounding.h"
#include "common/recycling_pool.h"
#include "encoder/encoder.h"
#include "encoder/headers.h"
#include "encoder/params.h"
#include "encoder/mb_worker.h"
#include "encoder/thread_pool.h"
#include "encoder/wavefront_rows.h"
#include "me/me_interface.h"

namespace gme {

// Per-picture decisions the slices need.
struct PictureParams {
  int index = 0;  // coding order (an I picture coded ahead of its turn has its own, not the state's count)
  SliceType type = SliceType::I;
  bool idr = false;
  int qp = 26;
  int frame_num = 0;
  int poc = 0;
  int idr_pic_id = 0;
  int num_ref_idx_active = 1;
  SliceDeblockParams deblock;
};

// An I picture coded ahead of its turn while the GPU starts (encode_picture_ahead): everything its turn needs.
struct AheadPicture {
  int index = 0;  // coding order
  PictureParams pp;
  PictureResult result;
  std::vector<uint8_t> bytes;
  std::shared_ptr<Frame> rec;
  std::vector<MbInfo> mbs;
};
// At most this many pictures are held (each holds its reconstruction: ~0.6 MB at 640x480, 3.5 MB at 1920x1080).
constexpr int kMaxPicturesAhead = 16;

struct EncoderState {
  EncoderParams p;
  SequenceHeader seq;
  int mb_w = 0, mb_h = 0;
  DspFuncs dsp;  // every SIMD-able routine, filled once from the CPU flags (NoSIMD = 1: plain C++); read-only

  // The quantiser's rounding offsets across the sequence (AdaptiveRounding adapts them macroblock by macroblock,
  // in coding order: rounding.chains_macroblocks() then says the macroblocks of a slice cannot be coded out of
  // order, common/quant_rounding.h; such pictures take the in-order loop, encoder/slice.h).
  RoundingState rounding;

  // Threads (doc/THREADS.md): the count that runs (Threads = 0 resolved), the scheduler of the rows and bands on
  // threads - 1 threads beside the coder's, and the buffers and macroblock workers (one per thread) of the two
  // pictures that may be in flight (slots, taken in turn: start_picture).
  int threads = 1;
  std::unique_ptr<RowScheduler> rows;
  PictureSlot slots[2];
  int next_slot = 0;
  // Tests: the in-order loop for every configuration, the reference the wavefront must match (tests/test_threads.cpp).
  bool force_in_order = false;
  // Tests: every inter candidate is searched, and the cost bounds that would have left searches out are checked
  // against the costs found instead (StageTimes::bound_checks, bound_violations; encoder/analyse_inter.cpp).
  bool check_cost_bounds = false;

  std::vector<MbInfo> mbs;                    // the last finished picture's macroblocks
  std::shared_ptr<Frame> rec;                 // the current (last encoded) reconstruction
  std::vector<std::shared_ptr<Frame>> refs;   // short-term references, most recent first (= list 0 order)

  int coded = 0;             // pictures encoded so far
  int last_idr = 0;          // index of the last IDR picture
  int frame_num = 0;         // frame_num of the last picture
  int next_frame_id = 0;

  // Integer motion estimation backend (GPUIntegerME = 1: created once). CUDA context creation takes longer than
  // coding a picture, so it starts on a background thread when the encoder is built and overlaps reading the input and coding the
  // first I picture; picture_search_ready() waits for it where a P picture first needs it.
  PictureSearchFactory make_picture_search;
  std::unique_ptr<PictureIntegerSearch> picture_search;
  std::future<std::unique_ptr<PictureIntegerSearch>> pending_search;
  std::string pending_why;  // written by the background start-up, read after the future is ready
  std::string me_path = "none";
  HalfpelScratch halfpel_scratch;  // reused by every plane build: fresh buffers cost page faults per picture
  std::vector<MV> prev_p_mv;  // 16x16 vectors (block 0) of the previous P picture, for GPUSearchCenter = 1
  std::deque<AheadPicture> ahead;  // coded ahead of their turn, in coding order
  // Reconstructions and half-pel planes come back here when their last holder (the reference list, the driver's
  // EncodedPicture) lets go, for the next pictures: the page faults of fresh ones cost more than building them. A
  // reconstruction comes back without its planes, which go back to theirs.
  RecyclingPool<Frame> frame_pool{4, [](Frame& f) { f.halfpel.reset(); }};
  RecyclingPool<HalfpelPlanes> plane_pool{4};
};


// The quantiser's rounding configuration of `p` (AdaptiveRounding and its keys), as EncoderState::rounding runs it.
RoundingConfig rounding_config(const EncoderParams& p);

// `make_search` is required when GPUIntegerME = 1 (encoder/encoder.h).
void init_encoder_state(EncoderState& s, const EncoderParams& p, PictureSearchFactory make_search = {});

// Sub-pel table ranks a P picture asks for: GPUSubpelRanks, at most GPUTopK, and at most what keeps the tables
// (sizeof(SubpelTable) = 2176 bytes per reference, macroblock and rank, page-locked on the host and again on the
// device) within kSubpelTableBudget; 0 (no tables) when not even one rank fits. The ranks change no decision, only
// how many refinements read a table (doc/CONFIG.md GPUSubpelRanks): the cap keeps 4K pictures with several
// references from asking for gigabytes of page-locked memory, whose failure would put the rest of the encode on
// the CPU twin.
constexpr size_t kSubpelTableBudget = size_t{512} << 20;
int subpel_table_ranks(int gpu_subpel_ranks, int gpu_top_k, int num_mbs, int num_refs);
// GPUIntegerME = 1: waits for the background start-up (once), then sets me_path and warns once when the GPU is not
// usable (the CPU twin runs instead). Returns the picture-level search. Safe to call repeatedly.
PictureIntegerSearch& picture_search_ready(EncoderState& s);
// `next`: the next picture's source when the caller already has it (else nullptr). With the GPU search and
// GPUSearchCenter = 0 the next picture's search is then queued while this one is coded, its bands starting as this
// picture's rows are deblocked (doc/GPU.md, "The picture boundary"). Same bytes either way.
PictureResult encode_picture(EncoderState& s, const Frame& src, std::vector<uint8_t>& out, const Frame* next = nullptr);

// encode_picture in two steps, so that the next picture can start before this one is finished (doc/THREADS.md,
// "Pictures in flight"): start_picture plans the picture, commits it to the state (reference list, counters: the
// next picture plans after it), sets up its search and queues its rows; finish_picture waits for the rows and
// returns what encode_picture returns. `src` and `next` must stay until finish_picture. `before`: the picture
// started before this one and not yet finished (nullptr: none); only where overlap_pictures(s) allows it. Pictures
// are finished in the order they were started; destroying one not finished waits for its rows.
struct PictureInFlight;
struct PictureInFlightDeleter {
  void operator()(PictureInFlight* f) const;
};
using PictureInFlightPtr = std::unique_ptr<PictureInFlight, PictureInFlightDeleter>;
PictureInFlightPtr start_picture(EncoderState& s, const Frame& src, const Frame* next, PictureInFlight* before);
PictureResult finish_picture(EncoderState& s, PictureInFlight& f, std::vector<uint8_t>& out);
// The finished picture's reconstruction (the state's last one once it is finished).
std::shared_ptr<Frame> picture_recon(const PictureInFlight& f);
// Whether the next picture may start before `before` (the last one started) is finished: several threads, the
// wavefront without speculative slices, `before` coded now (not ahead of its turn), and where the next is a P
// picture of the GPU run, its search queued ahead on before's rows (any other search call reads before's
// reconstruction whole).
bool overlap_pictures(const EncoderState& s, const PictureInFlight& before);
// The full-pel rows by which a P picture's vectors can point below (or above) its macroblock, whatever it decides
// (RowGate::reach); -1 where the configuration does not bound them.
int vector_reach(const EncoderParams& p);
// The search range of windows centred on the macroblocks' vector predictors, whose reach each macroblock takes
// from its neighbours (RowGate::window); 0 where the windows do not follow the predictors.
int predictor_window(const EncoderParams& p);
// After the picture started before `f` is finished: queues the search of the picture after `f` (start_picture
// leaves it to here when it started `f` beside the picture before). Call it before starting the next picture.
void queue_search_after(EncoderState& s, PictureInFlight& f);

// Coding I pictures ahead of their turn while the GPU starts. CUDA's start-up (driver initialisation and context
// creation, a fraction of a second) runs in the background from construction, and the first P picture
// waits for it; an I picture needs no motion search, reads no reference and no earlier picture's state beyond
// frame_num and POC, which are known in advance when no IDR comes in between. So the driver codes the next I
// pictures during the wait and encode_picture() hands each one out at its turn: same bytes, reconstruction and
// statistics as coding it then (tests/test_encode_ahead.cpp), the wait filled with work the encode needs anyway.
// Encoder's queue (encoder/encoder.cpp) holds the pushed pictures meanwhile, so the driver's reading fills the
// wait too.
//
// next_picture_ahead: the coding index of the next picture that can be coded ahead (the next non-IDR I picture
// after the last one coded or held, within FramesToBeEncoded, no IDR before it, fewer than kMaxPicturesAhead
// held), or -1. picture_to_encode_ahead: the same, but only while the GPU start-up is still running and the next
// picture in order is a P picture (which would wait for it); -1 otherwise.
// next_picture_waits_for_gpu: the start-up is running and the next picture in order is a P picture, which would
// wait for it (the queue then holds more input instead of waiting).
int next_picture_ahead(const EncoderState& s);
int picture_to_encode_ahead(const EncoderState& s);
bool next_picture_waits_for_gpu(const EncoderState& s);
// Codes picture `index` (which must be next_picture_ahead(s)) from `src` now and holds it for its turn.
void encode_picture_ahead(EncoderState& s, int index, const Frame& src);

}  // namespace gme
