// x264 on a raw 4:2:0 file, for tools/bench_threads.sh's comparison column: what `x264 --preset medium OPTIONS
// --input-res WxH in.yuv -o out.264` does for raw input, through libx264's public API (x264_param_default_preset,
// x264_param_parse, x264_param_apply_profile, x264_encoder_*), linked statically. The Debian x264 command-line
// program needs FFmpeg's and FFMS2's libraries for its other input formats, which the GPU host does not have; this
// needs only libx264 (package libx264-dev, unpacked beside the script). Not part of the build: the script compiles
// it where it runs.
//
// Usage: x264_raw_bench WIDTH HEIGHT FRAMES IN.yuv OUT.264 [--profile P] [key=value ...]
//   every key=value goes to x264_param_parse (the command line's long option names: me=esa, merange=32, threads=N,
//   keyint=12, qp=28, ...), then the profile (default baseline) is applied. Prints "frames seconds fps pic_ms" of
//   the encoding loop (reading included) on stdout: pic_ms is the median time between one picture's output and the
//   next's after the first three, the steady pace with the pipeline full (tools/picture_timeline.py's `total` for
//   gme264's runs), or - where fewer than 5 pictures came out.
#include <stdint.h>  // before x264.h, which needs it and includes nothing

#include <x264.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "x264_raw_bench: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) return fail("usage: x264_raw_bench WIDTH HEIGHT FRAMES IN.yuv OUT.264 [--profile P] [key=value ...]");
  const int w = std::atoi(argv[1]), h = std::atoi(argv[2]), frames = std::atoi(argv[3]);
  if (w <= 0 || h <= 0 || (w & 1) || (h & 1) || frames <= 0) return fail("bad WIDTH, HEIGHT or FRAMES");
  x264_param_t param;
  if (x264_param_default_preset(&param, "medium", nullptr) < 0) return fail("no preset medium");
  param.i_csp = X264_CSP_I420;
  param.i_width = w;
  param.i_height = h;
  param.b_vfr_input = 0;
  param.i_fps_num = 24000;
  param.i_fps_den = 1001;
  param.i_log_level = X264_LOG_WARNING;
  std::string profile = "baseline";
  for (int i = 6; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--profile" && i + 1 < argc) {
      profile = argv[++i];
      continue;
    }
    const size_t eq = a.find('=');
    if (eq == std::string::npos) return fail("expected key=value, got '" + a + "'");
    const std::string key = a.substr(0, eq), value = a.substr(eq + 1);
    const int r = x264_param_parse(&param, key.c_str(), value.c_str());
    if (r != 0) return fail("x264 does not take " + a + (r == X264_PARAM_BAD_NAME ? " (unknown option)" : " (bad value)"));
  }
  if (x264_param_apply_profile(&param, profile.c_str()) < 0) return fail("cannot apply profile " + profile);

  FILE* in = std::fopen(argv[4], "rb");
  if (!in) return fail(std::string("cannot read ") + argv[4]);
  FILE* out = std::fopen(argv[5], "wb");
  if (!out) return fail(std::string("cannot write ") + argv[5]);
  x264_picture_t pic, pic_out;
  if (x264_picture_alloc(&pic, X264_CSP_I420, w, h) < 0) return fail("out of memory");
  const auto t0 = std::chrono::steady_clock::now();
  x264_t* enc = x264_encoder_open(&param);
  if (!enc) return fail("x264_encoder_open failed");
  x264_nal_t* nals;
  int nal_count;
  int written = 0;
  std::vector<double> outputs;  // seconds since t0 of each picture's output
  auto emit = [&](int bytes) {
    if (bytes > 0) {
      outputs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (std::fwrite(nals[0].p_payload, 1, static_cast<size_t>(bytes), out) != static_cast<size_t>(bytes)) return false;
    }
    return bytes >= 0;
  };
  for (int f = 0; f < frames; ++f) {
    for (int p = 0; p < 3; ++p) {  // rows of each plane into x264's (padded) planes
      const int pw = p ? w / 2 : w, ph = p ? h / 2 : h;
      for (int y = 0; y < ph; ++y)
        if (std::fread(pic.img.plane[p] + static_cast<size_t>(y) * pic.img.i_stride[p], 1, static_cast<size_t>(pw), in) !=
            static_cast<size_t>(pw))
          return fail(std::string(argv[4]) + " ends before frame " + std::to_string(f));
    }
    pic.i_pts = f;
    if (!emit(x264_encoder_encode(enc, &nals, &nal_count, &pic, &pic_out))) return fail("encoding failed");
    ++written;
  }
  while (x264_encoder_delayed_frames(enc))
    if (!emit(x264_encoder_encode(enc, &nals, &nal_count, nullptr, &pic_out))) return fail("encoding failed");
  x264_encoder_close(enc);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  x264_picture_clean(&pic);
  std::fclose(in);
  if (std::fclose(out) != 0) return fail(std::string("cannot write ") + argv[5]);
  std::vector<double> gaps;  // after the first three pictures, as the encoder's own timeline skips them
  for (size_t i = 4; i < outputs.size(); ++i) gaps.push_back(outputs[i] - outputs[i - 1]);
  std::string pic_ms = "-";
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    const size_t m = gaps.size() / 2;
    const double median = gaps.size() % 2 ? gaps[m] : (gaps[m - 1] + gaps[m]) / 2;
    pic_ms = std::to_string(1000 * median);
  }
  std::printf("%d %.6f %.3f %s\n", written, s, written / s, pic_ms.c_str());
  return 0;
}
