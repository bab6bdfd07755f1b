// Intra macroblock mode decision, as JM 19.0 does it:
//  * RDOptimization = 0 (md_low.c, rd_intra_jm_low.c): Intra4x4 modes by MDDistortion (SATD by default) + lambda *
//    {1, 4} mode bits per block, 6 * lambda per 8x8; Intra16x16 by JM's I16 SATD (find_sad_16x16_JM, no rate term);
//    chroma mode by SATD of the 8 chroma 4x4 blocks; Intra4x4 wins ties against Intra16x16.
//  * RDOptimization = 1 (md_high.c, rd_intra_jm.c): Intra4x4 modes by SSD + lambda * (mode + coefficient bits),
//    Intra16x16 mode by the I16 SATD (I16RDOpt = 0), the chroma mode by JM's fast chroma decision
//    (FastCrIntraDecision = 1), then each macroblock type (I16, I4, IPCM when EnableIPCM) by
//    SSD(luma + chroma) + lambda * (real CAVLC bits of the whole macroblock).
// Costs are in JM's fixed point: (D << 16) + lambda_factor * R.
#pragma once
#include <cstdint>
#include <limits>

#include "encoder/macroblock.h"

namespace gme {

// Decides and codes an intra macroblock: `out` (which must come default-constructed) holds the decision, the
// picture holds its reconstruction.
// Returns the decision's cost in the convention of c.p->rd_optimization (for comparison with inter modes). With
// RDOptimization 0 the coding that follows the decision is timed into *coding_seconds when given.
uint64_t analyse_intra(const MbContext& c, MbCoding& out, double* coding_seconds = nullptr);

// Building blocks (also used by the inter decision in P slices).
bool intra4x4_mode_allowed(const EncoderParams& p, int mode);
bool intra16x16_mode_allowed(const EncoderParams& p, int mode);
// Chroma intra mode: MDDistortion of the 8 chroma 4x4 blocks + rate_lambda * se(v) bits of the mode number.
// rate_lambda = 0: JM low complexity (rdo_low_intra_chroma_decision); lambda_mf[Q_PEL]: JM
// intra_chroma_RD_decision (FastCrIntraDecision = 1, RDOptimization 1).
int decide_chroma_mode(const MbContext& c, int rate_lambda);
// JM find_sad_16x16_JM: best Intra16x16 mode and its distortion (fixed point). A caller that only compares the
// result with `bound` (is it below? the smaller of the two?) may pass it: a result >= bound then only says so (it
// may be a partial distortion, and *mode then any mode), and a result below it is exact, with its mode. P
// macroblocks pass their best inter cost, which most Intra16x16 modes exceed after a row or two of 4x4 blocks.
uint64_t decide_intra16x16_mode(const MbContext& c, int* mode, int64_t bound = INT64_MAX);
// Intra4x4 decision and coding of all 16 blocks; low complexity (rd = false) or RD (rd = true) per block.
// Returns the macroblock's cost. A caller that only wants the macroblock when its cost is <= budget passes the
// budget: as soon as the cost is sure to exceed it the function returns a lower bound of it (> budget), leaving
// mb and the picture's reconstruction of this macroblock partly written (the caller codes another candidate).
uint64_t code_intra4x4_blocks(const MbContext& c, MbCoding& mb, bool rd,
                              uint64_t budget = std::numeric_limits<uint64_t>::max());
// Full RD cost of an already coded macroblock whose reconstruction is in the picture.
uint64_t rd_cost_macroblock(const MbContext& c, const MbCoding& mb);

}  // namespace gme
