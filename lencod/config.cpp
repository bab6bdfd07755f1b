// JM-compatible configuration: .cfg syntax, command line, conversion, range and cross-key checks.
// Syntax (JM's ParseContent, made line-oriented so that errors can name file:line):
//   Key = Value      # comment
// Whitespace is blanks and tabs; '#' outside double quotes starts a comment; "a quoted value" may hold blanks and
// '#'; "" is the empty string; CR is ignored; "Key=Value" without blanks is accepted too (JM's -p form).
#include "lencod/config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>

#include "common/yuv_io.h"
#include "encoder/params_check.h"
#include "lencod/config_keys.h"

namespace gme {
namespace {

std::string fmt_num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Splits one line into tokens; '=' is a token of its own. Returns false on an unterminated quote.
bool tokenize(const std::string& line, std::vector<std::string>* tokens) {
  tokens->clear();
  std::string cur;
  bool in_token = false, in_quote = false;
  for (char c : line) {
    if (in_quote) {
      if (c == '"') in_quote = false;
      else cur += c;
      continue;
    }
    if (c == '#') break;
    if (c == '\r') continue;
    if (c == ' ' || c == '\t' || c == '=') {
      if (in_token) tokens->push_back(cur);
      cur.clear();
      in_token = false;
      if (c == '=') tokens->push_back("=");
      continue;
    }
    if (c == '"') {
      in_quote = true;
      in_token = true;
      continue;
    }
    cur += c;
    in_token = true;
  }
  if (in_quote) return false;
  if (in_token) tokens->push_back(cur);
  return true;
}

bool parse_int(const std::string& s, long long* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *v = x;
  return true;
}

bool parse_double(const std::string& s, double* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(x)) return false;
  *v = x;
  return true;
}

// Length of the valid UTF-8 sequence starting at s[i] (0 if none): such text is shown as it is.
size_t utf8_sequence(const std::string& s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

// Input text as quoted in a message: at most kQuoteChars characters (then "..." and the full length), control
// bytes and bytes that are not UTF-8 as \xNN. A binary file named as a configuration, or a value pasted with
// a terminal escape, then still gives one short line a terminal can show.
constexpr size_t kQuoteChars = 60;
std::string quote_input(const std::string& s) {
  std::string out;
  size_t chars = 0, i = 0;
  for (; i < s.size() && chars < kQuoteChars; ++chars) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += s[i++];
    } else if (const size_t n = c >= 0x80 ? utf8_sequence(s, i) : 0) {
      out += s.substr(i, n);
      i += n;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
      ++i;
    }
  }
  if (i < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::vector<int> allowed_values(const char* allowed) {
  std::vector<int> v;
  std::istringstream in(allowed);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::atoi(item.c_str()));
  return v;
}

std::string range_text(const KeyDef& k) {
  if (k.type == KeyType::String) return "text";
  if (k.allowed) {
    std::string out = "one of ";
    for (const char* c = k.allowed; *c; ++c) out += (*c == ',') ? std::string(", ") : std::string(1, *c);
    return out;
  }
  if (k.type == KeyType::Double && k.lo == 0) return "(0, " + fmt_num(k.hi) + "]";
  if (k.hi >= 1e9) return ">= " + fmt_num(k.lo);
  return "[" + fmt_num(k.lo) + ", " + fmt_num(k.hi) + "]";
}

std::string default_text(const KeyDef& k) {
  if (k.type == KeyType::String) return "\"" + key_default_text(k) + "\"";
  return fmt_num(key_default(k));
}

// A file whose lines are mostly not Key = Value (the wrong file) would otherwise give a line per line.
constexpr int kMalformedShown = 5;

int ceil_log2(int v) {
  int n = 0;
  for (unsigned t = v > 0 ? static_cast<unsigned>(v) - 1 : 0; t != 0; t >>= 1) ++n;
  return n;
}

}  // namespace

ConfigBuilder::ConfigBuilder() = default;

