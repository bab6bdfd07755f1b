// Small text helpers shared by the programs: fields of user-written text (rdsweep's command line and manifest, bdrate's
// CSV/log readers) are trimmed and a number must be the whole field; numbers are formatted printf-style for reports.
#pragma once
#include <string>

namespace gme {

// s without leading and trailing white space (std::isspace).
std::string trim_space(const std::string& s);

// Strict numbers: true only when the whole trimmed field is one number (ints: within +-1e9).
bool field_to_double(const std::string& field, double* v);
bool field_to_int(const std::string& field, int* v);

// printf-style formatting of one number ("%.2f", "%+.3f", ...) into a std::string (reports, SVG, messages).
std::string fmt(const char* printf_format, double v);

// s as a JSON string literal, quotes included (control characters escaped), for the JSON every program writes.
std::string json_string(const std::string& s);

}  // namespace gme
