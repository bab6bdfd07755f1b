// Frame readers (raw / y4m / gzip), padding to the coded size, short inputs, the cropped writer, OutputFile's
// temporary-name protocol, and the PSNR helpers of lencod/report.h.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <thread>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/output_file.h"
#include "common/text_fields.h"
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

std::string file_text(const std::string& path) {
  std::vector<uint8_t> got;
  if (!conf::read_file(path, &got)) return "<missing>";
  return std::string(got.begin(), got.end());
}

class OutputFileTemp : public ::testing::TestWithParam<OutputFile::Temp> {};

TEST_P(OutputFileTemp, CommitRenamesAndAbandonRemoves) {
  TempDir d("outfile");
  {
    OutputFile o(d.file("a.264"), "OutputFile", GetParam());
    // Invisible under its name until complete; without O_TMPFILE under "<name>.tmp-<pid>", with it under no name.
    EXPECT_EQ(conf::list_dir(d.path()),
              o.unnamed() ? std::set<std::string>{} : std::set<std::string>{"a.264.tmp-" + std::to_string(getpid())});
    if (GetParam() == OutputFile::Temp::kNamed) {
      EXPECT_FALSE(o.unnamed());
    }
    o.write("abc");
    o.commit();
  }
  EXPECT_EQ(file_text(d.file("a.264")), "abc");
  EXPECT_EQ(conf::list_dir(d.path()), std::set<std::string>{"a.264"});
  {
    OutputFile o(d.file("b.264"), "OutputFile", GetParam());
    o.write("partial");
  }  // no commit: as on an error
  EXPECT_EQ(conf::list_dir(d.path()), std::set<std::string>{"a.264"});
  // An existing file is only replaced on commit, and keeps its permissions.
  ASSERT_EQ(chmod(d.file("a.264").c_str(), 0640), 0);
  {
    OutputFile o(d.file("a.264"), "OutputFile", GetParam());
    o.write("new");
  }
  EXPECT_EQ(file_text(d.file("a.264")), "abc");
  {
    OutputFile o(d.file("a.264"), "OutputFile", GetParam());
    o.write("new");
    o.commit();
  }
  EXPECT_EQ(file_text(d.file("a.264")), "new");
  struct stat st;
  ASSERT_EQ(stat(d.file("a.264").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(conf::list_dir(d.path()), std::set<std::string>{"a.264"});
}

INSTANTIATE_TEST_SUITE_P(Temp, OutputFileTemp,
                         ::testing::Values(OutputFile::Temp::kAuto, OutputFile::Temp::kNamed),
                         [](const ::testing::TestParamInfo<OutputFile::Temp>& i) {
                           return i.param == OutputFile::Temp::kAuto ? std::string("Auto") : std::string("Named");
                         });

// The run's outputs are renamed together, and only when every one of them was written completely: a failure in
// the last one (here a full disk, /dev/full) leaves every existing file as it was.
TEST(OutputFileTest, CommitOutputsRenamesNothingWhenOneFails) {
  TempDir d("outfile_all");
  write_bytes(d.file("a.264"), {'o', 'l', 'd'});
  {
    OutputFile a(d.file("a.264"), "OutputFile");
    OutputFile full("/dev/full", "StatsFile");
    EXPECT_TRUE(full.direct());
    a.write("new");
    full.write("stats");  // buffered: the flush fails
    try {
      commit_outputs({&a, nullptr, &full});
      ADD_FAILURE() << "commit of /dev/full succeeded";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(contains(e.what(), "StatsFile")) << e.what();
      EXPECT_TRUE(contains(e.what(), "/dev/full")) << e.what();
    }
    EXPECT_FALSE(a.committed());
  }
  EXPECT_EQ(file_text(d.file("a.264")), "old");
  EXPECT_EQ(conf::list_dir(d.path()), std::set<std::string>{"a.264"});
  // And all of them when all succeed; a device (/dev/null) is written in place.
  {
    OutputFile a(d.file("a.264"), "OutputFile");
    OutputFile b(d.file("b.yuv"), "ReconFile");
    OutputFile null("/dev/null", "StatsFile");
    a.write("A");
    b.write("B");
    null.write("nothing");
    commit_outputs({&a, &b, &null});
  }
  EXPECT_EQ(file_text(d.file("a.264")), "A");
  EXPECT_EQ(file_text(d.file("b.yuv")), "B");
  EXPECT_EQ(conf::list_dir(d.path()), (std::set<std::string>{"a.264", "b.yuv"}));
}

TEST(OutputFileTest, SymbolicLinkKeepsPointingAtTheNewFile) {
  TempDir d("outfile_link");
  write_bytes(d.file("real.264"), {'o', 'l', 'd'});
  ASSERT_EQ(symlink("real.264", d.file("link.264").c_str()), 0);
  {
    OutputFile o(d.file("link.264"), "OutputFile");
    o.write("new");
    o.commit();
  }
  struct stat st;
  ASSERT_EQ(lstat(d.file("link.264").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(file_text(d.file("real.264")), "new");
}

TEST(OutputFileTest, SignalRemovesTemporaryFiles) {
  for (OutputFile::Temp temp : {OutputFile::Temp::kNamed, OutputFile::Temp::kAuto}) {
    TempDir d("outfile_sig");
    const std::string name = d.file("a.264");
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Child: half-written outputs, then SIGTERM as from `kill`.
      install_signal_handlers("test");
      OutputFile o(name, "OutputFile", temp);
      OutputFile o2(d.file("b.yuv"), "ReconFile", temp);
      o.write("half");
      o2.write("half");
      std::fflush(nullptr);
      raise(SIGTERM);
      _exit(0);  // not reached
    }
    int st = 0;
    ASSERT_EQ(waitpid(child, &st, 0), child);
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << "status " << st;
    EXPECT_EQ(conf::list_dir(d.path()), std::set<std::string>{});
  }
}

TEST(OutputFileTest, UnwritablePathFailsAtConstruction) {
  try {
    OutputFile o("/nonexistent/dir/x.264", "OutputFile");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "/nonexistent/dir/x.264")) << e.what();
    EXPECT_TRUE(contains(e.what(), "OutputFile")) << e.what();
    EXPECT_TRUE(contains(e.what(), "No such file")) << e.what();
  }
  TempDir d("outfile_dir");
  try {
    OutputFile o(d.path(), "ReconFile");
    ADD_FAILURE() << "no error for a directory";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "directory")) << e.what();
  }
}

