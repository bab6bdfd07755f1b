#include "common/dsp_check.h"

#include <algorithm>
#include <cstring>

#include "common/frame.h"
#include "common/quant.h"
#include "common/types.h"

namespace gme {

bool DspCase::differs(const DspFuncs& a, const DspFuncs& b) const {
  return std::memcmp(reinterpret_cast<const char*>(&a) + offset_, reinterpret_cast<const char*>(&b) + offset_,
                     size_) != 0;
}

namespace {

// Where an entry lies in DspFuncs: member of a table `d`, relative to d.
struct Span {
  size_t offset, size;
};
template <typename T>
Span span_of(const DspFuncs& d, const T& member) {
  return Span{static_cast<size_t>(reinterpret_cast<const char*>(&member) - reinterpret_cast<const char*>(&d)),
              sizeof(T)};
}

template <typename T>
void put(std::vector<uint8_t>* out, const T& v) {
  if (!out) return;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(&v);
  out->insert(out->end(), p, p + sizeof(T));
}
void put_bytes(std::vector<uint8_t>* out, const void* p, size_t n) {
  if (!out) return;
  const uint8_t* b = static_cast<const uint8_t*>(p);
  out->insert(out->end(), b, b + n);
}

int pick(std::mt19937& rng, int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); }
template <typename T, size_t N>
T pick_of(std::mt19937& rng, const T (&values)[N]) {
  return values[rng() % N];
}

// Sample patterns of two operands: the edge trials walk patterns 1..7, the random trials use 0.
enum Pattern { kRandom = 0, kZero, k255, kZeroVs255, k255VsZero, kAlternating, kExtremes, kNearlyEqual, kPatterns };
Pattern pattern_of(int trial) {
  return trial < DspCase::kEdgeTrials ? static_cast<Pattern>(1 + trial % (kPatterns - 1)) : kRandom;
}
void fill_pair(std::vector<uint8_t>& a, std::vector<uint8_t>& b, Pattern p, std::mt19937& rng) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const uint8_t r = static_cast<uint8_t>(rng());
    uint8_t x = r, y = static_cast<uint8_t>(rng());
    switch (p) {
      case kRandom: break;
      case kZero: x = y = 0; break;
      case k255: x = y = 255; break;
      case kZeroVs255: x = 0; y = 255; break;
      case k255VsZero: x = 255; y = 0; break;
      case kAlternating: x = (i & 1) ? 255 : 0; y = (i & 1) ? 0 : 255; break;
      case kExtremes: x = (r & 1) ? 255 : 0; y = (r & 2) ? 255 : 0; break;
      default: x = r; y = static_cast<uint8_t>(clip_pixel(r + pick(rng, -3, 3))); break;  // kNearlyEqual
    }
    a[i] = x;
    b[i] = y;
  }
}
void fill(std::vector<uint8_t>& a, Pattern p, std::mt19937& rng) {
  std::vector<uint8_t> other(a.size());
  fill_pair(a, other, p, rng);
}

constexpr int kStrides[] = {16, 17, 23, 31, 33, 64, 67, 80};
const char* const kSizeNames[kNumBlockSizes] = {"16x16", "16x8", "8x16", "8x8", "8x4", "4x8", "4x4"};

// Two sample areas of up to 16 rows at strides up to 80, at unaligned offsets.
struct TwoAreas {
  std::vector<uint8_t> a = std::vector<uint8_t>(16 * 80 + 32), b = std::vector<uint8_t>(16 * 80 + 32);
  int as = 16, bs = 16, oa = 0, ob = 0;
  void prepare(int trial, std::mt19937& rng) {
    fill_pair(a, b, pattern_of(trial), rng);
    as = pick_of(rng, kStrides);
    bs = pick_of(rng, kStrides);
    oa = pick(rng, 0, 15);
    ob = pick(rng, 0, 15);
  }
  const uint8_t* pa() const { return a.data() + oa; }
  const uint8_t* pb() const { return b.data() + ob; }
};

// ---- pixel ----------------------------------------------------------------------------------------------------

class BlockMetricCase final : public DspCase {
 public:
  enum Kind { kSad, kSatd, kSsd };
  BlockMetricCase(Kind kind, int size, Span s)
      : DspCase(std::string("pixel.") + (kind == kSad ? "sad" : kind == kSatd ? "satd" : "ssd") + "[" +
                    kSizeNames[size] + "]",
                s.offset, s.size),
        kind_(kind), size_(size) {}
  void prepare(int trial, std::mt19937& rng) override { t_.prepare(trial, rng); }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    if (kind_ == kSsd) put(out, f.pixel.ssd[size_](t_.pa(), t_.as, t_.pb(), t_.bs));
    else put(out, (kind_ == kSad ? f.pixel.sad : f.pixel.satd)[size_](t_.pa(), t_.as, t_.pb(), t_.bs));
  }
  int work() const override { return kBlockW[size_] * kBlockH[size_]; }

 private:
  Kind kind_;
  int size_;
  TwoAreas t_;
};

