// Copies a w x h sample area row by row: the GPU path's staging of each picture into page-locked memory (307 KB
// per 640x480 picture, on the path to the first band's kernel). An entry of DspFuncs (common/dsp.h); the SSE2
// version (copy_rows_init with kCpuSse2) uses non-temporal stores, since the destination is read next by the GPU
// (DMA and mapped reads), not by this core, and streaming stores skip the read for ownership of every destination
// line that an ordinary store pays.
#pragma once
#include <cstdint>

namespace gme {

using CopyRowsFn = void (*)(uint8_t* dst, int dst_stride, const uint8_t* src, int src_stride, int w, int h);
void copy_rows_c(uint8_t* dst, int dst_stride, const uint8_t* src, int src_stride, int w, int h);
void copy_rows_init(uint32_t cpu, CopyRowsFn& f);

}  // namespace gme