// A raw input whose size is not a whole number of frames is an error that names the file, its size,
// the frame size, the nearest sizes that would fit and picture sizes that divide it (a 640x480 file read as CIF).
TEST(YuvIo, RawSizeNotAWholeNumberOfFramesIsAnError) {
  TempDir d("yuvio_rawsize");
  write_bytes(d.file("vga.yuv"), std::vector<uint8_t>(static_cast<size_t>(640 * 480 * 3 / 2) * 4, 7));
  const std::string m = open_error(d.file("vga.yuv"), 352, 288);
  EXPECT_TRUE(contains(m, "vga.yuv")) << m;
  EXPECT_TRUE(contains(m, "1,843,200 bytes")) << m;
  EXPECT_TRUE(contains(m, "352x288 frames (152,064 bytes each)")) << m;
  EXPECT_TRUE(contains(m, "12 frames would be 1,824,768 bytes, 13 frames 1,976,832 bytes")) << m;
  EXPECT_TRUE(contains(m, "640x480 (4 frames)")) << m;
  // One byte too many after whole frames (a FramesToBeEncoded = -1 run would have dropped it silently).
  std::vector<uint8_t> data = make_frame(16, 16, 0);
  data.push_back(0);
  write_bytes(d.file("extra.yuv"), data);
  EXPECT_TRUE(contains(open_error(d.file("extra.yuv"), 16, 16), "not a whole number of 16x16 frames"));
  // InputHeaderLength counts: 10 header bytes + one frame fits.
  data.assign(10, 0);
  const std::vector<uint8_t> f = make_frame(16, 16, 0);
  data.insert(data.end(), f.begin(), f.end());
  write_bytes(d.file("hdr.yuv"), data);
  EXPECT_EQ(open_frame_reader(d.file("hdr.yuv"), 16, 16, 10)->count_frames(), 1);
  EXPECT_TRUE(contains(open_error(d.file("hdr.yuv"), 16, 16, 4), "InputHeaderLength = 4"));
}

