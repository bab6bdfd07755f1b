// A cheap monotonic clock for the per-stage time split (integer ME, sub-pel, mode decision, coding), which is read
// several times per partition query: ~150k reads per 640x480 P picture. steady_clock goes through the kernel's
// clock source; where that is not the TSC (some hosts' kernels choose another), each read costs far more than the
// work it times. On x86 this reads the TSC directly (invariant on every CPU the encoder targets) and converts with
// a rate measured once against steady_clock; elsewhere it is steady_clock.
// Picture and sequence totals stay on steady_clock; only the split between stages uses this clock.
//
// The hot path (a partition search: ~100 ns in the GPU run) reads stage_ticks(), inline: one RDTSC and no call,
// no static-initialisation guard and no floating point (an out-of-line read converted to seconds at every query
// would cost a sizeable share of the motion search); ticks are converted once per macroblock.
#pragma once
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define GME_STAGE_CLOCK_TSC 1
#endif

namespace gme {

namespace detail {
uint64_t steady_ticks();  // nanoseconds of steady_clock (non-x86 ticks, and the calibration's reference)
}

// Ticks since an arbitrary origin; differences convert with stage_ticks_to_seconds().
inline uint64_t stage_ticks() {
#if defined(GME_STAGE_CLOCK_TSC)
  return __rdtsc();
#else
  return detail::steady_ticks();
#endif
}

// Seconds per tick (measured once, on first use: call it outside the hot path).
double stage_seconds_per_tick();

inline double stage_ticks_to_seconds(uint64_t ticks) { return static_cast<double>(ticks) * stage_seconds_per_tick(); }

// Seconds since an arbitrary origin; differences are stage durations.
inline double stage_clock_seconds() { return stage_ticks_to_seconds(stage_ticks()); }

}  // namespace gme
