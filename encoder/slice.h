// The slice loop of one picture: macroblocks in raster order, slices cut by SliceMode (0: one slice, 1:
// SliceArgument macroblocks, 2: at most SliceArgument bytes per slice NAL unit - a macroblock that would overflow
// is undone and coded again as the first of the next slice), each slice written as one NAL unit.
#pragma once
#include <cstdint>
#include <vector>

#include "me/me_interface.h"
#include "encoder/picture.h"

namespace gme {

struct SliceLoopStats {
  int num_slices = 0;
  int64_t bits = 0;
  StageTimes times;
  int mb_counts[9] = {};
  PictureBitUse bit_use;
};

// P pictures: refs is list 0 and `source` the picture's integer candidate source (nullptr for I pictures).
SliceLoopStats encode_slices(EncoderState& s, const PictureParams& pp, const Frame& src, Frame& rec,
                             const std::vector<const Frame*>& refs, IntegerCandidateSource* source,
                             std::vector<uint8_t>& out);

}  // namespace gme
