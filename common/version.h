// Provenance: which build made an output. Every program answers --version with it, lencod prints it in its banner
// and StatsFile, rdsweep puts it in results.csv and report.md, so a published number can be traced to its build.
#pragma once
#include <string>

namespace gme {

// "gme264 0.9.0 (git 2447d6f1a2b3-dirty, g++ 12.2.0, CUDA 13.0 sm_90)": the release, `git describe` of the source
// it was built from (-dirty: with uncommitted changes), the compiler and the CUDA architectures or "no CUDA".
std::string version_string();
// The parts alone.
const char* version_release();
const char* version_git();
std::string version_compiler();
const char* version_cuda();

// The machine the program runs on: the CPU model (/proc/cpuinfo) and the number of online cores.
std::string cpu_description();

}  // namespace gme
