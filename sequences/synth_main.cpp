// bin/synth: deterministic synthetic 4:2:0 test clips, so the test suite needs no download.
//
// The picture is a procedural texture f(X, Y) (value noise over several octaves plus a few sharp-edged blocks),
// computed in integer arithmetic on positions in 1/256 pel: the same command gives the same bytes on any machine.
//   --mode moving (default): the background pans by (1, 0) pel per frame while a textured rectangle moves over it
//                            by (-3, +2) pel per frame (wrapping around), so a clip has two motions and occlusions.
//   --mode noise: the moving clip with half of its 24x24 squares replaced by uniform random samples in every
//                            frame (incompressible: exercises I_PCM next to ordinary macroblocks).
//   --mode shift --shift DX,DY: global motion only. Frame t at (x, y) shows what frame t-1 showed at
//                            (x + DX, y + DY), i.e. the true motion vector of every block is (DX, DY) pel,
//                            (4 DX, 4 DY) in quarter pel. DX, DY may be fractional (multiples of 1/256 pel).
// Output format follows the file name: .yuv (raw planar I420), .y4m (YUV4MPEG2, C420jpeg), .yuv.gz (raw, zlib gzip).
// The file is written under a temporary name and renamed when complete.
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/version.h"

namespace {

constexpr int kFracBits = 8;  // positions in 1/256 pel

struct Options {
  std::string output;
  int width = 640, height = 480, frames = 10, fps = 30;
  std::string mode = "moving";
  int64_t shift_x = 7 << kFracBits, shift_y = -3 * (1 << kFracBits);  // 1/256 pel per frame, shift mode
  uint32_t seed = 1;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "synth: %s\n", msg.c_str());
  std::fprintf(stderr,
               "usage: synth -o FILE.{yuv,y4m,yuv.gz} [-s WxH] [-n FRAMES] [--fps N] [--seed N]\n"
               "             [--mode moving|shift|noise] [--shift DX,DY]   (pel per frame, fractional allowed)\n");
  std::exit(2);
}

uint32_t hash3(int32_t x, int32_t y, uint32_t salt) {
  uint32_t h = static_cast<uint32_t>(x) * 0x8da6b343u ^ static_cast<uint32_t>(y) * 0xd8163841u ^ salt * 0xcb1ab31fu;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  h *= 0x297a2d39u;
  h ^= h >> 15;
  return h;
}

// Value noise of one octave with cells of 2^log2_cell pel at position (px, py) in 1/256 pel: 0..255 << 8.
int64_t noise(int64_t px, int64_t py, int log2_cell, uint32_t salt) {
  const int sh = log2_cell + kFracBits;
  const int64_t ix = px >> sh, iy = py >> sh;  // arithmetic shift: floor for negative positions
  const int64_t mask = (int64_t{1} << sh) - 1;
  // Fraction scaled to 16 bits, then smoothstep 3f^2 - 2f^3 so the texture has no creases at cell borders.
  auto smooth = [&](int64_t frac) {
    const int64_t f = sh <= 16 ? frac << (16 - sh) : frac >> (sh - 16);
    return (f * f >> 16) * (3 * 65536 - 2 * f) >> 16;
  };
  const int64_t wx = smooth(px & mask), wy = smooth(py & mask);
  auto v = [&](int64_t x, int64_t y) {
    return static_cast<int64_t>(hash3(static_cast<int32_t>(x), static_cast<int32_t>(y), salt) & 255);
  };
  const int64_t top = v(ix, iy) * (65536 - wx) + v(ix + 1, iy) * wx;
  const int64_t bot = v(ix, iy + 1) * (65536 - wx) + v(ix + 1, iy + 1) * wx;
  return ((top >> 8) * (65536 - wy) + (bot >> 8) * wy) >> 16;
}

