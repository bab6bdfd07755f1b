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
using conf::write_text;

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

// A UTF-8 byte order mark (Windows editors write one) is no part of the first key.
TEST(Config, ByteOrderMarkIsSkipped) {
  std::vector<std::string> w;
  const EncoderParams p = text_params("\xEF\xBB\xBFQPISlice = 31\n" + kIn, &w);
  EXPECT_TRUE(w.empty()) << w[0];
  EXPECT_EQ(p.qp_i, 31);
}

// JM's Log2MaxPOCLsbMinus4 rule with a FrameSkip whose 4 x FrameSkip leaves the int range must not overflow.
TEST(Config, HugeFrameSkipMeetsThePocRuleWithoutOverflow) {
  const std::string m = text_error(kIn + "FrameSkip = 600000000\nLog2MaxPOCLsbMinus4 = 12\n");
  EXPECT_TRUE(contains(m, "Log2MaxPOCLsbMinus4 = 12 (t.cfg:3): too small for FrameSkip = 600000000")) << m;
  EXPECT_TRUE(contains(text_error(kIn + "FrameSkip = 2000000000\n"), "FrameSkip = 2000000000"));
  EXPECT_TRUE(contains(text_error(kIn + "QPISlice = 99999999999\n"), "QPISlice = 99999999999 (t.cfg:2)"));
}

// Every bad value of a configuration in one run, one line each, in the order met: no fix-one-rerun cycle.
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

// "-p StatsFile=" switches the file off (JM users' habit); a value may still follow as the next word.
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

// One parameter validation: the key table's ranges (help text, doc/CONFIG.md) are the encoder's
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

// The lines of the ConfigError a text configuration must give (InputFile is set by -p, so that only the text's
// own problems are reported).
std::vector<std::string> text_error_lines(const std::string& text, const std::string& origin) {
  try {
    ConfigBuilder b;
    b.parse_text(text, origin);
    b.parse_assignment("InputFile=in.yuv");
    b.finish(nullptr);
  } catch (const ConfigError& e) {
    return e.lines();
  }
  ADD_FAILURE() << "no ConfigError for " << origin;
  return {};
}

// A video or another binary file named as a configuration gives a short line, not its bytes on the terminal.
TEST(Config, BinaryFileIsOneShortError) {
  std::string video(100000, '\x10');
  video[70000] = '\0';
  video[100] = '\n';
  std::vector<std::string> l = text_error_lines(video, "clip.yuv");
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0],
            "clip.yuv:2: not a text configuration file (NUL byte at offset 70000): expected lines of Key = Value");
  // No NUL byte and no newline: one malformed line, quoted shortened and with its control bytes escaped.
  l = text_error_lines("\n" + std::string(100000, '\x01'), "junk.bin");
  ASSERT_EQ(l.size(), 1u);
  EXPECT_TRUE(contains(l[0], "junk.bin:2: malformed line '\\x01\\x01")) << l[0];
  EXPECT_TRUE(contains(l[0], "... (100000 bytes)': expected Key = Value")) << l[0];
  EXPECT_LT(l[0].size(), 400u);
  EXPECT_EQ(l[0].find('\x01'), std::string::npos);
  // A file of many bad lines: five are shown, the others counted.
  std::string many = kIn;
  for (int i = 0; i < 50; ++i) many += "not a setting\n";
  l = text_error_lines(many, "notes.txt");
  ASSERT_EQ(l.size(), 6u);
  EXPECT_TRUE(contains(l[4], "notes.txt:6: malformed line 'not a setting'")) << l[4];
  EXPECT_EQ(l[5], "notes.txt: 45 more malformed lines (is it a configuration file?)");
  // UTF-8 text is quoted as it is.
  l = text_error_lines(kIn + "Clé 28\n", "t.cfg");
  ASSERT_EQ(l.size(), 1u);
  EXPECT_TRUE(contains(l[0], "'Clé 28'")) << l[0];
}

// JM's parser refuses a value that is not a number for its numeric keys, the ignored ones included; its text keys
// (file names, the hierarchy format) take text.
TEST(Config, IgnoredKeysAreTypeCheckedLikeJm) {
  EXPECT_TRUE(contains(text_error(kIn + "QPBSlice = abc\n"), "QPBSlice = 'abc' (t.cfg:2): expected a number"));
  EXPECT_TRUE(contains(parse_error({"-p", "InputFile=a.yuv", "-p", "Verbose=banana"}),
                       "Verbose = 'banana' (-p 'Verbose=banana'): expected a number"));
  EXPECT_TRUE(contains(text_error(kIn + "VUI_aspect_ratio_idc = square\n"),
                       "VUI_aspect_ratio_idc = 'square' (t.cfg:2): expected a number"));
  EXPECT_TRUE(contains(text_error(kIn + "rcmaxqppslice = x\n"), "RCMaxQPPSlice = 'x' (t.cfg:2)"));
  std::vector<std::string> w;
  EXPECT_NO_THROW(text_params(kIn + "TraceFile = \"trace_enc.txt\"\nExplicitHierarchyFormat = b1r0b3r0b2e2b0e2b4r2\n"
                                    "QmatrixFile = q_matrix.cfg\nLambdaWeightPSlice = 0.68\nQPBSlice = 30\n",
                              &w));
  EXPECT_TRUE(w.empty()) << w[0];
}

