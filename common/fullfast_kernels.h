// Inner loops of the fast full search (me/me_fullfast.cpp), in plain C++, SSE2 and AVX2: part of DspFuncs
// (common/dsp.h), fullfast_kernels_init() installs the SIMD versions the CPU flags allow; all give identical
// results (tests/test_checkasm.cpp).
#pragma once
#include <cstdint>

namespace gme {

struct FullFastKernels {
  // Turns one window row of 4x4 SADs, position-major (`count` positions x 16 blocks in macroblock raster order,
  // u32, each < 0x8000), into the 41 partitions' u16 rows dst[part][0 .. count) (JM's
  // update_full_search_large_blocks, with saturating sums so padding stays large). count: multiple of 16.
  void (*row_partitions)(const uint32_t* raw, uint16_t* const dst[41], int count);
  // Screens a partition's SAD table (width x width positions, rows `stride` apart, padding 0xFFFF-ish) for
  // q = sat16(sad + hx[col] + hy[row]). Returns min q (0xFFFF if none is smaller) and writes to cand[] the
  // positions ((row << 16) | col) whose q was <= (running minimum + 1) when visited: a superset of those with
  // q <= min q + 1 (once the running minimum reaches 0xFFFE nothing more is collected: the caller then uses its
  // exact scan). hx has `stride` entries (0xFFFF in the padding), hy `width`. Rows are visited from the centre
  // outwards, identically in every variant, so all variants return the same list.
  // stride: a multiple of 16, at most 512.
  uint32_t (*screen)(const uint16_t* sad, int width, int stride, const uint16_t* hx, const uint16_t* hy, int* cand,
                     int* ncand);
};

void fullfast_kernels_init(uint32_t cpu, FullFastKernels& f);

}  // namespace gme
