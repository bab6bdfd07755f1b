// JM 19.0 fast full search (SearchMode 0, lencod/src/me_fullfast.c), the integer search of the unmodified run.
//
// Per macroblock and reference, when the first partition asks:
//  * Window centre. JM takes the 16x16 predictor of the reference (the exact one, from the neighbours as decided
//    so far) and rounds it to full pel with JM_INT_DIVIDE = 1: c = ((p + 2) >> 2) * 4 per component, i.e. to the
//    nearest full pel, halves upwards (-6 -> -4, -2 -> 0, 2 -> 4). With RDOptimization 0 the centre is then
//    clipped to [-4 SR, 4 SR] so that the (0,0) vector lies in the window. Finally it is clipped to
//    [MaxMv[min] + 4 SR, MaxMv[max] - 4 SR] with the level's quarter-pel limits (horizontal -8192..8191, vertical
//    from LEVELVMVLIMIT, e.g. -2048..2047 for levels 3.1-5.2): every window position is then a legal vector (JM's
//    clip_mv_range at search time). JM can leave the centre off the full-pel grid there (2047 - 4 SR); this code
//    rounds that bound inwards to a multiple of 4 instead - it matters only for predictors hundreds of pels away.
//  * SAD of each of the 16 4x4 blocks at all (2 SR + 1)^2 positions (PixelFuncs::sad_4x4_x16), summed into the
//    41 partitions (JM's update_full_search_large_blocks). Reference fetches are clamped as frame.h says, so any
//    position, however far outside the picture, reads edge-replicated samples.
// Per partition query: argmin over the window of motion_cost(sad, lambda, mv, exact partition predictor), ties to
// the smaller spiral index around the centre (JM's scan order with a strict "<"); with RDOptimization 0 the (0,0)
// vector is evaluated before the scan, so it wins ties. JM also rejects positions whose |mv - pred| reaches
// max_mvd; with the window built as above that test can never fire (|mv - pred| <= 8 SR + 4 < max_mvd), so it is
// not repeated here.
#pragma once
#include <cstdint>
#include <vector>

#include "common/dsp.h"
#include "common/frame.h"
#include "me/me_interface.h"
#include "me/me_sources.h"

namespace gme {

// Quarter-pel vertical MV limits of a level (JM's LEVELVMVLIMIT, quarter-pel columns); horizontal is -8192..8191
// below level 6.
void level_mv_limits(int level_idc, int* min_y, int* max_y);

// The window centre JM uses for a 16x16 predictor (quarter pel in, multiple of 4 out), as described above.
MV fullfast_window_centre(MV pred16x16, int search_range, const FullFastOptions& opt);

class FullFastSearch final : public IntegerCandidateSource {
 public:
  FullFastSearch(const Plane& cur, std::vector<const Plane*> refs, int search_range, int lambda_factor,
                 const DspFuncs& dsp, const FullFastOptions& opt);
  // Re-beginning the (mb, ref, predictor) already begun keeps its SAD table: a caller that interleaves
  // references calls begin_mb again to switch.
  void begin_mb(int mb_x, int mb_y, int ref, MV pred16x16) override;
  Candidate best(int part, MV exact_pred) override;
  const SubpelTable* subpel(int, MV, int) override { return nullptr; }  // the refinement computes its own

  MV centre() const { return tables_[ref_].centre; }
  // Raw SAD of a partition at window offset (dx, dy) full pel from the centre (for tests).
  uint32_t sad_at(int part, int dx, int dy);

 private:
  struct Table {
    bool valid = false;
    int mb_x = -1, mb_y = -1;
    MV pred, centre;
    std::vector<uint16_t> sad;  // [part][row * stride_ + col], padding columns >= 0x7FFF
  };
  void build(Table& t);
  Candidate best_exact(const Table& t, int part, MV pred) const;

  const Plane& cur_;
  std::vector<const Plane*> refs_;
  int sr_, lambda_;
  void (*sad_4x4_x16_)(const uint8_t* cur, int cur_stride, const uint8_t* ref, int ref_stride, uint32_t out[16]);
  FullFastKernels kernels_;
  FullFastOptions opt_;
  int width_, stride_, npos_;  // window width (2 SR + 1), padded row stride, padded table size per partition
  int ref_ = 0, mb_x_ = 0, mb_y_ = 0;
  std::vector<Table> tables_;
  std::vector<uint32_t> raw_;  // 16 4x4 SADs per position, position-major
  std::vector<uint16_t> hx_, hy_;  // per query: (lambda * bits) >> 16 per column / row (screening)
  std::vector<uint32_t> cx_, cy_;  // per query: lambda * bits per column / row (exact cost)
  std::vector<int> cand_;          // screened positions
};

}  // namespace gme
