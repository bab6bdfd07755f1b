// Shared scalar types and small helpers used across common/, encoder/ and gpu/.
#pragma once
#include <cstdint>
#include <cstdlib>

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

// Length in bits of the se(v) code of v (JM's mvbits[] table): 2 * floor(log2(code_num + 1)) + 1. Called for
// every candidate of every motion search and re-ranking, hence the count-leading-zeros form instead of a loop.
// code_num + 1 is 2v for v > 0 and 2|v| + 1 otherwise; 2|v| + 1 has the same highest bit in both cases (2v is even,
// so adding 1 crosses no power of two), which leaves no branch: abs, lea, bsr, lea.
inline int se_bits(int v) {
  const unsigned a = v < 0 ? 0u - static_cast<unsigned>(v) : static_cast<unsigned>(v);
  return 2 * (31 ^ __builtin_clz(2u * a + 1u)) + 1;
}

}  // namespace gme
