// The CPU features the SIMD routines use, detected in one place, and the switch that turns them all off.
// dsp_init (common/dsp.h) fills the encoder's function table from these flags, as x264_cpu_detect feeds
// x264_pixel_init; every SIMD routine is reached through that table, so flags 0 run the whole encoder in plain C++
// (lencod's NoSIMD = 1, or GME_NO_SIMD=1 for every program), with the same bytes out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

// The x86 SIMD routines are compiled in: SSE2 as the baseline of x86-64, the later sets through per-function
// target attributes, so the program still starts on any x86-64 and uses what cpu_detect() finds.
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
#define GME_X86_SIMD 1
#endif

namespace gme {

enum CpuFlag : uint32_t {
  kCpuSse2 = 1u << 0,
  kCpuSsse3 = 1u << 1,
  kCpuAvx2 = 1u << 2,  // with the OS saving the 256-bit registers
};

// What this CPU runs of the sets the routines use (0 where no SIMD routine is compiled), unless the environment
// variable GME_NO_SIMD is 1: then 0. Throws std::runtime_error when GME_NO_SIMD holds anything but 0, 1 or nothing.
uint32_t cpu_detect();
// The flags an encoder uses: cpu_detect(), or 0 with no_simd (lencod's NoSIMD = 1).
inline uint32_t cpu_flags_for(bool no_simd) { return no_simd ? 0 : cpu_detect(); }

// "sse2 ssse3 avx2" for those flags, "none" for 0: what reports print.
std::string cpu_flags_name(uint32_t flags);

// The levels a check or benchmark compares, plain C first: each adds one instruction set to the one before
// (c = 0, sse2, sse2+ssse3, sse2+ssse3+avx2), as far as `available` reaches.
struct CpuLevel {
  uint32_t flags;
  const char* name;
};
std::vector<CpuLevel> cpu_levels(uint32_t available);

}  // namespace gme
