// Intra prediction sample generation (H.264 8.3.1.2, 8.3.3, 8.3.4) from explicit neighbour samples. Callers
// gather the edges and availability (slice boundaries, constrained intra prediction) themselves; see
// gather_* below for the usual case of a reconstructed plane.
#pragma once
#include <cstdint>

namespace gme {

enum Intra4x4Mode { kI4V = 0, kI4H, kI4DC, kI4DDL, kI4DDR, kI4VR, kI4HD, kI4VL, kI4HU };
enum Intra16x16Mode { kI16V = 0, kI16H, kI16DC, kI16Plane };
enum IntraChromaMode { kIcDC = 0, kIcH, kIcV, kIcPlane };

struct Edge4x4 {
  uint8_t top[8];  // p[0..7, -1]; when top-right is unavailable and top is, 4..7 repeat top[3] (8.3.1.2)
  uint8_t left[4];
  uint8_t top_left;
  bool has_top = false, has_left = false, has_top_left = false;
};

struct Edge16 {  // 16x16 luma or 8x8 chroma (n = 16 or 8 samples used)
  uint8_t top[16];
  uint8_t left[16];
  uint8_t top_left;
  bool has_top = false, has_left = false, has_top_left = false;
};

// Whether the mode may be used with these neighbours.
// (Intra4x4 inline: the decision asks for each of the nine modes of every 4x4 block.)
inline bool intra4x4_mode_available(int mode, const Edge4x4& e) {
  switch (mode) {
    case kI4V: case kI4DDL: case kI4VL: return e.has_top;
    case kI4H: case kI4HU: return e.has_left;
    case kI4DC: return true;
    default: return e.has_top && e.has_left && e.has_top_left;  // DDR, VR, HD
  }
}
bool intra16x16_mode_available(int mode, const Edge16& e);
bool intra_chroma_mode_available(int mode, const Edge16& e);

// Prediction into pred (stride = block width).
void predict_intra4x4(int mode, const Edge4x4& e, uint8_t pred[16]);
// All nine Intra4x4 modes at once, pred[mode] as predict_intra4x4 would give it (modes the edge does not allow
// come out as some function of the placeholder samples, exactly as predict_intra4x4 computes them).
using Intra4x4AllFn = void (*)(const Edge4x4& e, uint8_t pred[9][16]);
void predict_intra4x4_all_c(const Edge4x4& e, uint8_t pred[9][16]);
// Plane prediction (8.3.3.4 for n = 16, 8.3.4.4 for chroma n = 8) into pred (stride n).
using PlanePredFn = void (*)(const Edge16& e, int n, uint8_t* pred);
void predict_plane_c(const Edge16& e, int n, uint8_t* pred);

// The SIMD-able intra predictions (part of DspFuncs, common/dsp.h): intra_pred_init() installs the SIMD versions
// the CPU flags allow (SSSE3 all-nine-modes Intra4x4, SSE2 plane).
struct IntraPredFuncs {
  Intra4x4AllFn predict_4x4_all;
  PlanePredFn predict_plane;
};
void intra_pred_init(uint32_t cpu, IntraPredFuncs& f);

// Intra16x16 and chroma predictions; the plane mode runs f.predict_plane.
void predict_intra16x16(const IntraPredFuncs& f, int mode, const Edge16& e, uint8_t pred[256]);
void predict_intra_chroma(const IntraPredFuncs& f, int mode, const Edge16& e, uint8_t pred[64]);

// Gathers edges from a plane at block origin p (pointer to the block's top-left sample, `stride`).
void gather_edge4x4(const uint8_t* p, int stride, bool has_top, bool has_left, bool has_top_left, bool has_top_right,
                    Edge4x4& e);
void gather_edge16(const uint8_t* p, int stride, int n, bool has_top, bool has_left, bool has_top_left, Edge16& e);

}  // namespace gme
