#include "me/me_fullfast.h"

#include <algorithm>
#include <climits>

namespace gme {
namespace {

// se_bits() (types.h) without its loop: the per-query cost tables need 2 (2 SR + 1) of these.
inline int mv_bits(int v) {
  const unsigned code_num = v > 0 ? 2u * static_cast<unsigned>(v) - 1u : 2u * static_cast<unsigned>(-v);
  return 2 * (31 - __builtin_clz(code_num + 1)) + 1;
}

}  // namespace

void level_mv_limits(int level_idc, int* min_y, int* max_y) {
  // LEVELVMVLIMIT, quarter-pel column (level 1b, level_idc 9, shares level 1's limit).
  int lo, hi;
  if (level_idc <= 10) { lo = -256; hi = 255; }
  else if (level_idc <= 20) { lo = -512; hi = 511; }
  else if (level_idc <= 30) { lo = -1024; hi = 1023; }
  else if (level_idc < 60) { lo = -2048; hi = 2047; }
  else { lo = -32768; hi = 32767; }
  *min_y = lo;
  *max_y = hi;
}

MV fullfast_window_centre(MV pred, int search_range, const FullFastOptions& opt) {
  const int r4 = 4 * search_range;
  int x = ((pred.x + 2) >> 2) * 4;  // JM_INT_DIVIDE: nearest full pel, halves up
  int y = ((pred.y + 2) >> 2) * 4;
  if (opt.rdo_low_complexity) {      // RDOptimization 0: keep (0,0) inside the window
    x = clip3(-r4, r4, x);
    y = clip3(-r4, r4, y);
  }
  int min_y, max_y;
  level_mv_limits(opt.level_idc, &min_y, &max_y);
  int min_x = opt.level_idc >= 60 ? -32768 : -8192, max_x = opt.level_idc >= 60 ? 32767 : 8191;
  // Window inside the level limits; the bounds are rounded inwards to full pel (see me_fullfast.h).
  auto up4 = [](int v) { return (v + 3) & ~3; };
  auto down4 = [](int v) { return v & ~3; };
  x = clip3(up4(min_x + r4), down4(max_x - r4), x);
  y = clip3(up4(min_y + r4), down4(max_y - r4), y);
  return MV(x, y);
}

FullFastSearch::FullFastSearch(const Plane& cur, std::vector<const Plane*> refs, int search_range,
                               int lambda_factor, const DspFuncs& dsp, const FullFastOptions& opt)
    : cur_(cur),
      refs_(std::move(refs)),
      sr_(search_range),
      lambda_(lambda_factor),
      sad_4x4_x16_(dsp.pixel.sad_4x4_x16),
      kernels_(dsp.fullfast),
      opt_(opt) {
  width_ = 2 * sr_ + 1;
  stride_ = (width_ + 15) & ~15;  // whole AVX2 vectors per row
  npos_ = width_ * stride_;
  tables_.resize(refs_.size());
  // Padding positions keep SAD 0x7FFF (transposed with the row; packs to 16 bits exactly), and hx 0xFFFF makes
  // their screening value saturate, so they are never candidates.
  raw_.assign(16 * static_cast<size_t>(stride_), 0x7FFF);
  hx_.assign(stride_, 0xFFFF);
  hy_.resize(width_);
  cx_.resize(width_);
  cy_.resize(width_);
  cand_.resize(npos_);
}

void FullFastSearch::begin_mb(int mb_x, int mb_y, int ref, MV pred16x16) {
  mb_x_ = mb_x;
  mb_y_ = mb_y;
  ref_ = ref;
  Table& t = tables_[ref];
  if (t.valid && t.mb_x == mb_x && t.mb_y == mb_y && t.pred == pred16x16) return;
  t.valid = false;  // built on the first query, so a reference that mode decision never asks about costs nothing
  t.mb_x = mb_x;
  t.mb_y = mb_y;
  t.pred = pred16x16;
  t.centre = fullfast_window_centre(pred16x16, sr_, opt_);
}

void FullFastSearch::build(Table& t) {
  const Plane& ref = *refs_[ref_];
  t.sad.resize(static_cast<size_t>(kNumPartitions) * npos_);
  const int mb_px = 16 * mb_x_, mb_py = 16 * mb_y_;
  const uint8_t* cur = cur_.at(mb_px, mb_py);
  const int cs = cur_.stride, rs = ref.stride;
  const int x0 = mb_px + t.centre.x / 4 - sr_, y0 = mb_py + t.centre.y / 4 - sr_;
  // frame.h: clamping the block origin reads what unbounded edge replication would give.
  const int xlo = -ref.pad + 3, xhi = ref.width + ref.pad - 19;
  const int ylo = -ref.pad + 3, yhi = ref.height + ref.pad - 19;
  uint16_t* sad = t.sad.data();
  for (int r = 0; r < width_; ++r) {
    const int y = clip3(ylo, yhi, y0 + r);
    // One row of positions into raw_ (16 SADs each), then summed into the 41 partitions' rows.
    uint32_t* out = raw_.data();
    int c = 0;
    for (; c < width_ && x0 + c < xlo; ++c, out += 16) sad_4x4_x16_(cur, cs, ref.at(xlo, y), rs, out);
    const uint8_t* p = ref.at(x0 + c, y);
    for (; c < width_ && x0 + c <= xhi; ++c, out += 16, ++p) sad_4x4_x16_(cur, cs, p, rs, out);
    for (; c < width_; ++c, out += 16) sad_4x4_x16_(cur, cs, ref.at(xhi, y), rs, out);
    uint16_t* dst[kNumPartitions];
    for (int part = 0; part < kNumPartitions; ++part)
      dst[part] = sad + static_cast<size_t>(part) * npos_ + static_cast<size_t>(r) * stride_;
    kernels_.row_partitions(raw_.data(), dst, stride_);
  }
  t.valid = true;
}

uint32_t FullFastSearch::sad_at(int part, int dx, int dy) {
  Table& t = tables_[ref_];
  if (!t.valid) build(t);
  return t.sad[static_cast<size_t>(part) * npos_ + static_cast<size_t>(dy + sr_) * stride_ + (dx + sr_)];
}

// Plain scan with 64-bit costs: used when the 16-bit screening below could saturate (huge SADs with a huge
// lambda), and as the definition the fast path must reproduce.
Candidate FullFastSearch::best_exact(const Table& t, int part, MV pred) const {
  const uint16_t* sad = t.sad.data() + static_cast<size_t>(part) * npos_;
  uint64_t best_j = UINT64_MAX;
  int best_rank = INT_MAX, best_dx = 0, best_dy = 0;
  const int zx = -t.centre.x / 4, zy = -t.centre.y / 4;
  for (int dy = -sr_; dy <= sr_; ++dy)
    for (int dx = -sr_; dx <= sr_; ++dx) {
      uint32_t s = sad[(dy + sr_) * stride_ + dx + sr_];
      uint64_t j = motion_cost(s, lambda_, MV(t.centre.x + 4 * dx, t.centre.y + 4 * dy), pred);
      int rank = (opt_.rdo_low_complexity && dx == zx && dy == zy) ? -1 : spiral_index(dx, dy);
      if (j < best_j || (j == best_j && rank < best_rank)) { best_j = j; best_rank = rank; best_dx = dx; best_dy = dy; }
    }
  Candidate c;
  c.mv = MV(t.centre.x + 4 * best_dx, t.centre.y + 4 * best_dy);
  c.sad = sad[(best_dy + sr_) * stride_ + best_dx + sr_];
  return c;
}

Candidate FullFastSearch::best(int part, MV pred) {
  Table& t = tables_[ref_];
  if (!t.valid) build(t);
  const uint16_t* sad = t.sad.data() + static_cast<size_t>(part) * npos_;
  // J = (sad << k) + lambda * (bits_x + bits_y), k = kLambdaBits. Screening in 16 bits: with m = lambda * bits,
  // q = sad + (mx >> k) + (my >> k) satisfies q <= J >> k <= q + 1, so only positions with q <= min q + 1 can
  // hold the minimum J; the kernel returns a superset of those, which are then compared exactly.
  for (int c = 0; c < width_; ++c) {
    cx_[c] = static_cast<uint32_t>(lambda_) * mv_bits(t.centre.x + 4 * (c - sr_) - pred.x);
    cy_[c] = static_cast<uint32_t>(lambda_) * mv_bits(t.centre.y + 4 * (c - sr_) - pred.y);
    hx_[c] = static_cast<uint16_t>(std::min<uint32_t>(0xFFFF, cx_[c] >> kLambdaBits));
    hy_[c] = static_cast<uint16_t>(std::min<uint32_t>(0xFFFF, cy_[c] >> kLambdaBits));
  }
  int ncand = 0;
  const uint32_t qmin = kernels_.screen(sad, width_, stride_, hx_.data(), hy_.data(), cand_.data(), &ncand);
  if (qmin >= 0xFFFE) return best_exact(t, part, pred);

  const uint32_t limit = qmin + 1;
  uint64_t best_j = UINT64_MAX;
  int best_rank = INT_MAX, best_pos = 0;
  const int zpos = (-t.centre.y / 4 + sr_) * stride_ + (-t.centre.x / 4 + sr_);
  for (int k = 0; k < ncand; ++k) {
    const int r = cand_[k] >> 16, c = cand_[k] & 0xFFFF, pos = r * stride_ + c;
    // Collected under an earlier, higher running minimum:
    if (static_cast<uint32_t>(sad[pos] + hx_[c] + hy_[r]) > limit) continue;
    const uint64_t j = (static_cast<uint64_t>(sad[pos]) << kLambdaBits) + cx_[c] + cy_[r];
    const int rank = (opt_.rdo_low_complexity && pos == zpos) ? -1 : spiral_index(c - sr_, r - sr_);
    if (j < best_j || (j == best_j && rank < best_rank)) { best_j = j; best_rank = rank; best_pos = pos; }
  }
  Candidate out;
  const int r = best_pos / stride_, c = best_pos % stride_;
  out.mv = MV(t.centre.x + 4 * (c - sr_), t.centre.y + 4 * (r - sr_));
  out.sad = sad[best_pos];
  return out;
}

}  // namespace gme
