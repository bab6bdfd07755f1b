// GME_PICTURE_TRACE=1 (common/picture_trace.h): lencod prints each picture's steps in order, and
// tools/picture_timeline.py turns them into the per-step medians doc/PERFORMANCE.md quotes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "conformance_util.h"

namespace gme {
namespace {

using conf::bin_dir;
using conf::run_command;
using conf::shell_quote;

TEST(PictureTrace, StepsComeInOrderForEveryPictureAndTheTimelineReadsThem) {
  const conf::Clip clip = conf::synth_clip(64, 48, 8);
  ASSERT_FALSE(clip.file.empty());
  conf::TempDir dir("picture_trace");
  for (const char* gpu : {"0", "1"}) {
    SCOPED_TRACE(std::string("GPUIntegerME ") + gpu);
    const std::string trace = dir.file(std::string("trace_") + gpu + ".txt");
    const conf::CommandResult r = run_command(
        "GME_PICTURE_TRACE=1 " + shell_quote(bin_dir() + "/lencod") + " -d cfg/encoder_baseline.cfg -p InputFile=" +
        shell_quote(clip.file) + " -p SourceWidth=64 -p SourceHeight=48 -p FramesToBeEncoded=8 -p IntraPeriod=4" +
        " -p Threads=2 -p GPUIntegerME=" + gpu + " -p OutputFile=" + shell_quote(dir.file("x.264")) + " 2>" +
        shell_quote(trace) + " >/dev/null");
    ASSERT_EQ(r.status, 0) << conf::read_text(trace);
    // picture -> rows_start -> slices -> reference, once per picture, for pictures 0..7; P pictures of the GPU run
    // call the search in between.
    std::istringstream in(conf::read_text(trace));
    std::map<long, std::vector<std::string>> steps;
    double last_ms = -1;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("trace ", 0) != 0) continue;  // lencod's own lines (the twin's warning without a GPU)
      std::istringstream f(line.substr(6));
      double ms = -1;
      std::string step;
      long n = -1;
      ASSERT_TRUE(static_cast<bool>(f >> ms >> step >> n)) << line;
      EXPECT_GE(ms, last_ms) << "times only grow";
      last_ms = ms;
      if (step != "rows_wait" && step != "rows_landed" && step != "gate_wait" && step != "gate_landed" &&
          step != "row_park")  // waits, numbered by row or macroblock
        steps[n].push_back(step);
    }
    // The next picture's search queued ahead (when the queue held that picture already): just before the rows, or
    // during them where the picture started beside the one before (queued once that one is done).
    for (auto& [n, s] : steps) {
      const auto ahead = std::find(s.begin(), s.end(), "search_ahead");
      if (ahead == s.end()) continue;
      EXPECT_TRUE(ahead + 1 != s.end() && (ahead[1] == "rows_start" || (ahead != s.begin() && ahead[-1] == "rows_start")))
          << "picture " << n;
      s.erase(ahead);
    }
    ASSERT_EQ(steps.size(), 8u);
    for (const auto& [n, s] : steps) {
      SCOPED_TRACE("picture " + std::to_string(n));
      const bool searched = gpu[0] == '1' && n % 4 != 0;
      const std::vector<std::string> want =
          searched ? std::vector<std::string>{"picture", "search_call", "search_returned", "rows_start", "slices", "reference"}
                   : std::vector<std::string>{"picture", "rows_start", "slices", "reference"};
      EXPECT_EQ(s, want);
    }
    const conf::CommandResult t =
        run_command("python3 tools/picture_timeline.py " + shell_quote(trace) + " 1 2>&1");
    ASSERT_EQ(t.status, 0) << t.output;
    EXPECT_NE(t.output.find("pictures: 6 "), std::string::npos) << t.output;
    EXPECT_NE(t.output.find("rows"), std::string::npos) << t.output;
  }
}

// The timeline's waits: the GPU's rows one waiter at a time, the gate's summed over the macroblocks that waited at
// once, each given to the picture started last when its wait began (the one whose rows wait), matched by number.
TEST(PictureTrace, TheTimelineSumsTheWaitsOfEachPicture) {
  conf::TempDir dir("picture_trace_waits");
  const std::string trace = dir.file("trace.txt");
  {
    std::ostringstream t;
    for (int n = 0; n < 3; ++n) {
      const double t0 = 10.0 * n;
      t << "trace " << t0 << " picture " << n << "\n";
      t << "trace " << t0 + 1 << " rows_start " << n << "\n";
      // Rows park once in picture 0, three times in picture 1 (numbered by macroblock, 1 among them).
      for (int k = 0; k < (n == 0 ? 1 : n == 1 ? 3 : 0); ++k) t << "trace " << t0 + 1.5 << " row_park " << k + 1 << "\n";
      if (n == 1) {  // two macroblocks wait at once, one of them twice; the GPU's rows once
        t << "trace 12 gate_wait 0\ntrace 12.5 gate_wait 40\ntrace 13 rows_wait 2\ntrace 13.25 gate_landed 0\n"
             "trace 14 gate_landed 40\ntrace 14.5 rows_landed 30\ntrace 15 gate_wait 0\ntrace 15.5 gate_landed 0\n";
      }
      t << "trace " << t0 + 8 << " slices " << n << "\n";
      t << "trace " << t0 + 9 << " reference " << n << "\n";
    }
    std::ofstream(trace) << t.str();
  }
  const conf::CommandResult r = run_command("python3 tools/picture_timeline.py " + shell_quote(trace) + " 0 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  // Pictures 0 and 1 are complete (each has a next); medians of two: (0 + 1.5) / 2 and (0 + 3.25) / 2.
  EXPECT_NE(r.output.find("pictures: 2 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("row_waits        0.75"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gate_waits       1.62"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("parks            2.00"), std::string::npos) << r.output;
}

TEST(PictureTrace, SilentUnlessAsked) {
  const conf::Clip clip = conf::synth_clip(64, 48, 8);
  ASSERT_FALSE(clip.file.empty());
  conf::TempDir dir("picture_trace_off");
  const conf::CommandResult r = run_command(
      shell_quote(bin_dir() + "/lencod") + " -d cfg/encoder_baseline.cfg -p InputFile=" + shell_quote(clip.file) +
      " -p SourceWidth=64 -p SourceHeight=48 -p FramesToBeEncoded=3 -p OutputFile=" + shell_quote(dir.file("x.264")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("trace "), std::string::npos);
}

}  // namespace
}  // namespace gme
