// common/stage_clock.h: the TSC-based stage clock must run at steady_clock's rate (it feeds the per-stage split).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/stage_clock.h"

namespace gme {

TEST(StageClock, IsMonotonic) {
  double last = stage_clock_seconds();
  for (int i = 0; i < 100000; ++i) {
    const double t = stage_clock_seconds();
    ASSERT_GE(t, last);
    last = t;
  }
}

TEST(StageClock, TicksAreMonotonicAndConvertAtTheSameRate) {
  // The hot path's inline ticks (stage_ticks) and the seconds read must be the same clock.
  const uint64_t t0 = stage_ticks();
  const double s0 = stage_clock_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t t1 = stage_ticks();
  const double s1 = stage_clock_seconds();
  ASSERT_GT(t1, t0);
  const double by_ticks = stage_ticks_to_seconds(t1 - t0), by_seconds = s1 - s0;
  EXPECT_NEAR(by_ticks, by_seconds, 0.05 * by_seconds + 1e-4);
  EXPECT_GT(by_ticks, 0.015);
}

TEST(StageClock, AgreesWithSteadyClock) {
  // Compared over 50 ms of sleep: a wrong tick rate (e.g. a missing calibration) would be off by orders of
  // magnitude; scheduling noise on a shared machine stays well inside 20 %.
  const auto s0 = std::chrono::steady_clock::now();
  const double c0 = stage_clock_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double c1 = stage_clock_seconds();
  const double steady = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
  EXPECT_NEAR(c1 - c0, steady, 0.2 * steady);
}

}  // namespace gme
