#include "common/picture_trace.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace gme {

bool picture_trace_on() {
  static const bool on = [] {
    const char* v = std::getenv("GME_PICTURE_TRACE");
    return v != nullptr && v[0] == '1';
  }();
  return on;
}

void picture_trace_mark(const char* step, long number) {
  static const auto origin = std::chrono::steady_clock::now();
  // Several workers mark steps at once: the clock is read under the lock, so the lines come out in time order.
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - origin).count();
  std::fprintf(stderr, "trace %.3f %s %ld\n", ms, step, number);
}

}  // namespace gme
