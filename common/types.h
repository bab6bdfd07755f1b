// Shared scalar types and small helpers used across common/, encoder/ and gpu/.
#pragma once
#include <cstdint>
#include <cstdlib>

#include "common/exp_golomb.h"  // se_bits: the motion cost's vector bits

namespace gme {

// Motion vector in quarter-pel units (the unit of the bitstream).
struct MV {
  int16_t x = 0;
  int16_t y = 0;
  constexpr MV() = default;
  constexpr MV(int ax, int ay) : x(static_cast<int16_t>(ax)), y(static_cast<int16_t>(ay)) {}
  constexpr bool operator==(const MV& o) const { return x == o.x && y == o.y; }
  constexpr bool operator!=(const MV& o) const { return !(*this == o); }
};

inline constexpr int clip3(int lo, int hi, int v) { return v < lo ? lo : (v > hi ? hi : v); }
inline constexpr uint8_t clip_pixel(int v) { return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v)); }

// Picture coding type, as JM prints it.
enum class SliceType : uint8_t { P = 0, I = 2 };

// Lagrangian fixed point: J = (D << kLambdaBits) + lambda_factor * R, the form of JM 19.0 (JCOST_CALC_SCALEUP = 1,
// lencod/inc/defines.h). JM rounds lambda to kJmLambdaBits = 5 fractional bits (LAMBDA_ACCURACY_BITS); we carry 16
// bits of headroom but build every factor as JM's 5-bit factor shifted left by 11 (encoder/lambda.cpp,
// jm_lambda_factor), so every cost is JM's cost times 2^11 and every comparison comes out as in JM.
constexpr int kLambdaBits = 16;
constexpr int kJmLambdaBits = 5;
inline int lambda_factor(double lambda) {
  return static_cast<int>(lambda * (1 << kJmLambdaBits) + 0.5) << (kLambdaBits - kJmLambdaBits);
}

}  // namespace gme
