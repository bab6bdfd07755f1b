// Which CUDA devices a local sweep's encoders can use, so that `rdsweep -j N` spreads its GPU points over every
// card of the host instead of starting them all on device 0 (GPUDevice's default).
#pragma once
#include <string>
#include <vector>

namespace gme {

struct VisibleGpus {
  int count = 0;    // CUDA devices an encoder started by rdsweep sees (numbered 0 .. count - 1 for GPUDevice)
  std::string how;  // how that was found, for the console and the report
};

// CUDA_VISIBLE_DEVICES when it is set (`cuda_visible_devices` non-null): its entries up to the first one CUDA would
// not take (an index, GPU-/MIG- UUID), which is where CUDA itself stops reading the list, so "-1" or "" hide every
// device; otherwise the devices NVML reports (`nvml_names`, empty when NVML is missing or finds none).
VisibleGpus visible_gpus(const char* cuda_visible_devices, const std::vector<std::string>& nvml_names);

// The CUDA device a GPU point started in worker slot `slot` (0 .. jobs - 1, each running encoder holds one) uses:
// the slots take the devices in turn, so the encoders running at any moment are spread evenly over the cards;
// -1 where there is nothing to spread (fewer than two devices: GPUDevice stays as the command sets it).
int device_for_slot(int slot, int devices);

}  // namespace gme
