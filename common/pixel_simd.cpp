#include "common/pixel_simd.h"

namespace gme {
// Placeholder until the SSE2/AVX2 variants land: no SIMD variants registered.
int pixel_simd_variants(const PixelFuncs**, int, const PixelFuncs&) { return 0; }
}  // namespace gme
