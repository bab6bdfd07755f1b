// Sum of squared differences of two w x h sample areas (the PSNR of every picture and plane: 460k samples per
// 640x480 picture, once per picture in both runs). plane_ssd runs the fastest variant (SSE2 on x86); the plain
// reference and every variant, reference first, are there for the checkasm test and the benchmark.
#pragma once
#include <cstdint>

namespace gme {

uint64_t plane_ssd(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride, int w, int h);

using PlaneSsdFn = uint64_t (*)(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride, int w, int h);
uint64_t plane_ssd_c(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride, int w, int h);
int plane_ssd_variants(PlaneSsdFn* out, const char** names, int max);

}  // namespace gme