void ConfigBuilder::parse_text(const std::string& text, const std::string& origin) {
  source_ = ++files_parsed_;
  source_name_ = origin;
  // A NUL byte never occurs in a text file: this is a video, a stream or another binary file named by mistake.
  // One line says so; its "lines" would only be noise.
  const size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    const long line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    errors_.push_back(origin + ":" + std::to_string(line) + ": not a text configuration file (NUL byte at offset " +
                      std::to_string(nul) + "): expected lines of Key = Value");
    return;
  }
  // Editors on Windows may start a UTF-8 file with a byte order mark: it is no part of the first key.
  const bool bom = text.compare(0, 3, "\xEF\xBB\xBF") == 0;
  std::istringstream in(bom ? text.substr(3) : text);
  std::string line;
  int line_no = 0;
  int malformed = 0;
  std::vector<std::string> tok;
  auto malformed_line = [&](const std::string& where, const std::string& shown, const char* why) {
    if (++malformed <= kMalformedShown)
      errors_.push_back(where + ": malformed line '" + quote_input(shown) + "': " + why);
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = origin + ":" + std::to_string(line_no);
    std::string shown = line;
    if (!shown.empty() && shown.back() == '\r') shown.pop_back();
    if (!tokenize(line, &tok)) {
      malformed_line(where, shown, "unterminated \"quoted string\"");
      continue;
    }
    if (tok.empty()) continue;
    if (tok.size() != 3 || tok[1] != "=" || tok[0] == "=" || tok[2] == "=") {
      malformed_line(where, shown, "expected Key = Value");
      continue;
    }
    assign(tok[0], tok[2], where);
  }
  if (malformed > kMalformedShown)
    errors_.push_back(origin + ": " + std::to_string(malformed - kMalformedShown) +
                      " more malformed lines (is it a configuration file?)");
}

void ConfigBuilder::parse_file(const std::string& path, const std::string& how) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw ConfigError("cannot read configuration file '" + path + "' (" + how + "): it is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    const int err = errno;
    throw ConfigError("cannot open configuration file '" + path + "' (" + how + "): " + std::strerror(err));
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  parse_text(ss.str(), path);
}

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

bool ConfigBuilder::try_assignment(const std::string& text) {
  // "Key=Value", "Key = Value", "Key=a value with blanks", "Key=\"quoted\"", "Key=\"\"", "Key=" (empty, as JM
  // users switch StatsFile off).
  const size_t eq = text.find('=');
  if (eq == std::string::npos) return false;
  const std::string key = trim(text.substr(0, eq));
  std::string value = trim(text.substr(eq + 1));
  if (key.empty() || key.find_first_of(" \t\"") != std::string::npos) return false;
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
  else if (value.find('"') != std::string::npos) return false;
  assign(key, value, "-p '" + text + "'");
  return true;
}

void ConfigBuilder::parse_assignment(const std::string& arg) {
  source_ = kCommandLine;
  if (!try_assignment(arg))
    errors_.push_back("malformed command-line parameter -p '" + quote_input(arg) + "': expected Key=Value");
}

namespace {

// "Key=" or "Key =": a setting whose value may still follow as the next word.
bool ends_in_equals(const std::string& s) {
  const size_t e = s.find_last_not_of(" \t");
  return e != std::string::npos && s[e] == '=';
}

}  // namespace

void ConfigBuilder::parse_assignments(const std::vector<std::string>& args) {
  // JM joins the words after -p, so "-p QPISlice = 28" (three words) is one setting; "-p A=1 B=2" is two here.
  // "Key=" is an empty value unless a word without '=' follows ("-p QPISlice= 28" is QPISlice = 28).
  source_ = kCommandLine;
  std::string pending;
  for (const std::string& a : args) {
    if (!pending.empty() && ends_in_equals(pending) && a.find('=') != std::string::npos) {
      try_assignment(pending);  // "-p StatsFile= QPISlice=30": StatsFile is empty
      pending.clear();
    }
    pending = pending.empty() ? a : pending + " " + a;
    if (!ends_in_equals(pending) && try_assignment(pending)) pending.clear();
  }
  if (!pending.empty() && !try_assignment(pending))
    errors_.push_back("malformed command-line parameter -p '" + quote_input(pending) + "': expected Key=Value");
}

void ConfigBuilder::type_error(const char* key, const std::string& value, const std::string& origin,
                               const char* expected) {
  errors_.push_back(std::string(key) + " = '" + quote_input(value) + "' (" + origin + "): expected " + expected);
}

