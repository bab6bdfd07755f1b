// The JM-compatible configuration front end of lencod: command line, .cfg files, key table, range and cross-key
// checks. Everything ends in one EncoderParams; the encoder never sees a key name. doc/CONFIG.md lists the keys.
//
// Command line (as JM 19.0 lencod):  lencod [-h] [-d default.cfg] [-f file.cfg]... [-p Key=Value]...
// Precedence: built-in defaults (JM 19.0's), then the default file (-d FILE, which must be the first option; without
// -d, ./encoder.cfg when it exists, as JM reads it), then every -f in order, then every -p in order. The last
// assignment of a key wins.
#pragma once
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "encoder/params.h"

namespace gme {

// Each line names the file:line / key / value and what was expected (no "lencod: error:" prefix). A configuration
// with several bad values gives one line for each (lines()); what() is them joined by newlines.
struct ConfigError : std::runtime_error {
  explicit ConfigError(const std::string& line) : std::runtime_error(line), lines_{line} {}
  explicit ConfigError(const std::vector<std::string>& lines) : std::runtime_error(join(lines)), lines_(lines) {}
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  static std::string join(const std::vector<std::string>& lines) {
    std::string s;
    for (const std::string& l : lines) s += (s.empty() ? "" : "\n") + l;
    return s;
  }
  std::vector<std::string> lines_;
};

// A configuration file that was read: how it was named ("-d", "-f", "encoder.cfg") and its path. lencod's outputs
// must not be one of them.
struct ConfigFileRead {
  std::string how;
  std::string path;
};

struct CommandLine {
  EncoderParams params;
  bool help = false;
  bool version = false;  // --version or -V: print the version and stop
  std::vector<std::string> warnings;  // one line each, e.g. the unknown keys (all named in a single line)
  std::vector<std::string> sources;   // what was parsed, in order ("encoder.cfg", "cfg/x.cfg", "-p QPISlice=28")
  std::vector<ConfigFileRead> config_files;  // every -d/-f file (and ./encoder.cfg) read, in order
  // Canonical key name -> where its final value came from ("cfg/x.cfg:12", "-p 'QPISlice=28'"); keys left at their
  // built-in default are absent. Lets later checks (the input's header, the picture size) name the setting.
  std::map<std::string, std::string> origins;
};

// Parses argv exactly like JM's lencod (-d default.cfg, -f file.cfg ..., -p Key=Value ..., -h).
// Throws ConfigError. With -h, returns help = true without reading any file.
CommandLine parse_command_line(int argc, const char* const* argv);

// FramesToBeEncoded = -1 ("the whole input") is resolved by the driver once the input is open: sets the count and
// derives Log2MaxFNumMinus4 / Log2MaxPOCLsbMinus4 = -1 from it as JM 19.0 does. finish() calls it when the count
// is known. The Encoder checks the result (encoder/params_check.h).
void resolve_frame_count(EncoderParams& p, int frames);

// Prints usage and every supported key with its default, range and meaning.
void print_help(std::ostream&);

// Lower-level entry points (used by parse_command_line and by the tests).
// A configuration being built: key assignments in precedence order, then finish() checks and fills EncoderParams.
class ConfigBuilder {
 public:
  ConfigBuilder();
  // Parses the text of a .cfg file; `origin` names it in messages ("cfg/a.cfg"). A UTF-8 byte order mark at the
  // start is skipped. Malformed lines and values that are not numbers are collected; finish() reports them all
  // (the text quoted shortened, control bytes escaped). Text holding a NUL byte is no configuration file: one error.
  // A key set twice in one file is a warning of finish() (naming both lines and the value kept).
  void parse_text(const std::string& text, const std::string& origin);
  // Reads and parses a file; missing/unreadable file -> ConfigError naming `how` ("-f", "-d", "default").
  void parse_file(const std::string& path, const std::string& how);
  // One -p argument: "Key=Value" or "Key = Value" (the value may contain blanks; "" quotes are removed).
  void parse_assignment(const std::string& arg);
  // The words following one -p, joined as JM does: ["QPISlice", "=", "28", "QPPSlice=28"] is two settings.
  void parse_assignments(const std::vector<std::string>& words);
  // Applies defaults, converts, checks every value (encoder/params_check.h: the encoder's own rules, reported here
  // with the key's origin) and the keys that are not encoder parameters. Throws ConfigError naming every problem.
  EncoderParams finish(std::vector<std::string>* warnings) const;
  // Canonical key -> origin of its last assignment (supported, unsupported and heuristic keys).
  std::map<std::string, std::string> origins() const;

 private:
  struct Assignment {
    std::string key;     // canonical key name (JM spelling)
    std::string value;   // unquoted text
    std::string origin;  // "file:line" or "-p 'Key=Value'"
  };
  void assign(const std::string& key, const std::string& value, const std::string& origin);
  bool try_assignment(const std::string& text);
  void type_error(const char* key, const std::string& value, const std::string& origin, const char* expected);
  // Every setting of a known key with the source it came from (one per parse_text, one for all -p), so that a key
  // set twice in one source can be named.
  struct Seen {
    std::string key;    // canonical
    std::string value;
    std::string where;  // "line 12" or "-p 'Key=Value'"
    std::string file;   // the file's name (files only)
    int source;
  };
  std::vector<Seen> seen_;
  int source_ = 0;            // the source being parsed: > 0 a file, kCommandLine the -p list
  std::string source_name_;   // its file name
  int files_parsed_ = 0;
  static constexpr int kCommandLine = -1;
  std::vector<Assignment> assignments_;  // last one per key wins
  std::vector<std::string> unknown_;     // "Key (origin)"
  std::vector<std::string> errors_;      // malformed lines and values, in the order met
};

}  // namespace gme
