// TEMPORARY: replaced by the real encoder (picture/slice/macroblock loops) as it lands.
#include "encoder/encoder.h"

#include <stdexcept>

namespace gme {
struct Encoder::Impl { Frame recon; };
Encoder::Encoder(const EncoderParams&) : impl_(new Impl) {}
Encoder::~Encoder() = default;
PictureResult Encoder::encode(const Frame&, std::vector<uint8_t>&) { throw std::runtime_error("encoder not implemented yet"); }
const Frame& Encoder::last_recon() const { return impl_->recon; }
std::string Encoder::integer_me_path() const { return "none"; }
}  // namespace gme
