// checkasm: every entry of the encoder's function table (common/dsp.h), at every CPU level this machine runs,
// against the plain C++ entry, bit for bit, on the inputs its case makes (common/dsp_check.h: edge cases - all 0,
// all 255, 0 against 255, extremes, the entry's own limits - then random ones, with odd strides and unaligned
// pointers where the entry allows them). A level is compared for each entry it changes: sse2 for the SSE2 versions,
// ssse3 and avx2 for what those add. GME_NO_SIMD=1 leaves no level to compare (the tests then say so and skip).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cpu.h"
#include "common/dsp.h"
#include "common/dsp_check.h"

namespace gme {
namespace {

struct LevelTable {
  CpuLevel level;
  DspFuncs f;
};

std::vector<LevelTable> level_tables() {
  std::vector<LevelTable> v;
  for (const CpuLevel& l : cpu_levels(cpu_detect())) {
    v.push_back(LevelTable{l, DspFuncs{}});
    dsp_init(l.flags, v.back().f);
  }
  return v;
}

// Every byte of DspFuncs after `cpu` belongs to exactly one case: a new entry without a case fails here.
TEST(Checkasm, CasesCoverTheWholeTable) {
  const auto cases = dsp_cases();
  std::vector<int> owner(sizeof(DspFuncs), 0);
  std::set<std::string> names;
  for (const auto& c : cases) {
    EXPECT_TRUE(names.insert(c->name()).second) << "two cases named " << c->name();
    ASSERT_LE(c->offset() + c->size(), sizeof(DspFuncs)) << c->name();
    for (size_t i = c->offset(); i < c->offset() + c->size(); ++i) ++owner[i];
  }
  // Runs of bytes owned by the wrong number of cases, one message per run.
  const size_t first = offsetof(DspFuncs, pixel);
  for (size_t i = 0; i < sizeof(DspFuncs);) {
    const int want = i < first ? 0 : 1;
    size_t j = i;
    while (j < sizeof(DspFuncs) && owner[j] == owner[i] && (j < first) == (i < first)) ++j;
    EXPECT_EQ(owner[i], want) << "bytes " << i << ".." << j - 1 << " of DspFuncs (" << sizeof(DspFuncs)
                              << " bytes, entries from byte " << first << ") belong to " << owner[i]
                              << " cases: an entry without its case in common/dsp_check.cpp?";
    i = j;
  }
}

// Every level fills every entry, the plain table is what no flags give, and each SIMD level this CPU runs installs
// something of its own (a level that changed nothing would mean its versions are not reached).
TEST(Checkasm, EveryLevelFillsTheTable) {
  const auto tables = level_tables();
  ASSERT_GE(tables.size(), 1u);
  EXPECT_STREQ(tables[0].level.name, "c");
  const auto cases = dsp_cases();
  for (size_t l = 0; l < tables.size(); ++l) {
    EXPECT_EQ(tables[l].f.cpu, tables[l].level.flags);
    for (const auto& c : cases) {
      std::vector<char> zero(c->size(), 0);
      EXPECT_NE(std::memcmp(reinterpret_cast<const char*>(&tables[l].f) + c->offset(), zero.data(), c->size()), 0)
          << c->name() << " is null at " << tables[l].level.name;
    }
    if (l > 0) {
      int changed = 0;
      for (const auto& c : cases) changed += c->differs(tables[l].f, tables[l - 1].f);
      EXPECT_GT(changed, 0) << tables[l].level.name << " installs nothing";
    }
  }
#if defined(GME_X86_SIMD)
  if (std::getenv("GME_NO_SIMD") == nullptr || std::string(std::getenv("GME_NO_SIMD")) != "1") {
    ASSERT_GE(tables.size(), 2u) << "SSE2 is part of x86-64: cpu_detect() must report it";
    EXPECT_STREQ(tables[1].level.name, "sse2");
  }
#endif
}

// The check itself: each entry a level changes, on every trial of its case, against the plain entry.
TEST(Checkasm, EveryEntryMatchesPlainC) {
  const auto tables = level_tables();
  if (tables.size() < 2) GTEST_SKIP() << "no SIMD level on this CPU (or GME_NO_SIMD=1): nothing to compare";
  std::string summary;
  int compared_entries = 0;
  for (const auto& c : dsp_cases()) {
    std::vector<size_t> levels;  // the levels that bring a new version of this entry
    for (size_t l = 1; l < tables.size(); ++l)
      if (c->differs(tables[l].f, tables[l - 1].f) && c->differs(tables[l].f, tables[0].f)) levels.push_back(l);
    if (levels.empty()) continue;
    ++compared_entries;
    std::mt19937 rng(4242);
    std::vector<uint8_t> want, got;
    int failures = 0;
    for (int trial = 0; trial < c->trials() && failures < 3; ++trial) {
      c->prepare(trial, rng);
      want.clear();
      c->run(tables[0].f, &want);
      for (size_t l : levels) {
        got.clear();
        c->run(tables[l].f, &got);
        if (got != want) {
          ++failures;
          ADD_FAILURE() << c->name() << " at " << tables[l].level.name << " differs from plain C on trial " << trial
                        << (trial < DspCase::kEdgeTrials ? " (an edge case)" : " (random)");
        }
      }
    }
    summary += "  " + c->name() + ":";
    for (size_t l : levels) summary += std::string(" ") + tables[l].level.name;
    summary += failures ? "  FAILED\n" : "  ok\n";
  }
  std::printf("checkasm (%s):\n%s", cpu_flags_name(tables.back().level.flags).c_str(), summary.c_str());
  EXPECT_GT(compared_entries, 0);
}

// A case whose collected output never changed with its inputs could not tell a wrong version from a right one:
// across its trials the plain entry's outputs must take several values.
TEST(Checkasm, EveryCaseSeesItsEntrysOutput) {
  DspFuncs plain;
  dsp_init(0, plain);
  for (const auto& c : dsp_cases()) {
    std::mt19937 rng(7);
    std::set<std::vector<uint8_t>> seen;
    for (int trial = 0; trial < 200 && seen.size() < 3; ++trial) {
      c->prepare(trial, rng);
      std::vector<uint8_t> out;
      c->run(plain, &out);
      EXPECT_FALSE(out.empty()) << c->name();
      seen.insert(out);
    }
    EXPECT_GE(seen.size(), 3u) << c->name() << ": its outputs hardly depend on its inputs";
  }
}

// ---- the plain versions ---------------------------------------------------------------------------------------

// The plain versions on hand-checkable inputs, so a wrong plain version cannot make every level "agree".
TEST(PlainVersions, PixelKnownValues) {
  const PixelFuncs& r = pixel_ref();
  std::vector<uint8_t> z(16 * 16, 0), f(16 * 16, 255);
  EXPECT_EQ(r.sad[kB16x16](z.data(), 16, f.data(), 16), 256u * 255u);
  EXPECT_EQ(r.ssd[kB8x8](z.data(), 16, f.data(), 16), 64ull * 255 * 255);
  // A constant difference d on a 4x4 has one Hadamard coefficient 16 d: SATD = (16 d + 1) >> 1 = 8 d.
  EXPECT_EQ(r.satd[kB4x4](z.data(), 16, f.data(), 16), 8u * 255u);
  EXPECT_EQ(r.satd[kB16x16](z.data(), 16, f.data(), 16), 16u * 8u * 255u);
  // A single differing pixel (value 1): all 16 coefficients are +-1 -> (16 + 1) >> 1 = 8.
  std::vector<uint8_t> one(16 * 16, 0);
  one[5] = 1;
  EXPECT_EQ(r.satd[kB4x4](z.data(), 16, one.data() + 4, 16), 8u);
  uint32_t out[16];
  r.sad_4x4_x16(z.data(), 16, one.data(), 16, out);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], i == 1 ? 1u : 0u);
  // Constant difference -255: each block's only coefficient is the DC, 16 * -255 halved; no AC at all.
  int dc[16];
  EXPECT_EQ(r.hadamard_ac_16x16(z.data(), 16, f.data(), 16, dc, UINT32_MAX), 0u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(dc[i], -8 * 255);
  // One pixel differing by -1 in block 1: its 16 raw coefficients are +-1, halved to 0 or -1 (arithmetic
  // shift); the DC is -1 >> 1 = -1 and of the 15 AC coefficients those with raw -1 count 1 each.
  EXPECT_EQ(r.hadamard_ac_16x16(z.data(), 16, one.data(), 16, dc, UINT32_MAX), 7u);
  // The first row of blocks alone reaches a budget of 7: the sum stops there (rows 2-4 have no AC).
  EXPECT_EQ(r.hadamard_ac_16x16(z.data(), 16, one.data(), 16, dc, 7), 7u);
  EXPECT_EQ(dc[1], -1);
  EXPECT_EQ(dc[0], 0);
}

TEST(PlainVersions, PlaneSsdKnownValue) {
  // Differences 1, 2, 3 -> 1 + 4 + 9.
  const uint8_t x[3] = {10, 20, 30}, y[3] = {11, 18, 33};
  EXPECT_EQ(plane_ssd_c(x, 3, y, 3, 3, 1), 14u);
}

// ---- common/cpu.h ---------------------------------------------------------------------------------------------

class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~EnvVar() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(Cpu, NoSimdSwitches) {
  {
    EnvVar e("GME_NO_SIMD", "1");
    EXPECT_EQ(cpu_detect(), 0u);
    EXPECT_EQ(cpu_levels(cpu_detect()).size(), 1u);
  }
  {
    EnvVar e("GME_NO_SIMD", "yes");
    EXPECT_THROW(cpu_detect(), std::runtime_error);
  }
  {
    EnvVar e("GME_NO_SIMD", nullptr);
    EXPECT_EQ(cpu_flags_for(true), 0u);
    EXPECT_EQ(cpu_flags_for(false), cpu_detect());
#if defined(__x86_64__)
    EXPECT_TRUE(cpu_detect() & kCpuSse2);
#endif
  }
  {
    EnvVar e("GME_NO_SIMD", "0");
    EXPECT_EQ(cpu_detect(), cpu_flags_for(false));
  }
}

TEST(Cpu, NamesAndLevels) {
  EXPECT_EQ(cpu_flags_name(0), "none");
  EXPECT_EQ(cpu_flags_name(kCpuSse2), "sse2");
  EXPECT_EQ(cpu_flags_name(kCpuSse2 | kCpuSsse3 | kCpuAvx2), "sse2 ssse3 avx2");
  const auto all = cpu_levels(kCpuSse2 | kCpuSsse3 | kCpuAvx2);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_STREQ(all[3].name, "avx2");
  EXPECT_EQ(all[3].flags, kCpuSse2 | kCpuSsse3 | kCpuAvx2);
  // Levels are cumulative: AVX2 without SSSE3 (no such CPU) stops at sse2.
  EXPECT_EQ(cpu_levels(kCpuSse2 | kCpuAvx2).size(), 2u);
  EXPECT_EQ(cpu_levels(0).size(), 1u);
}

}  // namespace
}  // namespace gme
