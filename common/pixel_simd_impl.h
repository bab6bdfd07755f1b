// Internal to common/pixel_simd*.cpp: each instruction-set file overrides the routines it accelerates.
#pragma once
#include "common/pixel.h"

namespace gme {
#if defined(__x86_64__) || defined(__i386__)
#define GME_X86 1
void pixel_fill_sse2(PixelFuncs& f);
void pixel_fill_avx2(PixelFuncs& f);  // compiled with __attribute__((target("avx2"))), call only if supported
#endif
}  // namespace gme
