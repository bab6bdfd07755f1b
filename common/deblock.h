// In-loop deblocking filter (H.264 clause 8.7) for frame pictures, 4:2:0, baseline profile tools (4x4 transform,
// no MBAFF, no field pictures). The encoder runs it on every reconstructed picture before it becomes a reference,
// so it must be bit-exact with any conforming decoder.
#pragma once
#include <cstdint>
#include <vector>

#include "common/frame.h"
#include "common/mbinfo.h"

namespace gme {

struct DeblockFuncs;

// Filters a whole reconstructed picture in place (luma and both chroma planes, coded size), macroblocks in raster
// order, with the edge filters of f. mbs[mb_y * mb_width + mb_x]; params[mb.slice_id] holds each slice's
// disable_deblocking_filter_idc and offsets; chroma_qp_offset is the PPS chroma_qp_index_offset. Macroblocks with
// slice_id < 0 are left alone.
void deblock_picture(const DeblockFuncs& f, Frame& pic, const MbInfo* mbs, int mb_width, int mb_height,
                     const std::vector<SliceDeblockParams>& params, int chroma_qp_offset);

// The same one macroblock at a time (edge filters of f), for callers that filter rows as they are reconstructed.
// filter(x, y) reads and writes macroblock (x, y), the three columns next to it in (x - 1, y) and the three rows
// above it in (x, y - 1) (and reads one more of each); so any order gives deblock_picture's picture as long as
// (x - 1, y) and (x + 1, y - 1) are filtered before (x, y) - the last macroblock to touch a sample is then the same
// - and nothing reads a macroblock's unfiltered samples after it or its right or lower neighbour is filtered. `f`,
// `mbs` and `params` must outlive it.
class MacroblockDeblocker {
 public:
  MacroblockDeblocker(const DeblockFuncs& f, Frame& pic, const MbInfo* mbs, int mb_width,
                      const std::vector<SliceDeblockParams>& params, int chroma_qp_offset);
  void filter(int mb_x, int mb_y) const;

 private:
  const DeblockFuncs& f_;  // read-only, shared by every worker (EncoderState::dsp)
  Frame& pic_;
  const MbInfo* mbs_;
  int mb_width_;
  const std::vector<SliceDeblockParams>& params_;
  int qpc_of_[52];
};

// ---- Building blocks, exposed for tests (tests/test_deblock.cpp) ----

// Table 8-16 (alpha', beta') and Table 8-17 (tC0' for bS 1..3), 8-bit video; index 0..51.
int deblock_alpha(int index_a);
int deblock_beta(int index_b);
int deblock_tc0(int index_a, int bs);

// Boundary strength (8.7.2.1) between 4x4 luma block blk_p of macroblock p and block blk_q of macroblock q
// (raster indices inside each macroblock); mb_edge: the edge is a macroblock edge. For an internal edge, p and q
// are the same macroblock.
int deblock_bs(const MbInfo& p, int blk_p, const MbInfo& q, int blk_q, bool mb_edge);

// Filters one line of samples across an edge (8.7.2.3 / 8.7.2.4). q0 points at the first sample on the q side,
// p0 is at q0[-step], p1 at q0[-2 * step], q1 at q0[step], ... alpha/beta/tc0 come from the tables above (tc0 is
// ignored for bs 4).
void deblock_luma_line(uint8_t* q0, int step, int bs, int alpha, int beta, int tc0);
void deblock_chroma_line(uint8_t* q0, int step, int bs, int alpha, int beta, int tc0);

// One luma edge of a macroblock: 16 lines in four segments of 4 lines with bS bs[s] (0: not filtered) and tC0
// tc0[s] (ignored for bS 4). q0 is the first q sample of line 0; `across` crosses the edge, `along` moves to the
// next line (a vertical edge: across 1, along the stride; a horizontal one the other way round). The plain version
// (deblock_luma_line per line) takes any bS; the table's entries (DeblockFuncs) take edges whose bS are all 4 or
// all below 4, as frame coding gives them (deblock_picture sends any other edge to the plain version).
using LumaEdgeFn = void (*)(uint8_t* q0, int across, int along, const uint8_t bs[4], const uint8_t tc0[4], int alpha,
                            int beta);
void deblock_luma_edge_c(uint8_t* q0, int across, int along, const uint8_t bs[4], const uint8_t tc0[4], int alpha,
                         int beta);
// The same for one chroma edge of both planes (8 lines each; chroma line k takes bs[k / 2] and tc0[k / 2]).
using ChromaEdgesFn = void (*)(uint8_t* cb, uint8_t* cr, int across, int along, const uint8_t bs[4],
                               const uint8_t tc0[4], int alpha, int beta);
void deblock_chroma_edges_c(uint8_t* cb, uint8_t* cr, int across, int along, const uint8_t bs[4], const uint8_t tc0[4],
                            int alpha, int beta);

// The SIMD-able edge filters (part of DspFuncs, common/dsp.h); deblock_init() installs the SIMD versions the CPU
// flags allow.
struct DeblockFuncs {
  LumaEdgeFn luma_edge;
  ChromaEdgesFn chroma_edges;
};
void deblock_init(uint32_t cpu, DeblockFuncs& f);

}  // namespace gme
