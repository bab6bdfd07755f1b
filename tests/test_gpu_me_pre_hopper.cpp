// The integer kernel's source compiled on the host as for the GPUs before Hopper (compute capability 7.5 to 8.9),
// whose packed u16 arithmetic is portable code rather than Hopper's DPX instructions: tests/test_gpu_me.cpp runs the
// emulated-kernel tests on both builds (GpuMeKernelEmu/*.PreHopper) and compares the packed helpers.
#define GME_EMU_ARCH 750
#include "gpu/kernel_emu.h"  // before the kernel: CUDA's keywords and built-ins for a host compiler
#include "gpu/me_cuda_kernel.cuh"
#include "tests/kernel_emu_launch.h"

static_assert(GME_ME_ARCH < 900, "this translation unit compiles the pre-Hopper code");

namespace gme {

void emulated_search_pre_hopper(const PictureSearchRequest& req, PictureCandidates& out) { emulated_search(req, out); }

uint32_t packed_u16_op_pre_hopper(int op, uint32_t a, uint32_t b, uint32_t c) { return packed_u16_op(op, a, b, c); }

}  // namespace gme
