// SHA-256 (FIPS 180-4): a content fingerprint for golden stream hashes and for provenance (which encoder binary,
// which input and configuration made a result). Hex digests match `sha256sum`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gme {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  // The digest as 64 lowercase hex digits; the object must not be updated afterwards.
  std::string hex_digest();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t used_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(const void* data, size_t bytes);
// Digest of a whole file; false (and *error set to the system's reason) if it cannot be read.
bool sha256_file(const std::string& path, std::string* hex, std::string* error);

}  // namespace gme
