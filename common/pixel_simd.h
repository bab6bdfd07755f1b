// SIMD variants of the pixel primitives (x86 SSE2/AVX2 intrinsics, runtime-selected). Appends the variants this
// CPU supports, slowest first, each a copy of `ref` with the routines it accelerates replaced. Returns the count.
#pragma once
#include "common/pixel.h"

namespace gme {
int pixel_simd_variants(const PixelFuncs** out, int max, const PixelFuncs& ref);
}
