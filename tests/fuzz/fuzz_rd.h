// What the bdrate/rdsweep reader harnesses share: the text parsed as one format of rd/rd_input.h, with the row
// filters of a spec taken from its first line ("x#k=v,k~t"), and the format detection on the same text. An
// RdInputError is the expected answer to bad text; anything else escaping is a bug.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rd/rd_input.h"

namespace gme::fuzz {

inline void parse_as(const uint8_t* data, size_t size, RdFormat format) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<RdFilter> filters;
  try {
    const std::string first = text.substr(0, text.find('\n'));
    if (first.rfind("spec:", 0) == 0) split_rd_spec("fuzz" + first.substr(5), &filters);
  } catch (const RdInputError&) {
    filters.clear();
  }
  try {
    parse_rd_text(text, format, "fuzz", filters);
  } catch (const RdInputError&) {
  }
  detect_rd_format(text);
}

}  // namespace gme::fuzz
