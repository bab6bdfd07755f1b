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
  cv_.notify_all();
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
  cv_.notify_all();
}

void RowScheduler::wake(bool everyone) {
  // Taking the lock orders this after a sleeper's look at the parked items: it is asleep, or it will see them.
  { std::lock_guard<std::mutex> lock(m_); }
  if (everyone) cv_.notify_all();
  else cv_.notify_one();
}

namespace {
bool may_go_on(const ParkRequest& p) {
  return p.board->parked_may_go_on(p.counter, p.value);
}
}  // namespace

bool RowScheduler::take(Task* t, const RowJob* only) {
  for (RowJob* j : jobs_) {
    if (only && j != only) continue;
    size_t best = parked_.size();
    int ready = 0;
    for (size_t k = 0; k < parked_.size(); ++k) {
      const Task& p = parked_[k];
      if (p.job != j || !may_go_on(p.park)) continue;
      ++ready;
      if (best == parked_.size() || p.item < parked_[best].item) best = k;
    }
    if (best < parked_.size()) {
      *t = parked_[best];
      unpark(best);
      // One counter may free several items (the picture before's final rows, several rows of the next picture),
      // and wake() woke one thread: it wakes the next.
      if (ready > 1) cv_.notify_one();
      return true;
    }
    if (j->next_ < j->items_) {
      t->job = j;
      t->item = j->next_++;
      return true;
    }
  }
  return false;
}

void RowScheduler::park(const Task& t) {
  parked_.push_back(t);
  parks_.fetch_add(1, std::memory_order_relaxed);
  // The next take() looks at the counter again after this: a raise() before it is seen there, one after it wakes.
  tell_board(t.park);
}

void RowScheduler::unpark(size_t k) {
  const ParkRequest was = parked_[k].park;
  parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(k));
  tell_board(was);
}

void RowScheduler::tell_board(const ParkRequest& at) {
  int least = INT32_MAX, on_board = 0;
  for (const Task& p : parked_)
    if (p.park.board == at.board) {
      ++on_board;
      if (p.park.counter == at.counter) least = std::min(least, p.park.value);
    }
  at.board->set_parked(at.counter, least, on_board, this);
}

void RowScheduler::finish_item(RowJob& job, std::exception_ptr error) {
  if (error && !job.error_) job.error_ = error;
  if (++job.done_ == job.items_) cv_.notify_all();
}

void RowScheduler::run(std::unique_lock<std::mutex>& lock, const Task& t, int worker) {
  lock.unlock();
  Task again = t;
  bool done = true;
  std::exception_ptr e;
  try {
    done = t.job->run_or_park(t.item, worker, &again.park);
  } catch (...) {
    e = std::current_exception();
    try {
      t.job->abort();  // wakes the job's other items' waits, parked ones included
    } catch (...) {
    }
  }
  lock.lock();
  if (done) finish_item(*t.job, e);
  else park(again);
}

void RowScheduler::loop(int worker) {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    Task t;
    if (take(&t)) {
      run(lock, t, worker);
      continue;
    }
    if (stop_) return;
    cv_.wait(lock);
  }
}

void RowScheduler::wait(RowJob& job) {
  std::unique_lock<std::mutex> lock(m_);
  if (!job.queued_) return;
  while (job.done_ < job.items_) {
    Task t;
    // Alone, this thread runs the jobs queued before `job` too (its items may wait for theirs).
    if (take(&t, threads_.empty() ? nullptr : &job)) {
      run(lock, t, 0);
      continue;
    }
    cv_.wait(lock);
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
  wake_waiters(s, value);
}

void ProgressBoard::wake_waiters(Slot& s, int value) {
  if (s.sleepers.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(m_);  // a sleeper between its check and its wait holds the lock: no lost wake-up
    s.cv.notify_all();
  }
  // The same pair for parked items: the scheduler looks at the counter after it parks one (RowScheduler::park).
  // (INT32_MAX: no item parked on this counter.)
  const int need = s.parked_need.load(std::memory_order_seq_cst);
  if (need != INT32_MAX && value >= need) scheduler_.load()->wake(false);
}

void ProgressBoard::abort() {
  aborted_.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(m_);
    for (size_t i = 0; i < n_; ++i) slots_[i].cv.notify_all();
  }
  if (parked_.load(std::memory_order_seq_cst) > 0) scheduler_.load()->wake(true);
}

void ProgressBoard::set_parked(int i, int least_value, int parked_on_board, RowScheduler* scheduler) {
  scheduler_.store(scheduler, std::memory_order_seq_cst);
  parked_.store(parked_on_board, std::memory_order_seq_cst);
  slots_[static_cast<size_t>(i)].parked_need.store(least_value, std::memory_order_seq_cst);
}

namespace {
// Up to `pauses` spin-loop pauses until the counter reaches `value`: true when it did.
bool spin_for(const std::atomic<int>& counter, int value, int pauses) {
  for (int k = 0; k < pauses; ++k) {
    if (counter.load(std::memory_order_acquire) >= value) return true;
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
  return counter.load(std::memory_order_acquire) >= value;
}
}  // namespace

bool ProgressBoard::spin_at_least(int i, int value) {
  // Longer than wait_at_least's spin: the alternative is parking, a round trip through the scheduler's lock.
  return spin_for(slots_[static_cast<size_t>(i)].value, value, 200) || aborted_.load(std::memory_order_relaxed);
}

bool ProgressBoard::wait_at_least(int i, int value) {
  Slot& s = slots_[static_cast<size_t>(i)];
  // A neighbouring row is usually a fraction of a macroblock behind: spin a few microseconds, then yield the core a
  // while (the thread being waited for may be waiting for this core: more threads than cores), then sleep (a sleep
  // and wake-up cost tens of microseconds, a macroblock a few to a hundred).
  if (spin_for(s.value, value, 100)) return true;
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
