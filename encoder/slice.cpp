#include "encoder/slice.h"

#include "common/bitstream.h"
#include "common/deblock.h"
#include "common/quant.h"
#include "common/stage_clock.h"
#include "encoder/headers.h"
#include "encoder/lambda.h"
#include "encoder/mb_worker.h"
#include "encoder/wavefront.h"

namespace gme {
namespace {

// Per-macroblock stage times: the cheap stage clock (common/stage_clock.h), as in the analysis.
inline double seconds_since(double t) { return stage_clock_seconds() - t; }

// JM's slice_too_big (macroblock.c, SliceMode 2, CAVLC): bytes of the slice RBSP written so far (header
// included, NAL header byte and stop bit not), a partly filled byte counting as one, plus one more byte when the
// pending mb_skip_run code does not fit into the free bits of the current byte.
int64_t slice_bytes_jm(const BitWriter& bw, int skip_run) {
  const int64_t bits = bw.bits();
  const int bits_to_go = 8 - static_cast<int>(bits % 8);
  const int rlc_bits = skip_run > 0 ? ue_bits(static_cast<uint32_t>(skip_run)) : 0;
  return bits / 8 + (bits_to_go < 8 ? 1 : 0) + (bits_to_go < rlc_bits ? 1 : 0);
}

// The in-order loop: one macroblock after another on worker 0, each slice's syntax written as it goes (SliceMode 2
// needs the bytes so far before it can place the next macroblock). Not deblocked.
SliceLoopStats code_slices_one_by_one(EncoderState& s, PictureSlot& slot, const PictureParams& pp, const Frame& src,
                                      Frame& rec, const std::vector<const Frame*>& refs,
                                      CandidateSourceFactory* sources, std::vector<uint8_t>& out) {
  SliceLoopStats st;
  const EncoderParams& p = s.p;
  const int total = s.mb_w * s.mb_h;
  const bool p_slice = pp.type == SliceType::P;
  MbContext c = picture_context(s, slot, pp, src, rec, refs, true);
  MbWorker& w = *slot.workers[0];
  w.begin_picture(c, sources);
  for (MbInfo& m : slot.mbs) m = MbInfo();

  int mb = 0;
  int slice_id = 0;
  while (mb < total) {
    BitWriter bw;
    write_slice_header(bw, s.seq, slice_header(s, pp, mb));
    st.bit_use.header += bw.bits();
    c.slice_id = slice_id;
    int skip_run = 0;
    int count = 0;
    bool undone = false;
    while (mb < total) {
      if (p.slice_mode == 1 && count >= p.slice_argument) break;
      c.mb_x = mb % s.mb_w;
      c.mb_y = mb / s.mb_w;
      const BitWriter::Mark mark = bw.mark();
      const int skip_before = skip_run;

      c.skip_run = skip_run;
      s.rounding.start_macroblock(mb, count == 0);
      MbCoding coding;
      w.decide(c, coding);

      // JM updates the rounding offsets inside the macroblock's coding, before SliceMode 2 may undo it: an undone
      // macroblock's update stays, and its second coding in the next slice adds another.
      s.rounding.update(mb_is_intra(coding.type), coding.type == MbType::IPCM, coding.rounding_adjust);

      const double t1 = stage_clock_seconds();
      MbInfo& info = slot.mbs[mb];
      MbBits mb_bits;
      if (coding.type == MbType::PSkip) {
        ++skip_run;
        fill_mbinfo(c, coding, info);
      } else {
        const int64_t before = bw.bits();
        if (p_slice) {
          bw.ue(static_cast<uint32_t>(skip_run));
          skip_run = 0;
        }
        const int run_bits = static_cast<int>(bw.bits() - before);
        write_macroblock(bw, c, coding, info, &mb_bits);
        mb_bits.mode += run_bits;  // JM counts the pending mb_skip_run with this macroblock
      }
      w.times.coding += seconds_since(t1);

      if (p.slice_mode == 2 && count > 0 && slice_bytes_jm(bw, skip_run) > p.slice_argument) {
        // Undo: this macroblock starts the next slice (its neighbours change, so it is decided again there).
        bw.rewind(mark);
        skip_run = skip_before;
        info = MbInfo();
        undone = true;
        break;
      }
      ++w.mb_counts[static_cast<int>(coding.type)];
      add_bits(st.bit_use, mb_bits, coding.type);
      ++mb;
      ++count;
    }
    if (skip_run > 0) {
      const int64_t before = bw.bits();
      bw.ue(static_cast<uint32_t>(skip_run));
      // JM (end_macroblock, SliceMode 2) leaves the run before a macroblock it codes again out of its statistics.
      if (!undone) st.bit_use.mode += bw.bits() - before;
    }
    bw.rbsp_trailing_bits();
    // As JM: the picture's first slice with the 4-byte start code, the others with the 3-byte one.
    const size_t bytes =
        write_nal_annexb(out, pp.idr ? 3 : 2, pp.idr ? kNalIdr : kNalSlice, bw.bytes(), slice_id == 0 ? 4 : 3);
    st.bits += static_cast<int64_t>(bytes) * 8;
    ++slice_id;
  }
  st.num_slices = slice_id;
  st.times = w.times;
  st.wait_seconds = w.wait_seconds;
  for (int i = 0; i < 9; ++i) st.mb_counts[i] = w.mb_counts[i];
  w.end_picture();
  return st;
}

}  // namespace

bool macroblocks_chain_in_order(const EncoderParams& p) {
  return RoundingState::chains_macroblocks(rounding_config(p));
}

const char* macroblock_order_name(const EncoderParams& p) {
  if (macroblocks_chain_in_order(p)) return "in order";
  return p.slice_mode == 2 ? "wavefront, speculative slices" : "wavefront";
}

MbContext picture_context(EncoderState& s, PictureSlot& slot, const PictureParams& pp, const Frame& src, Frame& rec,
                          const std::vector<const Frame*>& refs, bool live_rounding) {
  const EncoderParams& p = s.p;
  const bool p_slice = pp.type == SliceType::P;
  MbContext c;
  c.p = &s.p;
  c.src = &src;
  c.rec = &rec;
  c.mbs = slot.mbs.data();
  c.mb_w = s.mb_w;
  c.mb_h = s.mb_h;
  c.p_slice = p_slice;
  c.qp = pp.qp;
  c.qp_c = chroma_qp(pp.qp, p.chroma_qp_offset);
  slot.rounding = s.rounding.offsets();  // as RoundingState::start_picture left them
  c.rounding = live_rounding ? &s.rounding.offsets() : &slot.rounding;
  c.lam = compute_lambdas(p, pp.type, pp.qp);
  c.dsp = &s.dsp;
  c.num_ref_idx_active = pp.num_ref_idx_active;
  c.refs = refs.empty() ? nullptr : refs.data();
  c.check_cost_bounds = s.check_cost_bounds;
  return c;
}

SliceHeader slice_header(const EncoderState& s, const PictureParams& pp, int first_mb) {
  SliceHeader sh;
  sh.first_mb = first_mb;
  sh.is_p = pp.type == SliceType::P;
  sh.idr = pp.idr;
  sh.frame_num = pp.frame_num;
  sh.idr_pic_id = pp.idr_pic_id;
  sh.poc_lsb = pp.poc & ((1 << s.seq.log2_max_poc_lsb) - 1);
  sh.num_ref_idx_active = pp.num_ref_idx_active;
  sh.qp = pp.qp;
  sh.disable_deblocking_idc = pp.deblock.disable_idc;
  sh.alpha_offset_div2 = pp.deblock.alpha_offset_div2;
  sh.beta_offset_div2 = pp.deblock.beta_offset_div2;
  return sh;
}

bool picture_in_order(const EncoderState& s) {
  // The state decides too (it is what the macroblocks read): a wavefront never runs a chain.
  return macroblocks_chain_in_order(s.p) || s.rounding.chains_macroblocks() || s.force_in_order;
}

SliceLoopStats code_slices_in_order(EncoderState& s, PictureSlot& slot, const PictureParams& pp, const Frame& src,
                                    Frame& rec, const std::vector<const Frame*>& refs,
                                    CandidateSourceFactory* sources, std::vector<uint8_t>& out) {
  SliceLoopStats st = code_slices_one_by_one(s, slot, pp, src, rec, refs, sources, out);
  const std::vector<SliceDeblockParams> dbp(static_cast<size_t>(st.num_slices), pp.deblock);
  deblock_picture_parallel(s, slot, rec, dbp, &st.times);
  return st;
}

}  // namespace gme
