// A small host emulation of the CUDA execution model, enough to run gpu/me_cuda_kernel.cuh and gpu/subpel_kernel.cuh
// as plain C++ without a GPU (the tests hold their results to the twins on every build, CI included). Include this
// first, then the kernel header, in one translation unit; define GME_EMU_ARCH before it to choose the instruction
// set the kernel source is compiled for (900: Hopper's packed u16 instructions, modelled below; lower: the portable
// code older GPUs run).
//
// Each thread of a block is a fiber (ucontext) on the calling thread; blocks run one after another. A thread runs
// until it reaches __syncthreads() (or __syncthreads_or()) or a warp vote or shuffle; the block barrier opens when
// all threads of the block wait at it, a warp vote or shuffle when all 32 lanes of the warp wait at it. Anything else (a thread that exits
// while others wait, a vote with lanes missing) is a divergent barrier, which CUDA leaves undefined: the emulation
// throws. Shared memory is poisoned (0xA5) before each block, so a read of a slot nothing wrote shows up as a
// mismatch against the twin.
//
// What it does not check: memory-model races inside a barrier interval (racecheck on the device does that),
// timing, and resource limits.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

// CUDA keywords the kernel uses, for a host compiler.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__
#define __constant__
#define __align__(n)
#define __launch_bounds__(threads, blocks)

namespace gme {
namespace {

// ---- CUDA vector types and built-ins ---------------------------------------------------------------------------
struct uint2 { uint32_t x, y; };
struct uint4 { uint32_t x, y, z, w; };
struct short2 { int16_t x, y; };
struct EmuDim3 { unsigned x = 0, y = 0, z = 0; };
inline uint2 make_uint2(uint32_t x, uint32_t y) { return uint2{x, y}; }
using std::abs;
using std::max;
using std::min;
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __ffs(unsigned x) { return __builtin_ffs(static_cast<int>(x)); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline uint32_t __umulhi(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}
inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, unsigned shift) {
  return static_cast<uint32_t>(((static_cast<uint64_t>(hi) << 32) | lo) >> (shift & 31));
}
template <typename T> inline T __ldg(const T* p) { return *p; }
template <typename T> inline T __ldcg(const T* p) { return *p; }
// Blocks run one after another, each thread alone until its next barrier or vote: every write is seen at once.
inline void __threadfence() {}
// A clock that only counts its readings: what the kernels time (launch order, gpu/cost_order.h) stays deterministic.
inline long long clock64() {
  static long long ticks = 0;
  return ++ticks;
}

// ---- Models of the PTX instructions gpu/integer_ops.cuh names ----------------------------------------------------
// vabsdiff4.u32.u32.u32.add: the sum of the 4 byte absolute differences of a and b, plus c.
inline uint32_t ptx_vabsdiff4_add(uint32_t a, uint32_t b, uint32_t c) {
  for (int i = 0; i < 32; i += 8) {
    const int x = static_cast<int>((a >> i) & 255u), y = static_cast<int>((b >> i) & 255u);
    c += static_cast<uint32_t>(x > y ? x - y : y - x);
  }
  return c;
}
// Hopper's add.u16x2, min.u16x2 and max.u16x2 (the kernel compiled with GME_EMU_ARCH >= 900 names them): per 16-bit half.
inline uint32_t ptx_add_u16x2(uint32_t a, uint32_t b) {
  return ((a + b) & 0xffffu) | ((((a >> 16) + (b >> 16)) & 0xffffu) << 16);
}
inline uint32_t ptx_min_u16x2(uint32_t a, uint32_t b) {
  return std::min(a & 0xffffu, b & 0xffffu) | (std::min(a >> 16, b >> 16) << 16);
}
inline uint32_t ptx_max_u16x2(uint32_t a, uint32_t b) {
  return std::max(a & 0xffffu, b & 0xffffu) | (std::max(a >> 16, b >> 16) << 16);
}
inline uint32_t ptx_add_min_u16x2(uint32_t a, uint32_t b, uint32_t c) { return ptx_min_u16x2(ptx_add_u16x2(a, b), c); }

EmuDim3 threadIdx, blockIdx;
constexpr size_t kEmuSmemBytes = 227 * 1024;  // the largest dynamic shared memory a Hopper block can have
alignas(16) unsigned char smem[kEmuSmemBytes];  // the kernel's `extern __shared__ smem[]`

// ---- Fibers ------------------------------------------------------------------------------------------------------
class EmuBlock {
 public:
  enum State { kRun, kBarrier, kVote, kDone };
  struct Fiber {
    ucontext_t ctx;
    std::vector<char> stack;
    State state = kRun;
    bool pred = false, result = false;
    unsigned ballot = 0;  // a warp vote's predicates, lane i at bit i
    int shfl_val = 0, shfl_src = 0, shfl_out = 0;  // a shuffle: the value given, the lane read, what it read
  };

  static EmuBlock*& current() {
    static EmuBlock* c = nullptr;
    return c;
  }

