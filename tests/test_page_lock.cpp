// Page-locked input pictures: Plane::lock is let go before the memory it holds moves or is freed, and never copied
// with the samples; the encoder's input pictures (Encoder::input_frame) come back to be read into again and are
// locked for the picture-level search once each, pictures pushed by value never; the stream is the same either way.
// The CUDA search's use of the locks (DMA straight from them) is tested against the twin in test_gpu_me.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/frame.h"
#include "encoder/encoder.h"
#include "encoder/params.h"
#include "gpu/gpu_me.h"

namespace gme {
namespace {

// ---- Plane::lock ---------------------------------------------------------------------------------------------------

// A lock whose release records whether the plane still held the locked memory at that moment.
struct Release {
  int count = 0;
  bool memory_still_there = true;
};

std::shared_ptr<void> watch(const Plane& p, Release& r) {
  const uint8_t* data = p.storage.data();
  return std::shared_ptr<void>(const_cast<uint8_t*>(data), [&p, &r, data](void*) {
    ++r.count;
    if (p.storage.data() != data) r.memory_still_there = false;
  });
}

TEST(PlaneLock, CopiesDoNotShareItMovesCarryIt) {
  Plane a;
  a.alloc(32, 16, 8);
  Release r;
  a.lock = watch(a, r);
  {
    const Plane copy(a);
    EXPECT_EQ(copy.lock, nullptr);
    EXPECT_EQ(copy.storage, a.storage);
  }
  const uint8_t* data = a.storage.data();
  Plane moved(std::move(a));
  EXPECT_EQ(moved.storage.data(), data);
  EXPECT_EQ(moved.lock.get(), data);
  EXPECT_EQ(a.lock, nullptr);
  EXPECT_EQ(r.count, 0);
}

TEST(PlaneLock, LetGoBeforeTheMemoryMovesOrIsFreed) {
  {
    Plane p;
    p.alloc(32, 16, 8);
    Release r;
    p.lock = watch(p, r);
    p.alloc(32, 16, 8);  // same size: same memory, still locked
    EXPECT_EQ(r.count, 0);
    EXPECT_NE(p.lock, nullptr);
    p.alloc(64, 16, 8);  // another size
    EXPECT_EQ(r.count, 1);
    EXPECT_TRUE(r.memory_still_there);
    EXPECT_EQ(p.lock, nullptr);
  }
  for (int how = 0; how < 3; ++how) {
    Release r;
    {
      Plane p, other;
      p.alloc(32, 16, 8);
      other.alloc(48, 16, 8);
      p.lock = watch(p, r);
      if (how == 0) p = other;
      if (how == 1) p = std::move(other);
      if (how < 2) {
        EXPECT_EQ(r.count, 1) << "assignment " << how;
        EXPECT_EQ(p.lock, nullptr);
      }
    }  // how 2: the destructor
    EXPECT_EQ(r.count, 1) << how;
    EXPECT_TRUE(r.memory_still_there) << how;
  }
  Release r;
  Frame f;
  f.alloc(32, 32, 32, 32);
  f.plane[0].lock = watch(f.plane[0], r);
  f.alloc(48, 32, 48, 32);  // Frame::alloc at another size
  EXPECT_EQ(r.count, 1);
  EXPECT_TRUE(r.memory_still_there);
}

// ---- The encoder's input pictures --------------------------------------------------------------------------------

// The twin, as a GPU search is seen, recording page_lock()'s calls and which searches found their current picture
// locked.
struct LockLog {
  std::mutex m;
  int locks = 0, unlocks = 0, relocked = 0, searches = 0, locked_searches = 0, foreign = 0;
  std::set<const void*> live;
};

class LockProbe final : public PictureIntegerSearch {
 public:
  LockProbe(const DspFuncs& dsp, std::shared_ptr<LockLog> log) : twin_(make_picture_search_twin(dsp)), log_(log) {}
  void search(const PictureSearchRequest& req, PictureCandidates& out) override {
    {
      std::lock_guard<std::mutex> g(log_->m);
      ++log_->searches;
      if (req.cur->lock) {
        ++log_->locked_searches;
        // The lock covers the picture's own memory, and is one this search handed out and still holds.
        if (req.cur->lock.get() != req.cur->storage.data() || !log_->live.count(req.cur->storage.data()))
          ++log_->foreign;
      }
    }
    twin_->search(req, out);
  }
  const char* name() const override { return "lock-probe"; }
  bool runs_beside_cpu() const override { return true; }  // as a GPU: the encoder holds the next picture
  std::shared_ptr<void> page_lock(const void* data, size_t bytes) override {
    std::lock_guard<std::mutex> g(log_->m);
    ++log_->locks;
    if (bytes == 0 || !log_->live.insert(data).second) ++log_->relocked;
    std::shared_ptr<LockLog> log = log_;
    return std::shared_ptr<void>(const_cast<void*>(data), [log](void* p) {
      std::lock_guard<std::mutex> h(log->m);
      ++log->unlocks;
      log->live.erase(p);
    });
  }

