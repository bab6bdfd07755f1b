// bin/lencod as a process: every failure is one line "lencod: error: ..." on stderr, a non-zero exit status, and no
// output, reconstruction, statistics or temporary file left behind (house rule 4). Runs in a fresh directory; the
// program is found in $GME_BIN (default "bin", relative to the repository root the tests run from).
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/conformance_util.h"

namespace gme {
namespace {

using conf::TempDir;
using conf::absolute;
using conf::read_text;
using conf::list_dir;

struct LencodRun {
  int status = -1;
  std::string out, err;
};

// Runs lencod with `args` (already shell-quoted where needed) inside `dir`; stdout and stderr are kept apart
// (files outside `dir`, so that the directory listing shows only what lencod left there).
LencodRun run_lencod(const TempDir& dir, const TempDir& logs, const std::string& args) {
  const std::string lencod = absolute(conf::bin_dir()) + "/lencod";
  const std::string cmd = "cd " + conf::shell_quote(dir.path()) + " && " + conf::shell_quote(lencod) + " " + args +
                          " >" + conf::shell_quote(logs.file("out.txt")) + " 2>" +
                          conf::shell_quote(logs.file("err.txt")) + " </dev/null";
  LencodRun r;
  const int st = std::system(cmd.c_str());
  r.status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  r.out = read_text(logs.file("out.txt"));
  r.err = read_text(logs.file("err.txt"));
  return r;
}

// Packed 4:2:0 frames of a simple pattern.
std::vector<uint8_t> clip_bytes(int w, int h, int frames) {
  std::vector<uint8_t> v;
  for (int f = 0; f < frames; ++f)
    for (int i = 0; i < w * h * 3 / 2; ++i) v.push_back(static_cast<uint8_t>((i * 7 + f * 13) & 0xff));
  return v;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The common assertions of a failed run: status, one error line naming `expect...`, nothing left but `inputs`.
void expect_clean_failure(const LencodRun& r, const TempDir& dir, const std::set<std::string>& inputs,
                          const std::vector<std::string>& expect) {
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_EQ(r.err.rfind("lencod: error: ", 0), 0u) << "stderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be one line: " << r.err;
  for (const std::string& e : expect) EXPECT_TRUE(contains(r.err, e)) << "'" << e << "' missing in: " << r.err;
  EXPECT_EQ(list_dir(dir.path()), inputs) << "files left behind after: " << r.err;
}

const char* kOutputs = " -p OutputFile=o.264 -p ReconFile=r.yuv -p StatsFile=s.jsonl";

class CliErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string lencod = conf::bin_dir() + "/lencod";
    if (access(lencod.c_str(), X_OK) != 0) GTEST_FAIL() << lencod << " not built (run make first)";
  }
  TempDir dir{"cli"};
  TempDir logs{"cli_logs"};
};

TEST_F(CliErrors, MissingInput) {
  const LencodRun r = run_lencod(dir, logs, std::string("-p InputFile=missing.yuv") + kOutputs);
  expect_clean_failure(r, dir, {}, {"missing.yuv", "InputFile"});
}

TEST_F(CliErrors, ShortRawInputIsFoundBeforeEncoding) {
  write_bytes(dir.file("in.yuv"), clip_bytes(176, 144, 3));
  LencodRun r = run_lencod(dir, logs, std::string("-p InputFile=in.yuv -p FramesToBeEncoded=5") + kOutputs);
  expect_clean_failure(r, dir, {"in.yuv"}, {"in.yuv", "shorter than requested", "found 3 frames"});
  EXPECT_FALSE(contains(r.out, "Bit/pic")) << "encoding started: " << r.out;
  // StartFrame and FrameSkip count too: frames 1 and 3 are needed, the file has 0..2.
  r = run_lencod(dir, logs,
                 std::string("-p InputFile=in.yuv -p FramesToBeEncoded=2 -p StartFrame=1 -p FrameSkip=1") + kOutputs);
  expect_clean_failure(r, dir, {"in.yuv"}, {"found 3 frames", "need 4 frames"});
}

TEST_F(CliErrors, UnwritableOutputFailsBeforeEncoding) {
  write_bytes(dir.file("in.yuv"), clip_bytes(176, 144, 2));
  LencodRun r = run_lencod(dir, logs,
                     "-p InputFile=in.yuv -p OutputFile=/nonexistent/dir/o.264 -p ReconFile=r.yuv -p StatsFile=s.jsonl");
  expect_clean_failure(r, dir, {"in.yuv"}, {"/nonexistent/dir/o.264", "OutputFile"});
  EXPECT_FALSE(contains(r.out, "Bit/pic")) << r.out;
  r = run_lencod(dir, logs, "-p InputFile=in.yuv -p OutputFile=o.264 -p ReconFile=/nonexistent/r.yuv");
  expect_clean_failure(r, dir, {"in.yuv"}, {"/nonexistent/r.yuv", "ReconFile"});
  r = run_lencod(dir, logs, "-p InputFile=in.yuv -p OutputFile=o.264 -p StatsFile=/nonexistent/s.jsonl");
  expect_clean_failure(r, dir, {"in.yuv"}, {"/nonexistent/s.jsonl", "StatsFile"});
}

TEST_F(CliErrors, MalformedOrMissingConfigFile) {
  write_bytes(dir.file("in.yuv"), clip_bytes(176, 144, 2));
  {
    std::ofstream f(dir.file("bad.cfg"));
    f << "InputFile = \"in.yuv\"\nQPISlice 30\n";
  }
  LencodRun r = run_lencod(dir, logs, std::string("-f bad.cfg") + kOutputs);
  expect_clean_failure(r, dir, {"in.yuv", "bad.cfg"}, {"bad.cfg:2", "QPISlice 30"});
  r = run_lencod(dir, logs, std::string("-p InputFile=in.yuv -f nope.cfg") + kOutputs);
  expect_clean_failure(r, dir, {"in.yuv", "bad.cfg"}, {"nope.cfg"});
  r = run_lencod(dir, logs, std::string("-d nope_default.cfg") + kOutputs);
  expect_clean_failure(r, dir, {"in.yuv", "bad.cfg"}, {"nope_default.cfg"});
}

TEST_F(CliErrors, BadValuesAndArguments) {
  write_bytes(dir.file("in.yuv"), clip_bytes(176, 144, 2));
  const std::set<std::string> in = {"in.yuv"};
  LencodRun r = run_lencod(dir, logs, std::string("-p InputFile=in.yuv -p QPISlice=52") + kOutputs);
  expect_clean_failure(r, dir, in, {"QPISlice = 52", "[0, 51]"});
  r = run_lencod(dir, logs, std::string("-p InputFile=in.yuv -p SymbolMode=1") + kOutputs);
  expect_clean_failure(r, dir, in, {"SymbolMode", "CABAC"});
  r = run_lencod(dir, logs, std::string("-p InputFile=in.yuv -p SourceWidth=175") + kOutputs);
  expect_clean_failure(r, dir, in, {"SourceWidth = 175", "even"});
  r = run_lencod(dir, logs, std::string("-p InputFile=in.yuv --frames 3") + kOutputs);
  expect_clean_failure(r, dir, in, {"--frames"});
  r = run_lencod(dir, logs, "-p InputFile=in.yuv -p OutputFile=same.out -p ReconFile=same.out");
  expect_clean_failure(r, dir, in, {"OutputFile", "ReconFile", "same.out"});
  r = run_lencod(dir, logs, "-p InputFile=in.yuv -p OutputFile=new.264 -p ReconFile=./new.264");  // one new file
  expect_clean_failure(r, dir, in, {"OutputFile", "ReconFile", "./new.264"});
  r = run_lencod(dir, logs, "-p InputFile=in.yuv -p OutputFile=./in.yuv");  // would overwrite the input
  expect_clean_failure(r, dir, in, {"InputFile", "OutputFile", "./in.yuv"});
  EXPECT_EQ(conf::file_exists(dir.file("in.yuv")), true);
}

// No output may replace a file lencod reads (a configuration file, the input) or share a file with another output,
// JM's log.dat included (a .dat StatsFile appends a row to ./log.dat).
TEST_F(CliErrors, NoOutputNamesAFileLencodReadsOrWrites) {
  write_bytes(dir.file("in.yuv"), clip_bytes(32, 32, 1));
  const std::string cfg = "QPISlice = 30\n";
  {
    std::ofstream f(dir.file("my.cfg"));
    f << cfg;
  }
  const std::set<std::string> in = {"in.yuv", "my.cfg"};
  const std::string base = " -p InputFile=in.yuv -p SourceWidth=32 -p SourceHeight=32";
  LencodRun r = run_lencod(dir, logs, "-f my.cfg" + base + " -p OutputFile=my.cfg");
  expect_clean_failure(r, dir, in, {"OutputFile 'my.cfg' and configuration file (-f) 'my.cfg' name the same file"});
  r = run_lencod(dir, logs, "-d my.cfg" + base + " -p OutputFile=o.264 -p ReconFile=./my.cfg");
  expect_clean_failure(r, dir, in, {"ReconFile './my.cfg' and configuration file (-d) 'my.cfg'"});
  r = run_lencod(dir, logs, "-d my.cfg -f my.cfg" + base + " -p OutputFile=o.264 -p StatsFile=my.cfg");
  expect_clean_failure(r, dir, in, {"StatsFile 'my.cfg' and configuration file (-d) 'my.cfg'"});
  r = run_lencod(dir, logs, "-f my.cfg -p InputFile=my.cfg -p OutputFile=o.264");
  expect_clean_failure(r, dir, in, {"InputFile 'my.cfg' and configuration file (-f) 'my.cfg'"});
  EXPECT_EQ(read_text(dir.file("my.cfg")), cfg);
  // The run log: never the StatsFile itself, nor another output.
  r = run_lencod(dir, logs, base.substr(1) + " -p OutputFile=o.264 -p StatsFile=log.dat");
  expect_clean_failure(r, dir, in, {"StatsFile 'log.dat' and the run log (JM's log.dat"});
  r = run_lencod(dir, logs, base.substr(1) + " -p OutputFile=log.dat -p StatsFile=s.dat");
  expect_clean_failure(r, dir, in, {"OutputFile 'log.dat' and the run log (JM's log.dat"});
  // JSON statistics write no log.dat: a stream of that name is fine.
  r = run_lencod(dir, logs, base.substr(1) + " -p OutputFile=log.dat -p StatsFile=s.jsonl");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"in.yuv", "my.cfg", "log.dat", "s.jsonl"}));
  // ./encoder.cfg, read when no -d is given, is a configuration file too.
  {
    std::ofstream f(dir.file("encoder.cfg"));
    f << "InputFile = in.yuv\nSourceWidth = 32\nSourceHeight = 32\n";
  }
  r = run_lencod(dir, logs, "-p OutputFile=encoder.cfg");
  expect_clean_failure(r, dir, {"in.yuv", "my.cfg", "log.dat", "s.jsonl", "encoder.cfg"},
                       {"OutputFile 'encoder.cfg' and configuration file (encoder.cfg) 'encoder.cfg'"});
}

