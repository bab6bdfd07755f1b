#include "me/me_sources.h"

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "common/picture_trace.h"
#include "common/stage_clock.h"

#include "me/me_fullfast.h"

namespace gme {
namespace {

// What every re-ranking source of one picture shares: the answer, the predictors it was ranked against and the
// rows of a progressive answer known to have landed. Producers need not be thread-safe, so one wait_rows() call
// runs at a time; the count of landed rows is read without the lock. The sources find the answer through the
// pointers published here, never through PictureCandidates' own fields: a producer whose device fails mid-picture
// refills the answer from its twin inside wait_rows() (the same candidates, possibly elsewhere), while other
// workers go on reading rows that had landed.
struct RerankShared {
  RerankShared(const PictureCandidates& c, int w, int l, std::vector<MV> ranked, PictureIntegerSearch* s)
      : cands(c), mb_width(w), lambda(l), num_mbs(c.num_mbs), top_k(c.top_k), subpel_ranks(c.subpel_ranks),
        subpel_metric(c.subpel_metric), ranked_against(std::move(ranked)), search(s) {
    publish();
    if (!search) ready.store(INT_MAX, std::memory_order_release);
  }
  // Rows [0, rows) have landed when this returns; returns how many rows are known to have (>= rows).
  int wait(int rows) {
    const int known = ready.load(std::memory_order_acquire);
    if (rows <= known) return known;
    std::lock_guard<std::mutex> lock(m);
    int r = ready.load(std::memory_order_relaxed);
    if (rows > r) {
      picture_trace("rows_wait", rows);
      r = search->wait_rows(rows);
      picture_trace("rows_landed", r);
      publish();
      ready.store(r, std::memory_order_release);
    }
    return r;
  }
  // Every row (CandidateSourceFactory::complete).
  void complete() {
    std::lock_guard<std::mutex> lock(m);
    if (ready.load(std::memory_order_relaxed) == INT_MAX) return;
    if (search) {
      search->wait_rows(num_mbs / mb_width);
      publish();
    }
    ready.store(INT_MAX, std::memory_order_release);
  }
  void publish() {
    candidates.store(cands.begin(), std::memory_order_release);
    tables.store(cands.subpel_at(0, 0, 0), std::memory_order_release);
    floors.store(cands.floors_at(0, 0), std::memory_order_release);
  }

  const PictureCandidates& cands;  // read by wait() and the constructor only
  const int mb_width, lambda;
  const int num_mbs, top_k, subpel_ranks, subpel_metric;
  const std::vector<MV> ranked_against;  // empty: the order is not known to match any predictor
  PictureIntegerSearch* const search;    // nullptr: the answer is complete
  std::mutex m;
  std::atomic<int> ready{0};
  std::atomic<const Candidate*> candidates{nullptr};  // (ref, mb, partition, rank) as PictureCandidates::at
  std::atomic<const SubpelTable*> tables{nullptr};    // (ref, mb, rank) as PictureCandidates::subpel_at; nullptr: none
  std::atomic<const SubpelFloors*> floors{nullptr};   // (ref, mb) as PictureCandidates::floors_at; nullptr: none
};

// GPUIntegerME = 1: the picture-level search kept K candidates per (ref, mb, partition) ranked against a
// predictor known at picture start; the exact predictor is known only now, so they are ranked again. One source
// per macroblock worker (its state is the macroblock being analysed); what they share is read-only or RerankShared's.
class RerankSource final : public IntegerCandidateSource {
 public:
  RerankSource(std::shared_ptr<RerankShared> shared, double* wait_seconds)
      : shared_(std::move(shared)), mb_width_(shared_->mb_width), lambda_(shared_->lambda),
        num_mbs_(shared_->num_mbs), top_k_(shared_->top_k), subpel_ranks_(shared_->subpel_ranks),
        subpel_metric_(shared_->subpel_metric), wait_seconds_(wait_seconds) {
    if (!shared_->search) ready_rows_ = INT_MAX;
  }

