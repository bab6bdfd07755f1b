// Lagrange multipliers as JM 19.0 computes them (lencod/src/lambda.c get_implicit_lambda_{i,p}_slice for
// RDOptimization >= 1, lencod/src/slice.c SetLagrangianMultipliersOff for RDOptimization = 0). See doc/RD.md.
#pragma once
#include "common/types.h"
#include "encoder/params.h"

namespace gme {

// Fixed-point factors are JM's own LAMBDA_FACTOR values (LAMBDA_ACCURACY_BITS = 5, lencod/inc/defines.h) shifted
// up to kLambdaBits, so that every cost J = (D << kLambdaBits) + factor * R is exactly JM's cost times
// 2^(kLambdaBits - 5) and every comparison comes out as in JM.
int jm_lambda_factor(double lambda);

struct Lambdas {
  double md = 0;        // lambda_md: mode decision
  int md_factor = 0;    // LAMBDA_FACTOR(lambda_md): enc_mb.lambda_mdfp
  int md_half = 0;      // JM's weighted_cost(lambda_mdfp, 1) / 2 (rate 0 in RDCost_for_macroblocks), same scale
  double me[3] = {};    // lambda_me[F_PEL, H_PEL, Q_PEL]
  int mf[3] = {};       // lambda_mf = LAMBDA_FACTOR(lambda_me): motion search costs
};

// slice_type: SliceType::I or SliceType::P; qp 0..51.
Lambdas compute_lambdas(const EncoderParams& p, SliceType type, int qp);

}  // namespace gme
