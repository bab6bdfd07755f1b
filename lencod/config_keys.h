// The key table behind lencod/config.cpp: every JM 19.0 key gme264 knows, in three kinds.
//   supported   - mapped to an EncoderParams field (whose initial value is the default), JM 19.0 name, range;
//   unsupported - a JM tool that would change the stream's syntax or profile (CABAC, B slices, interlace, 8x8
//                 transform, bit depth, chroma format, weighted prediction, FMO, rate control, ...): accepted only
//                 with the value that means "tool off";
//   heuristic   - a JM encoder-side decision heuristic that cannot make the stream leave the baseline syntax
//                 (rounding, fast decisions, thresholding, RDO sub-options, ...): any number is accepted; values
//                 gme264 does not honour are listed in one warning line with what gme264 does instead;
//   ignored     - JM keys that cannot change gme264's output (B-slice, rate-control, VUI, trace, ... settings that
//                 only matter when a tool we require off is on), accepted with any number (any text for the
//                 keys JM reads as text, such as TraceFile).
// Anything else is an unknown key (one warning line, as JM only prints a message and goes on).
#pragma once
#include <string>
#include <vector>

#include "encoder/params.h"

namespace gme {

// What the parser fills: the parameters plus the few keys that are checked but have no field of their own.
struct ConfigTarget {
  EncoderParams p;
  int cb_qp_offset = 0;  // CbQPOffset (must equal CrQPOffset and, if non-zero, ChromaQPOffset)
  int cr_qp_offset = 0;  // CrQPOffset
  int resend_sps = 0;    // ResendSPS (0 or 2; gme264 writes SPS/PPS before every IDR picture)
};

enum class KeyType { Int, Flag, Double, String };

struct KeyDef {
  const char* name;       // JM 19.0 spelling
  KeyType type;
  double lo, hi;          // accepted range (Int/Flag/Double)
  const char* allowed;    // if set: the accepted values of an Int key, comma-separated ("0,2"); lo/hi ignored
  void* (*field)(ConfigTarget&);
  const char* meaning;
  const char* jm_note;    // difference from JM 19.0 ("" if none)
};

struct UnsupportedKey {
  const char* name;
  double neutral;  // the only accepted value (the JM 19.0 default, "tool off")
  const char* what;  // the tool, for the message
};

// A JM encoder heuristic gme264 does not implement (or implements one setting of): any value parses.
struct HeuristicKey {
  const char* name;
  double honoured;      // the value gme264's behaviour matches; others give the warning
  const char* instead;  // what gme264 does instead, for the warning
};

// A supported key whose other JM values (lo..hi, JM 19.0's range) are encoder heuristics: such a value is replaced
// by `to` with a warning; values outside JM's range stay errors.
struct ValueFallback {
  const char* name;
  int lo, hi;
  int to;
  const char* instead;
};

const std::vector<KeyDef>& supported_keys();
// The value of a key no file sets: the field's initial value in ConfigTarget / EncoderParams (encoder/params.h),
// which holds JM 19.0's built-in defaults (the exceptions are in jm_note and doc/CONFIG.md). Numbers as double;
// key_default_text gives String keys' text.
double key_default(const KeyDef& k);
std::string key_default_text(const KeyDef& k);
const std::vector<HeuristicKey>& heuristic_keys();
const HeuristicKey* find_heuristic(const std::string& name);
const ValueFallback* find_value_fallback(const std::string& canonical_name);
const std::vector<UnsupportedKey>& unsupported_keys();
bool is_ignored_key(const std::string& canonical_name);

// Key lookup. JM 19.0 compares names with strcasecmp, so "searchrange" is SearchRange there too; we do the same.
// Returns the canonical JM spelling in *canonical.
const KeyDef* find_supported(const std::string& name);
const UnsupportedKey* find_unsupported(const std::string& name);
// *text (when given) tells whether JM 19.0 reads the key as text (a file name, a format string); its other ignored
// keys are numbers.
bool find_ignored(const std::string& name, std::string* canonical, bool* text = nullptr);

}  // namespace gme
