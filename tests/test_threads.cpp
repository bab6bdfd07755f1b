// Threads (doc/THREADS.md): the pool and progress counters, the pieces the wavefront puts together (bit writer
// append, deblocking one macroblock at a time), and whole encodes in this process at several thread counts, which
// must give the same bytes, reconstructions and macroblock decisions as one thread. Built with ThreadSanitizer
// (doc/THREADS.md gives the command), the encodes are the race check of the threaded loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/bitstream.h"
#include "common/deblock.h"
#include "common/dsp.h"
#include "common/frame.h"
#include "common/halfpel.h"
#include "encoder/encoder.h"
#include "encoder/final_rows.h"
#include "encoder/params.h"
#include "encoder/picture.h"
#include "encoder/wavefront.h"
#include "encoder/slice.h"
#include "encoder/thread_pool.h"
#include "gpu/gpu_me.h"
#include "tests/dsp_tables.h"

namespace gme {
namespace {

// ---- RowScheduler and ProgressBoard ----------------------------------------------------------------------------

// A job whose items record which thread ran them, and optionally wait for each other.
class RecordingJob final : public RowJob {
 public:
  explicit RecordingJob(int items) : ran(static_cast<size_t>(items), -1) {}
  void run_item(int item, int worker) override {
    if (wait_all) {  // every item waits for all of them to have started: only concurrent threads get past this
      std::unique_lock<std::mutex> lock(m);
      ++arrived;
      cv.notify_all();
      if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return arrived == static_cast<int>(ran.size()); }))
        all_met = false;
    }
    if (throw_at == item) throw std::runtime_error("item " + std::to_string(item));
    ran[static_cast<size_t>(item)] = worker;
  }
  void abort() override { ++aborts; }
  std::vector<int> ran;
  bool wait_all = false;
  int throw_at = -1;
  std::atomic<int> aborts{0};
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  bool all_met = true;
};

TEST(Threads, SchedulerRunsEveryItemOnceOnEveryThread) {
  RowScheduler rows(4);
  ASSERT_EQ(rows.threads(), 4);
  RecordingJob job(4);
  job.wait_all = true;  // 4 items meet only if the 3 threads and the waiting one each run one
  rows.submit(job, 4);
  rows.wait(job);
  EXPECT_TRUE(job.all_met) << "the items did not run at the same time";
  std::vector<int> workers = job.ran;
  std::sort(workers.begin(), workers.end());
  EXPECT_EQ(workers, (std::vector<int>{0, 1, 2, 3}));
  RecordingJob many(1000);
  rows.submit(many, 1000);
  rows.wait(many);
  for (int w : many.ran) ASSERT_TRUE(w >= 0 && w < 4);
  RecordingJob none(0);
  rows.submit(none, 0);
  rows.wait(none);  // nothing to run
  RecordingJob never(1);
  rows.wait(never);  // not submitted: returns at once
  EXPECT_EQ(never.ran[0], -1);
}

// Jobs run oldest first: an item of a later job may wait for an item of an earlier one, whatever the thread count
// (one thread: the waiting thread runs them all, in order).
TEST(Threads, SchedulerRunsOlderJobsFirstSoLaterItemsMayWaitForThem) {
  for (int threads : {1, 2, 5}) {
    RowScheduler rows(threads);
    ProgressBoard board;
    board.reset(1);
    class Producer final : public RowJob {
     public:
      explicit Producer(ProgressBoard& b) : b_(b) {}
      void run_item(int item, int) override {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        b_.raise(0, item + 1);  // items are handed out in order; with several threads they may finish out of it
      }
      ProgressBoard& b_;
    } first(board);
    class Consumer final : public RowJob {
     public:
      explicit Consumer(ProgressBoard& b) : b_(b) {}
      void run_item(int item, int) override {
        if (!b_.wait_at_least(0, 1) || item < 0) ok = false;
      }
      ProgressBoard& b_;
      std::atomic<bool> ok{true};
    } second(board);
    rows.submit(first, 1);
    rows.submit(second, 20);
    rows.wait(first);
    rows.wait(second);
    EXPECT_TRUE(second.ok.load()) << threads << " threads";
  }
}

// The waiting thread runs only items of the job it waits for, where the scheduler has threads of its own: the
// coder thread, waiting for a picture's rows, must not start a row of the next picture that would hold it past the
// picture's end. The first job's item is already running on another thread when the waiter comes, so a waiter that
// took later jobs' items would take the second job's at once.
TEST(Threads, WaitingThreadRunsOnlyItemsOfItsJob) {
  RowScheduler rows(3);
  std::atomic<bool> started{false}, finished{false};
  class Slow final : public RowJob {
   public:
    Slow(std::atomic<bool>& s, std::atomic<bool>& f) : started_(s), finished_(f) {}
    void run_item(int, int) override {
      started_ = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      finished_ = true;
    }
    std::atomic<bool>& started_;
    std::atomic<bool>& finished_;
  } slow(started, finished);
  class Later final : public RowJob {
   public:
    explicit Later(std::atomic<bool>& f) : finished_(f) {}
    void run_item(int, int worker) override {
      if (worker == 0 && !finished_) ++taken_by_waiter;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++ran;
    }
    std::atomic<bool>& finished_;
    std::atomic<int> taken_by_waiter{0}, ran{0};
  } later(finished);
  rows.submit(slow, 1);
  while (!started) std::this_thread::yield();  // on a thread of the scheduler's own: this one is not waiting yet
  rows.submit(later, 20);
  rows.wait(slow);
  rows.wait(later);
  EXPECT_EQ(later.taken_by_waiter.load(), 0) << "the waiting thread ran items of a later job";
  EXPECT_EQ(later.ran.load(), 20);
}

TEST(Threads, SchedulerRethrowsAnItemsExceptionAndStaysUsable) {
  for (int threads : {1, 3}) {
    RowScheduler rows(threads);
    RecordingJob bad(50);
    bad.throw_at = 17;
    rows.submit(bad, 50);
    EXPECT_THROW(rows.wait(bad), std::runtime_error);
    EXPECT_EQ(bad.aborts.load(), 1);
    RecordingJob good(10);
    rows.submit(good, 10);
    rows.wait(good);
    for (int w : good.ran) EXPECT_GE(w, 0);
  }
}

