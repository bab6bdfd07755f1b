// bin/bench_replay: the GPU run's CPU side at several thread counts, on a machine without a GPU. A first encode asks
// the CPU twin of the picture-level search for every P picture's candidates and sub-pel tables (what a GPU answers,
// tables included), and keeps them; each timed encode then gets them back at once, so its time is what the CPU
// does in a GPU run - re-ranking, sub-pel refinement, mode decision, coding, deblocking - without the twin's search,
// which the GPU takes off the CPU. Same stream at every thread count (checked), and the same as the first encode.
//
// Usage: bench_replay CLIP.yuv WIDTH HEIGHT FRAMES [THREADS...] [-p Key=Value ...] | --version
//   (raw 4:2:0 input; default threads 1 2; the configuration is lencod's with cfg/encoder_baseline.cfg, run from
//   the repository root, and GPUIntegerME = 1, IntraPeriod 12, then the -p settings: any lencod key, read by
//   lencod's own parser, so the replay codes what `lencod -d cfg/encoder_baseline.cfg` codes). Prints per thread
//   count the seconds and frames/s of the encode (median of ROUNDS=3,
//   interleaved; and the fastest, which on a shared machine is the one least disturbed) and the speed-up over the
//   first count. PROBE=1 (shared machines): before each round a busy loop runs on as many threads as the largest
//   count and on one; rounds where it did not get that many cores (less than 90 % of the ideal speed-up) are left
//   out, and the report says how many were kept.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/frame.h"
#include "common/version.h"
#include "common/yuv_io.h"
#include "encoder/encoder.h"
#include "gpu/gpu_me.h"
#include "lencod/config.h"

namespace {

using gme::PictureCandidates;
using gme::PictureIntegerSearch;
using gme::PictureSearchRequest;

// What the twin answered for each search() call, in order.
struct Answers {
  std::vector<PictureCandidates> pictures;
};

// The twin, keeping its answers; it says it runs beside the CPU so the encoder asks for sub-pel tables too, as it
// does of a GPU.
class Recording final : public PictureIntegerSearch {
 public:
  Recording(Answers* a, const gme::DspFuncs& dsp) : twin_(gme::make_picture_search_twin(dsp)), answers_(a) {}
  void search(const PictureSearchRequest& req, PictureCandidates& out) override {
    PictureSearchRequest r = req;
    r.zero_copy = false;
    twin_->search(r, out);
    answers_->pictures.push_back(out);
  }
  const char* name() const override { return "recording twin"; }
  bool runs_beside_cpu() const override { return true; }

 private:
  std::unique_ptr<PictureIntegerSearch> twin_;
  Answers* answers_;
};

// The kept answers, handed out as views (no copy), in the same order.
class Replay final : public PictureIntegerSearch {
 public:
  explicit Replay(const Answers* a) : answers_(a) {}
  void search(const PictureSearchRequest&, PictureCandidates& out) override {
    const PictureCandidates& a = answers_->pictures.at(next_++);
    out.num_refs = a.num_refs;
    out.num_mbs = a.num_mbs;
    out.top_k = a.top_k;
    out.view = a.data.data();
    out.subpel_metric = a.subpel_metric;
    out.subpel_ranks = a.subpel_ranks;
    out.subpel_view = a.subpel.empty() ? nullptr : a.subpel.data();
    out.floors_view = a.floors.empty() ? nullptr : a.floors.data();
  }
  const char* name() const override { return "replay"; }
  bool runs_beside_cpu() const override { return true; }