class Sad4x4x16Case final : public DspCase {
 public:
  explicit Sad4x4x16Case(Span s) : DspCase("pixel.sad_4x4_x16", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override { t_.prepare(trial, rng); }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    uint32_t r[16];
    f.pixel.sad_4x4_x16(t_.pa(), t_.as, t_.pb(), t_.bs, r);
    put(out, r);
  }
  int work() const override { return 256; }

 private:
  TwoAreas t_;
};

// With a budget: every version stops after the same row of blocks (a partial sum >= budget); under budget it
// returns the whole sum and every DC. Budgets around the whole sum, from the plain version.
class HadamardAcCase final : public DspCase {
 public:
  explicit HadamardAcCase(Span s) : DspCase("pixel.hadamard_ac_16x16", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    t_.prepare(trial, rng);
    int dc[16];
    const uint32_t whole = pixel_ref().hadamard_ac_16x16(t_.pa(), t_.as, t_.pb(), t_.bs, dc, UINT32_MAX);
    const uint32_t budgets[] = {UINT32_MAX, 0, 1, whole / 4, whole / 2, whole - (whole > 0), whole, whole + 1};
    budget_ = budgets[trial % 8];
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    int dc[16];
    if (out) std::memset(dc, 0xAB, sizeof dc);
    const uint32_t r = f.pixel.hadamard_ac_16x16(t_.pa(), t_.as, t_.pb(), t_.bs, dc, budget_);
    put(out, r);
    if (r < budget_) put(out, dc);  // dc[] of rows not reached is unset
  }
  int work() const override { return 256; }

 private:
  TwoAreas t_;
  uint32_t budget_ = UINT32_MAX;
};

// One 4x4 source block against n = 1..9 contiguous predictions.
class Satd4x4xnCase final : public DspCase {
 public:
  explicit Satd4x4xnCase(Span s) : DspCase("pixel.satd_4x4_xn", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    t_.prepare(trial, rng);
    n_ = 1 + trial % 9;
  }
  void prepare_bench(std::mt19937& rng) override {
    prepare(kEdgeTrials, rng);
    n_ = 9;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    uint32_t r[9];
    f.pixel.satd_4x4_xn(t_.pa(), t_.as, t_.pb(), n_, r);
    put_bytes(out, r, sizeof(uint32_t) * n_);
  }
  int work() const override { return 16 * n_; }

 private:
  TwoAreas t_;
  int n_ = 9;
};

// ---- block4x4 -------------------------------------------------------------------------------------------------

// A strip of n = 1, 2 or 4 blocks whose last row ends at the buffers' last bytes: a version that reads past
// 4 * n bytes per row reads outside them (AddressSanitizer builds see it).
class StripCase final : public DspCase {
 public:
  StripCase(bool satd, Span s) : DspCase(satd ? "block4x4.satd" : "block4x4.sad", s.offset, s.size), satd_(satd) {}
  void prepare(int trial, std::mt19937& rng) override {
    fill_pair(a_, b_, pattern_of(trial), rng);
    n_ = pick_of(rng, {1, 2, 4});
    as_ = pick_of(rng, kStrides);
    bs_ = pick_of(rng, kStrides);
    skew_ = pick(rng, 0, 7);
  }
  void prepare_bench(std::mt19937& rng) override {
    prepare(kEdgeTrials, rng);
    n_ = 4;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    const uint8_t* pa = a_.data() + a_.size() - (3 * as_ + 4 * n_);
    const uint8_t* pb = b_.data() + b_.size() - (3 * bs_ + 4 * n_) - skew_;
    uint16_t r[4];
    (satd_ ? f.block4x4.satd : f.block4x4.sad)(pa, as_, pb, bs_, n_, r);
    put_bytes(out, r, sizeof(uint16_t) * n_);
  }
  int work() const override { return 16 * n_; }

 private:
  bool satd_;
  std::vector<uint8_t> a_ = std::vector<uint8_t>(4 * 80 + 32), b_ = std::vector<uint8_t>(4 * 80 + 32);
  int n_ = 4, as_ = 16, bs_ = 16, skew_ = 0;
};