// A parked item frees its thread: with three threads, items 1 and 2 of the first job follow item 0 step by step
// and park whenever they are ahead, so the second job's items run on a thread one of them had while item 0 still
// goes on (at least one of them is on a thread of the scheduler's own: the waiting thread takes only items of the
// job it waits for). Item 0 halfway waits (a few seconds at most) for the second job's items: a scheduler whose
// waits block keeps all three threads in the first job, so they run only after item 0 ends and the order below
// fails. Every step of items 1 and 2 still comes after the step it follows, wherever it resumes.
TEST(Threads, ParkedItemsLeaveTheirThreadToOtherItems) {
  RowScheduler rows(3);
  ProgressBoard board;
  board.reset(3);
  std::mutex m;
  std::vector<std::string> events;
  auto note = [&](const std::string& e) {
    std::lock_guard<std::mutex> lock(m);
    events.push_back(e);
  };
  constexpr int kSteps = 20;
  class Chain final : public RowJob {
   public:
    Chain(ProgressBoard& b, std::function<void(const std::string&)> note) : b_(b), note_(std::move(note)) {}
    void run_item(int item, int worker) override { run_or_park(item, worker, nullptr); }
    bool run_or_park(int item, int, ParkRequest* park) override {
      for (int& step = next_[item]; step < kSteps; ++step) {
        if (item == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          if (step == kSteps / 2) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (quick_done.load() < 3 && std::chrono::steady_clock::now() < deadline)
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        } else if (!b_.spin_at_least(0, step + 1)) {
          if (park) {
            *park = ParkRequest{&b_, 0, step + 1};
            ++parks;
            return false;
          }
          if (!b_.wait_at_least(0, step + 1)) return true;
        }
        if (item > 0 && b_.get(0) <= step) ok = false;  // ahead of the step it follows
        b_.raise(item, step + 1);
      }
      note_("chain " + std::to_string(item));
      return true;
    }
    ProgressBoard& b_;
    std::function<void(const std::string&)> note_;
    int next_[3] = {0, 0, 0};  // each item's next step (its own thread at a time)
    std::atomic<int> parks{0};
    std::atomic<bool> ok{true};
    std::atomic<int> quick_done{0};
  } chain(board, note);
  class Quick final : public RowJob {
   public:
    Quick(std::function<void(const std::string&)> note, std::atomic<int>& done) : note_(std::move(note)), done_(done) {}
    void run_item(int item, int) override {
      note_("quick " + std::to_string(item));
      ++done_;
    }
    std::function<void(const std::string&)> note_;
    std::atomic<int>& done_;
  } quick(note, chain.quick_done);
  rows.submit(chain, 3);
  rows.submit(quick, 3);
  rows.wait(chain);
  rows.wait(quick);
  EXPECT_TRUE(chain.ok.load());
  EXPECT_GT(chain.parks.load(), 0);
  EXPECT_GE(rows.parks(), chain.parks.load());
  const auto at = [&](const std::string& e) { return std::find(events.begin(), events.end(), e) - events.begin(); };
  ASSERT_EQ(events.size(), 6u);
  for (int i = 0; i < 3; ++i)
    EXPECT_LT(at("quick " + std::to_string(i)), at("chain 0")) << "a parked item kept its thread";
}

// An item parked when another item of its job fails is resumed by the abort and unwinds; the scheduler rethrows
// the failure and runs the next job.
TEST(Threads, AbortResumesParkedItems) {
  for (int threads : {1, 2, 4}) {
    RowScheduler rows(threads);
    ProgressBoard board;
    board.reset(1);
    class Failing final : public RowJob {
     public:
      explicit Failing(ProgressBoard& b) : b_(b) {}
      void run_item(int item, int worker) override { run_or_park(item, worker, nullptr); }
      bool run_or_park(int item, int, ParkRequest* park) override {
        if (item == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          throw std::runtime_error("item 0");
        }
        if (b_.spin_at_least(0, 1)) {  // only the abort gets it here (nothing raises the counter)
          if (!b_.wait_at_least(0, 1)) ++unwound;
          return true;
        }
        *park = ParkRequest{&b_, 0, 1};
        return false;
      }
      void abort() override { b_.abort(); }
      ProgressBoard& b_;
      std::atomic<int> unwound{0};
    } job(board);
    rows.submit(job, 6);
    EXPECT_THROW(rows.wait(job), std::runtime_error) << threads << " threads";
    EXPECT_EQ(job.unwound.load(), 5) << threads << " threads";
    RecordingJob good(10);
    rows.submit(good, 10);
    rows.wait(good);
    for (int w : good.ran) EXPECT_GE(w, 0);
  }
}

TEST(Threads, ResolveThreadCount) {
  EXPECT_EQ(resolve_thread_count(1), 1);
  EXPECT_EQ(resolve_thread_count(6), 6);
  EXPECT_GE(resolve_thread_count(0), 1);  // every core the system reports
  const unsigned hw = std::thread::hardware_concurrency();
  if (hw > 0) {
    EXPECT_EQ(resolve_thread_count(0), static_cast<int>(hw));
  }
}

TEST(Threads, ProgressBoardWaitsForTheValueAndAbortReleasesWaiters) {
  ProgressBoard board;
  board.reset(2);
  std::vector<int> data(1000, 0);
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) {
      data[static_cast<size_t>(i)] = i * 3;  // published by raise()
      board.raise(0, i + 1);
      if (i % 97 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // the waiter sleeps too
    }
  });
  bool ok = true;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(board.wait_at_least(0, i + 1));
    ok &= data[static_cast<size_t>(i)] == i * 3;
  }
  producer.join();
  EXPECT_TRUE(ok);
  std::thread waiter([&] { EXPECT_FALSE(board.wait_at_least(1, 5)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  board.abort();
  waiter.join();
  EXPECT_TRUE(board.aborted());
  board.reset(2);
  EXPECT_FALSE(board.aborted());
  EXPECT_EQ(board.get(0), 0);
}

// ---- The pieces the wavefront puts together -------------------------------------------------------------------

// BitWriter::append: pieces of one writer's bits, at every alignment of source and destination, give the bits
// written directly.
TEST(Threads, BitWriterAppendCopiesAnyBitRange) {
  std::mt19937 rng(19);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::pair<int, uint32_t>> codes;  // (bits, value)
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const int bits = 1 + static_cast<int>(rng() % 32);
      codes.push_back({bits, static_cast<uint32_t>(rng()) & (bits == 32 ? ~0u : (1u << bits) - 1u)});
    }
    BitWriter src, direct, copied;
    const int lead = static_cast<int>(rng() % 13);  // the destination's own bits first, any alignment
    direct.put(lead, 0x5A5u & ((1u << lead) - 1u));
    copied.put(lead, 0x5A5u & ((1u << lead) - 1u));
    for (auto [b, v] : codes) {
      src.put(b, v);
      direct.put(b, v);
    }
    // Cut src at random points and append the pieces in order.
    int64_t at = 0;
    while (at < src.bits()) {
      const int64_t len = std::min<int64_t>(src.bits() - at, 1 + static_cast<int64_t>(rng() % 70));
      copied.append(src, at, len);
      at += len;
    }
    ASSERT_EQ(copied.bits(), direct.bits()) << "trial " << trial;
    copied.rbsp_trailing_bits();
    direct.rbsp_trailing_bits();
    ASSERT_EQ(copied.bytes(), direct.bytes()) << "trial " << trial;
  }
}

