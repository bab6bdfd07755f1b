// Internal to common/pixel_simd*.cpp: each instruction-set file overrides the routines it accelerates.
#pragma once
#include "common/cpu.h"
#include "common/pixel.h"

namespace gme {
#if defined(GME_X86_SIMD)
void pixel_fill_sse2(PixelFuncs& f);
void pixel_fill_avx2(PixelFuncs& f);  // compiled with __attribute__((target("avx2"))): only with kCpuAvx2
#endif
}  // namespace gme
