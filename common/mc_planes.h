// Luma motion compensation from a reference's half-pel planes (common/halfpel.h). P_Skip's cost, the 8x8 RD
// costing and the final inter prediction of every P macroblock interpolated with mc_luma's 6-tap filter although
// the planes already hold every full- and half-pel sample (perf/callgrind: mc_luma was a fifth of the GPU run's
// macroblock analysis). From the planes a quarter-pel sample is one plane sample or the rounded average of two:
// the same values as mc_luma, which stays the plain reference (tests/test_halfpel_build.cpp compares them).
#pragma once
#include <cstdint>

#include "common/frame.h"
#include "common/mc.h"
#include "common/types.h"

namespace gme {

struct HalfpelPlanes;

// The w x h (w, h in {4, 8, 16}) luma prediction of the block at (x, y) for quarter-pel vector mv, from `planes`
// where they cover it, else mc_luma from `ref` (the planes' picture, borders extended). f.avg forms the quarter-pel
// samples.
void mc_luma_planes(const McFuncs& f, uint8_t* dst, int dst_stride, const HalfpelPlanes& planes, const Plane& ref,
                    int x, int y, MV mv, int w, int h);

// mc_luma_planes when the frame has planes, mc_luma otherwise: what the macroblock loop calls.
void predict_luma(const McFuncs& f, uint8_t* dst, int dst_stride, const Frame& ref, int x, int y, MV mv, int w, int h);

}  // namespace gme
