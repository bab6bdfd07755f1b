// Golden streams: the encoder's output over a matrix of configurations, pinned by SHA-256 in tests/golden/streams.tsv.
// Every refactoring, speed-up and port must leave the table unchanged: the unmodified run, the GPU run on its CPU
// twin here and on CUDA on a GPU machine (GME_REQUIRE_GPU=1 makes a twin fallback a failure there), at every thread
// count. Each row is also a conformance case (FFmpeg decodes it to the ReconFile). tools/regen_golden.sh rewrites
// the hashes; a commit that changes them says why. StreamsPlainC runs every row again with NoSIMD = 1 (the whole
// encoder in plain C++, common/dsp.h): the same hashes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "tests/conformance_util.h"

namespace gme::conf {
namespace {

constexpr const char* kTable = "tests/golden/streams.tsv";

struct GoldenRow {
  std::string name, clip;
  int frames = 0;
  std::vector<std::string> params;
  std::string stream_sha256, recon_sha256;
  int line = 0;
};

std::ostream& operator<<(std::ostream& os, const GoldenRow& r) { return os << kTable << ":" << r.line << " " << r.name; }

// The rows of the table (conf::read_hash_table: a missing or malformed table fails, never passes with fewer rows).
std::vector<GoldenRow> load_table() {
  std::vector<GoldenRow> rows;
  for (const conf::HashTableRow& t : conf::read_hash_table(kTable, 2))
    rows.push_back(GoldenRow{t.name, t.clip, t.frames, t.params, t.hashes[0], t.hashes[1], t.line});
  return rows;
}

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::string(v) == value;
}

// GME_GOLDEN_ACTUAL=FILE: every row appends "name<TAB>stream<TAB>recon" of what it produced (tools/regen_golden.sh).
void record_actual(const GoldenRow& r, const std::string& stream, const std::string& recon) {
  const char* path = std::getenv("GME_GOLDEN_ACTUAL");
  if (!path || !*path) return;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  std::ofstream(path, std::ios::app) << r.name << '\t' << stream << '\t' << recon << '\n';
}

// Encodes row r (plain_c: with NoSIMD = 1) and compares its hashes with the table.
void check_row(const GoldenRow& r, bool plain_c) {
  ASSERT_NE(r.name, "missing_table") << kTable << " cannot be read";
  ASSERT_EQ(r.name.rfind("malformed_line_", 0), std::string::npos) << kTable << ":" << r.line << ": expected 6 tab-separated columns";
  ASSERT_GT(r.frames, 0) << r;
  const Clip clip = clip_from_spec(r.clip, r.frames);
  ASSERT_FALSE(clip.file.empty()) << r << ": no clip for " << r.clip;
  EncodeOutput out;
  std::vector<std::string> params = r.params;
  if (plain_c) params.push_back("NoSIMD=1");
  // GME_GOLDEN_NO_DECODE=1 (the GPU machine, which has no FFmpeg): the stream is only held to the table's hash, which
  // is that of a stream FFmpeg decoded to the table's reconstruction where the table was made.
  ASSERT_TRUE(encode_and_verify(clip, r.frames, params, &out, false, !env_is("GME_GOLDEN_NO_DECODE", "1"))) << r;
  if (plain_c) {
    ASSERT_NE(out.console.find(" SIMD                              : none\n"), std::string::npos)
        << r << ": NoSIMD = 1 did not turn the SIMD routines off\n" << out.console;
  }
  const std::string stream = sha256_hex(out.stream.data(), out.stream.size());
  const std::string recon = sha256_hex(out.recon.data(), out.recon.size());
  if (!plain_c) record_actual(r, stream, recon);
  bool gpu = false;
  for (const std::string& p : r.params) gpu |= p == "GPUIntegerME=1";
  if (gpu && env_is("GME_REQUIRE_GPU", "1")) {
    EXPECT_NE(out.console.find("Integer ME                        : gpu:"), std::string::npos)
        << r << ": GME_REQUIRE_GPU=1 but the encode did not run on the GPU\n" << out.console;
  }
  EXPECT_EQ(stream, r.stream_sha256) << r << ": the stream changed\n  " << out.lencod_cmd;
  EXPECT_EQ(recon, r.recon_sha256) << r << ": the reconstruction changed\n  " << out.lencod_cmd;
}

class Golden : public ::testing::TestWithParam<GoldenRow> {};
TEST_P(Golden, StreamAndReconMatchTheTable) { check_row(GetParam(), false); }
INSTANTIATE_TEST_SUITE_P(Streams, Golden, ::testing::ValuesIn(load_table()),
                         [](const ::testing::TestParamInfo<GoldenRow>& i) { return i.param.name; });

class GoldenPlainC : public ::testing::TestWithParam<GoldenRow> {};
TEST_P(GoldenPlainC, StreamAndReconMatchTheTable) { check_row(GetParam(), true); }
INSTANTIATE_TEST_SUITE_P(StreamsPlainC, GoldenPlainC, ::testing::ValuesIn(load_table()),
                         [](const ::testing::TestParamInfo<GoldenRow>& i) { return i.param.name; });

// Every row again at other thread counts (doc/THREADS.md): the same stream and reconstruction as the table's, hence
// as the single-thread encode that the test above decodes (an equal stream needs no second decode). 3 and 8 threads
// leave rows of the small pictures (9 macroblock rows at 176x144) to workers in changing orders; 8 also exceeds
// the cores of a small machine, so workers are preempted mid-row.
struct ThreadedRow {
  GoldenRow row;
  int threads = 1;
};

void PrintTo(const ThreadedRow& t, std::ostream* os) { *os << t.row << " at " << t.threads << " threads"; }

std::vector<ThreadedRow> threaded_rows() {
  std::vector<ThreadedRow> v;
  for (const GoldenRow& r : load_table())
    for (int t : {2, 3, 8}) v.push_back(ThreadedRow{r, t});
  return v;
}

// The macroblock order lencod must report for row r (encoder/slice.h): AdaptiveRounding = 1 chains the
// macroblocks, so those rows take the in-order loop at every thread count; SliceMode 2 the speculative wavefront.
std::string expected_macroblock_order(const GoldenRow& r) {
  bool adaptive = false, byte_slices = false;  // cfg/encoder_baseline.cfg: AdaptiveRounding = 0, SliceMode = 0
  for (const std::string& p : r.params) {
    if (p.rfind("AdaptiveRounding=", 0) == 0) adaptive = p == "AdaptiveRounding=1";
    if (p.rfind("SliceMode=", 0) == 0) byte_slices = p == "SliceMode=2";
  }
  if (adaptive) return "in order";
  return byte_slices ? "wavefront, speculative slices" : "wavefront";
}

class GoldenThreads : public ::testing::TestWithParam<ThreadedRow> {};

TEST_P(GoldenThreads, SameStreamAndReconAsTheTable) {
  const GoldenRow& r = GetParam().row;
  const int threads = GetParam().threads;
  ASSERT_NE(r.name, "missing_table") << kTable << " cannot be read";
  ASSERT_EQ(r.name.rfind("malformed_line_", 0), std::string::npos) << kTable << ":" << r.line << ": expected 6 tab-separated columns";
  ASSERT_GT(r.frames, 0) << r;
  const Clip clip = clip_from_spec(r.clip, r.frames);
  ASSERT_FALSE(clip.file.empty()) << r << ": no clip for " << r.clip;
  std::vector<std::string> params = r.params;
  params.push_back("Threads=" + std::to_string(threads));
  EncodeOutput out;
  ASSERT_TRUE(encode_and_verify(clip, r.frames, params, &out, true, false)) << r;
  const std::string order = expected_macroblock_order(r);
  EXPECT_NE(out.stats.find("\"threads\":" + std::to_string(threads) + ",\"macroblock_order\":\"" + order + "\""),
            std::string::npos)
      << r << ": the StatsFile summary does not say " << threads << " threads ran (" << order << ")";
  EXPECT_NE(out.console.find(" Threads                           : " + std::to_string(threads) + " "), std::string::npos)
      << r << ": the console does not say " << threads << " threads ran\n" << out.console;
  bool gpu = false;
  for (const std::string& p : r.params) gpu |= p == "GPUIntegerME=1";
  if (gpu && env_is("GME_REQUIRE_GPU", "1")) {
    EXPECT_NE(out.console.find("Integer ME                        : gpu:"), std::string::npos)
        << r << ": GME_REQUIRE_GPU=1 but the encode did not run on the GPU\n" << out.console;
  }
  EXPECT_EQ(sha256_hex(out.stream.data(), out.stream.size()), r.stream_sha256)
      << r << " at " << threads << " threads: the stream differs from the table's\n  " << out.lencod_cmd;
  EXPECT_EQ(sha256_hex(out.recon.data(), out.recon.size()), r.recon_sha256)
      << r << " at " << threads << " threads: the reconstruction differs from the table's\n  " << out.lencod_cmd;
}

INSTANTIATE_TEST_SUITE_P(Streams, GoldenThreads, ::testing::ValuesIn(threaded_rows()),
                         [](const ::testing::TestParamInfo<ThreadedRow>& i) {
                           return i.param.row.name + "_threads" + std::to_string(i.param.threads);
                         });

}  // namespace
}  // namespace gme::conf