// A random picture with random macroblock data: intra and inter types, QPs, vectors, references and coefficients,
// two slices.
void random_picture(std::mt19937& rng, int mbw, int mbh, Frame* f, std::vector<MbInfo>* mbs) {
  f->alloc(16 * mbw, 16 * mbh, 16 * mbw, 16 * mbh);
  for (Plane& p : f->plane)
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x)  // smooth enough that the filters change samples, with steps at edges
        p.at(x, y)[0] = static_cast<uint8_t>(100 + ((x / 4 + y / 4) % 3) * 9 + static_cast<int>(rng() % 7));
  mbs->assign(static_cast<size_t>(mbw) * mbh, MbInfo());
  for (size_t i = 0; i < mbs->size(); ++i) {
    MbInfo& m = (*mbs)[i];
    m.slice_id = i < mbs->size() / 3 ? 0 : 1;
    m.type = rng() % 4 == 0 ? MbType::I16x16 : MbType::P16x16;
    m.qp = 20 + static_cast<int>(rng() % 25);
    m.nonzero_luma_mask = static_cast<uint16_t>(rng());
    for (int k = 0; k < 4; ++k) {
      m.ref_idx[k] = m.is_intra() ? -1 : static_cast<int8_t>(rng() % 2);
      m.ref_id[k] = m.is_intra() ? -1 : m.ref_idx[k] + 10;
    }
    for (MV& v : m.mv) v = m.is_intra() ? MV() : MV(static_cast<int>(rng() % 9) - 4, static_cast<int>(rng() % 9) - 4);
  }
}

// The reconstruction's borders, extended row by row as the wavefront deblocks (encoder/final_rows.h): a row's
// sides only once the row is final (the row below still changes the last 3 luma rows and the last chroma row of
// the one above), and in the end the same border as extend_borders() gives.
TEST(Threads, FinalRowsExtendTheBordersOfFinalRowsOnly) {
  const int mb_h = 4;
  Frame f;
  f.alloc(48, 16 * mb_h, 48, 16 * mb_h);
  std::mt19937 rng(7);
  for (Plane& p : f.plane)
    for (uint8_t& v : p.storage) v = static_cast<uint8_t>(rng());
  const Frame before = f;
  Frame expected = f;
  expected.extend_borders();
  const auto same_row = [](const Plane& a, const Plane& b, int y) {
    return std::memcmp(a.row(y) - a.pad, b.row(y) - b.pad, static_cast<size_t>(a.stride)) == 0;
  };
  FinalRows rows(f, mb_h, nullptr);
  for (int y = 0; y < mb_h; ++y) {
    EXPECT_FALSE(rows.borders_extended());
    rows.row_deblocked(y);
    for (int c = 0; c < 3; ++c) {
      const Plane& p = f.plane[c];
      const int unit = c == 0 ? 16 : 8, unfinished = c == 0 ? 3 : 1;
      const int final_rows = y == mb_h - 1 ? p.height : unit * (y + 1) - unfinished;
      for (int r = -p.pad; r < final_rows; ++r)
        ASSERT_TRUE(same_row(p, expected.plane[c], r)) << "plane " << c << " row " << r << " after mb row " << y;
      for (int r = final_rows; y < mb_h - 1 && r < p.height + p.pad; ++r)
        ASSERT_TRUE(same_row(p, before.plane[c], r)) << "plane " << c << " row " << r << " touched after mb row " << y;
    }
  }
  EXPECT_TRUE(rows.borders_extended());
  for (int c = 0; c < 3; ++c) EXPECT_EQ(f.plane[c].storage, expected.plane[c].storage) << "plane " << c;
}

