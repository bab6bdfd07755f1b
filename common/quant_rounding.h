// The quantiser's rounding offsets and JM 19.0's AdaptiveRounding (JVT-N011): lencod/src/q_offsets.c
// (InitOffsetParam, CalculateOffset4x4Param) and q_around.c (update_offset_params), for 4:2:0 baseline I and P
// slices with 4x4 transforms.
//
// JM keeps offset lists for the whole sequence, one rounding offset (1/2048) per coefficient position of a 4x4
// block: for I slices luma 0, Cb 1, Cr 2; for P slices intra macroblocks 3, 4, 5 and inter macroblocks 9, 10, 11
// (one set of lists, or one per QP when AdaptRoundingFixed = 0). They start at 682 (I) and 342 (P). The quantiser
// does not read the lists but the offsets latched from them ("q_params") at the start of each picture and, with
// AdaptiveRounding, again before every macroblock that follows a macroblock whose address is a multiple of
// AdaptRndPeriod (the first macroblock of a slice looks at its own address). After each coded macroblock (I_PCM
// excepted) update_offset_params adds the adjustments its final coding left (RoundingAdjust) to its slice and
// macroblock type's lists, each addition clipped to [0, 1024].
//
// So with AdaptiveRounding on, the offsets a macroblock is quantised with depend on every macroblock coded before
// the last refresh, in coding order (across slices and pictures of the same type): RoundingState::update must see
// the macroblocks in coding order, and a macroblock can only be coded once the refresh before it has seen all
// earlier updates (chains_macroblocks()). With AdaptiveRounding off the lists never change and every macroblock of
// a picture is quantised with the same offsets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gme {

// The adjustments the quantisation of one macroblock's final coding left, per coefficient position, raster order in
// the macroblock (JM's ARCofAdj4x4[plane][mode] of the chosen mode). The quantisers fill it only with
// AdaptiveRounding (QuantRounding::adaptive); it stays zero otherwise.
struct RoundingAdjust {
  int16_t luma[16][16];
  int16_t chroma[2][8][8];  // Cb, Cr
};

// The offsets one macroblock is quantised with, raster order in a 4x4 block; index [1] for intra macroblocks, [0]
// for inter macroblocks (JM q_params_4x4[plane][intra]). DC transforms use the offset of position 0.
struct QuantRounding {
  bool adaptive = false;  // AdaptiveRounding: quantisers write RoundingAdjust
  int weight = 0;         // AdaptRndWFactor of the picture's slice type (reference pictures)
  int16_t luma[2][16] = {};
  int16_t chroma[2][2][16] = {};  // [Cb, Cr][inter, intra]
};

struct RoundingConfig {
  bool adaptive = false;     // AdaptiveRounding
  bool fixed = true;         // AdaptRoundingFixed: one set of lists for every QP (0: one per QP)
  int period = 16;           // AdaptRndPeriod (>= 1)
  bool chroma = false;       // AdaptRndChroma: chroma lists adapt too
  int weight_i = 4;          // AdaptRndWFactorIRef
  int weight_p = 4;          // AdaptRndWFactorPRef
};

class RoundingState {
 public:
  explicit RoundingState(const RoundingConfig& cfg = RoundingConfig());

  // A picture starts (CalculateOffset4x4Param in code_a_plane): its slice type and QPs, offsets latched.
  void start_picture(bool p_slice, int qp, int qp_c);
  // Before coding macroblock mb_addr (encode_one_slice's refresh every AdaptRndPeriod macroblocks).
  void start_macroblock(int mb_addr, bool first_in_slice);
  // After a macroblock's decision and coding, in coding order (update_offset_params). No effect without
  // AdaptiveRounding or for I_PCM (pass ipcm).
  void update(bool intra, bool ipcm, const RoundingAdjust& adj);

  const QuantRounding& offsets() const { return cur_; }
  // True when a macroblock's quantisation depends on the macroblocks coded before it in the same slice (see above).
  bool chains_macroblocks() const { return chains_macroblocks(cfg_); }
  // The same for a configuration, before any state exists (the encoder's choice of macroblock loop).
  static bool chains_macroblocks(const RoundingConfig& cfg) { return cfg.adaptive; }
  const RoundingConfig& config() const { return cfg_; }

 private:
  static constexpr int kLists = 12;  // JM list numbers 0..11 (6..8, the B-slice intra lists, unused)
  using Lists = int16_t[kLists][16];
  void latch();
  int list_set(int qp) const { return cfg_.fixed ? 0 : qp; }

  RoundingConfig cfg_;
  std::vector<int16_t> lists_;  // [list set][kLists][16]
  QuantRounding cur_;
  bool p_slice_ = false;
  int qp_ = 0, qp_c_ = 0;
  int16_t* lists(int set) { return lists_.data() + static_cast<size_t>(set) * kLists * 16; }
};

// Forward coding of one 4x4 block with per-position offsets (the AdaptiveRounding path; the fixed-offset path is
// common/residual4x4.h): residual src - pred, core transform, quant4x4_adaptive into levels_zz and adjust (raster).
// first = 1 leaves the DC out (its unquantised value goes to *dc). Returns the number of non-zero levels; *flat
// (when given) tells whether the residual was zero everywhere, a block JM's luma 4x4 coding (check_zero) does not
// quantise at all, leaving its adjustments as they were.
int fwd4x4_adaptive(const uint8_t* src, int src_stride, const uint8_t* pred, int pred_stride, int qp,
                    const int16_t offset[16], int weight, int first, int levels_zz[16], int* dc, int16_t adjust[16],
                    bool* flat = nullptr);

}  // namespace gme
