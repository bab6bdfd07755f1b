// bench_gpu: picture-level integer motion estimation per P picture, CUDA against its twin.
// Prints, per size, search range and K: the time per picture with both pictures uploaded (an encode's first P
// picture), in the encoder's steady state (the reference resident, the current picture uploaded), with both
// pictures resident; the device time of the steady-state call; the integer kernels alone (CUDA events); absolute
// differences per second against the device's integer peak; and the twin's time and whether it gives the same
// candidates. Then the sub-pel tables' extra time. Medians after warm-up.
//   bin/bench_gpu [--reps N] [--twin-all | --no-twin] [--only WIDTH RANGE K] [--clip WIDTH FILE FRAME]... [--blocks]
// --blocks: after each row, the integer kernel's blocks in the last call (both pictures resident): their clock
// cycles' spread, and the two floors they put under the kernel's time: its longest block, and all blocks' cycles
// spread over every SM's slots (blocks an SM runs at once x SMs).
// --clip: the pictures of that width (640 or 1920) are frames FRAME - 1 (the reference) and FRAME (the current one)
// of a clip (raw 4:2:0, y4m or .gz, as lencod reads them) instead of the synthetic pair: the kernel's bounds, and so
// its work, depend on the content. The sub-pel tables are timed on the synthetic pair only, in runs without --clip.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cpu.h"
#include "common/dsp.h"
#include "common/frame.h"
#include "common/version.h"
#include "common/yuv_io.h"
#include "gpu/gpu_me.h"
#include "gpu/me_cuda.h"
#include "gpu/me_twin.h"

using namespace gme;

namespace {

// The host's function table (common/dsp.h), as the encoder fills it.
const DspFuncs& host_dsp() {
  static const DspFuncs f = [] {
    DspFuncs t;
    dsp_init(cpu_detect(), t);
    return t;
  }();
  return f;
}

// lambda_mf at QP 28 for SAD, about sqrt(0.85 * 2^(16/3)) * 65536: the penalty every benchmark request uses.
constexpr int kLambdaQp28 = 384000;

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One line on the last call's integer-kernel blocks (--blocks): how many, their cycles (mean, median, 90th and 98th
// percentile, largest), and in us at the SM clock the two floors under the kernel's time beside its time.
std::string describe_block_cycles(BlockCycles b, double kernel_ms) {
  if (b.cycles.empty() || b.clock_mhz <= 0) return "  blocks: none measured";
  std::sort(b.cycles.begin(), b.cycles.end());
  const size_t n = b.cycles.size();
  double sum = 0;
  for (uint32_t c : b.cycles) sum += c;
  auto at = [&](double q) { return b.cycles[std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n)))] / 1e3; };
  const double slots = static_cast<double>(b.blocks_per_sm) * b.sms;
  char line[400];
  std::snprintf(line, sizeof line,
                "  blocks: %zu, %d an SM x %d SMs at a time; k cycles mean %.1f, median %.1f, p90 %.1f, p98 %.1f, "
                "max %.1f; floors at %.0f MHz: longest block %.1f us, all over the slots %.1f us (kernel %.1f us)",
                n, b.blocks_per_sm, b.sms, sum / static_cast<double>(n) / 1e3, at(0.5), at(0.9), at(0.98),
                b.cycles.back() / 1e3, b.clock_mhz, b.cycles.back() / b.clock_mhz,
                slots > 0 ? sum / slots / b.clock_mhz : 0.0, kernel_ms * 1e3);
  return line;
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

// Luma of frames `frame` - 1 (the reference) and `frame` (the current one) of a clip, read as lencod reads its input
// (common/yuv_io.h: raw, y4m or gzip; the coded rows past the visible ones repeat the last). Throws
// std::runtime_error with one line on a missing, damaged or too short file.
void read_pictures(const std::string& path, int frame, int w, int h, Plane& cur, Plane& ref) {
  const std::unique_ptr<FrameReader> reader = open_frame_reader(path, w, h, 0);
  if (reader->width() != w || reader->height() != h)
    throw std::runtime_error(path + " is " + std::to_string(reader->width()) + "x" + std::to_string(reader->height()));
  Frame f;
  Plane* planes[2] = {&ref, &cur};
  for (int i = 0; i < 2; ++i) {
    if (!reader->read_frame(frame - 1 + i, f))
      throw std::runtime_error(path + " has no frame " + std::to_string(frame - 1 + i));
    *planes[i] = f.plane[0];
    planes[i]->extend_borders();
  }
}