// A video given as the configuration file: one short line naming the file, not its bytes.
TEST_F(CliErrors, BinaryFileAsConfigurationIsOneShortLine) {
  write_bytes(dir.file("in.yuv"), clip_bytes(176, 144, 2));  // its first byte is 0
  LencodRun r = run_lencod(dir, logs, std::string("-d in.yuv -p InputFile=in.yuv") + kOutputs);
  expect_clean_failure(r, dir, {"in.yuv"}, {"in.yuv:1: not a text configuration file"});
  EXPECT_LT(r.err.size(), 200u) << r.err.size();
  write_bytes(dir.file("junk.bin"), std::vector<uint8_t>(300000, 0x1b));  // no NUL, no newline
  r = run_lencod(dir, logs, std::string("-f junk.bin -p InputFile=in.yuv") + kOutputs);
  expect_clean_failure(r, dir, {"in.yuv", "junk.bin"}, {"junk.bin:1: malformed line '\\x1B", "(300000 bytes)"});
  EXPECT_LT(r.err.size(), 400u) << r.err.size();
}

TEST_F(CliErrors, UnsupportedY4mChroma) {
  const std::string hdr = "YUV4MPEG2 W16 H16 F30:1 C444\nFRAME\n" + std::string(16 * 16 * 3, 'x');
  write_bytes(dir.file("in.y4m"), std::vector<uint8_t>(hdr.begin(), hdr.end()));
  const LencodRun r = run_lencod(dir, logs, std::string("-p InputFile=in.y4m") + kOutputs);
  expect_clean_failure(r, dir, {"in.y4m"}, {"C444", "4:2:0"});
}