int clip_u8(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

// The texture: 0..255 at (px, py) in 1/256 pel; `salt` selects an independent texture (planes, objects).
int texture(int64_t px, int64_t py, uint32_t salt) {
  // Octaves of 4, 8, 16 and 64 pel; weights 1/8, 2/8, 2/8, 3/8 (of 256 << 8): fine detail for motion search,
  // large smooth areas for the intra predictors.
  int64_t v = noise(px, py, 2, salt) + 2 * noise(px, py, 3, salt + 1) + 2 * noise(px, py, 4, salt + 2) +
              3 * noise(px, py, 6, salt + 3);
  v >>= 3;  // 0..255 << 8
  // Sharp-edged blocks of 32 pel, a third of them brightened: strong edges for the deblocking filter and ME.
  const int64_t bx = px >> (5 + kFracBits), by = py >> (5 + kFracBits);
  if (hash3(static_cast<int32_t>(bx), static_cast<int32_t>(by), salt + 7) % 3 == 0) v += 48 << 8;
  const int64_t out = (v + 128) >> 8;
  return static_cast<int>(16 + out * 219 / 303);  // 0..303 -> studio range 16..235
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int64_t parse_fixed(const std::string& s, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno || end == s.c_str() || *end || std::fabs(v) > 4096)
    usage_error("bad " + what + " '" + s + "' (expected a number of pel, e.g. 7 or -2.25)");
  return static_cast<int64_t>(std::llround(v * (1 << kFracBits)));
}

int parse_int(const std::string& s, const std::string& what, int lo, int hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (errno || end == s.c_str() || *end || v < lo || v > hi)
    usage_error("bad " + what + " '" + s + "' (expected an integer " + std::to_string(lo) + ".." +
                std::to_string(hi) + ")");
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage_error("missing value after " + a);
      return argv[++i];
    };
    if (a == "-o") {
      o.output = next();
    } else if (a == "-s") {
      const std::string v = next();
      const size_t x = v.find('x');
      if (x == std::string::npos) usage_error("bad size '" + v + "' (expected WxH, e.g. 640x480)");
      o.width = parse_int(v.substr(0, x), "width", 2, 8192);
      o.height = parse_int(v.substr(x + 1), "height", 2, 8192);
      if (o.width % 2 || o.height % 2) usage_error("size " + v + " must be even in both dimensions (4:2:0)");
    } else if (a == "-n") {
      o.frames = parse_int(next(), "frame count", 1, 100000);
    } else if (a == "--fps") {
      o.fps = parse_int(next(), "frame rate", 1, 1000);
    } else if (a == "--seed") {
      o.seed = static_cast<uint32_t>(parse_int(next(), "seed", 0, 1 << 30));
    } else if (a == "--mode") {
      o.mode = next();
      if (o.mode != "moving" && o.mode != "shift" && o.mode != "noise")
        usage_error("bad mode '" + o.mode + "' (expected moving, shift or noise)");
    } else if (a == "--shift") {
      const std::string v = next();
      const size_t c = v.find(',');
      if (c == std::string::npos) usage_error("bad shift '" + v + "' (expected DX,DY, e.g. 7,-3)");
      o.shift_x = parse_fixed(v.substr(0, c), "shift DX");
      o.shift_y = parse_fixed(v.substr(c + 1), "shift DY");
    } else if (a == "--version") {
      std::printf("synth %s\n", gme::version_string().c_str());
      std::exit(0);
    } else if (a == "-h" || a == "--help") {
      usage_error("synthetic clip generator");
    } else {
      usage_error("unknown argument '" + a + "'");
    }
  }
  if (o.output.empty()) usage_error("no output file (-o)");
  if (!ends_with(o.output, ".yuv") && !ends_with(o.output, ".y4m") && !ends_with(o.output, ".yuv.gz"))
    usage_error("output '" + o.output + "' must end in .yuv, .y4m or .yuv.gz");
  return o;
}