std::string y4m_file(const TempDir& d, const std::string& name, const std::string& text) {
  write_bytes(d.file(name), std::vector<uint8_t>(text.begin(), text.end()));
  return d.file(name);
}

// A y4m header's size has the same limits as SourceWidth/SourceHeight, with strict numbers; interlaced
// y4m is refused; CRLF line ends are accepted.
TEST(YuvIo, Y4mHeaderNumbersAreStrictAndLimited) {
  TempDir d("yuvio_y4m_strict");
  const struct {
    const char* header;
    const char* expect;
  } bad[] = {
      {"YUV4MPEG2 W100000 H100000 C420\n", "100000x100000"},
      {"YUV4MPEG2 W100000 H16 C420\n", "[2, 16384]"},
      {"YUV4MPEG2 W16386 H16 C420\n", "16386x16"},
      {"YUV4MPEG2 W0 H16 C420\n", "0x16"},
      {"YUV4MPEG2 W-16 H16 C420\n", "'W-16'"},
      {"YUV4MPEG2 W16x H16 C420\n", "'W16x'"},
      {"YUV4MPEG2 W+16 H16 C420\n", "'W+16'"},
      {"YUV4MPEG2 W99999999999999999999 H16\n", "'W99999999999999999999'"},
      {"YUV4MPEG2 H16 C420\n", "no W tag"},
      {"YUV4MPEG2 W16 F30:1\n", "no H tag"},
      {"YUV4MPEG2 W16 H16 Fabc\n", "'Fabc'"},
      {"YUV4MPEG2 W16 H16 F30:0\n", "'F30:0'"},
      {"YUV4MPEG2 W16 H16 It\n", "interlaced"},
      {"YUV4MPEG2 W16 H16 Ib\n", "interlaced"},
      {"YUV4MPEG2 W16 H16 Im\n", "interlaced"},
      {"YUV4MPEG2 W16 H16 Ix\n", "'Ix'"},
  };
  int i = 0;
  for (const auto& b : bad) {
    const std::string m = open_error(y4m_file(d, "b" + std::to_string(i++) + ".y4m", b.header), 0, 0);
    EXPECT_TRUE(contains(m, b.expect)) << b.header << " -> " << m;
  }
  // Progressive or unknown interlacing, CRLF line ends, F0:0 (rate unknown): accepted.
  std::string s = "YUV4MPEG2 W16 H16 F0:0 I?\r\nFRAME\r\n";
  const std::vector<uint8_t> f = make_frame(16, 16, 3);
  s.append(f.begin(), f.end());
  auto r = open_frame_reader(y4m_file(d, "crlf.y4m", s), 0, 0, 0);
  EXPECT_EQ(r->width(), 16);
  EXPECT_EQ(r->frame_rate(), 0.0);
  EXPECT_EQ(r->count_frames(), 1);
  Frame frame;
  ASSERT_TRUE(r->read_frame(0, frame));
  expect_frame(frame, 16, 16, 3);
}

