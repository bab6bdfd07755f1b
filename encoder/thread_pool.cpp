#include "encoder/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace gme {

int resolve_thread_count(int threads_key) {
  if (threads_key > 0) return threads_key;
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

WorkerPool::WorkerPool(int threads) {
  const int extra = threads > 1 ? threads - 1 : 0;
  errors_.resize(static_cast<size_t>(extra) + 1);
  threads_.reserve(static_cast<size_t>(extra));
  for (int i = 0; i < extra; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::loop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* job;
    {
      std::unique_lock<std::mutex> lock(m_);
      start_cv_.wait(lock, [&] { return stop_ || (generation_ != seen && worker <= active_); });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    try {
      (*job)(worker);
    } catch (...) {
      errors_[static_cast<size_t>(worker)] = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(m_);
    if (--running_ == 0) done_cv_.notify_one();
  }
}

void WorkerPool::run(int n, const std::function<void(int)>& job) {
  if (n > threads()) n = threads();
  if (n < 1) return;
  for (std::exception_ptr& e : errors_) e = nullptr;
  if (n > 1) {
    std::lock_guard<std::mutex> lock(m_);
    job_ = &job;
    active_ = n - 1;
    running_ = n - 1;
    ++generation_;
  }
  if (n > 1) start_cv_.notify_all();
  try {
    job(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  if (n > 1) {
    std::unique_lock<std::mutex> lock(m_);
    done_cv_.wait(lock, [&] { return running_ == 0; });
    job_ = nullptr;
  }
  for (std::exception_ptr& e : errors_)
    if (e) std::rethrow_exception(e);
}

void ProgressBoard::reset(int n) {
  if (static_cast<size_t>(n) != n_) {
    slots_.reset(new Slot[static_cast<size_t>(n)]);
    n_ = static_cast<size_t>(n);
  }
  for (size_t i = 0; i < n_; ++i) slots_[i].value.store(0, std::memory_order_relaxed);
  aborted_.store(false, std::memory_order_release);
}

void ProgressBoard::raise(int i, int value) {
  Slot& s = slots_[static_cast<size_t>(i)];
  // seq_cst store, then seq_cst load of the sleepers: a waiter that registered before this store is seen here, and
  // one that registers after it sees the value (the waiter does the same pair in the other order).
  s.value.store(value, std::memory_order_seq_cst);
  if (s.sleepers.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(m_);  // a sleeper between its check and its wait holds the lock: no lost wake-up
    s.cv.notify_all();
  }
}

void ProgressBoard::abort() {
  aborted_.store(true, std::memory_order_seq_cst);
  std::lock_guard<std::mutex> lock(m_);
  for (size_t i = 0; i < n_; ++i) slots_[i].cv.notify_all();
}

bool ProgressBoard::wait_at_least(int i, int value) {
  Slot& s = slots_[static_cast<size_t>(i)];
  if (s.value.load(std::memory_order_acquire) >= value) return true;
  // A neighbouring row is usually a fraction of a macroblock behind: spin a few microseconds, then yield the core a
  // while (the thread being waited for may be waiting for this core: more threads than cores), then sleep (a sleep
  // and wake-up cost tens of microseconds, a macroblock a few to a hundred).
  for (int k = 0; k < 100; ++k) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
    if (s.value.load(std::memory_order_acquire) >= value) return true;
  }
  for (int k = 0; k < 50; ++k) {
    std::this_thread::yield();
    if (s.value.load(std::memory_order_acquire) >= value) return true;
    if (aborted_.load(std::memory_order_relaxed)) return false;
  }
  s.sleepers.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(m_);
    s.cv.wait(lock, [&] {
      return s.value.load(std::memory_order_seq_cst) >= value || aborted_.load(std::memory_order_seq_cst);
    });
  }
  s.sleepers.fetch_sub(1, std::memory_order_relaxed);
  return s.value.load(std::memory_order_acquire) >= value;
}

}  // namespace gme
