// One macroblock worker: the scratch that each macroblock's analysis overwrites and the worker's share of the
// picture's statistics. The in-order loop (encoder/slice.cpp) uses one, the wavefront (encoder/wavefront.cpp) one
// per thread and picture in flight; nothing in a worker is shared, so workers never see each other's half-decided
// state.
#pragma once
#include <cstdint>
#include <memory>

#include "common/halfpel.h"
#include "encoder/analyse_inter.h"
#include "encoder/encoder.h"
#include "encoder/macroblock.h"
#include "me/me_sources.h"
#include "me/subpel_memo.h"

namespace gme {

struct MbWorker {
  // Sub-pel refinement's memo of 4x4 distortions (~110 KB): keyed by the source samples, position and reference
  // planes (me/subpel_memo.h), so it may outlive pictures, but never be shared.
  std::unique_ptr<DistortionMemo> memo = std::make_unique<DistortionMemo>();
  std::unique_ptr<IntegerCandidateSource> source;  // this picture's (P pictures), made by begin_picture
  HalfpelScratch halfpel;       // this worker's band of the reference planes' build (encoder/picture.cpp)
  InterContext ic;
  StageTimes times;             // the stage times of the macroblocks this worker coded (CPU seconds)
  double wait_seconds = 0;      // of which waiting for rows of the GPU's progressive answer
  int mb_counts[9] = {};

  // Ready for a picture whose macroblocks see `c` (lambdas, parameters); sources: the P picture's integer candidate
  // sources (nullptr for I pictures). The source itself is made on the worker's first P macroblock, so workers a
  // picture does not use cost nothing.
  void begin_picture(const MbContext& c, CandidateSourceFactory* sources);
  // Decides and codes macroblock (c.mb_x, c.mb_y) of c's picture: the decision in `coding`, the reconstruction in
  // the picture. Accounts the stage times.
  void decide(const MbContext& c, MbCoding& coding);
  // The source goes (it refers to the picture's candidates).
  void end_picture() { source.reset(); sources_ = nullptr; }

 private:
  CandidateSourceFactory* sources_ = nullptr;
};

}  // namespace gme
