// Per-macroblock state that outlives the macroblock's own coding: what neighbours read for CAVLC nC contexts,
// intra 4x4 mode prediction and motion vector prediction, and what the deblocking filter reads afterwards.
// Block indices are raster order inside the macroblock: blk = bx + 4 * by (bx, by in 4x4 units, 0..3).
#pragma once
#include <cstdint>

#include "common/types.h"

namespace gme {

enum class MbType : uint8_t {
  I4x4,
  I16x16,
  IPCM,
  PSkip,
  P16x16,
  P16x8,
  P8x16,
  P8x8,      // with sub_mb_type per 8x8
  P8x8Ref0,  // unused in MbInfo: an all-ref_idx-0 P8x8 keeps type P8x8, and its syntax writes mb_type P_8x8ref0 as JM
};

inline bool mb_is_intra(MbType t) { return t == MbType::I4x4 || t == MbType::I16x16 || t == MbType::IPCM; }

// Sub-macroblock partition of one 8x8 in a P8x8 macroblock.
enum class SubMbType : uint8_t { S8x8 = 0, S8x4 = 1, S4x8 = 2, S4x4 = 3 };

struct MbInfo {
  MbType type = MbType::I16x16;
  int slice_id = -1;        // -1: not yet coded in this picture (unavailable)
  int qp = 0;               // QP_Y of the macroblock as the decoder sees it (IPCM: 0)
  uint8_t cbp = 0;          // coded_block_pattern (luma bits 0..3, chroma << 4)
  // TotalCoeff(coeff_token) per 4x4 block, as CAVLC nC derivation reads it: luma in raster order, for Intra16x16
  // the AC block's count; IPCM 16; P_Skip 0. Chroma AC blocks per component in raster order of the 2x2 grid.
  uint8_t total_coeff[16] = {};
  uint8_t total_coeff_chroma[2][4] = {};
  // Intra4x4PredMode per 4x4 block for the most-probable-mode rule; 2 (DC) for macroblocks that are not I4x4.
  int8_t intra4x4_mode[16] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  // Inter data. ref_idx per 8x8 (-1 for intra); ref_id is the referenced Frame::id (deblocking compares pictures,
  // not indices); mv per 4x4 block in quarter pel.
  int8_t ref_idx[4] = {-1, -1, -1, -1};
  int ref_id[4] = {-1, -1, -1, -1};
  MV mv[16];
  SubMbType sub_type[4] = {SubMbType::S8x8, SubMbType::S8x8, SubMbType::S8x8, SubMbType::S8x8};
  // Non-zero transform coefficients per 4x4 luma block (deblocking bS = 2 test); includes the Intra16x16 DC
  // contribution of that block.
  uint16_t nonzero_luma_mask = 0;

  bool is_intra() const { return mb_is_intra(type); }
  bool available() const { return slice_id >= 0; }
};

// Deblocking parameters of one slice (slice header fields); MbInfo::slice_id indexes a vector of these.
struct SliceDeblockParams {
  int disable_idc = 0;        // disable_deblocking_filter_idc: 0 on, 1 off, 2 on except across slice edges
  int alpha_offset_div2 = 0;  // slice_alpha_c0_offset_div2
  int beta_offset_div2 = 0;   // slice_beta_offset_div2
};

}  // namespace gme
