// class Encoder: a thin shell around EncoderState and the picture loop (encoder/picture.h).
#include "encoder/encoder.h"

#include "encoder/picture.h"

namespace gme {

struct Encoder::Impl {
  EncoderState state;
};

Encoder::Encoder(const EncoderParams& params) : impl_(new Impl) { init_encoder_state(impl_->state, params); }

Encoder::~Encoder() = default;

PictureResult Encoder::encode(const Frame& src, std::vector<uint8_t>& out) {
  return encode_picture(impl_->state, src, out);
}

int Encoder::picture_to_encode_ahead() const { return gme::picture_to_encode_ahead(impl_->state); }

void Encoder::encode_ahead(int index, const Frame& src) { encode_picture_ahead(impl_->state, index, src); }

bool Encoder::next_picture_waits_for_gpu() const { return gme::next_picture_waits_for_gpu(impl_->state); }

const Frame& Encoder::last_recon() const { return *impl_->state.rec; }

const std::vector<MbInfo>& Encoder::last_mb_info() const { return impl_->state.mbs; }

std::string Encoder::integer_me_path() const {
  if (impl_->state.p.gpu_integer_me == 1) picture_search_ready(impl_->state);  // the path is known once started
  return impl_->state.me_path;
}

std::string Encoder::integer_me_path_so_far() const { return impl_->state.me_path; }

}  // namespace gme
