// Internal to common/deblock*.cpp: the SIMD edge filters deblock_init() installs with kCpuSse2.
#pragma once
#include <cstdint>

#include "common/cpu.h"

namespace gme {
#if defined(GME_X86_SIMD)
// As deblock_luma_edge_c (deblock.h). bs[] is all 4 or all below 4, as the standard's bS derivation gives for the
// 16 lines of one macroblock edge in frame coding.
void deblock_luma_edge_sse2(uint8_t* q0, int across, int along, const uint8_t bs[4], const uint8_t tc0[4], int alpha,
                            int beta);
// As deblock_chroma_edges_c (deblock.h), both chroma planes at once.
void deblock_chroma_edges_sse2(uint8_t* cb, uint8_t* cr, int across, int along, const uint8_t bs[4],
                               const uint8_t tc0[4], int alpha, int beta);
#endif
}  // namespace gme