// A key set twice in one file, or twice among the -p settings, is named with both places and the value kept.
// Across files and -p it is precedence and stays silent.
TEST(Config, KeySetTwiceInOneSourceWarns) {
  std::vector<std::string> w;
  EncoderParams p = text_params(kIn + "QPISlice = 30\n# later\nQPISlice = 40\n", &w);
  EXPECT_EQ(p.qp_i, 40);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "QPISlice is set 2 times in t.cfg (line 2: 30, line 4: 40): the last, 40, replaces the others");
  w.clear();
  p = text_params(kIn + "Verbose = 1\nverbose = 2\nSearchRange = 8\nsearchrange = 16\nSEARCHRANGE = 24\n", &w);
  EXPECT_EQ(p.search_range, 24);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(contains(w[0], "Verbose is set 2 times in t.cfg (line 2: 1, line 3: 2)")) << w[0];
  EXPECT_TRUE(contains(w[1], "SearchRange is set 3 times in t.cfg (line 4: 8, line 5: 16, line 6: 24)")) << w[1];

  CommandLine cl = parse({"-p", "InputFile=a.yuv", "QPISlice=30", "-p", "QPPSlice=31", "QPISlice=40"});
  EXPECT_EQ(cl.params.qp_i, 40);
  ASSERT_EQ(cl.warnings.size(), 1u);
  EXPECT_EQ(cl.warnings[0], "QPISlice is set 2 times on the command line (-p 'QPISlice=30', -p 'QPISlice=40'): the "
                            "last, 40, replaces the others");

  TempDir d("dup_keys");
  write_text(d.file("a.cfg"), kIn + "QPISlice = 30\n");
  write_text(d.file("b.cfg"), "QPISlice = 35\n");
  cl = parse({"-d", d.file("a.cfg"), "-f", d.file("b.cfg"), "-f", d.file("a.cfg"), "-p", "QPISlice=40"});
  EXPECT_EQ(cl.params.qp_i, 40);
  EXPECT_TRUE(cl.warnings.empty()) << cl.warnings[0];
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
                                          "CtxAdptLagrangeMult = 1\nEarlySkipEnable = 1\nSelectiveIntraEnable = 1\n"
                                          "DisableThresholding = 1\nI16RDOpt = 1\nUseRDOQuant = 1\nWeightY = 2\n"
                                          "SearchMode = 3\nRDOptimization = 2\nQPISlice = 30\n",
                                      &w);
  ASSERT_EQ(w.size(), 1u);
  const char* keys[] = {"CtxAdptLagrangeMult = 1 (t.cfg:2", "EarlySkipEnable = 1 (t.cfg:3",
                        "SelectiveIntraEnable = 1 (t.cfg:4", "DisableThresholding = 1 (t.cfg:5", "I16RDOpt = 1 (t.cfg:6",
                        "UseRDOQuant = 1 (t.cfg:7", "WeightY = 2 (t.cfg:8", "SearchMode = 3 (t.cfg:9",
                        "RDOptimization = 2 (t.cfg:10"};
  for (const char* k : keys) EXPECT_TRUE(contains(w[0], k)) << k << " missing in: " << w[0];
  EXPECT_TRUE(contains(w[0], "fixed Lagrange multipliers")) << w[0];  // says what gme264 does instead
  EXPECT_FALSE(contains(w[0], "QPISlice")) << w[0];
  EXPECT_EQ(p.search_mode, 0);      // fast full search instead of EPZS
  EXPECT_EQ(p.rd_optimization, 1);  // high-complexity RDO instead of the fast variant
  EXPECT_EQ(p.qp_i, 30);
  // Honoured values give no warning; a heuristic value must still be a number.
  std::vector<std::string> none;
  text_params(kIn + "CtxAdptLagrangeMult = 0\nFastCrIntraDecision = 0\nSubMBCodingState = 2\nWeightY = 1.0\n"
                    "RestrictSearchRange = 2\n",
              &none);
  EXPECT_TRUE(none.empty()) << none[0];
  const std::string m = text_error(kIn + "CtxAdptLagrangeMult = yes\n");
  EXPECT_TRUE(contains(m, "CtxAdptLagrangeMult = 'yes' (t.cfg:2)")) << m;
  // Through the command line: the last value counts and the origin is the -p argument (the repeat has its own
  // warning line, first).
  const CommandLine cl = parse({"-p", "InputFile=a.yuv", "-p", "DisableThresholding=1", "-p", "DisableThresholding=2"});
  ASSERT_EQ(cl.warnings.size(), 2u);
  EXPECT_TRUE(contains(cl.warnings[0], "DisableThresholding is set 2 times on the command line")) << cl.warnings[0];
  EXPECT_TRUE(contains(cl.warnings[1], "DisableThresholding = 2 (-p 'DisableThresholding=2'")) << cl.warnings[1];
  EXPECT_FALSE(contains(cl.warnings[1], "DisableThresholding = 1")) << cl.warnings[1];
}

