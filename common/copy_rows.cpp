#include "common/copy_rows.h"

#include <cstring>

#include "common/cpu.h"

#if defined(GME_X86_SIMD)
#include <emmintrin.h>
#endif

namespace gme {

void copy_rows_c(uint8_t* dst, int dst_stride, const uint8_t* src, int src_stride, int w, int h) {
  for (int y = 0; y < h; ++y, dst += dst_stride, src += src_stride) std::memcpy(dst, src, static_cast<size_t>(w));
}

#if defined(GME_X86_SIMD)
namespace {
// Per row: bytes up to the first 16-byte aligned destination address, then 16 bytes per non-temporal store (the
// source read unaligned), then the rest. The closing sfence orders the streamed stores before whatever the caller
// stores next (the kernel launch that reads them).
void copy_rows_sse2(uint8_t* dst, int dst_stride, const uint8_t* src, int src_stride, int w, int h) {
  for (int y = 0; y < h; ++y, dst += dst_stride, src += src_stride) {
    int x = 0;
    const int head = static_cast<int>((16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15);
    for (; x < w && x < head; ++x) dst[x] = src[x];
    for (; x + 16 <= w; x += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + x), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + x)));
    for (; x < w; ++x) dst[x] = src[x];
  }
  _mm_sfence();
}
}  // namespace
#endif

void copy_rows_init(uint32_t cpu, CopyRowsFn& f) {
  f = copy_rows_c;
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) f = copy_rows_sse2;
#else
  (void)cpu;
#endif
}

}  // namespace gme
