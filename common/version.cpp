#include "common/version.h"

#include <unistd.h>

#include <fstream>
#include <string>

#ifndef GME_RELEASE
#define GME_RELEASE "unknown"
#endif
#ifndef GME_GIT
#define GME_GIT "unknown"
#endif
#ifndef GME_CUDA_DESC
#define GME_CUDA_DESC "no CUDA"
#endif

namespace gme {

const char* version_release() { return GME_RELEASE; }
const char* version_git() { return GME_GIT; }
const char* version_cuda() { return GME_CUDA_DESC; }

std::string version_compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown compiler";
#endif
}

std::string version_string() {
  return std::string("gme264 ") + version_release() + " (git " + version_git() + ", " + version_compiler() + ", " +
         version_cuda() + ")";
}

std::string cpu_description() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return model + ", " + std::to_string(cores > 0 ? cores : 1) + " cores";
}

}  // namespace gme
