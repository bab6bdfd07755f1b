// P macroblock mode decision, as JM 19.0 does it (see doc/RD.md):
//  * RDOptimization = 0 (md_low.c): per partition and reference the motion cost of BlockMotionSearch (integer
//    candidate + sub-pel refinement, (D << 16) + lambda * mv bits) plus lambda_mf[Q_PEL] / 4 * ref_idx bits picks
//    the reference; 16x16, 16x8, 8x16 and P8x8 (sub-modes by motion cost + lambda * sub_mb_type bits - 1) compete
//    by these costs, then Intra4x4 (cost <=) and Intra16x16 (cost <) by their low-complexity costs. A chosen
//    16x16 with ref 0, the P_Skip vector and no coded residual becomes P_Skip. Where the picture-level search's
//    sub-pel tables bound every partition's cost (their floors), candidates and sub types that cannot be the
//    cheapest are not searched: the same decisions with less work (CostBounds in the .cpp, doc/GPU.md).
//  * RDOptimization = 1 (md_high.c): the same motion search (lambda_mf from sqrt(lambda_md), reference by the full
//    lambda_mf[Q_PEL]), P8x8 sub types by JM's 8x8 RD cost (rdcost_for_8x8blocks), then P_Skip, 16x16, 16x8, 8x16,
//    P8x8 and the intra types by SSD + lambda_md * real bits.
#pragma once
#include <cstdint>
#include <vector>

#include "encoder/encoder.h"
#include "encoder/macroblock.h"
#include "me/me_interface.h"
#include "me/motion_search.h"

namespace gme {

// What the P decision needs beyond MbContext: the integer candidate source of this picture and the sub-pel
// search parameters; accumulates the ME times.
struct InterContext {
  IntegerCandidateSource* source = nullptr;
  MotionSearchParams msp{};
  StageTimes* times = nullptr;
  uint32_t timing_sample_state = 0x9E3779B9u;  // xorshift32 state of the stage-time sampling (never 0)
};

// Decides and codes one macroblock of a P slice into `out`, which must come default-constructed (RDOptimization 0
// builds its intra decision there); the picture holds its reconstruction.
void analyse_p_macroblock(const MbContext& c, InterContext& ic, MbCoding& out);

}  // namespace gme