void ConfigBuilder::assign(const std::string& key, const std::string& value, const std::string& origin) {
  std::string canonical;
  bool stored = true;  // ignored keys are checked and counted, never stored
  if (const KeyDef* k = find_supported(key)) {
    // Values are type-checked where they appear (as JM does); ranges are checked on the final value.
    long long iv;
    double dv;
    if ((k->type == KeyType::Int || k->type == KeyType::Flag) && !parse_int(value, &iv))
      return type_error(k->name, value, origin, "an integer");
    if (k->type == KeyType::Double && !parse_double(value, &dv)) return type_error(k->name, value, origin, "a number");
    canonical = k->name;
  } else if (const UnsupportedKey* u = find_unsupported(key)) {
    double dv;
    if (!parse_double(value, &dv)) return type_error(u->name, value, origin, "a number");
    canonical = u->name;
  } else if (const HeuristicKey* h = find_heuristic(key)) {
    double dv;
    if (!parse_double(value, &dv)) return type_error(h->name, value, origin, "a number");
    canonical = h->name;
  } else if (bool text = false; find_ignored(key, &canonical, &text)) {
    // No effect on gme264's output (see config_keys.cpp), but JM's parser stops at a value that is not a number
    // for its numeric keys: "QPBSlice = abc" is a mistake in either encoder. Its text keys take any text.
    double dv;
    if (!text && !parse_double(value, &dv)) return type_error(canonical.c_str(), value, origin, "a number");
    stored = false;
  } else {
    unknown_.push_back(quote_input(key) + " (" + origin + ")");
    return;
  }
  const std::string where = source_ == kCommandLine || origin.compare(0, source_name_.size() + 1, source_name_ + ":")
                                ? origin
                                : "line " + origin.substr(source_name_.size() + 1);
  seen_.push_back({canonical, value, where, source_name_, source_});
  if (stored) assignments_.push_back({canonical, value, origin});
}

std::map<std::string, std::string> ConfigBuilder::origins() const {
  std::map<std::string, std::string> m;
  for (const Assignment& a : assignments_) m[a.key] = a.origin;
  return m;
}

namespace {

// The error for a value of key k outside its table range (used where the value cannot even be converted, and for
// the keys that are not encoder parameters).
std::string range_error(const KeyDef& k, const std::string& shown, const std::string& where) {
  std::string msg = std::string(k.name) + " = " + shown + " (" + where + "): ";
  if (k.allowed) {
    msg += "not supported; expected " + range_text(k);
    if (k.jm_note && *k.jm_note) msg += " (" + std::string(k.jm_note) + ")";
  } else if (k.type == KeyType::Double) {
    msg += "expected a number in " + range_text(k);
  } else {
    msg += "expected an integer " + (k.hi >= 1e9 ? range_text(k) : "in " + range_text(k));
  }
  return msg;
}

bool in_table_range(const KeyDef& k, double v) {
  if (k.allowed) {
    for (int x : allowed_values(k.allowed))
      if (v == x) return true;
    return false;
  }
  return k.type == KeyType::Double ? v > k.lo && v <= k.hi : v >= k.lo && v <= k.hi;
}

}  // namespace

