// The encoder's worker threads (one scheduler per Encoder, joined by its destructor) and the progress counters the
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

// A job of numbered items (macroblock rows, bands of plane rows) for a RowScheduler: items 0 .. items - 1 are
// handed out in order, each to one thread. An item may wait for items handed out before it (of its own job or of
// a job submitted earlier), never for later ones: those may not have a thread yet.
class RowJob {
 public:
  virtual ~RowJob() = default;
  // Runs item `item` on thread `worker` (0: the thread in RowScheduler::wait, 1 ..: the scheduler's own).
  virtual void run_item(int item, int worker) = 0;
  // Called once, on the thread whose item threw: wake every wait of the job's other items (and of later jobs'
  // items that wait for this one), which then return early.
  virtual void abort() {}

 private:
  friend class RowScheduler;
  int items_ = 0, next_ = 0, done_ = 0;  // under the scheduler's lock
  bool queued_ = false;
  std::exception_ptr error_;
};

// The encoder's worker threads (threads - 1 of its own; the thread that waits for a job is the other one) and the
// jobs they work through: items of the job submitted first, then of the next. Several jobs may be in the queue at
// once, so the rows of the next picture start while the last rows of the one before are still being coded
// (doc/THREADS.md). One submitter (the encoder's coder thread).
class RowScheduler {
 public:
  explicit RowScheduler(int threads);  // threads >= 1, the waiting thread included
  ~RowScheduler();
  RowScheduler(const RowScheduler&) = delete;
  RowScheduler& operator=(const RowScheduler&) = delete;

  int threads() const { return static_cast<int>(threads_.size()) + 1; }
  // Queues `job` with `items` items behind the jobs queued before it (the job must outlive its wait()).
  void submit(RowJob& job, int items);
  // Runs items of the queue, oldest job first, until every item of `job` has run; then the job leaves the queue,
  // and the first exception one of its items threw is rethrown. A job that was not submitted returns at once.
  void wait(RowJob& job);

 private:
  // The oldest job with an item not handed out, and that item (under m_); false when none.
  bool take(RowJob** job, int* item);
  void finish_item(RowJob& job, std::exception_ptr error);  // under m_
  void loop(int worker);

  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<RowJob*> jobs_;  // submitted, not yet waited for; oldest first
  bool stop_ = false;
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
