#include "encoder/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace gme {

int resolve_thread_count(int threads_key) {
  if (threads_key > 0) return threads_key;
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

RowScheduler::RowScheduler(int threads) {
  const int extra = threads > 1 ? threads - 1 : 0;
  threads_.reserve(static_cast<size_t>(extra));
  for (int i = 0; i < extra; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
}

RowScheduler::~RowScheduler() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void RowScheduler::submit(RowJob& job, int items) {
  {
    std::lock_guard<std::mutex> lock(m_);
    job.items_ = items;
    job.next_ = 0;
    job.done_ = 0;
    job.error_ = nullptr;
    job.queued_ = true;
    jobs_.push_back(&job);
  }
  work_cv_.notify_all();
}

bool RowScheduler::take(RowJob** job, int* item) {
  for (RowJob* j : jobs_)
    if (j->next_ < j->items_) {
      *job = j;
      *item = j->next_++;
      return true;
    }
  return false;
}

void RowScheduler::finish_item(RowJob& job, std::exception_ptr error) {
  if (error && !job.error_) job.error_ = error;
  if (++job.done_ == job.items_) done_cv_.notify_all();
}

namespace {
// Runs one item; its exception, if any, after the job was told to abort.
std::exception_ptr run_one(RowJob& job, int item, int worker) {
  try {
    job.run_item(item, worker);
    return nullptr;
  } catch (...) {
    std::exception_ptr e = std::current_exception();
    try {
      job.abort();
    } catch (...) {
    }
    return e;
  }
}
}  // namespace

void RowScheduler::loop(int worker) {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    RowJob* job;
    int item;
    if (take(&job, &item)) {
      lock.unlock();
      std::exception_ptr e = run_one(*job, item, worker);
      lock.lock();
      finish_item(*job, e);
      continue;
    }
    if (stop_) return;
    work_cv_.wait(lock);
  }
}

void RowScheduler::wait(RowJob& job) {
  std::unique_lock<std::mutex> lock(m_);
  if (!job.queued_) return;
  while (job.done_ < job.items_) {
    RowJob* j;
    int item;
    // Items of jobs queued after `job` too: they wait only for items already handed out.
    if (take(&j, &item)) {
      lock.unlock();
      std::exception_ptr e = run_one(*j, item, 0);
      lock.lock();
      finish_item(*j, e);
      continue;
    }
    done_cv_.wait(lock);
  }
  jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  job.queued_ = false;
  if (job.error_) {
    std::exception_ptr e = job.error_;
    job.error_ = nullptr;
    std::rethrow_exception(e);
  }
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