EncoderParams ConfigBuilder::finish(std::vector<std::string>* warnings) const {
  // Last assignment of each key.
  auto last = [this](const char* name) -> const Assignment* {
    for (auto it = assignments_.rbegin(); it != assignments_.rend(); ++it)
      if (it->key == name) return &*it;
    return nullptr;
  };
  auto origin_of = [&](const char* name) -> std::string {
    const Assignment* a = last(name);
    return a ? a->origin : std::string("default");
  };
  std::vector<std::string> errors = errors_;  // every problem, reported together

  if (warnings && !unknown_.empty()) {
    std::string w = "unknown configuration keys ignored: ";
    for (size_t i = 0; i < unknown_.size(); ++i) w += (i ? ", " : "") + unknown_[i];
    warnings->push_back(w);
  }

  // A key set twice in one file (or twice among the -p settings) is an editing slip more often than a choice; the
  // last setting wins as in JM, and the warning says which. Across files and -p it is precedence: no warning.
  if (warnings) {
    std::vector<bool> grouped(seen_.size(), false);
    for (size_t i = 0; i < seen_.size(); ++i) {
      if (grouped[i]) continue;
      std::vector<const Seen*> same;
      for (size_t j = i; j < seen_.size(); ++j) {
        if (grouped[j] || seen_[j].source != seen_[i].source || seen_[j].key != seen_[i].key) continue;
        grouped[j] = true;
        same.push_back(&seen_[j]);
      }
      if (same.size() < 2) continue;
      const bool cmdline = seen_[i].source == kCommandLine;
      std::string w = seen_[i].key + " is set " + std::to_string(same.size()) + " times " +
                      (cmdline ? std::string("on the command line (") : "in " + seen_[i].file + " (");
      for (size_t k = 0; k < same.size(); ++k)
        w += (k ? ", " : "") + (cmdline ? same[k]->where : same[k]->where + ": " + quote_input(same[k]->value));
      w += "): the last, " + quote_input(same.back()->value) + ", replaces the others";
      warnings->push_back(w);
    }
  }

  // Unsupported JM tools: only the "off" value.
  for (const UnsupportedKey& u : unsupported_keys()) {
    const Assignment* a = last(u.name);
    if (!a) continue;
    double v = 0;
    if (!parse_double(a->value, &v)) continue;  // reported by assign()
    if (v != u.neutral)
      errors.push_back(std::string(u.name) + " = " + a->value + " (" + a->origin + "): not supported: " + u.what +
                       "; gme264 accepts only " + u.name + " = " + fmt_num(u.neutral));
  }

  // JM encoder heuristics gme264 does not honour: one warning line for all of them (collected below too).
  std::vector<std::string> not_honoured;
  for (const HeuristicKey& h : heuristic_keys()) {
    const Assignment* a = last(h.name);
    if (!a) continue;
    double v = 0;
    if (!parse_double(a->value, &v)) continue;
    if (v != h.honoured)
      not_honoured.push_back(std::string(h.name) + " = " + a->value + " (" + a->origin + "; gme264 " + h.instead +
                             ")");
  }

  // Input type decides whether the size comes from the configuration.
  const Assignment* in = last("InputFile");
  const bool y4m = in && is_y4m_name(in->value);  // the reader's own test, suffix case ignored

  // Conversion. The ranges of encoder parameters are the encoder's to check (below); here only what conversion
  // itself needs (an int must hold the value, a flag is 0 or 1) and the keys that are no encoder parameter.
  ConfigTarget t;
  const char* params_begin = reinterpret_cast<const char*>(&t.p);
  const char* params_end = params_begin + sizeof t.p;
  for (const KeyDef& k : supported_keys()) {
    const Assignment* a = last(k.name);
    void* field = k.field(t);
    const std::string where = a ? a->origin : "default";
    if (k.type == KeyType::String) {
      if (a) *static_cast<std::string*>(field) = a->value;
      continue;
    }
    double v = key_default(k);
    if (a && !parse_double(a->value, &v)) continue;  // reported by assign()
    const std::string shown = a ? a->value : fmt_num(v);
    const bool encoder_param = static_cast<const char*>(field) >= params_begin &&
                               static_cast<const char*>(field) < params_end;
    if (k.allowed && !in_table_range(k, v)) {
      const ValueFallback* fb = find_value_fallback(k.name);
      if (fb && v >= fb->lo && v <= fb->hi && v == std::floor(v)) {
        not_honoured.push_back(std::string(k.name) + " = " + shown + " (" + where + "; gme264 " + fb->instead + ")");
        v = fb->to;
      }
    }
    const bool convertible = k.type == KeyType::Double ||
                             (v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max());
    if (!convertible || ((k.type == KeyType::Flag || !encoder_param) && !in_table_range(k, v))) {
      errors.push_back(range_error(k, shown, where));
      continue;
    }
    switch (k.type) {
      case KeyType::Int: *static_cast<int*>(field) = static_cast<int>(v); break;
      case KeyType::Flag: *static_cast<bool*>(field) = v != 0; break;
      case KeyType::Double: *static_cast<double*>(field) = v; break;
      case KeyType::String: break;
    }
  }
  EncoderParams& p = t.p;
  if (warnings && !not_honoured.empty()) {
    std::string w = "JM encoder heuristics not honoured (the stream stays baseline; decisions can differ from JM): ";
    for (size_t i = 0; i < not_honoured.size(); ++i) w += (i ? ", " : "") + not_honoured[i];
    warnings->push_back(w);
  }

  // ---- Rules of keys that are not encoder parameters
  if (p.input_file.empty())
    errors.push_back("InputFile is not set (" + origin_of("InputFile") +
                     "): give it in a .cfg file or as -p InputFile=name.yuv (- for the standard input)");
  if (p.output_file.empty())
    errors.push_back("OutputFile is empty (" + origin_of("OutputFile") + "): expected a file name");
  if (t.cb_qp_offset != t.cr_qp_offset)
    errors.push_back("CbQPOffset = " + std::to_string(t.cb_qp_offset) + " (" + origin_of("CbQPOffset") +
                     ") and CrQPOffset = " + std::to_string(t.cr_qp_offset) + " (" + origin_of("CrQPOffset") +
                     ") differ: the baseline profile has one chroma QP offset (set ChromaQPOffset)");
  else if (t.cb_qp_offset != 0 && t.cb_qp_offset != p.chroma_qp_offset)
    errors.push_back("CbQPOffset = CrQPOffset = " + std::to_string(t.cb_qp_offset) + " but ChromaQPOffset = " +
                     std::to_string(p.chroma_qp_offset) +
                     ": JM 19.0 uses ChromaQPOffset for ProfileIDC 66 (and ignores CbQPOffset/CrQPOffset); set "
                     "ChromaQPOffset");
  if (t.resend_sps == 0 && p.idr_period > 0)
    errors.push_back("ResendSPS = 0 with IDRPeriod = " + std::to_string(p.idr_period) +
                     ": gme264 writes SPS/PPS before every IDR picture, which is JM's ResendSPS = 2; set "
                     "ResendSPS = 2");

  // ---- The encoder's own rules, each reported with where its key's value came from
  if (p.frames_to_encode > 0) resolve_frame_count(p, p.frames_to_encode);
  for (const ParamProblem& problem : check_params(p, ParamStage::kBeforeInput)) {
    if (y4m && (problem.key == "SourceWidth" || problem.key == "SourceHeight")) continue;  // the header's size counts
    std::string line = problem.key + " = " + problem.value + " (" + origin_of(problem.key.c_str()) + "): " +
                       problem.expected;
    const KeyDef* k = find_supported(problem.key);
    if (k && k->allowed && k->jm_note && *k->jm_note) line += " (" + std::string(k->jm_note) + ")";
    errors.push_back(line);
  }
  if (!errors.empty()) throw ConfigError(errors);
  return p;
}

