#include "encoder/headers.h"

namespace gme {

SequenceHeader make_sequence_header(const EncoderParams& p, int coded_w, int coded_h) {
  SequenceHeader h;
  h.profile_idc = 66;
  h.level_idc = p.level_idc;
  h.log2_max_frame_num = p.log2_max_frame_num_minus4 + 4;
  h.poc_type = p.poc_type;
  h.log2_max_poc_lsb = p.log2_max_poc_lsb_minus4 + 4;
  h.num_ref_frames = p.num_ref_frames;
  h.mb_width = coded_w / 16;
  h.mb_height = coded_h / 16;
  h.crop_right = coded_w - p.source_width;
  h.crop_bottom = coded_h - p.source_height;
  h.num_ref_idx_default = p.num_ref_frames;
  h.pic_init_qp = 26;
  h.chroma_qp_offset = p.chroma_qp_offset;
  h.deblocking_control_present = p.df_parameters_flag;
  h.constrained_intra_pred = p.constrained_intra_pred;
  return h;
}

std::vector<uint8_t> write_sps(const SequenceHeader& h) {
  BitWriter bw;
  bw.put(8, static_cast<uint32_t>(h.profile_idc));
  // constraint_set0_flag = 1 and constraint_set1_flag = 1 (the stream also obeys Main: Constrained Baseline; JM
  // writes 0, doc/RD.md), set2, set4, set5 and the reserved bits zero. LevelIDC 9 is level 1b, which the Baseline
  // profile signals as level_idc 11 with constraint_set3_flag = 1 (as JM writes it).
  const bool level_1b = h.level_idc == 9;
  bw.put(8, level_1b ? 0xD0u : 0xC0u);
  bw.put(8, static_cast<uint32_t>(level_1b ? 11 : h.level_idc));
  bw.ue(0);  // seq_parameter_set_id
  bw.ue(static_cast<uint32_t>(h.log2_max_frame_num - 4));
  bw.ue(static_cast<uint32_t>(h.poc_type));
  if (h.poc_type == 0) bw.ue(static_cast<uint32_t>(h.log2_max_poc_lsb - 4));
  bw.ue(static_cast<uint32_t>(h.num_ref_frames));
  bw.flag(false);  // gaps_in_frame_num_value_allowed_flag
  bw.ue(static_cast<uint32_t>(h.mb_width - 1));
  bw.ue(static_cast<uint32_t>(h.mb_height - 1));
  bw.flag(true);   // frame_mbs_only_flag
  bw.flag(true);   // direct_8x8_inference_flag
  const bool crop = h.crop_right > 0 || h.crop_bottom > 0;
  bw.flag(crop);
  if (crop) {  // CropUnitX = CropUnitY = 2 for 4:2:0 frames
    bw.ue(0);
    bw.ue(static_cast<uint32_t>(h.crop_right / 2));
    bw.ue(0);
    bw.ue(static_cast<uint32_t>(h.crop_bottom / 2));
  }
  bw.flag(false);  // vui_parameters_present_flag
  bw.rbsp_trailing_bits();
  return bw.bytes();
}

std::vector<uint8_t> write_pps(const SequenceHeader& h) {
  BitWriter bw;
  bw.ue(0);        // pic_parameter_set_id
  bw.ue(0);        // seq_parameter_set_id
  bw.flag(false);  // entropy_coding_mode_flag: CAVLC
  bw.flag(false);  // bottom_field_pic_order_in_frame_present_flag
  bw.ue(0);        // num_slice_groups_minus1
  bw.ue(static_cast<uint32_t>(h.num_ref_idx_default - 1));
  bw.ue(static_cast<uint32_t>(h.num_ref_idx_default - 1));  // l1 default: unused without B slices; JM's value
  bw.flag(false);  // weighted_pred_flag
  bw.put(2, 0);    // weighted_bipred_idc
  bw.se(h.pic_init_qp - 26);
  bw.se(0);        // pic_init_qs_minus26
  bw.se(h.chroma_qp_offset);
  bw.flag(h.deblocking_control_present);
  bw.flag(h.constrained_intra_pred);
  bw.flag(false);  // redundant_pic_cnt_present_flag
  bw.rbsp_trailing_bits();
  return bw.bytes();
}

void write_slice_header(BitWriter& bw, const SequenceHeader& h, const SliceHeader& s) {
  bw.ue(static_cast<uint32_t>(s.first_mb));
  bw.ue(s.is_p ? 5u : 7u);  // slice_type P or I + 5: every slice of the picture has this type (as JM writes it)
  bw.ue(0);                 // pic_parameter_set_id
  bw.put(h.log2_max_frame_num, static_cast<uint32_t>(s.frame_num));
  if (s.idr) bw.ue(static_cast<uint32_t>(s.idr_pic_id));
  if (h.poc_type == 0) bw.put(h.log2_max_poc_lsb, static_cast<uint32_t>(s.poc_lsb));
  if (s.is_p) {
    const bool override_refs = s.num_ref_idx_active != h.num_ref_idx_default;
    bw.flag(override_refs);
    if (override_refs) bw.ue(static_cast<uint32_t>(s.num_ref_idx_active - 1));
    bw.flag(false);  // ref_pic_list_reordering_flag_l0
  }
  // dec_ref_pic_marking(): every picture is a reference (nal_ref_idc != 0); sliding window.
  if (s.idr) {
    bw.flag(false);  // no_output_of_prior_pics_flag
    bw.flag(false);  // long_term_reference_flag
  } else {
    bw.flag(false);  // adaptive_ref_pic_marking_mode_flag
  }
  bw.se(s.qp - h.pic_init_qp);
  if (h.deblocking_control_present) {
    bw.ue(static_cast<uint32_t>(s.disable_deblocking_idc));
    if (s.disable_deblocking_idc != 1) {
      bw.se(s.alpha_offset_div2);
      bw.se(s.beta_offset_div2);
    }
  }
}

}  // namespace gme
