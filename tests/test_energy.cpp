// Energy counters (common/energy.h): RAPL through a stand-in sysfs tree, NVML through bin/libfake_nvml.so (a
// stand-in library with NVML's entry points whose counter advances by a known step per read), and the StatsFile
// fields of bin/lencod. The real counters are read on the device machine by tools/device_energy.sh.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/energy.h"
#include "rd/rd_input.h"
#include "tests/conformance_util.h"

namespace gme {
namespace {


void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string fake_nvml() {
  const std::string bin = conf::bin_dir();
  if (!bin.empty() && bin[0] == '/') return bin + "/libfake_nvml.so";
  char cwd[4096];
  return std::string(::getcwd(cwd, sizeof cwd) ? cwd : ".") + "/" + bin + "/libfake_nvml.so";
}

bool have_fake_nvml() {
  struct stat st;
  return ::stat(fake_nvml().c_str(), &st) == 0;
}

EnergyProbe probe(const std::string& nvml, const std::string& powercap) {
  EnergyProbe p;
  p.nvml_library = nvml;
  p.powercap_root = powercap;
  p.cuda_library = "/nonexistent/libcuda.so.1";
  return p;
}

// A RAPL package domain as the kernel lays it out.
void rapl_domain(const std::string& root, const std::string& dir, const std::string& name, const std::string& uj,
                 const std::string& max_uj) {
  ASSERT_EQ(std::system(("mkdir -p " + root + "/" + dir).c_str()), 0);
  write(root + "/" + dir + "/name", name + "\n");
  write(root + "/" + dir + "/energy_uj", uj + "\n");
  write(root + "/" + dir + "/max_energy_range_uj", max_uj + "\n");
}

TEST(Energy, RaplSumsPackagesAndHandlesAWrap) {
  const conf::TempDir dir("energy_rapl");
  const std::string root = dir.path();
  rapl_domain(root, "intel-rapl:0", "package-0", "1000000", "262143328850");
  rapl_domain(root, "intel-rapl:1", "package-1", "262143000000", "262143328850");  // wraps during the interval
  rapl_domain(root, "intel-rapl:0:0", "core", "5", "262143328850");                 // a subdomain: not added
  rapl_domain(root, "intel-rapl:2", "psys", "5", "262143328850");                   // the platform: not a package
  EnergyMeter m(probe("/nonexistent/libnvidia-ml.so.1", root));
  write(root + "/intel-rapl:0/energy_uj", "3500000\n");  // +2.5 J
  write(root + "/intel-rapl:1/energy_uj", "671150\n");   // +328850 + 671150 uJ = +1.0 J across the wrap
  write(root + "/intel-rapl:0:0/energy_uj", "999999999\n");
  const EnergyReading r = m.stop(0, false);
  ASSERT_TRUE(r.cpu.measured) << r.cpu.what;
  EXPECT_NEAR(r.cpu.joules, 3.5, 1e-9);
  EXPECT_EQ(r.cpu.what, "RAPL package energy (intel-rapl:0 package-0, intel-rapl:1 package-1)");
  EXPECT_GE(r.interval_s, 0);
  EXPECT_FALSE(r.gpu.measured);
  EXPECT_NE(r.gpu.what.find("NVML not available (/nonexistent/libnvidia-ml.so.1: cannot open shared object file"),
            std::string::npos) << r.gpu.what;
}

TEST(Energy, UnreadableOrAbsentRaplSaysWhy) {
  EnergyMeter none(probe("/nonexistent/nvml.so", "/nonexistent/powercap"));
  EXPECT_EQ(none.stop(0, false).cpu.what, "RAPL not available (/nonexistent/powercap: No such file or directory)");
  const conf::TempDir bad_dir("energy_rapl_bad");
  const std::string root = bad_dir.path();
  rapl_domain(root, "intel-rapl:0", "package-0", "1", "10");
  // energy_uj as a folder: reading it fails with the system's reason (root can read any file, so no chmod).
  ASSERT_EQ(std::system(("rm " + root + "/intel-rapl:0/energy_uj && mkdir " + root + "/intel-rapl:0/energy_uj").c_str()),
            0);
  EnergyMeter bad(probe("/nonexistent/nvml.so", root));
  const EnergyReading r = bad.stop(0, false);
  EXPECT_FALSE(r.cpu.measured);
  EXPECT_NE(r.cpu.what.find("RAPL not readable (" + root + "/intel-rapl:0/energy_uj: Is a directory)"),
            std::string::npos) << r.cpu.what;
  const conf::TempDir empty_dir("energy_rapl_empty");
  const std::string empty = empty_dir.path();
  EnergyMeter no_pkg(probe("/nonexistent/nvml.so", empty));
  EXPECT_EQ(no_pkg.stop(0, false).cpu.what, "RAPL not available (no package domain under " + empty + ")");
}

TEST(Energy, NvmlCounterOfTheDeviceUsed) {
  if (!have_fake_nvml()) GTEST_SKIP() << "bin/libfake_nvml.so not built";
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ::setenv("FAKE_NVML_COUNT", "1", 1);
  ::setenv("FAKE_NVML_STEP_MJ", "2750", 1);
  EnergyMeter m(probe(fake_nvml(), "/nonexistent"));
  const EnergyReading r = m.stop(0, true);
  ASSERT_TRUE(r.gpu.measured) << r.gpu.what;
  EXPECT_NEAR(r.gpu.joules, 2.75, 1e-12);  // one step of the stand-in's counter between the two reads
  EXPECT_EQ(r.gpu.what, "NVML total energy of GPU 0 (Fake GPU 0 (tests), used by this encode)");
  EnergyMeter idle(probe(fake_nvml(), "/nonexistent"));
  EXPECT_NE(idle.stop(0, false).gpu.what.find("idle during this encode"), std::string::npos);
  EnergyMeter wrong(probe(fake_nvml(), "/nonexistent"));
  EXPECT_EQ(wrong.stop(3, true).gpu.what, "CUDA device 3 does not exist (NVML reports 1 GPU)");
  // Several GPUs: only the CUDA driver can say which one is CUDA device 0; without it, no number is made up.
  ::setenv("FAKE_NVML_COUNT", "2", 1);
  EnergyMeter two(probe(fake_nvml(), "/nonexistent"));
  const EnergyReading t = two.stop(0, true);
  EXPECT_FALSE(t.gpu.measured);
  EXPECT_NE(t.gpu.what.find("cannot tell which of the 2 NVIDIA GPUs is CUDA device 0 (/nonexistent/libcuda.so.1"),
            std::string::npos) << t.gpu.what;
  std::string why;
  EXPECT_EQ(nvidia_gpu_names(&why, probe(fake_nvml(), "")),
            (std::vector<std::string>{"Fake GPU 0 (tests)", "Fake GPU 1 (tests)"}));
  ::setenv("FAKE_NVML_COUNT", "0", 1);
  EXPECT_TRUE(nvidia_gpu_names(&why, probe(fake_nvml(), "")).empty());
  EXPECT_EQ(why, "no NVIDIA GPU found (NVML reports 0 devices)");
  ::unsetenv("FAKE_NVML_COUNT");
  ::unsetenv("FAKE_NVML_STEP_MJ");
}

TEST(Energy, JsonMembersAreNullWithTheReason) {
  EnergyReading r;
  r.interval_s = 1.25;
  r.gpu = {true, 12.5, "NVML total energy of GPU 0 (X, used by this encode)"};
  r.cpu = {false, 0, "RAPL not readable (\"energy_uj\": Permission denied)"};
  EXPECT_EQ(energy_json_members(r),
            ",\"energy_interval_s\":1.250000,\"energy_gpu_j\":12.500,\"energy_gpu\":\"NVML total energy of GPU 0 "
            "(X, used by this encode)\",\"energy_cpu_j\":null,\"energy_cpu\":\"RAPL not readable "
            "(\\\"energy_uj\\\": Permission denied)\"");
}

// bin/lencod's StatsFile summary: a field per source, a number when measured, null and the reason otherwise.
TEST(Energy, LencodStatsFileCarriesBothSources) {
  struct stat st;
  if (::stat((conf::bin_dir() + "/lencod").c_str(), &st) != 0 || !have_fake_nvml())
    GTEST_SKIP() << "bin/lencod or bin/libfake_nvml.so not built";
  const conf::Clip clip = conf::synth_clip(32, 32, 2);
  if (clip.file.empty()) return;
  const conf::TempDir dir("energy_lencod");
  const std::string d = dir.path();
  const std::string root = d + "/powercap";
  rapl_domain(root, "intel-rapl:0", "package-0", "1000", "1000000");
  const std::string cmd = "GME_NVML_LIBRARY=" + fake_nvml() + " GME_POWERCAP_ROOT=" + root + " " + conf::bin_dir() +
                          "/lencod -p InputFile=" + clip.file + " -p SourceWidth=32 -p SourceHeight=32 " +
                          "-p FramesToBeEncoded=2 -p OutputFile=" + d + "/o.264 -p StatsFile=" + d + "/s.jsonl";
  const conf::CommandResult r = conf::run_command(cmd);
  ASSERT_EQ(r.status, 0) << r.output;
  RdPoint p;
  std::string why;
  ASSERT_TRUE(read_stats_summary(d + "/s.jsonl", &p, &why)) << why;
  EXPECT_DOUBLE_EQ(p.energy_gpu_j, 1.5);  // the stand-in's default step
  EXPECT_EQ(p.energy_gpu_what, "NVML total energy of GPU 0 (Fake GPU 0 (tests), idle during this encode)");
  EXPECT_DOUBLE_EQ(p.energy_cpu_j, 0.0);  // the stand-in package counter does not move
  EXPECT_EQ(p.energy_cpu_what, "RAPL package energy (intel-rapl:0 package-0)");
  EXPECT_GT(p.energy_interval_s, 0);
  EXPECT_LE(p.energy_interval_s, p.time_s + 0.05);  // the counters bracket the encode that time_s measures
  // Without counters: null, and the reason.
  const conf::CommandResult n = conf::run_command(
      "GME_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 GME_POWERCAP_ROOT=/nonexistent " + conf::bin_dir() +
      "/lencod -p InputFile=" + clip.file + " -p SourceWidth=32 -p SourceHeight=32 -p FramesToBeEncoded=1 " +
      "-p OutputFile=" + d + "/o2.264 -p StatsFile=" + d + "/n.jsonl");
  ASSERT_EQ(n.status, 0) << n.output;
  std::ifstream in(d + "/n.jsonl");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"energy_gpu_j\":null,\"energy_gpu\":\"NVML not available (/nonexistent/libnvidia-ml.so.1: "),
            std::string::npos) << text;
  EXPECT_NE(text.find("\"energy_cpu_j\":null,\"energy_cpu\":\"RAPL not available (/nonexistent: No such file or "
                      "directory)\""), std::string::npos) << text;
}

}  // namespace
}  // namespace gme