class MaskedSumCase final : public DspCase {
 public:
  explicit MaskedSumCase(Span s) : DspCase("block4x4.masked_sum", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    const int kind = trial < kEdgeTrials ? trial % 4 : 0;
    for (uint16_t& v : d_) v = static_cast<uint16_t>(kind == 1 ? 8160 : kind == 2 ? 0 : rng() % 8161);
    const uint16_t masks[] = {0, 0xFFFF, 0x0001, 0x8000, 0x00FF, 0xFF00, 0x0F0F, 0x3333};
    mask_ = trial < kEdgeTrials ? masks[trial % 8] : static_cast<uint16_t>(rng());
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override { put(out, f.block4x4.masked_sum(d_, mask_)); }
  int work() const override { return 16; }

 private:
  uint16_t d_[16] = {};
  uint16_t mask_ = 0;
};

// ---- residual4x4 ----------------------------------------------------------------------------------------------

// Source and prediction patterns of a residual: random, extremes, the largest residual of either sign, and small
// residuals (few levels).
void fill_residual(std::vector<uint8_t>& src, std::vector<uint8_t>& pred, int trial, std::mt19937& rng) {
  const int mode = trial % 5;
  for (size_t i = 0; i < src.size(); ++i) {
    const uint32_t r = rng();
    switch (mode) {
      case 0: src[i] = static_cast<uint8_t>(r); pred[i] = static_cast<uint8_t>(r >> 8); break;
      case 1: src[i] = (r & 1) ? 255 : 0; pred[i] = (r & 2) ? 255 : 0; break;
      case 2: src[i] = 0; pred[i] = 255; break;
      case 3: src[i] = 255; pred[i] = 0; break;
      default: src[i] = static_cast<uint8_t>(128 + r % 7 - 3); pred[i] = static_cast<uint8_t>(128 + (r >> 4) % 7 - 3);
    }
  }
}

class ResidualFwdCase final : public DspCase {
 public:
  explicit ResidualFwdCase(Span s) : DspCase("residual4x4.fwd", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    fill_residual(src_, pred_, trial, rng);
    ss_ = pick_of(rng, {4, 16, 33, 67});
    ps_ = pick_of(rng, {4, 16, 33, 67});
    qp_ = trial % 52;
    offset_ = trial % 3 == 0 ? kOffsetIntraSlice : trial % 3 == 1 ? kOffsetInterSlice : pick(rng, 0, 1023);
    first_ = (trial >> 1) & 1;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    int levels[16], dc = 0;
    if (out) std::memset(levels, 0x5A, sizeof levels);
    put(out, f.residual4x4.fwd(src_.data() + 1, ss_, pred_.data() + 3, ps_, qp_, offset_, first_, levels, &dc));
    put(out, levels);
    if (first_) put(out, dc);
  }
  int trials() const override { return 4000; }
  int work() const override { return 16; }

 private:
  std::vector<uint8_t> src_ = std::vector<uint8_t>(4 * 67 + 8), pred_ = std::vector<uint8_t>(4 * 67 + 8);
  int ss_ = 16, ps_ = 16, qp_ = 0, offset_ = 0, first_ = 0;
};

// The inverse of the plain forward's levels (the encoder's use) and of arbitrary levels within the writable range,
// with and without a given DC.
class ResidualInvCase final : public DspCase {
 public:
  explicit ResidualInvCase(Span s) : DspCase("residual4x4.inv", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    std::vector<uint8_t> src(4 * 67 + 8);
    fill_residual(src, pred_, trial, rng);
    ps_ = pick_of(rng, {4, 16, 33, 67});
    ds_ = pick_of(rng, {4, 16, 19, 64});
    qp_ = trial % 52;
    first_ = (trial >> 1) & 1;
    if (trial & 4) {
      for (int& l : levels_) l = pick(rng, -kMaxLevel, kMaxLevel);
    } else {
      Residual4x4Funcs plain;
      residual4x4_init(0, plain);
      int dc = 0;
      plain.fwd(src.data() + 1, 16, pred_.data() + 3, ps_, qp_, kOffsetIntraSlice, first_, levels_, &dc);
    }
    has_dc_ = (trial >> 3) & 1;
    dc_ = trial < kEdgeTrials && (trial & 16) ? ((trial & 32) ? 200000 : -200000) : pick(rng, -200000, 200000);
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    if (out) std::memset(dst_, 7, sizeof dst_);
    f.residual4x4.inv(levels_, qp_, first_, has_dc_ ? &dc_ : nullptr, pred_.data() + 3, ps_, dst_ + 2, ds_);
    put(out, dst_);
  }
  int trials() const override { return 4000; }
  int work() const override { return 16; }

 private:
  std::vector<uint8_t> pred_ = std::vector<uint8_t>(4 * 67 + 8);
  int levels_[16] = {};
  uint8_t dst_[4 * 64 + 8] = {};
  int ps_ = 16, ds_ = 16, qp_ = 0, first_ = 0, dc_ = 0;
  bool has_dc_ = false;
};

// ---- intra ----------------------------------------------------------------------------------------------------

class Intra4x4AllCase final : public DspCase {
 public:
  explicit Intra4x4AllCase(Span s) : DspCase("intra.predict_4x4_all", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    std::vector<uint8_t> v(13);
    fill(v, pattern_of(trial), rng);
    std::memcpy(e_.top, v.data(), 8);
    std::memcpy(e_.left, v.data() + 8, 4);
    e_.top_left = v[12];
    const int bits = trial < kEdgeTrials ? trial >> 3 : static_cast<int>(rng());
    e_.has_top = bits & 1;
    e_.has_left = bits & 2;
    e_.has_top_left = bits & 4;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    uint8_t pred[9][16];
    if (out) std::memset(pred, 0xA5, sizeof pred);
    f.intra.predict_4x4_all(e_, pred);
    put(out, pred);
  }
  int trials() const override { return 4000; }
  int work() const override { return 9 * 16; }

