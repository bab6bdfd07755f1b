// Compiled instead of gpu/*.cu when nvcc is not found: there is no CUDA search, so make_picture_search() hands out
// the twin with this reason.
#include "gpu/me_cuda.h"

namespace gme {

std::unique_ptr<GpuPictureSearch> create_cuda_search(int /*device*/, std::string* why) {
  if (why) *why = "built without CUDA";
  return nullptr;
}

}  // namespace gme
