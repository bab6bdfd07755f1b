// class Encoder: the push/pull queue around EncoderState and the picture loop (encoder/picture.h).
#include "encoder/encoder.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "common/recycling_pool.h"
#include "encoder/picture.h"

namespace gme {
namespace {

// Frames held while a P picture waits for the GPU start-up: at most this many bytes of them (~550 frames at
// 640x480, ~85 at 1920x1080), at least one.
constexpr size_t kHeldBytes = size_t{256} << 20;

struct Held {
  std::shared_ptr<Frame> frame;
  int64_t user_index = 0;
};

}  // namespace

struct Encoder::Impl {
  EncoderState state;
  std::deque<Held> held;             // pushed, not yet at their turn; held[i] has coding index state.coded + i
  std::deque<EncodedPicture> done;   // coded at their turn, not yet pulled

  size_t held_limit() const {
    const size_t frame_bytes = static_cast<size_t>(state.mb_w) * state.mb_h * 256 * 3 / 2;
    return std::max<size_t>(1, kHeldBytes / std::max<size_t>(1, frame_bytes));
  }

  // Input pictures (input_frame): at most this many kept for reuse, enough for those in flight in the steady state
  // (queued, two coding, one with the caller), so that each keeps its memory, and its page lock, for good.
  static constexpr size_t kInputPool = 8;
  RecyclingPool<Frame> inputs{kInputPool};

  // An input picture's luma page-locked for the GPU search once it is known (Plane::lock), so that the search sends
  // its rows without staging them: once per buffer, for the pictures that come back (Frame::reused_input).
  void lock_for_search(const Frame* f) const {
    if (!f || !f->reused_input || !state.picture_search || f->plane[0].lock) return;
    const Plane& y = f->plane[0];
    y.lock = state.picture_search->page_lock(y.storage.data(), y.storage.size());
  }

  // Codes `h` (its turn has come) into an EncodedPicture; `next`, the picture after it when already pushed, lets
  // the GPU search start on it early (encode_picture).
  EncodedPicture code(Held h, std::shared_ptr<const Frame> next) {
    lock_for_search(h.frame.get());
    lock_for_search(next.get());
    EncodedPicture e;
    e.result = encode_picture(state, *h.frame, e.bytes, next.get());
    e.user_index = h.user_index;
    e.source = std::move(h.frame);
    e.recon = state.rec;
    e.mbs = state.mbs;
    return e;
  }

  // A picture started and not yet finished (several threads), with the pictures it reads.
  struct Flight {
    PictureInFlightPtr picture;
    Held h;
    std::shared_ptr<const Frame> next;
  };
  Flight start(Held h, std::shared_ptr<const Frame> next, Flight* before) {
    lock_for_search(h.frame.get());
    lock_for_search(next.get());
    Flight f;
    f.picture = start_picture(state, *h.frame, next.get(), before ? before->picture.get() : nullptr);
    f.h = std::move(h);
    f.next = std::move(next);
    return f;
  }
  EncodedPicture finish(Flight& f) {
    EncodedPicture e;
    e.result = finish_picture(state, *f.picture, e.bytes);
    e.user_index = f.h.user_index;
    e.source = std::move(f.h.frame);
    e.recon = picture_recon(*f.picture);
    e.mbs = state.mbs;
    f.picture.reset();
    return e;
  }

  // ---- One thread (Threads = 1): everything happens in push() and flush(), on the caller's thread.

  // Codes held pictures in order as far as possible without waiting for the GPU start-up (unless draining). While
  // the next one would wait, the held I pictures are coded ahead, and more input is accepted until the limit. With
  // a GPU search, a picture is coded once the next one is pushed (or at the end of input), so the next picture's
  // search starts while it is coded (encode_picture's `next`) whatever the clip's length: one picture of latency.
  void pump(bool draining) {
    while (!held.empty()) {
      if (!draining && next_picture_waits_for_gpu(state)) {
        for (int a; (a = next_picture_ahead(state)) >= 0 && a - state.coded < static_cast<int>(held.size());)
          encode_picture_ahead(state, a, *held[static_cast<size_t>(a - state.coded)].frame);
        if (held.size() < held_limit()) return;
      }
      if (!draining && held.size() < 2 && state.picture_search && state.picture_search->runs_beside_cpu()) return;
      Held h = std::move(held.front());
      held.pop_front();
      done.push_back(code(std::move(h), next_held()));
    }
  }

