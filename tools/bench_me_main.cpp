// bench_me: speed of the CPU motion estimation of the unmodified run (JM fast full search), and of every entry of
// the encoder's function table (common/dsp.h) at every CPU level this machine runs. Prints:
//   * integer ME ms per 640x480 P picture (SearchRange 32, one reference): every macroblock, all 41 partitions
//     each queried with its exact predictor (predictors from predict_mv over the decisions made so far, 16x16
//     chosen everywhere), with this CPU's table and with the plain one;
//   * sub-pel refinement ms per picture on top of it (JM half + quarter pel, SATD), likewise;
//   * per table entry, ns per call of the plain C++ version and of each SIMD level that brings its own version,
//     with the speed-up, on the inputs of its case (common/dsp_check.h; the same walk tests/test_checkasm.cpp
//     checks). The deblocking entries' times include the copy of the area they filter in place.
// Times are CPU time of the benchmark thread (best of several runs): on a shared machine wall-clock figures are
// inflated by the other processes; the wall-clock time of the ME runs is printed alongside.
// GME_NO_SIMD=1 leaves only the plain level.
// Usage: bench_me [pictures (default 3)]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "common/cpu.h"
#include "common/dsp.h"
#include "common/dsp_check.h"
#include "common/frame.h"
#include "common/version.h"
#include "me/me_sources.h"
#include "me/motion_search.h"
#include "encoder/mvpred.h"

