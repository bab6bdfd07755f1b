// A stand-in for libnvidia-ml.so.1 in tests on machines without an NVIDIA driver: the few NVML entry points that
// common/energy.cpp loads, with the C ABI of nvml.h. Its energy counter starts at 1,000,000 mJ and every read
// advances it by FAKE_NVML_STEP_MJ (default 1500), so a meter that reads at the start and the end of an encode
// must report exactly one step. FAKE_NVML_COUNT sets the number of devices (default 1).
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
unsigned long long g_counter = 1000000;  // a library's state lives in the process that loads it
int g_devices[8];

unsigned device_count() {
  const char* v = std::getenv("FAKE_NVML_COUNT");
  const int n = v ? std::atoi(v) : 1;
  return n < 0 ? 0u : n > 8 ? 8u : static_cast<unsigned>(n);
}
}  // namespace

extern "C" {
int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int) { return "fake NVML error"; }
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = device_count();
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** d) {
  if (i >= device_count()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *d = &g_devices[i];
  return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char*, void**) { return 6; }  // NVML_ERROR_NOT_FOUND
int nvmlDeviceGetName(void* d, char* name, unsigned len) {
  std::snprintf(name, len, "Fake GPU %d (tests)", static_cast<int>(static_cast<int*>(d) - g_devices));
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(void*, unsigned long long* mj) {
  const char* v = std::getenv("FAKE_NVML_STEP_MJ");
  *mj = g_counter;
  g_counter += v ? std::strtoull(v, nullptr, 10) : 1500;
  return 0;
}
}