// cfg/jm19_stock_baseline.cfg holds JM 19.0's stock encoder_baseline.cfg settings: a JM user's file of that kind
// runs without a warning, every heuristic it sets is reproduced, and its values reach the parameters.
TEST(Config, Jm19StockSettingsParseWithoutWarnings) {
  std::vector<std::string> w;
  ConfigBuilder b;
  b.parse_file("cfg/jm19_stock_baseline.cfg", "-d");
  b.parse_assignment("InputFile=in.yuv");
  const EncoderParams p = b.finish(&w);
  EXPECT_TRUE(w.empty()) << w[0];
  EXPECT_TRUE(p.adaptive_rounding);
  EXPECT_EQ(p.adapt_rnd_period, 16);
  EXPECT_TRUE(p.adapt_rnd_chroma);
  EXPECT_TRUE(p.adapt_rounding_fixed);
  EXPECT_TRUE(p.fast_cr_intra_decision);
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
  EXPECT_EQ(p.stats_file, "stats.dat");
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
  // The suffix in capitals names a y4m file too (its header is read alike).
  EXPECT_NO_THROW(text_params("InputFile = CLIP.Y4M\nSourceWidth = 175\n"));
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
  EXPECT_FALSE(p.adaptive_rounding);
  EXPECT_TRUE(p.fast_cr_intra_decision);
  // Every supported key is stated in the file, so no built-in default can change its streams.
  std::ifstream f("cfg/encoder_baseline.cfg");
  std::stringstream text;
  text << f.rdbuf();
  for (const KeyDef& k : supported_keys()) {
    const std::string line_start = "\n" + std::string(k.name) + " ";
    EXPECT_TRUE(contains(text.str(), line_start)) << k.name << " is not set in cfg/encoder_baseline.cfg";
  }
}

}  // namespace
}  // namespace gme

namespace gme {
namespace {

// encoder/picture.h: the sub-pel table ranks a picture asks for stay within GPUSubpelRanks, GPUTopK and the
// page-locked memory budget (2176 bytes per reference, macroblock and rank).
TEST(SubpelTableRanks, CappedByKeysAndMemory) {
  const int vga = 40 * 30, hd = 120 * 68, uhd = 240 * 135;
  EXPECT_EQ(subpel_table_ranks(8, 8, vga, 1), 8);
  EXPECT_EQ(subpel_table_ranks(8, 4, vga, 1), 4);   // never more than GPUTopK
  EXPECT_EQ(subpel_table_ranks(2, 8, vga, 1), 2);   // nor more than asked
  EXPECT_EQ(subpel_table_ranks(8, 8, hd, 1), 8);    // 142 MB
  EXPECT_EQ(subpel_table_ranks(8, 8, hd, 2), 8);    // 284 MB
  EXPECT_EQ(subpel_table_ranks(16, 16, hd, 2), 15); // 35.5 MB per rank: 16 ranks would be 568 MB
  EXPECT_EQ(subpel_table_ranks(8, 8, hd, 4), 7);
  EXPECT_EQ(subpel_table_ranks(8, 8, uhd, 1), 7);   // 70.5 MB per rank
  EXPECT_EQ(subpel_table_ranks(8, 8, uhd, 8), 0);   // 564 MB for one rank: no tables
  for (int refs = 1; refs <= 16; ++refs)
    for (int mbs : {1, vga, hd, uhd}) {
      const int r = subpel_table_ranks(16, 16, mbs, refs);
      EXPECT_LE(static_cast<size_t>(r) * sizeof(SubpelTable) * mbs * refs, kSubpelTableBudget) << mbs << " " << refs;
      EXPECT_GE(r, 0);
    }
}

}  // namespace
}  // namespace gme
