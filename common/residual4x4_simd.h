// Internal to common/residual4x4*.cpp: the SIMD variants (SSE2 is part of x86-64, no run-time check).
#pragma once
#include "common/residual4x4.h"

namespace gme {
#if defined(__x86_64__)
const Residual4x4Funcs& residual4x4_sse2();
#endif
}  // namespace gme
