// Everything the encoder is told by the configuration: one field per supported JM 19.0 key (the key name is in
// the comment). The initial values are the built-in defaults - JM 19.0's (lencod/inc/configfile.h Map[]), stated
// here and nowhere else: lencod's key table reads them from here for keys no file sets. The exceptions, where
// gme264 cannot do what JM's default does, are ProfileIDC (JM 88, gme264 writes 66) and OutputFile (JM has none
// and stops; gme264 writes test.264); doc/CONFIG.md lists them. lencod/config.cpp fills the fields and checks
// ranges; the encoder only reads them.
#pragma once
#include <string>

namespace gme {

struct EncoderParams {
  // ---- Input / output
  std::string input_file = "";         // InputFile (.yuv raw 4:2:0, .y4m, .yuv.gz)
  int input_header_length = 0;         // InputHeaderLength (bytes skipped at the start of a raw file)
  int start_frame = 0;                 // StartFrame
  int frames_to_encode = 1;            // FramesToBeEncoded
  int frame_skip = 0;                  // FrameSkip (source frames skipped after each coded frame)
  int source_width = 176;              // SourceWidth  (any even value >= 2; coded size rounds up to 16)
  int source_height = 144;             // SourceHeight
  double frame_rate = 30.0;            // FrameRate
  std::string output_file = "test.264";  // OutputFile (Annex B)
  std::string recon_file = "";         // ReconFile (cropped 4:2:0 reconstruction; empty = none)
  std::string stats_file = "";         // StatsFile (JSON lines, see doc/STATS.md; empty = none)

  // ---- Sequence structure
  int profile_idc = 66;                // ProfileIDC (66 only)
  int level_idc = 21;                  // LevelIDC
  int intra_period = 0;                // IntraPeriod (0: only the first picture is intra)
  int idr_period = 0;                  // IDRPeriod (0: only the first picture is IDR)
  // AdaptiveIntraPeriod and PreferDispOrder (JM's pred_struct.c establish_intra): with 1 and 0, the intra period
  // restarts at every IDR. JM's display-order placement (PreferDispOrder 1, its default) has no adaptive rule, so
  // there the I pictures fall on multiples of IntraPeriod whatever AdaptiveIntraPeriod says.
  int adaptive_intra_period = 0;       // AdaptiveIntraPeriod 0..1
  int prefer_disp_order = 1;           // PreferDispOrder 0..1
  int num_ref_frames = 1;              // NumberReferenceFrames 1..16
  int p_list0_refs = 0;                // PList0References (0: all)
  int log2_max_frame_num_minus4 = 0;   // Log2MaxFNumMinus4
  int log2_max_poc_lsb_minus4 = 2;     // Log2MaxPOCLsbMinus4
  int poc_type = 0;                    // PicOrderCntType (0 or 2)

  // ---- Quantisation
  int qp_i = 24;                       // QPISlice 0..51
  int qp_p = 24;                       // QPPSlice 0..51
  int chroma_qp_offset = 0;            // ChromaQPOffset / CbQPOffset (= CrQPOffset in baseline) -12..12
  bool adaptive_rounding = false;      // AdaptiveRounding (JM's JVT-N011 rounding, common/quant_rounding.h)
  bool adapt_rounding_fixed = true;    // AdaptRoundingFixed (1: one set of offset lists for every QP)
  int adapt_rnd_period = 16;           // AdaptRndPeriod: macroblocks between refreshes of the offsets in use (>= 1)
  bool adapt_rnd_chroma = false;       // AdaptRndChroma: chroma offsets adapt too
  int adapt_rnd_wfactor_i_ref = 4;     // AdaptRndWFactorIRef (0..4096): weight of the I-slice adjustments
  int adapt_rnd_wfactor_p_ref = 4;     // AdaptRndWFactorPRef (0..4096): weight of the P-slice adjustments

  // ---- Slices
  int slice_mode = 0;                  // SliceMode 0: one slice, 1: SliceArgument MBs, 2: SliceArgument bytes
  int slice_argument = 1;              // SliceArgument

