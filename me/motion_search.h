// JM 19.0 BlockMotionSearch for one partition of a P macroblock (lencod/src/mv_search.c with SearchMode 0):
// the integer vector from an IntegerCandidateSource, then JM's sub-pel refinement (sub_pel_motion_estimation in
// me_fullsearch.c): the 9 half-pel positions around the integer best (centre, then (0,-2), (0,2), (-2,-2),
// (2,-2), (-2,0), (2,0), (-2,2), (2,2) quarter-pel), then the 9 quarter-pel positions around the half-pel best in
// the same spiral order, each with its own lambda and metric (MEDistortionHPel / QPel: SAD or JM's Hadamard SATD).
//
// JM details reproduced:
//  * start_me_refinement_hp = (MEDistortionFPel == MEDistortionHPel): when the half-pel metric is SAD like the
//    integer one, the integer cost seeds the half-pel stage and its centre is not re-evaluated; otherwise the
//    stage starts from "infinite" and evaluates the centre with its own metric. start_me_refinement_qp likewise
//    compares the half- and quarter-pel metrics.
//  * Strict "<" everywhere: the earlier position in the scan wins ties.
//  * check_position0 (RDOptimization 0, P slice, ref 0, 16x16, integer vector (0,0)): the half-pel centre gets
//    lambda_hpel * 16 subtracted (MotionSearchParams::zero_mv_bonus tells whether the caller is in that case).
//    The cost can then be negative (JM's distblk is a signed 64-bit type), hence MotionResult::cost is signed.
// The interpolated samples are those of mc_luma (8.4.2.2.1), computed once per call for the region all 17
// candidates cover.
#pragma once
#include <cstdint>

#include "common/dsp.h"
#include "common/frame.h"
#include "common/types.h"
#include "me/me_interface.h"

namespace gme {

struct HalfpelPlanes;  // common/halfpel.h
class DistortionMemo;  // me/subpel_memo.h

struct MotionSearchParams {
  int lambda_factor_fpel, lambda_factor_hpel, lambda_factor_qpel;  // JM lambda_mf[P][qp][F/H/Q_PEL]
  int hpel_metric, qpel_metric;  // MEDistortionHPel/QPel: 0 SAD, 2 SATD (the integer metric is SAD)
  bool disable_subpel;           // DisableSubpelME
  // Additive to the agreed API (default off): JM's check_position0 bonus. Set it only when RDOptimization == 0,
  // ref_idx == 0 and the partition is the 16x16; the bonus applies when the integer vector is (0,0).
  bool zero_mv_bonus = false;
  // Optional: the reference's precomputed full/half-pel planes (common/halfpel.h); nullptr interpolates locally.
  // Same results either way.
  const HalfpelPlanes* planes = nullptr;
  // Optional, with planes: the macroblock loop's memo of 4x4 distortions (me/subpel_memo.h). Same results
  // without it.
  DistortionMemo* memo = nullptr;
};

struct MotionResult {
  MV mv;         // quarter pel
  MV pred;       // the predictor the cost was taken against
  int64_t cost;  // JM fixed point (D << 16) + lambda * R, R = mv bits only (ref_idx bits are added by MD).
                 // Signed, unlike the first draft of the API: JM's check_position0 bonus can make it negative.
  bool from_table = false;  // the refinement read distortions (of both stages, or of the one whose metric the
                            // table has) from the search's SubpelTable (statistics)
  bool table_escape = false;  // ... and measured positions whose entries the table had escaped (kSubpelEscape)
};

// Integer candidate from `src` (begin_mb already called for this mb/ref), then JM sub-pel refinement.
// cur_mb: top-left pixel of the current macroblock (original picture), (mb_px, mb_py) its luma position; the
// partition's own offset inside the macroblock is taken from partition_geometry(part).
MotionResult motion_search_partition(IntegerCandidateSource& src, int part, MV pred, const uint8_t* cur_mb,
                                     int cur_stride, const Plane& ref, int mb_px, int mb_py,
                                     const MotionSearchParams& p, const DspFuncs& dsp);
// Its second half: the sub-pel refinement of integer candidate `ic` (src.best(part, pred)'s answer), for callers
// that time the two stages apart.
MotionResult refine_partition(IntegerCandidateSource& src, int part, const Candidate& ic, MV pred,
                              const uint8_t* cur_mb, int cur_stride, const Plane& ref, int mb_px, int mb_py,
                              const MotionSearchParams& p, const DspFuncs& dsp);

}  // namespace gme
