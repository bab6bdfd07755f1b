// bin/synth, the synthetic clip generator: global-shift geometry, determinism, and the three output formats.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/conformance_util.h"

namespace gme::conf {
namespace {

struct Yuv {
  std::vector<uint8_t> bytes;
  int w, h;
  int at(int frame, int plane, int x, int y) const {
    const size_t luma = static_cast<size_t>(w) * h, chroma = luma / 4;
    size_t o = static_cast<size_t>(frame) * (luma + 2 * chroma);
    if (plane == 0) return bytes[o + static_cast<size_t>(y) * w + x];
    o += luma + (plane - 1) * chroma;
    return bytes[o + static_cast<size_t>(y) * (w / 2) + x];
  }
};

Yuv load(const Clip& c) {
  Yuv y{{}, c.width, c.height};
  EXPECT_TRUE(read_file(c.file, &y.bytes)) << c.file;
  EXPECT_EQ(y.bytes.size(), static_cast<size_t>(c.width) * c.height * 3 / 2 * c.frames) << c.file;
  return y;
}

// Frame t at (x, y) equals frame t-1 at (x + DX, y + DY) wherever both are inside the picture.
int count_shift_mismatches(const Yuv& v, int frames, int plane, int dx, int dy) {
  const int w = plane ? v.w / 2 : v.w, h = plane ? v.h / 2 : v.h;
  int bad = 0, checked = 0;
  for (int t = 1; t < frames; ++t)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int sx = x + dx, sy = y + dy;
        if (sx < 0 || sy < 0 || sx >= w || sy >= h) continue;
        ++checked;
        bad += v.at(t, plane, x, y) != v.at(t - 1, plane, sx, sy);
      }
  EXPECT_GT(checked, w * h / 2);
  return bad;
}

TEST(Synth, GlobalShiftMovesByTheVector) {
  const Clip c = synth_clip(176, 144, 3, "yuv", "--mode shift --shift 7,-3");
  ASSERT_FALSE(c.file.empty());
  const Yuv v = load(c);
  EXPECT_EQ(count_shift_mismatches(v, 3, 0, 7, -3), 0);
  // And not by a neighbouring vector (the texture must make the true one unique).
  EXPECT_GT(count_shift_mismatches(v, 3, 0, 6, -3), 176 * 144 / 2);
  EXPECT_GT(count_shift_mismatches(v, 3, 0, 7, -2), 176 * 144 / 2);
  // Even luma shifts move chroma by whole chroma samples.
  const Clip e = synth_clip(176, 144, 2, "yuv", "--mode shift --shift -6,4");
  ASSERT_FALSE(e.file.empty());
  const Yuv ve = load(e);
  EXPECT_EQ(count_shift_mismatches(ve, 2, 0, -6, 4), 0);
  EXPECT_EQ(count_shift_mismatches(ve, 2, 1, -3, 2), 0);
  EXPECT_EQ(count_shift_mismatches(ve, 2, 2, -3, 2), 0);
}

TEST(Synth, SubPelShiftIsNotAnIntegerShift) {
  const Clip c = synth_clip(64, 64, 2, "yuv", "--mode shift --shift 0.5,0.25");
  ASSERT_FALSE(c.file.empty());
  const Yuv v = load(c);
  EXPECT_GT(count_shift_mismatches(v, 2, 0, 0, 0), 64 * 64 / 4);
  EXPECT_GT(count_shift_mismatches(v, 2, 0, 1, 0), 64 * 64 / 4);
}

TEST(Synth, DeterministicAndFormatsAgree) {
  const std::string dir_note = "bin/synth in " + bin_dir();
  TempDir dir("synth_test");
  const std::string base = bin_dir() + "/synth -s 48x32 -n 3 -o ";
  for (const char* f : {"a.yuv", "b.yuv", "c.y4m", "d.yuv.gz"}) {
    const CommandResult r = run_command(base + dir.file(f));
    ASSERT_EQ(r.status, 0) << dir_note << ": " << r.output;
  }
  std::vector<uint8_t> a, b, c;
  ASSERT_TRUE(read_file(dir.file("a.yuv"), &a));
  ASSERT_TRUE(read_file(dir.file("b.yuv"), &b));
  ASSERT_TRUE(read_file(dir.file("c.y4m"), &c));
  EXPECT_EQ(a.size(), 48u * 32 * 3 / 2 * 3);
  EXPECT_EQ(a, b);
  // Y4M: header line, then "FRAME\n" + picture per frame.
  const std::string header = "YUV4MPEG2 W48 H32 F30:1 Ip A1:1 C420jpeg\n";
  ASSERT_GT(c.size(), header.size());
  EXPECT_EQ(std::string(c.begin(), c.begin() + header.size()), header);
  std::vector<uint8_t> payload;
  size_t pos = header.size();
  for (int f = 0; f < 3; ++f) {
    ASSERT_EQ(std::string(c.begin() + pos, c.begin() + pos + 6), "FRAME\n");
    pos += 6;
    payload.insert(payload.end(), c.begin() + pos, c.begin() + pos + 48 * 32 * 3 / 2);
    pos += 48 * 32 * 3 / 2;
  }
  EXPECT_EQ(pos, c.size());
  EXPECT_EQ(payload, a);
  const CommandResult z = run_command("gzip -dc " + shell_quote(dir.file("d.yuv.gz")) + " | cmp - " +
                                      shell_quote(dir.file("a.yuv")));
  EXPECT_EQ(z.status, 0) << z.output;
  // Bad arguments: one line naming the problem, non-zero exit, no output file.
  const CommandResult bad = run_command(bin_dir() + "/synth -s 47x32 -o " + dir.file("bad.yuv"));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("47x32"), std::string::npos) << bad.output;
  EXPECT_FALSE(file_exists(dir.file("bad.yuv")));
}

}  // namespace
}  // namespace gme::conf
