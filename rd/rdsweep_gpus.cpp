#include "rd/rdsweep_gpus.h"

#include <cctype>

namespace gme {
namespace {

// An entry CUDA accepts in CUDA_VISIBLE_DEVICES: a device index or a GPU / MIG UUID.
bool cuda_takes(const std::string& e) {
  if (e.rfind("GPU-", 0) == 0 || e.rfind("MIG-", 0) == 0) return e.size() > 4;
  if (e.empty()) return false;
  for (char c : e)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

VisibleGpus visible_gpus(const char* cuda_visible_devices, const std::vector<std::string>& nvml_names) {
  VisibleGpus g;
  if (cuda_visible_devices) {
    const std::string list = cuda_visible_devices;
    size_t at = 0;
    for (;;) {
      const size_t comma = list.find(',', at);
      if (!cuda_takes(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at))) break;
      g.count++;
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    g.how = "CUDA_VISIBLE_DEVICES=" + list;
    return g;
  }
  g.count = static_cast<int>(nvml_names.size());
  g.how = nvml_names.empty() ? "NVML reports none" : "NVML";
  return g;
}

int device_for_slot(int slot, int devices) { return devices >= 2 && slot >= 0 ? slot % devices : -1; }

}  // namespace gme
