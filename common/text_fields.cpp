#include "common/text_fields.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace gme {

std::string trim_space(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) b++;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) e--;
  return s.substr(b, e - b);
}

bool field_to_double(const std::string& field, double* v) {
  const std::string t = trim_space(field);
  if (t.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

bool field_to_int(const std::string& field, int* v) {
  const std::string t = trim_space(field);
  if (t.empty()) return false;
  char* end = nullptr;
  const long l = std::strtol(t.c_str(), &end, 10);
  if (end != t.c_str() + t.size() || l < -1000000000L || l > 1000000000L) return false;
  *v = static_cast<int>(l);
  return true;
}

std::string fmt(const char* printf_format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, printf_format, v);
  return b;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

}  // namespace gme