 private:
  Edge4x4 e_;
};

// Plane prediction for 16x16 and chroma 8x8: random edges and the extremes that drive the 16-bit intermediates
// furthest (steepest ramps both ways, all 0, all 255, alternating), where the clip to [0, 255] does most of the work.
class PlaneCase final : public DspCase {
 public:
  explicit PlaneCase(Span s) : DspCase("intra.predict_plane", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    const int kind = trial < kEdgeTrials ? 1 + trial % 5 : 0;
    for (int i = 0; i < 16; ++i) {
      uint8_t t = static_cast<uint8_t>(rng()), l = static_cast<uint8_t>(rng());
      if (kind == 1) { t = i < 8 ? 0 : 255; l = i < 8 ? 0 : 255; }   // steepest rising ramps
      if (kind == 2) { t = i < 8 ? 255 : 0; l = i < 8 ? 255 : 0; }   // steepest falling ramps
      if (kind == 3) { t = i < 8 ? 0 : 255; l = i < 8 ? 255 : 0; }   // opposite directions
      if (kind == 4) { t = (rng() & 1) ? 255 : 0; l = (rng() & 1) ? 255 : 0; }
      if (kind == 5) { t = l = static_cast<uint8_t>(trial & 1 ? 255 : 0); }
      e_.top[i] = t;
      e_.left[i] = l;
    }
    e_.top_left = static_cast<uint8_t>(kind == 1 ? 255 : kind == 2 ? 0 : rng());
    e_.has_top = e_.has_left = e_.has_top_left = true;
    n_ = (trial >> 1) & 1 ? 8 : 16;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    uint8_t pred[256 + 16];
    if (out) std::memset(pred, 0xA5, sizeof pred);
    f.intra.predict_plane(e_, n_, pred);
    put(out, pred);
  }
  int trials() const override { return 4000; }
  int work() const override { return n_ * n_; }

 private:
  Edge16 e_;
  int n_ = 16;
};

// ---- mc -------------------------------------------------------------------------------------------------------

// Chroma MC of every eighth-pel fraction, widths 2, 4 and 8 (the chroma of the partitions), heights 2, 4 and 8,
// positions at and far beyond the picture corners (the clamped origin), a destination wider than the block.
class McChromaCase final : public DspCase {
 public:
  explicit McChromaCase(Span s) : DspCase("mc.chroma", s.offset, s.size) { ref_.alloc(24, 16, kChromaPad); }
  void prepare(int trial, std::mt19937& rng) override {
    std::vector<uint8_t> v(24 * 16);
    fill(v, trial < kEdgeTrials && trial % 3 ? pattern_of(trial) : kRandom, rng);
    for (int y = 0; y < 16; ++y) std::memcpy(ref_.at(0, y), v.data() + 24 * y, 24);
    ref_.extend_borders();
    const int dims[3] = {2, 4, 8};
    w_ = dims[trial % 3];
    h_ = dims[(trial / 3) % 3];
    x_ = pick(rng, 0, 23);
    y_ = pick(rng, 0, 15);
    const int range = trial % 7 == 0 ? 4000 : 80;
    mv_ = MV(pick(rng, -range, range), pick(rng, -range, range));
  }
  void prepare_bench(std::mt19937& rng) override {
    prepare(kEdgeTrials + 1, rng);
    w_ = h_ = 8;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    uint8_t dst[8 * 16];
    if (out) std::memset(dst, 0x5A, sizeof dst);
    f.mc.chroma(dst, 16, ref_, x_, y_, mv_, w_, h_);
    put(out, dst);
  }
  int trials() const override { return 4000; }
  int work() const override { return w_ * h_; }

 private:
  Plane ref_;
  int w_ = 8, h_ = 8, x_ = 0, y_ = 0;
  MV mv_;
};

// Quarter-pel averages: widths 4, 8 and 16, heights 1..16, rows readable 16 bytes wide, odd strides.
class AvgCase final : public DspCase {
 public:
  explicit AvgCase(Span s) : DspCase("mc.avg", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    t_.prepare(trial, rng);
    w_ = pick_of(rng, {4, 8, 16});
    h_ = pick(rng, 1, 16);
    ds_ = pick_of(rng, {16, 17, 24});
    od_ = pick(rng, 0, 7);
  }
  void prepare_bench(std::mt19937& rng) override {
    prepare(kEdgeTrials, rng);
    w_ = h_ = 16;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    uint8_t dst[16 * 24 + 16];
    if (out) std::memset(dst, 0x5A, sizeof dst);
    // Both rows from one buffer at the same stride, as the planes are.
    f.mc.avg(dst + od_, ds_, t_.pa(), t_.a.data() + t_.ob, t_.as, w_, h_);
    put(out, dst);
  }
  int work() const override { return w_ * h_; }

