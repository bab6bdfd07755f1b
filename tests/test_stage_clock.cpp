// common/stage_clock.h: the TSC-based stage clock must run at steady_clock's rate (it feeds the per-stage split).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/stage_clock.h"
#include "encoder/encoder.h"

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

namespace gme {

// The picture's split of its partition searches (encoder/encoder.h): the sampled searches' mean refinement time
// times the number of searches is the sub-pel stage, the rest of the searches' exact total is integer ME.
TEST(StageTimes, SplitsPartitionSearchesBySample) {
  StageTimes t;
  t.integer_me = 1.0;  // the picture-level search, already there
  t.partition_search = 10.0;
  t.partition_searches = 80;
  t.sampled_searches = 10;
  t.sampled_refinement = 1.0;  // 0.1 per refinement
  t.split_partition_searches();
  EXPECT_DOUBLE_EQ(t.subpel_me, 8.0);
  EXPECT_DOUBLE_EQ(t.integer_me, 1.0 + 2.0);
  EXPECT_EQ(t.partition_searches, 0);  // consumed: a second call adds nothing
  t.split_partition_searches();
  EXPECT_DOUBLE_EQ(t.subpel_me + t.integer_me, 11.0);

  StageTimes over;  // a sample slower than the whole: capped at the searches' total
  over.partition_search = 1.0;
  over.partition_searches = 4;
  over.sampled_searches = 1;
  over.sampled_refinement = 0.5;
  over.split_partition_searches();
  EXPECT_DOUBLE_EQ(over.subpel_me, 1.0);
  EXPECT_DOUBLE_EQ(over.integer_me, 0.0);

  StageTimes none;  // no search sampled (DisableSubpelME-like tiny pictures): all integer ME
  none.partition_search = 0.3;
  none.partition_searches = 3;
  none.split_partition_searches();
  EXPECT_DOUBLE_EQ(none.subpel_me, 0.0);
  EXPECT_DOUBLE_EQ(none.integer_me, 0.3);
}

}  // namespace gme
