// Host-side view of the CUDA integer search (no CUDA types, so plain C++ files and the benchmark can include it).
// gpu/me_cuda.cu defines these when nvcc is found; gpu/cuda_absent.cpp stands in otherwise.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "me/me_interface.h"

namespace gme {

// Device-side timings of the last search() call, from its CUDA events (milliseconds).
struct GpuSearchTiming {
  double upload_ms = 0;    // the call's start to the last byte of its uploads on the device (0: nothing sent)
  double kernel_ms = 0;    // the first kernel's start to the end of the call: with both pictures resident and no
                           // sub-pel tables, the integer kernels alone
  double total_ms = 0;     // the call's start to its results in host memory
  int64_t uploaded_bytes = 0;
  int pictures_uploaded = 0;
  int pictures_reused = 0;  // pictures found resident on the device by id
};

// Each integer-kernel block's clock cycles in the last call, as the kernel measured them for the launch order
// (KernelArgs::cost: from the block's start to its write-out), per (reference, macroblock), reference-major; with
// what turns them into time: the SM clock and how many such blocks an SM runs at once. A picture takes at least its
// longest block, and at least its blocks' summed cycles over all SMs' slots (bench_gpu --blocks prints both).
struct BlockCycles {
  std::vector<uint32_t> cycles;
  int blocks_per_sm = 0, sms = 0;
  double clock_mhz = 0;
};

class GpuPictureSearch : public PictureIntegerSearch {
 public:
  // The device times come from CUDA events that calls record only while time_calls(true) holds (off at first: the
  // encoder reads none, and recording them delays a call's first copy and kernel), read here rather than when the
  // call completes, so its caller does not wait for them: ask before the next call starts. Without them the times
  // are 0 and the counts still hold.
  virtual GpuSearchTiming last_timing() = 0;
  virtual void time_calls(bool on) = 0;
  // For benchmarks: waits for the device, then copies the last call's block cycles (empty before any call).
  virtual BlockCycles last_block_cycles() = 0;
  // Integer peak of the device in absolute differences per second (SMs x 64 int32 lanes x 4 bytes x clock), and a
  // one-line description (name, compute capability, SMs, clock, driver) for benchmark records.
  virtual double peak_absdiff_per_s() const = 0;
  virtual std::string device_description() const = 0;
};

// Opens CUDA device `device`. Returns nullptr and sets *why (one line) if it is not usable. Never throws. dsp: the
// host side's function table (common/dsp.h), which must outlive the search.
std::unique_ptr<GpuPictureSearch> create_cuda_search(int device, const DspFuncs& dsp, std::string* why);

}  // namespace gme
