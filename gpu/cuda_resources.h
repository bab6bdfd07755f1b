// CUDA resources as RAII objects, and the error check every CUDA call goes through (gpu/me_cuda.cu). Host code;
// included only by files nvcc compiles (it needs cuda_runtime.h).
#pragma once
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gme {

// A failed CUDA call: the search catches it and answers from the twin from then on.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void cuda_check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw CudaError(std::string(what) + ": " + cudaGetErrorString(e) + " (" + file + ":" + std::to_string(line) +
                    ")");
}
#define CUDA_CHECK(call) ::gme::cuda_check((call), #call, __FILE__, __LINE__)
// Launch configuration errors show at once; execution errors surface at the next synchronising call.
#define CUDA_CHECK_LAUNCH(name) ::gme::cuda_check(cudaGetLastError(), name, __FILE__, __LINE__)

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { if (p_) cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  // Grows (contents lost) when smaller than n bytes.
  void reserve(size_t n) {
    if (n <= size_) return;
    if (p_) { cudaFree(p_); p_ = nullptr; size_ = 0; }
    CUDA_CHECK(cudaMalloc(&p_, n));
    size_ = n;
  }
  template <typename T> T* as() const { return static_cast<T*>(p_); }
  size_t size() const { return size_; }

 private:
  void* p_ = nullptr;
  size_t size_ = 0;
};

// Page-locked host memory, mapped into the device's address space (kernels read and write it over PCIe): the only
// kind cudaMemcpyAsync copies without staging it synchronously first. Buffers of kHugeMin bytes or more (the
// candidates, 3 MB at 640x480 K = 8, and the sub-pel tables, 52 MB) are read by the macroblock loop at scattered
// places, one partition's row per query: with 4 KB pages each macroblock's tables span 11 pages and a picture's
// 12,600, far beyond the TLB. They are mapped with transparent huge pages where the kernel offers them (madvise;
// 2 MB pages) and then page-locked with cudaHostRegister; anything that fails there falls back to cudaMallocHost
// (same bytes, 4 KB pages).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void reserve(size_t n) {
    if (n <= size_) return;
    release();
    if (n < kHugeMin || !map_huge(n)) {
      CUDA_CHECK(cudaMallocHost(&p_, n));
      size_ = n;
    }
    CUDA_CHECK(cudaHostGetDevicePointer(&device_, p_, 0));
  }
  template <typename T> T* as() const { return static_cast<T*>(p_); }
  template <typename T> T* device_as() const { return static_cast<T*>(device_); }

 private:
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kHugeMin = size_t{2} << 20;
  bool map_huge(size_t n) {
    const size_t len = (n + kHugePage - 1) / kHugePage * kHugePage;
    // Over-map by one huge page so the buffer can start on a 2 MB boundary.
    void* raw = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return false;
    const uintptr_t base = (reinterpret_cast<uintptr_t>(raw) + kHugePage - 1) & ~(kHugePage - 1);
    void* p = reinterpret_cast<void*>(base);
    madvise(p, len, MADV_HUGEPAGE);  // a hint: without THP the pages stay 4 KB, which is still correct
    if (cudaHostRegister(p, len, cudaHostRegisterDefault) != cudaSuccess) {
      cudaGetLastError();  // clear the error: the fallback is ordinary
      munmap(raw, len + kHugePage);
      return false;
    }
    p_ = p;
    size_ = n;
    map_ = raw;
    map_len_ = len + kHugePage;
    if (std::getenv("GME_CUDA_TRACE")) {  // whether the kernel gave huge pages (AnonHugePages of the process)
      std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
      char line[256];
      while (f && std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "AnonHugePages:", 14) == 0)
          std::fprintf(stderr, "gme: pinned %zu MB on huge pages where offered; process %s", n >> 20, line);
      if (f) std::fclose(f);
    }
    return true;
  }
  void release() {
    if (map_) {
      cudaHostUnregister(p_);
      munmap(map_, map_len_);
    } else if (p_) {
      cudaFreeHost(p_);
    }
    p_ = map_ = device_ = nullptr;
    size_ = map_len_ = 0;
  }
  void* p_ = nullptr;
  void* device_ = nullptr;  // p_ as kernels address it
  size_t size_ = 0;
  void* map_ = nullptr;  // the mmap'd region holding p_ (huge-page buffers), or nullptr (cudaMallocHost)
  size_t map_len_ = 0;
};

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  struct Urgent {};  // the device's greatest priority: its blocks are dispatched before other streams' waiting ones
  explicit Stream(Urgent) {
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, greatest));
  }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  explicit Event(unsigned flags) { CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

inline float elapsed_ms(const Event& a, const Event& b) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

}  // namespace gme