// A gzip input's length is only known at its end, so this error comes after two pictures were encoded: the
// outputs written so far must disappear. Needs a working encoder.
TEST_F(CliErrors, ShortGzipInputDiscoveredWhileEncoding) {
  const std::vector<uint8_t> raw = clip_bytes(64, 48, 2);
  gzFile gz = gzopen(dir.file("in.yuv.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzwrite(gz, raw.data(), static_cast<unsigned>(raw.size()));
  gzclose(gz);
  const LencodRun r = run_lencod(dir, logs,
                           std::string("-p InputFile=in.yuv.gz -p SourceWidth=64 -p SourceHeight=48 "
                                       "-p FramesToBeEncoded=4") + kOutputs);
  expect_clean_failure(r, dir, {"in.yuv.gz"}, {"shorter than requested", "found 2 frames"});
}

// The positive counterpart: on success all three outputs exist under their names, complete, no temporary file.
// Needs a working encoder.
TEST_F(CliErrors, SuccessCommitsEveryOutput) {
  write_bytes(dir.file("in.yuv"), clip_bytes(40, 30, 3));
  const LencodRun r = run_lencod(
      dir, logs, std::string("-p InputFile=in.yuv -p SourceWidth=40 -p SourceHeight=30 -p FramesToBeEncoded=2 "
                             "-p FrameSkip=0 -p StartFrame=0") + kOutputs);
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_FALSE(contains(r.err, "error")) << r.err;
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"in.yuv", "o.264", "r.yuv", "s.jsonl"}));
  std::vector<uint8_t> rec;
  ASSERT_TRUE(conf::read_file(dir.file("r.yuv"), &rec));
  EXPECT_EQ(rec.size(), 2u * 40 * 30 * 3 / 2);  // cropped to the visible size
  const std::string stats = read_text(dir.file("s.jsonl"));
  EXPECT_EQ(std::count(stats.begin(), stats.end(), '\n'), 3);
  EXPECT_TRUE(contains(stats, "{\"summary\":{")) << stats;
  EXPECT_TRUE(contains(r.out, "Frame     Bit/pic")) << r.out;
  EXPECT_TRUE(contains(r.out, "Bit rate (kbit/s)")) << r.out;
}

TEST_F(CliErrors, UnknownKeysWarnOnceAndStillEncode) {
  write_bytes(dir.file("in.yuv"), clip_bytes(32, 32, 1));
  const LencodRun r = run_lencod(dir, logs,
                           "-p InputFile=in.yuv -p SourceWidth=32 -p SourceHeight=32 -p FooKey=1 -p BarKey=2 "
                           "-p OutputFile=o.264");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "warning")) << r.err;
  EXPECT_TRUE(contains(r.err, "FooKey")) << r.err;
  EXPECT_TRUE(contains(r.err, "BarKey")) << r.err;
}

}  // namespace
}  // namespace gme
