// Energy counters (common/energy.h): NVML through dlopen, RAPL through sysfs.
#include "common/energy.h"

#include <dirent.h>
#include <dlfcn.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>

#include "common/text_fields.h"

namespace gme {
namespace {

// ---- NVML, declared here with the C ABI of nvml.h (so no NVIDIA header or library is needed to build) ----
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
// nvmlDevice_t, an opaque handle, held as void*: the functions are called through pointers from dlsym, and a
// library defining them with void* handles (the tests' stand-in) then has exactly the type they are called with.
using NvmlDevice = void*;

struct Nvml {
  void* lib = nullptr;
  bool ready = false;
  std::string why;  // why not ready
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*count)(unsigned*) = nullptr;
  NvmlReturn (*by_index)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*by_pci)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*name)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*energy)(NvmlDevice, unsigned long long*) = nullptr;

  std::string err(NvmlReturn r) const {
    const char* s = error_string ? error_string(r) : nullptr;
    return s ? s : "NVML error " + std::to_string(r);
  }

  explicit Nvml(const std::string& path) {
    lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = ::dlerror();
      why = "NVML not available (" + std::string(e ? e : path + ": cannot load") +
            "; no NVIDIA driver on this machine?)";
      return;
    }
    auto sym = [&](const char* n) { return ::dlsym(lib, n); };
    init = reinterpret_cast<NvmlReturn (*)()>(sym("nvmlInit_v2"));
    shutdown = reinterpret_cast<NvmlReturn (*)()>(sym("nvmlShutdown"));
    error_string = reinterpret_cast<const char* (*)(NvmlReturn)>(sym("nvmlErrorString"));
    count = reinterpret_cast<NvmlReturn (*)(unsigned*)>(sym("nvmlDeviceGetCount_v2"));
    by_index = reinterpret_cast<NvmlReturn (*)(unsigned, NvmlDevice*)>(sym("nvmlDeviceGetHandleByIndex_v2"));
    by_pci = reinterpret_cast<NvmlReturn (*)(const char*, NvmlDevice*)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    name = reinterpret_cast<NvmlReturn (*)(NvmlDevice, char*, unsigned)>(sym("nvmlDeviceGetName"));
    energy = reinterpret_cast<NvmlReturn (*)(NvmlDevice, unsigned long long*)>(
        sym("nvmlDeviceGetTotalEnergyConsumption"));
    if (!init || !shutdown || !count || !by_index || !name || !energy) {
      why = path + ": an NVML function is missing (driver too old for nvmlDeviceGetTotalEnergyConsumption?)";
      return;
    }
    const NvmlReturn r = init();
    if (r != 0) {
      why = "nvmlInit failed: " + err(r);
      return;
    }
    ready = true;
  }
  ~Nvml() {
    if (ready) shutdown();
    if (lib) ::dlclose(lib);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::string device_name(NvmlDevice d) const {
    char b[96] = {};
    return name(d, b, sizeof b) == 0 ? std::string(b) : std::string("NVIDIA GPU");
  }
};

// The PCI bus id ("0000:19:00.0") of CUDA device `index` as this process sees it (CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER applied), from the driver API loaded at run time. Empty with *why on failure.
std::string cuda_pci_bus_id(const std::string& library, int index, std::string* why) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    *why = e ? e : library + ": cannot load";
    return "";
  }
  using CuInit = int (*)(unsigned);
  using CuDeviceGet = int (*)(int*, int);
  using CuPci = int (*)(char*, int, int);
  auto cu_init = reinterpret_cast<CuInit>(::dlsym(lib, "cuInit"));
  auto cu_get = reinterpret_cast<CuDeviceGet>(::dlsym(lib, "cuDeviceGet"));
  auto cu_pci = reinterpret_cast<CuPci>(::dlsym(lib, "cuDeviceGetPCIBusId"));
  std::string out;
  int dev = 0;
  char bus[64] = {};
  if (!cu_init || !cu_get || !cu_pci) {
    *why = library + ": a CUDA driver function is missing";
  } else if (const int r = cu_init(0); r != 0) {
    *why = "cuInit failed (CUDA error " + std::to_string(r) + ")";
  } else if (cu_get(&dev, index) != 0) {
    *why = "CUDA device " + std::to_string(index) + " does not exist";
  } else if (cu_pci(bus, sizeof bus, dev) != 0) {
    *why = "cuDeviceGetPCIBusId failed";
  } else {
    out = bus;
  }
  // The driver stays loaded for the CUDA runtime in this process; dlclose only drops this reference.
  ::dlclose(lib);
  return out;
}

// ---- RAPL ----

struct RaplDomain {
  std::string dir, name;
  double max_uj = 0;
  uint64_t start_uj = 0;
};