  void begin_mb(int mb_x, int mb_y, int ref, MV) override {
    last_part_ = -1;
    const int mb = mb_y * mb_width_ + mb_x;
    if (mb == mb_ && ref == ref_ && mb_cands_) return;  // called again for the same macroblock and reference
    mb_ = mb;
    ref_ = ref;
    // (best()'s prefetch of the macroblock two ahead may touch a row still landing: DMA into host memory is
    // cache-coherent, so that costs at most a wasted miss.)
    if (mb_y >= ready_rows_) {
      const double t0 = stage_clock_seconds();
      ready_rows_ = shared_->wait(mb_y + 1);
      if (wait_seconds_) *wait_seconds_ += stage_clock_seconds() - t0;
    }
    // The macroblock's lists and tables, and those of the macroblock two ahead that best() prefetches, found once
    // here instead of in every query, after the wait (a CUDA error in it refills the answer from the twin, elsewhere).
    const Candidate* all = shared_->candidates.load(std::memory_order_acquire);
    const SubpelTable* tables = shared_->tables.load(std::memory_order_acquire);
    const size_t at = static_cast<size_t>(ref_) * num_mbs_ + mb_;
    mb_cands_ = all + at * kNumPartitions * top_k_;
    mb_tables_ = tables ? tables + at * subpel_ranks_ : nullptr;
    const bool ahead = mb_ + 2 < num_mbs_;
    ahead_cands_ = ahead ? mb_cands_ + 2 * kNumPartitions * top_k_ : nullptr;
    ahead_tables_ = ahead && tables ? mb_tables_ + 2 * subpel_ranks_ : nullptr;
    const std::vector<MV>& ranked = shared_->ranked_against;
    exact_first_ = ranked.empty() ? nullptr : &ranked[at];
    // Floors bound every rank's refinement only where every rank best() may choose has a table.
    const SubpelFloors* floors = shared_->floors.load(std::memory_order_acquire);
    mb_floors_ = floors && tables && subpel_ranks_ >= top_k_ ? floors + mb_ : nullptr;
    if (mb_floors_ && ahead) {  // read before the macroblock's first search: fetched two macroblocks ahead
      const char* f = reinterpret_cast<const char*>(mb_floors_ + 2);
      __builtin_prefetch(f);
      __builtin_prefetch(f + 64);
      __builtin_prefetch(f + 128);
    }
  }

  const SubpelFloors* subpel_floors(int ref, int metric) override {
    return mb_floors_ && metric == subpel_metric_ ? mb_floors_ + static_cast<size_t>(ref) * num_mbs_ : nullptr;
  }

  const SubpelTable* subpel(int part, MV mv, int metric) override {
    // The refinement asks right after best() chose `mv` for this partition: its rank, hence its table, is known
    // (candidates are distinct positions, so the rank of a vector is unique).
    if (part == last_part_ && mv == last_mv_ && metric == subpel_metric_) return last_table_;
    if (metric != subpel_metric_ || !mb_tables_) return nullptr;
    const Candidate* c = mb_cands_ + part * top_k_;
    for (int k = 0; k < subpel_ranks_; ++k)
      if (c[k].mv == mv) return mb_tables_ + k;
    return nullptr;
  }

