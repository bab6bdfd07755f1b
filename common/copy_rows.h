// Copies a w x h sample area row by row: the GPU path's staging of each picture into page-locked memory (307 KB
// per 640x480 picture, on the path to the first band's kernel). copy_rows runs the fastest variant: on x86, SSE2
// non-temporal stores, since the destination is read next by the GPU (DMA and mapped reads), not by this core, and
// streaming stores skip the read for ownership of every destination line that an ordinary store pays
// (doc/EXPERIMENTS.md). The plain reference and every variant, reference first, are there for the checkasm test
// and the benchmark.
#pragma once
#include <cstdint>

namespace gme {

void copy_rows(uint8_t* dst, int dst_stride, const uint8_t* src, int src_stride, int w, int h);

using CopyRowsFn = void (*)(uint8_t* dst, int dst_stride, const uint8_t* src, int src_stride, int w, int h);
void copy_rows_c(uint8_t* dst, int dst_stride, const uint8_t* src, int src_stride, int w, int h);
int copy_rows_variants(CopyRowsFn* out, const char** names, int max);

}  // namespace gme
