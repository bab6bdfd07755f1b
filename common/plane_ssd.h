// Sum of squared differences of two w x h sample areas (the PSNR of every picture and plane: 460k samples per
// 640x480 picture, once per picture in both runs). An entry of DspFuncs (common/dsp.h): plane_ssd_init() gives the
// SIMD version the CPU flags allow.
#pragma once
#include <cstdint>

namespace gme {

using PlaneSsdFn = uint64_t (*)(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride, int w, int h);
uint64_t plane_ssd_c(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride, int w, int h);
void plane_ssd_init(uint32_t cpu, PlaneSsdFn& f);

}  // namespace gme
