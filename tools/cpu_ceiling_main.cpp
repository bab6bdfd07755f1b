// cpu_ceiling: how far this host lets any program scale with threads, as a yardstick for the encoder's scaling
// (tools/bench_threads.sh prints it beside its table; doc/THREADS.md). Each thread runs the same fixed integer loop
// (8 independent xorshift chains in registers: no memory traffic, no synchronisation, nothing shared), so N threads
// finishing in the time of one would be N times one thread's speed. Two things make them slower, both invisible in
// the encoder's own numbers: cores that clock lower the more of them run, and logical CPUs that are two
// hyperthreads of one core, which a virtual machine may present as separate cores (lscpu then says one thread per
// core). The speed-up printed for N threads is the most an N-thread encode could reach here.
//
// Usage: cpu_ceiling [--threads "1 2 4 8 16"] [--pairs] [--version]
//   --threads  the counts to run (default: 1, 2, 4, ... up to the logical CPUs, and that count)
//   --pairs    also run two threads pinned to CPU 0 and CPU j for every j, and name the CPUs that share a core
//              with CPU 0 (two threads there take clearly longer than on the other pairs)
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/version.h"

namespace {

// The loop's result is returned (and summed by the caller) so that the compiler keeps the work.
uint64_t spin(uint64_t iterations, uint64_t seed) {
  uint64_t a[8];
  for (int i = 0; i < 8; ++i) a[i] = seed + static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull;
  for (uint64_t k = 0; k < iterations; ++k)
    for (uint64_t& x : a) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      x += k;
    }
  uint64_t s = 0;
  for (uint64_t x : a) s += x;
  return s;
}

uint64_t g_sink = 0;

// Seconds for `threads` threads each running the loop, pinned to cpus[i % size] when cpus is not empty; the best of
// `rounds` runs (another process on a shared host only ever adds time).
double run(int threads, uint64_t iterations, const std::vector<int>& cpus, int rounds) {
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    std::vector<uint64_t> out(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < threads; ++i) {
      pool.emplace_back([&out, i, iterations] { out[static_cast<size_t>(i)] = spin(iterations, static_cast<uint64_t>(i)); });
      if (!cpus.empty()) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[static_cast<size_t>(i) % cpus.size()], &set);
        pthread_setaffinity_np(pool.back().native_handle(), sizeof set, &set);
      }
    }
    for (std::thread& t : pool) t.join();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    for (uint64_t v : out) g_sink += v;
  }
  return best;
}

std::vector<int> default_counts(int cpus) {
  std::vector<int> counts;
  for (int n = 1; n < cpus; n *= 2) counts.push_back(n);
  counts.push_back(cpus);
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> counts = default_counts(cpus);
  bool pairs = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--version") {
      std::printf("cpu_ceiling %s\n", gme::version_string().c_str());
      return 0;
    } else if (a == "--pairs") {
      pairs = true;
    } else if (a == "--threads" && i + 1 < argc) {
      counts.clear();
      std::istringstream in(argv[++i]);
      for (std::string word; in >> word;) {
        char* end = nullptr;
        const long n = std::strtol(word.c_str(), &end, 10);
        if (*end != '\0' || n < 1 || n > 4096) {
          std::fprintf(stderr, "cpu_ceiling: --threads: expected thread counts from 1 to 4096, got '%s'\n",
                       word.c_str());
          return 2;
        }
        counts.push_back(static_cast<int>(n));
      }
      if (counts.empty()) {
        std::fprintf(stderr, "cpu_ceiling: --threads: expected a list of counts, e.g. \"1 4 16\"\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "cpu_ceiling: unknown argument '%s' (usage: cpu_ceiling [--threads \"1 2 4\"] [--pairs])\n",
                   a.c_str());
      return 2;
    }
  }
  // About 0.2 s for one thread: long enough for the clock to settle, short enough to repeat.
  uint64_t iterations = 1 << 20;
  while (run(1, iterations, {}, 1) < 0.05) iterations *= 2;
  iterations *= 4;
  std::printf("cpu_ceiling: %d logical CPUs; each thread the same register-only loop, best of 3\n", cpus);
  std::printf("%-8s %-8s %s\n", "threads", "time_s", "speed-up (threads x one thread's time / time)");
  const double one = run(1, iterations, {}, 5);
  for (int n : counts) {
    const double t = n == 1 ? one : run(n, iterations, {}, 3);
    std::printf("%-8d %-8.3f %.2fx\n", n, t, n * one / t);
  }
  if (pairs && cpus > 1) {
    // Two threads pinned to CPU 0 and CPU j, for every j. Two hyperthreads of one core share its execution units:
    // this loop then takes ~1.5-2x as long as on two cores. Compared with the median pair rather than with one
    // thread alone, whose time moves with the clock more than the pairs' do.
    std::vector<double> t(static_cast<size_t>(cpus), 0.0);
    for (int j = 1; j < cpus; ++j) t[static_cast<size_t>(j)] = run(2, iterations, {0, j}, 3);
    std::vector<double> sorted(t.begin() + 1, t.end());
    std::sort(sorted.begin(), sorted.end());
    // With one pair only there is no median to stand out from: one thread alone on CPU 0 is the reference then.
    const double median = cpus > 2 ? sorted[sorted.size() / 2] : run(1, iterations, {0}, 3);
    std::vector<int> shared;
    for (int j = 1; j < cpus; ++j) {
      const double ratio = t[static_cast<size_t>(j)] / median;
      if (ratio > 1.3) shared.push_back(j);
      std::printf("cpu 0 + cpu %-3d %.3f s, %.2fx the reference (the median pair)\n", j, t[static_cast<size_t>(j)], ratio);
    }
    if (shared.empty()) {
      std::printf("no CPU shares a core with CPU 0\n");
    } else {
      std::printf("sharing a core with CPU 0:");
      for (int j : shared) std::printf(" %d", j);
      std::printf("\n");
    }
  }
  return g_sink == 42 ? 1 : 0;  // never: the sum only keeps the loops
}