  Candidate best(int part, MV exact_pred) override {
    const int k_max = top_k_;
    const Candidate* c = mb_cands_ + part * k_max;
    // A query reads K * 8 bytes (one cache line at K = 8) that the GPU download left in memory, not in cache: one
    // miss per query, ~50k per 640x480 picture. Fetch the same partition of the macroblock two ahead, so the
    // stream of misses overlaps the work (the macroblock loop visits macroblocks in order within a slice).
    // The same holds for the sub-pel tables (2 KB per macroblock and rank), read by the refinement right after this
    // query: the partition's row, its base and near part (slots 0-27, 32 bytes within a cache line: what most
    // refinements read, me_interface.h), for the first kPrefetchRanks ranks, one line each.
    // One line per rank keeps the prefetches per query few enough not to stall on the line-fill buffers, and every
    // rank up to kPrefetchRanks is fetched because refinements that choose a later rank than 0 are common
    // (doc/GPU.md).
    if (ahead_cands_) {
      const char* ahead = reinterpret_cast<const char*>(ahead_cands_ + part * k_max);
      __builtin_prefetch(ahead);
      __builtin_prefetch(ahead + sizeof(Candidate) * static_cast<size_t>(k_max) - 1);  // K > 8: second line
      if (const SubpelTable* t = ahead_tables_) {
        const char* row = reinterpret_cast<const char*>(&t->row[part]);
        if (subpel_ranks_ >= kPrefetchRanks) {  // the usual case, unrolled (a loop cost 4 instructions a line)
#pragma GCC unroll 16
          for (int k = 0; k < kPrefetchRanks; ++k) __builtin_prefetch(row + k * sizeof(SubpelTable));
        } else {
          for (int k = 0; k < subpel_ranks_; ++k) __builtin_prefetch(row + k * sizeof(SubpelTable));
        }
      }
    }
    last_part_ = part;
    if (exact_first_ && exact_pred == *exact_first_)
      return chose(c, 0);  // already ranked by this very cost (the first slot is never empty: the window has >= 1 position)
    // c[0] is never empty, so the first cost is real; an empty slot later (sad UINT32_MAX: a window smaller than K)
    // then fails the SAD-only test below, a real cost being far below 2^48.
    int best = 0;
    uint64_t best_j = motion_cost(c[0].sad, lambda_, c[0].mv, exact_pred);
    // Every vector costs at least 2 mv bits (1 per component): a candidate whose SAD alone with that minimum
    // cannot beat the best so far is skipped without computing its bits (same result, fewer se_bits).
    const uint64_t min_penalty = 2 * static_cast<uint64_t>(lambda_);
    for (int k = 1; k < k_max; ++k) {
      const Candidate ck = c[k];
      if ((static_cast<uint64_t>(ck.sad) << kLambdaBits) + min_penalty >= best_j) continue;
      const uint64_t j = motion_cost(ck.sad, lambda_, ck.mv, exact_pred);
      if (j < best_j) {  // strict: ties keep the earlier stored candidate
        best_j = j;
        best = k;
      }
    }
    return chose(c, best);
  }

 private:
  // Ranks whose first table line best() prefetches: every rank of the default GPUTopK, since the re-ranking may
  // choose any of them and a table row the refinement reads is otherwise a miss in memory the DMA wrote.
  static constexpr int kPrefetchRanks = 8;
  // best()'s answer: rank k of the partition's list c; what subpel() hands out for it.
  Candidate chose(const Candidate* c, int k) {
    last_mv_ = c[k].mv;
    last_table_ = mb_tables_ && k < subpel_ranks_ ? mb_tables_ + k : nullptr;
    return c[k];
  }