// The half-pel planes of a reference built row by row as its rows become final (FinalRows with planes, for the next
// picture's rows that start before this picture is done): after row y, the plane rows that row_for_luma promises are
// those of the whole build, and so is every row in the end; wait_final() waits for the rows in order and returns
// false once the picture is aborted.
TEST(Threads, FinalRowsBuildThePlanesRowByRow) {
  const int mb_h = 5;
  Frame truth, f;
  truth.alloc(64, 16 * mb_h, 64, 16 * mb_h);
  f.alloc(64, 16 * mb_h, 64, 16 * mb_h);
  std::mt19937 rng(11);
  for (Frame* x : {&truth, &f})  // f's rows hold other samples until they are final (as deblocking still changes them)
    for (Plane& p : x->plane)
      for (uint8_t& v : p.storage) v = static_cast<uint8_t>(rng());
  const auto finalise = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) std::memcpy(f.plane[0].row(y), truth.plane[0].row(y), 64);
  };
  const HalfpelFuncs& hp = dsp_here().halfpel;
  HalfpelPlanes want, got;
  build_halfpel_planes(hp, truth.plane[0], &want);
  prepare_halfpel_planes(f.plane[0], &got);
  const auto same_rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y)
      for (const auto& [a, b] : {std::pair<const Plane*, const Plane*>{&got.g, &want.g}, {&got.b, &want.b},
                                 {&got.h, &want.h}, {&got.j, &want.j}})
        if (std::memcmp(a->row(y) - a->pad, b->row(y) - b->pad, static_cast<size_t>(a->stride)) != 0) return false;
    return true;
  };
  FinalRows rows(f, mb_h, nullptr, &hp, &got);
  HalfpelScratch scratch;
  std::atomic<bool> released{false};
  std::thread waiter([&] {
    EXPECT_TRUE(rows.wait_final(2));
    released = true;
  });
  for (int y = 0; y < mb_h; ++y) {
    if (y == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      EXPECT_FALSE(released.load()) << "wait_final(2) returned before row 2 was final";
    }
    finalise(y == 0 ? 0 : 16 * y - 3, y == mb_h - 1 ? 16 * mb_h : 16 * y + 13);
    ASSERT_TRUE(rows.row_deblocked(y, &scratch));
    for (int luma = 1; luma <= 16 * mb_h + kHalfpelPad; ++luma) {
      if (rows.row_for_luma(luma) > y) continue;
      ASSERT_TRUE(same_rows(-kHalfpelPad, luma)) << "planes above luma row " << luma << " not built after row " << y;
    }
  }
  waiter.join();
  EXPECT_TRUE(released.load());
  EXPECT_TRUE(same_rows(-kHalfpelPad, 16 * mb_h + kHalfpelPad));
  EXPECT_TRUE(rows.borders_extended());
  FinalRows aborted(f, mb_h, nullptr);
  std::thread stuck([&] { EXPECT_FALSE(aborted.wait_final(1)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  aborted.abort();
  stuck.join();
}

// MacroblockDeblocker in another order than raster (anti-diagonals, as a wavefront with a lag of two filters them)
// gives deblock_picture's picture; an order that breaks its rule - (x, y) before (x + 1, y - 1) - does not, so the
// rule is the one that matters.
TEST(Threads, DeblockingInWavefrontOrderIsRasterOrders) {
  std::mt19937 rng(7);
  const int mbw = 6, mbh = 5;
  for (int idc : {0, 2}) {
    Frame pic;
    std::vector<MbInfo> mbs;
    random_picture(rng, mbw, mbh, &pic, &mbs);
    const std::vector<SliceDeblockParams> params(2, SliceDeblockParams{idc, 1, -1});
    Frame raster = pic, wave = pic, wrong = pic;
    const DeblockFuncs& f = dsp_here().deblock;
    deblock_picture(f, raster, mbs.data(), mbw, mbh, params, 2);
    const MacroblockDeblocker dw(f, wave, mbs.data(), mbw, params, 2);
    for (int d = 0; d < mbw + 2 * mbh; ++d)  // (x, y) on diagonal x + 2y: after (x - 1, y) and (x + 1, y - 1)
      for (int y = 0; y < mbh; ++y) {
        const int x = d - 2 * y;
        if (x >= 0 && x < mbw) dw.filter(x, y);
      }
    const MacroblockDeblocker dr(f, wrong, mbs.data(), mbw, params, 2);
    for (int d = 0; d < mbw + mbh; ++d)  // diagonal x + y, bottom up: (x, y) before (x + 1, y - 1)
      for (int y = mbh - 1; y >= 0; --y) {
        const int x = d - y;
        if (x >= 0 && x < mbw) dr.filter(x, y);
      }
    for (int c = 0; c < 3; ++c) {
      EXPECT_TRUE(wave.plane[c].storage == raster.plane[c].storage) << "plane " << c << " idc " << idc;
      EXPECT_FALSE(wrong.plane[c].storage == raster.plane[c].storage) << "plane " << c << " idc " << idc;
    }
    EXPECT_FALSE(raster.plane[0].storage == pic.plane[0].storage);  // the filter did something
  }
}

// ---- Whole encodes ----------------------------------------------------------------------------------------------

// A picture with a static textured background (P_Skip runs across rows), a textured block moving over it, a noisy
// corner (intra macroblocks in P pictures, I_PCM at low QP) and a flat band.
Frame test_frame(int w, int h, int t) {
  Frame f;
  f.alloc((w + 15) / 16 * 16, (h + 15) / 16 * 16, w, h);
  std::mt19937 noise(1000 + t);
  for (int c = 0; c < 3; ++c) {
    Plane& p = f.plane[c];
    const int s = c ? 2 : 1;  // chroma subsampling
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x) {
        const int X = x * s, Y = y * s;
        int v = 90 + ((X * 7 + Y * 13) % 37) + ((X / 8 + Y / 8) % 2) * 20;  // the background
        const int bx = X - 3 * t - w / 4, by = Y - 2 * t - h / 4;
        if (bx >= 0 && bx < w / 3 && by >= 0 && by < h / 3) v = 40 + ((bx * bx + by * 3) % 53);  // moving block
        if (X >= w - w / 4 && Y >= h - h / 3) v = static_cast<int>(noise() % 256);                 // noise
        if (Y < h / 8) v = 128 + c;                                                                 // flat band
        p.at(x, y)[0] = static_cast<uint8_t>(v);
      }
  }
  f.extend_borders();
  return f;
}

PictureSearchFactory twin_factory() {
  return [](int, const DspFuncs& dsp, std::string* why) {
    if (why) why->clear();
    return make_picture_search_twin(dsp);
  };
}

struct Encoded {
  std::vector<uint8_t> bytes;
  std::vector<std::vector<uint8_t>> recon;  // every plane of each picture
  std::vector<std::vector<MbInfo>> mbs;
  std::vector<PictureResult> results;
};

// Adds a coded picture (its result, bytes, and the state's reconstruction and macroblocks) to `out`.
void add_picture(Encoded& out, const PictureResult& result, const std::vector<uint8_t>& bytes, const EncoderState& s) {
  out.results.push_back(result);
  out.bytes.insert(out.bytes.end(), bytes.begin(), bytes.end());
  std::vector<uint8_t> r;
  for (const Plane& pl : s.rec->plane) r.insert(r.end(), pl.storage.begin(), pl.storage.end());
  out.recon.push_back(std::move(r));
  out.mbs.push_back(s.mbs);
}

// Encodes p.frames_to_encode test frames at `threads` threads; in_order: the in-order loop (one macroblock after
// another, without the wavefront), the reference.
Encoded encode(EncoderParams p, int threads, bool in_order = false) {
  p.threads = threads;
  EncoderState s;
  init_encoder_state(s, p, p.gpu_integer_me ? twin_factory() : PictureSearchFactory());
  s.force_in_order = in_order;
  Encoded out;
  for (int n = 0; n < p.frames_to_encode; ++n) {
    std::vector<uint8_t> bytes;
    const PictureResult r = encode_picture(s, test_frame(p.source_width, p.source_height, n), bytes);
    add_picture(out, r, bytes, s);
  }
  return out;
}

bool same_mbinfo(const MbInfo& a, const MbInfo& b) {
  if (a.type != b.type || a.slice_id != b.slice_id || a.qp != b.qp || a.cbp != b.cbp ||
      a.nonzero_luma_mask != b.nonzero_luma_mask)
    return false;
  for (int i = 0; i < 16; ++i)
    if (a.total_coeff[i] != b.total_coeff[i] || a.intra4x4_mode[i] != b.intra4x4_mode[i] || !(a.mv[i] == b.mv[i]))
      return false;
  for (int i = 0; i < 4; ++i)
    if (a.ref_idx[i] != b.ref_idx[i] || a.ref_id[i] != b.ref_id[i] || a.sub_type[i] != b.sub_type[i]) return false;
  return true;
}

// The statistics by syntax element (JM's stats.dat: bit_use, MV bits per picture and macroblock type) must be exact
// at every thread count, like the bits themselves.
void expect_same_bit_use(const PictureResult& a, const PictureResult& b, const std::string& what) {
  EXPECT_EQ(a.bits, b.bits) << what;
  EXPECT_EQ(a.param_set_bits, b.param_set_bits) << what;
  const PictureBitUse &x = a.bit_use, &y = b.bit_use;
  EXPECT_EQ(x.header, y.header) << what << ": slice header bits";
  EXPECT_EQ(x.mode, y.mode) << what << ": mode bits";
  EXPECT_EQ(x.motion, y.motion) << what << ": motion bits";
  EXPECT_EQ(x.cbp, y.cbp) << what << ": cbp bits";
  EXPECT_EQ(x.dquant, y.dquant) << what << ": dquant bits";
  EXPECT_EQ(x.coeff_y, y.coeff_y) << what << ": luma coefficient bits";
  EXPECT_EQ(x.coeff_c, y.coeff_c) << what << ": chroma coefficient bits";
  for (int t = 0; t < 9; ++t) EXPECT_EQ(x.motion_by_type[t], y.motion_by_type[t]) << what << ": motion bits of type " << t;
}

void expect_same_encode(const Encoded& one, const Encoded& many, const std::string& what) {
  ASSERT_EQ(one.results.size(), many.results.size()) << what;
  ASSERT_EQ(one.bytes, many.bytes) << what << ": the stream differs";
  for (size_t i = 0; i < one.results.size(); ++i) {
    ASSERT_EQ(one.recon[i], many.recon[i]) << what << ": reconstruction of picture " << i;
    ASSERT_EQ(one.mbs[i].size(), many.mbs[i].size());
    for (size_t m = 0; m < one.mbs[i].size(); ++m)
      ASSERT_TRUE(same_mbinfo(one.mbs[i][m], many.mbs[i][m])) << what << ": picture " << i << " macroblock " << m;
    EXPECT_EQ(one.results[i].num_slices, many.results[i].num_slices) << what;
    for (int t = 0; t < 9; ++t) EXPECT_EQ(one.results[i].mb_counts[t], many.results[i].mb_counts[t]) << what;
    expect_same_bit_use(one.results[i], many.results[i], what + ": picture " + std::to_string(i));
  }
}

struct EncodeCase {
  const char* name;
  int width, height, frames;
  void (*set)(EncoderParams&);
};

void PrintTo(const EncodeCase& c, std::ostream* os) { *os << c.name; }

EncoderParams base(int w, int h, int frames) {
  EncoderParams p;
  p.source_width = w;
  p.source_height = h;
  p.frames_to_encode = frames;
  p.intra_period = 0;
  p.search_range = 8;
  p.qp_i = p.qp_p = 28;
  return p;
}

const EncodeCase kCases[] = {
    {"unmodified_rdo0_refs2", 208, 144, 4, [](EncoderParams& p) { p.num_ref_frames = 2; }},
    // RDOptimization 1 at QP 36: long P_Skip runs cross row ends, so rows start on a run they do not know yet.
    {"unmodified_rdo1_qp36", 208, 144, 4, [](EncoderParams& p) { p.rd_optimization = 1; p.qp_i = p.qp_p = 36; }},
    {"unmodified_rdo1_qp44_refs3", 160, 96, 5,
     [](EncoderParams& p) { p.rd_optimization = 1; p.qp_i = p.qp_p = 44; p.num_ref_frames = 3; }},
    {"gpu_twin_rdo0", 208, 144, 4, [](EncoderParams& p) { p.gpu_integer_me = 1; }},
    {"gpu_twin_rdo1_slices", 208, 144, 4,
     [](EncoderParams& p) { p.gpu_integer_me = 1; p.rd_optimization = 1; p.qp_i = p.qp_p = 36; p.slice_mode = 1; p.slice_argument = 17; }},
    {"gpu_twin_tables_center1", 80, 64, 4,
     [](EncoderParams& p) {
       p.gpu_integer_me = 1; p.gpu_subpel_distortion = 2; p.gpu_subpel_ranks = 2; p.gpu_search_center = 1; p.intra_period = 3;
     }},
    {"slices_of_7_constrained_intra_rdo1", 208, 144, 3,
     [](EncoderParams& p) { p.slice_mode = 1; p.slice_argument = 7; p.constrained_intra_pred = true; p.rd_optimization = 1; }},
    // SliceMode 2: slices end where the bytes say, so the wavefront decides speculatively and starts again.
    {"byte_slices", 208, 144, 3, [](EncoderParams& p) { p.slice_mode = 2; p.slice_argument = 120; }},
    {"byte_slices_rdo1_qp36", 208, 144, 4,
     [](EncoderParams& p) { p.slice_mode = 2; p.slice_argument = 60; p.rd_optimization = 1; p.qp_i = p.qp_p = 36; }},
    {"byte_slices_of_one_macroblock", 96, 64, 3, [](EncoderParams& p) { p.slice_mode = 2; p.slice_argument = 8; }},
    {"byte_slices_ipcm", 96, 64, 3,
     [](EncoderParams& p) {
       p.slice_mode = 2; p.slice_argument = 700; p.enable_ipcm = true; p.rd_optimization = 1; p.qp_i = p.qp_p = 2;
     }},
    {"gpu_twin_byte_slices", 208, 144, 4,
     [](EncoderParams& p) { p.gpu_integer_me = 1; p.slice_mode = 2; p.slice_argument = 150; p.intra_period = 3; }},
    {"ipcm_rdo1_qp2", 96, 64, 3,
     [](EncoderParams& p) { p.enable_ipcm = true; p.rd_optimization = 1; p.qp_i = p.qp_p = 2; p.intra_period = 2; }},
    {"one_macroblock", 16, 16, 3, [](EncoderParams& p) { p.rd_optimization = 1; }},
    {"tall_narrow", 48, 176, 3, [](EncoderParams& p) { p.rd_optimization = 1; p.qp_i = p.qp_p = 40; }},
    {"wide_two_rows", 400, 32, 3, [](EncoderParams& p) { p.intra_period = 1; }},
    // AdaptiveRounding chains the macroblocks (encoder/slice.h): the in-order loop at every thread count.
    {"adaptive_rounding_rdo1", 208, 144, 4,
     [](EncoderParams& p) { p.adaptive_rounding = true; p.adapt_rnd_chroma = true; p.rd_optimization = 1; p.num_ref_frames = 2; }},
    {"adaptive_rounding_gpu_twin_byte_slices", 208, 144, 4,
     [](EncoderParams& p) {
       p.adaptive_rounding = true; p.adapt_rnd_period = 5; p.gpu_integer_me = 1; p.slice_mode = 2; p.slice_argument = 150;
     }},
};

class ThreadedEncode : public ::testing::TestWithParam<EncodeCase> {};

// The wavefront at 1, 2, 3 and 7 threads against the in-order loop (at 1 thread: its own order, the reference).
TEST_P(ThreadedEncode, SameBytesAsTheInOrderLoopAtEveryThreadCount) {
  const EncodeCase& c = GetParam();
  EncoderParams p = base(c.width, c.height, c.frames);
  c.set(p);
  const Encoded reference = encode(p, 1, true);
  ASSERT_FALSE(reference.bytes.empty());
  // The cases must exercise what they are named after: several slices per picture, I_PCM macroblocks.
  int slices = 0, ipcm = 0;
  for (const PictureResult& r : reference.results) {
    slices += r.num_slices;
    ipcm += r.mb_counts[static_cast<int>(MbType::IPCM)];
  }
  if (p.slice_mode != 0) {
    EXPECT_GT(slices, 2 * c.frames) << c.name;
  }
  if (p.enable_ipcm) {
    EXPECT_GT(ipcm, 0) << c.name;
  }
  for (int threads : {1, 2, 3, 7})
    expect_same_encode(reference, encode(p, threads), std::string(c.name) + " at " + std::to_string(threads) + " threads");
}

INSTANTIATE_TEST_SUITE_P(Threads, ThreadedEncode, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<EncodeCase>& i) { return std::string(i.param.name); });

