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
// position, mv the LUMA vector (its units are eighth chroma pels). The plain version takes any w; the table's
// entry (McFuncs::chroma) takes w = 2, 4 or 8, the chroma of the partitions.
using McChromaFn = void (*)(uint8_t* dst, int dst_stride, const Plane& ref, int cx, int cy, MV mv, int w, int h);
void mc_chroma_c(uint8_t* dst, int dst_stride, const Plane& ref, int cx, int cy, MV mv, int w, int h);

// dst = (a + b + 1) >> 1 sample by sample, w (4, 8 or 16) bytes per row written, h rows; a and b rows are
// src_stride apart and must be readable 16 bytes wide (the quarter-pel samples between two half-pel planes).
using AvgRowsFn = void (*)(uint8_t* dst, int dst_stride, const uint8_t* a, const uint8_t* b, int src_stride, int w,
                           int h);

// The SIMD-able motion compensation (part of DspFuncs, common/dsp.h); mc_init() installs the SIMD versions the
// CPU flags allow.
struct McFuncs {
  McChromaFn chroma;
  AvgRowsFn avg;
};
void mc_init(uint32_t cpu, McFuncs& f);

// Pointer to the integer sample (x, y) for a fetch of a block of width/height <= 16 that reads up to 3 samples
// outside it on each side (the 6-tap support): the origin is clamped per frame.h so the read stays inside the
// padded plane while the values equal those of an unbounded edge replication.
inline const uint8_t* luma_fetch_origin(const Plane& ref, int x, int y) {
  x = clip3(-ref.pad + 3, ref.width + ref.pad - 16 - 3, x);
  y = clip3(-ref.pad + 3, ref.height + ref.pad - 16 - 3, y);
  return ref.at(x, y);
}

}  // namespace gme