bool read_u64(const std::string& path, uint64_t* v, std::string* why) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) {
    *why = path + ": " + std::strerror(errno);
    if (errno == EACCES) *why += "; energy_uj is root-only since Linux 5.10";
    return false;
  }
  unsigned long long x = 0;
  const int n = std::fscanf(f, "%llu", &x);
  const int e = errno;
  std::fclose(f);
  if (n != 1) {
    *why = path + ": " + (e ? std::strerror(e) : "not a number");
    return false;
  }
  *v = x;
  return true;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// Top-level package domains ("intel-rapl:0", not the "intel-rapl:0:1" subdomains, not "psys").
std::vector<RaplDomain> rapl_packages(const std::string& root, std::string* why) {
  std::vector<RaplDomain> out;
  DIR* d = ::opendir(root.c_str());
  if (!d) {
    *why = "RAPL not available (" + root + ": " + std::strerror(errno) + ")";
    return out;
  }
  std::map<std::string, RaplDomain> sorted;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.rfind("intel-rapl:", 0) != 0 || n.find(':', 11) != std::string::npos) continue;
    RaplDomain r;
    r.dir = root + "/" + n;
    r.name = first_line(r.dir + "/name");
    if (r.name.rfind("package", 0) != 0) continue;
    sorted[n] = r;
  }
  ::closedir(d);
  for (auto& [n, r] : sorted) out.push_back(r);
  if (out.empty()) *why = "RAPL not available (no package domain under " + root + ")";
  return out;
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string json_joules(const EnergySource& s) {
  if (!s.measured || !std::isfinite(s.joules)) return "null";
  char b[48];
  std::snprintf(b, sizeof b, "%.3f", s.joules);
  return b;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

EnergyProbe EnergyProbe::from_environment() {
  EnergyProbe p;
  p.nvml_library = env_or("GME_NVML_LIBRARY", p.nvml_library);
  p.powercap_root = env_or("GME_POWERCAP_ROOT", p.powercap_root);
  return p;
}

struct EnergyMeter::State {
  EnergyProbe probe;
  double t0 = 0;
  bool stopped = false;
  std::unique_ptr<Nvml> nvml;
  std::vector<NvmlDevice> gpus;               // every NVML device, by NVML index
  std::vector<unsigned long long> gpu_start;  // counter at the start, mJ
  std::vector<std::string> gpu_start_error;   // why a start read failed ("" when it worked)
  std::string gpu_why;                        // why no GPU can be read at all
  std::vector<RaplDomain> rapl;
  std::string rapl_why;
};

EnergyMeter::EnergyMeter(const EnergyProbe& probe) : s_(new State) {
  s_->probe = probe;
  s_->nvml = std::make_unique<Nvml>(probe.nvml_library);
  if (!s_->nvml->ready) {
    s_->gpu_why = s_->nvml->why;
  } else {
    unsigned n = 0;
    const NvmlReturn r = s_->nvml->count(&n);
    if (r != 0) s_->gpu_why = "nvmlDeviceGetCount failed: " + s_->nvml->err(r);
    else if (n == 0) s_->gpu_why = "no NVIDIA GPU found (NVML reports 0 devices)";
    for (unsigned i = 0; i < n; i++) {
      NvmlDevice d = nullptr;
      s_->gpus.push_back(s_->nvml->by_index(i, &d) == 0 ? d : nullptr);
    }
  }
  std::vector<RaplDomain> rapl = rapl_packages(probe.powercap_root, &s_->rapl_why);
  // The start reads, back to back, as the last thing before the interval starts.
  s_->t0 = seconds_now();
  for (NvmlDevice d : s_->gpus) {
    unsigned long long mj = 0;
    const NvmlReturn r = d ? s_->nvml->energy(d, &mj) : 999;
    s_->gpu_start.push_back(mj);
    s_->gpu_start_error.push_back(r == 0 ? "" : d ? s_->nvml->err(r) : "no handle");
  }
  for (RaplDomain& r : rapl) {
    std::string why;
    if (!read_u64(r.dir + "/energy_uj", &r.start_uj, &why)) {
      s_->rapl_why = "RAPL not readable (" + why + ")";
      rapl.clear();
      break;
    }
    uint64_t max = 0;
    std::string ignored;
    r.max_uj = read_u64(r.dir + "/max_energy_range_uj", &max, &ignored) ? static_cast<double>(max) : 0;
  }
  s_->rapl = rapl;
}

EnergyMeter::~EnergyMeter() { delete s_; }

EnergyReading EnergyMeter::stop(int cuda_device, bool gpu_used) {
  EnergyReading out;
  if (s_->stopped) {
    out.gpu.what = out.cpu.what = "energy meter read twice";
    return out;
  }
  s_->stopped = true;
  // End reads first, then everything that takes time (names, device mapping).
  std::vector<unsigned long long> gpu_end(s_->gpus.size(), 0);
  std::vector<std::string> gpu_end_error(s_->gpus.size());
  for (size_t i = 0; i < s_->gpus.size(); i++) {
    const NvmlReturn r = s_->gpus[i] ? s_->nvml->energy(s_->gpus[i], &gpu_end[i]) : 999;
    if (r != 0) gpu_end_error[i] = s_->gpus[i] ? s_->nvml->err(r) : "no handle";
  }
  std::vector<uint64_t> rapl_end(s_->rapl.size(), 0);
  std::string rapl_end_why;
  for (size_t i = 0; i < s_->rapl.size() && rapl_end_why.empty(); i++)
    read_u64(s_->rapl[i].dir + "/energy_uj", &rapl_end[i], &rapl_end_why);
  out.interval_s = seconds_now() - s_->t0;

  // GPU: which NVML device is the CUDA device the encode uses.
  if (!s_->gpu_why.empty()) {
    out.gpu.what = s_->gpu_why;
  } else {
    int index = -1;
    std::string why;
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (s_->gpus.size() == 1 && !visible) {
      if (cuda_device == 0) index = 0;
      else why = "CUDA device " + std::to_string(cuda_device) + " does not exist (NVML reports 1 GPU)";
    } else {
      // Several GPUs, or a CUDA_VISIBLE_DEVICES mapping: ask the CUDA driver for the device's PCI bus id.
      const std::string bus = cuda_pci_bus_id(s_->probe.cuda_library, cuda_device, &why);
      NvmlDevice d = nullptr;
      if (!bus.empty() && s_->nvml->by_pci && s_->nvml->by_pci(bus.c_str(), &d) == 0) {
        for (size_t i = 0; i < s_->gpus.size(); i++)
          if (s_->gpus[i] == d) index = static_cast<int>(i);
      }
      if (index < 0)
        why = "cannot tell which of the " + std::to_string(s_->gpus.size()) + " NVIDIA GPUs is CUDA device " +
              std::to_string(cuda_device) + (why.empty() ? "" : " (" + why + ")");
    }
    if (index < 0) {
      out.gpu.what = why;
    } else if (!s_->gpu_start_error[index].empty() || !gpu_end_error[index].empty()) {
      const std::string& e = s_->gpu_start_error[index].empty() ? gpu_end_error[index] : s_->gpu_start_error[index];
      out.gpu.what = "nvmlDeviceGetTotalEnergyConsumption failed on " + s_->nvml->device_name(s_->gpus[index]) +
                     ": " + e;
    } else if (gpu_end[index] < s_->gpu_start[index]) {
      out.gpu.what = "NVML energy counter went backwards (driver reloaded during the run?)";
    } else {
      out.gpu.measured = true;
      out.gpu.joules = static_cast<double>(gpu_end[index] - s_->gpu_start[index]) / 1000.0;
      out.gpu.what = "NVML total energy of GPU " + std::to_string(index) + " (" +
                     s_->nvml->device_name(s_->gpus[index]) + ", " +
                     (gpu_used ? "used by this encode" : "idle during this encode") + ")";
    }
  }

  // CPU: the sum of the package domains.
  if (s_->rapl.empty()) {
    out.cpu.what = s_->rapl_why;
  } else if (!rapl_end_why.empty()) {
    out.cpu.what = "RAPL not readable (" + rapl_end_why + ")";
  } else {
    double uj = 0;
    std::string names;
    for (size_t i = 0; i < s_->rapl.size(); i++) {
      const RaplDomain& r = s_->rapl[i];
      double d = static_cast<double>(rapl_end[i]) - static_cast<double>(r.start_uj);
      if (d < 0) d += r.max_uj;  // the counter wrapped once (it wraps every few minutes to hours)
      uj += d;
      const size_t slash = r.dir.rfind('/');
      names += (names.empty() ? "" : ", ") + r.dir.substr(slash + 1) + " " + r.name;
    }
    out.cpu.measured = true;
    out.cpu.joules = uj / 1e6;
    out.cpu.what = "RAPL package energy (" + names + ")";
  }
  return out;
}

std::string energy_json_members(const EnergyReading& r) {
  char interval[48];
  std::snprintf(interval, sizeof interval, "%.6f", r.interval_s);
  return std::string(",\"energy_interval_s\":") + interval + ",\"energy_gpu_j\":" + json_joules(r.gpu) +
         ",\"energy_gpu\":" + json_string(r.gpu.what) + ",\"energy_cpu_j\":" + json_joules(r.cpu) +
         ",\"energy_cpu\":" + json_string(r.cpu.what);
}

std::vector<std::string> nvidia_gpu_names(std::string* why, const EnergyProbe& probe) {
  std::vector<std::string> out;
  Nvml nvml(probe.nvml_library);
  if (!nvml.ready) {
    *why = nvml.why;
    return out;
  }
  unsigned n = 0;
  if (const NvmlReturn r = nvml.count(&n); r != 0) {
    *why = "nvmlDeviceGetCount failed: " + nvml.err(r);
    return out;
  }
  for (unsigned i = 0; i < n; i++) {
    NvmlDevice d = nullptr;
    out.push_back(nvml.by_index(i, &d) == 0 ? nvml.device_name(d) : "NVIDIA GPU " + std::to_string(i));
  }
  if (out.empty()) *why = "no NVIDIA GPU found (NVML reports 0 devices)";
  return out;
}

}  // namespace gme