// One 4:2:0 frame (I420 order) of the clip.
void render(const Options& o, int t, std::vector<uint8_t>& out) {
  const int w = o.width, h = o.height, cw = w / 2, ch = h / 2;
  out.resize(static_cast<size_t>(w) * h + 2 * static_cast<size_t>(cw) * ch);
  const uint32_t salt = o.seed * 1000u;
  // Positions of the background origin and of the object (shift mode: background only).
  int64_t bg_x, bg_y;
  const bool shift = o.mode == "shift";
  if (shift) {
    bg_x = o.shift_x * t;
    bg_y = o.shift_y * t;
  } else {
    bg_x = -(int64_t{1} << kFracBits) * t;  // content moves right by 1 pel per frame: vector (-1, 0)
    bg_y = 0;
  }
  const int ow = w / 4 > 8 ? w / 4 : (w > 8 ? 8 : w), oh = h / 4 > 8 ? h / 4 : (h > 8 ? 8 : h);
  const int ox = ((w / 3 - 3 * t) % w + w) % w, oy = ((h / 3 + 2 * t) % h + h) % h;  // object's top-left
  auto in_object = [&](int x, int y) {
    if (shift) return false;
    const int dx = ((x - ox) % w + w) % w, dy = ((y - oy) % h + h) % h;
    return dx < ow && dy < oh;
  };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int v;
      if (in_object(x, y)) {
        const int dx = ((x - ox) % w + w) % w, dy = ((y - oy) % h + h) % h;
        // The object: its own texture, with more contrast than the background.
        v = clip_u8(3 * texture(static_cast<int64_t>(dx) << kFracBits, static_cast<int64_t>(dy) << kFracBits,
                                salt + 100) / 2 - 60);
      } else {
        v = texture((static_cast<int64_t>(x) << kFracBits) + bg_x, (static_cast<int64_t>(y) << kFracBits) + bg_y,
                    salt);
      }
      out[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>(v);
    }
  }
  // Chroma sample (cx, cy) sits at luma position (2 cx + 1/2, 2 cy + 1/2); its own textures, lower contrast.
  for (int c = 0; c < 2; ++c) {
    uint8_t* plane = out.data() + static_cast<size_t>(w) * h + static_cast<size_t>(c) * cw * ch;
    for (int y = 0; y < ch; ++y) {
      for (int x = 0; x < cw; ++x) {
        const int lx = 2 * x, ly = 2 * y;
        int v;
        if (in_object(lx, ly)) {
          const int dx = ((lx - ox) % w + w) % w, dy = ((ly - oy) % h + h) % h;
          v = texture((static_cast<int64_t>(dx) << kFracBits) + 128, (static_cast<int64_t>(dy) << kFracBits) + 128,
                      salt + 200 + c * 10);
        } else {
          v = texture((static_cast<int64_t>(lx) << kFracBits) + 128 + bg_x,
                      (static_cast<int64_t>(ly) << kFracBits) + 128 + bg_y, salt + 10 + c * 10);
        }
        plane[static_cast<size_t>(y) * cw + x] = static_cast<uint8_t>(128 + (v - 128) / 3);
      }
    }
  }
  if (o.mode == "noise") {
    // Half of the 24x24-pel squares (not aligned to macroblocks) hold independent uniform samples in all three
    // planes: costlier to code than raw samples at low QP, so I_PCM wins there next to ordinary macroblocks.
    for (int p = 0; p < 3; ++p) {
      const int pw = p ? cw : w, ph = p ? ch : h, sub = p ? 2 : 1;
      uint8_t* plane = out.data() + (p ? static_cast<size_t>(w) * h + static_cast<size_t>(p - 1) * cw * ch : 0);
      for (int y = 0; y < ph; ++y)
        for (int x = 0; x < pw; ++x)
          if (hash3(x * sub / 24, y * sub / 24, salt + 400) & 1)
            plane[static_cast<size_t>(y) * pw + x] =
                static_cast<uint8_t>(hash3(x + 8192 * p, y, salt + 500 + static_cast<uint32_t>(t)) >> 24);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::string tmp = o.output + ".tmp";
  const bool gz = ends_with(o.output, ".gz");
  const bool y4m = ends_with(o.output, ".y4m");
  FILE* f = nullptr;
  gzFile g = nullptr;
  if (gz) {
    g = gzopen(tmp.c_str(), "wb6");
  } else {
    f = std::fopen(tmp.c_str(), "wb");
  }
  if (!f && !g) {
    std::fprintf(stderr, "synth: cannot write '%s': %s\n", tmp.c_str(), std::strerror(errno));
    return 1;
  }
  bool ok = true;
  auto put = [&](const void* data, size_t n) {
    if (!ok || n == 0) return;
    if (g) ok = gzwrite(g, data, static_cast<unsigned>(n)) == static_cast<int>(n);
    else ok = std::fwrite(data, 1, n, f) == n;
  };
  if (y4m) {
    const std::string hdr = "YUV4MPEG2 W" + std::to_string(o.width) + " H" + std::to_string(o.height) + " F" +
                            std::to_string(o.fps) + ":1 Ip A1:1 C420jpeg\n";
    put(hdr.data(), hdr.size());
  }
  std::vector<uint8_t> frame;
  for (int t = 0; t < o.frames && ok; ++t) {
    render(o, t, frame);
    if (y4m) put("FRAME\n", 6);
    put(frame.data(), frame.size());
  }
  if (g) ok = gzclose(g) == Z_OK && ok;
  if (f) ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), o.output.c_str()) != 0) {
    std::fprintf(stderr, "synth: writing '%s' failed: %s\n", o.output.c_str(), std::strerror(errno));
    std::remove(tmp.c_str());
    return 1;
  }
  return 0;
}
