#include "common/dsp.h"

namespace gme {

void dsp_init(uint32_t cpu, DspFuncs& f) {
  f.cpu = cpu;
  pixel_init(cpu, f.pixel);
  block4x4_init(cpu, f.block4x4);
  residual4x4_init(cpu, f.residual4x4);
  intra_pred_init(cpu, f.intra);
  mc_init(cpu, f.mc);
  halfpel_init(cpu, f.halfpel);
  deblock_init(cpu, f.deblock);
  fullfast_kernels_init(cpu, f.fullfast);
  plane_ssd_init(cpu, f.plane_ssd);
  copy_rows_init(cpu, f.copy_rows);
}

}  // namespace gme