  std::shared_ptr<RerankShared> shared_;
  int mb_width_, lambda_;
  int num_mbs_, top_k_, subpel_ranks_, subpel_metric_;
  double* wait_seconds_;  // where this source adds its waits for rows (nullptr: not counted)
  int ready_rows_ = 0;    // macroblock rows known to have landed
  int mb_ = 0, ref_ = 0;
  int last_part_ = -1;  // best()'s last answer: partition, vector and its table (for subpel())
  MV last_mv_;
  const SubpelTable* last_table_ = nullptr;
  // Set by begin_mb: the macroblock's candidates (partition 0) and rank-0 table (nullptr: no tables), the same for
  // the macroblock two ahead (nullptr: none), and the predictor its lists were ranked against (nullptr: unknown).
  const Candidate* mb_cands_ = nullptr;
  const SubpelTable* mb_tables_ = nullptr;
  const Candidate* ahead_cands_ = nullptr;
  const SubpelTable* ahead_tables_ = nullptr;
  const SubpelFloors* mb_floors_ = nullptr;  // reference 0's floors of the macroblock (nullptr: no bounds)
  const MV* exact_first_ = nullptr;
};

class FullFastFactory final : public CandidateSourceFactory {
 public:
  FullFastFactory(const Plane& cur, std::vector<const Plane*> refs, int search_range, int lambda_factor,
                  const DspFuncs& dsp, const FullFastOptions& opt)
      : cur_(cur), refs_(std::move(refs)), sr_(search_range), lambda_(lambda_factor), dsp_(dsp), opt_(opt) {}
  std::unique_ptr<IntegerCandidateSource> make(double*) override {
    return std::make_unique<FullFastSearch>(cur_, refs_, sr_, lambda_, dsp_, opt_);
  }

 private:
  const Plane& cur_;
  const std::vector<const Plane*> refs_;
  const int sr_, lambda_;
  const DspFuncs& dsp_;  // the encoder's table: read-only, shared by every worker's source
  const FullFastOptions opt_;
};

class RerankFactory final : public CandidateSourceFactory {
 public:
  explicit RerankFactory(std::shared_ptr<RerankShared> shared) : shared_(std::move(shared)) {}
  std::unique_ptr<IntegerCandidateSource> make(double* wait_seconds) override {
    return std::make_unique<RerankSource>(shared_, wait_seconds);
  }
  void complete() override { shared_->complete(); }

 private:
  std::shared_ptr<RerankShared> shared_;
};

}  // namespace

std::unique_ptr<IntegerCandidateSource> make_fullfast_source(const Plane& cur, std::vector<const Plane*> refs,
                                                             int search_range, int lambda_factor,
                                                             const DspFuncs& dsp, const FullFastOptions& opt) {
  return std::make_unique<FullFastSearch>(cur, std::move(refs), search_range, lambda_factor, dsp, opt);
}

std::unique_ptr<IntegerCandidateSource> make_fullfast_source(const Plane& cur, std::vector<const Plane*> refs,
                                                             int search_range, int lambda_factor,
                                                             const DspFuncs& dsp) {
  return make_fullfast_source(cur, std::move(refs), search_range, lambda_factor, dsp, FullFastOptions{});
}

std::unique_ptr<IntegerCandidateSource> make_rerank_source(const PictureCandidates& cands, int mb_width,
                                                           int lambda_factor) {
  return make_rerank_source(cands, mb_width, lambda_factor, std::vector<MV>(), ProgressiveAnswer{});
}

std::unique_ptr<IntegerCandidateSource> make_rerank_source(const PictureCandidates& cands, int mb_width,
                                                           int lambda_factor, std::vector<MV> ranked_against,
                                                           const ProgressiveAnswer& progress) {
  auto shared = std::make_shared<RerankShared>(cands, mb_width, lambda_factor, std::move(ranked_against), progress.search);
  return std::make_unique<RerankSource>(std::move(shared), progress.wait_seconds);
}

std::unique_ptr<CandidateSourceFactory> fullfast_sources(const Plane& cur, std::vector<const Plane*> refs,
                                                         int search_range, int lambda_factor, const DspFuncs& dsp,
                                                         const FullFastOptions& opt) {
  return std::make_unique<FullFastFactory>(cur, std::move(refs), search_range, lambda_factor, dsp, opt);
}

std::unique_ptr<CandidateSourceFactory> rerank_sources(const PictureCandidates& cands, int mb_width,
                                                       int lambda_factor, std::vector<MV> ranked_against,
                                                       PictureIntegerSearch* progressive) {
  return std::make_unique<RerankFactory>(
      std::make_shared<RerankShared>(cands, mb_width, lambda_factor, std::move(ranked_against), progressive));
}

}  // namespace gme