 private:
  std::unique_ptr<PictureIntegerSearch> twin_;
  std::shared_ptr<LockLog> log_;
};

// A textured picture moving by t pixels: real motion for the P pictures.
void fill_moving(Frame& f, int w, int h, int t) {
  f.alloc(w, h, w, h);
  for (int c = 0; c < 3; ++c) {
    Plane& p = f.plane[c];
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x) {
        const uint32_t u =
            static_cast<uint32_t>(x + (c ? t : 2 * t)) * 2654435761u ^ static_cast<uint32_t>(y + t) * 40503u;
        p.at(x, y)[0] = static_cast<uint8_t>((u >> 13) % 64 + 3 * x + 2 * y);
      }
  }
}

EncoderParams params(int frames, int threads) {
  EncoderParams p;
  p.source_width = 176;
  p.source_height = 144;
  p.frames_to_encode = frames;
  p.intra_period = 0;
  p.search_range = 8;
  p.qp_i = p.qp_p = 28;
  p.gpu_integer_me = 1;
  p.gpu_subpel_distortion = 0;  // no sub-pel tables: the twin would make them for the probe, slowly
  p.threads = threads;
  return p;
}

struct Encoded {
  std::vector<uint8_t> bytes;
  std::set<const Frame*> frames;  // the distinct pictures read into
};

// Encodes as lencod does: each picture read into input_frame() (or pushed by value), pulled and written as it comes,
// its EncodedPicture let go after writing.
Encoded encode(const EncoderParams& p, std::shared_ptr<LockLog> log, bool by_value) {
  Encoded run;
  Encoder enc(p, [log](int, const DspFuncs& dsp, std::string* why) {
    if (why) why->clear();
    return std::unique_ptr<PictureIntegerSearch>(std::make_unique<LockProbe>(dsp, log));
  });
  EncodedPicture coded;
  auto write = [&] {
    run.bytes.insert(run.bytes.end(), coded.bytes.begin(), coded.bytes.end());
    coded = EncodedPicture();
  };
  for (int n = 0; n < p.frames_to_encode; ++n) {
    if (by_value) {
      Frame f;
      fill_moving(f, p.source_width, p.source_height, n);
      enc.push(std::move(f), n);
    } else {
      std::shared_ptr<Frame> f = enc.input_frame();
      run.frames.insert(f.get());
      fill_moving(*f, p.source_width, p.source_height, n);
      enc.push(std::move(f), n);
    }
    while (enc.pull(&coded)) write();
  }
  while (enc.drain(&coded)) write();
  return run;
}

TEST(EncoderInputPictures, ComeBackAndAreLockedOnceEach) {
  constexpr int kFrames = 16;
  for (int threads : {1, 4}) {
    const EncoderParams p = params(kFrames, threads);
    auto by_value = std::make_shared<LockLog>(), pooled = std::make_shared<LockLog>();
    const Encoded plain = encode(p, by_value, true);
    const Encoded reused = encode(p, pooled, false);
    EXPECT_EQ(reused.bytes, plain.bytes) << threads << " threads: the stream depends on where the pictures live";
    EXPECT_EQ(by_value->locks, 0) << threads << " threads: a picture used once was locked";
    EXPECT_LT(reused.frames.size(), static_cast<size_t>(kFrames)) << threads << " threads: no picture came back";
    EXPECT_GT(pooled->locks, 0) << threads << " threads";
    EXPECT_LE(pooled->locks, static_cast<int>(reused.frames.size())) << threads << " threads: locked more than once";
    EXPECT_EQ(pooled->relocked, 0) << threads << " threads";
    EXPECT_EQ(pooled->foreign, 0) << threads << " threads";
    // Every P picture after the first few finds its picture locked (the first ones wait for the search to start).
    EXPECT_GE(pooled->locked_searches, pooled->searches - 3) << threads << " threads";
    EXPECT_EQ(pooled->unlocks, pooled->locks) << threads << " threads: a lock outlived the encoder's pictures";
    std::printf("%d threads: %zu pictures read into, %d locked, %d of %d searches found theirs locked\n", threads,
                reused.frames.size(), pooled->locks, pooled->locked_searches, pooled->searches);
  }
}

}  // namespace
}  // namespace gme
