// GME_HOST_DEVICE marks a small helper that host code and CUDA kernels share (one definition for both): nvcc compiles
// it for host and device; a plain C++ compiler, and the kernels' host emulation (gpu/kernel_emu.h), see an ordinary
// inline function.
#pragma once

#ifdef __CUDACC__
#define GME_HOST_DEVICE __host__ __device__
#else
#define GME_HOST_DEVICE
#endif
