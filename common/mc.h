// Motion-compensated prediction (H.264 8.4.2.2): luma quarter-pel 6-tap interpolation and chroma eighth-pel
// bilinear interpolation. The reference planes carry replicated borders (frame.h); fetch coordinates are clamped
// so that any vector, however far outside the picture, gives what unbounded edge replication would give.
#pragma once
#include <cstdint>

#include "common/frame.h"
#include "common/types.h"

namespace gme {

// Luma prediction of a w x h block (w, h <= 16) whose top-left luma pixel is (x, y), at quarter-pel vector mv,
// exactly as 8.4.2.2.1 (6-tap half-pel samples, rounded averages for quarter-pel samples).
void mc_luma(uint8_t* dst, int dst_stride, const Plane& ref, int x, int y, MV mv, int w, int h);

// Chroma prediction (8.4.2.2.2, 4:2:0, eighth-pel bilinear) of a w x h block (w, h <= 8): (cx, cy) chroma pixel
// position, mv the LUMA vector (its units are eighth chroma pels).
void mc_chroma(uint8_t* dst, int dst_stride, const Plane& ref, int cx, int cy, MV mv, int w, int h);
// mc_chroma runs the SSE2 variant on x86 (blocks 2, 4 or 8 wide): the plain reference, and every variant,
// reference first (tests, bench).
using McChromaFn = void (*)(uint8_t* dst, int dst_stride, const Plane& ref, int cx, int cy, MV mv, int w, int h);
void mc_chroma_c(uint8_t* dst, int dst_stride, const Plane& ref, int cx, int cy, MV mv, int w, int h);
int mc_chroma_variants(McChromaFn* out, const char** names, int max);

// Pointer to the integer sample (x, y) for a fetch of a block of width/height <= 16 that reads up to 3 samples
// outside it on each side (the 6-tap support): the origin is clamped per frame.h so the read stays inside the
// padded plane while the values equal those of an unbounded edge replication.
inline const uint8_t* luma_fetch_origin(const Plane& ref, int x, int y) {
  x = clip3(-ref.pad + 3, ref.width + ref.pad - 16 - 3, x);
  y = clip3(-ref.pad + 3, ref.height + ref.pad - 16 - 3, y);
  return ref.at(x, y);
}

}  // namespace gme