void resolve_frame_count(EncoderParams& p, int frames) {
  p.frames_to_encode = frames;
  // JM 19.0 lencod.c: "-1" derives the field sizes from the number of frames.
  if (p.log2_max_frame_num_minus4 == -1) {
    int v = ceil_log2(frames) - 4;
    p.log2_max_frame_num_minus4 = v < 0 ? 0 : (v > 12 ? 12 : v);
  }
  if (p.log2_max_poc_lsb_minus4 == -1) {
    int n = frames > 2 ? frames : 2;
    int v = ceil_log2(n << 1) - 4;
    p.log2_max_poc_lsb_minus4 = v < 0 ? 0 : (v > 12 ? 12 : v);
  }
}

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine cl;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help" || a == "-help") {
      cl.help = true;
      return cl;
    }
    if (a == "-V" || a == "--version") {
      cl.version = true;
      return cl;
    }
  }
  ConfigBuilder b;
  int i = 1;
  if (argc >= 2 && std::strcmp(argv[1], "-d") == 0) {
    if (argc < 3) throw ConfigError("option -d needs a file name (lencod -d default.cfg ...)");
    b.parse_file(argv[2], "-d");
    cl.sources.push_back(argv[2]);
    cl.config_files.push_back({"-d", argv[2]});
    i = 3;
  } else {
    // JM reads encoder.cfg from the working directory when no -d is given. JM stops if it is missing; gme264's
    // built-in defaults are complete, so a missing encoder.cfg is fine (which file was read is printed).
    struct stat st;
    if (stat("encoder.cfg", &st) == 0) {
      b.parse_file("encoder.cfg", "default configuration file");
      cl.sources.push_back("encoder.cfg");
      cl.config_files.push_back({"encoder.cfg", "encoder.cfg"});
    }
  }
  while (i < argc) {
    const std::string a = argv[i];
    if (a == "-f" || a == "-F") {
      if (i + 1 >= argc) throw ConfigError("option -f needs a file name (lencod -f file.cfg ...)");
      b.parse_file(argv[i + 1], "-f");
      cl.sources.push_back(argv[i + 1]);
      cl.config_files.push_back({"-f", argv[i + 1]});
      i += 2;
    } else if (a == "-p" || a == "-P") {
      // As JM: every following argument up to the next option is a Key=Value setting.
      ++i;
      if (i >= argc || argv[i][0] == '-') throw ConfigError("option -p needs Key=Value (lencod -p QPISlice=28)");
      std::vector<std::string> words;
      std::string shown;
      while (i < argc && argv[i][0] != '-') {
        words.push_back(argv[i]);
        shown += (shown.empty() ? "" : " ") + std::string(argv[i]);
        ++i;
      }
      b.parse_assignments(words);
      cl.sources.push_back("-p " + shown);
    } else if (a == "-d") {
      throw ConfigError("option -d must come first: it replaces the default configuration file encoder.cfg");
    } else {
      throw ConfigError("unexpected command-line argument '" + a +
                        "': expected -h, -d default.cfg, -f file.cfg or -p Key=Value");
    }
  }
  cl.params = b.finish(&cl.warnings);
  cl.origins = b.origins();
  return cl;
}

