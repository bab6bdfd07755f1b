// One macroblock: residual coding (transform, quantisation, reconstruction into the picture being built), the
// macroblock_layer() syntax in CAVLC, and the MbInfo the neighbours and the deblocking filter read afterwards.
// Decisions are made elsewhere (analyse_intra, analyse_inter); this file only carries them out.
#pragma once
#include <cstdint>
#include <new>
#include <type_traits>

#include "common/bitstream.h"
#include "common/dsp.h"
#include "common/frame.h"
#include "common/intra_pred.h"
#include "common/mbinfo.h"
#include "common/quant_rounding.h"
#include "encoder/encoder.h"
#include "encoder/lambda.h"
#include "encoder/params.h"

namespace gme {

// The pending mb_skip_run before a macroblock where the loop does not know it yet (encoder/wavefront.cpp: a row's
// first macroblocks continue the run of a row still being decided). wait() blocks until it is known.
class SkipRunWait {
 public:
  virtual int wait() = 0;

 protected:
  ~SkipRunWait() = default;
};

// What coding one macroblock needs to know about its picture and slice.
struct MbContext {
  const EncoderParams* p = nullptr;
  const Frame* src = nullptr;
  Frame* rec = nullptr;         // reconstruction being built (intra prediction reads it)
  MbInfo* mbs = nullptr;        // the picture's macroblocks, raster order
  int mb_w = 0, mb_h = 0;
  int slice_id = 0;
  bool p_slice = false;
  int qp = 26, qp_c = 26;
  const QuantRounding* rounding = nullptr;  // the quantiser's offsets for this macroblock (common/quant_rounding.h)
  Lambdas lam;
  const DspFuncs* dsp = nullptr;  // the encoder's function table (EncoderState::dsp)
  int num_ref_idx_active = 1;   // P slices: ref_idx is te(v) with cMax = num_ref_idx_active - 1
  const Frame* const* refs = nullptr;  // P slices: list 0, index = ref_idx (Frame::id gives MbInfo::ref_id)
  int skip_run = 0;             // P slices: mb_skip_run pending before this macroblock (rate of P_Skip in RD)
  // Not null when skip_run is not known yet: only RDOptimization 1's P_Skip cost reads the run, and only through
  // rd_skip_rate's two possible values; the decision asks skip_run_wait->wait() where they would decide differently.
  SkipRunWait* skip_run_wait = nullptr;
  int mb_x = 0, mb_y = 0;       // the macroblock being coded
  bool check_cost_bounds = false;  // EncoderState::check_cost_bounds (tests)

