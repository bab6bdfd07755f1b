// The macroblock loop of one picture: macroblocks in raster order, slices cut by SliceMode (0: one slice, 1:
// SliceArgument macroblocks, 2: at most SliceArgument bytes per slice NAL unit - a macroblock that would overflow
// is undone and coded again as the first of the next slice), each slice written as one NAL unit. Two ways to run
// it with the same bytes: the wavefront (encoder/wavefront.h, any thread count) and the in-order loop (here), for
// configurations whose macroblocks form one chain in coding order, and the tests' reference.
#pragma once
#include <cstdint>
#include <vector>

#include "encoder/macroblock.h"
#include "encoder/picture.h"
#include "me/me_interface.h"
#include "me/me_sources.h"

namespace gme {

struct SliceLoopStats {
  int num_slices = 0;
  int64_t bits = 0;
  StageTimes times;          // summed over the workers: CPU seconds, deblocking included
  double wait_seconds = 0;   // of the P picture's workers, waiting for rows of the GPU's progressive answer
  int mb_counts[9] = {};
  PictureBitUse bit_use;     // summed in coding order by the one writer of the slices: the same at any thread count
};

// True when every macroblock of a picture under `p` depends on the one before it in coding order, beyond the
// neighbours the wavefront waits for and beyond what it can decide speculatively and start again (SliceMode 2's
// slice ends), so that coding rows in parallel would change the bytes: a coding tool that carries state from one
// macroblock to the next in coding order. Such pictures take the in-order loop on one thread (the planes and
// deblocking still run on every thread). Today that is AdaptiveRounding = 1: each macroblock's quantiser offsets
// depend on the updates of every macroblock coded before it (RoundingState::chains_macroblocks,
// common/quant_rounding.h).
bool macroblocks_chain_in_order(const EncoderParams& p);
// The same as words for the console and the StatsFile: "wavefront", "wavefront, speculative slices" (SliceMode 2)
// or "in order".
const char* macroblock_order_name(const EncoderParams& p);

// The picture's MbContext before any macroblock: parameters, pictures, lambdas, QP, the function table and the
// rounding offsets (mb_x, mb_y, slice_id and skip_run are the loop's). The offsets as s.rounding has them now are
// latched into the slot; live_rounding: the context reads s.rounding's instead, as the in-order loop refreshes them.
MbContext picture_context(EncoderState& s, PictureSlot& slot, const PictureParams& pp, const Frame& src, Frame& rec,
                          const std::vector<const Frame*>& refs, bool live_rounding);

// Whether the picture about to be coded takes the in-order loop (code_slices_in_order) rather than the wavefront
// (encoder/wavefront.h): macroblocks_chain_in_order, or the tests' EncoderState::force_in_order.
bool picture_in_order(const EncoderState& s);

// The in-order loop: codes the picture's slices into `out` and its reconstruction into `rec`, deblocked (rows in
// parallel), with slot.mbs as its macroblock array. P pictures: refs is list 0 and `sources` the picture's integer
// candidate sources (nullptr for I pictures).
SliceLoopStats code_slices_in_order(EncoderState& s, PictureSlot& slot, const PictureParams& pp, const Frame& src,
                                    Frame& rec, const std::vector<const Frame*>& refs,
                                    CandidateSourceFactory* sources, std::vector<uint8_t>& out);

// The slice header of the slice starting at macroblock first_mb.
SliceHeader slice_header(const EncoderState& s, const PictureParams& pp, int first_mb);

}  // namespace gme
