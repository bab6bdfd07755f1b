// Key tables of the configuration (see config_keys.h). Defaults and limits are JM 19.0's (lencod/inc/configfile.h)
// unless jm_note says otherwise; the semantic notes come from JM's encoder_baseline.cfg comments.
#include "lencod/config_keys.h"

#include <strings.h>

#include <limits>

namespace gme {
namespace {

constexpr double kBig = 1e9;

#define FIELD(member) [](ConfigTarget& t) -> void* { return &t.member; }

const std::vector<KeyDef> kSupported = {
  // ---- Files and source
  {"InputFile", KeyType::String, 0, 0, nullptr, FIELD(p.input_file),
   "input sequence: raw planar 4:2:0 8-bit (.yuv), YUV4MPEG2 (.y4m, size and rate from its header) or gzip'ed raw (.gz)",
   ".y4m and .gz are gme264 additions"},
  {"InputHeaderLength", KeyType::Int, 0, kBig, nullptr, FIELD(p.input_header_length),
   "bytes skipped at the start of a raw input file", ""},
  {"StartFrame", KeyType::Int, 0, kBig, nullptr, FIELD(p.start_frame),
   "first source frame to encode (0-based)", ""},
  {"FramesToBeEncoded", KeyType::Int, -1, kBig, nullptr, FIELD(p.frames_to_encode),
   "number of frames to encode (-1: every frame the input holds after StartFrame)", "0 is an error, as in JM"},
  {"FrameSkip", KeyType::Int, 0, kBig, nullptr, FIELD(p.frame_skip),
   "source frames skipped after each coded frame (2 codes every third frame)", ""},
  {"SourceWidth", KeyType::Int, 2, 16384, nullptr, FIELD(p.source_width),
   "visible luma width (even); the coded width is rounded up to 16 by edge replication and cropped in the SPS",
   "JM accepts 0 (size from the file name); gme264 needs the size, except for .y4m input (header)"},
  {"SourceHeight", KeyType::Int, 2, 16384, nullptr, FIELD(p.source_height),
   "visible luma height (even)", "as SourceWidth"},
  {"FrameRate", KeyType::Double, 0, 480, nullptr, FIELD(p.frame_rate),
   "source frame rate in Hz (bit rate = bits * FrameRate / (FrameSkip + 1) / frames)",
   "must be > 0 (JM silently turns 0 into 30)"},
  {"OutputFile", KeyType::String, 0, 0, nullptr, FIELD(p.output_file),
   "H.264 Annex B byte stream", "JM's built-in default is empty; its cfg files use test.264"},
  {"ReconFile", KeyType::String, 0, 0, nullptr, FIELD(p.recon_file),
   "reconstructed pictures, raw 4:2:0, visible size (empty: not written)", ""},
  {"StatsFile", KeyType::String, 0, 0, nullptr, FIELD(p.stats_file),
   "statistics: a name ending in .dat gets JM's text stats.dat and a log.dat row per run, any other name JSON "
   "lines (doc/STATS.md; empty: not written)",
   "JM writes stats.dat and log.dat even when it is empty"},

  // ---- Sequence structure
  {"ProfileIDC", KeyType::Int, 0, 0, "66", FIELD(p.profile_idc),
   "profile_idc; gme264 is a baseline-profile encoder", "JM default 88 (extended); only 66 is supported"},
  {"LevelIDC", KeyType::Int, 0, 0, "9,10,11,12,13,20,21,22,30,31,32,40,41,42,50,51,52",
   FIELD(p.level_idc), "level_idc written in the SPS (e.g. 40 = level 4.0)", "JM accepts any number"},
  {"IntraPeriod", KeyType::Int, 0, kBig, nullptr, FIELD(p.intra_period),
   "period of I pictures (0: only the first)", ""},
  {"IDRPeriod", KeyType::Int, 0, kBig, nullptr, FIELD(p.idr_period),
   "period of IDR pictures (0: only the first)", ""},
  {"NumberReferenceFrames", KeyType::Int, 1, 16, nullptr, FIELD(p.num_ref_frames),
   "reference pictures kept for inter prediction", "JM accepts 0"},
  {"PList0References", KeyType::Int, 0, 16, nullptr, FIELD(p.p_list0_refs),
   "P list 0 size override (0: NumberReferenceFrames; else <= NumberReferenceFrames)", ""},
  {"Log2MaxFNumMinus4", KeyType::Int, -1, 12, nullptr, FIELD(p.log2_max_frame_num_minus4),
   "log2_max_frame_num_minus4 (-1: from FramesToBeEncoded, as JM)", ""},
  {"Log2MaxPOCLsbMinus4", KeyType::Int, -1, 12, nullptr, FIELD(p.log2_max_poc_lsb_minus4),
   "log2_max_pic_order_cnt_lsb_minus4 (-1: from FramesToBeEncoded, as JM)", ""},
  {"PicOrderCntType", KeyType::Int, 0, 0, "0,2", FIELD(p.poc_type),
   "pic_order_cnt_type", "type 1 is not supported"},
  {"AdaptiveIntraPeriod", KeyType::Int, 0, 1, nullptr, FIELD(p.adaptive_intra_period),
   "1: the intra period restarts at every IDR picture, where PreferDispOrder = 0 (JM's coding-order placement)", ""},
  {"PreferDispOrder", KeyType::Int, 0, 1, nullptr, FIELD(p.prefer_disp_order),
   "JM's placement of I and IDR pictures in display order (1) or coding order (0): without B pictures the same, "
   "except that only coding order honours AdaptiveIntraPeriod = 1", ""},
  {"ResendSPS", KeyType::Int, 0, 0, "0,2", FIELD(resend_sps),
   "SPS/PPS repetition: gme264 always writes them before every IDR picture (JM's 2); 0 is accepted when "
   "IDRPeriod = 0, where both are the same stream", "1 and 3 are not supported"},

  // ---- Quantisation
  {"QPISlice", KeyType::Int, 0, 51, nullptr, FIELD(p.qp_i), "QP of I slices", ""},
  {"QPPSlice", KeyType::Int, 0, 51, nullptr, FIELD(p.qp_p), "QP of P slices", ""},
  {"ChromaQPOffset", KeyType::Int, -12, 12, nullptr, FIELD(p.chroma_qp_offset),
   "chroma_qp_index_offset (the offset JM uses for non-FRExt profiles)", "JM accepts -51..51; H.264 allows -12..12"},
  {"CbQPOffset", KeyType::Int, -12, 12, nullptr, FIELD(cb_qp_offset),
   "FRExt Cb offset: JM ignores it for ProfileIDC 66; must equal CrQPOffset and, if non-zero, ChromaQPOffset", ""},
  {"CrQPOffset", KeyType::Int, -12, 12, nullptr, FIELD(cr_qp_offset),
   "FRExt Cr offset: see CbQPOffset", ""},
  {"AdaptiveRounding", KeyType::Flag, 0, 1, nullptr, FIELD(p.adaptive_rounding),
   "JM's adaptive rounding offsets of the quantiser (JVT-N011), adapted after every macroblock", ""},
  {"AdaptRoundingFixed", KeyType::Flag, 0, 1, nullptr, FIELD(p.adapt_rounding_fixed),
   "AdaptiveRounding: 1 one set of offsets for every QP, 0 one set per QP", ""},
  {"AdaptRndPeriod", KeyType::Int, 1, kBig, nullptr, FIELD(p.adapt_rnd_period),
   "AdaptiveRounding: the offsets in use are refreshed from the adapted ones every this many macroblocks", ""},
  {"AdaptRndChroma", KeyType::Flag, 0, 1, nullptr, FIELD(p.adapt_rnd_chroma),
   "AdaptiveRounding: chroma offsets adapt too", ""},
  {"AdaptRndWFactorIRef", KeyType::Int, 0, 4096, nullptr, FIELD(p.adapt_rnd_wfactor_i_ref),
   "AdaptiveRounding: weight (/4096) of the adjustments in I slices (every gme264 picture is a reference); it "
   "weighs the chroma adjustments too, as in JM 19.0", ""},
  {"AdaptRndWFactorPRef", KeyType::Int, 0, 4096, nullptr, FIELD(p.adapt_rnd_wfactor_p_ref),
   "AdaptiveRounding: weight (/4096) of the adjustments in P slices", ""},

  // ---- Slices
  {"SliceMode", KeyType::Int, 0, 0, "0,1,2", FIELD(p.slice_mode),
   "0: one slice per picture, 1: SliceArgument macroblocks per slice, 2: SliceArgument bytes per slice",
   "mode 3 (callback) is not supported"},
  {"SliceArgument", KeyType::Int, 1, kBig, nullptr, FIELD(p.slice_argument),
   "macroblocks (SliceMode 1) or bytes (SliceMode 2) per slice", ""},

  // ---- Intra tools
  {"DisableIntra4x4", KeyType::Flag, 0, 1, nullptr, FIELD(p.disable_intra4x4), "no Intra 4x4 modes", ""},
  {"DisableIntra16x16", KeyType::Flag, 0, 1, nullptr, FIELD(p.disable_intra16x16),
   "no Intra 16x16 modes", ""},
  {"EnableIPCM", KeyType::Flag, 0, 2, nullptr, FIELD(p.enable_ipcm),
   "I_PCM as a mode-decision candidate (JM 19.0 treats 2 as 1)", ""},
  {"Intra4x4ParDisable", KeyType::Flag, 0, 1, nullptr, FIELD(p.intra4x4_par_disable),
   "no vertical/horizontal Intra 4x4", ""},
  {"Intra4x4DiagDisable", KeyType::Flag, 0, 1, nullptr, FIELD(p.intra4x4_diag_disable),
   "no diagonal down left/right Intra 4x4", ""},
  {"Intra4x4DirDisable", KeyType::Flag, 0, 1, nullptr, FIELD(p.intra4x4_dir_disable),
   "no vertical/horizontal left/right/up Intra 4x4", ""},
  {"Intra16x16ParDisable", KeyType::Flag, 0, 1, nullptr, FIELD(p.intra16x16_par_disable),
   "no vertical/horizontal Intra 16x16", ""},
  {"Intra16x16PlaneDisable", KeyType::Flag, 0, 1, nullptr, FIELD(p.intra16x16_plane_disable),
   "no plane Intra 16x16", ""},
  {"ChromaIntraDisable", KeyType::Flag, 0, 1, nullptr, FIELD(p.chroma_intra_disable),
   "chroma intra DC only", ""},
  {"DisableIntraInInter", KeyType::Flag, 0, 1, nullptr, FIELD(p.disable_intra_in_inter),
   "no intra macroblocks in P slices", ""},
  {"UseConstrainedIntraPred", KeyType::Flag, 0, 1, nullptr, FIELD(p.constrained_intra_pred),
   "constrained_intra_pred_flag: intra prediction from intra macroblocks only", ""},

  // ---- Inter tools
  {"PSliceSkip", KeyType::Flag, 0, 1, nullptr, FIELD(p.p_slice_skip), "P_Skip is a candidate", ""},
  {"PSliceSearch16x16", KeyType::Flag, 0, 1, nullptr, FIELD(p.p_search[1]), "16x16 partitions", ""},
  {"PSliceSearch16x8", KeyType::Flag, 0, 1, nullptr, FIELD(p.p_search[2]), "16x8 partitions", ""},
  {"PSliceSearch8x16", KeyType::Flag, 0, 1, nullptr, FIELD(p.p_search[3]), "8x16 partitions", ""},
  {"PSliceSearch8x8", KeyType::Flag, 0, 1, nullptr, FIELD(p.p_search[4]), "8x8 sub-macroblocks", ""},
  {"PSliceSearch8x4", KeyType::Flag, 0, 1, nullptr, FIELD(p.p_search[5]), "8x4 sub-partitions", ""},
  {"PSliceSearch4x8", KeyType::Flag, 0, 1, nullptr, FIELD(p.p_search[6]), "4x8 sub-partitions", ""},
  {"PSliceSearch4x4", KeyType::Flag, 0, 1, nullptr, FIELD(p.p_search[7]), "4x4 sub-partitions", ""},
  {"SearchRange", KeyType::Int, 1, 128, nullptr, FIELD(p.search_range),
   "integer motion search range in pel (+-SearchRange around the predictor)", "JM has no upper limit"},
  {"SearchMode", KeyType::Int, 0, 0, "-1,0", FIELD(p.search_mode),
   "0: fast full search; -1: full search (same vectors, so it runs the fast full search)",
   "1 (UMHexagonS), 2 (simplified UMHexagonS), 3 (EPZS): accepted with a warning, the fast full search runs"},
  {"DisableSubpelME", KeyType::Flag, 0, 1, nullptr, FIELD(p.disable_subpel_me),
   "integer-pel motion vectors only", ""},
  {"MEDistortionFPel", KeyType::Int, 0, 0, "0", FIELD(p.me_distortion_fpel),
   "integer-pel ME metric (0: SAD)", "1 (SSE) is not supported; 2, 3 are JM errors with fast full search"},
  {"MEDistortionHPel", KeyType::Int, 0, 0, "0,2", FIELD(p.me_distortion_hpel),
   "half-pel ME metric (0: SAD, 2: Hadamard SATD)", "1 (SSE), 3 are not supported"},
  {"MEDistortionQPel", KeyType::Int, 0, 0, "0,2", FIELD(p.me_distortion_qpel),
   "quarter-pel ME metric (0: SAD, 2: Hadamard SATD)", "1 (SSE), 3 are not supported"},
  {"MDDistortion", KeyType::Int, 0, 0, "0,2", FIELD(p.md_distortion),
   "mode-decision metric with RDOptimization 0 (0: SAD, 2: Hadamard SATD)", "1 (SSE) is not supported"},

  // ---- Mode decision
  {"RDOptimization", KeyType::Int, 0, 0, "0,1", FIELD(p.rd_optimization),
   "0: low-complexity mode decision, 1: high-complexity RD mode decision",
   "2 (fast high complexity), 3 (losses), 4 (skip bias): accepted with a warning, 1 runs"},
  {"FastCrIntraDecision", KeyType::Flag, 0, 1, nullptr, FIELD(p.fast_cr_intra_decision),
   "RDOptimization 1: 1 decides the chroma intra mode first (JM intra_chroma_RD_decision), 0 lets every chroma "
   "mode compete with the intra macroblock types", ""},

  // ---- Deblocking (baseline: every picture is a reference, so only the *Ref* keys matter)
  {"DFParametersFlag", KeyType::Flag, 0, 1, nullptr, FIELD(p.df_parameters_flag),
   "send deblocking parameters (deblocking_filter_control_present_flag); 0: the DF keys below are ignored", ""},
  {"DFDisableRefISlice", KeyType::Int, 0, 2, nullptr, FIELD(p.df_disable_idc[0]),
   "disable_deblocking_filter_idc of I pictures (0 filter, 1 off, 2 off across slice edges)", ""},
  {"DFDisableRefPSlice", KeyType::Int, 0, 2, nullptr, FIELD(p.df_disable_idc[1]),
   "disable_deblocking_filter_idc of P pictures", ""},
  {"DFAlphaRefISlice", KeyType::Int, -6, 6, nullptr, FIELD(p.df_alpha[0]),
   "slice_alpha_c0_offset_div2 of I pictures", ""},
  {"DFAlphaRefPSlice", KeyType::Int, -6, 6, nullptr, FIELD(p.df_alpha[1]),
   "slice_alpha_c0_offset_div2 of P pictures", ""},
  {"DFBetaRefISlice", KeyType::Int, -6, 6, nullptr, FIELD(p.df_beta[0]),
   "slice_beta_offset_div2 of I pictures", ""},
  {"DFBetaRefPSlice", KeyType::Int, -6, 6, nullptr, FIELD(p.df_beta[1]),
   "slice_beta_offset_div2 of P pictures", ""},

  // ---- GPU integer motion estimation (gme264 keys, not in JM)
  {"GPUIntegerME", KeyType::Int, 0, 1, nullptr, FIELD(p.gpu_integer_me),
   "0: CPU fast full search (the unmodified run), 1: picture-level integer ME on the GPU (CPU twin without one)",
   "gme264 key"},
  {"GPUDevice", KeyType::Int, 0, 63, nullptr, FIELD(p.gpu_device), "CUDA device index", "gme264 key"},
  {"GPUTopK", KeyType::Int, 1, 16, nullptr, FIELD(p.gpu_top_k),
   "integer candidates per partition and reference kept by the GPU search", "gme264 key"},
  {"GPUSearchCenter", KeyType::Int, 0, 1, nullptr, FIELD(p.gpu_search_center),
   "GPU search window centre: 0 (0,0), 1 co-located vector of the previous P picture", "gme264 key"},
  {"GPUSubpelDistortion", KeyType::Int, 0, 2, nullptr, FIELD(p.gpu_subpel_distortion),
   "sub-pel distortions of the first GPU candidates: 0 CPU, 1 computed on the GPU, 2 also by the CPU twin (tests)",
   "gme264 key"},
  {"GPUSubpelRanks", KeyType::Int, 1, 16, nullptr, FIELD(p.gpu_subpel_ranks),
   "GPUSubpelDistortion: candidates per list (at most GPUTopK) whose sub-pel distortions are computed", "gme264 key"},

  // ---- CPU (gme264 key, not in JM)
  {"NoSIMD", KeyType::Flag, 0, 1, nullptr, FIELD(p.no_simd),
   "1: every SIMD routine runs as its plain C++ twin (as x264's --no-asm; same stream); the environment variable "
   "GME_NO_SIMD=1 does the same in every program",
   "gme264 key"},

  // ---- Threads (gme264 key, not in JM; doc/THREADS.md)
  {"Threads", KeyType::Int, 0, 1024, nullptr, FIELD(p.threads),
   "encoding threads (wavefront of macroblock rows; same stream at every count): 0 every core, 1 one thread",
   "gme264 key"},
};

#undef FIELD

// JM tools gme264 does not implement and that would change the stream's syntax or profile, or its content beyond
// an encoder decision: accepted with the value that turns them off, an error otherwise.
const std::vector<UnsupportedKey> kUnsupported = {
  {"SymbolMode", 0, "CABAC (baseline profile is CAVLC only)"},
  {"NumberBFrames", 0, "B pictures (baseline profile)"},
  {"PicInterlace", 0, "field/picture-adaptive interlaced coding"},
  {"MbInterlace", 0, "macroblock-adaptive frame/field coding"},
  {"YUVFormat", 1, "chroma formats other than 4:2:0"},
  {"SourceBitDepthLuma", 8, "bit depths above 8"},
  {"SourceBitDepthChroma", 8, "bit depths above 8"},
  {"SourceBitDepthRescale", 0, "bit-depth rescaling"},
  {"Transform8x8Mode", 0, "the 8x8 transform (High profile)"},
  {"WeightedPrediction", 0, "weighted prediction"},
  {"WeightedBiprediction", 0, "weighted bi-prediction"},
  {"RateControlEnable", 0, "rate control (fixed QP only)"},
  {"IntraProfile", 0, "intra profiles"},
  {"Enable32Pulldown", 0, "3:2 pulldown"},
  {"IntraDelay", 0, "intra delay"},
  {"AdaptiveIDRPeriod", 0, "adaptive IDR period"},
  {"EnableOpenGOP", 0, "open GOPs"},
  {"EnableIDRGOP", 0, "IDR GOPs"},
  {"ChangeQPI", 0, "QP changes during the sequence"},
  {"ChangeQPP", 0, "QP changes during the sequence"},
  {"SourceResize", 0, "source resizing"},
  {"Grayscale", 0, "grayscale coding"},
  {"NumberOfViews", 1, "MVC (two views)"},
  {"GenerateMultiplePPS", 0, "multiple PPS"},
  {"SendAUD", 0, "access unit delimiters"},
  {"ResendPPS", 0, "PPS repetition"},
  {"DisposableP", 0, "disposable P pictures"},
  {"SetFirstAsLongTerm", 0, "long-term reference pictures"},
  {"MultiSourceData", 0, "multiple source files"},
  {"SEIVUI32Pulldown", 0, "3:2 pulldown SEI"},
  {"SEIFPAType", -1, "frame packing SEI"},
  {"ProcessInput", 0, "input processing"},
  {"SPPicturePeriodicity", 0, "SP pictures (extended profile)"},
  {"SI_FRAMES", 0, "SI pictures (extended profile)"},
  {"SP_output", 0, "SP pictures (extended profile)"},
  {"SP2_FRAMES", 0, "SP pictures (extended profile)"},
  {"OutFileMode", 0, "RTP output (Annex B only)"},
  {"PartitionMode", 0, "data partitioning (extended profile)"},
  {"IntraBottom", 0, "intra bottom field"},
  {"NumFramesInELayerSubSeq", 0, "enhancement-layer sub-sequences"},
  {"LowDelay", 0, "low-delay B structures"},
  {"ReferenceReorder", 0, "reference list reordering"},
  {"PocMemoryManagement", 0, "POC-based memory management"},
  {"SparePictureOption", 0, "spare pictures"},
  {"num_slice_groups_minus1", 0, "FMO slice groups"},
  {"UseRedundantPicture", 0, "redundant pictures"},
  {"ScalingMatrixPresentFlag", 0, "scaling matrices (High profile)"},
  {"RGBInput", 0, "RGB input"},
  {"PixelFormat", 0, "packed pixel formats"},
  {"Interleaved", 0, "interleaved input"},
  {"LosslessCoding", 0, "lossless coding"},
  {"ToneMappingSEIPresentFlag", 0, "tone mapping SEI"},
  {"SeparateColourPlane", 0, "separate colour planes (4:4:4)"},
  {"GenerateSEIMessage", 0, "SEI text messages"},
  {"EnableVUISupport", 0, "VUI parameters"},
  {"ExplicitSeqCoding", 0, "explicit sequence coding"},
};

// JM encoder-side heuristics: they only steer decisions inside the baseline syntax, so a JM user's cfg with any
// value still runs. `honoured` is the value gme264's decisions reproduce, which is JM 19.0's built-in default for
// every one of them (an omitted key therefore behaves as in JM). A value other than `honoured` is named in one
// warning line with what gme264 does instead.
const std::vector<HeuristicKey> kHeuristic = {
  {"MbLineIntraUpdate", 0, "forces no intra macroblock lines (as 0)"},
  {"RandomIntraMBRefresh", 0, "forces no intra macroblock refresh (as 0)"},
  {"IntraDisableInterOnly", 0, "applies the Intra*Disable keys to every slice (as 0)"},
  {"I16RDOpt", 0, "decides Intra 16x16 as with I16RDOpt = 0"},
  {"DistortionSSIM", 0, "reports PSNR only"},
  {"DistortionMS_SSIM", 0, "reports PSNR only"},
  {"DistortionYUVtoRGB", 0, "reports YUV PSNR only"},
  {"CtxAdptLagrangeMult", 0, "uses fixed Lagrange multipliers (as 0)"},
  {"DisableThresholding", 0, "keeps JM's coefficient thresholding on (as 0)"},
  {"BiasSkipRDO", 0, "uses no skip bias (as 0)"},
  {"ForceTrueRateRDO", 0, "uses JM's default rate estimate (as 0)"},
  {"RestrictRefFrames", 0, "does not restrict reference frames (as 0)"},
  {"RDPictureDecision", 0, "codes each picture in one pass (as 0)"},
  {"SkipIntraInInterSlices", 0, "checks intra modes in P slices (as 0)"},
  {"PSliceSkipDecisionMethod", 0, "uses JM's default P_Skip decision (as 0)"},
  {"ChromaMEEnable", 0, "uses luma-only motion estimation (as 0)"},
  {"MESoftenSSEMetric", 0, "uses no softened metric (as 0)"},
  {"OffsetMatrixPresentFlag", 0, "uses JM's default quantisation offsets (as 0)"},
  {"UseExplicitLambdaParams", 0, "uses JM's default lambda formulas (as 0)"},
  {"UpdateLambdaChromaME", 0, "does not update the chroma ME lambda (as 0)"},
  {"EarlySkipEnable", 0, "does no early skip detection (as 0)"},
  {"SelectiveIntraEnable", 0, "checks every intra mode (as 0)"},
  {"RestrictSearchRange", 2, "searches the full range for every block type and reference (as 2)"},
  {"UseMVLimits", 0, "limits vectors only by SearchRange (as 0)"},
  {"HMEEnable", 0, "uses no hierarchical ME (as 0)"},
  {"DisableMEPrediction", 0, "uses the ME predictors (as 0)"},
  {"UseRDOQuant", 0, "uses plain quantisation, no trellis (as 0)"},
  {"OnTheFlyFractMCP", 0, "precomputes sub-pel planes (as 0; same stream in JM)"},
  {"WeightY", 1, "weights luma distortion by 1"},
  {"WeightCb", 1, "weights Cb distortion by 1"},
  {"WeightCr", 1, "weights Cr distortion by 1"},
};

// Supported keys whose other JM values are heuristics of the same job (motion search, mode decision).
const ValueFallback kValueFallbacks[] = {
  {"SearchMode", -1, 3, 0, "runs the fast full search (SearchMode = 0); vectors can differ from JM's"},
  {"RDOptimization", 0, 4, 1, "uses the high-complexity RD mode decision (RDOptimization = 1)"},
};

// JM keys that only act through a tool required off above (or only write JM's own report files): any number, as
// JM reads them as numbers (the text keys are in kIgnoredText).
const char* const kIgnored[] = {
  // B, SP, SI slices and their deblocking/QP settings
  "QPBSlice", "QPSPSlice", "QPSISlice", "QPSP2Slice", "ChangeQPB", "ChangeQPSP", "ChangeQPSI", "ChangeQPFrame",
  "BRefPicQPOffset", "DirectModeType", "DirectInferenceFlag", "BList0References", "BList1References",
  "BSliceDirect", "BSliceSearch16x16", "BSliceSearch16x8", "BSliceSearch8x16", "BSliceSearch8x8",
  "BSliceSearch8x4", "BSliceSearch4x8", "BSliceSearch4x4", "BiPredMotionEstimation", "BiPredSearch16x16",
  "BiPredSearch16x8", "BiPredSearch8x16", "BiPredSearch8x8", "BiPredMERefinements", "BiPredMESearchRange",
  "BiPredMESubPel", "BReferencePictures", "HierarchicalCoding", "HierarchyLevelQPEnable",
  "PReplaceBSlice", "DisableBSkipRDO", "DispPQPOffset", "DisableDistanceLambdaScale",
  "RDPSliceBTest", "RDPSliceITest", "RDPictureMaxPassISlice", "RDPictureMaxPassPSlice", "RDPictureMaxPassBSlice",
  "RDPictureDeblocking", "RDPictureDirectMode", "RDPictureFrameQPPSlice", "RDPictureFrameQPBSlice",
  "DFDisableNRefISlice", "DFDisableNRefPSlice", "DFDisableRefBSlice", "DFDisableNRefBSlice",
  "DFDisableRefSPSlice", "DFDisableNRefSPSlice", "DFDisableRefSISlice", "DFDisableNRefSISlice",
  "DFAlphaNRefISlice", "DFAlphaNRefPSlice", "DFAlphaRefBSlice", "DFAlphaNRefBSlice", "DFAlphaRefSPSlice",
  "DFAlphaNRefSPSlice", "DFAlphaRefSISlice", "DFAlphaNRefSISlice", "DFBetaNRefISlice", "DFBetaNRefPSlice",
  "DFBetaRefBSlice", "DFBetaNRefBSlice", "DFBetaRefSPSlice", "DFBetaNRefSPSlice", "DFBetaRefSISlice",
  "DFBetaNRefSISlice", "SkipDeBlockNonRef",
  "SPSwitchPeriod", "EnhLayerMDReference", "MDReference",
  // Rate control (RateControlEnable = 0)
  "Bitrate", "InitialQP", "BasicUnit", "ChannelType", "RCUpdateMode", "RCISliceBitRatio", "RCBSliceBitRatio0",
  "RCBSliceBitRatio1", "RCBSliceBitRatio2", "RCBSliceBitRatio3", "RCBSliceBitRatio4", "RCBoverPRatio",
  "RCIoverPRatio", "RCMinQPPSlice", "RCMaxQPPSlice", "RCMinQPBSlice", "RCMaxQPBSlice", "RCMinQPISlice",
  "RCMaxQPISlice", "RCMinQPSPSlice", "RCMaxQPSPSlice", "RCMinQPSISlice", "RCMaxQPSISlice", "RCMaxQPChange",
  "RCCpbSize", "NumberofLeakyBuckets",
  // Tools required off above: their parameters
  "OutputWidth", "OutputHeight", "OutputBitDepthLuma", "OutputBitDepthChroma", "StandardRange", "VideoCode",
  "MVCInterViewReorder", "MVCFlipViews", "MVCInterViewForceB",
  "MVCEnableInterViewFlag", "SepViewInterSearch", "QPOffset", "NoResidueRDO", "LambdaMultiplier",
  "MELambdaMultiplier", "EnableEPZSScalers",
  "WPMethod", "WPIterMC", "ChromaWeightSupport", "EnhancedBWeightSupport", "UseWeightedReferenceME",
  "WPMCPrecision", "WPMCPrecFullRef", "WPMCPrecBSlice", "ChromaMEWeight", "SSIMOverlapSize", "MinIDRDistance",
  "slice_group_map_type", "slice_group_change_direction_flag", "slice_group_change_rate_minus1",
  "NumRedundantHierarchy", "PrimaryGOPLength", "NumRefPrimary",
  "SparePictureDetectionThr", "SparePicturePercentageThr", "ContextInitMethod", "FixedModelNumber",
  "ScalingListPresentFlag0", "ScalingListPresentFlag1", "ScalingListPresentFlag2",
  "ScalingListPresentFlag3", "ScalingListPresentFlag4", "ScalingListPresentFlag5", "ScalingListPresentFlag6",
  "ScalingListPresentFlag7", "ScalingListPresentFlag8", "ScalingListPresentFlag9", "ScalingListPresentFlag10",
  "ScalingListPresentFlag11", "OffsetMatrixFlat", "FixedLambdaPSlice", "FixedLambdaBSlice",
  "FixedLambdaISlice", "FixedLambdaSPSlice", "FixedLambdaSISlice", "FixedLambdaRefBSlice", "LambdaWeightPSlice",
  "LambdaWeightBSlice", "LambdaWeightISlice", "LambdaWeightSPSlice", "LambdaWeightSISlice",
  "LambdaWeightRefBSlice",
  // AdaptiveRounding weights that cannot act: B and non-reference pictures do not exist here, and JM 19.0 computes
  // the chroma weights (AdaptRndCrWeight) but its quantisers use the luma weight for chroma too
  "AdaptRndWFactorBRef", "AdaptRndWFactorINRef", "AdaptRndWFactorPNRef",
  "AdaptRndWFactorBNRef", "AdaptRndCrWFactorIRef", "AdaptRndCrWFactorPRef", "AdaptRndCrWFactorBRef",
  "AdaptRndCrWFactorINRef", "AdaptRndCrWFactorPNRef", "AdaptRndCrWFactorBNRef", "SetMVXLimit", "SetMVYLimit",
  "UMHexDSR", "UMHexScale", "EPZSPattern", "EPZSDualRefinement", "EPZSFixedPredictors", "EPZSAggressiveWindow",
  "EPZSTemporal", "EPZSSpatialMem", "EPZSBlockType", "EPZSMinThresScale", "EPZSMaxThresScale",
  "EPZSMedThresScale", "EPZSSubPelThresScale", "EPZSSubPelME", "EPZSSubPelMEBiPred", "EPZSSubPelGrid",
  "EPZSUseHMEPredictors", "HMEDisableMMCO", "PyramidLevels",
  "LossRateA", "LossRateB", "LossRateC", "FirstFrameCorrect", "NumberOfDecoders",
  "ErrorConcealment", "DistortionEstimation", "BLevel0MoreRef", "BIdenticalList", "CRA", "HM50RefStructure",
  "LDRefSetting", "UnconstrainedLDRef", "UseDistortionReorder", "EnableReorderBslice",
  "PreferPowerOfTwo", "FrmStructBufferLength", "RDOQ_DC", "RDOQ_CR", "RDOQ_DC_CR",
  "RDOQ_QP_Num", "RDOQ_CP_Mode", "RDOQ_CP_MV", "RDOQ_Fast",
  // With CAVLC the coding state SubMBCodingState chooses to restore (bitstream position, CABAC-only contexts) holds
  // nothing a decision reads: JM 19.0 writes the same stream for 0, 1 and 2
  "SubMBCodingState",
  // Reporting and speed-only switches of JM (no effect on the stream)
  "ReportFrameStats", "DisplayEncParams", "Verbose", "SkipGlobalStats", "ChromaMCBuffer",
};

// The ignored keys JM 19.0 reads as text (its Map type 1: file names, a hierarchy format, a message); any text.
const char* const kIgnoredText[] = {
  "ExplicitHierarchyFormat", "SP_output_name", "SP2_input_name1", "SP2_input_name2", "LeakyBucketRateFile",
  "LeakyBucketParamFile", "InputFile3", "View1ConfigFile", "SliceGroupConfigFileName", "QmatrixFile",
  "QOffsetMatrixFile", "ToneMappingFile", "SEIMessageText", "ExplicitSeqFile", "TraceFile",
};

}  // namespace

const std::vector<KeyDef>& supported_keys() { return kSupported; }

double key_default(const KeyDef& k) {
  ConfigTarget defaults;
  void* f = k.field(defaults);
  switch (k.type) {
    case KeyType::Int: return *static_cast<int*>(f);
    case KeyType::Flag: return *static_cast<bool*>(f) ? 1 : 0;
    case KeyType::Double: return *static_cast<double*>(f);
    case KeyType::String: break;
  }
  return 0;
}

std::string key_default_text(const KeyDef& k) {
  ConfigTarget defaults;
  return k.type == KeyType::String ? *static_cast<std::string*>(k.field(defaults)) : std::string();
}
const std::vector<UnsupportedKey>& unsupported_keys() { return kUnsupported; }
const std::vector<HeuristicKey>& heuristic_keys() { return kHeuristic; }

const HeuristicKey* find_heuristic(const std::string& name) {
  for (const HeuristicKey& k : kHeuristic)
    if (strcasecmp(k.name, name.c_str()) == 0) return &k;
  return nullptr;
}

const ValueFallback* find_value_fallback(const std::string& canonical_name) {
  for (const ValueFallback& f : kValueFallbacks)
    if (canonical_name == f.name) return &f;
  return nullptr;
}

const KeyDef* find_supported(const std::string& name) {
  for (const KeyDef& k : kSupported)
    if (strcasecmp(k.name, name.c_str()) == 0) return &k;
  return nullptr;
}

const UnsupportedKey* find_unsupported(const std::string& name) {
  for (const UnsupportedKey& k : kUnsupported)
    if (strcasecmp(k.name, name.c_str()) == 0) return &k;
  return nullptr;
}

bool find_ignored(const std::string& name, std::string* canonical, bool* text) {
  for (const char* k : kIgnored) {
    if (strcasecmp(k, name.c_str()) == 0) {
      if (canonical) *canonical = k;
      if (text) *text = false;
      return true;
    }
  }
  for (const char* k : kIgnoredText) {
    if (strcasecmp(k, name.c_str()) == 0) {
      if (canonical) *canonical = k;
      if (text) *text = true;
      return true;
    }
  }
  // Every VUI_* key only matters with EnableVUISupport = 1, which is unsupported. JM's VUI keys are all numbers.
  if (name.size() > 4 && strncasecmp(name.c_str(), "VUI_", 4) == 0) {
    if (canonical) *canonical = name;
    if (text) *text = false;
    return true;
  }
  return false;
}

bool is_ignored_key(const std::string& canonical_name) { return find_ignored(canonical_name, nullptr); }

}  // namespace gme