// ---- The picture boundary, pipelined ------------------------------------------------------------------------
// A picture-level search that takes searches queued ahead as a GPU does (it runs beside the CPU), answering from the
// twin, and checks what the encoder tells it: each search queued ahead is the request the next picture makes; the
// rows of its growing reference are reported in order, one report at a time, and every row reported holds then
// what the finished reconstruction holds.
struct ProbeCounts {
  int queued = 0, taken = 0, dropped = 0, incomplete = 0, rows_changed = 0, early = 0;
  std::atomic<int> stray{0}, shrinking{0}, overlapping{0};
};

class PipelineProbe final : public PictureIntegerSearch {
 public:
  PipelineProbe(const DspFuncs& dsp, ProbeCounts& counts) : twin_(make_picture_search_twin(dsp)), c_(counts) {}
  void search(const PictureSearchRequest& req, PictureCandidates& out) override {
    if (ahead_) {
      if (same_search_request(ahead_req_, req)) {
        ++c_.taken;
        const Plane& ref = *req.refs[0];
        if (reported_ != ref.height) ++c_.incomplete;
        for (int y = 0; y < reported_; ++y)
          if (std::memcmp(snapshot_.data() + static_cast<size_t>(y) * ref.width, ref.row(y), static_cast<size_t>(ref.width)) != 0)
            ++c_.rows_changed;
      } else {
        ++c_.dropped;
      }
      ahead_ = false;
    }
    twin_->search(req, out);
  }
  const char* name() const override { return "pipeline-probe"; }
  bool runs_beside_cpu() const override { return true; }
  bool search_ahead(const PictureSearchRequest& req, int growing) override {
    if (ahead_) ++c_.dropped;
    ahead_ = true;
    ahead_req_ = req;
    growing_ = growing;
    growing_id_ = req.ref_ids.at(static_cast<size_t>(growing));
    const Plane& g = *req.refs[static_cast<size_t>(growing)];
    snapshot_.assign(static_cast<size_t>(g.width) * g.height, 0);
    reported_ = 0;
    ++c_.queued;
    return true;
  }
  void reference_rows(const Plane& plane, int id, int rows) override {
    if (busy_.exchange(true)) ++c_.overlapping;
    if (!ahead_ || id != growing_id_ || &plane != ahead_req_.refs[static_cast<size_t>(growing_)]) {
      ++c_.stray;
    } else if (rows < reported_) {
      ++c_.shrinking;
    } else {
      for (int y = reported_; y < rows; ++y)
        std::memcpy(snapshot_.data() + static_cast<size_t>(y) * plane.width, plane.row(y), static_cast<size_t>(plane.width));
      if (rows < plane.height) ++c_.early;
      reported_ = rows;
    }
    busy_.store(false);
  }
  void preload(const Plane& plane, int id) override {
    if (ahead_ && id == growing_id_) reference_rows(plane, id, plane.height);
  }

