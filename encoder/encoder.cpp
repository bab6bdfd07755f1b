// class Encoder: the push/pull queue around EncoderState and the picture loop (encoder/picture.h).
#include "encoder/encoder.h"

#include <deque>
#include <utility>

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

  // Codes the held picture at the front (its turn has come) into `done`.
  void code_front() {
    Held h = std::move(held.front());
    held.pop_front();
    EncodedPicture e;
    e.result = encode_picture(state, *h.frame, e.bytes);
    e.user_index = h.user_index;
    e.source = std::move(h.frame);
    e.recon = state.rec;
    e.mbs = state.mbs;
    done.push_back(std::move(e));
  }

  // Codes held pictures in order as far as possible without waiting for the GPU start-up (unless draining). While
  // the next one would wait, the held I pictures are coded ahead, and more input is accepted until the limit.
  void pump(bool draining) {
    while (!held.empty()) {
      if (!draining && next_picture_waits_for_gpu(state)) {
        for (int a; (a = next_picture_ahead(state)) >= 0 && a - state.coded < static_cast<int>(held.size());)
          encode_picture_ahead(state, a, *held[static_cast<size_t>(a - state.coded)].frame);
        if (held.size() < held_limit()) return;
      }
      code_front();
    }
  }
};

Encoder::Encoder(const EncoderParams& params, PictureSearchFactory picture_search) : impl_(new Impl) {
  init_encoder_state(impl_->state, params, std::move(picture_search));
}

Encoder::~Encoder() = default;

void Encoder::push(Frame src, int64_t user_index) {
  impl_->held.push_back(Held{std::make_shared<Frame>(std::move(src)), user_index});
  impl_->pump(false);
}

bool Encoder::pull(EncodedPicture* out) {
  if (impl_->done.empty()) return false;
  *out = std::move(impl_->done.front());
  impl_->done.pop_front();
  return true;
}

void Encoder::flush() { impl_->pump(true); }

std::string Encoder::integer_me_path() const {
  if (impl_->state.p.gpu_integer_me == 1) picture_search_ready(impl_->state);  // the path is known once started
  return impl_->state.me_path;
}

std::string Encoder::integer_me_path_so_far() const { return impl_->state.me_path; }

const DspFuncs& Encoder::dsp() const { return impl_->state.dsp; }

}  // namespace gme
