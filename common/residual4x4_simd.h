// Internal to common/residual4x4*.cpp: the SIMD versions, installed by residual4x4_init().
#pragma once
#include "common/cpu.h"
#include "common/residual4x4.h"

namespace gme {
#if defined(GME_X86_SIMD)
void residual4x4_fill_sse2(Residual4x4Funcs& f);  // with kCpuSse2
#endif
}  // namespace gme
