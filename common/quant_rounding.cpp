#include "common/quant_rounding.h"

#include <algorithm>

#include "common/quant.h"
#include "common/transform.h"

namespace gme {
namespace {

// JM's list numbers (q_offsets.c OffsetType4x4).
enum : int {
  kListIntraLumaI = 0, kListIntraCbI = 1, kListIntraCrI = 2,        // I slices
  kListIntraLumaP = 3, kListIntraCbP = 4, kListIntraCrP = 5,        // intra macroblocks of P slices
  kListInterLumaP = 9, kListInterCbP = 10, kListInterCrP = 11,      // inter macroblocks of P slices
};
constexpr int kQpCount = 52;
constexpr int kOffsetRange = 1024;  // 1 << (OffsetBits - 1): an offset never exceeds half a step

}  // namespace

RoundingState::RoundingState(const RoundingConfig& cfg) : cfg_(cfg) {
  const int sets = cfg_.fixed ? 1 : kQpCount;
  lists_.assign(static_cast<size_t>(sets) * kLists * 16, 0);
  for (int s = 0; s < sets; ++s) {
    int16_t* l = lists(s);
    for (int k = 0; k < kLists; ++k)
      std::fill(l + 16 * k, l + 16 * (k + 1), static_cast<int16_t>(k <= kListIntraCrI ? kOffsetIntraSlice : kOffsetInterSlice));
  }
  cur_.adaptive = cfg_.adaptive;
}

void RoundingState::start_picture(bool p_slice, int qp, int qp_c) {
  p_slice_ = p_slice;
  qp_ = qp;
  qp_c_ = qp_c;
  cur_.weight = p_slice ? cfg_.weight_p : cfg_.weight_i;
  latch();
}

void RoundingState::start_macroblock(int mb_addr, bool first_in_slice) {
  // encode_one_slice tests p_Vid->current_mb_nr before start_macroblock sets it: the previous macroblock's address,
  // or the slice's first address for its first macroblock (init_slice).
  if (!cfg_.adaptive || cfg_.period <= 0) return;
  const int nr = first_in_slice ? mb_addr : mb_addr - 1;
  if (nr % cfg_.period == 0) latch();
}

void RoundingState::latch() {
  const int16_t* l = lists(list_set(qp_));
  const int16_t* lc = lists(list_set(qp_c_));
  auto copy = [](int16_t* dst, const int16_t* src) { std::copy(src, src + 16, dst); };
  if (!p_slice_) {
    copy(cur_.luma[1], l + 16 * kListIntraLumaI);
    copy(cur_.chroma[0][1], lc + 16 * kListIntraCbI);
    copy(cur_.chroma[1][1], lc + 16 * kListIntraCrI);
    return;
  }
  copy(cur_.luma[0], l + 16 * kListInterLumaP);
  copy(cur_.luma[1], l + 16 * kListIntraLumaP);
  copy(cur_.chroma[0][0], lc + 16 * kListInterCbP);
  copy(cur_.chroma[0][1], lc + 16 * kListIntraCbP);
  copy(cur_.chroma[1][0], lc + 16 * kListInterCrP);
  copy(cur_.chroma[1][1], lc + 16 * kListIntraCrP);
}

void RoundingState::update(bool intra, bool ipcm, const RoundingAdjust& adj) {
  if (!cfg_.adaptive || ipcm) return;
  // update_offset_params: the chroma lists too are those of the luma QP's set (cur_qp), whatever the chroma QP.
  int16_t* l = lists(list_set(qp_));
  const int luma_list = !p_slice_ ? kListIntraLumaI : intra ? kListIntraLumaP : kListInterLumaP;
  auto add = [](int16_t& o, int16_t a) { o = static_cast<int16_t>(std::clamp(o + a, 0, kOffsetRange)); };
  // Every position of the macroblock in raster order onto its position in the 4x4 list, clipped at each step.
  int16_t* ll = l + 16 * luma_list;
  for (int j = 0; j < 16; ++j)
    for (int i = 0; i < 16; ++i) add(ll[4 * (j & 3) + (i & 3)], adj.luma[j][i]);
  if (!cfg_.chroma) return;
  const int cb_list = !p_slice_ ? kListIntraCbI : intra ? kListIntraCbP : kListInterCbP;
  for (int comp = 0; comp < 2; ++comp) {
    int16_t* lc = l + 16 * (cb_list + comp);
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 8; ++i) add(lc[4 * (j & 3) + (i & 3)], adj.chroma[comp][j][i]);
  }
}

int fwd4x4_adaptive(const uint8_t* src, int ss, const uint8_t* pred, int ps, int qp, const int16_t offset[16],
                    int weight, int first, int levels_zz[16], int* dc, int16_t adjust[16], bool* flat) {
  int d[16], coef[16];
  bool any = false;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      d[4 * y + x] = src[y * ss + x] - pred[y * ps + x];
      any |= d[4 * y + x] != 0;
    }
  if (flat) *flat = !any;
  fdct4x4(d, coef);
  if (first) *dc = coef[0];
  return quant4x4_adaptive(coef, qp, offset, weight, first, levels_zz, adjust);
}

}  // namespace gme