 private:
  std::unique_ptr<PictureIntegerSearch> twin_;
  ProbeCounts& c_;
  bool ahead_ = false;
  PictureSearchRequest ahead_req_;
  int growing_ = 0, growing_id_ = -1, reported_ = 0;
  std::vector<uint8_t> snapshot_;
  std::atomic<bool> busy_{false};
};

// encode() with the probe and each picture's successor handed to encode_picture, as the Encoder queue does when
// it holds the next frame.
Encoded encode_with_next(EncoderParams p, int threads, ProbeCounts* counts) {
  p.threads = threads;
  EncoderState s;
  init_encoder_state(s, p, [counts](int, const DspFuncs& dsp, std::string* why) {
    if (why) why->clear();
    return std::unique_ptr<PictureIntegerSearch>(std::make_unique<PipelineProbe>(dsp, *counts));
  });
  std::vector<Frame> frames;
  for (int n = 0; n < p.frames_to_encode; ++n) frames.push_back(test_frame(p.source_width, p.source_height, n));
  Encoded out;
  for (int n = 0; n < p.frames_to_encode; ++n) {
    std::vector<uint8_t> bytes;
    const Frame* next = n + 1 < p.frames_to_encode ? &frames[static_cast<size_t>(n) + 1] : nullptr;
    const PictureResult r = encode_picture(s, frames[static_cast<size_t>(n)], bytes, next);
    add_picture(out, r, bytes, s);
  }
  return out;
}

TEST(Threads, NextPictureSearchStartsOnDeblockedRows) {
  // Pictures 0 and 4 are I; the search starts at picture 1. Queued ahead: during 1 (for 2), 2 (for 3) and 4 (for
  // 5); not for 4 (an I picture) nor after the last. Two references from picture 3 on.
  EncoderParams p = base(208, 144, 6);
  p.gpu_integer_me = 1;
  p.intra_period = 4;
  p.num_ref_frames = 2;
  p.gpu_subpel_distortion = 0;  // no sub-pel tables: the twin would compute them, for no decision of their own
  const Encoded serial = encode(p, 1);
  for (int threads : {1, 4}) {
    ProbeCounts counts;
    ProbeCounts* probe = &counts;
    const Encoded got = encode_with_next(p, threads, probe);
    const std::string what = std::to_string(threads) + " threads";
    expect_same_encode(serial, got, what);
    EXPECT_EQ(probe->queued, 3) << what;
    EXPECT_EQ(probe->taken, 3) << what;
    EXPECT_EQ(probe->dropped, 0) << what;
    EXPECT_EQ(probe->incomplete, 0) << what << ": the reference's last rows were not reported";
    EXPECT_EQ(probe->rows_changed, 0) << what << ": rows reported final changed afterwards";
    EXPECT_EQ(probe->stray.load(), 0) << what;
    EXPECT_EQ(probe->shrinking.load(), 0) << what;
    EXPECT_EQ(probe->overlapping.load(), 0) << what;
    if (threads > 1) {
      EXPECT_GT(probe->early, 0) << what << ": no rows reported while the picture was coded";
    }
  }
  // GPUSearchCenter = 1 centres the next picture's windows on this picture's vectors: nothing is queued ahead.
  p.gpu_search_center = 1;
  ProbeCounts counts;
  expect_same_encode(encode(p, 1), encode_with_next(p, 4, &counts), "GPUSearchCenter 1");
  EXPECT_EQ(counts.queued, 0);
}