TEST(YuvIo, Y4mCutInsideAFrameIsAnError) {
  TempDir d("yuvio_y4m_cut");
  std::string s = "YUV4MPEG2 W16 H16 C420\nFRAME\n";
  const std::vector<uint8_t> f = make_frame(16, 16, 0);
  s.append(f.begin(), f.end());
  const std::string whole = s;
  s += "FRAME\n";
  s.append(f.begin(), f.begin() + 100);
  auto r = open_frame_reader(y4m_file(d, "cut.y4m", s), 0, 0, 0);
  try {
    r->count_frames();
    ADD_FAILURE() << "a cut last frame was counted";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "ends inside frame 1: 100 of its 384 bytes")) << e.what();
  }
  r = open_frame_reader(y4m_file(d, "cut2.y4m", whole + "FRA"), 0, 0, 0);
  try {
    r->count_frames();
    ADD_FAILURE() << "a cut frame header was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "inside the header of frame 1")) << e.what();
  }
}

size_t open_descriptors() { return conf::list_dir("/proc/self/fd").size(); }

// A rejected y4m header must not leak the file handle (a long-running process would run out of them).
TEST(YuvIo, RejectedInputsCloseTheirFiles) {
  TempDir d("yuvio_leak");
  const std::string bad = y4m_file(d, "bad.y4m", "YUV4MPEG2 W16 H16 C444\n");
  write_bytes(d.file("bad.yuv"), std::vector<uint8_t>(1001, 0));
  const size_t before = open_descriptors();
  for (int i = 0; i < 50; ++i) {
    open_error(bad, 0, 0);
    open_error(d.file("bad.yuv"), 16, 16);
  }
  EXPECT_EQ(open_descriptors(), before);
}