  // Runs `body` for threads 0..threads-1 of block `block`; throws std::logic_error on a divergent barrier.
  void run(int block, int threads, const std::function<void()>& body) {
    if (threads % 32) throw std::logic_error("kernel emulation: block size must be a whole number of warps");
    fibers_.resize(static_cast<size_t>(threads));
    body_ = &body;
    current() = this;
    blockIdx.x = static_cast<unsigned>(block);
    std::memset(smem, 0xA5, sizeof smem);
    for (Fiber& f : fibers_) {
      f.stack.resize(kStackBytes);
      f.state = kRun;
      if (getcontext(&f.ctx) != 0) throw std::runtime_error("kernel emulation: getcontext failed");
      f.ctx.uc_stack.ss_sp = f.stack.data();
      f.ctx.uc_stack.ss_size = f.stack.size();
      f.ctx.uc_link = &sched_;
      makecontext(&f.ctx, &EmuBlock::entry, 0);
    }
    for (;;) {
      for (size_t t = 0; t < fibers_.size(); ++t) {
        if (fibers_[t].state != kRun) continue;
        cur_ = t;
        threadIdx.x = static_cast<unsigned>(t);
        if (swapcontext(&sched_, &fibers_[t].ctx) != 0) throw std::runtime_error("kernel emulation: swapcontext failed");
      }
      size_t done = 0, barrier = 0;
      for (const Fiber& f : fibers_) {
        done += f.state == kDone;
        barrier += f.state == kBarrier;
      }
      if (done == fibers_.size()) break;
      if (barrier == fibers_.size()) {
        bool any = false;
        for (const Fiber& f : fibers_) any |= f.pred;
        for (Fiber& f : fibers_) {
          f.state = kRun;
          f.result = any;  // __syncthreads_or's answer; a plain __syncthreads() ignores it
          f.pred = false;
        }
        continue;
      }
      bool released = false;
      for (size_t w = 0; w < fibers_.size(); w += 32) {
        bool all = true;
        unsigned ballot = 0;
        for (size_t l = w; l < w + 32; ++l) {
          all &= fibers_[l].state == kVote;
          ballot |= (fibers_[l].pred ? 1u : 0u) << (l - w);
        }
        if (!all) continue;
        for (size_t l = w; l < w + 32; ++l) {
          fibers_[l].ballot = ballot;
          fibers_[l].shfl_out = fibers_[w + static_cast<size_t>(fibers_[l].shfl_src)].shfl_val;
          fibers_[l].state = kRun;
        }
        released = true;
      }
      if (!released) throw std::logic_error("kernel emulation: divergent __syncthreads or __any_sync");
    }
    current() = nullptr;
  }

  void wait(State s) {
    fibers_[cur_].state = s;
    if (swapcontext(&fibers_[cur_].ctx, &sched_) != 0) std::abort();
  }
  Fiber& fiber() { return fibers_[cur_]; }

 private:
  static constexpr size_t kStackBytes = 256 * 1024;
  static void entry() {
    EmuBlock* b = current();
    (*b->body_)();
    b->fibers_[b->cur_].state = kDone;  // returns to uc_link, the scheduler
  }
  std::vector<Fiber> fibers_;
  ucontext_t sched_;
  size_t cur_ = 0;
  const std::function<void()>* body_ = nullptr;
};

inline void __syncthreads() { EmuBlock::current()->wait(EmuBlock::kBarrier); }

// The barrier that also returns whether pred was non-zero in any thread of the block.
inline int __syncthreads_or(int pred) {
  EmuBlock* b = EmuBlock::current();
  b->fiber().pred = pred != 0;
  b->wait(EmuBlock::kBarrier);
  return b->fiber().result ? 1 : 0;
}

inline unsigned __ballot_sync(unsigned mask, bool pred) {
  if (mask != 0xffffffffu) throw std::logic_error("kernel emulation: only full-warp votes are emulated");
  EmuBlock* b = EmuBlock::current();
  b->fiber().pred = pred;
  b->wait(EmuBlock::kVote);
  b->fiber().pred = false;
  return b->fiber().ballot;
}

inline bool __any_sync(unsigned mask, bool pred) { return __ballot_sync(mask, pred) != 0; }

// __shfl_sync: lane src's v (src taken mod 32, as CUDA does for a whole warp).
inline int __shfl_sync(unsigned mask, int v, int src) {
  if (mask != 0xffffffffu) throw std::logic_error("kernel emulation: only full-warp shuffles are emulated");
  EmuBlock* b = EmuBlock::current();
  b->fiber().shfl_val = v;
  b->fiber().shfl_src = src & 31;
  b->wait(EmuBlock::kVote);
  return b->fiber().shfl_out;
}

inline int __shfl_xor_sync(unsigned mask, int v, int lane_mask) {
  return __shfl_sync(mask, v, static_cast<int>(threadIdx.x & 31u) ^ lane_mask);
}

// A thread runs alone until its next barrier or vote, so a read-modify-write is atomic here as it is in CUDA.
inline unsigned atomicMin(unsigned* p, unsigned v) {
  const unsigned old = *p;
  if (v < old) *p = v;
  return old;
}

inline unsigned atomicMax(unsigned* p, unsigned v) {
  const unsigned old = *p;
  if (v > old) *p = v;
  return old;
}

inline unsigned atomicAdd(unsigned* p, unsigned v) {
  const unsigned old = *p;
  *p = old + v;
  return old;
}

// Runs a kernel launch <<<blocks, threads>>> block by block.
inline void emu_launch(int blocks, int threads, const std::function<void()>& body) {
  EmuBlock b;
  for (int i = 0; i < blocks; ++i) b.run(i, threads, body);
}

}  // namespace
}  // namespace gme
