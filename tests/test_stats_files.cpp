// lencod's statistics against what they describe: the per-picture bits of the JSON StatsFile against the stream
// itself (NAL sizes, and the syntax bits of every slice NAL unit read back from the bytes), and JM's text files
// (stats.dat, the log.dat row) in their layout. tests/test_jm_golden.cpp compares the text stats.dat with JM's own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/version.h"
#include "rd/rd_json.h"
#include "tests/conformance_util.h"

namespace gme::conf {
namespace {

// One Annex B stream cut into NAL units (start code removed), in order.
std::vector<std::vector<uint8_t>> nal_units(const std::vector<uint8_t>& s, std::vector<int>* start_code_bytes) {
  std::vector<std::vector<uint8_t>> out;
  size_t i = 0;
  std::vector<size_t> starts;
  while (i + 3 <= s.size()) {
    if (s[i] == 0 && s[i + 1] == 0 && s[i + 2] == 1) {
      starts.push_back(i + 3);
      start_code_bytes->push_back(i > 0 && s[i - 1] == 0 ? 4 : 3);
      i += 3;
    } else {
      ++i;
    }
  }
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t end = k + 1 < starts.size() ? starts[k + 1] - 3 : s.size();
    if (k + 1 < starts.size() && (*start_code_bytes)[k + 1] == 4) --end;  // the next unit's zero_byte
    out.emplace_back(s.begin() + static_cast<long>(starts[k]), s.begin() + static_cast<long>(end));
  }
  return out;
}

// Bits of slice_header() + slice_data() of a NAL unit: its RBSP (emulation prevention bytes removed) up to the
// rbsp_stop_one_bit, NAL header byte excluded.
int64_t syntax_bits(const std::vector<uint8_t>& nal) {
  std::vector<uint8_t> rbsp;
  int zeros = 0;
  for (size_t i = 1; i < nal.size(); ++i) {
    if (zeros == 2 && nal[i] == 3) {
      zeros = 0;
      continue;
    }
    rbsp.push_back(nal[i]);
    zeros = nal[i] == 0 ? zeros + 1 : 0;
  }
  while (!rbsp.empty() && rbsp.back() == 0) rbsp.pop_back();
  if (rbsp.empty()) return 0;
  int trailing = 1;  // the stop bit and the alignment zeros after it
  for (uint8_t b = rbsp.back(); !(b & 1); b >>= 1) ++trailing;
  return static_cast<int64_t>(rbsp.size()) * 8 - trailing;
}

struct LencodRun {
  std::vector<uint8_t> stream;
  std::string stats, log, console;
};

LencodRun encode(const std::string& stats_name, const std::vector<std::string>& params, TempDir& dir, int frames = 3,
                 const std::string& clip_spec = "synth:176x144") {
  const Clip clip = clip_from_spec(clip_spec, frames);
  LencodRun r;
  if (clip.file.empty()) return r;
  char cwd[4096];
  const std::string root = getcwd(cwd, sizeof cwd) ? cwd : ".";
  const std::string bin = bin_dir()[0] == '/' ? bin_dir() : root + "/" + bin_dir();
  const std::string in = clip.file[0] == '/' ? clip.file : root + "/" + clip.file;
  std::string cmd = "cd " + shell_quote(dir.path()) + " && " + shell_quote(bin + "/lencod") + " -d " +
                    shell_quote(root + "/cfg/encoder_baseline.cfg");
  for (const std::string& kv : std::vector<std::string>{"InputFile=" + in, "SourceWidth=176", "SourceHeight=144",
                                                        "FramesToBeEncoded=" + std::to_string(frames),
                                                        "OutputFile=s.264", "StatsFile=" + stats_name})
    cmd += " -p " + shell_quote(kv);
  for (const std::string& kv : params) cmd += " -p " + shell_quote(kv);
  const CommandResult res = run_command(cmd);
  EXPECT_EQ(res.status, 0) << cmd << "\n" << res.output;
  r.console = res.output;
  std::vector<uint8_t> b;
  read_file(dir.file("s.264"), &r.stream);
  if (read_file(dir.file(stats_name), &b)) r.stats.assign(b.begin(), b.end());
  if (read_file(dir.file("log.dat"), &b)) r.log.assign(b.begin(), b.end());
  return r;
}

// Per picture of a stream (in order): parameter-set bits, slice NAL bits, syntax bits of its slices.
struct PictureBits {
  std::vector<int64_t> ps_bits, pic_bits, pic_syntax;
};
PictureBits picture_bits(const std::vector<uint8_t>& stream) {
  std::vector<int> sc;
  const std::vector<std::vector<uint8_t>> nals = nal_units(stream, &sc);
  PictureBits out;
  std::vector<int64_t>&ps_bits = out.ps_bits, &pic_bits = out.pic_bits, &pic_syntax = out.pic_syntax;
  for (size_t k = 0; k < nals.size(); ++k) {
    const int type = nals[k][0] & 0x1F;
    const int64_t bits = static_cast<int64_t>(nals[k].size() + sc[k]) * 8;
    if (type == 7 || type == 8) {
      if (type == 7) ps_bits.push_back(0);
      ps_bits.back() += bits;
      continue;
    }
    const bool first_slice = (nals[k][1] & 0x80) != 0;  // first_mb_in_slice = 0 is ue '1'
    if (first_slice) {
      pic_bits.push_back(0);
      pic_syntax.push_back(0);
      if (ps_bits.size() < pic_bits.size()) ps_bits.push_back(0);
    }
    pic_bits.back() += bits;
    pic_syntax.back() += syntax_bits(nals[k]);
  }
  return out;
}

// The sum of a bit_use object's categories.
double bit_use_sum(const JsonValue& b) {
  double sum = 0;
  for (const char* k : {"header", "mode", "motion", "cbp", "dquant", "coeff_y", "coeff_c"}) sum += b.number_or(k, -1e9);
  return sum;
}

TEST(StatsFile, JsonBitsAddUpToTheStream) {
  TempDir dir("stats_json");
  // P pictures with skipped macroblocks, several slices (each with its own mb_skip_run at the end), an I picture.
  const LencodRun r = encode("stats.jsonl", {"SliceMode=1", "SliceArgument=20", "IntraPeriod=3", "QPISlice=30",
                                       "QPPSlice=32", "NumberReferenceFrames=2"},
                       dir, 4);
  ASSERT_FALSE(r.stream.empty());
  const PictureBits pb = picture_bits(r.stream);
  const std::vector<int64_t>&ps_bits = pb.ps_bits, &pic_bits = pb.pic_bits, &pic_syntax = pb.pic_syntax;
  std::istringstream lines(r.stats);
  std::string line;
  size_t n = 0;
  while (std::getline(lines, line)) {
    JsonValue v;
    std::string err;
    ASSERT_TRUE(parse_json(line, &v, &err)) << err;
    if (v.find("summary")) continue;
    ASSERT_LT(n, pic_bits.size());
    EXPECT_EQ(v.number_or("bits", -1), pic_bits[n]) << "picture " << n;
    EXPECT_EQ(v.number_or("param_set_bits", -1), ps_bits[n]) << "picture " << n;
    const JsonValue* b = v.find("bit_use");
    ASSERT_TRUE(b) << line;
    EXPECT_EQ(bit_use_sum(*b), pic_syntax[n]) << "picture " << n << ": " << line;
    double by_type = 0;
    for (const JsonValue& t : b->find("motion_by_type")->array) by_type += t.number;
    EXPECT_EQ(by_type, b->number_or("motion", -1)) << line;
    if (v.string_or("type", "") == "P") EXPECT_GT(b->number_or("motion", 0), 0) << line;
    else EXPECT_EQ(b->number_or("motion", -1), 0) << line;
    ++n;
  }
  EXPECT_EQ(n, pic_bits.size());
}

// The value of `key` in a JSON line as text ("" when absent): objects and arrays compared as written.
std::string json_member_text(const std::string& line, const std::string& key) {
  const std::string tag = "\"" + key + "\":";
  const size_t at = line.find(tag);
  if (at == std::string::npos) return "";
  const size_t start = at + tag.size();
  int depth = 0;
  size_t i = start;
  for (; i < line.size(); ++i) {
    const char ch = line[i];
    if (ch == '{' || ch == '[') {
      ++depth;
    } else if (ch == '}' || ch == ']') {
      if (depth == 0) break;  // the end of the enclosing object
      if (--depth == 0) return line.substr(start, i + 1 - start);
    } else if (ch == ',' && depth == 0) {
      break;
    }
  }
  return line.substr(start, i - start);
}

// The bits by syntax element (JM's stats.dat categories, MV bits per macroblock type) are counted per macroblock by
// the workers and added up in coding order: the same at 1 and 4 threads, picture by picture and in the summary, in
// the cases that need care - SliceMode 2 (a slice that ends on a macroblock that did not fit leaves its closing
// mb_skip_run out), I_PCM (its alignment bits are the slice's), skip runs across rows (RDOptimization 1). lencod runs
// the wavefront at both counts, so where every bit is in a category (not SliceMode 2) the categories must also add up
// to the stream's syntax bits; tests/test_threads.cpp compares each category with the in-order loop's.
TEST(StatsFile, BitUseIsTheSameAtEveryThreadCount) {
  struct Case {
    const char* clip;
    std::vector<std::string> params;
  };
  const Case cases[] = {
      {"synth:176x144", {"SliceMode=2", "SliceArgument=90", "RDOptimization=1", "QPISlice=36", "QPPSlice=36"}},
      {"synth:176x144:noise", {"EnableIPCM=1", "RDOptimization=1", "QPISlice=2", "QPPSlice=2", "SliceMode=1",
                               "SliceArgument=7"}},
      {"synth:176x144:noise", {"EnableIPCM=1", "RDOptimization=1", "QPISlice=2", "QPPSlice=2", "SliceMode=2",
                               "SliceArgument=900"}},
      {"synth:176x144", {"IntraPeriod=3", "NumberReferenceFrames=2", "GPUIntegerME=1"}},
  };
  for (const Case& c : cases) {
    std::string what = c.clip;
    for (const std::string& kv : c.params) what += " " + kv;
    std::vector<std::string> lines[2];
    for (int k = 0; k < 2; ++k) {
      TempDir dir("stats_threads");
      std::vector<std::string> params = c.params;
      params.push_back(k == 0 ? "Threads=1" : "Threads=4");
      const LencodRun r = encode("stats.jsonl", params, dir, 4, c.clip);
      ASSERT_FALSE(r.stream.empty()) << what;
      std::istringstream in(r.stats);
      for (std::string line; std::getline(in, line);) lines[k].push_back(line);
      ASSERT_FALSE(lines[k].empty()) << what;
      const std::string order = json_member_text(lines[k].back(), "macroblock_order");
      EXPECT_EQ(order.rfind("\"wavefront", 0), 0u) << what << ": " << order;
      bool byte_slices = false;
      for (const std::string& kv : c.params) byte_slices |= kv == "SliceMode=2";
      if (byte_slices) continue;
      const PictureBits pb = picture_bits(r.stream);
      ASSERT_EQ(pb.pic_syntax.size() + 1, lines[k].size()) << what;
      for (size_t n = 0; n < pb.pic_syntax.size(); ++n) {
        JsonValue v;
        std::string err;
        ASSERT_TRUE(parse_json(lines[k][n], &v, &err)) << err;
        const JsonValue* b = v.find("bit_use");
        ASSERT_TRUE(b) << lines[k][n];
        EXPECT_EQ(bit_use_sum(*b), pb.pic_syntax[n]) << what << " at " << params.back() << ": picture " << n;
      }
    }
    ASSERT_EQ(lines[0].size(), lines[1].size()) << what;
    for (size_t n = 0; n < lines[0].size(); ++n) {
      for (const char* key : {"bit_use", "bits", "param_set_bits", "mb_counts", "total_bits", "bits_i", "bits_p"}) {
        EXPECT_EQ(json_member_text(lines[0][n], key), json_member_text(lines[1][n], key))
            << what << ": line " << n << " key " << key;
      }
    }
    EXPECT_NE(json_member_text(lines[0][0], "bit_use"), "") << what << ": no bit_use\n" << lines[0][0];
    EXPECT_NE(json_member_text(lines[0].back(), "bit_use"), "") << what << ": no bit_use in the summary";
  }
}

TEST(StatsFile, DatNameGivesJmTextAndALogDatRowPerRun) {
  TempDir dir("stats_dat");
  const LencodRun first = encode("stats.dat", {"QPISlice=30", "QPPSlice=30"}, dir);
  EXPECT_EQ(first.stats.rfind(" -------------------------------------------------------------- \n"
                              "  This file contains statistics for the last encoded sequence   \n", 0),
            0u)
      << first.stats;
  EXPECT_NE(first.stats.find(" No.of coded pictures         :    3\n"), std::string::npos) << first.stats;
  EXPECT_NE(first.stats.find(" Mode  1  (16x16)     |"), std::string::npos) << first.stats;
  EXPECT_NE(first.stats.find(" average bits/frame   |"), std::string::npos) << first.stats;
  EXPECT_EQ(first.stats.find('{'), std::string::npos) << "JSON in a .dat StatsFile";
  const LencodRun second = encode("stats.dat", {"QPISlice=34", "QPPSlice=34"}, dir);
  std::istringstream in(second.log);
  std::string line;
  std::vector<std::string> header, rows;
  while (std::getline(in, line)) {
    if (line.find("|     ver     |") == 0) header.push_back(line);
    else if (line.rfind("|", 0) == 0 && line.find("Encoder statistics") == std::string::npos) rows.push_back(line);
  }
  ASSERT_EQ(header.size(), 1u) << second.log;
  ASSERT_EQ(rows.size(), 2u) << second.log;
  auto cells = [](const std::string& s) {
    std::vector<std::string> c;
    std::stringstream ss(s);
    for (std::string f; std::getline(ss, f, '|');) c.push_back(f);
    return c;
  };
  const std::vector<std::string> h = cells(header[0]);
  for (const std::string& row : rows) {
    const std::vector<std::string> c = cells(row);
    ASSERT_EQ(c.size(), h.size()) << row;
    EXPECT_EQ(c[1], std::string(version_release()) + "/gme264") << row;
  }
  EXPECT_EQ(cells(rows[0])[7].find("30"), 1u) << rows[0];  // QPI column
  EXPECT_EQ(cells(rows[1])[7].find("34"), 1u) << rows[1];
  // The console's JM lines: parameter sets apart (NVB) and the Ref column.
  EXPECT_NE(second.console.find("Frm/Fld Ref  \n"), std::string::npos) << second.console;
  EXPECT_NE(second.console.find("00000(NVB)"), std::string::npos) << second.console;
}

}  // namespace
}  // namespace gme::conf
