// Internal to common/intra_pred*.cpp: the SIMD versions intra_pred_init() installs.
#pragma once
#include <cstdint>

#include "common/cpu.h"
#include "common/intra_pred.h"

namespace gme {
#if defined(GME_X86_SIMD)
void predict_intra4x4_all_ssse3(const Edge4x4& e, uint8_t pred[9][16]);  // with kCpuSsse3 (target attribute)
#endif
}  // namespace gme
