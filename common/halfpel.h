// The full- and half-pel sample planes of a reference picture (H.264 8.4.2.2.1: G, b, h, j), built once when the
// picture becomes a reference, as JM builds its sub-pel images. Sub-pel refinement runs for every partition of
// every macroblock (41 per reference), and interpolating a local region for each of them cost more than the
// SATDs it feeds; with the planes, each of the 17 candidates of a refinement is a plane pointer (full and
// half pel) or the rounded average of two (quarter pel), exactly as mc_luma computes it.
//
// The planes extend kHalfpelPad samples beyond the picture on every side with the values of unbounded edge
// replication (so a block anywhere in that area reads what clamped fetches would give); blocks further out
// must use another path (HalfpelPlanes::covers).
#pragma once
#include <cstdint>
#include <vector>

#include "common/frame.h"
#include "common/types.h"

namespace gme {

constexpr int kHalfpelPad = 48;  // SearchRange 32 windows at the picture edge plus the 6-tap reach

struct HalfpelPlanes {
  Plane g, b, h, j;  // full pel; half pel right; half pel below; half pel diagonal (all the same geometry)
  // Distinct for every build, never reused (unlike an address): me/motion_search.cpp keys its per-macroblock
  // memo of distortions by it.
  uint64_t serial = 0;

  // True when a w x h block at full-pel (x, y), with every quarter-pel offset in [-3, 3] and the 16-byte row
  // loads of the averaging, stays inside the planes.
  bool covers(int x, int y, int w, int h) const {
    return w <= 16 && x - 1 >= -g.pad && x + 17 <= g.width + g.pad && y - 1 >= -g.pad && y + h + 1 <= g.height + g.pad;
  }
};

// Working rows of a build: edge-extended integer samples and unrounded horizontal half-pel intermediates. A caller
// that builds planes for every picture keeps one and passes it, so the buffers are not faulted in afresh each time.
struct HalfpelScratch {
  std::vector<uint8_t> gx;
  std::vector<int16_t> b1;
};

// The row kernels of a build (part of DspFuncs, common/dsp.h; halfpel_init() installs the SIMD versions the CPU
// flags allow). b1_row: the unrounded horizontal half-pel intermediates b1 of n columns from the n + 5 samples
// e[0 .. n+4] (e points at the column 2 left of the first output). output_row: one output row of n samples: G
// from e[2], b from t[2], h from the six rows e[0..5] and j from the six rows t[0..5] of b1.
using HalfpelB1RowFn = void (*)(const uint8_t* e, int n, int16_t* out);
using HalfpelOutputRowFn = void (*)(const uint8_t* const e[6], const int16_t* const t[6], int n, uint8_t* g,
                                    uint8_t* b, uint8_t* h, uint8_t* j);
struct HalfpelFuncs {
  HalfpelB1RowFn b1_row;
  HalfpelOutputRowFn output_row;
};
void halfpel_init(uint32_t cpu, HalfpelFuncs& f);

// Builds the planes of `luma` (any border; samples outside the picture come from edge replication). scratch:
// optional, reused between calls; nullptr uses temporary buffers.
void build_halfpel_planes(const HalfpelFuncs& f, const Plane& luma, HalfpelPlanes* out,
                          HalfpelScratch* scratch = nullptr);

// The same build in bands of rows, for callers that spread it over threads: prepare_halfpel_planes once (sizes the
// planes, gives them their serial), then build_halfpel_plane_rows for bands [y0, y1) that cover the rows
// -kHalfpelPad .. luma.height + kHalfpelPad (picture coordinates), in any order or concurrently, each band with its
// own scratch. Same samples as build_halfpel_planes.
void prepare_halfpel_planes(const Plane& luma, HalfpelPlanes* out);
void build_halfpel_plane_rows(const HalfpelFuncs& f, const Plane& luma, HalfpelPlanes* out, int y0, int y1,
                              HalfpelScratch* scratch);

// The four sample kinds of a small region only (cols, rows <= kHalfpelRegionMax), for blocks beyond the planes:
// G, b, h, j at the region's position (r, c), whose G sample is luma (x + c, y + r) with edge replication, are
// written to g/b/h/j[r * stride + c]. Same row kernels as the plane build, so the same values.
constexpr int kHalfpelRegionMax = 18;
void build_halfpel_region(const HalfpelFuncs& f, const Plane& luma, int x, int y, int cols, int rows, int stride, uint8_t* g, uint8_t* b,
                          uint8_t* h, uint8_t* j);

}  // namespace gme
