// Host memory the search's caller keeps page-locked for it (PictureIntegerSearch::page_lock, Plane::lock): a
// current picture there goes to the device by DMA straight from the caller's rows, without the copy into the
// search's own page-locked buffer. Host code; included only by files nvcc compiles (gpu/me_cuda.cu).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gme {

// The ranges registered with cudaHostRegister, each held by a handle that unregisters it when its last holder lets
// go. Shared by the search and the handles, which may outlive it (a picture freed after its encoder's search).
class PageLocks : public std::enable_shared_from_this<PageLocks> {
 public:
  // reads: the stream whose DMAs read locked ranges (the search's copy stream).
  PageLocks(int device, cudaStream_t reads) : device_(device), reads_(reads) {}

  // A handle holding [data, data + bytes) page-locked, or null where CUDA refuses it (memory already registered,
  // the system's limit on locked memory): the search then stages those rows as it does any other memory's.
  std::shared_ptr<void> lock(const void* data, size_t bytes) {
    if (!data || bytes == 0) return nullptr;
    void* p = const_cast<void*>(data);  // the DMA only reads it
    if (cudaSetDevice(device_) != cudaSuccess || cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) {
      cudaGetLastError();  // not a device failure: the rows are staged instead
      return nullptr;
    }
    {
      std::lock_guard<std::mutex> g(m_);
      const uintptr_t b = reinterpret_cast<uintptr_t>(data);
      ranges_.push_back({b, b + bytes});
    }
    std::shared_ptr<PageLocks> self = shared_from_this();
    return std::shared_ptr<void>(p, [self](void* q) { self->unlock(q); });
  }

  // Whether [begin, end) lies inside one locked range.
  bool covers(const void* begin, const void* end) const {
    const uintptr_t b = reinterpret_cast<uintptr_t>(begin), e = reinterpret_cast<uintptr_t>(end);
    std::lock_guard<std::mutex> g(m_);
    return std::any_of(ranges_.begin(), ranges_.end(), [&](const Range& r) { return r.begin <= b && e <= r.end; });
  }

  // The search ends (after its device work): there is no stream left to wait for.
  void detach() {
    std::lock_guard<std::mutex> g(m_);
    reads_ = nullptr;
  }

 private:
  struct Range {
    uintptr_t begin, end;
  };

  // The range is forgotten first, so no DMA is queued from it after this; one already queued is waited for before
  // the pages are let go (the caller's contract ends a picture's reads before it frees the picture, but an aborted
  // encode may free it early).
  void unlock(void* p) {
    std::lock_guard<std::mutex> g(m_);
    const uintptr_t b = reinterpret_cast<uintptr_t>(p);
    ranges_.erase(std::remove_if(ranges_.begin(), ranges_.end(), [&](const Range& r) { return r.begin == b; }),
                  ranges_.end());
    if (reads_) cudaStreamSynchronize(reads_);
    cudaHostUnregister(p);
    cudaGetLastError();  // a failure here (a context already gone at exit) has nothing left to protect
  }

  const int device_;
  cudaStream_t reads_;
  mutable std::mutex m_;
  std::vector<Range> ranges_;
};

}  // namespace gme