 private:
  const Answers* answers_;
  size_t next_ = 0;
};

// Seconds of a fixed amount of busy work split over `threads` threads.
double busy(int threads) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> v;
  for (int t = 0; t < threads; ++t)
    v.emplace_back([threads] {
      volatile double x = 0;
      for (long i = 0; i < 20000000L / threads; ++i) x = x + 1e-9 * static_cast<double>(i);
    });
  for (std::thread& t : v) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--version") {
    std::printf("bench_replay %s\n", gme::version_string().c_str());
    return 0;
  }
  if (argc < 5) {
    std::fprintf(stderr, "usage: bench_replay CLIP.yuv WIDTH HEIGHT FRAMES [THREADS...] [-p Key=Value ...]\n");
    return 2;
  }
  // lencod's command line for the same encode: the stock configuration file, the clip, then the -p settings.
  std::vector<std::string> args = {"bench_replay", "-d", "cfg/encoder_baseline.cfg",
                                   "-p", std::string("InputFile=") + argv[1],
                                   "-p", std::string("SourceWidth=") + argv[2],
                                   "-p", std::string("SourceHeight=") + argv[3],
                                   "-p", std::string("FramesToBeEncoded=") + argv[4],
                                   "-p", "GPUIntegerME=1",
                                   "-p", "IntraPeriod=12"};
  std::vector<int> threads;
  for (int i = 5; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-p" && i + 1 < argc) {
      args.push_back("-p");
      args.push_back(argv[++i]);
    } else {
      char* end = nullptr;
      const long t = std::strtol(a.c_str(), &end, 10);
      if (*end != '\0' || t < 1 || t > 1024) {
        std::fprintf(stderr, "bench_replay: '%s': expected a thread count from 1 to 1024 or -p Key=Value\n", a.c_str());
        return 2;
      }
      threads.push_back(static_cast<int>(t));
    }
  }
  gme::EncoderParams p;
  try {
    std::vector<const char*> av;
    for (const std::string& a : args) av.push_back(a.c_str());
    gme::CommandLine cl = gme::parse_command_line(static_cast<int>(av.size()), av.data());
    for (const std::string& w : cl.warnings) std::fprintf(stderr, "bench_replay: warning: %s\n", w.c_str());
    p = cl.params;
  } catch (const gme::ConfigError& e) {
    for (const std::string& line : e.lines()) std::fprintf(stderr, "bench_replay: error: %s\n", line.c_str());
    return 2;
  }
  if (threads.empty()) threads = {1, 2};
  const int rounds = std::getenv("ROUNDS") ? std::max(1, std::atoi(std::getenv("ROUNDS"))) : 3;

  std::vector<gme::Frame> frames(static_cast<size_t>(p.frames_to_encode));
  try {
    auto reader = gme::open_frame_reader(p.input_file, p.source_width, p.source_height, 0);
    for (int n = 0; n < p.frames_to_encode; ++n)
      if (!reader->read_frame(n, frames[static_cast<size_t>(n)])) {
        std::fprintf(stderr, "bench_replay: %s has fewer than %d frames\n", argv[1], p.frames_to_encode);
        return 1;
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_replay: %s\n", e.what());
    return 1;
  }

  Answers answers;
  auto encode = [&](int t, bool record, double* seconds) {
    gme::EncoderParams q = p;
    q.threads = t;
    gme::PictureSearchFactory f = [&](int, const gme::DspFuncs& dsp,
                                      std::string* why) -> std::unique_ptr<PictureIntegerSearch> {
      if (why) why->clear();
      if (record) return std::make_unique<Recording>(&answers, dsp);
      return std::make_unique<Replay>(&answers);
    };
    std::vector<uint8_t> stream;
    gme::EncodedPicture e;
    const auto t0 = std::chrono::steady_clock::now();
    {
      gme::Encoder enc(q, f);
      enc.integer_me_path();  // the (instant) start-up out of the timing
      for (int n = 0; n < q.frames_to_encode; ++n) {
        enc.push(frames[static_cast<size_t>(n)], n);
        while (enc.pull(&e)) stream.insert(stream.end(), e.bytes.begin(), e.bytes.end());
      }
      while (enc.drain(&e)) stream.insert(stream.end(), e.bytes.begin(), e.bytes.end());
    }
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return stream;
  };
  double s0;
  const std::vector<uint8_t> reference = encode(1, true, &s0);
  std::printf("bench_replay: %s %dx%d, %d frames; the twin's answers kept (%.1f s)\n", argv[1], p.source_width,
              p.source_height, p.frames_to_encode, s0);
  std::vector<std::vector<double>> secs(threads.size());
  bool same = true;
  const bool probe = std::getenv("PROBE") && std::string(std::getenv("PROBE")) == "1";
  const int most = *std::max_element(threads.begin(), threads.end());
  int kept = 0;
  for (int r = 0; r < rounds; ++r) {
    if (probe && busy(1) / busy(most) < 0.9 * most) continue;
    ++kept;
    for (size_t i = 0; i < threads.size(); ++i) {
      double s;
      same &= encode(threads[i], false, &s) == reference;
      secs[i].push_back(s);
    }
  }
  if (kept == 0) {
    std::printf("no round got %d free cores (PROBE=1)\n", most);
    return 1;
  }
  if (probe) std::printf("rounds with %d free cores: %d of %d\n", most, kept, rounds);
  double base = 0;
  for (size_t i = 0; i < threads.size(); ++i) {
    std::sort(secs[i].begin(), secs[i].end());
    const double med = secs[i][secs[i].size() / 2];
    if (i == 0) base = med;
    std::printf("threads %2d: %.3f s (median of %d; fastest %.3f s), %.1f frames/s, %.2fx\n", threads[i], med, kept,
                secs[i].front(), p.frames_to_encode / med, base / med);
  }
  std::printf("same stream at every thread count and as the twin's encode: %s\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}
