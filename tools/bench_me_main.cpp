// bench_me: speed of the CPU motion estimation of the unmodified run (JM fast full search) and of the pixel
// primitives it is built on. Prints, for a 640x480 P picture with SearchRange 32 and one reference:
//   * integer ME ms per picture: every macroblock, all 41 partitions each queried with its exact predictor
//     (predictors from predict_mv over the decisions made so far, 16x16 chosen everywhere);
//   * sub-pel refinement ms per picture on top of it (JM half + quarter pel, SATD);
//   * checkasm-style speeds (Mpix/s) of every pixel variant this CPU runs.
// Times are CPU time of the benchmark thread (best of several runs): on a shared machine wall-clock figures are
// inflated by the other processes; the wall-clock time of the ME runs is printed alongside.
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

#include "common/deblock.h"
#include "common/frame.h"
#include "common/intra_pred.h"
#include "common/mc.h"
#include "common/pixel.h"
#include "common/copy_rows.h"
#include "common/version.h"
#include "common/plane_ssd.h"
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
Timing run_picture(const Plane& cur, const Plane& ref, int sr, bool subpel, uint64_t* checksum) {
  const int mbw = cur.width / 16, mbh = cur.height / 16;
  const PixelFuncs& px = pixel_best();
  const int lambda = lambda_factor(std::sqrt(0.85 * std::pow(2.0, (28 - 12) / 3.0)));  // QP 28, SAD lambda
  auto src = make_fullfast_source(cur, {&ref}, sr, lambda, px);
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
                                       msp, px).mv;
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

