#include "encoder/me_sources.h"

#include <climits>
#include <cstddef>
#include <cstdint>

#include "common/stage_clock.h"

#include "encoder/me_fullfast.h"

namespace gme {
namespace {

// GPUIntegerME = 1: the picture-level search kept K candidates per (ref, mb, partition) ranked against a
// predictor known at picture start; the exact predictor is known only now, so they are ranked again.
class RerankSource final : public IntegerCandidateSource {
 public:
  RerankSource(const PictureCandidates& cands, int mb_width, int lambda_factor, std::vector<MV> ranked_against,
               const ProgressiveAnswer& progress)
      : cands_(cands), mb_width_(mb_width), lambda_(lambda_factor), ranked_against_(std::move(ranked_against)),
        progress_(progress) {
    if (!progress_.search) ready_rows_ = INT_MAX;
  }

  void begin_mb(int mb_x, int mb_y, int ref, MV) override {
    mb_ = mb_y * mb_width_ + mb_x;
    ref_ = ref;
    last_part_ = -1;
    // (best()'s prefetch of the macroblock two ahead may touch a row still landing: DMA into host memory is
    // cache-coherent, so that costs at most a wasted miss.)
    if (mb_y >= ready_rows_) {
      const double t0 = stage_clock_seconds();
      ready_rows_ = progress_.search->wait_rows(mb_y + 1);
      if (progress_.wait_seconds) *progress_.wait_seconds += stage_clock_seconds() - t0;
    }
  }

  const SubpelTable* subpel(int part, MV mv, int metric) override {
    if (metric != cands_.subpel_metric) return nullptr;
    const Candidate* c = cands_.at(ref_, mb_, part);
    // The refinement asks right after best() chose `mv` for this partition: its rank is known (candidates are
    // distinct positions, so the rank of a vector is unique).
    if (part == last_part_ && last_rank_ < cands_.subpel_ranks && c[last_rank_].mv == mv)
      return cands_.subpel_at(ref_, mb_, last_rank_);
    for (int k = 0; k < cands_.subpel_ranks; ++k)
      if (c[k].mv == mv) return cands_.subpel_at(ref_, mb_, k);
    return nullptr;
  }

  Candidate best(int part, MV exact_pred) override {
    const Candidate* c = cands_.at(ref_, mb_, part);
    // A query reads K * 8 bytes (one cache line at K = 8) that the GPU download left in memory, not in cache: one
    // miss per query, ~50k per 640x480 picture. Fetch the same partition of the macroblock two ahead, so the
    // stream of misses overlaps the work (the macroblock loop visits macroblocks in order within a slice).
    // The same holds for the sub-pel tables (4 KB per macroblock and rank, read by the refinement right after this
    // query): the partition's row, 98 or 196 bytes, of the first kPrefetchRanks ranks is fetched ahead too, exactly
    // the cache lines it spans. (Rank 0 alone left the first table read of a refinement as its hottest instruction
    // in perf, a quarter of the refinements choosing a later rank; all 8 ranks, three lines each, stalled on the
    // line-fill buffers instead. Ranks 0-3 serve about 91 % of the refinements, doc/GPU.md.)
    // (Straight-line prefetches: the first, a loop over each row's lines, cost ~80 instructions per query in
    // callgrind, half of best()'s own work.)
    if (mb_ + 2 < cands_.num_mbs) {
      const char* ahead = reinterpret_cast<const char*>(cands_.at(ref_, mb_ + 2, part));
      __builtin_prefetch(ahead);
      __builtin_prefetch(ahead + sizeof(Candidate) * static_cast<size_t>(cands_.top_k) - 1);  // K > 8: second line
      if (const SubpelTable* t = cands_.subpel_at(ref_, mb_ + 2, 0)) {
        constexpr int kPrefetchRanks = 4;
        // A 98-byte row spans at most 3 lines: its first byte, +64 and its last byte touch each of them. The 196-byte
        // 16x16 row needs +128 as well.
        const char* row = part == 0 ? reinterpret_cast<const char*>(t->d16x16) : reinterpret_cast<const char*>(t->d[part - 1]);
        const size_t last = part == 0 ? sizeof t->d16x16 - 1 : sizeof t->d[0] - 1;
        const int ranks = cands_.subpel_ranks < kPrefetchRanks ? cands_.subpel_ranks : kPrefetchRanks;
        for (int k = 0; k < ranks; ++k, row += sizeof(SubpelTable)) {
          __builtin_prefetch(row);
          __builtin_prefetch(row + 64);
          __builtin_prefetch(row + last);
          if (part == 0) __builtin_prefetch(row + 128);
        }
      }
    }
    last_part_ = part;
    last_rank_ = 0;
    if (!ranked_against_.empty() &&
        exact_pred == ranked_against_[static_cast<size_t>(ref_) * cands_.num_mbs + static_cast<size_t>(mb_)])
      return c[0];  // already ranked by this very cost (the first slot is never empty: the window has >= 1 position)
    Candidate best = c[0];
    uint64_t best_j = UINT64_MAX;
    // Every vector costs at least 2 mv bits (1 per component): a candidate whose SAD alone with that minimum
    // cannot beat the best so far is skipped without computing its bits (same result, fewer se_bits).
    const uint64_t min_penalty = 2 * static_cast<uint64_t>(lambda_);
    for (int k = 0; k < cands_.top_k; ++k) {
      if (c[k].sad == UINT32_MAX) continue;  // empty slot (window smaller than K)
      if ((static_cast<uint64_t>(c[k].sad) << kLambdaBits) + min_penalty >= best_j) continue;
      const uint64_t j = motion_cost(c[k].sad, lambda_, c[k].mv, exact_pred);
      if (j < best_j) {  // strict: ties keep the earlier stored candidate
        best_j = j;
        best = c[k];
        last_rank_ = k;
      }
    }
    return best;
  }

 private:
  const PictureCandidates& cands_;
  int mb_width_, lambda_;
  std::vector<MV> ranked_against_;  // empty: the order is not known to match any predictor
  ProgressiveAnswer progress_;
  int ready_rows_ = 0;  // macroblock rows known to have landed
  int mb_ = 0, ref_ = 0;
  int last_part_ = -1, last_rank_ = 0;  // best()'s last answer: partition and rank (for subpel())
};

}  // namespace

std::unique_ptr<IntegerCandidateSource> make_fullfast_source(const Plane& cur, std::vector<const Plane*> refs,
                                                             int search_range, int lambda_factor,
                                                             const PixelFuncs& px, const FullFastOptions& opt) {
  return std::make_unique<FullFastSearch>(cur, std::move(refs), search_range, lambda_factor, px, opt);
}

std::unique_ptr<IntegerCandidateSource> make_fullfast_source(const Plane& cur, std::vector<const Plane*> refs,
                                                             int search_range, int lambda_factor,
                                                             const PixelFuncs& px) {
  return make_fullfast_source(cur, std::move(refs), search_range, lambda_factor, px, FullFastOptions{});
}

std::unique_ptr<IntegerCandidateSource> make_rerank_source(const PictureCandidates& cands, int mb_width,
                                                           int lambda_factor) {
  return std::make_unique<RerankSource>(cands, mb_width, lambda_factor, std::vector<MV>(), ProgressiveAnswer{});
}

std::unique_ptr<IntegerCandidateSource> make_rerank_source(const PictureCandidates& cands, int mb_width,
                                                           int lambda_factor, std::vector<MV> ranked_against,
                                                           const ProgressiveAnswer& progress) {
  return std::make_unique<RerankSource>(cands, mb_width, lambda_factor, std::move(ranked_against), progress);
}

}  // namespace gme
