// The encoder's table of every SIMD-able function, as x264's per-module function tables (x264_pixel_init,
// x264_mc_init, ...) filled from x264_cpu_detect: one struct of function pointers, filled once by dsp_init() from
// the CPU flags (common/cpu.h) and handed explicitly to whatever calls them. Every entry has a plain C++ version
// (dsp_init(0, f) gives them all: the whole encoder in plain C++, same bytes); tests/test_checkasm.cpp compares
// every SIMD entry of every CPU level with it bit for bit, and bin/bench_me times both, through the same
// description of the entries (common/dsp_check.h).
//
// A filled table is read-only: the encoder's context (EncoderState) owns one and every thread of an encode may
// read it at the same time without locks. Nothing else in the code chooses an instruction set.
//
// Adding a SIMD routine: its plain version and its SIMD versions in the module's files, its entry in the module's
// table below, its installation in the module's *_init(), and its case in common/dsp_check.cpp (the checkasm test
// fails while an entry has no case).
#pragma once
#include <cstdint>

#include "common/block4x4.h"
#include "common/copy_rows.h"
#include "common/deblock.h"
#include "common/fullfast_kernels.h"
#include "common/halfpel.h"
#include "common/intra_pred.h"
#include "common/mc.h"
#include "common/pixel.h"
#include "common/plane_ssd.h"
#include "common/residual4x4.h"

namespace gme {

struct DspFuncs {
  uint32_t cpu = 0;             // the CPU flags the table was filled for (common/cpu.h)
  PixelFuncs pixel;             // SAD / SATD / SSD per block size, 4x4 SADs of a macroblock, I16x16 Hadamard
  Block4x4Funcs block4x4;       // per-4x4 distortions of a strip and their masked sums (sub-pel memo)
  Residual4x4Funcs residual4x4; // fused forward / inverse 4x4 residual coding
  IntraPredFuncs intra;         // all nine Intra4x4 modes, plane prediction
  McFuncs mc;                   // chroma MC, quarter-pel averages
  HalfpelFuncs halfpel;         // the rows of the half-pel plane build
  DeblockFuncs deblock;         // luma and chroma edge filters
  FullFastKernels fullfast;     // fast full search: partition SADs of a window row, candidate screening
  PlaneSsdFn plane_ssd;         // the PSNR's sum of squared differences
  CopyRowsFn copy_rows;         // the GPU path's staging copy
};

// Fills every entry for the CPU flags: the plain versions, then the SIMD versions the flags allow.
void dsp_init(uint32_t cpu, DspFuncs& f);

}  // namespace gme
