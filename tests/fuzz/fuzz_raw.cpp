// libFuzzer harness: the raw and gzip readers (common/yuv_io.h). The first 4 bytes choose the frame size (width
// and height 0..63, odd and zero included, which the reader must refuse), InputHeaderLength, the frame step and
// whether the rest arrives as a file, a pipe or a .gz file; every frame is read. Seeds: tests/fuzz/corpus/fuzz_raw/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const int w = data[0] & 63, h = data[1] & 63;
  const int header = data[2] & 31;
  const int step = 1 + ((data[2] >> 5) & 3);
  const gme::fuzz::Via via = data[3] % 3 == 0   ? gme::fuzz::Via::kFile
                             : data[3] % 3 == 1 ? gme::fuzz::Via::kPipe
                                                : gme::fuzz::Via::kGzipFile;
  gme::fuzz::read_bytes(std::string(reinterpret_cast<const char*>(data) + 4, size - 4), via, w, h, header, step);
  return 0;
}
