#include "common/cpu.h"

#include <cstdlib>
#include <stdexcept>

namespace gme {
namespace {

constexpr CpuLevel kLevels[] = {
    {0, "c"},
    {kCpuSse2, "sse2"},
    {kCpuSse2 | kCpuSsse3, "ssse3"},
    {kCpuSse2 | kCpuSsse3 | kCpuAvx2, "avx2"},
};

bool no_simd_from_environment() {
  const char* v = std::getenv("GME_NO_SIMD");
  if (!v || !*v || std::string(v) == "0") return false;
  if (std::string(v) == "1") return true;
  throw std::runtime_error(std::string("GME_NO_SIMD: expected 0 or 1, got '") + v + "'");
}

}  // namespace

uint32_t cpu_detect() {
  if (no_simd_from_environment()) return 0;
  uint32_t f = 0;
#if defined(GME_X86_SIMD)
  // libgcc's cpuid reading; avx2 is reported only when the OS saves the YMM registers (XGETBV).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse2")) f |= kCpuSse2;
  if (__builtin_cpu_supports("ssse3")) f |= kCpuSsse3;
  if (__builtin_cpu_supports("avx2")) f |= kCpuAvx2;
#endif
  return f;
}

std::string cpu_flags_name(uint32_t flags) {
  std::string s;
  for (const CpuLevel& l : kLevels) {
    const uint32_t own = l.flags & ~(&l == kLevels ? 0u : (&l)[-1].flags);
    if (own && (flags & own) == own) s += (s.empty() ? "" : " ") + std::string(l.name);
  }
  return s.empty() ? "none" : s;
}

std::vector<CpuLevel> cpu_levels(uint32_t available) {
  std::vector<CpuLevel> out;
  for (const CpuLevel& l : kLevels)
    if ((l.flags & available) == l.flags) out.push_back(l);
    else break;
  return out;
}

}  // namespace gme
