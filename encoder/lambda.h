// Lagrange multipliers as JM 19.0 computes them (lencod/src/lambda.c get_implicit_lambda_{i,p}_slice for
// RDOptimization >= 1, lencod/src/slice.c SetLagrangianMultipliersOff for RDOptimization = 0). See doc/RD.md.
#pragma once
#include "common/types.h"
#include "encoder/params.h"

namespace gme {

struct Lambdas {
  double md = 0;        // lambda_md: mode decision
  int md_factor = 0;    // LAMBDA_FACTOR(lambda_md): enc_mb.lambda_mdfp
  double me[3] = {};    // lambda_me[F_PEL, H_PEL, Q_PEL]
  int mf[3] = {};       // lambda_mf = LAMBDA_FACTOR(lambda_me): motion search costs
};

// slice_type: SliceType::I or SliceType::P; qp 0..51.
Lambdas compute_lambdas(const EncoderParams& p, SliceType type, int qp);

}  // namespace gme