 private:
  TwoAreas t_;
  int w_ = 16, h_ = 16, ds_ = 16, od_ = 0;
};

// ---- halfpel --------------------------------------------------------------------------------------------------

// The 6-tap intermediates of a row of samples, as the plane build gives them to output_row.
void b1_of(const uint8_t* e, int n, int16_t* o) {
  for (int c = 0; c < n; ++c)
    o[c] = static_cast<int16_t>((e[c] + e[c + 5]) - 5 * (e[c + 1] + e[c + 4]) + 20 * (e[c + 2] + e[c + 3]));
}

// b1 of n = 1..96 columns from n + 5 samples that end at the buffer's last byte.
class B1RowCase final : public DspCase {
 public:
  explicit B1RowCase(Span s) : DspCase("halfpel.b1_row", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    n_ = trial < kEdgeTrials ? 1 + trial % 24 : pick(rng, 1, 96);
    e_.assign(static_cast<size_t>(n_) + 5, 0);
    fill(e_, pattern_of(trial), rng);
  }
  void prepare_bench(std::mt19937& rng) override {
    prepare(kEdgeTrials, rng);
    n_ = 96;
    e_.assign(101, 0);
    fill(e_, kRandom, rng);
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    int16_t o[96 + 8];
    if (out) std::memset(o, 0x5A, sizeof o);
    f.halfpel.b1_row(e_.data(), n_, o);
    put(out, o);
  }
  int work() const override { return n_; }

 private:
  std::vector<uint8_t> e_;
  int n_ = 1;
};

// One output row of n = 1..96 samples from six sample rows and their six b1 rows (the values the build makes,
// extremes included).
class OutputRowCase final : public DspCase {
 public:
  explicit OutputRowCase(Span s) : DspCase("halfpel.output_row", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    n_ = trial < kEdgeTrials ? 1 + trial % 24 : pick(rng, 1, 96);
    for (int k = 0; k < 6; ++k) {
      std::vector<uint8_t> wide(static_cast<size_t>(n_) + 5);
      fill(wide, trial < kEdgeTrials && k % 2 ? kRandom : pattern_of(trial + k), rng);
      e_[k].assign(wide.begin() + 2, wide.begin() + 2 + n_);
      fill(wide, pattern_of(trial + 3 * k), rng);
      t_[k].resize(static_cast<size_t>(n_));
      b1_of(wide.data(), n_, t_[k].data());
    }
  }
  void prepare_bench(std::mt19937& rng) override { prepare(kEdgeTrials + 1, rng); }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    const uint8_t* e[6];
    const int16_t* t[6];
    for (int k = 0; k < 6; ++k) {
      e[k] = e_[k].data();
      t[k] = t_[k].data();
    }
    uint8_t o[4][96 + 8];
    if (out) std::memset(o, 0x5A, sizeof o);
    f.halfpel.output_row(e, t, n_, o[0], o[1], o[2], o[3]);
    put(out, o);
  }
  int work() const override { return 4 * n_; }

 private:
  std::vector<uint8_t> e_[6];
  std::vector<int16_t> t_[6];
  int n_ = 1;
};

// ---- deblock --------------------------------------------------------------------------------------------------

// An edge as deblock_picture gives it: bS all 4 or all below 4, every indexA / indexB with nonzero alpha and beta,
// on content made to pass the filter tests often (smooth sides with a step across the edge) and on raw noise; the
// whole area around the edge is compared, so a write outside p2..q2 shows too.
struct EdgeInputs {
  int alpha = 0, beta = 0;
  uint8_t bs[4] = {}, tc0[4] = {};
  bool vertical = false;
  void prepare(int trial, std::mt19937& rng) {
    const int index_a = 16 + pick(rng, 0, 35), index_b = 16 + pick(rng, 0, 35);
    alpha = deblock_alpha(index_a);
    beta = deblock_beta(index_b);
    const bool strong = trial % 5 == 0;
    for (int s = 0; s < 4; ++s) {
      bs[s] = static_cast<uint8_t>(strong ? 4 : trial < kEdgeTrialsBs ? trial % 4 : pick(rng, 0, 3));
      tc0[s] = static_cast<uint8_t>(bs[s] && bs[s] < 4 ? deblock_tc0(index_a, bs[s]) : 0);
    }
    vertical = trial & 1;
  }
  // Samples of one plane: smooth on each side of the edge with a step across it, or noise.
  void content(uint8_t* area, int size, int edge_at, int trial, std::mt19937& rng) const {
    const int base = pick(rng, 0, 255), step = pick(rng, 0, alpha + 7) - (alpha + 8) / 2;
    const int noise = trial % 7 == 0 ? 256 : 1 + pick(rng, 0, beta + 1);
    for (int y = 0; y < size; ++y)
      for (int x = 0; x < size; ++x) {
        const bool q_side = (vertical ? x : y) >= edge_at;
        const int v = noise == 256 ? pick(rng, 0, 255) : base + (q_side ? step : 0) + pick(rng, 0, noise - 1) - noise / 2;
        area[y * size + x] = clip_pixel(v);
      }
  }
  static constexpr int kEdgeTrialsBs = 16;
};

