// libFuzzer harness: the YUV4MPEG2 reader (common/yuv_io.h) on arbitrary bytes after "YUV4MPEG2 ", from a file
// and from a pipe (the last byte's low bit chooses), every frame read. Seeds: tests/fuzz/corpus/fuzz_y4m/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes = "YUV4MPEG2 " + std::string(reinterpret_cast<const char*>(data), size);
  const bool pipe = size && (data[size - 1] & 1);
  const int step = size ? 1 + (data[0] & 3) : 1;
  gme::fuzz::read_bytes(bytes, pipe ? gme::fuzz::Via::kPipe : gme::fuzz::Via::kFile, 176, 144, 0, step);
  return 0;
}