namespace {

using namespace gme;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of this thread: on a shared machine it excludes the time other processes hold the core (wall-clock
// figures there are inflated by the load average).
double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Textured content (sum of waves plus noise) so that SADs vary as in real video; the current picture is the
// reference moved by (+3, -2) pels with fresh noise.
void make_pictures(Plane& ref, Plane& cur, int w, int h) {
  std::mt19937 rng(5);
  ref.alloc(w, h, kLumaPad);
  cur.alloc(w, h, kLumaPad);
  auto tex = [](int x, int y) {
    return 128 + 50 * std::sin(x * 0.07 + y * 0.03) + 40 * std::sin(x * 0.013 - y * 0.11) +
           20 * std::cos((x + 2 * y) * 0.21);
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      ref.at(x, y)[0] = clip_pixel(static_cast<int>(tex(x, y)) + static_cast<int>(rng() % 9) - 4);
      cur.at(x, y)[0] = clip_pixel(static_cast<int>(tex(x + 3, y - 2)) + static_cast<int>(rng() % 9) - 4);
    }
  ref.extend_borders();
  cur.extend_borders();
}

struct Timing {
  double wall_ms, cpu_ms;
};

// One picture of mode-decision-like queries. With `subpel`, each partition also runs motion_search_partition.
Timing run_picture(const DspFuncs& dsp, const Plane& cur, const Plane& ref, int sr, bool subpel, uint64_t* checksum) {
  const int mbw = cur.width / 16, mbh = cur.height / 16;
  const int lambda = lambda_factor(std::sqrt(0.85 * std::pow(2.0, (28 - 12) / 3.0)));  // QP 28, SAD lambda
  auto src = make_fullfast_source(cur, {&ref}, sr, lambda, dsp);
  std::vector<MbInfo> mbs(static_cast<size_t>(mbw) * mbh);
  MotionSearchParams msp{lambda, lambda, lambda, 2, 2, false};
  const auto t0 = Clock::now();
  const double c0 = thread_cpu_ms();
  for (int my = 0; my < mbh; ++my)
    for (int mx = 0; mx < mbw; ++mx) {
      MbInfo curmb;
      curmb.type = MbType::P16x16;
      curmb.slice_id = 0;
      for (int i = 0; i < 4; ++i) curmb.ref_idx[i] = 0;
      MvPredContext ctx{mbs.data(), mbw, mbh, mx, my, 0, &curmb};
      const MV pred16 = predict_mv(ctx, 0, 0, 4, 4, 0);
      src->begin_mb(mx, my, 0, pred16);
      MV best16;
      for (int part = 0; part < kNumPartitions; ++part) {
        const PartitionGeometry g = partition_geometry(part);
        const MV pred = predict_mv(ctx, g.x, g.y, g.w, g.h, 0);
        MV mv;
        if (subpel) {
          mv = motion_search_partition(*src, part, pred, cur.at(16 * mx, 16 * my), cur.stride, ref, 16 * mx, 16 * my,
                                       msp, dsp).mv;
        } else {
          mv = src->best(part, pred).mv;
        }
        *checksum += static_cast<uint16_t>(mv.x) * 31u + static_cast<uint16_t>(mv.y);
        // Later partitions of the same type predict from this one (decoding order).
        for (int y = g.y; y < g.y + g.h; ++y)
          for (int x = g.x; x < g.x + g.w; ++x) curmb.mv[x + 4 * y] = mv;
        if (part == 0) best16 = mv;
      }
      for (int i = 0; i < 16; ++i) curmb.mv[i] = best16;  // the macroblock is coded as 16x16
      mbs[static_cast<size_t>(my) * mbw + mx] = curmb;
    }
  return Timing{ms_since(t0), thread_cpu_ms() - c0};
}

// CPU ns per call of f: enough calls for ~20 ms of CPU time, then the best of 3 (the machine is shared).
template <typename F>
double ns_per_call(F f) {
  int n = 64;
  for (;;) {
    const double t0 = thread_cpu_ms();
    for (int i = 0; i < n; ++i) f();
    if (thread_cpu_ms() - t0 > 20 || n > (1 << 26)) break;
    n *= 4;
  }
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = thread_cpu_ms();
    for (int i = 0; i < n; ++i) f();
    best = std::min(best, thread_cpu_ms() - t0);
  }
  return best * 1e6 / n;
}

// Best of `pictures` runs of one picture's ME with table `dsp`.
Timing best_picture(const DspFuncs& dsp, const Plane& cur, const Plane& ref, int sr, bool subpel, int pictures,
                    uint64_t* sum) {
  Timing best{1e30, 1e30};
  for (int i = 0; i < pictures; ++i) {
    const Timing t = run_picture(dsp, cur, ref, sr, subpel, sum);
    best = Timing{std::min(best.wall_ms, t.wall_ms), std::min(best.cpu_ms, t.cpu_ms)};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--version") {
    std::printf("bench_me %s\n", version_string().c_str());
    return 0;
  }
  const int pictures = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const int w = 640, h = 480, sr = 32;
  Plane ref, cur;
  make_pictures(ref, cur, w, h);
  const std::vector<CpuLevel> levels = cpu_levels(cpu_detect());
  std::vector<DspFuncs> tables(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) dsp_init(levels[l].flags, tables[l]);
  const DspFuncs& here = tables.back();
  const DspFuncs& plain = tables.front();
  std::printf("bench_me: %dx%d, SearchRange %d, 1 reference, best of %d pictures; CPU levels:", w, h, sr, pictures);
  for (const CpuLevel& l : levels) std::printf(" %s", l.name);
  std::printf("\n");
  uint64_t sum_here = 0, sum_plain = 0;
  for (const bool subpel : {false, true}) {
    const Timing a = best_picture(here, cur, ref, sr, subpel, pictures, &sum_here);
    const Timing b = best_picture(plain, cur, ref, sr, subpel, pictures, &sum_plain);
    std::printf("%s ms/picture CPU (wall): %s %7.1f (%.1f), c %7.1f (%.1f)\n",
                subpel ? "integer + sub-pel ME (JM half/quarter pel, SATD):              "
                       : "integer ME (fast full search, 41 partitions, exact predictors):",
                levels.back().name, a.cpu_ms, a.wall_ms, b.cpu_ms, b.wall_ms);
  }
  std::printf("(checksum %llu%s)\n", static_cast<unsigned long long>(sum_here),
              sum_here == sum_plain ? ", the same with the plain table" : ", DIFFERENT with the plain table");

  // The function table, entry by entry: the plain version, then each level that brings its own.
  std::printf("\n%-28s %9s", "table entry, ns per call", "c");
  for (size_t l = 1; l < levels.size(); ++l) std::printf(" %17s", levels[l].name);
  std::printf("\n");
  std::mt19937 rng(3);
  for (const auto& c : dsp_cases()) {
    c->prepare_bench(rng);
    const double base = ns_per_call([&] { c->run(plain, nullptr); });
    std::printf("%-28s %9.1f", c->name().c_str(), base);
    for (size_t l = 1; l < levels.size(); ++l) {
      if (!c->differs(tables[l], tables[l - 1])) {
        std::printf(" %17s", "-");
        continue;
      }
      const double t = ns_per_call([&] { c->run(tables[l], nullptr); });
      std::printf(" %9.1f (x%4.1f)", t, base / t);
    }
    std::printf("   [%d samples]\n", c->work());
  }
  std::printf("(-: the level keeps the version of the level before it)\n");
  return sum_here == sum_plain ? 0 : 1;
}
