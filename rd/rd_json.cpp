// Recursive-descent JSON parser (RFC 8259 subset: \u escapes outside the BMP are kept as two code units).
#include "rd/rd_json.h"

#include <cstdlib>

namespace gme {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  bool parse(JsonValue* out, std::string* error) {
    if (!value(out, 0)) {
      *error = error_ + " at column " + std::to_string(pos_ + 1);
      return false;
    }
    skip_ws();
    if (pos_ != s_.size()) {
      *error = "unexpected text after the JSON value at column " + std::to_string(pos_ + 1);
      return false;
    }
    return true;
  }

 private:
  // Deep nesting never occurs in a StatsFile; the limit keeps malicious input from exhausting the stack.
  static constexpr int kMaxDepth = 64;

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n')) pos_++;
  }
  bool fail(const std::string& what) {
    error_ = what;
    return false;
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return fail("expected '" + w + "'");
    pos_ += w.size();
    return true;
  }

  bool value(JsonValue* v, int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    skip_ws();
    if (pos_ >= s_.size()) return fail("unexpected end of line");
    const char c = s_[pos_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v->kind = JsonValue::Kind::kString;
      return string(&v->string);
    }
    if (c == 't') { v->kind = JsonValue::Kind::kBool; v->boolean = true; return literal("true"); }
    if (c == 'f') { v->kind = JsonValue::Kind::kBool; v->boolean = false; return literal("false"); }
    if (c == 'n') { v->kind = JsonValue::Kind::kNull; return literal("null"); }
    return number(v);
  }

  bool number(JsonValue* v) {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    // Accepts a little more than JSON (e.g. "inf", "nan", which some writers emit for lossless PSNR).
    const double d = std::strtod(begin, &end);
    if (end == begin) return fail("expected a value");
    pos_ += static_cast<size_t>(end - begin);
    v->kind = JsonValue::Kind::kNumber;
    v->number = d;
    return true;
  }

  bool string(std::string* out) {
    pos_++;  // opening quote
    out->clear();
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out->push_back(e); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return fail("bad \\u escape");
          const unsigned cp = static_cast<unsigned>(std::strtoul(s_.substr(pos_, 4).c_str(), nullptr, 16));
          pos_ += 4;
          if (cp < 0x80) {
            out->push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default: return fail(std::string("bad escape \\") + e);
      }
    }
    return fail("unterminated string");
  }

  bool array(JsonValue* v, int depth) {
    v->kind = JsonValue::Kind::kArray;
    pos_++;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') { pos_++; return true; }
    for (;;) {
      v->array.emplace_back();
      if (!value(&v->array.back(), depth + 1)) return false;
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') { pos_++; continue; }
      if (pos_ < s_.size() && s_[pos_] == ']') { pos_++; return true; }
      return fail("expected ',' or ']'");
    }
  }

  bool object(JsonValue* v, int depth) {
    v->kind = JsonValue::Kind::kObject;
    pos_++;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') { pos_++; return true; }
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a key string");
      std::string key;
      if (!string(&key)) return false;
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':'");
      pos_++;
      if (!value(&v->object[key], depth + 1)) return false;
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') { pos_++; continue; }
      if (pos_ < s_.size() && s_[pos_] == '}') { pos_++; return true; }
      return fail("expected ',' or '}'");
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

const JsonValue* JsonValue::find(const std::string& key) const {
  if (kind != Kind::kObject) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

double JsonValue::number_or(const std::string& key, double fallback) const {
  const JsonValue* v = find(key);
  return v && v->kind == Kind::kNumber ? v->number : fallback;
}

std::string JsonValue::string_or(const std::string& key, const std::string& fallback) const {
  const JsonValue* v = find(key);
  return v && v->kind == Kind::kString ? v->string : fallback;
}

bool parse_json(const std::string& text, JsonValue* out, std::string* error) {
  *out = JsonValue();
  return Parser(text).parse(out, error);
}

}  // namespace gme
