// A small, tolerant JSON reader for the StatsFile (JSON lines, doc/STATS.md) read by bdrate and rdsweep. It parses
// one value per line into a tree; unknown keys are simply kept, so the StatsFile may grow without breaking readers.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gme {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  // Member of an object, or nullptr (also when this is not an object).
  const JsonValue* find(const std::string& key) const;
  // Number member, or `fallback` when absent or not a number.
  double number_or(const std::string& key, double fallback) const;
  // String member, or `fallback`.
  std::string string_or(const std::string& key, const std::string& fallback) const;
};

// Parses one complete JSON text. Returns false and sets *error (what was expected, at which column) on bad input.
bool parse_json(const std::string& text, JsonValue* out, std::string* error);

}  // namespace gme
