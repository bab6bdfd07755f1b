#include "common/stage_clock.h"

#include <chrono>

namespace gme {

uint64_t detail::steady_ticks() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

double stage_seconds_per_tick() {
#if defined(GME_STAGE_CLOCK_TSC)
  // Measured once over ~2 ms of steady_clock (0.1 % or better: enough for a time split). A TSC that does not
  // advance (never seen) would give 0: the split would read 0 rather than garbage.
  static const double rate = [] {
    const uint64_t s0 = detail::steady_ticks();
    const uint64_t t0 = __rdtsc();
    uint64_t s1 = s0;
    while (s1 - s0 < 2000000) s1 = detail::steady_ticks();
    const uint64_t t1 = __rdtsc();
    return t1 > t0 ? static_cast<double>(s1 - s0) * 1e-9 / static_cast<double>(t1 - t0) : 0.0;
  }();
  return rate;
#else
  return 1e-9;
#endif
}

}  // namespace gme
