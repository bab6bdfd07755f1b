// The encoder's worker threads (one pool per Encoder, joined by its destructor) and the progress counters the
// wavefront's workers publish and wait on (encoder/wavefront.cpp, doc/THREADS.md).
#pragma once
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gme {

// The thread count a Threads value asks for: 0 means every core the system reports (at least 1); other values
// are taken as they are (the configuration checks the range).
int resolve_thread_count(int threads_key);

// A fixed set of threads. run(n, job) calls job(0) .. job(n - 1) concurrently, job(0) on the calling thread and the
// others on the pool's threads, and returns when every call has returned; the first exception any call threw is
// then rethrown. n is at most threads(). One run() at a time (the encoder's picture loop is its only caller).
class WorkerPool {
 public:
  explicit WorkerPool(int threads);  // threads >= 1, the calling thread included
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(threads_.size()) + 1; }
  void run(int n, const std::function<void(int worker)>& job);

 private:
  void loop(int worker);

  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  int active_ = 0;       // workers (besides the caller) the current run() uses
  int running_ = 0;      // of which still running
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;
};

// Counters (one per macroblock row, say) that workers raise and wait on. wait_at_least() spins briefly, then sleeps;
// raise() wakes the sleepers of that counter only, and only when there are any, so the common case costs one store
// and one load. abort() wakes every waiter for good: wait_at_least() then returns false (a worker that failed must
// not leave the others waiting).
class ProgressBoard {
 public:
  void reset(int n);  // n counters at 0, not aborted
  int get(int i) const { return slots_[static_cast<size_t>(i)].value.load(std::memory_order_acquire); }
  void raise(int i, int value);
  bool wait_at_least(int i, int value);
  void abort();
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

 private:
  struct alignas(64) Slot {  // one cache line each: neighbouring rows' counters are written by different threads
    std::atomic<int> value{0};
    std::atomic<int> sleepers{0};
    std::condition_variable cv;
  };
  std::unique_ptr<Slot[]> slots_;
  size_t n_ = 0;
  std::atomic<bool> aborted_{false};
  std::mutex m_;  // the sleepers' (a sleep is the slow path)
};

}  // namespace gme