void print_help(std::ostream& o) {
  o << "\n   lencod [-h] [-V] [-d defenc.cfg] {[-f curenc1.cfg]...[-f curencN.cfg]} "
       "{[-p EncParam1=EncValue1]..[-p EncParamM=EncValueM]}\n\n"
       "## Options\n"
       "   -h :  prints this help\n"
       "   -V :  prints the version (also --version)\n"
       "   -d :  use <defenc.cfg> as default file for parameter initializations (must come first).\n"
       "         Without -d, encoder.cfg in the working directory is read when it exists.\n"
       "   -f :  read <curencM.cfg> for resetting selected encoder parameters (several allowed, in order).\n"
       "   -p :  set parameter <EncParamM> to <EncValueM> (after all files, in order).\n\n"
       "## Examples\n"
       "   lencod -d cfg/encoder_baseline.cfg\n"
       "   lencod -d cfg/encoder_baseline.cfg -p QPISlice=32 -p QPPSlice=32 -p GPUIntegerME=1\n\n"
       "## Supported keys (default: when no file sets the key; see doc/CONFIG.md)\n";
  o << std::left;
  for (const KeyDef& k : supported_keys()) {
    const std::string range = range_text(k);
    o << "   " << std::setw(24) << k.name << " default " << std::setw(11) << default_text(k) << " ";
    if (range.size() > 22)  // e.g. LevelIDC's list: meaning on its own line
      o << range << "\n" << std::string(48, ' ') << k.meaning << "\n";
    else
      o << std::setw(22) << range << " " << k.meaning << "\n";
  }
  o << "\n## Other JM 19.0 keys\n"
       "   JM tools that would change the stream's syntax or profile (SymbolMode, NumberBFrames, Transform8x8Mode,\n"
       "   RateControlEnable, ...) are accepted only with the value that turns them off. JM encoder heuristics\n"
       "   (DisableThresholding, I16RDOpt, CtxAdptLagrangeMult, UseRDOQuant, SearchMode 1-3, RDOptimization 2-4,\n"
       "   ...) accept any value; those gme264 does not honour are named in one warning line with what it does\n"
       "   instead (JM's defaults are all honoured). Keys that cannot change the result (B-slice, rate-control,\n"
       "   VUI and trace settings, SubMBCodingState) are accepted and ignored, a number where JM reads a number.\n"
       "   Unknown keys give one warning line.\n";
}

}  // namespace gme