  // Neighbour macroblock (dx, dy in -1..1) in the same slice, or nullptr.
  const MbInfo* neighbour(int dx, int dy) const {
    int x = mb_x + dx, y = mb_y + dy;
    if (x < 0 || y < 0 || x >= mb_w || y >= mb_h) return nullptr;
    const MbInfo& m = mbs[y * mb_w + x];
    return m.slice_id == slice_id ? &m : nullptr;
  }
  // Available for intra prediction (constrained_intra_pred excludes inter macroblocks).
  bool intra_avail(int dx, int dy) const {
    const MbInfo* m = neighbour(dx, dy);
    return m && (!p->constrained_intra_pred || m->is_intra());
  }
};

// A decided macroblock, ready to be written.
struct MbCoding {
  MbType type = MbType::I16x16;
  int i16_mode = 0;
  int chroma_mode = 0;
  int8_t i4_mode[16] = {};        // Intra4x4PredMode per raster 4x4 block
  int luma_dc[16] = {};           // Intra16x16 DC levels, zig-zag
  int luma[16][16] = {};          // levels per raster 4x4 block, zig-zag (Intra16x16: positions 1..15)
  int chroma_dc[2][4] = {};
  int chroma_ac[2][4][16] = {};   // zig-zag, positions 1..15
  int cbp = 0;                    // coded_block_pattern: luma bits 0..3, chroma << 4
  uint8_t pcm[384] = {};
  // Inter (P) data.
  int8_t ref_idx[4] = {0, 0, 0, 0};
  MV mv[16];                      // per raster 4x4 block
  MV mvd[16];                     // mvd per partition, stored at the partition's first 4x4 block
  SubMbType sub_type[4] = {};
  // AdaptiveRounding: the adjustments its quantisation left (common/quant_rounding.h), for the update of the
  // offsets after the macroblock; zero otherwise.
  RoundingAdjust rounding_adjust = {};
};

// `mb` as default-constructed, in place: assigning MbCoding() would build a zeroed temporary of its 2 KB of levels
// and then copy it, twice the memory traffic, for every macroblock.
inline void reset_coding(MbCoding& mb) {
  static_assert(std::is_trivially_destructible<MbCoding>::value, "reset_coding reuses the storage in place");
  ::new (&mb) MbCoding();
}

// Raster 4x4 block index -> decoding order index (luma4x4BlkIdx) and back.
extern const uint8_t kBlkToDecode[16];
extern const uint8_t kDecodeToBlk[16];

// Edges for luma 4x4 block blk (raster), luma 16x16 and chroma component c (0 Cb, 1 Cr) from the reconstruction.
void edge_luma4x4(const MbContext& c, int blk, Edge4x4& e);
void edge_luma16(const MbContext& c, Edge16& e);
void edge_chroma(const MbContext& c, int comp, Edge16& e);

// Codes one Intra4x4 luma block against prediction pred (16 samples): residual from the source, quantisation into
// mb.luma[blk], reconstruction written into the picture. Returns the number of non-zero levels. With
// AdaptiveRounding its adjustments go to mb.rounding_adjust, except for a residual that is zero everywhere, which
// (as in JM) leaves the block's adjustments as they were.
int code_luma4x4(const MbContext& c, int blk, const uint8_t pred[16], MbCoding& mb);
// Intra16x16 luma with prediction mode mb.i16_mode: fills luma_dc, luma AC, the luma cbp bits, reconstructs.
void code_intra16x16(const MbContext& c, MbCoding& mb);
// Chroma residual for predictions pred[2][64]: fills chroma levels and the chroma cbp bits, reconstructs.
void code_chroma(const MbContext& c, const uint8_t pred[2][64], MbCoding& mb);
// Motion-compensated prediction of an inter macroblock (mb.type, ref_idx, mv) from c.refs.
void predict_inter(const MbContext& c, const MbCoding& mb, uint8_t luma[256], uint8_t chroma[2][64]);
// Inter residual: luma 4x4 blocks with JM's coefficient thresholding (8x8 cost <= 4 and macroblock cost <= 5 drop
// the luma residual), then chroma; reconstructs. P_Skip: the prediction becomes the reconstruction.
void code_inter(const MbContext& c, const uint8_t luma[256], const uint8_t chroma[2][64], MbCoding& mb);
// Luma residual of one 8x8 (b8) of an inter macroblock against prediction pred (16x16 buffer, stride 16): levels
// into mb.luma, JM's 8x8 thresholding (coefficient cost <= 4 drops the block), reconstruction into the picture.
// Returns the remaining coefficient cost (JM cnt_nonz; 0 when nothing is coded).
int code_inter_luma8x8(const MbContext& c, int b8, const uint8_t pred[256], MbCoding& mb);
// Sets mb.mvd from mb.mv and the motion vector predictors of its partitions in decoding order.
void compute_mvd(const MbContext& c, MbCoding& mb);
// Chroma intra prediction of mode mb.chroma_mode, then code_chroma.
void code_chroma_intra(const MbContext& c, MbCoding& mb);
// I_PCM: source samples become the reconstruction.
void code_ipcm(const MbContext& c, MbCoding& mb);

// The bits of one macroblock_layer() by syntax element, in JM 19.0's categories (encoder.h PictureBitUse).
struct MbBits {
  int mode = 0, motion = 0, cbp = 0, dquant = 0, coeff_y = 0, coeff_c = 0;
};

// Adds a macroblock's bits (of a macroblock of type `type`) to its picture's count.
void add_bits(PictureBitUse& use, const MbBits& bits, MbType type);

// Writes macroblock_layer() (mb_skip_run is the slice's business) and fills info (type, cbp, qp, total_coeff,
// intra modes, nonzero mask, inter fields; slice_id is set by the caller before writing). Returns bits written;
// `bits` (optional) gets them by syntax element.
int64_t write_macroblock(BitWriter& bw, const MbContext& c, const MbCoding& mb, MbInfo& info,
                         MbBits* bits = nullptr);

// Fills MbInfo fields that do not depend on the bitstream (type, qp, intra modes, inter data); write_macroblock
// calls it and completes total_coeff.
void fill_mbinfo(const MbContext& c, const MbCoding& mb, MbInfo& info);

// Most probable Intra4x4PredMode of block blk given the modes already set in cur (this macroblock).
int predicted_intra4x4_mode(const MbContext& c, const MbInfo& cur, int blk);

// The number of coefficient bits of luma 4x4 block blk (its levels in mb.luma[blk]) with the nC context from cur.
int luma4x4_coeff_bits(const MbContext& c, const MbInfo& cur, int blk, const int levels[16]);

// Pointers into source / reconstruction at the current macroblock.
inline const uint8_t* src_luma(const MbContext& c) { return c.src->plane[0].at(16 * c.mb_x, 16 * c.mb_y); }
inline uint8_t* rec_luma(const MbContext& c) { return c.rec->plane[0].at(16 * c.mb_x, 16 * c.mb_y); }
inline const uint8_t* src_chroma(const MbContext& c, int comp) { return c.src->plane[1 + comp].at(8 * c.mb_x, 8 * c.mb_y); }
inline uint8_t* rec_chroma(const MbContext& c, int comp) { return c.rec->plane[1 + comp].at(8 * c.mb_x, 8 * c.mb_y); }

}  // namespace gme
