// The encoder's worker threads (one scheduler per Encoder, joined by its destructor) and the progress counters the
// wavefront's workers publish and wait on (encoder/wavefront.cpp, doc/THREADS.md).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
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

class ProgressBoard;
class RowScheduler;

// Where a parked item waits: until counter `counter` of `board` reaches `value`, or the board is aborted.
struct ParkRequest {
  ProgressBoard* board = nullptr;
  int counter = 0, value = 0;
};

// A job of numbered items (macroblock rows, bands of plane rows) for a RowScheduler: items 0 .. items - 1 are
// handed out in order, each to one thread. An item may wait for items handed out before it (of its own job or of
// a job submitted earlier), never for later ones: those may not have a thread yet.
class RowJob {
 public:
  virtual ~RowJob() = default;
  // Runs item `item` on thread `worker` (0: the thread in RowScheduler::wait, 1 ..: the scheduler's own).
  virtual void run_item(int item, int worker) = 0;
  // Runs item `item`, or resumes it where it parked: true when it is done. An item that would wait for another
  // may instead park: it keeps its own state, fills `park` and returns false; its thread then takes other items,
  // and the item is resumed (on whichever thread is free, before any item handed out after it) once park's counter
  // has reached its value. Only waits that the items handed out before it satisfy while running may park; an item
  // blocking in any other wait must never need a parked item to go on. The default never parks.
  virtual bool run_or_park(int item, int worker, ParkRequest* park) {
    (void)park;
    run_item(item, worker);
    return true;
  }
  // Called once, on the thread whose item threw: wake every wait of the job's other items (and of later jobs'
  // items that wait for this one), which then return early.
  virtual void abort() {}

 private:
  friend class RowScheduler;
  int items_ = 0, next_ = 0, done_ = 0;  // under the scheduler's lock (done_: finished, not parked)
  bool queued_ = false;
  std::exception_ptr error_;
};

// The encoder's worker threads (threads - 1 of its own; the thread that waits for a job is the other one) and the
// jobs they work through: items of the job submitted first, then of the next. Several jobs may be in the queue at
// once, so the rows of the next picture start while the last rows of the one before are still being coded
// (doc/THREADS.md). One submitter (the encoder's coder thread), which while it waits runs items of the job it
// waits for only: an item of a later job (a row of the next picture) would hold it past that job's end, and what
// the submitter does next (finish that picture, queue the next search, start the picture after) is what the other
// threads will need next.
class RowScheduler {
 public:
  explicit RowScheduler(int threads);  // threads >= 1, the waiting thread included
  ~RowScheduler();
  RowScheduler(const RowScheduler&) = delete;
  RowScheduler& operator=(const RowScheduler&) = delete;

  int threads() const { return static_cast<int>(threads_.size()) + 1; }
  // Queues `job` with `items` items behind the jobs queued before it (the job must outlive its wait()).
  void submit(RowJob& job, int items);
  // Runs items of `job` (of every job, oldest first, where the scheduler has no thread of its own) until every
  // item of `job` has run; then the job leaves the queue, and the first exception one of its items threw is
  // rethrown. A job that was not submitted returns at once.
  void wait(RowJob& job);

  // A parked item's counter reached its value (ProgressBoard::raise, abort): a thread asleep for want of items
  // looks again.
  void wake(bool everyone);

  // Items that parked so far (RowJob::run_or_park), counted for tests and traces.
  long parks() const { return parks_.load(std::memory_order_relaxed); }

 private:
  struct Task {
    RowJob* job = nullptr;
    int item = 0;
    ParkRequest park;  // where a parked task waits
  };
  // The next task (under m_): of the oldest job that has one (of `only`, unless nullptr), its lowest parked item
  // that may go on, else its next item not handed out; false when none.
  bool take(Task* t, const RowJob* only = nullptr);
  // Runs `t` with m_ released; parks it again or counts it finished.
  void run(std::unique_lock<std::mutex>& lock, const Task& t, int worker);
  void park(const Task& t);        // under m_
  void unpark(size_t k);           // under m_
  // Tells at.board what is parked on it now (ProgressBoard::set_parked), under m_.
  void tell_board(const ParkRequest& at);
  void finish_item(RowJob& job, std::exception_ptr error);  // under m_
  void loop(int worker);

  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_;  // items to take, a job finished, or stop
  std::vector<RowJob*> jobs_;   // submitted, not yet waited for; oldest first
  std::vector<Task> parked_;
  std::atomic<long> parks_{0};
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
  // Spins a few microseconds for counter i to reach `value`: true when it did or the board is aborted (a wait then
  // returns at once), false when the caller would have to sleep (or park).
  bool spin_at_least(int i, int value);
  void abort();
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

  // A RowScheduler's parked items on counter i (under the scheduler's lock): the least value one of them waits for
  // (INT32_MAX: none), and how many items are parked on the board in all. raise() wakes the scheduler once the
  // counter reaches that value; abort() whenever any item is parked.
  void set_parked(int i, int least_value, int parked_on_board, RowScheduler* scheduler);
  // Whether an item parked on counter i until `value` may go on (the counter's value or abort, read after
  // set_parked's stores).
  bool parked_may_go_on(int i, int value) const {
    return slots_[static_cast<size_t>(i)].value.load(std::memory_order_seq_cst) >= value ||
           aborted_.load(std::memory_order_seq_cst);
  }

 private:
  struct alignas(64) Slot {  // one cache line each: neighbouring rows' counters are written by different threads
    std::atomic<int> value{0};
    std::atomic<int> sleepers{0};
    std::atomic<int> parked_need{INT32_MAX};
    std::condition_variable cv;
  };
  // After counter s reached `value` (a seq_cst store): wakes its sleepers, and the scheduler of items parked on it.
  void wake_waiters(Slot& s, int value);
  std::unique_ptr<Slot[]> slots_;
  size_t n_ = 0;
  std::atomic<bool> aborted_{false};
  std::atomic<int> parked_{0};
  std::atomic<RowScheduler*> scheduler_{nullptr};
  std::mutex m_;  // the sleepers' (a sleep is the slow path)
};

}  // namespace gme
