// What the integer kernel (gpu/me_cuda_kernel.cuh) is compiled with: the unroll pragma, the instruction set it is
// compiled for, and the packed byte and u16 arithmetic it is built from (the PTX instructions it names, and for
// GPUs before Hopper their portable equivalents). The host emulation models the instructions (gpu/kernel_emu.h).
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

// Loop unrolling for nvcc; nothing for a host compiler (which would warn about an unknown pragma).
#ifdef __CUDACC__
#define GME_UNROLL _Pragma("unroll")
#else
#define GME_UNROLL
#endif

// The instruction set the source is compiled for: the device pass's __CUDA_ARCH__; for the host emulation the
// test's GME_EMU_ARCH (900: Hopper's packed u16 instructions, modelled by gpu/kernel_emu.h; anything lower: the
// portable code older GPUs run); 0 in nvcc's host pass, which compiles no kernel code.
#if defined(__CUDA_ARCH__)
#define GME_ME_ARCH __CUDA_ARCH__
#elif defined(GME_EMU_ARCH)
#define GME_ME_ARCH GME_EMU_ARCH
#else
#define GME_ME_ARCH 0
#endif

namespace gme {
namespace {

// PTX instructions the kernel names. The host emulation has models of them in gpu/kernel_emu.h.
#ifdef __CUDACC__
// Sum of the 4 byte absolute differences of a and b, plus c: one VABSDIFF4 with its accumulator, where
// __vsadu4(a, b) + c compiles to VABSDIFF4 and a separate add.
__device__ __forceinline__ uint32_t ptx_vabsdiff4_add(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Hopper's packed u16 instructions (DPX): per 16-bit half, (a + b) mod 2^16, min(a, b), and the fused add-and-min
// (one VIADDMNMX.U16x2).
__device__ __forceinline__ uint32_t ptx_add_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("add.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t ptx_min_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("min.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t ptx_max_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t ptx_add_min_u16x2(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("{.reg .b32 t; add.u16x2 t, %1, %2; min.u16x2 %0, t, %3;}" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#endif

__device__ __forceinline__ uint32_t sad4_acc(uint32_t a, uint32_t b, uint32_t acc) {
  return ptx_vabsdiff4_add(a, b, acc);
}

// Per 16-bit half: (a + b) mod 2^16. Stage 2's screen adds u16 SAD pairs and u16 penalty pairs with it; a sum that
// wraps can only let a position through the screen that the exact 64-bit insertion then drops (see screen_batch).
__device__ __forceinline__ uint32_t add_u16x2(uint32_t a, uint32_t b) {
#if GME_ME_ARCH >= 900
  return ptx_add_u16x2(a, b);
#else  // the low halves' carry must not reach the high half: add 15-bit halves, then set each top bit by xor
  return ((a & 0x7fff7fffu) + (b & 0x7fff7fffu)) ^ ((a ^ b) & 0x80008000u);
#endif
}

// Per 16-bit half: min(a, b).
__device__ __forceinline__ uint32_t min_u16x2(uint32_t a, uint32_t b) {
#if GME_ME_ARCH >= 900
  return ptx_min_u16x2(a, b);
#else
  return min(a & 0xffffu, b & 0xffffu) | (min(a >> 16, b >> 16) << 16);
#endif
}

// Per 16-bit half: |a - b|, as max - min (no half borrows from the other).
__device__ __forceinline__ uint32_t absdiff_u16x2(uint32_t a, uint32_t b) {
#if GME_ME_ARCH >= 900
  return ptx_max_u16x2(a, b) - ptx_min_u16x2(a, b);
#else
  return (max(a & 0xffffu, b & 0xffffu) | (max(a >> 16, b >> 16) << 16)) - min_u16x2(a, b);
#endif
}

// Per 16-bit half: min((a + b) mod 2^16, c): with the packed u16 instructions one instruction screens two positions.
__device__ __forceinline__ uint32_t add_min_u16x2(uint32_t a, uint32_t b, uint32_t c) {
#if GME_ME_ARCH >= 900
  return ptx_add_min_u16x2(a, b, c);
#else
  return min_u16x2(add_u16x2(a, b), c);
#endif
}

}  // namespace
}  // namespace gme