// Through the Encoder queue on one thread: with a search that runs beside the CPU, push() codes a picture once its
// successor is pushed, so the successor's search is queued ahead however long the clip (not only while frames are
// held for the start-up); flush() codes the last. Same stream as the plain twin's.
TEST(Threads, EncoderQueueHoldsOnePictureForTheNextSearch) {
  EncoderParams p = base(208, 144, 6);
  p.gpu_integer_me = 1;
  p.intra_period = 4;
  p.gpu_subpel_distortion = 0;
  p.threads = 1;
  const Encoded serial = encode(p, 1);
  ProbeCounts counts;
  Encoder enc(p, [&counts](int, const DspFuncs& dsp, std::string* why) {
    if (why) why->clear();
    return std::unique_ptr<PictureIntegerSearch>(std::make_unique<PipelineProbe>(dsp, counts));
  });
  EXPECT_EQ(enc.integer_me_path(), "gpu: pipeline-probe");  // waits for the start-up: no picture is held for it
  std::vector<uint8_t> stream;
  EncodedPicture e;
  for (int n = 0; n < p.frames_to_encode; ++n) {
    enc.push(test_frame(p.source_width, p.source_height, n), n);
    if (n > 0) {
      ASSERT_TRUE(enc.pull(&e)) << "picture " << n - 1 << " is coded once picture " << n << " is pushed";
      EXPECT_EQ(e.user_index, n - 1);
      stream.insert(stream.end(), e.bytes.begin(), e.bytes.end());
    }
    EXPECT_FALSE(enc.pull(&e)) << "picture " << n << " waits for its successor";
  }
  enc.flush();
  while (enc.pull(&e)) stream.insert(stream.end(), e.bytes.begin(), e.bytes.end());
  EXPECT_TRUE(stream == serial.bytes);
  // Queued during pictures 0 (for 1), 1, 2 and 4 (for 5); not during 3 (4 is an I picture) nor the last.
  EXPECT_EQ(counts.queued, 4);
  EXPECT_EQ(counts.taken, counts.queued);
  EXPECT_EQ(counts.dropped, 0);
  EXPECT_EQ(counts.rows_changed, 0);
}

// Through the Encoder queue, with the GPU twin starting on its background thread while I pictures may be coded
// ahead of their turn: the same stream at 1 and 4 threads.
TEST(Threads, EncoderQueueGivesTheSameStream) {
  EncoderParams p = base(112, 80, 7);
  p.gpu_integer_me = 1;
  p.intra_period = 3;
  std::vector<uint8_t> streams[2];
  for (int k = 0; k < 2; ++k) {
    p.threads = k == 0 ? 1 : 4;
    Encoder enc(p, twin_factory());
    EncodedPicture e;
    for (int n = 0; n < p.frames_to_encode; ++n) {
      enc.push(test_frame(p.source_width, p.source_height, n), n);
      while (enc.pull(&e)) streams[k].insert(streams[k].end(), e.bytes.begin(), e.bytes.end());
    }
    enc.flush();
    while (enc.pull(&e)) streams[k].insert(streams[k].end(), e.bytes.begin(), e.bytes.end());
  }
  ASSERT_FALSE(streams[0].empty());
  EXPECT_TRUE(streams[0] == streams[1]);
}

// The same while the GPU search starts late (the factory waits for the test): with several threads the coder thread
// holds the P pictures, codes I pictures ahead and takes more input meanwhile; push() never waits for the start-up.
TEST(Threads, EncoderQueueWaitsForTheGpuStartUp) {
  EncoderParams p = base(96, 64, 14);
  p.gpu_integer_me = 1;
  p.intra_period = 4;
  std::vector<uint8_t> serial;
  {
    p.threads = 1;
    Encoder enc(p, twin_factory());
    EncodedPicture e;
    for (int n = 0; n < p.frames_to_encode; ++n) enc.push(test_frame(p.source_width, p.source_height, n), n);
    enc.flush();
    while (enc.pull(&e)) serial.insert(serial.end(), e.bytes.begin(), e.bytes.end());
  }
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  PictureSearchFactory gated = [&](int, const DspFuncs& dsp, std::string* why) {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return open; });
    if (why) why->clear();
    return make_picture_search_twin(dsp);
  };
  p.threads = 3;
  Encoder enc(p, gated);
  for (int n = 0; n < p.frames_to_encode; ++n) enc.push(test_frame(p.source_width, p.source_height, n), 100 + n);
  EXPECT_NE(enc.integer_me_path_so_far().find("starting"), std::string::npos);
  {
    std::lock_guard<std::mutex> lock(m);
    open = true;
  }
  cv.notify_all();
  enc.flush();
  std::vector<uint8_t> threaded;
  EncodedPicture e;
  for (int n = 0; enc.pull(&e); ++n) {
    EXPECT_EQ(e.user_index, 100 + n);
    threaded.insert(threaded.end(), e.bytes.begin(), e.bytes.end());
  }
  EXPECT_TRUE(threaded == serial);
  EXPECT_EQ(enc.integer_me_path(), "gpu: cpu-twin");
}

// With several threads pictures are coded on a thread of their own: a picture that cannot be coded (a frame of the
// wrong size) surfaces as the same error, from flush() or the next push(), and the encoder can still be destroyed.
TEST(Threads, EncoderQueueReportsACodingError) {
  EncoderParams p = base(64, 48, 3);
  p.threads = 3;
  Encoder enc(p);
  enc.push(test_frame(64, 48, 0), 0);
  enc.push(test_frame(80, 48, 1), 1);  // coded size 80x48, the encoder's is 64x48
  EXPECT_THROW(
      {
        enc.flush();
        enc.push(test_frame(64, 48, 2), 2);
      },
      std::runtime_error);
  EncodedPicture e;
  EXPECT_TRUE(enc.pull(&e));  // picture 0 was coded
  EXPECT_EQ(e.user_index, 0);
}

