// Chooses between the CUDA search and its twin (gpu_me.h).
#include "gpu/gpu_me.h"

#include <cstdlib>
#include <exception>
#include <string>

#include "gpu/me_cuda.h"
#include "gpu/me_twin.h"

namespace gme {

void set_default_cuda_connections() {
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(kCudaConnections).c_str(), /*overwrite=*/0);
}

std::unique_ptr<PictureIntegerSearch> make_picture_search_twin(const DspFuncs& dsp) {
  return std::make_unique<TwinPictureSearch>(dsp);
}

std::unique_ptr<PictureIntegerSearch> make_picture_search(int device, const DspFuncs& dsp, std::string* why) {
  std::string reason;
  std::unique_ptr<GpuPictureSearch> gpu;
  try {
    gpu = create_cuda_search(device, dsp, &reason);
  } catch (const std::exception& e) {  // create_cuda_search does not throw; a bad_alloc must not escape either
    gpu.reset();
    reason = e.what();
  }
  if (gpu) {
    if (why) why->clear();
    return gpu;
  }
  if (why) *why = reason.empty() ? "CUDA search unavailable" : reason;
  return make_picture_search_twin(dsp);
}

}  // namespace gme