class LumaEdgeCase final : public DspCase {
 public:
  explicit LumaEdgeCase(Span s) : DspCase("deblock.luma_edge", s.offset, s.size) {}
  // A 24 x 24 area; the edge is at row/column 8 of the 16 x 16 block at (4, 4).
  static constexpr int kS = 24;
  void prepare(int trial, std::mt19937& rng) override {
    in_.prepare(trial, rng);
    in_.content(area_, kS, 12, trial, rng);
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    uint8_t a[kS * kS];
    std::memcpy(a, area_, sizeof a);
    uint8_t* q0 = a + 4 * kS + 4 + (in_.vertical ? 8 : 8 * kS);
    f.deblock.luma_edge(q0, in_.vertical ? 1 : kS, in_.vertical ? kS : 1, in_.bs, in_.tc0, in_.alpha, in_.beta);
    put(out, a);
  }
  int trials() const override { return 20000; }
  int work() const override { return 16 * 6; }

 private:
  EdgeInputs in_;
  uint8_t area_[kS * kS] = {};
};

class ChromaEdgesCase final : public DspCase {
 public:
  explicit ChromaEdgesCase(Span s) : DspCase("deblock.chroma_edges", s.offset, s.size) {}
  // Each plane a 16 x 16 area; the edge at row/column 8 of the 8 x 8 block at (4, 4).
  static constexpr int kS = 16;
  void prepare(int trial, std::mt19937& rng) override {
    in_.prepare(trial, rng);
    for (auto& plane : area_) in_.content(plane, kS, 8, trial, rng);
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    uint8_t a[2][kS * kS];
    std::memcpy(a, area_, sizeof a);
    const int at = in_.vertical ? 4 * kS + 8 : 8 * kS + 4;
    f.deblock.chroma_edges(a[0] + at, a[1] + at, in_.vertical ? 1 : kS, in_.vertical ? kS : 1, in_.bs, in_.tc0,
                           in_.alpha, in_.beta);
    put(out, a);
  }
  int trials() const override { return 20000; }
  int work() const override { return 2 * 8 * 2; }

 private:
  EdgeInputs in_;
  uint8_t area_[2][kS * kS] = {};
};

// ---- fullfast -------------------------------------------------------------------------------------------------

// A window row of 16 to 80 positions: 4x4 SADs below 0x8000, random, all at the maximum (saturating sums) or small.
class RowPartitionsCase final : public DspCase {
 public:
  explicit RowPartitionsCase(Span s) : DspCase("fullfast.row_partitions", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    count_ = 16 * pick(rng, 1, 5);
    raw_.resize(static_cast<size_t>(count_) * 16);
    const int kind = trial < kEdgeTrials ? trial % 3 : 0;
    for (uint32_t& v : raw_) v = kind == 1 ? 0x7FFF : kind == 2 ? rng() % 64 : rng() % 0x8000;
  }
  void prepare_bench(std::mt19937& rng) override {
    prepare(kEdgeTrials, rng);
    count_ = 80;  // SearchRange 32: 65 positions, padded to 80
    raw_.resize(80 * 16);
    for (uint32_t& v : raw_) v = rng() % 0x1000;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    const int row = count_ + 16;
    dst_.resize(41 * static_cast<size_t>(row));
    if (out) std::fill(dst_.begin(), dst_.end(), 0x5A5A);
    uint16_t* rows[41];
    for (int p = 0; p < 41; ++p) rows[p] = dst_.data() + p * row;
    f.fullfast.row_partitions(raw_.data(), rows, count_);
    put_bytes(out, dst_.data(), dst_.size() * sizeof(uint16_t));
  }
  int work() const override { return count_; }

 private:
  std::vector<uint32_t> raw_;
  std::vector<uint16_t> dst_;
  int count_ = 16;
};

