// Bit writing for H.264 syntax: fixed-length, Exp-Golomb ue/se/te codes, RBSP trailing bits, and the NAL layer
// (emulation prevention, Annex B start codes). The writer can be snapshotted and rolled back, which the slice
// loop needs to undo a macroblock that would overflow a size-limited slice.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/exp_golomb.h"  // ue_bits, se_bits: the lengths of the codes written here

namespace gme {

class BitWriter {
 public:
  struct Mark { size_t bytes; uint64_t acc; int acc_bits; };

  void put(int nbits, uint32_t value);         // nbits 0..32, MSB first
  void flag(bool b) { put(1, b ? 1u : 0u); }
  void ue(uint32_t v);
  void se(int v);
  void te(int range, uint32_t v);              // te(v) with cMax = range: 1 bit inverted when range == 1
  void rbsp_trailing_bits();                   // stop bit 1 then zero bits up to a byte boundary
  void align_zero();                           // zero bits up to a byte boundary (pcm_alignment_zero_bit)
  bool byte_aligned() const { return acc_bits_ == 0; }
  int64_t bits() const { return static_cast<int64_t>(buf_.size()) * 8 + acc_bits_; }
  Mark mark() const { return {buf_.size(), acc_, acc_bits_}; }
  void rewind(const Mark& m) { buf_.resize(m.bytes); acc_ = m.acc; acc_bits_ = m.acc_bits; }
  void clear() { buf_.clear(); acc_ = 0; acc_bits_ = 0; }
  // Appends bits [from, from + n) of what `src` has written so far (its last byte may be partial): the wavefront
  // writes each macroblock's syntax into a writer of its own and the slice's writer takes it from there.
  void append(const BitWriter& src, int64_t from, int64_t n);
  // The written bytes; only valid when byte aligned.
  const std::vector<uint8_t>& bytes() const { return buf_; }

 private:
  std::vector<uint8_t> buf_;
  uint64_t acc_ = 0;   // pending bits, right aligned
  int acc_bits_ = 0;   // < 8 after every put()
};

enum NalType { kNalSlice = 1, kNalIdr = 5, kNalSps = 7, kNalPps = 8 };

// Appends one NAL unit in Annex B byte stream format with emulation prevention bytes inserted into the RBSP.
// start_code_bytes: 4 (00 00 00 01: zero_byte + start code, required before parameter sets and the first NAL unit
// of a picture) or 3 (00 00 01, what JM writes before a picture's later slices). Returns the bytes appended.
size_t write_nal_annexb(std::vector<uint8_t>& out, int nal_ref_idc, int nal_unit_type,
                        const std::vector<uint8_t>& rbsp, int start_code_bytes = 4);

}  // namespace gme
