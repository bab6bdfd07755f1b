// The two function tables tests use (common/dsp.h): this CPU's (what the encoder runs here) and the plain one.
// tests/test_checkasm.cpp holds every entry of the first to the second; other tests need only one of them.
#pragma once
#include "common/cpu.h"
#include "common/dsp.h"

namespace gme {

inline const DspFuncs& dsp_here() {
  static const DspFuncs f = [] {
    DspFuncs t;
    dsp_init(cpu_detect(), t);
    return t;
  }();
  return f;
}

inline const DspFuncs& dsp_plain() {
  static const DspFuncs f = [] {
    DspFuncs t;
    dsp_init(0, t);
    return t;
  }();
  return f;
}

}  // namespace gme