// A partition's SAD table of SearchRange 1..40 (and up to 128), costs with many ties (small ranges), rows skipped by
// their vertical cost, and tables whose minimum saturates (nothing collected).
class ScreenCase final : public DspCase {
 public:
  explicit ScreenCase(Span s) : DspCase("fullfast.screen", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    const int sr = trial % 11 == 0 ? pick(rng, 41, 128) : pick(rng, 1, 40);
    width_ = 2 * sr + 1;
    stride_ = (width_ + 15) & ~15;
    const int kind = trial < kEdgeTrials ? trial % 4 : 0;
    const int range = kind == 1 ? 4 : kind == 2 ? 0x7FF0 : pick(rng, 1, 3000);
    sad_.assign(static_cast<size_t>(width_) * stride_, 0x7FFF);
    for (int r = 0; r < width_; ++r)
      for (int c = 0; c < width_; ++c)
        sad_[static_cast<size_t>(r) * stride_ + c] = static_cast<uint16_t>(kind == 3 ? 0xFFFF : rng() % range);
    hx_.assign(static_cast<size_t>(stride_), 0xFFFF);
    hy_.resize(static_cast<size_t>(width_));
    const int cost = kind == 1 ? 3 : pick(rng, 1, 800);
    for (int c = 0; c < width_; ++c) hx_[c] = static_cast<uint16_t>(rng() % cost);
    for (int r = 0; r < width_; ++r) hy_[r] = static_cast<uint16_t>(trial % 5 == 0 ? rng() % 0xFFFF : rng() % cost);
  }
  void prepare_bench(std::mt19937& rng) override {
    prepare(kEdgeTrials + 1, rng);
    width_ = 65;  // SearchRange 32
    stride_ = 80;
    prepare_table(rng);
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    cand_.resize(static_cast<size_t>(width_) * stride_ + 1);
    if (out) std::fill(cand_.begin(), cand_.end(), -1);
    int n = -1;
    put(out, f.fullfast.screen(sad_.data(), width_, stride_, hx_.data(), hy_.data(), cand_.data(), &n));
    put(out, n);
    if (n >= 0 && n <= static_cast<int>(cand_.size())) put_bytes(out, cand_.data(), sizeof(int) * n);
  }
  int work() const override { return width_ * width_; }

 private:
  void prepare_table(std::mt19937& rng) {
    sad_.assign(static_cast<size_t>(width_) * stride_, 0x7FFF);
    for (int r = 0; r < width_; ++r)
      for (int c = 0; c < width_; ++c) sad_[static_cast<size_t>(r) * stride_ + c] = static_cast<uint16_t>(rng() % 3000);
    hx_.assign(static_cast<size_t>(stride_), 0xFFFF);
    hy_.resize(static_cast<size_t>(width_));
    for (int c = 0; c < width_; ++c) hx_[c] = static_cast<uint16_t>(rng() % 400);
    for (int r = 0; r < width_; ++r) hy_[r] = static_cast<uint16_t>(rng() % 400);
  }
  std::vector<uint16_t> sad_, hx_, hy_;
  std::vector<int> cand_;
  int width_ = 3, stride_ = 16;
};

// ---- plane_ssd, copy_rows -------------------------------------------------------------------------------------

// Areas of every width 1..70 (whole 16-sample steps plus every remainder), odd strides and offsets, and the
// extreme 0 / 255 areas whose squares are largest; the benchmark times a 640x480 plane.
class PlaneSsdCase final : public DspCase {
 public:
  explicit PlaneSsdCase(Span s) : DspCase("plane_ssd", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    stride_ = 83;
    a_.resize(static_cast<size_t>(stride_) * 40 + 16);
    b_.resize(a_.size());
    fill_pair(a_, b_, pattern_of(trial), rng);
    w_ = 1 + trial % 70;
    h_ = 1 + trial % 37;
    oa_ = trial % 5;
    ob_ = trial % 3;
  }
  void prepare_bench(std::mt19937& rng) override {
    stride_ = 640 + 64;
    a_.resize(static_cast<size_t>(stride_) * 480 + 16);
    b_.resize(a_.size());
    fill_pair(a_, b_, kNearlyEqual, rng);
    w_ = 640;
    h_ = 480;
    oa_ = ob_ = 0;
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    put(out, f.plane_ssd(a_.data() + oa_, stride_, b_.data() + ob_, stride_, w_, h_));
  }
  int trials() const override { return 2000; }
  int work() const override { return w_ * h_; }

 private:
  std::vector<uint8_t> a_, b_;
  int stride_ = 83, w_ = 1, h_ = 1, oa_ = 0, ob_ = 0;
};