template <typename F>
double mpix_per_s(F f, int pixels_per_call) {
  // Enough calls for ~20 ms of CPU time, then the best of 3 (the machine is shared).
  int n = 1000;
  for (;;) {
    const double t0 = thread_cpu_ms();
    for (int i = 0; i < n; ++i) f(i);
    if (thread_cpu_ms() - t0 > 20 || n > (1 << 26)) break;
    n *= 4;
  }
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = thread_cpu_ms();
    for (int i = 0; i < n; ++i) f(i);
    best = std::min(best, thread_cpu_ms() - t0);
  }
  return static_cast<double>(n) * pixels_per_call / (best * 1e3);
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
  std::printf("bench_me: %dx%d, SearchRange %d, 1 reference, pixel functions '%s', best of %d pictures\n", w, h, sr,
              pixel_best().name, pictures);
  uint64_t sum = 0;
  Timing ti{1e30, 1e30}, ts{1e30, 1e30};
  for (int i = 0; i < pictures; ++i) {
    const Timing t = run_picture(cur, ref, sr, false, &sum);
    ti = Timing{std::min(ti.wall_ms, t.wall_ms), std::min(ti.cpu_ms, t.cpu_ms)};
  }
  for (int i = 0; i < pictures; ++i) {
    const Timing t = run_picture(cur, ref, sr, true, &sum);
    ts = Timing{std::min(ts.wall_ms, t.wall_ms), std::min(ts.cpu_ms, t.cpu_ms)};
  }
  std::printf("integer ME (fast full search, 41 partitions, exact predictors): %7.1f ms/picture CPU (%.1f wall)\n",
              ti.cpu_ms, ti.wall_ms);
  std::printf("integer + sub-pel ME (JM half/quarter pel, SATD):               %7.1f ms/picture CPU (%.1f wall)\n",
              ts.cpu_ms, ts.wall_ms);
  std::printf("(checksum %llu)\n", static_cast<unsigned long long>(sum));

  // Pixel primitives: blocks spread over a 64 KiB area, odd-ish stride.
  std::mt19937 rng(3);
  const int stride = 80;
  std::vector<uint8_t> a(stride * 256), b(stride * 256);
  for (auto& v : a) v = static_cast<uint8_t>(rng());
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  const PixelFuncs* vars[8];
  const int nv = pixel_variants(vars, 8);
  static const char* kNames[kNumBlockSizes] = {"16x16", "16x8", "8x16", "8x8", "8x4", "4x8", "4x4"};
  std::printf("\n%-36s", "pixel primitives, Mpix/s (CPU time)");
  for (int k = 0; k < nv; ++k) std::printf("%10s", vars[k]->name);
  std::printf("\n");
  volatile uint64_t sink = 0;
  auto off = [&](int i) { return (i * 37 % 200) * stride + (i * 13 % 61); };
  for (int kind = 0; kind < 3; ++kind)
    for (int s = 0; s < kNumBlockSizes; ++s) {
      std::printf("  %-4s %-5s%24s", kind == 0 ? "sad" : (kind == 1 ? "satd" : "ssd"), kNames[s], "");
      for (int k = 0; k < nv; ++k) {
        const PixelFuncs& f = *vars[k];
        double r = mpix_per_s(
            [&](int i) {
              const uint8_t* pa = a.data() + off(i);
              const uint8_t* pb = b.data() + off(i + 1);
              if (kind == 0) sink = sink + f.sad[s](pa, stride, pb, stride);
              else if (kind == 1) sink = sink + f.satd[s](pa, stride, pb, stride);
              else sink = sink + f.ssd[s](pa, stride, pb, stride);
            },
            kBlockW[s] * kBlockH[s]);
        std::printf("%10.0f", r);
      }
      std::printf("\n");
    }
  std::printf("  sad_4x4_x16%24s", "");
  for (int k = 0; k < nv; ++k) {
    const PixelFuncs& f = *vars[k];
    double r = mpix_per_s(
        [&](int i) {
          uint32_t out[16];
          f.sad_4x4_x16(a.data() + off(i), stride, b.data() + off(i + 1), stride, out);
          sink = sink + out[i & 15];
        },
        256);
    std::printf("%10.0f", r);
  }
  std::printf("\n");

  // Prediction primitives with a plain twin (checkasm tests: IntraPred.PlaneVariantsMatchReference,
  // Mc.ChromaVariantsMatchReference): each variant's speed, reference first.
  std::printf("\n%-36s\n", "prediction primitives, Mpix/s (CPU time)");
  PlanePredFn plane[4];
  const char* plane_names[4];
  const int np = predict_plane_variants(plane, plane_names, 4);
  Edge16 e;
  for (int i = 0; i < 16; ++i) { e.top[i] = a[i]; e.left[i] = b[i]; }
  e.top_left = a[16];
  e.has_top = e.has_left = e.has_top_left = true;
  for (int size : {16, 8}) {
    std::printf("  plane %dx%d%*s", size, size, size == 16 ? 25 : 27, "");
    for (int k = 0; k < np; ++k) {
      uint8_t out[256];
      const double r = mpix_per_s(
          [&](int i) {
            e.top[i & 15] = static_cast<uint8_t>(i);  // new edges every call: nothing to hoist
            plane[k](e, size, out);
            sink = sink + out[i & 63];
          },
          size * size);
      std::printf("  %s %6.0f", plane_names[k], r);
    }
    std::printf("\n");
  }
  McChromaFn mc[4];
  const char* mc_names[4];
  const int nm = mc_chroma_variants(mc, mc_names, 4);
  Plane cref;
  cref.alloc(64, 64, 16);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) cref.at(x, y)[0] = a[(y * 64 + x) % a.size()];
  cref.extend_borders();
  for (int w : {8, 4, 2}) {
    std::printf("  mc_chroma %dx%d%*s", w, w, 25, "");
    for (int k = 0; k < nm; ++k) {
      uint8_t out[64];
      const double r = mpix_per_s(
          [&](int i) {
            mc[k](out, 8, cref, (i * 7) & 31, (i * 5) & 31, MV((i * 13) % 61 - 30, (i * 3) % 41 - 20), w, w);
            sink = sink + out[i & 3];
          },
          w * w);
      std::printf("  %s %6.0f", mc_names[k], r);
    }
    std::printf("\n");
  }
  PlaneSsdFn ssd[4];
  const char* ssd_names[4];
  const int ns = plane_ssd_variants(ssd, ssd_names, 4);
  std::printf("  plane_ssd 64x64%*s", 25, "");
  for (int k = 0; k < ns; ++k) {
    const double r = mpix_per_s([&](int i) { sink = sink + ssd[k](a.data() + (i & 7), 80, b.data() + (i & 3), 80, 64, 64); }, 64 * 64);
    std::printf("  %s %6.0f", ssd_names[k], r);
  }
  std::printf("\n");
  {  // copy_rows as the GPU path stages pictures: a 640x480 plane (border 32) into one of 16 page-sized buffers
     // (4.9 MB together, more than a core's L2), so each copy meets destination lines that are not in its cache
    CopyRowsFn cp[4];
    const char* cp_names[4];
    const int nc = copy_rows_variants(cp, cp_names, 4);
    const int stride = 640 + 64;
    std::vector<uint8_t> plane(static_cast<size_t>(stride) * (480 + 64));
    for (size_t i = 0; i < plane.size(); ++i) plane[i] = static_cast<uint8_t>(i * 13);
    std::vector<std::vector<uint8_t>> dst(16, std::vector<uint8_t>(640 * 480 + 4096));
    std::printf("  copy_rows 640x480 to 16 buffers%*s", 10, "");
    for (int k = 0; k < nc; ++k) {
      const double r = mpix_per_s(
          [&](int i) {
            uint8_t* d = dst[i & 15].data();
            d += (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;  // as a page-locked buffer: line aligned
            cp[k](d, 640, plane.data() + 32 * stride + 32, stride, 640, 480);
            sink = sink + d[i & 1023];
          },
          640 * 480);
      std::printf("  %s %6.0f", cp_names[k], r);
    }
    std::printf("\n");
  }
  LumaEdgeFn edge[4];
  const char* edge_names[4];
  const int ne = deblock_luma_edge_variants(edge, edge_names, 4);
  for (int kind = 0; kind < 4; ++kind) {  // bS 2 and bS 4, vertical and horizontal; smooth content that filters
    const bool strong = kind & 1, vertical = kind & 2;
    std::printf("  deblock luma edge bS %d %s%*s", strong ? 4 : 2, vertical ? "vert " : "horiz", 15, "");
    std::vector<uint8_t> area(48 * 48);
    for (size_t i = 0; i < area.size(); ++i) area[i] = static_cast<uint8_t>(100 + (i * 7 % 5));
    const uint8_t bs[4] = {static_cast<uint8_t>(strong ? 4 : 2), static_cast<uint8_t>(strong ? 4 : 2),
                           static_cast<uint8_t>(strong ? 4 : 2), static_cast<uint8_t>(strong ? 4 : 2)};
    const uint8_t tc0[4] = {2, 2, 2, 2};
    for (int k = 0; k < ne; ++k) {
      std::vector<uint8_t> work = area;
      const double r = mpix_per_s(
          [&](int i) {
            uint8_t* q0 = work.data() + 16 * 48 + 16 + (i & 7);
            edge[k](q0, vertical ? 1 : 48, vertical ? 48 : 1, bs, tc0, 40, 8);
            sink = sink + q0[0];
          },
          16 * 8);
      std::printf("  %s %6.0f", edge_names[k], r);
    }
    std::printf("\n");
  }
  ChromaEdgesFn cedge[4];
  const char* cedge_names[4];
  const int nc = deblock_chroma_edges_variants(cedge, cedge_names, 4);
  for (int vertical = 0; vertical < 2; ++vertical) {
    std::printf("  deblock chroma edges bS 2 %s%*s", vertical ? "vert " : "horiz", 13, "");
    std::vector<uint8_t> u(32 * 32), w(32 * 32);
    for (size_t i = 0; i < u.size(); ++i) u[i] = w[i] = static_cast<uint8_t>(100 + (i * 7 % 5));
    const uint8_t bs[4] = {2, 2, 2, 2}, tc0[4] = {2, 2, 2, 2};
    for (int k = 0; k < nc; ++k) {
      const double r = mpix_per_s(
          [&](int i) {
            const int at = 8 * 32 + 8 + (i & 7);
            cedge[k](u.data() + at, w.data() + at, vertical ? 1 : 32, vertical ? 32 : 1, bs, tc0, 40, 8);
            sink = sink + u[at];
          },
          2 * 8 * 4);
      std::printf("  %s %6.0f", cedge_names[k], r);
    }
    std::printf("\n");
  }
  return 0;
}
