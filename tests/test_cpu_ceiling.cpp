// bin/cpu_ceiling (tools/cpu_ceiling_main.cpp) as a process: its table, and one error line for bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "tests/conformance_util.h"

namespace gme {
namespace {

std::string cpu_ceiling() { return conf::shell_quote(conf::bin_dir() + "/cpu_ceiling"); }

TEST(CpuCeiling, PrintsASpeedUpPerThreadCount) {
  const conf::CommandResult r = conf::run_command(cpu_ceiling() + " --threads '1 2' 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  std::istringstream in(r.output);
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    int threads = 0;
    double seconds = 0, speed_up = 0;
    char x = 0;
    if (!(f >> threads >> seconds >> speed_up >> x)) continue;
    ++rows;
    EXPECT_EQ(x, 'x') << line;
    EXPECT_GT(seconds, 0) << line;
    if (threads == 1) {
      EXPECT_DOUBLE_EQ(speed_up, 1.0) << line;  // one thread against its own time
    } else {
      EXPECT_GT(speed_up, 0.5) << line;
    }
  }
  EXPECT_EQ(rows, 2) << r.output;
}

TEST(CpuCeiling, BadArgumentsGiveOneErrorLine) {
  for (const char* args : {"--threads '1 x'", "--threads 0", "--threads ''", "--bogus"}) {
    const conf::CommandResult r = conf::run_command(cpu_ceiling() + " " + args + " 2>&1");
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.output.rfind("cpu_ceiling: ", 0), 0u) << args << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << ": " << r.output;
  }
}

}  // namespace
}  // namespace gme
