// CAVLC entropy coding of macroblock-layer syntax (H.264 9.2): residual blocks (coeff_token with the nC tables
// and chroma DC, trailing ones, level prefix/suffix with suffix-length adaptation, total_zeros, run_before) and the
// mb_type / coded_block_pattern mappings.
#pragma once
#include <cstdint>

#include "common/bitstream.h"

namespace gme {

// Writes one residual_block_cavlc(). coeff: the block's levels in scan order (n = 16 for 4x4 luma, 15 for
// Intra16x16 AC and chroma AC, 4 for chroma DC). nC: 0.. from the neighbours, -1 for chroma DC.
// Returns TotalCoeff.
int write_residual_block(BitWriter& bw, const int* coeff, int n, int nC);
// The number of bits write_residual_block would write (nothing is written; no allocation).
int residual_block_bits(const int* coeff, int n, int nC);

// nC from the neighbouring blocks' TotalCoeff (9.2.1): avail_a/b say whether blocks A/B are available.
inline int predict_nc(bool avail_a, int na, bool avail_b, int nb) {
  if (avail_a && avail_b) return (na + nb + 1) >> 1;
  if (avail_a) return na;
  if (avail_b) return nb;
  return 0;
}

// codeNum of coded_block_pattern (me(v), Table 9-4, 4:2:0) for intra (Intra_4x4) or inter macroblocks.
int cbp_code_num(int cbp, bool intra);

// mb_type values of an I slice (7-11); add 5 in a P slice.
inline int mb_type_i16x16(int pred_mode, int cbp_chroma, bool ac) { return 1 + pred_mode + 4 * cbp_chroma + (ac ? 12 : 0); }
constexpr int kMbTypeI4x4 = 0;
constexpr int kMbTypeIPCM = 25;

}  // namespace gme