// The sub-pel tables (me_interface.h SubpelTable) the encoder asks for with the candidates: the extra time per
// picture on the GPU (same call with and without tables, the encoder's case: both pictures uploaded, zero copy)
// for tables of the first 1, 2, 4 and 8 candidates; the time until the first band of rows has landed with its
// tables (a progressive call, as the encoder makes: what its macroblock loop waits for before it starts); the
// kernel's plain twin on the CPU (first candidate), and whether the two agree byte for byte.
void bench_subpel_tables(PictureIntegerSearch& search, GpuPictureSearch* gpu, int reps, bool no_twin) {
  std::printf("\nSub-pel tables (SATD at the 49 quarter-pel offsets around a partition's first `ranks` candidates),\n"
              "SR 32, K 8, medians of %d calls, ms: wall without / with tables, the difference, the twin's tables\n"
              "alone (ranks 1).\n", reps);
  std::printf("%-10s %5s %10s %10s %8s %10s %9s %s\n", "size", "ranks", "no_tables", "tables", "extra",
              "first_band", "twin_ms", "identical");
  struct Size { int w, h, coded_h; };
  for (const Size& sz : {Size{640, 480, 480}, Size{1920, 1080, 1088}}) {
    Plane cur, ref;
    make_pictures(sz.w, sz.coded_h, cur, ref);
    PictureSearchRequest req = centred_request(cur, {&ref}, 32, 8, kLambdaQp28);
    req.zero_copy = true;
    PictureCandidates got;
    auto timed = [&](int metric, int ranks) {
      req.subpel_metric = metric;
      req.subpel_ranks = ranks;
      std::vector<double> w;
      for (int i = 0; i < 3; ++i) search.search(req, got);
      for (int i = 0; i < reps; ++i) {
        const double t0 = now_ms();
        search.search(req, got);
        w.push_back(now_ms() - t0);
      }
      return median(w);
    };
    // Call to the first band's answer, candidates and tables, with the tables of `ranks` candidates.
    auto first_band = [&](int ranks) {
      req.subpel_metric = 2;
      req.subpel_ranks = ranks;
      req.progressive = true;
      std::vector<double> w;
      for (int i = 0; i < 3 + reps; ++i) {
        const double t0 = now_ms();
        search.search(req, got);
        search.wait_rows(1);
        if (i >= 3) w.push_back(now_ms() - t0);
        search.wait_rows(req.mb_height);
      }
      req.progressive = false;
      return median(w);
    };
    const double without = gpu ? timed(-1, 1) : 0;
    for (int ranks : {8, 4, 2, 1}) {  // ranks 1 last: its answer is what the twin is compared with
      const double with = gpu ? timed(2, ranks) : 0;
      const double first = gpu ? first_band(ranks) : 0;
      double twin_ms = -1;
      std::string identical = "-";
      if (ranks == 1 && !no_twin && (sz.w == 640 || !gpu)) {
        PictureCandidates want;
        req.subpel_metric = -1;
        TwinPictureSearch(host_dsp()).search(req, want);
        std::vector<SubpelTable> tables(static_cast<size_t>(req.mb_width) * req.mb_height);
        const double t0 = now_ms();
        subpel_tables_twin(req, want, 2, 1, tables.data(), nullptr);
        twin_ms = now_ms() - t0;
        if (gpu)
          identical = std::memcmp(tables.data(), got.subpel_at(0, 0, 0), tables.size() * sizeof(SubpelTable)) == 0
                          ? "yes" : "NO";
      }
      std::printf("%4dx%-5d %5d %10.3f %10.3f %8.3f %10.3f %9.1f %s\n", sz.w, sz.h, ranks, without, with,
                  with - without, first, twin_ms, identical.c_str());
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  gme::set_default_cuda_connections();  // lencod's environment, so the figures are lencod's
  int reps = 30;
  bool twin_all = false, no_twin = false, blocks = false;
  int only_w = 0, only_range = 0, only_k = 0;  // --only: one configuration (for profilers)
  struct Clip {
    std::string path;
    int frame = 0;
    Plane cur, ref;
  };
  Clip clip640, clip1920;  // --clip: real pictures instead of the synthetic pair
  if (argc > 1 && !std::strcmp(argv[1], "--version")) {
    std::printf("bench_gpu %s\n", gme::version_string().c_str());
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--twin-all")) twin_all = true;
    else if (!std::strcmp(argv[i], "--no-twin")) no_twin = true;
    else if (!std::strcmp(argv[i], "--blocks")) blocks = true;
    else if (!std::strcmp(argv[i], "--only") && i + 3 < argc) {
      only_w = std::atoi(argv[++i]); only_range = std::atoi(argv[++i]); only_k = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--clip") && i + 3 < argc) {
      const int w = std::atoi(argv[++i]);
      const std::string path = argv[++i];
      const int frame = std::atoi(argv[++i]);
      if ((w != 640 && w != 1920) || frame < 1) {
        std::fprintf(stderr, "bench_gpu: --clip %d %s %d: expected width 640 or 1920 and a frame of 1 or more\n", w,
                     path.c_str(), frame);
        return 2;
      }
      Clip& c = w == 640 ? clip640 : clip1920;
      c.path = path;
      c.frame = frame;
      try {  // read here, before anything is printed
        read_pictures(path, frame, w, w == 640 ? 480 : 1080, c.cur, c.ref);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gpu: --clip %d %s %d: %s\n", w, path.c_str(), frame, e.what());
        return 2;
      }
    } else {
      std::fprintf(stderr, "bench_gpu: unknown argument '%s' (expected --reps N, --twin-all, --no-twin, "
                   "--only WIDTH RANGE K, --clip WIDTH FILE FRAME, --blocks)\n", argv[i]);
      return 2;
    }
  }
  std::printf("%s\n", version_string().c_str());
  std::string why;
  const double t_start = now_ms();
  std::unique_ptr<PictureIntegerSearch> search = make_picture_search(0, host_dsp(), &why);
  const double start_ms = now_ms() - t_start;
  auto* gpu = dynamic_cast<GpuPictureSearch*>(search.get());
  if (!gpu) std::printf("GPU: none (%s); twin only\n", why.c_str());
  else std::printf("GPU: %s\nInteger peak: %.3g absdiff/s (SMs x 64 lanes x 4 bytes x clock)\n",
                   gpu->device_description().c_str(), gpu->peak_absdiff_per_s());
  if (gpu) {
    // What an encode's first P picture waits for (less the I picture it overlaps): device start-up, then the
    // first call (module load of the kernels it runs, allocations), here 640x480 SR 32 K 8 with tables.
    Plane cur, ref;
    make_pictures(640, 480, cur, ref);
    PictureSearchRequest req = centred_request(cur, {&ref}, 32, 8, kLambdaQp28);
    req.zero_copy = true;
    req.subpel_metric = 2;
    PictureCandidates got;
    const double t0 = now_ms();
    search->search(req, got);
    std::printf("CUDA start-up: %.1f ms to create the search, %.1f ms for its first call (640x480, K 8, tables)\n",
                start_ms, now_ms() - t0);
  }
  TwinPictureSearch twin(host_dsp());

  struct Size { int w, h, coded_h; };
  const Size sizes[] = {{640, 480, 480}, {1920, 1080, 1088}};
  std::printf("\nPer picture, zero-copy answers, no sub-pel tables; medians of %d calls, ms:\n"
              "  wall: both pictures uploaded (an encode's first P picture); enc: the encoder's steady state, the\n"
              "  reference resident and the current picture uploaded from page-locked memory, as the encoder's\n"
              "  input pictures are; resid: both pictures resident;\n"
              "  dev: first upload to results in host memory on the device (CUDA events), enc case; kernel: the\n"
              "  integer kernels alone (first kernel start to last kernel end, resid case); upload: both pictures'\n"
              "  staging and DMA (wall case). The wall times from calls that record no CUDA events for timing (as\n"
              "  the encoder's), the device times from as many calls that do.\n", reps);
  std::printf("\n%-10s %3s %2s %8s %8s %8s %8s %8s %8s %10s %6s %9s %s\n", "size", "SR", "K", "wall", "enc", "resid",
              "dev", "kernel", "upload", "absdiff/s", "%peak", "twin_ms", "identical");
  for (const Size& sz : sizes) {
    Plane cur, ref;
    const Clip& clip = sz.w == 640 ? clip640 : clip1920;
    if (clip.path.empty()) {
      make_pictures(sz.w, sz.coded_h, cur, ref);
    } else {
      cur = clip.cur;
      ref = clip.ref;
    }
    if (!clip.path.empty() && (!only_w || only_w == sz.w))
      std::printf("%dx%d: frames %d and %d of %s\n", sz.w, sz.h, clip.frame - 1, clip.frame, clip.path.c_str());
    const int mbw = sz.w / 16, mbh = sz.coded_h / 16;
    struct Run { int range, k; };
    const Run runs[] = {{16, 1}, {32, 1}, {64, 1}, {16, 4}, {32, 4}, {64, 4},
                        {16, 8}, {32, 8}, {64, 8}, {16, 16}, {32, 16}, {64, 16}};
    for (const Run& run : runs) {
      if (only_w && (only_w != sz.w || only_range != run.range || only_k != run.k)) continue;
      PictureSearchRequest req = centred_request(cur, {&ref}, run.range, run.k, kLambdaQp28);
      req.zero_copy = true;  // as the encoder asks: the answer is a view of the page-locked buffer, no host copy
      const double absdiffs = static_cast<double>(mbw) * mbh * window_positions(run.range) * 256.0;
      PictureCandidates got;
      double wall = 0, encoder_case = 0, resident = 0, kernel = 0, upload = 0, device_total = 0;
      std::string block_floors;
      if (gpu) {
        // One timed loop: median of `reps` calls after 3 warm-up calls (module load, allocations, caches).
        // Residency: 0 both pictures uploaded, 1 the reference resident and a new current picture each call (the
        // encoder's steady state: the reference is the preloaded reconstruction), 2 both resident.
        auto timed = [&](int residency, std::vector<double>* kernel_ms, std::vector<double>* upload_ms,
                         std::vector<double>* total_ms) {
          int next_id = 100;
          req.cur_id = residency == 2 ? 1 : -1;
          if (residency >= 1) req.ref_ids = {2}; else req.ref_ids.clear();
          std::vector<double> w;
          for (int i = 0; i < 3; ++i) search->search(req, got);
          for (int i = 0; i < reps; ++i) {
            if (residency == 1) req.cur_id = next_id++;  // same pixels, new id: uploaded as a new picture
            const double t0 = now_ms();
            search->search(req, got);
            w.push_back(now_ms() - t0);
            if (kernel_ms) kernel_ms->push_back(gpu->last_timing().kernel_ms);
            if (upload_ms) upload_ms->push_back(gpu->last_timing().upload_ms);
            if (total_ms) total_ms->push_back(gpu->last_timing().total_ms);
          }
          return median(w);
        };
        // The wall times come from calls that record no timing events, as the encoder's do; the device times from
        // as many calls again that do (time_calls).
        std::vector<double> k, u, t;
        wall = timed(0, nullptr, nullptr, nullptr);
        gpu->time_calls(true);
        timed(0, nullptr, &u, nullptr);
        gpu->time_calls(false);
        // The encoder's input pictures are page-locked for the search (Encoder::input_frame, Plane::lock): in its
        // steady state the current picture's rows go to the device straight from them.
        cur.lock = search->page_lock(cur.storage.data(), cur.storage.size());
        encoder_case = timed(1, nullptr, nullptr, nullptr);
        resident = timed(2, nullptr, nullptr, nullptr);
        gpu->time_calls(true);
        timed(1, nullptr, nullptr, &t);
        timed(2, &k, nullptr, nullptr);
        gpu->time_calls(false);
        cur.lock.reset();
        kernel = median(k);
        upload = median(u);
        device_total = median(t);
        if (blocks) block_floors = describe_block_cycles(gpu->last_block_cycles(), kernel);
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
      std::printf("%4dx%-5d %3d %2d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %10.3g %5.1f%% %9.1f %s\n", sz.w, sz.h,
                  run.range, run.k, wall, encoder_case, resident, device_total, kernel, upload, rate,
                  gpu ? 100.0 * rate / gpu->peak_absdiff_per_s() : 0.0, twin_ms, identical.c_str());
      if (!block_floors.empty()) std::printf("%s\n", block_floors.c_str());
      std::fflush(stdout);
      if (identical == "NO") return 1;
    }
  }
  // The sub-pel tables' figures come from the synthetic pair only: a run on clips times the integer search alone.
  if (!only_w && clip640.path.empty() && clip1920.path.empty()) bench_subpel_tables(*search, gpu, reps, no_twin);
  return 0;
}
