// libFuzzer harness: lencod's configuration front end (lencod/config.h) on arbitrary text, read as a .cfg file and
// as the words of -p settings, then converted and checked (finish(): every rule, encoder/params_check.h) and, when
// accepted, resolved for a fuzzed frame count. A ConfigError is the expected answer to bad text; anything else
// escaping (another exception, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "encoder/params_check.h"
#include "lencod/config.h"

namespace {

void finish_and_check(const gme::ConfigBuilder& b, int frames) {
  std::vector<std::string> warnings;
  gme::EncoderParams p = b.finish(&warnings);
  if (p.frames_to_encode == -1) gme::resolve_frame_count(p, frames);
  gme::check_params(p, gme::ParamStage::kEncoding);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const int frames = size ? 1 + data[0] * 257 : 1;
  try {
    gme::ConfigBuilder b;
    b.parse_text(text, "fuzz.cfg");
    finish_and_check(b, frames);
  } catch (const gme::ConfigError&) {
  }
  // The same text as command-line words (split at blanks and line ends), as after -p.
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  try {
    gme::ConfigBuilder b;
    b.parse_assignments(words);
    finish_and_check(b, frames);
  } catch (const gme::ConfigError&) {
  }
  return 0;
}
