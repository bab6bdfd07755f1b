#include "encoder/lambda.h"

#include <algorithm>
#include <cmath>

namespace gme {
namespace {

// JM lencod/inc/slice.h QP2QUANT: the RDOptimization = 0 lambda, indexed by max(0, qp - SHIFT_QP).
const int kQp2Quant[40] = {1,  1,  1,  1,  2,  2,  2,  2,  3,  3,  3,  4,  4,  4,  5,  6,  6,  7,  8,  9,
                           10, 11, 13, 14, 16, 18, 20, 23, 25, 29, 32, 36, 40, 45, 51, 57, 64, 72, 81, 91};
constexpr int kShiftQp = 12;

}  // namespace

int jm_lambda_factor(double lambda) {
  static_assert(kLambdaBits >= kJmLambdaBits, "cost precision below JM's");
  return lambda_factor(lambda);
}

Lambdas compute_lambdas(const EncoderParams& p, SliceType type, int qp) {
  (void)type;  // with no B pictures the I and P formulas of JM 19.0 coincide (0.85 * 2^((qp-12)/3))
  Lambdas l;
  const int metric[3] = {p.me_distortion_fpel, p.me_distortion_hpel, p.me_distortion_qpel};
  if (p.rd_optimization == 0) {
    // SetLagrangianMultipliersOff: lambda_md = QP2QUANT[max(0, qp - 12)]; lambda_me = lambda_md for SAD/SATD
    // (squared for SSE).
    l.md = kQp2Quant[std::max(0, qp - kShiftQp)];
    for (int k = 0; k < 3; ++k) l.me[k] = metric[k] == 1 ? l.md * l.md : l.md;
  } else {
    // get_implicit_lambda_{i,p}_slice (NumberBFrames = 0): 0.85 * 2^((qp - 12) / 3), times 0.95 unless both
    // sub-pel metrics are SATD, times the FrameSkip distance scale 1 - clip(0, 0.5, 0.05 * jumpd).
    const double qp_temp = qp - kShiftQp;
    double md = 0.85 * std::pow(2.0, qp_temp / 3.0);
    md *= (p.me_distortion_hpel == 2 && p.me_distortion_qpel == 2) ? 1.00 : 0.95;
    const double scale = 1.0 - std::min(0.5, std::max(0.0, 0.05 * p.frame_skip));
    l.md = scale * md;
    // SetLambda: lambda_me = lambda_md for SSE, sqrt(lambda_md) otherwise.
    for (int k = 0; k < 3; ++k) l.me[k] = metric[k] == 1 ? l.md : std::sqrt(l.md);
  }
  l.md_factor = jm_lambda_factor(l.md);
  l.md_half = ((l.md_factor >> (kLambdaBits - kJmLambdaBits)) / 2) << (kLambdaBits - kJmLambdaBits);
  for (int k = 0; k < 3; ++k) l.mf[k] = jm_lambda_factor(l.me[k]);
  return l;
}

}  // namespace gme
