// Every entry of DspFuncs (common/dsp.h) as a case: inputs made for it (edge cases first, then random ones) and a
// call of the entry on them that collects everything it produced. The one description of the table that both the
// checkasm test (tests/test_checkasm.cpp: every SIMD entry against the plain one, bit for bit) and the benchmark
// (bin/bench_me: the speed of each entry at each CPU level) walk, as x264's checkasm does both.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/dsp.h"

namespace gme {

class DspCase {
 public:
  DspCase(std::string name, size_t offset, size_t size) : name_(std::move(name)), offset_(offset), size_(size) {}
  virtual ~DspCase() = default;
  DspCase(const DspCase&) = delete;
  DspCase& operator=(const DspCase&) = delete;

  // "pixel.sad[16x16]", "deblock.luma_edge", ...
  const std::string& name() const { return name_; }
  // The bytes of DspFuncs that hold this case's entry (the harness checks that the cases cover the whole table).
  size_t offset() const { return offset_; }
  size_t size() const { return size_; }
  // Whether two tables hold different functions in this entry.
  bool differs(const DspFuncs& a, const DspFuncs& b) const;

  // Makes the inputs of trial `trial`: the first kEdgeTrials are the edge cases (all 0, all 255, 0 against 255,
  // alternating and random extremes, the entry's own limits), the rest random, each with the odd strides and
  // unaligned pointers the entry allows.
  static constexpr int kEdgeTrials = 64;
  virtual void prepare(int trial, std::mt19937& rng) = 0;
  // Inputs of typical size for timing (by default a random trial).
  virtual void prepare_bench(std::mt19937& rng) { prepare(kEdgeTrials, rng); }
  // Calls the entry of `f` on the prepared inputs (which it leaves unchanged: an entry that filters in place works on
  // a copy). With `out`, appends what the entry produced: its result and every byte of its output buffers,
  // guard bytes around them included, so a write outside its area shows too.
  virtual void run(const DspFuncs& f, std::vector<uint8_t>* out) = 0;
  // Trials a check runs (more for entries whose interesting inputs are rare).
  virtual int trials() const { return 1000; }
  // Samples (or values) one call handles, for the benchmark's per-sample figures.
  virtual int work() const = 0;

 private:
  std::string name_;
  size_t offset_, size_;
};

// One case per entry of DspFuncs (per block size of the arrays), in table order.
std::vector<std::unique_ptr<DspCase>> dsp_cases();

}  // namespace gme
