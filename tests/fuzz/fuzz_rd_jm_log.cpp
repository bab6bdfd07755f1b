// libFuzzer harness: bdrate's reader of JM 19.0's log.dat (rd/rd_input.h),
// with row filters from a first line "spec:#KEY=VALUE,...". Seeds: tests/fuzz/corpus/fuzz_rd_jm_log/.
#include "tests/fuzz/fuzz_rd.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gme::fuzz::parse_as(data, size, gme::RdFormat::kJmLog);
  return 0;
}
