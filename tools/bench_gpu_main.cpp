// bench_gpu: picture-level integer motion estimation per P picture, CUDA against its twin.
// Prints, per size and search range: wall time per picture with uploads (the encoder's case when references are
// not resident), wall time with pictures resident, kernel-only time (CUDA events), achieved absolute differences
// per second against the device's integer peak, and the twin's time. Medians after warm-up.
//   bin/bench_gpu [--reps N] [--twin-all | --no-twin] [--only WIDTH RANGE K]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/frame.h"
#include "gpu/gpu_me.h"
#include "gpu/me_cuda.h"
#include "gpu/me_twin.h"

using namespace gme;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Textured picture (gradients plus noise) and a reference moved by a few pixels: realistic SAD minima.
void make_pictures(int w, int h, Plane& cur, Plane& ref) {
  std::mt19937 rng(42);
  cur.alloc(w, h, kLumaPad);
  ref.alloc(w, h, kLumaPad);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) *cur.at(x, y) = static_cast<uint8_t>(((x * 3 + y * 5) / 2 + rng() % 32) & 255);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      *ref.at(x, y) = clip_pixel(*cur.at(clip3(0, w - 1, x + 3), clip3(0, h - 1, y - 2)) + static_cast<int>(rng() % 7) - 3);
  cur.extend_borders();
  ref.extend_borders();
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 30;
  bool twin_all = false, no_twin = false;
  int only_w = 0, only_range = 0, only_k = 0;  // --only: one configuration (for profilers)
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--twin-all")) twin_all = true;
    else if (!std::strcmp(argv[i], "--no-twin")) no_twin = true;
    else if (!std::strcmp(argv[i], "--only") && i + 3 < argc) {
      only_w = std::atoi(argv[++i]); only_range = std::atoi(argv[++i]); only_k = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "bench_gpu: unknown argument '%s' (expected --reps N, --twin-all, --no-twin, "
                   "--only WIDTH RANGE K)\n", argv[i]);
      return 2;
    }
  }
  std::string why;
  std::unique_ptr<PictureIntegerSearch> search = make_picture_search(0, &why);
  auto* gpu = dynamic_cast<GpuPictureSearch*>(search.get());
  if (!gpu) std::printf("GPU: none (%s); twin only\n", why.c_str());
  else std::printf("GPU: %s\nInteger peak: %.3g absdiff/s (SMs x 64 lanes x 4 bytes x clock)\n",
                   gpu->device_description().c_str(), gpu->peak_absdiff_per_s());
  TwinPictureSearch twin;

  struct Size { int w, h, coded_h; };
  const Size sizes[] = {{640, 480, 480}, {1920, 1080, 1088}};
  std::printf("\nwall: per picture, both pictures uploaded, pipelined (the encoder's case); resid: pictures resident;\n"
              "seq: uploads, kernels, download one after the other; kernel: kernels alone (CUDA events);\n"
              "upload: host staging + DMA of both pictures (sequential mode); dev: first upload to last result on the\n"
              "device (CUDA events) in the wall case. Medians of %d calls, ms.\n", reps);
  std::printf("\n%-10s %3s %2s %8s %8s %8s %8s %8s %8s %10s %6s %9s %s\n", "size", "SR", "K", "wall", "dev", "resid",
              "seq", "kernel", "upload", "absdiff/s", "%peak", "twin_ms", "identical");
  for (const Size& sz : sizes) {
    Plane cur, ref;
    make_pictures(sz.w, sz.coded_h, cur, ref);
    const int mbw = sz.w / 16, mbh = sz.coded_h / 16;
    struct Run { int range, k; };
    const Run runs[] = {{16, 1}, {32, 1}, {64, 1}, {16, 4}, {32, 4}, {64, 4}, {16, 8}, {32, 8}, {64, 8}, {32, 16}};
    for (const Run& run : runs) {
      if (only_w && (only_w != sz.w || only_range != run.range || only_k != run.k)) continue;
      PictureSearchRequest req;
      req.cur = &cur;
      req.refs = {&ref};
      req.mb_width = mbw;
      req.mb_height = mbh;
      req.search_range = run.range;
      req.top_k = run.k;
      req.lambda_factor = 384000;  // lambda_mf at QP 28 for SAD, about sqrt(0.85 * 2^(16/3)) * 65536
      req.centre.assign(static_cast<size_t>(mbw) * mbh, MV(0, 0));
      req.penalty_pred.assign(static_cast<size_t>(mbw) * mbh, MV(0, 0));
      req.zero_copy = true;  // as the encoder asks: the answer is a view of the download buffer, no host copy
      const double absdiffs = static_cast<double>(mbw) * mbh * window_positions(run.range) * 256.0;
      PictureCandidates got;
      double wall = 0, resident = 0, kernel = 0, upload = 0, sequential = 0, device_total = 0;
      if (gpu) {
        // One timed loop: median of `reps` calls after 3 warm-up calls (module load, allocations, caches).
        auto timed = [&](bool pipelined, bool keep_resident, std::vector<double>* kernel_ms,
                         std::vector<double>* upload_ms, std::vector<double>* total_ms = nullptr) {
          gpu->set_pipelined(pipelined);
          req.cur_id = keep_resident ? 1 : -1;
          if (keep_resident) req.ref_ids = {2}; else req.ref_ids.clear();
          std::vector<double> w;
          for (int i = 0; i < 3; ++i) search->search(req, got);
          for (int i = 0; i < reps; ++i) {
            const double t0 = now_ms();
            search->search(req, got);
            w.push_back(now_ms() - t0);
            if (kernel_ms) kernel_ms->push_back(gpu->last_timing().kernel_ms);
            if (upload_ms) upload_ms->push_back(gpu->last_timing().upload_ms);
            if (total_ms) total_ms->push_back(gpu->last_timing().total_ms);
          }
          return median(w);
        };
        std::vector<double> k, u, t;
        wall = timed(true, false, nullptr, nullptr, &t);  // the encoder's case: both pictures uploaded
        resident = timed(true, true, nullptr, nullptr);   // both pictures already on the device
        sequential = timed(false, false, nullptr, &u);    // no overlap: uploads, then kernels, then download
        timed(false, true, &k, nullptr);                  // kernels alone, CUDA events
        kernel = median(k);
        upload = median(u);
        device_total = median(t);
        gpu->set_pipelined(true);
        req.cur_id = -1;
        req.ref_ids.clear();
      }
      double twin_ms = -1;
      std::string identical = "-";
      const bool run_twin = !no_twin && (twin_all || !gpu || (sz.w == 640 && run.range <= 32));
      if (run_twin) {
        PictureCandidates want;
        const double t0 = now_ms();
        twin.search(req, want);
        twin_ms = now_ms() - t0;
        if (gpu) identical = (want.size() == got.size() &&
                              std::memcmp(want.begin(), got.begin(), want.size() * sizeof(Candidate)) == 0)
                                 ? "yes" : "NO";
      }
      const double rate = kernel > 0 ? absdiffs / (kernel * 1e-3) : 0;
      std::printf("%4dx%-5d %3d %2d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %10.3g %5.1f%% %9.1f %s\n", sz.w, sz.h, run.range,
                  run.k, wall, device_total, resident, sequential, kernel, upload, rate, gpu ? 100.0 * rate / gpu->peak_absdiff_per_s() : 0.0,
                  twin_ms, identical.c_str());
      std::fflush(stdout);
      if (identical == "NO") return 1;
    }
  }
  return 0;
}
