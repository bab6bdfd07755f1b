// Memo of the 4x4-block distortions of sub-pel refinement (me/motion_search.cpp), owned by whoever runs the
// macroblock loop (EncoderState) and handed to the refinement through MotionSearchParams::memo.
#pragma once
#include <cstdint>
#include <cstring>

#include "common/pixel.h"
#include "common/types.h"

namespace gme {

// Memo of 4x4-block distortions for the macroblock being analysed. A partition's SAD or JM SATD is exactly the sum
// of the values of its 4x4 blocks (common/pixel.h), and the 41 partitions of a macroblock mostly refine around the
// same few integer vectors, so most of their 17-candidate refinements evaluate block/vector pairs already seen.
// An entry is a function of the source samples, the reference planes (HalfpelPlanes::serial, unique per build),
// the block's absolute position, the quarter-pel vector and the metric; the memo keeps the source samples and
// macroblock position it was filled for and starts afresh when either differs, so it needs no help from the caller
// beyond one memo per macroblock loop (a loop analyses one macroblock at a time).
class DistortionMemo {
 public:
  static constexpr int kSlots = 64;  // (reference, integer vector, metric) per macroblock; more evicts round robin
  static constexpr int kOffsets = 49;  // quarter-pel offsets -3..3 in x and y around the integer vector
  struct Slot {
    uint16_t known[kOffsets];     // bit 4 * by + bx: d[.][4 * by + bx] is valid
    uint16_t d[kOffsets][16];     // per 4x4 block of the macroblock, raster order
  };

  // sad16x16: the table's 16x16 SAD (DspFuncs::pixel.sad[kB16x16]); a SAD of 0 says the source is the same.
  // Called once per partition search: one SAD costs less than a memcmp per row.
  void enter(int mb_px, int mb_py, const uint8_t* cur_mb, int stride, SadFn sad16x16) {
    if (n_ >= 0 && mb_px == mb_px_ && mb_py == mb_py_ && sad16x16(cur_mb, stride, src_, 16) == 0) return;
    for (int y = 0; y < 16; ++y) std::memcpy(src_ + 16 * y, cur_mb + y * stride, 16);
    mb_px_ = mb_px;
    mb_py_ = mb_py;
    n_ = 0;
    next_evict_ = 0;
  }

  Slot* slot(uint64_t serial, MV v, int metric) {
    const Key k{serial, v.x, v.y, metric};
    for (int i = 0; i < n_; ++i)  // keys apart from the slots: the scan touches one or two cache lines
      if (keys_[i] == k) return &slots_[i];
    int i;
    if (n_ < kSlots) {
      i = n_++;
    } else {
      i = next_evict_;
      next_evict_ = (next_evict_ + 1) % kSlots;
    }
    keys_[i] = k;
    std::memset(slots_[i].known, 0, sizeof slots_[i].known);
    return &slots_[i];
  }

 private:
  struct Key {
    uint64_t serial;
    int16_t vx, vy;
    int32_t metric;
    bool operator==(const Key& o) const {
      return serial == o.serial && vx == o.vx && vy == o.vy && metric == o.metric;
    }
  };
  int n_ = -1;  // slots in use; -1: no macroblock yet
  int next_evict_ = 0;
  int mb_px_ = 0, mb_py_ = 0;
  uint8_t src_[256];
  Key keys_[kSlots];
  Slot slots_[kSlots];
};

}  // namespace gme
