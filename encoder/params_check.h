// The encoder's validation of EncoderParams, in one place: the range of every field and every rule between fields
// the encoder relies on. The Encoder constructor refuses parameters with a problem (the first one in its message);
// lencod's configuration reports every problem, each naming its key and where the value came from.
#pragma once
#include <string>
#include <vector>

#include "encoder/params.h"

namespace gme {

struct ParamProblem {
  std::string key;       // the JM 19.0 key of the field to change ("QPISlice")
  std::string value;     // its value as text ("52")
  std::string expected;  // what is expected ("expected an integer in [0, 51]"), naming the other keys involved
  std::string text() const { return key + " = " + value + ": " + expected; }
};

enum class ParamStage {
  kBeforeInput,  // FramesToBeEncoded, Log2MaxFNumMinus4 and Log2MaxPOCLsbMinus4 may still be -1 (derived from
                 // the input's length once it is open)
  kEncoding,     // everything resolved, as the Encoder receives it
};

// Every problem, in the order of params.h (ranges), then the rules between fields. Empty: the encoder accepts p.
std::vector<ParamProblem> check_params(const EncoderParams& p, ParamStage stage = ParamStage::kEncoding);

// What the parameters give that the configured level does not allow but a decoder will still decode (picture size
// and macroblock rate against H.264 Table A-1), one line each: lencod prints them as warnings. (A reference count
// past the level's picture buffer is a problem of check_params.)
std::vector<std::string> level_warnings(const EncoderParams& p);

}  // namespace gme
