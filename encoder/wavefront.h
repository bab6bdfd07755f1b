// The wavefront: a picture's macroblock rows coded in parallel, each row by one worker, with the same bytes as
// coding the macroblocks one after another (doc/THREADS.md).
//
// Macroblock (x, y) reads, of other macroblocks, only (x - 1, y), (x - 1, y - 1), (x, y - 1) and (x + 1, y - 1):
// intra prediction samples, intra modes, motion vectors and references (MV prediction, P_Skip), coefficient counts
// (nC contexts), slice ids. So row y may decide macroblock x once row y - 1 has finished macroblock x + 1. Each
// macroblock's syntax goes into a bit writer of its own, and the slices are put together in order at the end
// (mb_skip_run codes and slice headers between them). Deblocking runs in the workers, a row behind: (x, y - 1)
// is filtered by row y's worker once row y no longer reads its unfiltered samples.
//
// The one input from further back is RDOptimization 1's P_Skip rate, which depends on the mb_skip_run pending
// before the macroblock, and at the start of a row that run goes on from the end of the previous row. A worker
// does not wait for it: the rate is 0 or 2 bits, and where both rates give the same decision (nearly always) the
// run is not needed; otherwise the worker waits until the previous row is done (MbContext::skip_run_wait).
//
// SliceMode 2 (slices of at most SliceArgument bytes) makes every macroblock's slice depend on the bytes of all
// macroblocks before it. The wavefront then decides speculatively, as if the current slice went on, while the
// workers put decided macroblocks into the slice in order; where one would pass the limit, the decisions past it are
// dropped and a new pass starts there with the next slice (doc/THREADS.md). Deblocking follows the last pass.
//
// The rows are jobs of the encoder's RowScheduler: start_wavefront queues them and returns, so the coder thread
// can set up the next picture, whose rows follow in the same queue (RowGate), while this one's are still coded.
// A row that would wait for the row above (or, at its start, for the picture before) parks instead: it keeps where
// it stands (RowProgress) and its worker takes other rows, of this picture or the next, until the row above has
// gone far enough (RowJob::run_or_park). Waits that the rows handed out before it do not satisfy while they run -
// the mb_skip_run of RDOptimization 1, the per-macroblock gate, SliceMode 2's passes, a GPU answer still landing -
// block the worker instead of parking the row.
#pragma once
#include <memory>
#include <vector>

#include "encoder/final_rows.h"
#include "encoder/slice.h"
#include "encoder/wavefront_rows.h"

namespace gme {

// The luma rows of the reference in flight that macroblock row `mb_row` waits for (RowGate): its vectors' reach
// below its bottom and a margin for sub-pel refinement and interpolation; reach -1: all of them.
int gate_luma_rows(int mb_row, int reach);

// The same for macroblock (x, y) where its windows (+-range) are centred on its motion vector predictors (the
// unmodified run with RDOptimization 1): every predictor, P_Skip's included, is zero, one of its neighbours'
// vectors (A left, B above, C above right, D above left) or their median, so none points further down than the
// farthest of theirs. `mbs`: the picture's macroblocks, row by row, decided up to the neighbours.
int predictor_gate_luma_rows(const MbInfo* mbs, int mb_w, int x, int y, int range);

// A picture's rows between start_wavefront and finish_wavefront. Destroying it waits for rows still running.
struct WavefrontPicture;
struct WavefrontPictureDeleter {
  void operator()(WavefrontPicture* w) const;
};
using WavefrontPicturePtr = std::unique_ptr<WavefrontPicture, WavefrontPictureDeleter>;

// Queues the picture's rows on s.rows (SliceMode 2: codes them, pass after pass, before it returns), in `slot`'s
// buffers and workers. final_rows: where the deblocked rows go (nullptr, and always with SliceMode 2: the caller
// extends the borders after the rows); gate: the reference still being coded that the rows wait for.
WavefrontPicturePtr start_wavefront(EncoderState& s, PictureSlot& slot, const PictureParams& pp, const Frame& src,
                                    Frame& rec, const std::vector<const Frame*>& refs,
                                    CandidateSourceFactory* sources, FinalRows* final_rows, RowGate gate);
// Waits for the rows (this thread codes rows meanwhile), writes the slices into `out`; SliceMode 2 deblocks here.
SliceLoopStats finish_wavefront(WavefrontPicture& w, std::vector<uint8_t>& out);

// Deblocks a picture whose macroblocks are all coded, rows in parallel on the scheduler (a row a little behind the
// one above: MacroblockDeblocker's order), into times->deblocking.
void deblock_picture_parallel(EncoderState& s, PictureSlot& slot, Frame& rec,
                              const std::vector<SliceDeblockParams>& params, StageTimes* times);

}  // namespace gme