// Pictures in flight (doc/THREADS.md): a P picture's row starts once the picture before, still being coded, is final
// down to gate_luma_rows of its reference, which holds only if no vector reaches further than vector_reach; where
// the windows follow the vector predictors (RDOptimization 1), each macroblock waits for predictor_gate_luma_rows.
// Random pictures (nothing to track) spread the vectors over whole windows; every row any chosen vector reads (its
// block, the 6-tap filter's rows where it is fractional) must lie above the gate, and some must come near it, or
// the check would show nothing.
TEST(Threads, GateCoversEveryRowTheVectorsRead) {
  struct Case {
    const char* name;
    int gpu, range, refs, rdo;
  } cases[] = {{"unmodified_sr8", 0, 8, 1, 0},       {"unmodified_sr16_refs2", 0, 16, 2, 0},
               {"gpu_twin_sr8", 1, 8, 1, 0},         {"gpu_twin_sr16", 1, 16, 1, 0},
               {"unmodified_rdo1_sr8", 0, 8, 1, 1},  {"unmodified_rdo1_sr16_refs2", 0, 16, 2, 1}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    EncoderParams p = base(160, 128, 6);
    p.gpu_integer_me = k.gpu;
    p.search_range = k.range;
    p.num_ref_frames = k.refs;
    p.rd_optimization = k.rdo;
    const int reach = vector_reach(p), window = predictor_window(p);
    ASSERT_TRUE((reach > 0) != (window > 0)) << "one gate per configuration";
    EncoderState s;
    init_encoder_state(s, p, p.gpu_integer_me ? twin_factory() : PictureSearchFactory());
    std::mt19937 rng(5 + k.range);
    int farthest = 0, closest = INT32_MAX, checked = 0;
    Frame before;
    int beyond_range = 0;  // vectors further down than a window centred on (0, 0) reaches
    for (int n = 0; n < p.frames_to_encode; ++n) {
      Frame f;
      f.alloc(160, 128, 160, 128);
      for (int c = 0; c < 3; ++c) {
        Plane& pl = f.plane[c];
        for (int y = 0; y < pl.height; ++y)
          for (int x = 0; x < pl.width; ++x) pl.at(x, y)[0] = static_cast<uint8_t>(rng() % 256);
      }
      if (window > 0 && n > 0) {
        // Windows centred on predictors: with pictures unrelated to each other nearly every macroblock is intra.
        // Each macroblock is the picture before's at a random offset of up to 2 ranges, which the windows find
        // where their predictors bring them near, so the predictors carry the windows beyond the range.
        for (int by = 0; by < 8; ++by)
          for (int bx = 0; bx < 10; ++bx) {
            const int dx = static_cast<int>(rng() % (4 * k.range + 1)) - 2 * k.range;
            const int dy = static_cast<int>(rng() % (3 * k.range + 1)) - k.range;  // mostly down: the gate's side
            for (int c = 0; c < 3; ++c) {
              const int sh = c ? 1 : 0, size = 16 >> sh;
              const Plane& from = before.plane[c];
              Plane& to = f.plane[c];
              for (int y = 0; y < size; ++y)
                for (int x = 0; x < size; ++x) {
                  const int sx = std::clamp(bx * size + x + (dx >> sh), 0, from.width - 1);
                  const int sy = std::clamp(by * size + y + (dy >> sh), 0, from.height - 1);
                  to.at(bx * size + x, by * size + y)[0] = from.at(sx, sy)[0];
                }
            }
          }
      }
      f.extend_borders();
      if (window > 0) {
        before.alloc(160, 128, 160, 128);
        for (int c = 0; c < 3; ++c)
          for (int y = 0; y < f.plane[c].height; ++y)
            std::memcpy(before.plane[c].at(0, y), f.plane[c].at(0, y), static_cast<size_t>(f.plane[c].width));
      }
      std::vector<uint8_t> bytes;
      if (encode_picture(s, f, bytes).type != SliceType::P) continue;
      for (int m = 0; m < s.mb_w * s.mb_h; ++m) {
        const MbInfo& mb = s.mbs[static_cast<size_t>(m)];
        if (mb.is_intra()) continue;
        const int mb_y = m / s.mb_w;
        const int gate = window > 0 ? predictor_gate_luma_rows(s.mbs.data(), s.mb_w, m % s.mb_w, mb_y, window)
                                    : gate_luma_rows(mb_y, reach);
        for (int b = 0; b < 16; ++b) {
          const MV v = mb.mv[b];
          if (reach > 0) {
            ASSERT_LE(std::max(std::abs(v.x), std::abs(v.y)), 4 * reach + 3) << "picture " << n << " mb " << m;
          }
          const int bottom = 16 * mb_y + 4 * (b / 4) + 3 + (v.y >> 2) + ((v.y & 3) ? 3 : 0);
          ASSERT_LT(bottom, gate) << "picture " << n << " mb " << m << " block " << b;
          farthest = std::max(farthest, std::abs(v.y));
          beyond_range += window > 0 && v.y > 4 * window + 3;
          closest = std::min(closest, gate - bottom);
          ++checked;
        }
      }
    }
    EXPECT_GT(checked, 1000);
    if (reach > 0) {
      EXPECT_GE(farthest, 4 * reach * 3 / 4) << "the vectors stay far from the bound";
    }
    EXPECT_LE(closest, 8) << "the vectors stay far from the gate";
    if (window > 0) {
      EXPECT_GT(beyond_range, 0) << "no predictor took a window beyond its range";
    }
  }
}

// The case the RDOptimization 1 rows exist for must really arise: some P picture ends a row of macroblocks on
// P_Skip and starts the next with P_Skip in the same slice (the run crosses the row end).
TEST(Threads, SkipRunsCrossRowEnds) {
  EncoderParams p = base(208, 144, 4);
  p.rd_optimization = 1;
  p.qp_i = p.qp_p = 36;
  const Encoded e = encode(p, 1);
  const int mbw = 13;
  int crossings = 0;
  for (const std::vector<MbInfo>& pic : e.mbs)
    for (size_t m = mbw; m < pic.size(); m += mbw)
      crossings += pic[m - 1].type == MbType::PSkip && pic[m].type == MbType::PSkip;
  EXPECT_GT(crossings, 3);
}

TEST(Threads, MacroblockOrderByConfiguration) {
  EncoderParams p;
  EXPECT_FALSE(macroblocks_chain_in_order(p));
  EXPECT_STREQ(macroblock_order_name(p), "wavefront");
  p.slice_mode = 1;
  EXPECT_FALSE(macroblocks_chain_in_order(p));
  p.slice_mode = 2;
  EXPECT_FALSE(macroblocks_chain_in_order(p));
  EXPECT_STREQ(macroblock_order_name(p), "wavefront, speculative slices");
  p.adaptive_rounding = true;  // each macroblock's offsets depend on the updates of all before it
  EXPECT_TRUE(macroblocks_chain_in_order(p));
  EXPECT_STREQ(macroblock_order_name(p), "in order");
  p.slice_mode = 0;
  EXPECT_TRUE(macroblocks_chain_in_order(p));
  EXPECT_EQ(macroblocks_chain_in_order(p), RoundingState(rounding_config(p)).chains_macroblocks());
}

// The wavefront would code AdaptiveRounding's macroblocks with offsets that miss the updates of macroblocks on other
// rows: were such an encode not routed to the in-order loop, it would differ from it. The in-order loop's bytes
// must also differ from the same encode without AdaptiveRounding, or the cases above would test nothing.
TEST(Threads, AdaptiveRoundingRunsInOrderAtEveryThreadCount) {
  EncoderParams p = base(208, 144, 3);
  p.adaptive_rounding = true;
  const Encoded reference = encode(p, 1, true);
  for (int threads : {1, 4})
    expect_same_encode(reference, encode(p, threads), "AdaptiveRounding at " + std::to_string(threads) + " threads");
  EncoderParams fixed = p;
  fixed.adaptive_rounding = false;
  EXPECT_NE(encode(fixed, 1, true).bytes, reference.bytes) << "AdaptiveRounding changed nothing in this encode";
}

}  // namespace
}  // namespace gme
