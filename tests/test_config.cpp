// The JM-compatible configuration front end (lencod/config.h): precedence, syntax, every bad-input case, the
// unsupported/ignored/unknown key kinds and the cross-key rules. Messages must name the file:line or key and value.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lencod/config.h"
#include "lencod/config_keys.h"
#include "encoder/encoder.h"
#include "encoder/params_check.h"
#include "encoder/picture.h"
#include "tests/conformance_util.h"

namespace gme {
namespace {

using conf::TempDir;

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// Parses a command line given as words (argv[0] added).
CommandLine parse(std::vector<std::string> words) {
  std::vector<const char*> argv = {"lencod"};
  for (const std::string& w : words) argv.push_back(w.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// A parse that must fail; returns the message.
std::string parse_error(std::vector<std::string> words) {
  try {
    parse(words);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError for the command line";
  return "";
}

// Text config through the builder; returns the message of the expected error.
std::string text_error(const std::string& text, const std::string& origin = "t.cfg") {
  try {
    ConfigBuilder b;
    b.parse_text(text, origin);
    b.finish(nullptr);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return "";
}

EncoderParams text_params(const std::string& text, std::vector<std::string>* warnings = nullptr) {
  ConfigBuilder b;
  b.parse_text(text, "t.cfg");
  return b.finish(warnings);
}

const std::string kIn = "InputFile = \"in.yuv\"\n";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Config, DefaultsAreJm19WhereSupported) {
  const EncoderParams p = text_params(kIn);
  EXPECT_EQ(p.input_file, "in.yuv");
  EXPECT_EQ(p.qp_i, 24);  // JM 19.0 Map defaults
  EXPECT_EQ(p.qp_p, 24);
  EXPECT_EQ(p.search_range, 16);
  EXPECT_EQ(p.source_width, 176);
  EXPECT_EQ(p.source_height, 144);
  EXPECT_EQ(p.frames_to_encode, 1);
  EXPECT_EQ(p.level_idc, 21);
  EXPECT_EQ(p.me_distortion_hpel, 0);
  EXPECT_EQ(p.me_distortion_qpel, 2);
  EXPECT_EQ(p.md_distortion, 2);
  EXPECT_EQ(p.profile_idc, 66);  // JM's 88 (extended) is not supported; documented difference
  EXPECT_DOUBLE_EQ(p.frame_rate, 30.0);
  EXPECT_EQ(p.output_file, "test.264");
  EXPECT_TRUE(p.p_slice_skip);
  for (int i = 1; i <= 7; ++i) EXPECT_TRUE(p.p_search[i]) << i;
  EXPECT_EQ(p.gpu_integer_me, 0);
  EXPECT_EQ(p.gpu_top_k, 8);
}

TEST(Config, PrecedenceDefaultFileThenEachFileThenEachP) {
  TempDir d("cfg_prec");
  write_text(d.file("base.cfg"), kIn + "QPISlice = 30\nQPPSlice = 30\nSearchRange = 8\nIntraPeriod = 5\n");
  write_text(d.file("b.cfg"), "QPISlice = 31\nIntraPeriod = 6\n");
  write_text(d.file("c.cfg"), "QPISlice = 32\nSearchRange = 9\n");
  const CommandLine cl = parse({"-d", d.file("base.cfg"), "-f", d.file("b.cfg"), "-f", d.file("c.cfg"), "-p",
                                "QPISlice=33", "-p", "SearchRange=10", "-p", "SearchRange=11"});
  EXPECT_EQ(cl.params.qp_i, 33);           // -p beats every file
  EXPECT_EQ(cl.params.qp_p, 30);           // only the default file set it
  EXPECT_EQ(cl.params.search_range, 11);   // the last -p wins
  EXPECT_EQ(cl.params.intra_period, 6);    // the later -f beats the default file
  ASSERT_EQ(cl.sources.size(), 6u);
  EXPECT_EQ(cl.sources[0], d.file("base.cfg"));
  EXPECT_EQ(cl.sources[2], d.file("c.cfg"));
  // Files apply in command-line order.
  const CommandLine swapped = parse({"-d", d.file("base.cfg"), "-f", d.file("c.cfg"), "-f", d.file("b.cfg")});
  EXPECT_EQ(swapped.params.qp_i, 31);
  EXPECT_EQ(swapped.params.search_range, 9);
}

TEST(Config, PCollectsEveryFollowingArgumentLikeJm) {
  const CommandLine cl = parse({"-p", "InputFile=x.yuv", "QPISlice=20", "QPPSlice = 21", "-p", "SearchRange=5"});
  EXPECT_EQ(cl.params.input_file, "x.yuv");
  EXPECT_EQ(cl.params.qp_i, 20);
  EXPECT_EQ(cl.params.qp_p, 21);
  EXPECT_EQ(cl.params.search_range, 5);
}

TEST(Config, PWordsAreJoinedLikeJm) {
  // JM concatenates the words after -p, so a setting may be split over several words.
  const CommandLine cl = parse({"-p", "InputFile=my clip.yuv", "-p", "QPISlice", "=", "22", "QPPSlice=", "23", "-p",
                                "OutputFile=\"o.264\"", "ReconFile=\"\""});
  EXPECT_EQ(cl.params.input_file, "my clip.yuv");
  EXPECT_EQ(cl.params.qp_i, 22);
  EXPECT_EQ(cl.params.qp_p, 23);
  EXPECT_EQ(cl.params.output_file, "o.264");
  EXPECT_EQ(cl.params.recon_file, "");
  const std::string m = parse_error({"-p", "InputFile=a.yuv", "QPISlice"});
  EXPECT_TRUE(contains(m, "'QPISlice'")) << m;
}

TEST(Config, DefaultFileMustComeFirst) {
  TempDir d("cfg_dfirst");
  write_text(d.file("a.cfg"), kIn);
  const std::string m = parse_error({"-f", d.file("a.cfg"), "-d", d.file("a.cfg")});
  EXPECT_TRUE(contains(m, "-d")) << m;
  EXPECT_TRUE(contains(m, "first")) << m;
}

TEST(Config, EncoderCfgInWorkingDirectoryIsTheDefaultFile) {
  TempDir d("cfg_enccfg");
  write_text(d.file("encoder.cfg"), kIn + "QPISlice = 40\n");
  write_text(d.file("other.cfg"), kIn + "QPISlice = 41\n");
  char old[4096];
  ASSERT_NE(getcwd(old, sizeof old), nullptr);
  ASSERT_EQ(chdir(d.path().c_str()), 0);
  CommandLine implicit, explicit_d;
  std::string err;
  try {
    implicit = parse({});
    explicit_d = parse({"-d", "other.cfg"});
  } catch (const std::exception& e) {
    err = e.what();
  }
  ASSERT_EQ(chdir(old), 0);
  ASSERT_EQ(err, "");
  EXPECT_EQ(implicit.params.qp_i, 40);
  ASSERT_EQ(implicit.sources.size(), 1u);
  EXPECT_EQ(implicit.sources[0], "encoder.cfg");
  EXPECT_EQ(explicit_d.params.qp_i, 41);  // -d replaces encoder.cfg
}

TEST(Config, SyntaxCommentsQuotesWhitespaceAndCrLf) {
  const std::string text =
      "# full-line comment\n"
      "\n"
      "   \t  \n"
      "InputFile = \"my clip #1.yuv\"   # quoted value keeps blanks and '#'\n"
      "OutputFile=out.264\n"
      "QPISlice\t=\t30# comment right after the value\r\n"
      "ReconFile = \"\"\n"
      "FrameRate = 29.97\n"
      "ChromaQPOffset = -2\n";
  const EncoderParams p = text_params(text);
  EXPECT_EQ(p.input_file, "my clip #1.yuv");
  EXPECT_EQ(p.output_file, "out.264");
  EXPECT_EQ(p.qp_i, 30);
  EXPECT_EQ(p.recon_file, "");
  EXPECT_DOUBLE_EQ(p.frame_rate, 29.97);
  EXPECT_EQ(p.chroma_qp_offset, -2);
}

// Issue 16: a UTF-8 byte order mark (Windows editors) is no part of the first key.
TEST(Config, ByteOrderMarkIsSkipped) {
  std::vector<std::string> w;
  const EncoderParams p = text_params("\xEF\xBB\xBFQPISlice = 31\n" + kIn, &w);
  EXPECT_TRUE(w.empty()) << w[0];
  EXPECT_EQ(p.qp_i, 31);
}

// Issue 16: JM's Log2MaxPOCLsbMinus4 rule with a FrameSkip whose 4 x FrameSkip leaves the int range (it overflowed).
TEST(Config, HugeFrameSkipMeetsThePocRuleWithoutOverflow) {
  const std::string m = text_error(kIn + "FrameSkip = 600000000\nLog2MaxPOCLsbMinus4 = 12\n");
  EXPECT_TRUE(contains(m, "Log2MaxPOCLsbMinus4 = 12 (t.cfg:3): too small for FrameSkip = 600000000")) << m;
  EXPECT_TRUE(contains(text_error(kIn + "FrameSkip = 2000000000\n"), "FrameSkip = 2000000000"));
  EXPECT_TRUE(contains(text_error(kIn + "QPISlice = 99999999999\n"), "QPISlice = 99999999999 (t.cfg:2)"));
}

// Issue 15: every bad value of a configuration in one run, one line each, in the order met.
TEST(Config, EveryProblemIsReportedOnce) {
  try {
    ConfigBuilder b;
    b.parse_text(kIn + "QPISlice = 60\nSymbolMode = 1\nSearchRange = x\nbroken line\nGPUTopK = 0\n"
                       "PSliceSkip = 0\nDisableIntra4x4 = 1\nDisableIntra16x16 = 1\n", "t.cfg");
    b.finish(nullptr);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    const std::vector<std::string>& l = e.lines();
    ASSERT_EQ(l.size(), 6u) << e.what();
    EXPECT_TRUE(contains(l[0], "SearchRange = 'x' (t.cfg:4): expected an integer")) << l[0];
    EXPECT_TRUE(contains(l[1], "t.cfg:5: malformed line 'broken line'")) << l[1];
    EXPECT_TRUE(contains(l[2], "SymbolMode = 1 (t.cfg:3): not supported")) << l[2];
    EXPECT_TRUE(contains(l[3], "QPISlice = 60 (t.cfg:2): expected an integer in [0, 51]")) << l[3];
    EXPECT_TRUE(contains(l[4], "GPUTopK = 0 (t.cfg:6): expected an integer in [1, 16]")) << l[4];
    EXPECT_TRUE(contains(l[5], "DisableIntra16x16 = 1 (t.cfg:9)")) << l[5];
    EXPECT_EQ(std::string(e.what()), l[0] + "\n" + l[1] + "\n" + l[2] + "\n" + l[3] + "\n" + l[4] + "\n" + l[5]);
  }
}

// Issue 15: "-p StatsFile=" switches the file off (JM users' habit); a value may still follow as the next word.
TEST(Config, EmptyValueOnTheCommandLine) {
  CommandLine cl = parse({"-p", "InputFile=a.yuv", "StatsFile=s.jsonl", "-p", "StatsFile=", "ReconFile=r.yuv"});
  EXPECT_EQ(cl.params.stats_file, "");
  EXPECT_EQ(cl.params.recon_file, "r.yuv");
  cl = parse({"-p", "InputFile=a.yuv", "QPISlice=", "30", "-p", "ReconFile="});
  EXPECT_EQ(cl.params.qp_i, 30);
  EXPECT_EQ(cl.params.recon_file, "");
  EXPECT_TRUE(contains(parse_error({"-p", "InputFile=a.yuv", "QPISlice="}), "QPISlice = '' (-p 'QPISlice=')"));
}

TEST(Config, VersionNeedsNoFile) {
  EXPECT_TRUE(parse({"-f", "/nonexistent.cfg", "-V"}).version);
  EXPECT_TRUE(parse({"--version"}).version);
}

// Issue 18: one parameter validation. The key table's ranges (help text, doc/CONFIG.md) are the encoder's
// (encoder/params_check.h): at each end of a key's range the encoder accepts the value, one step outside refuses it.
TEST(Config, KeyTableRangesAreTheEncoderRanges) {
  int checked = 0;
  for (const KeyDef& k : supported_keys()) {
    if (k.type != KeyType::Int && k.type != KeyType::Double) continue;
    ConfigTarget t;
    t.p.rd_optimization = 1;  // no JM metric rule between the ME and MD keys
    t.p.num_ref_frames = 16;  // PList0References up to 16
    t.p.log2_max_frame_num_minus4 = 4;
    void* field = k.field(t);
    const char* begin = reinterpret_cast<const char*>(&t.p);
    if (static_cast<const char*>(field) < begin || static_cast<const char*>(field) >= begin + sizeof t.p) continue;
    const ConfigTarget base = t;
    auto problem_with = [&](double v) {
      ConfigTarget c = base;
      void* f = k.field(c);
      if (k.type == KeyType::Int) *static_cast<int*>(f) = static_cast<int>(v);
      else *static_cast<double*>(f) = v;
      for (const ParamProblem& pr : check_params(c.p, ParamStage::kBeforeInput))
        if (pr.key == k.name) return true;
      return false;
    };
    if (k.allowed) {
      for (const char* a = k.allowed; *a;) {
        EXPECT_FALSE(problem_with(std::atoi(a))) << k.name << " = " << std::atoi(a);
        while (*a && *a != ',') ++a;
        if (*a) ++a;
      }
      EXPECT_TRUE(problem_with(100)) << k.name << " = 100";
    } else if (k.type == KeyType::Double) {
      EXPECT_TRUE(problem_with(k.lo)) << k.name;  // (lo, hi]
      EXPECT_FALSE(problem_with(k.hi)) << k.name;
      EXPECT_TRUE(problem_with(k.hi + 1)) << k.name;
    } else {
      EXPECT_FALSE(problem_with(k.lo)) << k.name << " = " << k.lo;
      EXPECT_TRUE(problem_with(k.lo - 1)) << k.name << " = " << k.lo - 1;
      if (k.hi < 1e9) {
        EXPECT_FALSE(problem_with(k.hi)) << k.name << " = " << k.hi;
        EXPECT_TRUE(problem_with(k.hi + 1)) << k.name << " = " << k.hi + 1;
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 30);
}

// The Encoder refuses what the configuration would refuse, naming the key.
TEST(Config, EncoderRefusesBadParametersByKeyName) {
  EncoderParams p;
  p.qp_p = 60;
  try {
    Encoder e(p);
    ADD_FAILURE() << "QPPSlice = 60 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "QPPSlice = 60: expected an integer in [0, 51]");
  }
  p = EncoderParams();
  p.frames_to_encode = -1;  // resolved by the driver before the encoder sees it
  EXPECT_THROW(Encoder e(p), std::runtime_error);
  EXPECT_TRUE(check_params(EncoderParams()).empty());
}

TEST(Config, KeysMatchWithoutCaseLikeJm19) {
  // JM 19.0's ParameterNameToMapIndex uses strcasecmp.
  const EncoderParams p = text_params(kIn + "searchrange = 20\nQPISLICE = 31\n");
  EXPECT_EQ(p.search_range, 20);
  EXPECT_EQ(p.qp_i, 31);
}

TEST(Config, MalformedLineNamesFileAndLine) {
  std::string m = text_error(kIn + "# ok\nQPISlice 28\n", "dir/x.cfg");
  EXPECT_TRUE(contains(m, "dir/x.cfg:3")) << m;
  EXPECT_TRUE(contains(m, "QPISlice 28")) << m;
  EXPECT_TRUE(contains(m, "Key = Value")) << m;
  m = text_error("InputFile = \"unterminated\n", "y.cfg");
  EXPECT_TRUE(contains(m, "y.cfg:1")) << m;
  EXPECT_TRUE(contains(m, "quoted")) << m;
  m = text_error(kIn + "QPISlice =\n");
  EXPECT_TRUE(contains(m, "t.cfg:2")) << m;
  m = text_error(kIn + "QPISlice = 28 29\n");
  EXPECT_TRUE(contains(m, "t.cfg:2")) << m;
  m = text_error(kIn + "= 28\n");
  EXPECT_TRUE(contains(m, "t.cfg:2")) << m;
}

TEST(Config, NonNumericValueNamesKeyValueAndOrigin) {
  std::string m = text_error(kIn + "QPISlice = abc\n");
  EXPECT_TRUE(contains(m, "QPISlice")) << m;
  EXPECT_TRUE(contains(m, "abc")) << m;
  EXPECT_TRUE(contains(m, "t.cfg:2")) << m;
  EXPECT_TRUE(contains(m, "integer")) << m;
  m = text_error(kIn + "FrameRate = fast\n");
  EXPECT_TRUE(contains(m, "FrameRate")) << m;
  EXPECT_TRUE(contains(m, "number")) << m;
  m = text_error(kIn + "SearchRange = 16.5\n");
  EXPECT_TRUE(contains(m, "SearchRange")) << m;
}

TEST(Config, MissingConfigFileIsAnError) {
  std::string m = parse_error({"-f", "/nonexistent/dir/none.cfg"});
  EXPECT_TRUE(contains(m, "/nonexistent/dir/none.cfg")) << m;
  EXPECT_TRUE(contains(m, "-f")) << m;
  m = parse_error({"-d", "/nonexistent/default.cfg"});
  EXPECT_TRUE(contains(m, "/nonexistent/default.cfg")) << m;
  m = parse_error({"-f"});
  EXPECT_TRUE(contains(m, "-f")) << m;
  m = parse_error({"-p"});
  EXPECT_TRUE(contains(m, "-p")) << m;
  m = parse_error({"-x"});
  EXPECT_TRUE(contains(m, "'-x'")) << m;
  m = parse_error({"-p", "QPISlice"});
  EXPECT_TRUE(contains(m, "QPISlice")) << m;
}

TEST(Config, HelpNeedsNoFile) {
  const CommandLine cl = parse({"-f", "/nonexistent.cfg", "-h"});
  EXPECT_TRUE(cl.help);
  std::ostringstream o;
  print_help(o);
  for (const KeyDef& k : supported_keys()) EXPECT_TRUE(contains(o.str(), k.name)) << k.name;
  EXPECT_TRUE(contains(o.str(), "[0, 51]"));
  EXPECT_TRUE(contains(o.str(), "-d"));
}

struct BadValue {
  const char* setting;
  const char* key;     // must appear in the message
  const char* expect;  // must appear too (value or range)
};

TEST(Config, OutOfRangeValuesNameKeyValueAndRange) {
  const BadValue cases[] = {
      {"QPISlice = 52", "QPISlice", "[0, 51]"},
      {"QPPSlice = -1", "QPPSlice", "[0, 51]"},
      {"SourceWidth = -16", "SourceWidth", "-16"},
      {"SourceHeight = 0", "SourceHeight", "0"},
      {"SourceWidth = 175", "SourceWidth", "even"},
      {"SourceHeight = 99", "SourceHeight", "even"},
      {"FrameRate = 0", "FrameRate", "(0, 480]"},
      {"FrameRate = -5", "FrameRate", "-5"},
      {"SearchRange = 0", "SearchRange", "[1, 128]"},
      {"SearchRange = 1000", "SearchRange", "1000"},
      {"NumberReferenceFrames = 17", "NumberReferenceFrames", "[1, 16]"},
      {"NumberReferenceFrames = 0", "NumberReferenceFrames", "[1, 16]"},
      {"FramesToBeEncoded = 0", "FramesToBeEncoded", "0"},
      {"FramesToBeEncoded = -2", "FramesToBeEncoded", "-2"},
      {"GPUIntegerME = 2", "GPUIntegerME", "[0, 1]"},
      {"GPUTopK = 0", "GPUTopK", "[1, 16]"},
      {"GPUTopK = 17", "GPUTopK", "[1, 16]"},
      {"GPUSearchCenter = 2", "GPUSearchCenter", "[0, 1]"},
      {"DFAlphaRefPSlice = 7", "DFAlphaRefPSlice", "[-6, 6]"},
      {"DFDisableRefISlice = 3", "DFDisableRefISlice", "[0, 2]"},
      {"ChromaQPOffset = 13", "ChromaQPOffset", "[-12, 12]"},
      {"LevelIDC = 23", "LevelIDC", "23"},
      {"StartFrame = -1", "StartFrame", "-1"},
      {"PList0References = 2", "PList0References", "NumberReferenceFrames"},
      {"Log2MaxFNumMinus4 = 13", "Log2MaxFNumMinus4", "[-1, 12]"},
  };
  for (const BadValue& c : cases) {
    const std::string m = text_error(kIn + c.setting + "\n");
    EXPECT_TRUE(contains(m, c.key)) << c.setting << " -> " << m;
    EXPECT_TRUE(contains(m, c.expect)) << c.setting << " -> " << m;
    EXPECT_TRUE(contains(m, "t.cfg:2")) << c.setting << " -> " << m;
  }
}

TEST(Config, RangeErrorFromPNamesTheArgument) {
  const std::string m = parse_error({"-p", "InputFile=a.yuv", "-p", "QPPSlice=99"});
  EXPECT_TRUE(contains(m, "-p 'QPPSlice=99'")) << m;
}

TEST(Config, UnsupportedJmToolsAreErrorsUnlessOff) {
  const BadValue cases[] = {
      {"SymbolMode = 1", "SymbolMode", "CABAC"},
      {"NumberBFrames = 2", "NumberBFrames", "B pictures"},
      {"PicInterlace = 1", "PicInterlace", "= 0"},
      {"MbInterlace = 2", "MbInterlace", "= 0"},
      {"ProfileIDC = 77", "ProfileIDC", "66"},
      {"ProfileIDC = 100", "ProfileIDC", "66"},
      {"YUVFormat = 3", "YUVFormat", "4:2:0"},
      {"SourceBitDepthLuma = 10", "SourceBitDepthLuma", "= 8"},
      {"SourceBitDepthChroma = 10", "SourceBitDepthChroma", "= 8"},
      {"Transform8x8Mode = 1", "Transform8x8Mode", "8x8"},
      {"WeightedPrediction = 1", "WeightedPrediction", "= 0"},
      {"RateControlEnable = 1", "RateControlEnable", "rate control"},
      {"SliceMode = 3", "SliceMode", "0, 1, 2"},
      {"SearchMode = 4", "SearchMode", "-1, 0"},       // outside JM's own range: no heuristic fallback
      {"RDOptimization = 5", "RDOptimization", "0, 1"},
      {"WeightedBiprediction = 1", "WeightedBiprediction", "= 0"},
      {"num_slice_groups_minus1 = 2", "num_slice_groups_minus1", "FMO"},
      {"YUVFormat = 2", "YUVFormat", "4:2:0"},
      {"PicOrderCntType = 1", "PicOrderCntType", "0, 2"},
      {"MEDistortionFPel = 1", "MEDistortionFPel", "SSE"},
      {"MEDistortionHPel = 1", "MEDistortionHPel", "0, 2"},
      {"AdaptiveIntraPeriod = 1\nIDRPeriod = 4\nResendSPS = 2", "AdaptiveIntraPeriod", "IDRPeriod = 4"},
  };
  for (const BadValue& c : cases) {
    const std::string m = text_error(kIn + c.setting + "\n");
    EXPECT_TRUE(contains(m, c.key)) << c.setting << " -> " << m;
    EXPECT_TRUE(contains(m, c.expect)) << c.setting << " -> " << m;
    EXPECT_TRUE(contains(m, "not supported")) << c.setting << " -> " << m;
  }
  // The "off" values are accepted silently.
  std::vector<std::string> w;
  const EncoderParams p = text_params(kIn +
                                          "SymbolMode = 0\nNumberBFrames = 0\nPicInterlace = 0\nMbInterlace = 0\n"
                                          "YUVFormat = 1\nSourceBitDepthLuma = 8\nTransform8x8Mode = 0\n"
                                          "WeightedPrediction = 0\nRateControlEnable = 0\nProfileIDC = 66\n"
                                          "SearchMode = -1\nRestrictSearchRange = 2\nSEIFPAType = -1\n"
                                          "WeightY = 1.0\nAdaptiveIntraPeriod = 1\n",
                                      &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(p.search_mode, -1);
}

TEST(Config, JmHeuristicsAreAcceptedWithOneWarningLine) {
  std::vector<std::string> w;
  const EncoderParams p = text_params(kIn +
                                          "AdaptiveRounding = 1\nFastCrIntraDecision = 0\nSubMBCodingState = 2\n"
                                          "DisableThresholding = 1\nI16RDOpt = 1\nUseRDOQuant = 1\nWeightY = 2\n"
                                          "SearchMode = 3\nRDOptimization = 2\nQPISlice = 30\n",
                                      &w);
  ASSERT_EQ(w.size(), 1u);
  const char* keys[] = {"AdaptiveRounding = 1 (t.cfg:2", "FastCrIntraDecision = 0 (t.cfg:3",
                        "SubMBCodingState = 2 (t.cfg:4", "DisableThresholding = 1 (t.cfg:5", "I16RDOpt = 1 (t.cfg:6",
                        "UseRDOQuant = 1 (t.cfg:7", "WeightY = 2 (t.cfg:8", "SearchMode = 3 (t.cfg:9",
                        "RDOptimization = 2 (t.cfg:10"};
  for (const char* k : keys) EXPECT_TRUE(contains(w[0], k)) << k << " missing in: " << w[0];
  EXPECT_TRUE(contains(w[0], "fixed rounding offsets")) << w[0];  // says what gme264 does instead
  EXPECT_FALSE(contains(w[0], "QPISlice")) << w[0];
  EXPECT_EQ(p.search_mode, 0);      // fast full search instead of EPZS
  EXPECT_EQ(p.rd_optimization, 1);  // high-complexity RDO instead of the fast variant
  EXPECT_EQ(p.qp_i, 30);
  // Honoured values give no warning; a heuristic value must still be a number.
  std::vector<std::string> none;
  text_params(kIn + "AdaptiveRounding = 0\nFastCrIntraDecision = 1\nSubMBCodingState = 1\nWeightY = 1.0\n"
                    "RestrictSearchRange = 2\n",
              &none);
  EXPECT_TRUE(none.empty()) << none[0];
  const std::string m = text_error(kIn + "AdaptiveRounding = yes\n");
  EXPECT_TRUE(contains(m, "AdaptiveRounding = 'yes' (t.cfg:2)")) << m;
  // Through the command line: the last value counts and the origin is the -p argument.
  const CommandLine cl = parse({"-p", "InputFile=a.yuv", "-p", "DisableThresholding=1", "-p", "DisableThresholding=2"});
  ASSERT_EQ(cl.warnings.size(), 1u);
  EXPECT_TRUE(contains(cl.warnings[0], "DisableThresholding = 2 (-p 'DisableThresholding=2'")) << cl.warnings[0];
  EXPECT_FALSE(contains(cl.warnings[0], "DisableThresholding = 1")) << cl.warnings[0];
}

// JM 19.0's stock bin/encoder_baseline.cfg, verbatim except InputFile and CRLF line ends turned into LF (a JM user's own file must run).
const char kJm19EncoderBaselineCfg[] = R"jm19cfg(# New Input File Format is as follows
# <ParameterName> = <ParameterValue> # Comment
#
# See configfile.h for a list of supported ParameterNames
#
# For bug reporting and known issues see:
# https://ipbt.hhi.fraunhofer.de


##########################################################################################
# Files
##########################################################################################
InputFile             = "in.yuv"       # Input sequence
InputHeaderLength     = 0      # If the inputfile has a header, state it's length in byte here
StartFrame            = 0      # Start frame for encoding. (0-N)
FramesToBeEncoded     = 3      # Number of frames to be coded
FrameRate             = 30.0   # Frame Rate per second (0.1-100.0)
SourceWidth           = 176    # Source frame width
SourceHeight          = 144    # Source frame height
SourceResize          = 0      # Resize source size for output
OutputWidth           = 176    # Output frame width
OutputHeight          = 144    # Output frame height

TraceFile             = "trace_enc.txt"      # Trace file 
ReconFile             = "test_rec.yuv"       # Reconstruction YUV file
OutputFile            = "test.264"           # Bitstream
StatsFile             = "stats.dat"          # Coding statistics file

##########################################################################################
# Encoder Control
##########################################################################################
ProfileIDC            = 66  # Profile IDC (66=baseline, 77=main, 88=extended; FREXT Profiles: 100=High, 110=High 10, 122=High 4:2:2, 244=High 4:4:4, 44=CAVLC 4:4:4 Intra)
IntraProfile          = 0   # Activate Intra Profile for FRExt (0: false, 1: true)
                            # (e.g. ProfileIDC=110, IntraProfile=1  =>  High 10 Intra Profile)
LevelIDC              = 40  # Level IDC   (e.g. 20 = level 2.0)

IntraPeriod           = 0   # Period of I-pictures   (0=only first)
IDRPeriod             = 0   # Period of IDR pictures (0=only first)
AdaptiveIntraPeriod   = 1   # Adaptive intra period
AdaptiveIDRPeriod     = 0   # Adaptive IDR period
IntraDelay            = 0   # Intra (IDR) picture delay (i.e. coding structure of PPIPPP... )
EnableIDRGOP          = 0   # Support for IDR closed GOPs (0: disabled, 1: enabled)
EnableOpenGOP         = 0   # Support for open GOPs (0: disabled, 1: enabled)
QPISlice              = 28  # Quant. param for I Slices (0-51)
QPPSlice              = 28  # Quant. param for P Slices (0-51)
FrameSkip             = 0   # Number of frames to be skipped in input (e.g 2 will code every third frame). 
                            # Note that this now excludes intermediate (i.e. B) coded pictures
ChromaQPOffset        = 0   # Chroma QP offset (-51..51)

DisableSubpelME       = 0   # Disable Subpixel Motion Estimation (0=off/default, 1=on)
SearchRange           = 32  # Max search range

MEDistortionFPel      = 0   # Select error metric for Full-Pel ME    (0: SAD, 1: SSE, 2: Hadamard SAD)
MEDistortionHPel      = 2   # Select error metric for Half-Pel ME    (0: SAD, 1: SSE, 2: Hadamard SAD)
MEDistortionQPel      = 2   # Select error metric for Quarter-Pel ME (0: SAD, 1: SSE, 2: Hadamard SAD)
MDDistortion          = 2   # Select error metric for Mode Decision  (0: SAD, 1: SSE, 2: Hadamard SAD)
SkipDeBlockNonRef     = 0   # Skip Deblocking (regardless of DFParametersFlag) for non-reference frames (0: off, 1: on)
ChromaMCBuffer        = 1   # Calculate Color component interpolated values in advance and store them.
                            # Provides a trade-off between memory and computational complexity
                            # (0: disabled/default, 1: enabled)
ChromaMEEnable        = 0   # Take into account Color component information during ME
                            # (0: only first component/default, 
                            #  1: All Color components - Integer refinement only
                            #  2: All Color components - All refinements)
ChromaMEWeight        = 1   # Weighting for chroma components. This parameter should have a relationship with color format.

NumberReferenceFrames = 5   # Number of previous frames used for inter motion search (0-16)

PList0References      = 0   # P slice List 0 reference override (0 disable, N <= NumberReferenceFrames)
Log2MaxFNumMinus4     = 0   # Sets log2_max_frame_num_minus4 (-1 : based on FramesToBeEncoded/Auto, >=0 : Log2MaxFNumMinus4)
Log2MaxPOCLsbMinus4   = -1  # Sets log2_max_pic_order_cnt_lsb_minus4 (-1 : Auto, >=0 : Log2MaxPOCLsbMinus4)

GenerateMultiplePPS   = 0   # Transmit multiple parameter sets. Currently parameters basically enable all WP modes (0: diabled, 1: enabled)
SendAUD               = 0   # Send Access Delimiter Unit NALU (for every access unit)
ResendSPS             = 2   # Resend SPS  (0: disabled, 1: all Intra pictures, 2: only for IDR, 3: for IDR and OpenGOP I)
ResendPPS             = 0   # Resend PPS (with pic_parameter_set_id 0) for every coded Frame/Field pair (0: disabled, 1: enabled)

MbLineIntraUpdate     = 0   # Error robustness(extra intra macro block updates)(0=off, N: One GOB every N frames are intra coded)
RandomIntraMBRefresh  = 0   # Forced intra MBs per picture

##########################################################################################
# PSlice Mode types
##########################################################################################
PSliceSkip            = 1   # P-Slice Skip mode consideration  (0=disable, 1=enable)
PSliceSearch16x16     = 1   # P-Slice Inter block search 16x16 (0=disable, 1=enable)
PSliceSearch16x8      = 1   # P-Slice Inter block search 16x8  (0=disable, 1=enable)
PSliceSearch8x16      = 1   # P-Slice Inter block search  8x16 (0=disable, 1=enable)
PSliceSearch8x8       = 1   # P-Slice Inter block search  8x8  (0=disable, 1=enable)
PSliceSearch8x4       = 1   # P-Slice Inter block search  8x4  (0=disable, 1=enable)
PSliceSearch4x8       = 1   # P-Slice Inter block search  4x8  (0=disable, 1=enable)
PSliceSearch4x4       = 1   # P-Slice Inter block search  4x4  (0=disable, 1=enable)

DisableIntra4x4        = 0  # Disable Intra 4x4 modes
DisableIntra16x16      = 0  # Disable Intra 16x16 modes
DisableIntraInInter    = 0  # Disable Intra modes for inter slices
IntraDisableInterOnly  = 0  # Apply Disabling Intra conditions only to Inter Slices (0:disable/default,1: enable)
Intra4x4ParDisable     = 0  # Disable Vertical & Horizontal 4x4
Intra4x4DiagDisable    = 0  # Disable Diagonal 45degree 4x4
Intra4x4DirDisable     = 0  # Disable Other Diagonal 4x4
Intra16x16ParDisable   = 0  # Disable Vertical & Horizontal 16x16
Intra16x16PlaneDisable = 0  # Disable Planar 16x16
ChromaIntraDisable     = 0  # Disable Intra Chroma modes other than DC
EnableIPCM             = 1  # Enable IPCM macroblock mode

DisposableP            = 0  # Enable Disposable P slices in the primary layer (0: disable/default, 1: enable)
DispPQPOffset          = 0  # Quantizer offset for disposable P slices (0: default)

PreferDispOrder        = 1  # Prefer display order when building the prediction structure as opposed to coding order (affects intra and IDR periodic insertion, among others)
PreferPowerOfTwo       = 0  # Prefer prediction structures that have lengths expressed as powers of two
FrmStructBufferLength  = 16 # Length of the frame structure unit buffer; it can be overriden for certain cases

ChangeQPFrame          = 0  # Frame in display order from which to apply the Change QP offsets
ChangeQPI              = 0  # Change QP offset value for I_SLICE
ChangeQPP              = 0  # Change QP offset value for P_SLICE
ChangeQPB              = 0  # Change QP offset value for B_SLICE
ChangeQPSI             = 0  # Change QP offset value for SI_SLICE
ChangeQPSP             = 0  # Change QP offset value for SP_SLICE
##########################################################################################
# Output Control, NALs
##########################################################################################

OutFileMode            =  0  # Output file mode, 0:Annex B, 1:RTP

##########################################################################################
# Picture based Multi-pass encoding
#########################################################################################

RDPictureDecision        =  0     # Perform multiple pass coding and make RD optimal decision among them
RDPSliceBTest            =  0     # Perform Slice level RD decision between P and B slices. 
RDPictureMaxPassISlice   =  1     # Max number of coding passes for I slices, valid values [1,3], default is 1 
RDPictureMaxPassPSlice   =  2     # Max number of coding passes for P slices, valid values [1,6], default is 2
RDPictureMaxPassBSlice   =  3     # Max number of coding passes for B slices, valid values [1,6], default is 3
RDPictureFrameQPPSlice   =  0     # Perform additional frame level QP check (QP+/-1) for P slices, 0: disabled (default), 1: enabled
RDPictureFrameQPBSlice   =  0     # Perform additional frame level QP check (QP+/-1) for B slices, 0: disabled, 1: enabled (default)
RDPictureDeblocking      =  0     # Perform another coding pass to check non-deblocked picture, 0: disabled (default), 1: enabled
RDPictureDirectMode      =  0     # Perform another coding pass to check the alternative direct mode for B slices, , 0: disabled (default), 1: enabled

##########################################################################################
# Deblocking filter parameters
##########################################################################################

DFParametersFlag         = 0      # Configure deblocking filter (0=parameters below ignored, 1=parameters sent)
					    										# Note that for pictures with multiple slice types, 
                                  # only the type of the first slice will be considered.
DFDisableRefISlice       = 0      # Disable deblocking filter in reference I coded pictures (0=Filter, 1=No Filter). 
DFAlphaRefISlice         = 0      # Reference I coded pictures Alpha offset div. 2, {-6, -5, ... 0, +1, .. +6}
DFBetaRefISlice          = 0      # Reference I coded pictures Beta offset div. 2, {-6, -5, ... 0, +1, .. +6}
DFDisableNRefISlice      = 0      # Disable deblocking filter in non reference I coded pictures (0=Filter, 1=No Filter). 
DFAlphaNRefISlice        = 0      # Non Reference I coded pictures Alpha offset div. 2, {-6, -5, ... 0, +1, .. +6}
DFBetaNRefISlice         = 0      # Non Reference I coded pictures Beta offset div. 2, {-6, -5, ... 0, +1, .. +6}
DFDisableRefPSlice       = 0      # Disable deblocking filter in reference P coded pictures (0=Filter, 1=No Filter). 
DFAlphaRefPSlice         = 0      # Reference P coded pictures Alpha offset div. 2, {-6, -5, ... 0, +1, .. +6}
DFBetaRefPSlice          = 0      # Reference P coded pictures Beta offset div. 2, {-6, -5, ... 0, +1, .. +6}
DFDisableNRefPSlice      = 0      # Disable deblocking filter in non reference P coded pictures (0=Filter, 1=No Filter). 
DFAlphaNRefPSlice        = 0      # Non Reference P coded pictures Alpha offset div. 2, {-6, -5, ... 0, +1, .. +6}
DFBetaNRefPSlice         = 0      # Non Reference P coded pictures Beta offset div. 2, {-6, -5, ... 0, +1, .. +6}

##########################################################################################
# Error Resilience / Slices
##########################################################################################

SliceMode             =  0   # Slice mode (0=off 1=fixed #mb in slice 2=fixed #bytes in slice 3=use callback)
SliceArgument         = 50   # Slice argument (Arguments to modes 1 and 2 above)

num_slice_groups_minus1 = 0  # Number of Slice Groups Minus 1, 0 == no FMO, 1 == two slice groups, etc.
slice_group_map_type    = 0  # 0:  Interleave, 1: Dispersed,    2: Foreground with left-over,
                             # 3:  Box-out,    4: Raster Scan   5: Wipe
                             # 6:  Explicit, slice_group_id read from SliceGroupConfigFileName
slice_group_change_direction_flag = 0    # 0: box-out clockwise, raster scan or wipe right,
                                         # 1: box-out counter clockwise, reverse raster scan or wipe left
slice_group_change_rate_minus1    = 85   #
SliceGroupConfigFileName          = "sg0conf.cfg"   # Used for slice_group_map_type 0, 2, 6

UseRedundantPicture   = 0    # 0: not used, 1: enabled
NumRedundantHierarchy = 1    # 0-4
PrimaryGOPLength      = 10   # GOP length for redundant allocation (1-16)
                             # NumberReferenceFrames must be no less than PrimaryGOPLength when redundant slice enabled
NumRefPrimary         = 1    # Actually used number of references for primary slices (1-16)

##########################################################################################
# Search Range Restriction / RD Optimization
##########################################################################################

RestrictSearchRange    =  2  # restriction for (0: blocks and ref, 1: ref, 2: no restrictions)
RDOptimization         =  1  # rd-optimized mode decision
                             # 0: RD-off (Low complexity mode)
                             # 1: RD-on (High complexity mode)
                             # 2: RD-on (Fast high complexity mode - not work in FREX Profiles)
                             # 3: with losses
                             # 4: RD-on (High complexity mode) with negative skip bias
I16RDOpt               =  0  # perform rd-optimized mode decision for Intra 16x16 MB
                             # 0: SAD-based mode decision for Intra 16x16 MB
                             # 1: RD-based mode decision for Intra 16x16 MB                        
SubMBCodingState       =  1  # submacroblock coding state
                             # 0: lowest complexity, do not store or reset coding state during sub-MB mode decision
                             # 1: medium complexity, reset to master coding state (for current mode) during sub-MB mode decision
                             # 2: highest complexity, store and reset coding state during sub-MB mode decision
DistortionSSIM         =  0  # Compute SSIM distortion. (0: disabled/default, 1: enabled)
DistortionMS_SSIM      =  0  # Compute Multiscale SSIM distortion. (0: disabled/default, 1: enabled)
SSIMOverlapSize        =  8  # Overlap size to calculate SSIM distortion (1: pixel by pixel, 8: no overlap)
DistortionYUVtoRGB     =  0  # Calculate distortion in RGB domain after conversion from YCbCr (0:off, 1:on)
CtxAdptLagrangeMult    =  0  # Context Adaptive Lagrange Multiplier
                             # 0: disabled (default)
                             # 1: enabled (works best when RDOptimization=0)
FastCrIntraDecision    =  1  # Fast Chroma intra mode decision (0:off, 1:on)
DisableThresholding    =  0  # Disable Thresholding of Transform Coefficients (0:off, 1:on)
SkipIntraInInterSlices =  0  # Skips Intra mode checking in inter slices if certain mode decisions are satisfied (0: off, 1: on)
WeightY                =  1  # Luma weight for RDO
WeightCb               =  1  # Cb weight for RDO
WeightCr               =  1  # Cr weight for RDO

##########################################################################################
# Explicit Lambda Usage
##########################################################################################
UseExplicitLambdaParams  =  0    # Use explicit lambda scaling parameters (0:disabled, 1:enable lambda weight, 2: use explicit lambda value)
UpdateLambdaChromaME     =  0    # Update lambda given Chroma ME consideration
FixedLambdaISlice        =  0.1  # Fixed Lambda value for I slices
FixedLambdaPSlice        =  0.1  # Fixed Lambda value for P slices

LambdaWeightISlice       =  0.65 # scaling param for I slices. This will be used as a multiplier i.e. lambda=LambdaWeightISlice * 2^((QP-12)/3)
LambdaWeightPSlice       =  0.68 # scaling param for P slices. This will be used as a multiplier i.e. lambda=LambdaWeightPSlice * 2^((QP-12)/3)

LossRateA                =  5  # expected packet loss rate of the channel for the first partition, only valid if RDOptimization = 3
LossRateB                =  0  # expected packet loss rate of the channel for the second partition, only valid if RDOptimization = 3
LossRateC                =  0  # expected packet loss rate of the channel for the third partition, only valid if RDOptimization = 3
FirstFrameCorrect	     =  0  # If 1, the first frame is encoded under the assumption that it is always correctly received. 
NumberOfDecoders         = 30  # Numbers of decoders used to simulate the channel, only valid if RDOptimization = 3
RestrictRefFrames        =  0  # Doesnt allow reference to areas that have been intra updated in a later frame.

##########################################################################################
# Additional Stuff
#########################################################################################

UseConstrainedIntraPred  =  0  # If 1, Inter pixels are not used for Intra macroblock prediction.

NumberofLeakyBuckets     =  8                      # Number of Leaky Bucket values
LeakyBucketRateFile      =  "leakybucketrate.cfg"  # File from which encoder derives rate values
LeakyBucketParamFile     =  "leakybucketparam.cfg" # File where encoder stores leakybucketparams

NumFramesInELayerSubSeq  = 0  # number of frames in the Enhanced Scalability Layer(0: no Enhanced Layer)

SparePictureOption        =  0   # (0: no spare picture info, 1: spare picture available)
SparePictureDetectionThr  =  6   # Threshold for spare reference pictures detection
SparePicturePercentageThr = 92   # Threshold for the spare macroblock percentage

PicOrderCntType           = 0    # (0: POC mode 0, 1: POC mode 1, 2: POC mode 2)

########################################################################################
#Rate control
########################################################################################

RateControlEnable       = 0     # 0 Disable, 1 Enable
Bitrate                 = 45020 # Bitrate(bps)
InitialQP               = 0     # Initial Quantization Parameter for the first I frame
                                # InitialQp depends on two values: Bits Per Picture,
                                # and the GOP length
BasicUnit               = 0     # Number of MBs in the basic unit
                                # should be a fraction of the total number
                                # of MBs in a frame ("0" sets a BU equal to a frame)
ChannelType             = 0     # type of channel( 1=time varying channel; 0=Constant channel)
RCUpdateMode            = 0     # Rate Control type. Modes supported :
                                # 0 = original JM rate control,
                                # 1 = rate control that is applied to all frames regardless of the slice type,
                                # 2 = original plus intelligent QP selection for I and B slices (including Hierarchical),
                                # 3 = original + hybrid quadratic rate control for I and B slice using bit rate statistics
                                #
RCISliceBitRatio        = 1.0   # target ratio of bits for I-coded pictures compared to P-coded Pictures (for RCUpdateMode=3)
RCBSliceBitRatio0       = 0.5   # target ratio of bits for B-coded pictures compared to P-coded Pictures - temporal level 0 (for RCUpdateMode=3)
RCBSliceBitRatio1       = 0.25  # target ratio of bits for B-coded pictures compared to P-coded Pictures - temporal level 1 (for RCUpdateMode=3)
RCBSliceBitRatio2       = 0.25  # target ratio of bits for B-coded pictures compared to P-coded Pictures - temporal level 2 (for RCUpdateMode=3)
RCBSliceBitRatio3       = 0.25  # target ratio of bits for B-coded pictures compared to P-coded Pictures - temporal level 3 (for RCUpdateMode=3)
RCBSliceBitRatio4       = 0.25  # target ratio of bits for B-coded pictures compared to P-coded Pictures - temporal level 4 (for RCUpdateMode=3)
RCBoverPRatio           = 0.45  # ratio of bit rate usage of a B-coded picture over a P-coded picture for the SAME QP (for RCUpdateMode=3)
RCIoverPRatio           = 3.80  # ratio of bit rate usage of an I-coded picture over a P-coded picture for the SAME QP (for RCUpdateMode=3)
RCMinQPPSlice           =  8    # minimum P Slice QP value for rate control
RCMaxQPPSlice           = 44    # maximum P Slice QP value for rate control
RCMinQPISlice           =  8    # minimum I Slice QP value for rate control
RCMaxQPISlice           = 36    # maximum I Slice QP value for rate control

########################################################################################
#Fast Mode Decision
########################################################################################
EarlySkipEnable         = 0     # Early skip detection (0: Disable 1: Enable)
SelectiveIntraEnable    = 0     # Selective Intra mode decision (0: Disable 1: Enable)

ReportFrameStats        = 0     # (0:Disable Frame Statistics 1: Enable)
DisplayEncParams        = 0     # (0:Disable Display of Encoder Params 1: Enable)
Verbose                 = 1     # level of display verboseness 
                                # 0: short, 1: normal (default), 2: detailed, 3: detailed/nvb
                                # 4: with additional MB level lambda info

########################################################################################
#Rounding Offset control
########################################################################################

OffsetMatrixPresentFlag  = 0    # Enable Explicit Offset Quantization Matrices  (0: disable 1: enable)
QOffsetMatrixFile        = "q_offset.cfg" # Explicit Quantization Matrices file

AdaptiveRounding         = 1    # Enable Adaptive Rounding based on JVT-N011 (0: disable, 1: enable)
AdaptRoundingFixed       = 1    # Enable Global Adaptive rounding for all qps (0: disable, 1: enable - default/old)
AdaptRndPeriod           = 16   # Period in terms of MBs for updating rounding offsets. 
                                # 0 performs update at the picture level. Default is 16. 1 is as in JVT-N011.
AdaptRndChroma           = 1    # Enables coefficient rounding adaptation for chroma

AdaptRndWFactorIRef      = 4    # Adaptive Rounding Weight for I/SI slices in reference pictures /4096
AdaptRndWFactorPRef      = 4    # Adaptive Rounding Weight for P/SP slices in reference pictures /4096
AdaptRndWFactorINRef     = 4    # Adaptive Rounding Weight for I/SI slices in non reference pictures /4096
AdaptRndWFactorPNRef     = 4    # Adaptive Rounding Weight for P/SP slices in non reference pictures /4096

AdaptRndCrWFactorIRef    = 4    # Chroma Adaptive Rounding Weight for I/SI slices in reference pictures /4096
AdaptRndCrWFactorPRef    = 4    # Chroma Adaptive Rounding Weight for P/SP slices in reference pictures /4096
AdaptRndCrWFactorINRef   = 4    # Chroma Adaptive Rounding Weight for I/SI slices in non reference pictures /4096
AdaptRndCrWFactorPNRef   = 4    # Chroma Adaptive Rounding Weight for P/SP slices in non reference pictures /4096

########################################################################################
#Fast Motion Estimation Control Parameters
########################################################################################

SearchMode               = 0    # Motion estimation mode
                                # -1 = Full Search
                                #  0 = Fast Full Search (default)
                                #  1 = UMHexagon Search
                                #  2 = Simplified UMHexagon Search
                                #  3 = Enhanced Predictive Zonal Search (EPZS)
                                
UMHexDSR                 = 1    # Use Search Range Prediction. Only for UMHexagonS method
                                # (0:disable, 1:enabled/default)
UMHexScale               = 3    # Use Scale_factor for different image sizes. Only for UMHexagonS method
                                # (0:disable, 3:/default)
                                # Increasing value can speed up Motion Search.

EPZSPattern              = 2    # Select EPZS primary refinement pattern.
                                # (0: small diamond, 1: square, 2: extended diamond/default,
                                # 3: large diamond, 4: SBP Large Diamond,
                                # 5: PMVFAST )
EPZSDualRefinement       = 3    # Enables secondary refinement pattern.
                                # (0:disabled, 1: small diamond, 2: square,
                                # 3: extended diamond/default, 4: large diamond,
                                # 5: SBP Large Diamond, 6: PMVFAST )
EPZSFixedPredictors      = 2    # Enables Window based predictors
                                # (0:disabled, 1: P only, 2: P and B/default)
EPZSAggressiveWindow     = 0    # Use Aggressive Window pattern for EPZS (0: disabled, 1: enabled)
EPZSTemporal             = 1    # Enables temporal predictors
                                # (0: disabled, 1: enabled/default)
EPZSSpatialMem           = 1    # Enables spatial memory predictors
                                # (0: disabled, 1: enabled/default)
EPZSBlockType            = 1    # Enables block type Predictors
                                # (0: disabled, 1: enabled/default)
EPZSMinThresScale        = 0    # Scaler for EPZS minimum threshold (0 default).
                                # Increasing value can speed up encoding.
EPZSMedThresScale        = 1    # Scaler for EPZS median threshold (1 default).
                                # Increasing value can speed up encoding.
EPZSMaxThresScale        = 2    # Scaler for EPZS maximum threshold (1 default).
                                # Increasing value can speed up encoding.
EPZSSubPelME             = 1    # EPZS Subpel ME consideration
EPZSSubPelMEBiPred       = 1    # EPZS Subpel ME consideration for BiPred partitions
EPZSSubPelThresScale     = 2    # EPZS Subpel ME Threshold scaler
EPZSSubPelGrid           = 1    # Perform EPZS using a subpixel grid

########################################################################################
# SEI Parameters
########################################################################################

GenerateSEIMessage        = 0                    # Generate an SEI Text Message
SEIMessageText            = "H.264/AVC Encoder"  # Text SEI Message

UseMVLimits               = 0                    # Use MV Limits
SetMVXLimit               = 512                  # Horizontal MV Limit (in integer units)
SetMVYLimit               = 512                  # Vertical MV Limit (in integer units)

########################################################################################
# VUI Parameters
########################################################################################
# the variables below do not affect encoding and decoding
# (many are dummy variables but others can be useful when supported by the decoder)

EnableVUISupport                                = 0      # Enable VUI Parameters

)jm19cfg";

TEST(Config, Jm19StockEncoderBaselineCfgParsesWithOnlyWarnings) {
  ASSERT_TRUE(contains(kJm19EncoderBaselineCfg, "InputFile             = \"in.yuv\""));
  std::vector<std::string> w;
  const EncoderParams p = text_params(kJm19EncoderBaselineCfg, &w);
  // No unknown keys: the one warning is the heuristics line. Of the stock file's heuristics only AdaptiveRounding = 1
  // is not reproduced (FastCrIntraDecision = 1 and SubMBCodingState = 1 are what gme264 does).
  ASSERT_EQ(w.size(), 1u) << (w.size() > 1 ? w[1] : "");
  EXPECT_TRUE(contains(w[0], "JM encoder heuristics not honoured")) << w[0];
  EXPECT_TRUE(contains(w[0], "AdaptiveRounding = 1 (t.cfg:299;")) << w[0];
  EXPECT_FALSE(contains(w[0], "FastCrIntraDecision")) << w[0];
  EXPECT_FALSE(contains(w[0], "SubMBCodingState")) << w[0];
  // The stock file's values that gme264 does honour reach the parameters.
  EXPECT_EQ(p.input_file, "in.yuv");
  EXPECT_EQ(p.source_width, 176);
  EXPECT_EQ(p.source_height, 144);
  EXPECT_EQ(p.frames_to_encode, 3);
  EXPECT_EQ(p.profile_idc, 66);
  EXPECT_EQ(p.level_idc, 40);
  EXPECT_EQ(p.qp_i, 28);
  EXPECT_EQ(p.qp_p, 28);
  EXPECT_EQ(p.num_ref_frames, 5);
  EXPECT_EQ(p.search_range, 32);
  EXPECT_EQ(p.search_mode, 0);
  EXPECT_EQ(p.rd_optimization, 1);
  EXPECT_TRUE(p.enable_ipcm);
  EXPECT_EQ(p.output_file, "test.264");
  EXPECT_EQ(p.recon_file, "test_rec.yuv");
}

TEST(Config, KeysWithoutEffectAreAcceptedSilently) {
  std::vector<std::string> w;
  const EncoderParams p = text_params(kIn +
                                          "QPBSlice = 30\nBSliceSearch8x8 = 0\nVUI_video_format = 5\n"
                                          "TraceFile = \"trace_enc.txt\"\nVerbose = 1\nEPZSPattern = 2\n"
                                          "RCMaxQPPSlice = 44\nDFDisableNRefPSlice = 1\nChromaMCBuffer = 1\n",
                                      &w);
  EXPECT_TRUE(w.empty()) << w[0];
  EXPECT_EQ(p.df_disable_idc[1], 0);  // the NRef key does not touch the reference-picture setting
}

TEST(Config, UnknownKeysGiveOneWarningNamingThemAll) {
  std::vector<std::string> w;
  const EncoderParams p = text_params(kIn + "FooBar = 1\nQPISlice = 30\nBazQux = \"x\"\n", &w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(contains(w[0], "FooBar (t.cfg:2)")) << w[0];
  EXPECT_TRUE(contains(w[0], "BazQux (t.cfg:4)")) << w[0];
  EXPECT_EQ(p.qp_i, 30);
  // Through the command line too.
  const CommandLine cl = parse({"-p", "InputFile=a.yuv", "-p", "NoSuchKey=3"});
  ASSERT_EQ(cl.warnings.size(), 1u);
  EXPECT_TRUE(contains(cl.warnings[0], "NoSuchKey")) << cl.warnings[0];
}

TEST(Config, NoMacroblockTypeLeftForPSlicesIsAnError) {
  const std::string all_off =
      "PSliceSkip = 0\nPSliceSearch16x16 = 0\nPSliceSearch16x8 = 0\nPSliceSearch8x16 = 0\nPSliceSearch8x8 = 0\n"
      "PSliceSearch8x4 = 0\nPSliceSearch4x8 = 0\nPSliceSearch4x4 = 0\n";
  const std::string m = text_error(kIn + all_off + "DisableIntraInInter = 1\n");
  EXPECT_TRUE(contains(m, "PSliceSkip")) << m;
  EXPECT_TRUE(contains(m, "PSliceSearch16x16")) << m;
  EXPECT_TRUE(contains(m, "DisableIntraInInter")) << m;
  // With intra allowed in P slices (or one inter mode on) it is a valid, if odd, configuration.
  EXPECT_NO_THROW(text_params(kIn + all_off));
  EXPECT_NO_THROW(text_params(kIn + all_off + "DisableIntraInInter = 1\nPSliceSearch8x4 = 1\n"));
  // JM 19.0: at least one intra mode.
  const std::string m2 = text_error(kIn + "DisableIntra4x4 = 1\nDisableIntra16x16 = 1\n");
  EXPECT_TRUE(contains(m2, "intra")) << m2;
  EXPECT_NO_THROW(text_params(kIn + "DisableIntra4x4 = 1\nDisableIntra16x16 = 1\nEnableIPCM = 1\n"));
}

TEST(Config, ChromaOffsetsBaselineHasOne) {
  std::string m = text_error(kIn + "CbQPOffset = 1\nCrQPOffset = 2\n");
  EXPECT_TRUE(contains(m, "CbQPOffset")) << m;
  EXPECT_TRUE(contains(m, "CrQPOffset")) << m;
  m = text_error(kIn + "CbQPOffset = 2\nCrQPOffset = 2\n");
  EXPECT_TRUE(contains(m, "ChromaQPOffset")) << m;
  const EncoderParams p = text_params(kIn + "ChromaQPOffset = 2\nCbQPOffset = 2\nCrQPOffset = 2\n");
  EXPECT_EQ(p.chroma_qp_offset, 2);
}

TEST(Config, Jm19MetricRuleForLowComplexityModeDecision) {
  std::string m = text_error(kIn + "MEDistortionQPel = 0\n");
  EXPECT_TRUE(contains(m, "MEDistortionQPel")) << m;
  EXPECT_TRUE(contains(m, "MDDistortion")) << m;
  EXPECT_NO_THROW(text_params(kIn + "MEDistortionQPel = 0\nRDOptimization = 1\n"));
  EXPECT_NO_THROW(text_params(kIn + "MEDistortionQPel = 0\nMDDistortion = 0\n"));
  m = text_error(kIn + "DisableSubpelME = 1\n");  // FPel SAD vs MD SATD
  EXPECT_TRUE(contains(m, "MEDistortionFPel")) << m;
}

TEST(Config, MissingInputFileAndOtherCrossChecks) {
  std::string m = text_error("QPISlice = 28\n");
  EXPECT_TRUE(contains(m, "InputFile")) << m;
  m = text_error(kIn + "OutputFile = \"\"\n");
  EXPECT_TRUE(contains(m, "OutputFile")) << m;
  m = text_error(kIn + "IDRPeriod = 10\n");
  EXPECT_TRUE(contains(m, "ResendSPS")) << m;
  EXPECT_NO_THROW(text_params(kIn + "IDRPeriod = 10\nResendSPS = 2\n"));
  m = text_error(kIn + "NumberReferenceFrames = 16\n");  // log2_max_frame_num_minus4 = 0 (JM rule)
  EXPECT_TRUE(contains(m, "Log2MaxFNumMinus4")) << m;
}

TEST(Config, AutomaticLog2SizesFollowJm) {
  EncoderParams p = text_params(kIn + "FramesToBeEncoded = 100\nLog2MaxFNumMinus4 = -1\nLog2MaxPOCLsbMinus4 = -1\n");
  EXPECT_EQ(p.log2_max_frame_num_minus4, 3);  // CeilLog2(100) - 4
  EXPECT_EQ(p.log2_max_poc_lsb_minus4, 4);    // CeilLog2(200) - 4
  p = text_params(kIn + "FramesToBeEncoded = 3\nLog2MaxFNumMinus4 = -1\nLog2MaxPOCLsbMinus4 = -1\n");
  EXPECT_EQ(p.log2_max_frame_num_minus4, 0);
  EXPECT_EQ(p.log2_max_poc_lsb_minus4, 0);
  // FramesToBeEncoded = -1 leaves them for the driver, which knows the input length.
  p = text_params(kIn + "FramesToBeEncoded = -1\nLog2MaxFNumMinus4 = -1\n");
  EXPECT_EQ(p.frames_to_encode, -1);
  EXPECT_EQ(p.log2_max_frame_num_minus4, -1);
  resolve_frame_count(p, 300);
  EXPECT_EQ(p.frames_to_encode, 300);
  EXPECT_EQ(p.log2_max_frame_num_minus4, 5);  // CeilLog2(300) = 9
}

TEST(Config, Y4mInputTakesSizeFromItsHeader) {
  // Odd or zero sizes in the configuration do not matter for .y4m input: the reader replaces them.
  EXPECT_NO_THROW(text_params("InputFile = clip.y4m\nSourceWidth = 0\nSourceHeight = 0\n"));
  EXPECT_NO_THROW(text_params("InputFile = clip.y4m\nSourceWidth = 175\n"));
}

TEST(Config, ProjectBaselineCfgHasThePaperSettings) {
  // Tests run from the repository root.
  std::vector<std::string> w;
  ConfigBuilder b;
  b.parse_file("cfg/encoder_baseline.cfg", "-d");
  const EncoderParams p = b.finish(&w);
  EXPECT_TRUE(w.empty()) << w[0];
  EXPECT_EQ(p.profile_idc, 66);
  EXPECT_EQ(p.num_ref_frames, 1);
  EXPECT_EQ(p.rd_optimization, 0);
  EXPECT_EQ(p.intra_period, 12);
  EXPECT_EQ(p.search_range, 32);
  EXPECT_EQ(p.qp_i, 28);
  EXPECT_EQ(p.qp_p, 28);
  EXPECT_EQ(p.source_width, 640);
  EXPECT_EQ(p.source_height, 480);
  EXPECT_EQ(p.input_file, "sequences/synthetic_640x480.yuv");
  EXPECT_EQ(p.gpu_integer_me, 0);
  // params.h: EncoderParams' own defaults are this file's values.
  const EncoderParams d;
  EXPECT_EQ(p.me_distortion_hpel, d.me_distortion_hpel);
  EXPECT_EQ(p.log2_max_poc_lsb_minus4, d.log2_max_poc_lsb_minus4);
  EXPECT_EQ(p.level_idc, d.level_idc);
  EXPECT_EQ(p.enable_ipcm, d.enable_ipcm);
  EXPECT_EQ(p.gpu_top_k, d.gpu_top_k);
}

}  // namespace
}  // namespace gme

namespace gme {
namespace {

// encoder/picture.h: the sub-pel table ranks a picture asks for stay within GPUSubpelRanks, GPUTopK and the
// page-locked memory budget (5376 bytes per reference, macroblock and rank).
TEST(SubpelTableRanks, CappedByKeysAndMemory) {
  const int vga = 40 * 30, hd = 120 * 68, uhd = 240 * 135;
  EXPECT_EQ(subpel_table_ranks(8, 8, vga, 1), 8);
  EXPECT_EQ(subpel_table_ranks(8, 4, vga, 1), 4);   // never more than GPUTopK
  EXPECT_EQ(subpel_table_ranks(2, 8, vga, 1), 2);   // nor more than asked
  EXPECT_EQ(subpel_table_ranks(8, 8, hd, 1), 8);    // 351 MB
  EXPECT_EQ(subpel_table_ranks(8, 8, hd, 2), 6);    // 88 MB per rank: 8 ranks would be 702 MB
  EXPECT_EQ(subpel_table_ranks(8, 8, uhd, 1), 3);   // 174 MB per rank
  EXPECT_EQ(subpel_table_ranks(8, 8, uhd, 5), 0);   // 871 MB for one rank: no tables
  for (int refs = 1; refs <= 16; ++refs)
    for (int mbs : {1, vga, hd, uhd}) {
      const int r = subpel_table_ranks(16, 16, mbs, refs);
      EXPECT_LE(static_cast<size_t>(r) * sizeof(SubpelTable) * mbs * refs, kSubpelTableBudget) << mbs << " " << refs;
      EXPECT_GE(r, 0);
    }
}

}  // namespace
}  // namespace gme
