// The two IntegerCandidateSource producers the macroblock loop can be given (see me/me_interface.h).
#pragma once
#include <memory>
#include <vector>

#include "common/dsp.h"
#include "common/frame.h"
#include "me/me_interface.h"

namespace gme {

// JM 19.0 behaviours of the fast full search that depend on the configuration (defaults: RDOptimization != 0,
// LevelIDC 40). See me/me_fullfast.h for what each one changes.
struct FullFastOptions {
  bool rdo_low_complexity = false;  // RDOptimization == 0: centre clipped so (0,0) is in the window; (0,0) wins ties
  int level_idc = 40;               // LevelIDC: vertical MV limit that the window is kept inside
};

// The unmodified run: JM 19.0 fast full search, lazily per macroblock/reference. Options at their defaults.
std::unique_ptr<IntegerCandidateSource> make_fullfast_source(const Plane& cur, std::vector<const Plane*> refs,
                                                             int search_range, int lambda_factor,
                                                             const DspFuncs& dsp);
// The same with the configuration-dependent JM behaviours chosen explicitly (the encoder passes RDOptimization
// and LevelIDC through this one).
std::unique_ptr<IntegerCandidateSource> make_fullfast_source(const Plane& cur, std::vector<const Plane*> refs,
                                                             int search_range, int lambda_factor,
                                                             const DspFuncs& dsp, const FullFastOptions& opt);

// The GPU path: re-ranks the K picture-level candidates with the exact predictor (minimum motion_cost, ties by
// the stored order). Candidates whose sad is UINT32_MAX are treated as empty slots.
std::unique_ptr<IntegerCandidateSource> make_rerank_source(const PictureCandidates& cands, int mb_width,
                                                           int lambda_factor);
// A progressive answer (PictureSearchRequest::progressive): the search to ask for rows as the macroblock loop
// reaches them, and where to add the seconds spent waiting (nullptr: not counted). search == nullptr: complete.
struct ProgressiveAnswer {
  PictureIntegerSearch* search = nullptr;
  double* wait_seconds = nullptr;
};

// The same, told that the candidates of (ref, mb) are already ordered by (motion_cost at ranked_against[ref *
// num_mbs + mb], then stored order) as the picture-level search returns them: when the exact predictor equals that
// predictor the first candidate is the answer and nothing is recomputed (static areas, with the (0,0) centre).
// With `progress`, rows are waited for as the loop reaches them.
std::unique_ptr<IntegerCandidateSource> make_rerank_source(const PictureCandidates& cands, int mb_width,
                                                           int lambda_factor, std::vector<MV> ranked_against,
                                                           const ProgressiveAnswer& progress = ProgressiveAnswer{});

// One picture's sources for several macroblock workers: make() gives each worker its own source (a source keeps the
// state of the macroblock it is on: lazy SAD tables, the last query), and the sources of one factory may run
// concurrently, one thread each; what they share is read-only, or synchronised (the rows of a progressive answer:
// one PictureIntegerSearch::wait_rows call at a time). make() is thread-safe. wait_seconds: where the source adds
// its waits for rows of a progressive answer (nullptr: not counted).
class CandidateSourceFactory {
 public:
  virtual ~CandidateSourceFactory() = default;
  virtual std::unique_ptr<IntegerCandidateSource> make(double* wait_seconds) = 0;
  // Waits until the whole answer the sources read has landed; the sources never call the search again, so it may
  // take up the next picture's call while this picture's last macroblocks are still analysed.
  virtual void complete() {}
};
// make_fullfast_source for every worker (the picture and reference planes must outlive the factory's sources).
std::unique_ptr<CandidateSourceFactory> fullfast_sources(const Plane& cur, std::vector<const Plane*> refs,
                                                         int search_range, int lambda_factor, const DspFuncs& dsp,
                                                         const FullFastOptions& opt);
// make_rerank_source for every worker; progressive: the search whose answer lands row by row, or nullptr.
std::unique_ptr<CandidateSourceFactory> rerank_sources(const PictureCandidates& cands, int mb_width,
                                                       int lambda_factor, std::vector<MV> ranked_against,
                                                       PictureIntegerSearch* progressive);

}  // namespace gme
