// libFuzzer harness: bdrate's reader of CSV tables with a header line (rd/rd_input.h; rdsweep's results.csv),
// with row filters from a first line "spec:#KEY=VALUE,...". Seeds: tests/fuzz/corpus/fuzz_rd_csv/.
#include "tests/fuzz/fuzz_rd.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gme::fuzz::parse_as(data, size, gme::RdFormat::kCsv);
  return 0;
}
