// Frame readers (raw / y4m / gzip), padding to the coded size, short inputs, the cropped writer, OutputFile's
// temporary-name protocol, and the PSNR helpers of lencod/report.h.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/output_file.h"
#include "common/yuv_io.h"
#include "lencod/report.h"
#include "tests/conformance_util.h"
#include "tests/dsp_tables.h"

namespace gme {
namespace {

using conf::TempDir;

// A deterministic packed 4:2:0 frame of w x h whose every sample depends on (frame, plane, x, y).
std::vector<uint8_t> make_frame(int w, int h, int frame) {
  std::vector<uint8_t> v;
  for (int c = 0; c < 3; ++c) {
    const int pw = c ? w / 2 : w, ph = c ? h / 2 : h;
    for (int y = 0; y < ph; ++y)
      for (int x = 0; x < pw; ++x) v.push_back(static_cast<uint8_t>(frame * 37 + c * 71 + x * 3 + y * 11));
  }
  return v;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

// Checks visible samples against make_frame and the padding against edge replication.
void expect_frame(const Frame& f, int w, int h, int frame) {
  ASSERT_EQ(f.crop_width, w);
  ASSERT_EQ(f.crop_height, h);
  ASSERT_EQ(f.width, (w + 15) / 16 * 16);
  ASSERT_EQ(f.height, (h + 15) / 16 * 16);
  const std::vector<uint8_t> ref = make_frame(w, h, frame);
  size_t off = 0;
  for (int c = 0; c < 3; ++c) {
    const int pw = c ? w / 2 : w, ph = c ? h / 2 : h;
    const Plane& p = f.plane[c];
    for (int y = 0; y < p.height; ++y) {
      for (int x = 0; x < p.width; ++x) {
        const int sx = x < pw ? x : pw - 1, sy = y < ph ? y : ph - 1;  // edge replication
        ASSERT_EQ(p.row(y)[x], ref[off + static_cast<size_t>(sy) * pw + sx])
            << "frame " << frame << " plane " << c << " (" << x << ", " << y << ")";
      }
    }
    off += static_cast<size_t>(pw) * ph;
  }
}

std::string open_error(const std::string& path, int w, int h, int header = 0) {
  try {
    open_frame_reader(path, w, h, header);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error opening " << path;
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(YuvIo, RawWithHeaderPaddingAndShortInput) {
  TempDir d("yuvio_raw");
  const int w = 18, h = 10;  // not multiples of 16: coded 32x16
  std::vector<uint8_t> data(7, 0xEE);  // InputHeaderLength = 7
  for (int i = 0; i < 3; ++i) {
    const std::vector<uint8_t> f = make_frame(w, h, i);
    data.insert(data.end(), f.begin(), f.end());
  }
  data.push_back(1);  // a partial trailing frame does not count
  write_bytes(d.file("a.yuv"), data);
  auto r = open_frame_reader(d.file("a.yuv"), w, h, 7);
  EXPECT_EQ(r->format(), InputFormat::Raw);
  EXPECT_EQ(r->count_frames(), 3);
  Frame f;
  ASSERT_TRUE(r->read_frame(0, f));
  expect_frame(f, w, h, 0);
  ASSERT_TRUE(r->read_frame(2, f));  // FrameSkip-style jump
  expect_frame(f, w, h, 2);
  EXPECT_FALSE(r->read_frame(3, f));  // past the end: false, not an exception
}

TEST(YuvIo, Y4mSizeRateFromHeaderAndFrameParameters) {
  TempDir d("yuvio_y4m");
  const int w = 34, h = 18;
  std::string s = "YUV4MPEG2 W34 H18 F25:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n";
  std::vector<uint8_t> data(s.begin(), s.end());
  for (int i = 0; i < 3; ++i) {
    const std::string fh = i == 1 ? "FRAME Ixyz\n" : "FRAME\n";
    data.insert(data.end(), fh.begin(), fh.end());
    const std::vector<uint8_t> f = make_frame(w, h, i);
    data.insert(data.end(), f.begin(), f.end());
  }
  write_bytes(d.file("a.y4m"), data);
  auto r = open_frame_reader(d.file("a.y4m"), 176, 144, 0);  // the configured size is replaced by the header's
  EXPECT_EQ(r->format(), InputFormat::Y4m);
  EXPECT_EQ(r->width(), w);
  EXPECT_EQ(r->height(), h);
  EXPECT_DOUBLE_EQ(r->frame_rate(), 25.0);
  EXPECT_EQ(r->count_frames(), 3);
  Frame f;
  ASSERT_TRUE(r->read_frame(1, f));
  expect_frame(f, w, h, 1);
  ASSERT_TRUE(r->read_frame(2, f));
  expect_frame(f, w, h, 2);
  EXPECT_FALSE(r->read_frame(3, f));
}

TEST(YuvIo, Y4mOtherChromaFormatsAndBadHeadersAreClearErrors) {
  TempDir d("yuvio_y4m_bad");
  auto y4m = [&](const std::string& name, const std::string& header) {
    write_bytes(d.file(name), std::vector<uint8_t>(header.begin(), header.end()));
    return d.file(name);
  };
  std::string m = open_error(y4m("a.y4m", "YUV4MPEG2 W16 H16 F30:1 C444\n"), 0, 0);
  EXPECT_TRUE(contains(m, "C444")) << m;
  EXPECT_TRUE(contains(m, "4:2:0")) << m;
  m = open_error(y4m("b.y4m", "YUV4MPEG2 W16 H16 C420p10\n"), 0, 0);
  EXPECT_TRUE(contains(m, "C420p10")) << m;
  m = open_error(y4m("c.y4m", "YUV4MPEG2 W16 H16 Cmono\n"), 0, 0);
  EXPECT_TRUE(contains(m, "Cmono")) << m;
  m = open_error(y4m("d.y4m", "P6\n16 16\n255\n"), 0, 0);
  EXPECT_TRUE(contains(m, "YUV4MPEG2")) << m;
  m = open_error(y4m("e.y4m", "YUV4MPEG2 W17 H16 C420\n"), 0, 0);
  EXPECT_TRUE(contains(m, "17x16")) << m;
  // A frame that does not start with FRAME.
  const std::string hdr = "YUV4MPEG2 W16 H16 C420\nFRAMX\n";
  auto r = open_frame_reader(y4m("f.y4m", hdr), 0, 0, 0);
  Frame f;
  try {
    r->read_frame(0, f);
    ADD_FAILURE() << "corrupt frame header accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "FRAME")) << e.what();
  }
}

TEST(YuvIo, GzipRawWithHeaderAndShortInput) {
  TempDir d("yuvio_gz");
  const int w = 20, h = 6;
  std::vector<uint8_t> data(5, 0x11);
  for (int i = 0; i < 3; ++i) {
    const std::vector<uint8_t> f = make_frame(w, h, i);
    data.insert(data.end(), f.begin(), f.end());
  }
  gzFile gz = gzopen(d.file("a.yuv.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
  gzclose(gz);
  auto r = open_frame_reader(d.file("a.yuv.gz"), w, h, 5);
  EXPECT_EQ(r->format(), InputFormat::Gzip);
  EXPECT_EQ(r->count_frames(), -1);  // unknown before the end is reached
  Frame f;
  ASSERT_TRUE(r->read_frame(0, f));
  expect_frame(f, w, h, 0);
  ASSERT_TRUE(r->read_frame(2, f));
  expect_frame(f, w, h, 2);
  EXPECT_FALSE(r->read_frame(4, f));
  EXPECT_EQ(r->count_frames(), 3);  // known now
}

TEST(YuvIo, MissingFileAndBadSizesAreClearErrors) {
  std::string m = open_error("/nonexistent/clip.yuv", 176, 144);
  EXPECT_TRUE(contains(m, "/nonexistent/clip.yuv")) << m;
  EXPECT_TRUE(contains(m, "InputFile")) << m;
  m = open_error("/nonexistent/clip.yuv.gz", 176, 144);
  EXPECT_TRUE(contains(m, "/nonexistent/clip.yuv.gz")) << m;
  m = open_error("/nonexistent/clip.y4m", 176, 144);
  EXPECT_TRUE(contains(m, "/nonexistent/clip.y4m")) << m;
  TempDir d("yuvio_size");
  write_bytes(d.file("a.yuv"), std::vector<uint8_t>(1000, 0));
  m = open_error(d.file("a.yuv"), 15, 16);
  EXPECT_TRUE(contains(m, "15x16")) << m;
  m = open_error(d.path(), 16, 16);
  EXPECT_TRUE(contains(m, "directory")) << m;
}

TEST(YuvIo, CroppedWriterInvertsThePadding) {
  const int w = 18, h = 10;
  const std::vector<uint8_t> src = make_frame(w, h, 5);
  TempDir d("yuvio_crop");
  write_bytes(d.file("a.yuv"), src);
  auto r = open_frame_reader(d.file("a.yuv"), w, h, 0);
  Frame f;
  ASSERT_TRUE(r->read_frame(0, f));
  std::vector<uint8_t> out;
  append_cropped_yuv(f, out);
  EXPECT_EQ(out, src);
  {
    OutputFile o(d.file("rec.yuv"), "ReconFile");
    write_cropped_yuv(f, o);
    write_cropped_yuv(f, o);
    o.commit();
  }
  std::vector<uint8_t> back;
  ASSERT_TRUE(conf::read_file(d.file("rec.yuv"), &back));
  ASSERT_EQ(back.size(), 2 * src.size());
  EXPECT_TRUE(std::equal(src.begin(), src.end(), back.begin() + static_cast<std::ptrdiff_t>(src.size())));
}

TEST(OutputFileTest, CommitRenamesAndAbandonRemoves) {
  TempDir d("outfile");
  std::string temp;
  {
    OutputFile o(d.file("a.264"), "OutputFile");
    temp = o.temp_path();
    EXPECT_TRUE(conf::file_exists(temp));
    EXPECT_FALSE(conf::file_exists(d.file("a.264")));  // invisible under its name until complete
    o.write("abc");
    o.commit();
  }
  std::vector<uint8_t> got;
  ASSERT_TRUE(conf::read_file(d.file("a.264"), &got));
  EXPECT_EQ(std::string(got.begin(), got.end()), "abc");
  EXPECT_FALSE(conf::file_exists(temp));
  {
    OutputFile o(d.file("b.264"), "OutputFile");
    temp = o.temp_path();
    o.write("partial");
  }  // no commit: as on an error
  EXPECT_FALSE(conf::file_exists(d.file("b.264")));
  EXPECT_FALSE(conf::file_exists(temp));
  // An existing file is only replaced on commit.
  {
    OutputFile o(d.file("a.264"), "OutputFile");
    o.write("new");
  }
  ASSERT_TRUE(conf::read_file(d.file("a.264"), &got));
  EXPECT_EQ(std::string(got.begin(), got.end()), "abc");
}

TEST(OutputFileTest, SignalRemovesTemporaryFiles) {
  TempDir d("outfile_sig");
  const std::string name = d.file("a.264");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Child: a half-written output, then SIGTERM as from `kill` or Ctrl-C.
    remove_temp_files_on_signal();
    OutputFile o(name, "OutputFile");
    o.write("half");
    std::fflush(nullptr);
    raise(SIGTERM);
    _exit(0);  // not reached
  }
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << "status " << st;
  EXPECT_FALSE(conf::file_exists(name));
  EXPECT_FALSE(conf::file_exists(name + ".tmp-" + std::to_string(child)));
}

TEST(OutputFileTest, UnwritablePathFailsAtConstruction) {
  try {
    OutputFile o("/nonexistent/dir/x.264", "OutputFile");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "/nonexistent/dir/x.264")) << e.what();
    EXPECT_TRUE(contains(e.what(), "OutputFile")) << e.what();
  }
  TempDir d("outfile_dir");
  try {
    OutputFile o(d.path(), "ReconFile");
    ADD_FAILURE() << "no error for a directory";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "directory")) << e.what();
  }
}

TEST(ReportPsnr, Jm19FormulaAndZeroSse) {
  // JM 19.0 (ZEROSNR): 10 log10(255^2 N / max(SSE, 1)).
  EXPECT_NEAR(psnr_from_sse(0, 640 * 480), 10 * std::log10(255.0 * 255.0 * 640 * 480), 1e-9);
  EXPECT_NEAR(psnr_from_sse(0.5, 100), psnr_from_sse(1, 100), 1e-12);
  EXPECT_NEAR(psnr_from_sse(100 * 65025.0, 100), 0.0, 1e-9);  // MSE 255^2 -> 0 dB
  EXPECT_NEAR(psnr_from_sse(1000, 100), 10 * std::log10(65025.0 / 10.0), 1e-9);
  EXPECT_DOUBLE_EQ(psnr_yuv(40, 34, 46), (160.0 + 34 + 46) / 6);
}

TEST(ReportPsnr, SseCountsTheVisibleAreaOnly) {
  Frame a, b;
  alloc_frame_for(a, 18, 10);
  alloc_frame_for(b, 18, 10);
  for (int c = 0; c < 3; ++c) {
    std::fill(a.plane[c].storage.begin(), a.plane[c].storage.end(), 100);
    std::fill(b.plane[c].storage.begin(), b.plane[c].storage.end(), 100);
  }
  b.plane[0].row(9)[17] = 103;   // visible: counts 9
  b.plane[0].row(12)[20] = 0;    // padding: ignored
  b.plane[1].row(0)[0] = 98;     // visible chroma: counts 4
  b.plane[2].row(4)[8] = 200;    // visible (chroma 9x5): counts 10000
  b.plane[2].row(5)[0] = 0;      // chroma padding row: ignored
  uint64_t sse[3];
  frame_sse(plane_ssd_c, a, b, sse);
  EXPECT_EQ(sse[0], 9u);
  EXPECT_EQ(sse[1], 4u);
  EXPECT_EQ(sse[2], 10000u);
}

TEST(ReportJson, PictureLinesSummaryAndJmBitRate) {
  TempDir d("report");
  EncoderParams p;
  p.source_width = 32;
  p.source_height = 16;
  p.frame_rate = 30;
  p.frame_skip = 1;  // coded rate 15 Hz
  p.frames_to_encode = 2;
  Frame src, rec;
  alloc_frame_for(src, 32, 16);
  alloc_frame_for(rec, 32, 16);
  rec.plane[0].row(0)[0] = 2;  // luma SSE 4, chroma 0
  std::ostringstream con;
  {
    OutputFile stats(d.file("s.jsonl"), "StatsFile");
    Report rep(p, con, &stats, dsp_plain());
    rep.print_header("cpu test path");
    PictureResult r;
    r.type = SliceType::I;
    r.idr = true;
    r.qp = 28;
    r.bits = 1000;
    r.times.integer_me = 0.25;
    r.times.subpel_me = 0.5;
    MbInfo mbs[2];
    mbs[0].type = MbType::I16x16;
    mbs[1].type = MbType::P16x16;
    mbs[1].mv[0] = MV(28, -12);
    rep.add_picture(0, r, src, rec, 1.0, mbs, 2);
    r.type = SliceType::P;
    r.idr = false;
    r.bits = 500;
    rep.add_picture(2, r, src, src, 1.0);
    EXPECT_EQ(rep.total_bits(), 1500);
    EXPECT_NEAR(rep.kbps(), 1500.0 * 15 / 2 / 1000, 1e-12);  // JM: bits * (FrameRate / (FrameSkip + 1)) / frames
    rep.finish(3.0, "cpu test path");
    stats.commit();
  }
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(conf::read_file(d.file("s.jsonl"), &bytes));
  std::istringstream lines(std::string(bytes.begin(), bytes.end()));
  std::string l0, l1, l2, extra;
  ASSERT_TRUE(std::getline(lines, l0));
  ASSERT_TRUE(std::getline(lines, l1));
  ASSERT_TRUE(std::getline(lines, l2));
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_TRUE(contains(l0, "\"frame\":0,")) << l0;
  EXPECT_TRUE(contains(l0, "\"type\":\"I\",\"idr\":true")) << l0;
  EXPECT_TRUE(contains(l0, "\"bits\":1000,")) << l0;
  EXPECT_TRUE(contains(l0, "\"sse_y\":4,")) << l0;
  EXPECT_TRUE(contains(l0, "\"time_me_s\":0.750000")) << l0;
  EXPECT_TRUE(contains(l0, "\"mb_mv\":[null,[28,-12]]")) << l0;
  const double py = psnr_from_sse(4, 32 * 16);
  char want[64];
  std::snprintf(want, sizeof want, "\"psnr_y\":%.4f", py);
  EXPECT_TRUE(contains(l0, want)) << l0;
  EXPECT_TRUE(contains(l1, "\"frame\":2,")) << l1;
  EXPECT_FALSE(contains(l1, "mb_mv")) << l1;
  EXPECT_TRUE(contains(l2, "{\"summary\":{\"frames\":2,\"total_bits\":1500,\"bits_i\":1000,\"bits_p\":500,")) << l2;
  EXPECT_TRUE(contains(l2, "\"kbps\":11.2500")) << l2;
  EXPECT_TRUE(contains(l2, "\"integer_me_path\":\"cpu test path\"")) << l2;
  EXPECT_TRUE(contains(l2, "\"time_s\":3.000000")) << l2;
  // The console follows JM's line layout.
  EXPECT_TRUE(contains(con.str(), "00000(IDR)    1000   28")) << con.str();
  EXPECT_TRUE(contains(con.str(), "00002( P )     500   28")) << con.str();
  EXPECT_TRUE(contains(con.str(), " Bit rate (kbit/s)  @ 15.00 Hz     : 11.25")) << con.str();
}

TEST(ReportJson, StringsAreEscaped) {
  EXPECT_EQ(json_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(json_string(std::string("\x01", 1)), "\"\\u0001\"");
}

}  // namespace
}  // namespace gme
