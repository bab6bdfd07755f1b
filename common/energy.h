// Energy of one run, read from the hardware's own cumulative counters at the start and the end of the interval:
// never estimated from power models or TDPs. Two sources, each either measured or null with the reason:
//   GPU  NVML's total-energy counter (nvmlDeviceGetTotalEnergyConsumption, millijoules since the driver loaded) of
//        the NVIDIA device the encode uses or would use (the CUDA device index GPUDevice). libnvidia-ml.so.1 is
//        loaded at run time (dlopen), so a build or a machine without the NVIDIA driver still works.
//   CPU  RAPL package energy (/sys/class/powercap/intel-rapl:N/energy_uj, every package domain, counter wraps
//        handled with max_energy_range_uj), where the file is readable (root-only on Linux >= 5.10).
// Both counters cover the whole device or package: other processes on it are counted too.
#pragma once
#include <string>
#include <vector>

namespace gme {

struct EnergySource {
  bool measured = false;
  double joules = 0;
  std::string what;  // measured: the device or domains read; not measured: why not
};

struct EnergyReading {
  double interval_s = 0;  // wall time between the two counter reads
  EnergySource gpu, cpu;
};

// Where the counters are looked for; the defaults are the real ones (tests point them at stand-ins).
struct EnergyProbe {
  std::string nvml_library = "libnvidia-ml.so.1";   // GME_NVML_LIBRARY overrides it
  std::string cuda_library = "libcuda.so.1";        // maps a CUDA device index to its PCI bus id
  std::string powercap_root = "/sys/class/powercap";  // GME_POWERCAP_ROOT overrides it
  static EnergyProbe from_environment();
};

class EnergyMeter {
 public:
  // Reads every counter now: the interval starts here.
  explicit EnergyMeter(const EnergyProbe& probe = EnergyProbe::from_environment());
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  // Reads the counters again: the interval ends here. `cuda_device` is the CUDA device index the encode uses or
  // would use (GPUDevice); `gpu_used` tells whether it ran on it (the note then says "used by this encode",
  // otherwise "idle during this encode"). Call once.
  EnergyReading stop(int cuda_device, bool gpu_used);

 private:
  struct State;
  State* s_;
};

// The StatsFile summary members (no braces, leading comma): "energy_interval_s", "energy_gpu_j" (number or null),
// "energy_gpu" (what was read, or why not), "energy_cpu_j", "energy_cpu". doc/STATS.md.
std::string energy_json_members(const EnergyReading& r);

// Names of the NVIDIA GPUs NVML reports ("NVIDIA H100 80GB HBM3"); empty with *why when there are none or NVML
// cannot be loaded.
std::vector<std::string> nvidia_gpu_names(std::string* why, const EnergyProbe& probe = EnergyProbe::from_environment());

}  // namespace gme
