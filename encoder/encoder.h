// The encoder as the command-line driver sees it: frames in, Annex B bytes and reconstructions out.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/frame.h"
#include "common/mbinfo.h"
#include "common/types.h"
#include "encoder/params.h"
#include "me/me_interface.h"

namespace gme {

// Seconds spent per stage for one picture (or summed over a sequence).
struct StageTimes {
  double integer_me = 0;   // integer motion estimation (GPU call or CPU fast full search)
  double picture_search = 0;  // of which GPUIntegerME = 1's picture-level call (GPU or twin; start-up wait included)
  double subpel_me = 0;    // half/quarter-pel refinement
  double mode_decision = 0;// intra/inter decision not counted above
  double coding = 0;       // transform, quantisation, reconstruction, CAVLC
  double deblocking = 0;
  double total = 0;
  // Counts beside the times: sub-pel refinements (one per partition search) and how many of them read the GPU
  // search's sub-pel tables instead of measuring pixels (GPUSubpelDistortion), and how many of those measured some
  // positions whose table entries were escaped (me/me_interface.h, kSubpelEscape).
  int64_t subpel_searches = 0, subpel_from_tables = 0, subpel_table_escapes = 0;
  // Partition searches (per reference) left out because the sub-pel tables' floors showed that the candidate or
  // sub type they belong to could not be chosen (encoder/analyse_inter.cpp, CostBounds); not in subpel_searches.
  int64_t searches_bounded = 0;
  // EncoderState::check_cost_bounds (tests): bounds compared with the cost found, and those above it.
  int64_t bound_checks = 0, bound_violations = 0;
  // The macroblock loop's partition searches, before split_partition_searches() turns them into integer_me and
  // subpel_me: their total time (exact: read at the start and end of each macroblock's motion search), their
  // number, and the refinement time of a random sample of them (encoder/analyse_inter.cpp says why).
  double partition_search = 0, sampled_refinement = 0;
  int64_t partition_searches = 0, sampled_searches = 0;
  StageTimes& operator+=(const StageTimes& o) {
    integer_me += o.integer_me; picture_search += o.picture_search; subpel_me += o.subpel_me; mode_decision += o.mode_decision;
    coding += o.coding; deblocking += o.deblocking; total += o.total;
    subpel_searches += o.subpel_searches; subpel_from_tables += o.subpel_from_tables;
    subpel_table_escapes += o.subpel_table_escapes;
    searches_bounded += o.searches_bounded;
    bound_checks += o.bound_checks;
    bound_violations += o.bound_violations;
    partition_search += o.partition_search; sampled_refinement += o.sampled_refinement;
    partition_searches += o.partition_searches; sampled_searches += o.sampled_searches;
    return *this;
  }
  // Adds the partition searches to integer_me and subpel_me: refinement = the sampled searches' mean refinement time
  // times the number of searches (at most the searches' total), integer ME = the rest. Clears the pieces.
  void split_partition_searches() {
    double refinement = 0;
    if (sampled_searches > 0)
      refinement = sampled_refinement * static_cast<double>(partition_searches) / static_cast<double>(sampled_searches);
    if (refinement > partition_search) refinement = partition_search;
    subpel_me += refinement;
    integer_me += partition_search - refinement;
    partition_search = sampled_refinement = 0;
    partition_searches = sampled_searches = 0;
  }
};

// A picture's bits by syntax element, counted as JM 19.0 counts them for its stats.dat (macroblock.c
// next_macroblock, slice.c): what is left of `bits` (start codes, NAL header bytes, rbsp trailing bits, emulation
// prevention) is in no category, as in JM.
struct PictureBitUse {
  int64_t header = 0;   // slice headers
  int64_t mode = 0;     // mb_skip_run, mb_type, sub_mb_type, Intra4x4 prediction modes (JM "Mode")
  int64_t motion = 0;   // ref_idx and mvd (JM "Motion Info", bit_use_mode)
  int64_t cbp = 0;      // coded_block_pattern
  int64_t dquant = 0;   // mb_qp_delta
  int64_t coeff_y = 0;  // luma residual; I_PCM alignment and luma samples
  int64_t coeff_c = 0;  // chroma residual and intra_chroma_pred_mode; I_PCM chroma samples
  int64_t motion_by_type[9] = {};  // `motion` split by MbType (JM's MotionInfo bits per mode)
  int64_t syntax() const { return header + mode + motion + cbp + dquant + coeff_y + coeff_c; }
  PictureBitUse& operator+=(const PictureBitUse& o) {
    header += o.header; mode += o.mode; motion += o.motion; cbp += o.cbp; dquant += o.dquant;
    coeff_y += o.coeff_y; coeff_c += o.coeff_c;
    for (int i = 0; i < 9; ++i) motion_by_type[i] += o.motion_by_type[i];
    return *this;
  }
};

struct PictureResult {
  SliceType type = SliceType::I;
  bool idr = false;
  int qp = 0;
  int64_t bits = 0;        // bits of this picture's slice NAL units, start codes included (JM's Bit/pic)
  int64_t param_set_bits = 0;  // bits of the SPS and PPS NAL units written before it (JM's NVB line)
  PictureBitUse bit_use;   // `bits` by syntax element
  int num_slices = 0;
  int poc = 0;
  int frame_num = 0;
  StageTimes times;
  int mb_counts[9] = {};   // macroblocks per MbType
  bool encoded_ahead = false;  // coded before its turn while the GPU started (times.total: that coding's time)
};

// One coded picture, as Encoder::pull() hands it out (coding order).
struct EncodedPicture {
  PictureResult result;
  int64_t user_index = 0;                // the number the driver pushed with the frame (lencod: its source frame)
  std::vector<uint8_t> bytes;            // the picture's Annex B NAL units (SPS/PPS before an IDR picture)
  std::shared_ptr<const Frame> source;   // the frame as pushed (coded size)
  std::shared_ptr<const Frame> recon;    // the deblocked reconstruction (coded size)
  std::vector<MbInfo> mbs;               // the picture's macroblocks, raster order (doc/STATS.md mb_mv)
};

// The encoder as a queue, as x264_encoder_encode is: frames are pushed in coding order (= display order, no B
// pictures) and coded pictures pulled in the same order, possibly later. The queue is where the encoder hides the
// GPU start-up (GPUIntegerME = 1): CUDA's start-up takes a fraction of a second, on a background thread, and until
// it is ready a P picture cannot be coded; meanwhile push() holds the P pictures (up to ~256 MB of frames) and
// codes the held I pictures ahead of their turn (encoder/picture.h says why that is exact), so the driver's reading
// and the I pictures fill the wait. Same bytes as coding each picture at its turn.
class Encoder {
 public:
  // Throws std::runtime_error with a one-line message if the parameters cannot be honoured. `picture_search` makes
  // the GPUIntegerME = 1 backend (gpu/gpu_me.h make_picture_search for the CUDA search with its twin as fallback);
  // it is required when GPUIntegerME = 1 and unused otherwise.
  explicit Encoder(const EncoderParams& params, PictureSearchFactory picture_search = {});
  ~Encoder();
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  // The next picture (coded size: padded to multiples of 16 by the reader). Codes what can be coded now; with a GPU
  // search that is up to the picture before this one (its successor's search starts while it is coded).
  void push(Frame src, int64_t user_index);
  // A picture to read the next input into and push(): the encoder's input pictures come back to it once coded and
  // handed out (EncodedPicture::source let go), each keeping its memory, which the GPU search holds page-locked so
  // that it sends the picture's rows without a copy. Its size and samples are what its last use left (a reader's
  // alloc_frame_for keeps the memory at the same size).
  std::shared_ptr<Frame> input_frame();
  void push(std::shared_ptr<Frame> src, int64_t user_index);
  // The next coded picture in order, if one is ready: false when none is (yet).
  bool pull(EncodedPicture* out);
  // End of input: codes every held picture (waiting for the GPU start-up where needed); pull() then hands them out.
  void flush();
  // End of input, one picture at a time: the next coded picture in order, coding and waiting for it as needed; false
  // once every pushed picture has been handed out. A driver that writes each picture as it comes holds only the
  // pictures in flight, whose reconstructions and planes the encoder then reuses, instead of every held picture
  // (a short clip is held whole while the GPU starts) at once.
  bool drain(EncodedPicture* out);

  // Which integer-ME path ran and why ("cpu fast full search", "gpu: NVIDIA H100 80GB HBM3",
  // "cpu twin: no CUDA device found", ...). With GPUIntegerME = 1 this waits for the GPU start-up, which runs in
  // the background from construction on.
  std::string integer_me_path() const;
  // The same without waiting: "gpu: starting CUDA device N" while the start-up is still running.
  std::string integer_me_path_so_far() const;
  // The function table the encoder runs (common/dsp.h: its CPU flags, and the plane SSD of the driver's PSNR).
  const DspFuncs& dsp() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gme
