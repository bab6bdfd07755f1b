#include "common/pixel_simd.h"

#include "common/pixel_simd_impl.h"

namespace gme {

// SSE2 is part of x86-64, so that variant always exists there; AVX2 is chosen at run time (the rest of the
// program is built without -mavx2 and must run on any x86-64).
int pixel_simd_variants(const PixelFuncs** out, int max, const PixelFuncs& ref) {
  int n = 0;
#if defined(GME_X86)
  static const PixelFuncs sse2 = [&] {
    PixelFuncs f = ref;
    pixel_fill_sse2(f);
    f.name = "sse2";
    return f;
  }();
  if (n < max) out[n++] = &sse2;
  if (__builtin_cpu_supports("avx2")) {
    static const PixelFuncs avx2 = [&] {
      PixelFuncs f = sse2;
      pixel_fill_avx2(f);
      f.name = "avx2";
      return f;
    }();
    if (n < max) out[n++] = &avx2;
  }
#else
  (void)out;
  (void)max;
  (void)ref;
#endif
  return n;
}

}  // namespace gme
