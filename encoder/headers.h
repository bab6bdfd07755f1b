// Sequence/picture parameter sets and slice headers (H.264 7.3.2.1, 7.3.2.2, 7.3.3) for the Baseline profile
// subset this encoder produces: one SPS and one PPS (id 0), CAVLC, frame pictures, POC type 0 or 2.
#pragma once
#include <cstdint>
#include <vector>

#include "common/bitstream.h"
#include "encoder/params.h"

namespace gme {

struct SequenceHeader {
  int profile_idc = 66;
  int level_idc = 40;
  int log2_max_frame_num = 4;
  int poc_type = 0;
  int log2_max_poc_lsb = 6;
  int num_ref_frames = 1;
  int mb_width = 0, mb_height = 0;
  int crop_right = 0, crop_bottom = 0;  // in luma samples (even), removed by frame cropping
  // PPS
  int num_ref_idx_default = 1;
  int pic_init_qp = 26;
  int chroma_qp_offset = 0;
  bool deblocking_control_present = false;
  bool constrained_intra_pred = false;
};

SequenceHeader make_sequence_header(const EncoderParams& p, int coded_w, int coded_h);

// RBSPs (trailing bits included).
std::vector<uint8_t> write_sps(const SequenceHeader& h);
std::vector<uint8_t> write_pps(const SequenceHeader& h);

struct SliceHeader {
  int first_mb = 0;
  bool is_p = false;
  bool idr = false;
  int frame_num = 0;
  int idr_pic_id = 0;
  int poc_lsb = 0;
  int num_ref_idx_active = 1;  // P only; overridden when it differs from the PPS default
  int qp = 26;
  int disable_deblocking_idc = 0;
  int alpha_offset_div2 = 0, beta_offset_div2 = 0;
};

// Writes slice_header() into bw (the slice data follows in the same RBSP).
void write_slice_header(BitWriter& bw, const SequenceHeader& h, const SliceHeader& s);

}  // namespace gme