  // ---- Intra tools
  bool disable_intra4x4 = false;       // DisableIntra4x4
  bool disable_intra16x16 = false;     // DisableIntra16x16
  bool enable_ipcm = false;            // EnableIPCM (1: IPCM is a candidate in RD mode decision)
  bool intra4x4_par_disable = false;   // Intra4x4ParDisable (vertical, horizontal)
  bool intra4x4_diag_disable = false;  // Intra4x4DiagDisable (diagonal down left / right)
  bool intra4x4_dir_disable = false;   // Intra4x4DirDisable (vertical/horizontal right/left, horizontal up)
  bool intra16x16_par_disable = false; // Intra16x16ParDisable (vertical, horizontal)
  bool intra16x16_plane_disable = false; // Intra16x16PlaneDisable
  bool chroma_intra_disable = false;   // ChromaIntraDisable (DC only)
  bool disable_intra_in_inter = false; // DisableIntraInInter
  bool constrained_intra_pred = false; // UseConstrainedIntraPred

  // ---- Inter tools
  bool p_slice_skip = true;            // PSliceSkip
  bool p_search[8] = {true, true, true, true, true, true, true, true};  // [0] unused; PSliceSearch16x16..4x4 = 1..7
  int search_range = 16;               // SearchRange 1..128
  int search_mode = 0;                 // SearchMode (0: fast full search; -1: full search, same result)
  bool disable_subpel_me = false;      // DisableSubpelME
  int me_distortion_fpel = 0;          // MEDistortionFPel (0 SAD)
  int me_distortion_hpel = 0;          // MEDistortionHPel (0 SAD, 2 Hadamard SATD)
  int me_distortion_qpel = 2;          // MEDistortionQPel (0 SAD, 2 Hadamard SATD)
  int md_distortion = 2;               // MDDistortion (0 SAD, 2 Hadamard SATD) for RDOptimization 0

  // ---- Mode decision
  int rd_optimization = 0;             // RDOptimization 0 (low complexity) or 1 (high complexity RD)
  bool fast_cr_intra_decision = false; // FastCrIntraDecision (RDOptimization 1: chroma mode decided first)

  // ---- Deblocking (JM: DFParametersFlag; per slice type Ref/NRef; baseline: every picture is a reference)
  bool df_parameters_flag = false;     // DFParametersFlag (1: deblocking_filter_control_present_flag)
  int df_disable_idc[2] = {0, 0};      // [I, P]: DFDisableRefISlice, DFDisableRefPSlice (0, 1, 2)
  int df_alpha[2] = {0, 0};            // DFAlphaRefISlice, DFAlphaRefPSlice (-6..6, div2 units)
  int df_beta[2] = {0, 0};             // DFBetaRefISlice, DFBetaRefPSlice (-6..6)

  // ---- GPU integer motion estimation
  int gpu_integer_me = 0;              // GPUIntegerME 0: CPU fast full search (unmodified run), 1: GPU
  int gpu_device = 0;                  // GPUDevice
  int gpu_top_k = 8;                   // GPUTopK 1..16 (8: chosen by measurement, doc/PERFORMANCE.md)
  int gpu_search_center = 0;           // GPUSearchCenter 0: (0,0), 1: co-located vector of the previous P picture
  int gpu_subpel_distortion = 1;       // GPUSubpelDistortion 0: CPU, 1: GPU computes sub-pel distortions, 2: twin too
  int gpu_subpel_ranks = 8;            // GPUSubpelRanks: candidates per list with sub-pel tables (at most GPUTopK)

  // ---- CPU
  bool no_simd = false;                // NoSIMD: every SIMD routine replaced by its plain C++ twin (same stream)

  // ---- Threads (gme264 key, doc/THREADS.md): same bytes at every count
  int threads = 1;                     // Threads: 0 every core, N >= 1 that many (1: the paper's timings)
};

}  // namespace gme
