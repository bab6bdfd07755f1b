#include "common/bitstream.h"

#include <algorithm>
#include <cstddef>

namespace gme {

void BitWriter::put(int nbits, uint32_t value) {
  if (nbits <= 0) return;
  acc_ = (acc_ << nbits) | (nbits == 32 ? value : (value & ((1u << nbits) - 1u)));
  acc_bits_ += nbits;
  while (acc_bits_ >= 8) {
    acc_bits_ -= 8;
    buf_.push_back(static_cast<uint8_t>(acc_ >> acc_bits_));
  }
  acc_ &= (1ull << acc_bits_) - 1ull;
}

void BitWriter::append(const BitWriter& src, int64_t from, int64_t n) {
  const int64_t whole = static_cast<int64_t>(src.buf_.size()) * 8;
  if (acc_bits_ == 0 && (from & 7) == 0 && n >= 8) {  // both byte aligned: whole bytes at once
    const int64_t bytes = std::min(n, whole - from) >> 3;
    if (bytes > 0) {
      const auto first = src.buf_.begin() + static_cast<std::ptrdiff_t>(from >> 3);
      buf_.insert(buf_.end(), first, first + static_cast<std::ptrdiff_t>(bytes));
      from += 8 * bytes;
      n -= 8 * bytes;
    }
  }
  while (n > 0 && from < whole) {  // up to 24 bits from at most 4 bytes
    const size_t byte = static_cast<size_t>(from >> 3);
    const int off = static_cast<int>(from & 7);
    uint32_t w = 0;
    for (size_t k = 0; k < 4; ++k)
      w = (w << 8) | (byte + k < src.buf_.size() ? src.buf_[byte + k] : 0u);
    const int take = static_cast<int>(std::min<int64_t>({n, 24, whole - from}));
    put(take, (w >> (32 - off - take)) & ((1u << take) - 1u));
    from += take;
    n -= take;
  }
  if (n > 0) {  // the pending bits of src's last byte
    const int skip = static_cast<int>(from - whole);
    const int take = static_cast<int>(n);
    put(take, static_cast<uint32_t>(src.acc_ >> (src.acc_bits_ - skip - take)) & ((1u << take) - 1u));
  }
}

void BitWriter::ue(uint32_t v) {
  // codeNum v is written as (len zeros) 1 (len bits of v + 1 - 2^len).
  const uint64_t x = static_cast<uint64_t>(v) + 1;
  const int len = (ue_bits(v) - 1) / 2;
  put(len, 0);
  if (len + 1 <= 32) {
    put(len + 1, static_cast<uint32_t>(x));
  } else {  // only for v = 2^32 - 1, never used, kept total
    put(1, static_cast<uint32_t>(x >> 32));
    put(32, static_cast<uint32_t>(x));
  }
}

void BitWriter::se(int v) {
  ue(v > 0 ? 2u * static_cast<uint32_t>(v) - 1u : 2u * static_cast<uint32_t>(-static_cast<int64_t>(v)));
}

void BitWriter::te(int range, uint32_t v) {
  if (range > 1) ue(v);
  else put(1, v ? 0u : 1u);
}

void BitWriter::rbsp_trailing_bits() {
  put(1, 1);
  align_zero();
}

void BitWriter::align_zero() {
  if (acc_bits_) put(8 - acc_bits_, 0);
}

size_t write_nal_annexb(std::vector<uint8_t>& out, int nal_ref_idc, int nal_unit_type,
                        const std::vector<uint8_t>& rbsp, int start_code_bytes) {
  size_t start = out.size();
  if (start_code_bytes == 4) out.push_back(0);
  out.insert(out.end(), {0, 0, 1});
  out.push_back(static_cast<uint8_t>(((nal_ref_idc & 3) << 5) | (nal_unit_type & 31)));
  int zeros = 0;
  for (uint8_t b : rbsp) {
    // Within the NAL unit, 00 00 followed by 00..03 must not occur: insert 03 after two zeros.
    if (zeros == 2 && b <= 3) {
      out.push_back(3);
      zeros = 0;
    }
    out.push_back(b);
    zeros = (b == 0) ? zeros + 1 : 0;
  }
  return out.size() - start;
}

}  // namespace gme