// Every width 1..70 (the aligned middle and each head and tail length), destination offsets 0..15 so each alignment
// of the first streamed store occurs, odd strides, bytes beside each row left untouched; the benchmark copies a
// 640x480 plane into one of 16 line-aligned buffers (4.9 MB together, more than a core's L2) as the GPU path stages
// pictures, so each copy meets destination lines that are not in its cache.
class CopyRowsCase final : public DspCase {
 public:
  explicit CopyRowsCase(Span s) : DspCase("copy_rows", s.offset, s.size) {}
  void prepare(int trial, std::mt19937& rng) override {
    bench_ = false;
    src_stride_ = 89;
    dst_stride_ = 97;
    src_.resize(static_cast<size_t>(src_stride_) * 24 + 32);
    fill(src_, pattern_of(trial), rng);
    w_ = 1 + trial % 70;
    h_ = 1 + trial % 23;
    os_ = trial % 7;
    od_ = trial % 16;
  }
  void prepare_bench(std::mt19937& rng) override {
    bench_ = true;
    src_stride_ = 640 + 64;
    dst_stride_ = 640;
    src_.resize(static_cast<size_t>(src_stride_) * 480);
    fill(src_, kRandom, rng);
    w_ = 640;
    h_ = 480;
    os_ = od_ = 0;
    bench_dst_.assign(16, std::vector<uint8_t>(640 * 480 + 64));
  }
  void run(const DspFuncs& f, std::vector<uint8_t>* out) override {
    if (bench_) {
      uint8_t* d = bench_dst_[next_++ & 15].data();
      d += (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;  // line aligned, as a page-locked buffer
      f.copy_rows(d, dst_stride_, src_.data(), src_stride_, w_, h_);
      return;
    }
    std::vector<uint8_t> dst(static_cast<size_t>(dst_stride_) * 24 + 32, 0xA5);
    f.copy_rows(dst.data() + od_, dst_stride_, src_.data() + os_, src_stride_, w_, h_);
    put_bytes(out, dst.data(), dst.size());
  }
  int trials() const override { return 1200; }
  int work() const override { return w_ * h_; }

 private:
  std::vector<uint8_t> src_;
  std::vector<std::vector<uint8_t>> bench_dst_;
  bool bench_ = false;
  int src_stride_ = 89, dst_stride_ = 97, w_ = 1, h_ = 1, os_ = 0, od_ = 0;
  unsigned next_ = 0;
};

}  // namespace

std::vector<std::unique_ptr<DspCase>> dsp_cases() {
  const DspFuncs d{};
  std::vector<std::unique_ptr<DspCase>> v;
  using K = BlockMetricCase::Kind;
  for (K kind : {K::kSad, K::kSatd, K::kSsd})
    for (int s = 0; s < kNumBlockSizes; ++s) {
      const Span sp = kind == K::kSad ? span_of(d, d.pixel.sad[s]) : kind == K::kSatd ? span_of(d, d.pixel.satd[s])
                                                                                       : span_of(d, d.pixel.ssd[s]);
      v.push_back(std::make_unique<BlockMetricCase>(kind, s, sp));
    }
  v.push_back(std::make_unique<Sad4x4x16Case>(span_of(d, d.pixel.sad_4x4_x16)));
  v.push_back(std::make_unique<HadamardAcCase>(span_of(d, d.pixel.hadamard_ac_16x16)));
  v.push_back(std::make_unique<Satd4x4xnCase>(span_of(d, d.pixel.satd_4x4_xn)));
  v.push_back(std::make_unique<StripCase>(true, span_of(d, d.block4x4.satd)));
  v.push_back(std::make_unique<StripCase>(false, span_of(d, d.block4x4.sad)));
  v.push_back(std::make_unique<MaskedSumCase>(span_of(d, d.block4x4.masked_sum)));
  v.push_back(std::make_unique<ResidualFwdCase>(span_of(d, d.residual4x4.fwd)));
  v.push_back(std::make_unique<ResidualInvCase>(span_of(d, d.residual4x4.inv)));
  v.push_back(std::make_unique<Intra4x4AllCase>(span_of(d, d.intra.predict_4x4_all)));
  v.push_back(std::make_unique<PlaneCase>(span_of(d, d.intra.predict_plane)));
  v.push_back(std::make_unique<McChromaCase>(span_of(d, d.mc.chroma)));
  v.push_back(std::make_unique<AvgCase>(span_of(d, d.mc.avg)));
  v.push_back(std::make_unique<B1RowCase>(span_of(d, d.halfpel.b1_row)));
  v.push_back(std::make_unique<OutputRowCase>(span_of(d, d.halfpel.output_row)));
  v.push_back(std::make_unique<LumaEdgeCase>(span_of(d, d.deblock.luma_edge)));
  v.push_back(std::make_unique<ChromaEdgesCase>(span_of(d, d.deblock.chroma_edges)));
  v.push_back(std::make_unique<RowPartitionsCase>(span_of(d, d.fullfast.row_partitions)));
  v.push_back(std::make_unique<ScreenCase>(span_of(d, d.fullfast.screen)));
  v.push_back(std::make_unique<PlaneSsdCase>(span_of(d, d.plane_ssd)));
  v.push_back(std::make_unique<CopyRowsCase>(span_of(d, d.copy_rows)));
  return v;
}

}  // namespace gme