  // The frame after the one just taken from `held`, if pushed already (under `m` when async).
  std::shared_ptr<const Frame> next_held() const { return held.empty() ? nullptr : held.front().frame; }

  // ---- Several threads: pictures are coded on a thread of their own (the coder thread), so the caller's reading,
  // PSNR and writing of one picture overlap the coding of the next. push() returns once the picture is queued (it
  // waits while kQueued pictures are, or while the GPU start-up holds held_limit()), pull() hands out what is done,
  // flush() waits for the rest. Same pictures, same order, same bytes as one thread. Where overlap_pictures() allows
  // it, the coder starts the next held picture before it finishes the one in flight, so the next picture's rows
  // follow this one's on the workers (doc/THREADS.md, "Pictures in flight"); with no picture held it finishes the
  // one in flight, so it never waits for input with a picture unfinished.
  static constexpr size_t kQueued = 2;
  bool async = false;
  std::thread coder;
  std::mutex m;
  std::condition_variable work_cv;   // the coder's: input, draining, stop
  std::condition_variable state_cv;  // the caller's: room, pictures done, idle
  bool draining = false, stop = false, busy = false, waiting_for_gpu = false;
  std::exception_ptr error;
  std::string me_path;  // state.me_path as the coder last left it

  void start_coder() {
    async = true;
    me_path = state.me_path;
    coder = std::thread([this] { coder_loop(); });
  }

  ~Impl() {
    if (!async) return;
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    work_cv.notify_all();
    coder.join();
  }

