// The plain C++ twin of the GPU integer search, and the request checks and key arithmetic both sides share.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "common/dsp.h"
#include "me/me_interface.h"

namespace gme {

// Largest top_k the CUDA kernels keep in registers (GPUTopK allows 1..16); larger requests are answered by the twin.
constexpr int kGpuMaxTopK = 16;

// Throws std::invalid_argument with a one-line message if `req` breaks the contract (sizes, search range 1..128,
// top_k within the window, centres on full-pel positions whose window stays inside the MV range, ...).
void check_search_request(const PictureSearchRequest& req);

// Window positions of a search range: (2 * range + 1)^2.
inline int window_positions(int search_range) { return (2 * search_range + 1) * (2 * search_range + 1); }

// Candidate order as one 64-bit key: cost in the high bits, the spiral index (< 2^17 for range <= 128) below, so
// ordering keys orders by (cost, spiral). Costs stay below 2^38 (SAD < 2^16, lambda < 2^31, mv bits <= 70), so
// the key never overflows. Equal keys cannot occur for distinct positions.
constexpr int kSpiralBits = 17;
inline uint64_t candidate_key(uint64_t cost, int spiral) {
  return (cost << kSpiralBits) | static_cast<uint64_t>(spiral);
}

// A request over whole pictures (their coded size gives the macroblock grid) with every window centred at (0, 0)
// and its penalty taken against (0, 0), the paper's mode; callers adjust fields from there.
PictureSearchRequest centred_request(const Plane& cur, std::vector<const Plane*> refs, int search_range, int top_k,
                                     int lambda_factor);

// The 41 partition SADs from the sixteen 4x4 SADs (raster order inside the macroblock), in the partition order of
// me_interface.h: the partition tree the kernel and the twin share.
void partition_sads(const uint32_t s4[16], uint32_t out[kNumPartitions]);

// Runs work() on `threads` threads at once (the caller's among them) and returns when every one has returned; the
// first exception one threw is then rethrown. The twins share their work out with it: each call takes items from
// an atomic counter until none is left, and every item's result depends on its inputs only, so the answer is the
// same at any thread count.
void run_twin_team(int threads, const std::function<void()>& work);

// The plain twin of the sub-pel table kernel (gpu/subpel_kernel.cuh): for every (ref, mb, rank < ranks,
// partition), the distortion in `metric` (0 SAD, 2 JM SATD) of the partition at its candidate of that rank plus
// each of the 49 quarter-pel offsets (SubpelTable), predicted with mc_luma (8.4.2.2.1) and measured with the plain
// pixel primitives. `out` holds one table per (ref, mb, rank) in that order; `floors` (nullptr: none) one
// SubpelFloors per (ref, mb): each partition's smallest value over those ranks' tables. threads: as run_twin_team.
void subpel_tables_twin(const PictureSearchRequest& req, const PictureCandidates& cands, int metric, int ranks,
                        SubpelTable* out, SubpelFloors* floors, int threads = 1);

// The twin as a concrete class, so tests and the benchmark can call it directly.
class TwinPictureSearch final : public PictureIntegerSearch {
 public:
  // dsp: the function table whose sad_4x4_x16 the search uses (common/dsp.h).
  explicit TwinPictureSearch(const DspFuncs& dsp) : sad_4x4_x16_(dsp.pixel.sad_4x4_x16) {}
  void search(const PictureSearchRequest& req, PictureCandidates& out) override;
  const char* name() const override { return "cpu-twin"; }
  void set_threads(int threads) override { threads_ = threads > 1 ? threads : 1; }

 private:
  int threads_ = 1;
  void (*sad_4x4_x16_)(const uint8_t* cur, int cur_stride, const uint8_t* ref, int ref_stride, uint32_t out[16]);
};

}  // namespace gme
