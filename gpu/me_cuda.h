// Host-side view of the CUDA integer search (no CUDA types, so plain C++ files and the benchmark can include it).
// gpu/me_cuda.cu defines these when nvcc is found; gpu/cuda_absent.cpp stands in otherwise.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "me/me_interface.h"

namespace gme {

// Device-side timings of the last search() call, from CUDA events (milliseconds).
struct GpuSearchTiming {
  double upload_ms = 0;    // first upload byte to last byte on the device (host staging copy included)
  double kernel_ms = 0;    // first kernel start to last kernel end (measured with pipelining off, else 0)
  double total_ms = 0;     // first upload to results back in host memory
  int64_t uploaded_bytes = 0;
  int pictures_uploaded = 0;
  int pictures_reused = 0;  // references found resident on the device by id
};

class GpuPictureSearch : public PictureIntegerSearch {
 public:
  virtual GpuSearchTiming last_timing() const = 0;
  // Integer peak of the device in absolute differences per second (SMs x 64 int32 lanes x 4 bytes x clock), and a
  // one-line description (name, SMs, clock, driver) for benchmark records.
  virtual double peak_absdiff_per_s() const = 0;
  virtual std::string device_description() const = 0;
  // On (default): uploads, kernels and downloads overlap band by band. Off: one kernel per reference after all
  // uploads, so last_timing().kernel_ms is the kernels alone. Results are identical either way.
  virtual void set_pipelined(bool on) = 0;
  // On (default): each kernel writes its candidates into the page-locked host buffer itself, as well as into
  // device memory (which the sub-pel table kernel reads), so no band waits for a download. Off: one download per
  // band on the copy engine. Results are identical either way.
  virtual void set_direct_candidates(bool on) = 0;
};

// Opens CUDA device `device`. Returns nullptr and sets *why (one line) if it is not usable. Never throws. dsp: the
// host side's function table (common/dsp.h), which must outlive the search.
std::unique_ptr<GpuPictureSearch> create_cuda_search(int device, const DspFuncs& dsp, std::string* why);

}  // namespace gme