  // pump() on the coder thread: the state is the coder's while `busy`, and nobody else's but under `m` while idle.
  void coder_loop() {
    std::unique_lock<std::mutex> lock(m);
    std::unique_ptr<Flight> flying;  // the picture in flight (only while busy)
    const auto finish_flying = [&] {  // called unlocked
      EncodedPicture e = finish(*flying);
      flying.reset();
      lock.lock();
      done.push_back(std::move(e));
      me_path = state.me_path;
      state_cv.notify_all();
      lock.unlock();
    };
    for (;;) {
      work_cv.wait(lock, [&] { return stop || (!error && !held.empty()); });
      if (stop) return;
      busy = true;
      try {
        while (!held.empty()) {
          if (!draining && next_picture_waits_for_gpu(state)) {
            if (flying) {
              lock.unlock();
              finish_flying();
              lock.lock();
              continue;
            }
            const int a = next_picture_ahead(state);
            if (a >= 0 && a - state.coded < static_cast<int>(held.size())) {
              const std::shared_ptr<Frame> frame = held[static_cast<size_t>(a - state.coded)].frame;
              lock.unlock();
              encode_picture_ahead(state, a, *frame);
              lock.lock();
              continue;
            }
            if (held.size() < held_limit()) {  // take more input; look again when it comes, or soon
              waiting_for_gpu = true;
              busy = false;
              state_cv.notify_all();
              work_cv.wait_for(lock, std::chrono::milliseconds(2));
              if (stop) return;
              busy = true;
              continue;
            }
          }
          waiting_for_gpu = false;
          Held h = std::move(held.front());
          held.pop_front();
          std::shared_ptr<const Frame> next = next_held();
          state_cv.notify_all();  // room for the caller's next picture
          lock.unlock();
          if (flying && !overlap_pictures(state, *flying->picture)) finish_flying();
          std::unique_ptr<Flight> started;
          try {
            started = std::make_unique<Flight>(start(std::move(h), std::move(next), flying.get()));
          } catch (...) {
            if (flying) finish_flying();  // the picture before is whole: handed out before the error
            throw;
          }
          if (flying) {
            finish_flying();
            queue_search_after(state, *started->picture);
          }
          flying = std::move(started);
          lock.lock();
        }
        if (flying) {  // nothing held: finish it rather than wait for input with a picture unfinished
          lock.unlock();
          finish_flying();
          lock.lock();
        }
      } catch (...) {
        if (lock.owns_lock()) lock.unlock();
        flying.reset();  // waits for its rows
        lock.lock();
        error = std::current_exception();
      }
      busy = false;
      state_cv.notify_all();
    }
  }
};

Encoder::Encoder(const EncoderParams& params, PictureSearchFactory picture_search) : impl_(new Impl) {
  init_encoder_state(impl_->state, params, std::move(picture_search));
  if (impl_->state.threads > 1) impl_->start_coder();
}

Encoder::~Encoder() = default;

std::shared_ptr<Frame> Encoder::input_frame() {
  std::shared_ptr<Frame> f = impl_->inputs.take();
  f->reused_input = true;
  return f;
}

void Encoder::push(Frame src, int64_t user_index) { push(std::make_shared<Frame>(std::move(src)), user_index); }

void Encoder::push(std::shared_ptr<Frame> src, int64_t user_index) {
  if (!src) throw std::invalid_argument("Encoder::push: no picture");
  Impl& d = *impl_;
  Held h{std::move(src), user_index};
  if (!d.async) {
    d.held.push_back(std::move(h));
    d.pump(false);
    return;
  }
  std::unique_lock<std::mutex> lock(d.m);
  d.state_cv.wait(lock, [&] { return d.error || d.held.size() < (d.waiting_for_gpu ? d.held_limit() : Impl::kQueued); });
  if (d.error) std::rethrow_exception(d.error);
  d.held.push_back(std::move(h));
  d.work_cv.notify_one();
}

bool Encoder::pull(EncodedPicture* out) {
  Impl& d = *impl_;
  std::unique_lock<std::mutex> lock(d.m, std::defer_lock);
  if (d.async) lock.lock();
  if (d.done.empty()) {
    if (d.error) std::rethrow_exception(d.error);
    return false;
  }
  *out = std::move(d.done.front());
  d.done.pop_front();
  return true;
}

void Encoder::flush() {
  Impl& d = *impl_;
  if (!d.async) {
    d.pump(true);
    return;
  }
  std::unique_lock<std::mutex> lock(d.m);
  d.draining = true;
  d.work_cv.notify_one();
  d.state_cv.wait(lock, [&] { return d.error || (d.held.empty() && !d.busy); });
  d.draining = false;
  if (d.error) std::rethrow_exception(d.error);
}

bool Encoder::drain(EncodedPicture* out) {
  Impl& d = *impl_;
  if (!d.async) {
    if (d.done.empty() && !d.held.empty()) {
      Held h = std::move(d.held.front());
      d.held.pop_front();
      d.done.push_back(d.code(std::move(h), d.next_held()));
    }
    return pull(out);
  }
  std::unique_lock<std::mutex> lock(d.m);
  d.draining = true;
  d.work_cv.notify_one();
  d.state_cv.wait(lock, [&] { return d.error || !d.done.empty() || (d.held.empty() && !d.busy); });
  if (d.done.empty()) d.draining = false;  // every picture handed out (or an error)
  if (d.error && d.done.empty()) std::rethrow_exception(d.error);
  if (d.done.empty()) return false;
  *out = std::move(d.done.front());
  d.done.pop_front();
  return true;
}

std::string Encoder::integer_me_path() const {
  Impl& d = *impl_;
  std::unique_lock<std::mutex> lock(d.m, std::defer_lock);
  if (d.async) {
    lock.lock();
    d.state_cv.wait(lock, [&] { return !d.busy; });  // the state is the coder's while it codes
  }
  if (d.state.p.gpu_integer_me == 1) picture_search_ready(d.state);  // the path is known once started
  d.me_path = d.state.me_path;
  return d.state.me_path;
}

std::string Encoder::integer_me_path_so_far() const {
  Impl& d = *impl_;
  if (!d.async) return d.state.me_path;
  std::lock_guard<std::mutex> lock(d.m);
  return d.me_path;
}

const DspFuncs& Encoder::dsp() const { return impl_->state.dsp; }

}  // namespace gme