// A file named .yuv that holds YUV4MPEG2 is read as such (its first bytes decide), and a .y4m name that holds
// something else is an error rather than raw samples.
TEST(YuvIo, ContentDecidesBetweenRawAndY4m) {
  TempDir d("yuvio_sniff");
  std::string s = "YUV4MPEG2 W16 H16 F25:1\nFRAME\n";
  const std::vector<uint8_t> f = make_frame(16, 16, 1);
  s.append(f.begin(), f.end());
  auto r = open_frame_reader(y4m_file(d, "misnamed.yuv", s), 176, 144, 0);
  EXPECT_EQ(r->format(), InputFormat::Y4m);
  EXPECT_EQ(r->count_frames(), 1);
  write_bytes(d.file("raw.y4m"), make_frame(16, 16, 0));
  EXPECT_TRUE(contains(open_error(d.file("raw.y4m"), 16, 16), "not a YUV4MPEG2 file"));
  // Suffixes in capitals mean the same: a raw .Y4M is refused, a .YUV.GZ is read as gzip, a .Y4M recon is y4m.
  write_bytes(d.file("RAW.Y4M"), make_frame(16, 16, 0));
  EXPECT_TRUE(contains(open_error(d.file("RAW.Y4M"), 16, 16), "not a YUV4MPEG2 file"));
  gzFile gz = gzopen(d.file("CLIP.YUV.GZ").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzwrite(gz, f.data(), static_cast<unsigned>(f.size()));
  gzclose(gz);
  EXPECT_EQ(open_frame_reader(d.file("CLIP.YUV.GZ"), 16, 16, 0)->format(), InputFormat::Gzip);
  EXPECT_TRUE(is_y4m_name("rec.Y4M"));
  EXPECT_FALSE(is_y4m_name("rec.yuv"));
}

// Pipes (and the standard input) cannot seek: frames are read front to back, the count is known at the end, and
// a cut last frame is an error there too.
TEST(YuvIo, PipeInputRawAndY4m) {
  TempDir d("yuvio_pipe");
  auto feed = [&](const std::string& fifo, std::string bytes) {
    EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    return std::thread([fifo, bytes] {
      std::FILE* w = std::fopen(fifo.c_str(), "wb");
      if (!w) return;
      std::fwrite(bytes.data(), 1, bytes.size(), w);
      std::fclose(w);
    });
  };
  std::string y4m = "YUV4MPEG2 W18 H10 F30000:1001\n", raw;
  for (int i = 0; i < 3; ++i) {
    const std::vector<uint8_t> f = make_frame(18, 10, i);
    y4m += "FRAME\n";
    y4m.append(f.begin(), f.end());
    raw.append(f.begin(), f.end());
  }
  {
    std::thread t = feed(d.file("y4m.fifo"), y4m);
    auto r = open_frame_reader(d.file("y4m.fifo"), 0, 0, 0);
    EXPECT_EQ(r->format(), InputFormat::Y4m);
    EXPECT_NEAR(r->frame_rate(), 30000.0 / 1001, 1e-9);
    EXPECT_EQ(r->count_frames(), -1);
    Frame f;
    ASSERT_TRUE(r->read_frame(0, f));
    expect_frame(f, 18, 10, 0);
    ASSERT_TRUE(r->read_frame(2, f));  // skips frame 1 by reading it
    expect_frame(f, 18, 10, 2);
    EXPECT_FALSE(r->read_frame(3, f));
    t.join();
  }
  {
    std::thread t = feed(d.file("raw.fifo"), raw + "xyz");
    auto r = open_frame_reader(d.file("raw.fifo"), 18, 10, 0);
    EXPECT_EQ(r->format(), InputFormat::Raw);
    EXPECT_EQ(r->count_frames(), -1);
    Frame f;
    ASSERT_TRUE(r->read_frame(1, f));
    expect_frame(f, 18, 10, 1);
    ASSERT_TRUE(r->read_frame(2, f));
    try {
      r->read_frame(3, f);
      ADD_FAILURE() << "a cut last frame was dropped silently";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(contains(e.what(), "ends inside frame 3: 3 of its 270 bytes")) << e.what();
    }
    t.join();
  }
}

// Appends one gzip member holding `data` to `path` (a file of several members is a valid gzip file).
void append_gzip_member(const std::string& path, const std::vector<uint8_t>& data) {
  gzFile gz = gzopen(path.c_str(), "ab");
  ASSERT_NE(gz, nullptr);
  if (!data.empty()) {
    ASSERT_EQ(gzwrite(gz, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
  }
  gzclose(gz);
}

std::vector<uint8_t> frames_16x16(int n, size_t extra) {
  std::vector<uint8_t> data;
  for (int i = 0; i < n; ++i) {
    const std::vector<uint8_t> f = make_frame(16, 16, i);
    data.insert(data.end(), f.begin(), f.end());
  }
  data.resize(data.size() + extra, 0);
  return data;
}

// A gzip input is read front to back, yet its frame size is checked when it is opened, before any frame is coded:
// an encode of its first frames never reaches its end, where a cut frame would show.
TEST(YuvIo, GzipCutInsideAFrameIsAnErrorAtOpen) {
  TempDir d("yuvio_gzcut");
  append_gzip_member(d.file("a.yuv.gz"), frames_16x16(1, 10));
  const std::string m = open_error(d.file("a.yuv.gz"), 16, 16);
  EXPECT_TRUE(contains(m, "a.yuv.gz' (394 bytes uncompressed) is not a whole number of 16x16 frames")) << m;
  // A 640x480 clip read as 352x288: the error, not 12 pictures of noise.
  append_gzip_member(d.file("vga.yuv.gz"), std::vector<uint8_t>(static_cast<size_t>(640 * 480 * 3 / 2) * 4, 7));
  EXPECT_TRUE(contains(open_error(d.file("vga.yuv.gz"), 352, 288), "640x480 (4 frames)"));
  EXPECT_TRUE(contains(open_error(d.file("vga.yuv.gz"), 640, 480, 6), "InputHeaderLength = 6"));
}

// The trailer of a gzip file holds the length of its last member only: the check counts the whole file where the
// trailer does not fit, so a file of several members is judged by its total, both ways.
TEST(YuvIo, GzipOfSeveralMembersIsJudgedByItsTotal) {
  TempDir d("yuvio_gzmembers");
  append_gzip_member(d.file("good.yuv.gz"), frames_16x16(1, 100));  // 484 bytes, then
  append_gzip_member(d.file("good.yuv.gz"), std::vector<uint8_t>(384 - 100, 1));  // 284: 2 frames in all
  auto r = open_frame_reader(d.file("good.yuv.gz"), 16, 16, 0);
  EXPECT_EQ(r->count_frames(), 2);
  Frame f;
  ASSERT_TRUE(r->read_frame(0, f));
  expect_frame(f, 16, 16, 0);
  ASSERT_TRUE(r->read_frame(1, f));
  EXPECT_FALSE(r->read_frame(2, f));
  append_gzip_member(d.file("bad.yuv.gz"), frames_16x16(2, 0));
  append_gzip_member(d.file("bad.yuv.gz"), std::vector<uint8_t>(100, 1));
  EXPECT_TRUE(contains(open_error(d.file("bad.yuv.gz"), 16, 16), "(868 bytes uncompressed) is not a whole number"));
}

// A .gz name whose content is not gzip (zlib reads it as it is) has its own size checked; a gzip file cut short is
// a read error naming the file, not a frame-size problem.
TEST(YuvIo, GzipNameWithPlainContentAndCutGzipFile) {
  TempDir d("yuvio_gzplain");
  write_bytes(d.file("plain.yuv.gz"), frames_16x16(2, 3));
  EXPECT_TRUE(contains(open_error(d.file("plain.yuv.gz"), 16, 16), "not a whole number of 16x16 frames"));
  append_gzip_member(d.file("whole.yuv.gz"), frames_16x16(40, 0));
  std::ifstream in(d.file("whole.yuv.gz"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes.resize(bytes.size() / 2);
  write_bytes(d.file("cut.yuv.gz"), bytes);
  const std::string m = open_error(d.file("cut.yuv.gz"), 16, 16);
  EXPECT_TRUE(contains(m, "is cut short")) << m;
  EXPECT_TRUE(contains(m, "cut.yuv.gz")) << m;
}

// ReconFile = *.y4m: a YUV4MPEG2 file the reader (and FFmpeg, tests/test_cli_errors.cpp) reads back.
TEST(YuvIo, Y4mWriterRoundTrip) {
  TempDir d("yuvio_y4mw");
  const int w = 18, h = 10;
  write_bytes(d.file("a.yuv"), [&] {
    std::vector<uint8_t> v;
    for (int i = 0; i < 2; ++i) {
      const std::vector<uint8_t> f = make_frame(w, h, i);
      v.insert(v.end(), f.begin(), f.end());
    }
    return v;
  }());
  auto r = open_frame_reader(d.file("a.yuv"), w, h, 0);
  {
    OutputFile o(d.file("rec.y4m"), "ReconFile");
    write_y4m_header(o, w, h, 30000.0 / 1001);
    Frame f;
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(r->read_frame(i, f));
      write_y4m_frame(f, o);
    }
    o.commit();
  }
  EXPECT_EQ(file_text(d.file("rec.y4m")).substr(0, 45), "YUV4MPEG2 W18 H10 F30000:1001 Ip A1:1 C420jpe");
  auto back = open_frame_reader(d.file("rec.y4m"), 0, 0, 0);
  EXPECT_NEAR(back->frame_rate(), 30000.0 / 1001, 1e-9);
  EXPECT_EQ(back->count_frames(), 2);
  Frame f;
  ASSERT_TRUE(back->read_frame(1, f));
  expect_frame(f, w, h, 1);
  EXPECT_TRUE(is_y4m_name("x/rec.y4m"));
  EXPECT_FALSE(is_y4m_name("rec.yuv"));
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
