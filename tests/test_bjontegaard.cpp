// Bjontegaard deltas (rd/bjontegaard.h) and the RD-point readers (rd/rd_input.h).
//
// Expected values of the reference cases come from an independent implementation (numpy.polyfit/polyint for
// VCEG-M33, scipy.interpolate.PchipInterpolator for PCHIP), produced by
//     pip install numpy scipy bjontegaard && python3 tests/bdrate_reference.py
// (numpy 2.4.6, scipy 1.17.1; the `bjontegaard` 2.x package, which its authors checked against the JCT-VC/JVET
// Excel sheets, agreed to 1e-10 on every case). The degenerate cases have closed-form answers.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rd/bjontegaard.h"
#include "rd/rd_input.h"
#include "rd/rd_json.h"
#include "tests/conformance_util.h"

namespace gme {
namespace {

// This process's scratch folder (removed at exit): fixed names under the shared temporary folder would collide
// with another test process running beside this one.
std::string scratch_dir() {
  static const conf::TempDir dir("bjontegaard");
  return dir.path() + "/";
}

struct RefCurves {
  const char* name;
  std::vector<double> ra, pa, rt, pt;
};

// Same data as CASES in tests/bdrate_reference.py.
const RefCurves kCurves[] = {
    {"x265_presets", {9487.76, 4593.60, 2486.44, 1358.24}, {40.037, 38.615, 36.845, 34.851},
     {9787.80, 4469.00, 2451.52, 1356.24}, {40.121, 38.651, 36.970, 34.987}},
    {"vga_qp_sweep", {2510.4, 1301.7, 690.2, 380.9}, {38.912, 36.104, 33.388, 30.871},
     {2580.1, 1342.5, 713.8, 394.0}, {38.875, 36.050, 33.321, 30.802}},
    {"six_vs_five", {120.0, 180.0, 260.0, 400.0, 610.0, 950.0}, {29.10, 30.65, 32.02, 33.71, 35.30, 36.95},
     {150.0, 230.0, 350.0, 540.0, 830.0}, {29.80, 31.30, 32.95, 34.62, 36.20}},
    {"partial_overlap", {100.0, 200.0, 400.0, 800.0}, {30.0, 33.2, 36.1, 38.7},
     {300.0, 600.0, 1200.0, 2400.0}, {34.6, 37.5, 40.1, 42.2}},
    {"unsorted_input", {686.76, 309.58, 157.11, 85.95}, {40.28, 37.18, 34.24, 31.42},
     {893.34, 407.8, 204.93, 112.75}, {40.39, 37.21, 34.17, 31.24}},
};

struct RefResult {
  const char* name;
  BdMethod method;
  double bd_rate, bd_psnr;
};

// Output of tests/bdrate_reference.py (see the header comment for the command).
const RefResult kExpected[] = {
    {"x265_presets", BdMethod::kPolynomial, -4.4204627062, 0.1204094191},
    {"x265_presets", BdMethod::kPchip, -4.4174853506, 0.1196927854},
    {"vga_qp_sweep", BdMethod::kPolynomial, 4.6359885596, -0.1941362423},
    {"vga_qp_sweep", BdMethod::kPchip, 4.6380642753, -0.1941826316},
    {"six_vs_five", BdMethod::kPolynomial, 6.3092949546, -0.2326350906},
    {"six_vs_five", BdMethod::kPchip, 6.3886673191, -0.2348789405},
    {"partial_overlap", BdMethod::kPolynomial, 5.7559310499, -0.2126818697},
    {"partial_overlap", BdMethod::kPchip, 5.3336788814, -0.2066598756},
    {"unsorted_input", BdMethod::kPolynomial, 31.3973740549, -1.1848979218},
    {"unsorted_input", BdMethod::kPchip, 31.3798782024, -1.1834724046},
};

const RefCurves& curves(const std::string& name) {
  for (const auto& c : kCurves)
    if (name == c.name) return c;
  throw std::runtime_error("no curves " + name);
}

BdCurve anchor_of(const RefCurves& c) { return {"anchor", c.ra, c.pa}; }
BdCurve test_of(const RefCurves& c) { return {"test", c.rt, c.pt}; }

TEST(Bjontegaard, MatchesNumpyAndScipyReference) {
  for (const auto& e : kExpected) {
    SCOPED_TRACE(std::string(e.name) + " " + bd_method_name(e.method));
    const RefCurves c = curves(e.name);
    const BdResult r = bjontegaard(anchor_of(c), test_of(c), e.method);
    EXPECT_NEAR(r.bd_rate_percent, e.bd_rate, 1e-7);
    EXPECT_NEAR(r.bd_psnr_db, e.bd_psnr, 1e-8);
  }
}

TEST(Bjontegaard, SwappingAnchorAndTestInvertsTheDeltas) {
  // BD-PSNR is antisymmetric; BD-rate maps to 1/(1+r) - 1 because the log-rate difference changes sign.
  for (BdMethod m : {BdMethod::kPolynomial, BdMethod::kPchip}) {
    const RefCurves c = curves("vga_qp_sweep");
    const BdResult f = bjontegaard(anchor_of(c), test_of(c), m);
    const BdResult b = bjontegaard(test_of(c), anchor_of(c), m);
    EXPECT_NEAR(b.bd_psnr_db, -f.bd_psnr_db, 1e-12);
    EXPECT_NEAR(1 + b.bd_rate_percent / 100, 1 / (1 + f.bd_rate_percent / 100), 1e-12);
  }
}

TEST(Bjontegaard, OverlapIntervalIsTheCommonPart) {
  const RefCurves c = curves("partial_overlap");
  const BdResult r = bjontegaard(anchor_of(c), test_of(c), BdMethod::kPolynomial);
  EXPECT_NEAR(r.overlap_kbps_lo, 300.0, 1e-9);
  EXPECT_NEAR(r.overlap_kbps_hi, 800.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.overlap_psnr_lo, 34.6);
  EXPECT_DOUBLE_EQ(r.overlap_psnr_hi, 38.7);
}

TEST(Bjontegaard, IdenticalCurvesGiveZero) {
  for (const auto& c : kCurves) {
    for (BdMethod m : {BdMethod::kPolynomial, BdMethod::kPchip}) {
      const BdResult r = bjontegaard(anchor_of(c), {"test", c.ra, c.pa}, m);
      EXPECT_NEAR(r.bd_rate_percent, 0.0, 1e-10) << c.name;
      EXPECT_NEAR(r.bd_psnr_db, 0.0, 1e-12) << c.name;
    }
  }
}

TEST(Bjontegaard, PureRateScalingGivesKMinusOne) {
  // Test rates k * anchor rates at equal PSNR: log10 rates shift by log10 k, which both fits follow exactly.
  const RefCurves c = curves("six_vs_five");
  for (double k : {0.5, 0.9, 1.0, 1.03, 1.25, 2.0}) {
    BdCurve t{"test", c.ra, c.pa};
    for (double& r : t.kbps) r *= k;
    for (BdMethod m : {BdMethod::kPolynomial, BdMethod::kPchip}) {
      const BdResult r = bjontegaard(anchor_of(c), t, m);
      EXPECT_NEAR(r.bd_rate_percent, (k - 1) * 100, 1e-9) << "k=" << k;
    }
  }
}

TEST(Bjontegaard, PurePsnrShiftGivesD) {
  const RefCurves c = curves("x265_presets");
  for (double d : {-0.5, -0.105, 0.0, 0.25}) {
    BdCurve t{"test", c.ra, c.pa};
    for (double& p : t.psnr) p += d;
    for (BdMethod m : {BdMethod::kPolynomial, BdMethod::kPchip}) {
      const BdResult r = bjontegaard(anchor_of(c), t, m);
      EXPECT_NEAR(r.bd_psnr_db, d, 1e-10) << "d=" << d;
      // Better quality at equal rate means fewer bits at equal quality.
      if (d > 0) {
        EXPECT_LT(r.bd_rate_percent, 0);
      }
      if (d < 0) {
        EXPECT_GT(r.bd_rate_percent, 0);
      }
    }
  }
}

TEST(Bjontegaard, PchipSlopesMatchScipy) {
  // tests/bdrate_reference.py SLOPE_CASES (scipy PchipInterpolator(...).derivative() at the knots).
  const std::vector<double> x1 = {0.0, 1.0, 2.0, 3.0, 4.5}, y1 = {0.0, 0.1, 5.0, 5.1, 5.2};
  const std::vector<double> e1 = {0.0, 0.196, 0.196, 0.081081081081, 0.046666666667};
  const std::vector<double> x2 = {1.0, 1.5, 3.0, 3.2, 6.0}, y2 = {2.0, 2.8, 3.1, 4.9, 5.0};
  const std::vector<double> e2 = {1.95, 0.408510638298, 0.517474633596, 0.099729130756, 0.0};
  const auto d1 = pchip_slopes(x1, y1), d2 = pchip_slopes(x2, y2);
  for (size_t i = 0; i < e1.size(); i++) EXPECT_NEAR(d1[i], e1[i], 1e-11) << i;
  for (size_t i = 0; i < e2.size(); i++) EXPECT_NEAR(d2[i], e2[i], 1e-11) << i;
}

TEST(Bjontegaard, PolyfitMatchesNumpy) {
  const RefCurves c = curves("six_vs_five");
  std::vector<double> lx;
  for (double r : c.ra) lx.push_back(std::log10(r));
  const std::vector<double> p = polyfit3(lx, c.pa);
  // numpy.polyfit(log10(rate), psnr, 3), highest power first.
  const double np[4] = {-0.5693763641, 4.2219633091, -1.5827564377, 19.2608330909};
  for (int k = 0; k < 4; k++) EXPECT_NEAR(p[3 - k], np[k], 1e-8) << k;
}

TEST(Bjontegaard, IntegralsOfExactCubicsAreExact) {
  // Data on y = 2 - x + 0.5 x^2 + 0.25 x^3: the least-squares cubic is that polynomial.
  std::vector<double> x = {-1, 0, 0.5, 1.5, 2, 3}, y;
  for (double v : x) y.push_back(2 - v + 0.5 * v * v + 0.25 * v * v * v);
  auto prim = [](double v) { return 2 * v - v * v / 2 + v * v * v / 6 + v * v * v * v / 16; };
  EXPECT_NEAR(integrate_polyfit3(x, y, -0.5, 2.5), prim(2.5) - prim(-0.5), 1e-12);
  // PCHIP reproduces straight lines exactly.
  std::vector<double> ly;
  for (double v : x) ly.push_back(3 * v + 1);
  EXPECT_NEAR(integrate_pchip(x, ly, -0.25, 2.75), (1.5 * 2.75 * 2.75 + 2.75) - (1.5 * 0.0625 - 0.25), 1e-12);
}

std::string error_of(const BdCurve& a, const BdCurve& t) {
  try {
    bjontegaard(a, t, BdMethod::kPolynomial);
  } catch (const BdError& e) {
    return e.what();
  }
  return "";
}

TEST(BjontegaardErrors, TooFewPoints) {
  const std::string e = error_of({"anchor", {100, 200, 400}, {30, 33, 36}}, {"test", {100, 200, 400, 800}, {30, 33, 36, 39}});
  EXPECT_NE(e.find("anchor: 3 points, at least 4"), std::string::npos) << e;
}

TEST(BjontegaardErrors, NonMonotonicCurve) {
  const std::string e =
      error_of({"anchor", {100, 200, 400, 800}, {30, 33, 36, 39}}, {"test", {100, 200, 400, 800}, {30, 34, 33.5, 39}});
  EXPECT_NE(e.find("test: curve is not monotonic"), std::string::npos) << e;
  EXPECT_NE(e.find("34.000 dB at 200.000 kbit/s"), std::string::npos) << e;
  const std::string d =
      error_of({"anchor", {100, 200, 200, 800}, {30, 33, 34, 39}}, {"test", {100, 200, 400, 800}, {30, 33, 36, 39}});
  EXPECT_NE(d.find("same rate 200.000"), std::string::npos) << d;
}

TEST(BjontegaardErrors, PointsAreNamedByWhereTheyWereRead) {
  BdCurve t{"test", {100, 200, 400, 800}, {30, 34, 33.5, 39}, {"t.csv:2", "t.csv:3", "t.csv:4", "t.csv:5"}};
  const std::string e = error_of({"anchor", {100, 200, 400, 800}, {30, 33, 36, 39}}, t);
  EXPECT_NE(e.find("200.000 kbit/s, point 2 (t.csv:3), but 33.500 dB at 400.000 kbit/s, point 3 (t.csv:4)"),
            std::string::npos) << e;
  t.psnr = {30, 33, 36, 39};
  t.kbps = {100, 400, 400, 800};
  const std::string d = error_of({"anchor", {100, 200, 400, 800}, {30, 33, 36, 39}}, t);
  EXPECT_NE(d.find("test: point 2 (t.csv:3) and point 3 (t.csv:4) have the same rate 400.000"), std::string::npos) << d;
}

TEST(BjontegaardErrors, BadRate) {
  const std::string e =
      error_of({"anchor", {100, 0, 400, 800}, {30, 33, 36, 39}}, {"test", {100, 200, 400, 800}, {30, 33, 36, 39}});
  EXPECT_NE(e.find("anchor: point 2 has rate 0"), std::string::npos) << e;
}

TEST(BjontegaardErrors, NoOverlapSaysWhatOverlaps) {
  // Disjoint in both.
  std::string e =
      error_of({"anchor", {100, 200, 400, 800}, {30, 33, 36, 39}}, {"test", {1000, 2000, 4000, 8000}, {40, 41, 42, 43}});
  EXPECT_NE(e.find("do not overlap in rate (anchor 100.000-800.000 kbit/s, test 1000.000-8000.000 kbit/s) nor in PSNR"),
            std::string::npos) << e;
  // Disjoint rates, overlapping PSNR.
  e = error_of({"anchor", {100, 200, 400, 800}, {30, 33, 36, 39}}, {"test", {1000, 2000, 4000, 8000}, {35, 37, 39, 41}});
  EXPECT_NE(e.find("overlap only in PSNR, over 35.000-39.000 dB"), std::string::npos) << e;
  // Disjoint PSNR, overlapping rates.
  e = error_of({"anchor", {100, 200, 400, 800}, {30, 33, 36, 39}}, {"test", {400, 800, 1600, 3200}, {40, 41, 42, 43}});
  EXPECT_NE(e.find("overlap only in rate, over 400.000-800.000 kbit/s"), std::string::npos) << e;
}

TEST(Bjontegaard, CombinedPsnrIsEquation2) { EXPECT_DOUBLE_EQ(combined_psnr(36, 40, 42), (144.0 + 82.0) / 6.0); }

// ---- Readers ----

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = scratch_dir() + "bd_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(RdInput, CsvWithFiltersQuotesAndComments) {
  const std::string p = write_temp("results.csv",
                                   "# written by hand\n"
                                   "sequence,run,qp,kbps,psnr_y,psnr_u,psnr_v,integer_me_path\n"
                                   "foreman,unmodified,28,1000.5,38.1,41.0,42.0,cpu fast full search\n"
                                   "foreman,gpu,28,1010.5,38.0,41.0,42.0,\"cpu twin: no device, fallback\"\n"
                                   "akiyo,gpu,28,300,40,42,43,x\n");
  const auto all = read_rd_points(p);
  ASSERT_EQ(all.size(), 3u);
  const auto gpu = read_rd_points(p + "#run=gpu,sequence=foreman");
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_DOUBLE_EQ(gpu[0].kbps, 1010.5);
  EXPECT_EQ(gpu[0].qp, 28);
  EXPECT_EQ(gpu[0].integer_me_path, "cpu twin: no device, fallback");
  EXPECT_DOUBLE_EQ(gpu[0].psnr_yuv, combined_psnr(38.0, 41.0, 42.0));
  EXPECT_EQ(read_rd_points(p + "#integer_me_path~twin").size(), 1u);
  EXPECT_THROW(read_rd_points(p + "#run=none"), RdInputError);
  try {
    read_rd_points(p + "#colour=red");
    FAIL();
  } catch (const RdInputError& e) {
    EXPECT_NE(std::string(e.what()).find("filter column 'colour' not in the header"), std::string::npos) << e.what();
  }
}

TEST(RdInput, CsvErrorsNameFileAndLine) {
  const std::string p = write_temp("bad.csv", "kbps,psnr_y\n100,30\n200,abc\n");
  try {
    read_rd_points(p);
    FAIL();
  } catch (const RdInputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:3: column psnr_y is 'abc', expected a number"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_rd_points(write_temp("nohdr.csv", "rate,quality\n1,2\n")), RdInputError);
  EXPECT_THROW(read_rd_points(scratch_dir() + "bd_does_not_exist.csv"), RdInputError);
}

// The message read_rd_points throws for `spec`, "" when it reads the points.
std::string spec_error(const std::string& spec) {
  try {
    read_rd_points(spec);
  } catch (const RdInputError& e) {
    return e.what();
  }
  return "";
}

// nan and inf parse as doubles; taken as values they would read as "missing" and drop the whole component.
TEST(RdInput, NonFiniteAndOutOfDomainValuesAreErrors) {
  const std::string nan = write_temp("nan.csv", "kbps,psnr_y\n100,nan\n200,33\n400,36\n800,39\n");
  EXPECT_NE(spec_error(nan).find("bd_nan.csv:2: column psnr_y is 'nan', expected a number"), std::string::npos)
      << spec_error(nan);
  const std::string inf = write_temp("inf.csv", "kbps,psnr_y,psnr_u\n100,30,inf\n");
  EXPECT_NE(spec_error(inf).find("bd_inf.csv:2: column psnr_u is 'inf', expected a number"), std::string::npos)
      << spec_error(inf);
  const std::string rate = write_temp("rate.csv", "kbps,psnr_y\n100,30\n-5,33\n");
  EXPECT_NE(spec_error(rate).find("bd_rate.csv:3: rate -5 kbit/s, expected a positive number"), std::string::npos)
      << spec_error(rate);
  EXPECT_NE(spec_error(write_temp("zero.csv", "kbps,psnr_y\n0,30\n")).find("bd_zero.csv:2: rate 0 kbit/s"),
            std::string::npos);
  const std::string neg = write_temp("neg.csv", "kbps,psnr_y,psnr_v\n100,30,-2\n");
  EXPECT_NE(spec_error(neg).find("bd_neg.csv:2: psnr_v -2 dB, expected a PSNR of 0 dB or more"), std::string::npos)
      << spec_error(neg);
  const std::string js = write_temp("nan.jsonl", "{\"summary\":{\"kbps\":100,\"psnr_y\":30,\"psnr_u\":inf}}\n");
  EXPECT_NE(spec_error(js).find("bd_nan.jsonl:1: summary psnr_u is inf, expected a number"), std::string::npos)
      << spec_error(js);
  const std::string con = write_temp("nan.log", " Y { PSNR (dB), cSNR (dB), MSE }   : {  35.9,  35.9,  16.6 }\n"
                                                " U { PSNR (dB), cSNR (dB), MSE }   : {  nan,  nan,  0 }\n"
                                                " Bit rate (kbit/s)  @ 30.00 Hz     : 370.37\n");
  EXPECT_NE(spec_error(con).find("bd_nan.log:2: U PSNR is not a number"), std::string::npos) << spec_error(con);
  const std::string log = write_temp("nan_log.dat",
      "|     ver     | Date  | Time  | Sequence | #Img | QPI| QPP| SNRY N| SNRU N| #Bitr IPB|\n"
      "| 19.0/     | 22-No | 10:31 | a.yuv    |   10 | 28 | 28 | 38.500| nan |  1200000|\n");
  EXPECT_NE(spec_error(log).find("bd_nan_log.dat:2: log.dat column 'snru n' is 'nan', expected a number"),
            std::string::npos) << spec_error(log);
}

TEST(RdInput, ColumnGivenTwiceIsAnError) {
  const std::string same = write_temp("dup.csv", "kbps,psnr_y,psnr_y\n100,30,31\n");
  EXPECT_NE(spec_error(same).find("bd_dup.csv:1: column psnr_y is given twice (columns 2 and 3)"), std::string::npos)
      << spec_error(same);
  const std::string alias = write_temp("alias.csv", "# hand-made\nkbps,psnr,psnr_y\n100,30,31\n");
  EXPECT_NE(spec_error(alias).find("bd_alias.csv:2: columns psnr and psnr_y both give the same value"),
            std::string::npos) << spec_error(alias);
  EXPECT_NE(spec_error(write_temp("dupx.csv", "kbps,psnr_y,run,run\n100,30,a,b\n")).find("column run is given twice"),
            std::string::npos);
}

TEST(RdInput, ByteOrderMarkIsSkipped) {
  const auto pts = read_rd_points(write_temp("bom.csv", "\xEF\xBB\xBFkbps,psnr_y\n100,30\n"));
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_DOUBLE_EQ(pts[0].kbps, 100);
  const std::string l = write_temp("bom.lst", "\xEF\xBB\xBF" + scratch_dir() + "bd_bom.csv\n");
  EXPECT_EQ(read_rd_points("@" + l).size(), 1u);
}

TEST(RdInput, BadListEntryNamesTheListAndLine) {
  write_temp("good.csv", "kbps,psnr_y\n100,30\n");
  const std::string l = write_temp("bad.lst", "# curve\nbd_good.csv\nbd_absent.csv\n");
  const std::string e = spec_error("@" + l);
  EXPECT_NE(e.find("bd_absent.csv: cannot read the file"), std::string::npos) << e;
  EXPECT_NE(e.find("(listed at " + l + ":3)"), std::string::npos) << e;
}

TEST(RdInput, StatsFileSummaryIsTolerant) {
  const std::string p = write_temp("qp32.jsonl",
                                   "{\"frame\":0,\"type\":\"I\",\"qp\":32,\"bits\":40000,\"psnr_y\":36.1}\n"
                                   "{\"frame\":1,\"type\":\"P\",\"qp\":32,\"bits\":9000,\"new_key\":[1,2,{\"a\":null}]}\n"
                                   "\n"
                                   "{\"summary\":{\"frames\":2,\"kbps\":735.0,\"psnr_y\":36.0,\"psnr_u\":40.0,"
                                   "\"psnr_v\":41.0,\"psnr_yuv\":37.5,\"time_s\":1.5,\"time_me_s\":1.2,"
                                   "\"integer_me_path\":\"cpu twin: no CUDA device found\",\"future\":true}}\n");
  const auto pts = read_rd_points(p);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_DOUBLE_EQ(pts[0].kbps, 735.0);
  EXPECT_DOUBLE_EQ(pts[0].psnr_yuv, 37.5);  // the file's own value is kept
  EXPECT_DOUBLE_EQ(pts[0].time_me_s, 1.2);
  EXPECT_EQ(pts[0].qp, 32);
  EXPECT_EQ(pts[0].frames, 2);
  EXPECT_EQ(pts[0].integer_me_path, "cpu twin: no CUDA device found");
}

TEST(RdInput, IncompleteStatsFileIsReportedNotRead) {
  const std::string p = write_temp("cut.jsonl", "{\"frame\":0,\"type\":\"I\",\"qp\":28,\"bits\":4}\n{\"frame\":1,\"ty");
  RdPoint pt;
  std::string why;
  EXPECT_FALSE(read_stats_summary(p, &pt, &why));
  EXPECT_NE(why.find("cut.jsonl:2: not a JSON object"), std::string::npos) << why;
  const std::string q = write_temp("nosum.jsonl", "{\"frame\":0,\"type\":\"I\",\"qp\":28,\"bits\":4}\n");
  EXPECT_FALSE(read_stats_summary(q, &pt, &why));
  EXPECT_NE(why.find("no summary line"), std::string::npos) << why;
  EXPECT_THROW(read_rd_points(q), RdInputError);
}

TEST(RdInput, JmStatsDat) {
  // Lines as JM 19.0 report_stats() prints them (lencod/src/report.c).
  const std::string text =
      " -------------------------------------------------------------- \n"
      "  This file contains statistics for the last encoded sequence   \n"
      " -------------------------------------------------------------- \n"
      " Sequence                     : foreman_cif.yuv\n"
      " No.of coded pictures         :   10\n"
      " Total Bitrate(kb/s)          : 512.34\n"
      "\n ---------------------|----------------|---------------|"
      "\n     Item             |     Intra      |   All frames  |"
      "\n ---------------------|----------------|---------------|"
      "\n SNR Y(dB)            | 37.10          | 36.25         |"
      "\n SNR U/V (dB)         | 40.00/41.00    | 39.50/40.75   |"
      "\n ---------------------|----------------|---------------|\n"
      "\n SNR Y(dB)            |      37.100    |     36.150    |     0.000    |\n";
  ASSERT_EQ(detect_rd_format(text), RdFormat::kJmStats);
  const auto pts = parse_rd_text(text, RdFormat::kJmStats, "stats.dat", {});
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_DOUBLE_EQ(pts[0].kbps, 512.34);
  EXPECT_DOUBLE_EQ(pts[0].psnr_y, 36.25);
  EXPECT_DOUBLE_EQ(pts[0].psnr_u, 39.50);
  EXPECT_DOUBLE_EQ(pts[0].psnr_v, 40.75);
  EXPECT_EQ(pts[0].frames, 10);
}

TEST(RdInput, JmLogDatRowsAndFilters) {
  // Header and rows as JM 19.0 report_log() prints them (rows generated with its printf formats).
  const std::string text =
      " ---------------- \n"
      "|                          Encoder statistics. This file is generated during first encoding session, new "
      "sessions will be appended |\n"
      " ---------------- \n"
      "|     ver     | Date  | Time  |               Sequence                 | #Img |P/MbInt| QPI| QPP| QPB| "
      "Format  |Iperiod| #B | FMES | Hdmd | S.R |#Ref | Freq |Coding|RD-opt|Intra upd|8x8Tr| SNRY 1| SNRU 1| "
      "SNRV 1| SNRY N| SNRU N| SNRV N|#Bitr I|#Bitr P|#Bitr B|#Bitr IPB|     Total Time   |      Me Time     |\n"
      " ---------------- \n"
      "| 19.0/     | 22-No | 10:31 |               sequences/foreman_cif.yuv|   10 |  0/0  | 28 | 28 | 30 | "
      "352x288 |   12  |  0 |  FFS |  022 |  32 |  1  | 30.00| CAVLC|   0  |   OFF   |  0  | 39.500| 42.200| "
      "43.000| 38.500| 41.200| 42.000| 360000| 840000|      0|  1200000|           5300   |           4100   |\n"
      "| 19.0/     | 22-No | 10:31 |               sequences/foreman_cif.yuv|   10 |  0/0  | 32 | 32 | 34 | "
      "352x288 |   12  |  0 |  FFS |  022 |  32 |  1  | 30.00| CAVLC|   0  |   OFF   |  0  | 36.700| 40.900| "
      "41.800| 35.700| 39.900| 40.800| 192000| 448000|      0|   640000|           4800   |           3700   |\n";
  ASSERT_EQ(detect_rd_format(text), RdFormat::kJmLog);
  const auto pts = parse_rd_text(text, RdFormat::kJmLog, "log.dat", {});
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_DOUBLE_EQ(pts[0].kbps, 1200.0);
  EXPECT_DOUBLE_EQ(pts[0].psnr_y, 38.5);
  EXPECT_DOUBLE_EQ(pts[0].psnr_v, 42.0);
  EXPECT_DOUBLE_EQ(pts[0].time_s, 5.3);
  EXPECT_DOUBLE_EQ(pts[0].time_me_s, 4.1);
  EXPECT_EQ(pts[0].qp, 28);
  EXPECT_EQ(pts[1].qp, 32);
  const auto q32 = parse_rd_text(text, RdFormat::kJmLog, "log.dat", {{"QPP", "32", false}});
  ASSERT_EQ(q32.size(), 1u);
  EXPECT_DOUBLE_EQ(q32[0].kbps, 640.0);
}

TEST(RdInput, ConsoleLogGivesOnePointPerRun) {
  const std::string run =
      " Total encoding time for the seq.  :   2.500 sec (4.00 fps)\n"
      " Total ME time for sequence        :   1.750 sec \n\n"
      " Y { PSNR (dB), cSNR (dB), MSE }   : {  35.925,  35.916,  16.64337 }\n"
      " U { PSNR (dB), cSNR (dB), MSE }   : {  39.500,  39.490,   7.30000 }\n"
      " V { PSNR (dB), cSNR (dB), MSE }   : {  40.100,  40.090,   6.40000 }\n"
      " Total bits                        : 123456 (I 50000, P 73456, NVB 200) \n"
      " Bit rate (kbit/s)  @ 30.00 Hz     : 370.37\n";
  const std::string text = run + run;
  ASSERT_EQ(detect_rd_format(text), RdFormat::kConsoleLog);
  const auto pts = parse_rd_text(text, RdFormat::kConsoleLog, "enc.log", {});
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_DOUBLE_EQ(pts[1].kbps, 370.37);
  EXPECT_DOUBLE_EQ(pts[1].psnr_y, 35.925);
  EXPECT_DOUBLE_EQ(pts[1].psnr_u, 39.5);
  EXPECT_DOUBLE_EQ(pts[1].time_s, 2.5);
  EXPECT_DOUBLE_EQ(pts[1].time_me_s, 1.75);
}

TEST(RdInput, ListFileCollectsStatsFiles) {
  std::string list;
  for (int qp : {28, 32, 36, 40}) {
    const std::string name = "list_qp" + std::to_string(qp) + ".jsonl";
    write_temp(name, "{\"summary\":{\"kbps\":" + std::to_string(4000 >> ((qp - 28) / 4)) +
                         ",\"psnr_y\":" + std::to_string(70 - qp) + "}}\n");
    list += "bd_" + name + "\n";
  }
  const std::string l = write_temp("curve.lst", "# one StatsFile per QP\n" + list);
  const auto pts = read_rd_points("@" + l);
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_DOUBLE_EQ(pts[3].kbps, 500);
  EXPECT_DOUBLE_EQ(pts[3].psnr_y, 30);
  EXPECT_TRUE(std::isnan(pts[3].psnr_yuv));  // no chroma, so no combined PSNR
}

// ---- Doubtful results: warnings, never a silent number: a degenerate fit gives a plausible-looking delta ----

// Strictly monotonic, but two test points only 0.004 dB apart: the cubic through them swings far outside the data.
const BdCurve kFlatAnchor{"anchor Y", {180.0, 240.0, 330.0, 470.0}, {38.20, 40.30, 42.10, 44.00}};
const BdCurve kFlatTest{"test Y", {150.40, 200.65, 274.79, 402.10}, {38.52, 41.1687, 41.1731, 43.95}};

bool any_contains(const std::vector<std::string>& v, const std::string& what) {
  for (const auto& s : v)
    if (s.find(what) != std::string::npos) return true;
  return false;
}

TEST(BjontegaardWarnings, NonMonotonicFitAndImplausibleResultAreNamed) {
  const BdResult r = bjontegaard(kFlatAnchor, kFlatTest, BdMethod::kPolynomial);
  EXPECT_TRUE(any_contains(r.warnings, "test Y: the cubic fit of log-rate over PSNR is not monotonic over the "
                                       "BD-rate interval 38.520-43.950 dB"))
      << ::testing::PrintToString(r.warnings);
  EXPECT_TRUE(any_contains(r.warnings, "is implausible")) << ::testing::PrintToString(r.warnings);
  EXPECT_TRUE(any_contains(r.warnings, "--pchip")) << ::testing::PrintToString(r.warnings);
  // The anchor's fit is fine and is not blamed.
  EXPECT_FALSE(any_contains(r.warnings, "anchor Y: the cubic fit")) << ::testing::PrintToString(r.warnings);
  // PCHIP follows the data monotonically: no fit warning, and a result inside the data's range.
  const BdResult p = bjontegaard(kFlatAnchor, kFlatTest, BdMethod::kPchip);
  EXPECT_FALSE(any_contains(p.warnings, "not monotonic")) << ::testing::PrintToString(p.warnings);
  EXPECT_FALSE(any_contains(p.warnings, "implausible")) << ::testing::PrintToString(p.warnings);
}

TEST(BjontegaardWarnings, WellBehavedCurvesHaveNone) {
  for (const char* name : {"x265_presets", "vga_qp_sweep", "six_vs_five", "unsorted_input"})
    for (BdMethod m : {BdMethod::kPolynomial, BdMethod::kPchip}) {
      const BdResult r = bjontegaard(anchor_of(curves(name)), test_of(curves(name)), m);
      EXPECT_TRUE(r.warnings.empty()) << name << ": " << ::testing::PrintToString(r.warnings);
    }
}

TEST(BjontegaardWarnings, SmallOverlapWarnsWithTheShares) {
  const BdResult r = bjontegaard(anchor_of(curves("partial_overlap")), test_of(curves("partial_overlap")),
                                 BdMethod::kPchip);
  // PSNR overlap 34.6-38.7 dB: 4.1 of the anchor's 8.7 dB (47 %) and of the test's 7.6 dB (54 %).
  EXPECT_TRUE(any_contains(r.warnings, "BD-rate: the curves overlap in PSNR over 47 % of the anchor's range and "
                                       "54 % of the test's (below 75 %)"))
      << ::testing::PrintToString(r.warnings);
  EXPECT_TRUE(any_contains(r.warnings, "BD-PSNR: the curves overlap in log-rate over 47 %"))
      << ::testing::PrintToString(r.warnings);
}

TEST(BjontegaardWarnings, DecreasingPartOfAFitIsLocated) {
  // y = x^3 - 3x falls on [-1, 1] exactly; four points determine it, so the fit is the cubic itself.
  const std::vector<double> x = {-2, -0.5, 0.5, 2}, y = {-2, 1.375, -1.375, 2};
  double from = 0, to = 0;
  ASSERT_TRUE(polyfit3_decreases(x, y, -2, 2, &from, &to));
  EXPECT_NEAR(from, -1, 1e-9);
  EXPECT_NEAR(to, 1, 1e-9);
  EXPECT_FALSE(polyfit3_decreases(x, y, 1.2, 2, &from, &to));  // rises there
  // x^3 rises strictly although its slope touches zero at 0.
  EXPECT_FALSE(polyfit3_decreases({-2, -1, 1, 2}, {-8, -1, 1, 8}, -2, 2, &from, &to));
}

// ---- Readers: numbers that do not fit an int are errors; converting them to int would be undefined ----

std::string reader_error(const std::string& name, const std::string& text) {
  try {
    read_rd_points(write_temp(name, text));
  } catch (const RdInputError& e) {
    return e.what();
  }
  return "";
}

TEST(RdInput, HugeOrInfiniteCountsAreErrors) {
  EXPECT_NE(reader_error("qpinf.csv", "kbps,psnr_y,qp\n100,30,inf\n").find(
                "qpinf.csv:2: column qp is 'inf', expected a number"),
            std::string::npos);
  EXPECT_NE(reader_error("qpbig.csv", "kbps,psnr_y,qp\n100,30,52\n").find(
                "qpbig.csv:2: column qp: 52 is not a QP, expected an integer in 0..51"),
            std::string::npos);
  EXPECT_NE(reader_error("fr.csv", "kbps,psnr_y,frames\n100,30,1e300\n").find(
                "fr.csv:2: column frames: 1e+300 is not a frame count"),
            std::string::npos);
  EXPECT_NE(reader_error("qpneg.csv", "kbps,psnr_y,qp\n100,30,-1e300\n").find("is not a QP"), std::string::npos);
  EXPECT_NE(reader_error("s.jsonl", "{\"summary\":{\"kbps\":1,\"psnr_y\":30,\"frames\":1e300}}\n")
                .find("s.jsonl:1: summary frames 1e+300 is not a frame count"),
            std::string::npos);
  EXPECT_NE(reader_error("q.jsonl", "{\"frame\":0,\"qp\":1e300}\n{\"summary\":{\"kbps\":1,\"psnr_y\":30}}\n")
                .find("q.jsonl:1: picture qp 1e+300 is not a QP"),
            std::string::npos);
  EXPECT_NE(reader_error("sq.jsonl", "{\"summary\":{\"kbps\":1,\"psnr_y\":30,\"qp\":-7}}\n").find("is not a QP"),
            std::string::npos);
  EXPECT_NE(reader_error("stats.dat", "  This file contains statistics for the last encoded sequence\n"
                                      " No.of coded pictures         : 1e300\n Total Bitrate(kb/s) : 5\n"
                                      " SNR Y(dB) | 1 | 30 |\n")
                .find("'No.of coded pictures' 1e+300 is not a frame count"),
            std::string::npos);
  const std::string log =
      "|     ver     | Date  | Time  | Sequence | #Img | QPI| QPP| SNRY N| #Bitr IPB|\n"
      "| 19.0/     | 22-No | 10:31 | a.yuv    |   10 | 28 | inf | 38.500|  1200000|\n";
  EXPECT_NE(reader_error("log.dat", log).find("log.dat:2: log.dat column 'qpp' is 'inf', expected a number"),
            std::string::npos) << reader_error("log.dat", log);
  const std::string log3 =
      "|     ver     | Date  | Time  | Sequence | #Img | QPI| QPP| SNRY N| #Bitr IPB|\n"
      "| 19.0/     | 22-No | 10:31 | a.yuv    |   10 | 28 | 2.5 | 38.500|  1200000|\n";
  EXPECT_NE(reader_error("log3.dat", log3).find("log3.dat:2: QPP 2.5 is not a QP"), std::string::npos)
      << reader_error("log3.dat", log3);
  const std::string log2 =
      "|     ver     | Date  | Time  | Sequence | #Img | QPI| QPP| SNRY N| #Bitr IPB|\n"
      "| 19.0/     | 22-No | 10:31 | a.yuv    | 1e300 | 28 | 28 | 38.500|  1200000|\n";
  EXPECT_NE(reader_error("log2.dat", log2).find("#Img 1e+300 is not a frame count"), std::string::npos);
  // In range they are read as before.
  EXPECT_EQ(read_rd_points(write_temp("ok.csv", "kbps,psnr_y,qp,frames\n100,30,51,300\n"))[0].qp, 51);
}

TEST(RdInput, UnreadableFileSaysWhy) {
  try {
    read_rd_points(scratch_dir() + "bd_does_not_exist.csv");
    FAIL();
  } catch (const RdInputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the file (No such file or directory)"), std::string::npos)
        << e.what();
  }
  try {
    read_rd_points(scratch_dir());
    FAIL();
  } catch (const RdInputError& e) {
    EXPECT_NE(std::string(e.what()).find("(Is a directory)"), std::string::npos) << e.what();
  }
  RdPoint pt;
  std::string why;
  EXPECT_FALSE(read_stats_summary(scratch_dir() + "bd_none.jsonl", &pt, &why));
  EXPECT_NE(why.find("(No such file or directory)"), std::string::npos) << why;
}

// ---- bin/bdrate as a process ----

struct BdrateRun {
  int status = -1;
  std::string out, err;
};

BdrateRun run_bdrate(const std::string& args) {
  const std::string dir = scratch_dir();
  const std::string cmd = conf::shell_quote(conf::bin_dir() + "/bdrate") + " " + args + " >" + dir + "bd_out 2>" +
                          dir + "bd_err";
  const int rc = std::system(cmd.c_str());
  BdrateRun r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::ifstream o(dir + "bd_out"), e(dir + "bd_err");
  std::getline(o, r.out, '\0');
  std::getline(e, r.err, '\0');
  return r;
}

std::string curve_csv(const std::string& name, const BdCurve& c) {
  std::string t = "kbps,psnr_y\n";
  for (size_t i = 0; i < c.kbps.size(); i++) t += std::to_string(c.kbps[i]) + "," + std::to_string(c.psnr[i]) + "\n";
  return write_temp(name, t);
}

bool have_bdrate() {
  struct stat st;
  return ::stat((conf::bin_dir() + "/bdrate").c_str(), &st) == 0;
}

TEST(BdrateCli, DegenerateFitWarnsAndFailsUnderStrict) {
  if (!have_bdrate()) GTEST_SKIP() << "bin/bdrate not built";
  const std::string a = curve_csv("flat_a.csv", kFlatAnchor), t = curve_csv("flat_t.csv", kFlatTest);
  const BdrateRun r = run_bdrate(a + " " + t);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("bdrate: warning: Y: test Y: the cubic fit of log-rate over PSNR is not monotonic"),
            std::string::npos) << r.err;
  EXPECT_NE(r.out.find("(doubtful: see the warnings)"), std::string::npos) << r.out;
  const BdrateRun s = run_bdrate("--strict " + a + " " + t);
  EXPECT_EQ(s.status, 1) << s.err;
  EXPECT_NE(s.err.find("bdrate: error: Y: test Y: the cubic fit"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("(--strict)"), std::string::npos) << s.err;
  // The same curves by PCHIP are fine, also under --strict.
  const BdrateRun p = run_bdrate("--pchip --strict " + a + " " + t);
  EXPECT_EQ(p.status, 0) << p.err;
  // CSV output carries the warning in its own column.
  const BdrateRun c = run_bdrate("--csv " + a + " " + t);
  EXPECT_NE(c.out.find(",warning,version\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("\"test Y: the cubic fit"), std::string::npos) << c.out;
}

const char* kAuditTestCsv = "kbps,psnr_y\n110,30.1\n210,33.1\n420,36.0\n830,39.1\n";

TEST(BdrateCli, NanCellIsAnErrorNotAMissingComponent) {
  if (!have_bdrate()) GTEST_SKIP() << "bin/bdrate not built";
  const std::string nan = write_temp("cli_nan.csv", "kbps,psnr_y\n100,nan\n200,33\n400,36\n800,39\n");
  const std::string t = write_temp("cli_t.csv", kAuditTestCsv);
  for (const char* opt : {"", "--strict ", "--csv "}) {
    const BdrateRun r = run_bdrate(opt + nan + " " + t);
    EXPECT_EQ(r.status, 1) << opt << r.out << r.err;
    EXPECT_NE(r.err.find("bd_cli_nan.csv:2: column psnr_y is 'nan', expected a number"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(BdrateCli, CurveErrorNamesFileAndLine) {
  if (!have_bdrate()) GTEST_SKIP() << "bin/bdrate not built";
  const std::string a = write_temp("cli_nm_a.csv", "kbps,psnr_y\n100,30\n200,33\n400,32.5\n800,39\n");
  const std::string t = write_temp("cli_nm_t.csv", kAuditTestCsv);
  const BdrateRun r = run_bdrate(a + " " + t);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("point 2 (" + a + ":3), but 32.500 dB at 400.000 kbit/s, point 3 (" + a + ":4)"),
            std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(BdrateCli, ComponentOfSomePointsOnlyIsNamed) {
  if (!have_bdrate()) GTEST_SKIP() << "bin/bdrate not built";
  const std::string a = write_temp("cli_pu_a.csv", "kbps,psnr_y,psnr_u\n100,30,40\n200,33,\n400,36,42\n800,39,43\n");
  const std::string t = write_temp("cli_pu_t.csv", "kbps,psnr_y,psnr_u\n110,30.1,40\n210,33.1,41\n420,36.0,42\n"
                                                   "830,39.1,43\n");
  const BdrateRun r = run_bdrate(a + " " + t);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("bdrate: warning: U: " + a + ":3 has no U value while other points of the anchor curve have "
                       "one; component U left out"), std::string::npos) << r.err;
  const BdrateRun s = run_bdrate("--strict " + a + " " + t);
  EXPECT_EQ(s.status, 1) << s.err;
  EXPECT_NE(s.err.find("bdrate: error: U: "), std::string::npos) << s.err;
}

TEST(BdrateCli, GnuLongOptionsVersionAndReasons) {
  if (!have_bdrate()) GTEST_SKIP() << "bin/bdrate not built";
  const RefCurves c = curves("x265_presets");
  const std::string a = curve_csv("x_a.csv", anchor_of(c)), t = curve_csv("x_t.csv", test_of(c));
  const BdrateRun eq = run_bdrate("--component=Y " + a + " " + t), sp = run_bdrate("--component Y " + a + " " + t);
  EXPECT_EQ(eq.status, 0) << eq.err;
  EXPECT_EQ(eq.out, sp.out);
  EXPECT_NE(eq.out.find("-4.420"), std::string::npos) << eq.out;
  EXPECT_TRUE(eq.err.empty()) << eq.err;  // no warning for good curves
  // -a/-t lists keep their files in order even with options in between.
  const BdrateRun lists = run_bdrate("-a " + a + " --pchip -t " + t);
  EXPECT_EQ(lists.status, 0) << lists.err;
  const BdrateRun v = run_bdrate("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("bdrate gme264 ", 0), 0u) << v.out;
  EXPECT_NE(v.out.find("(git "), std::string::npos) << v.out;
  const BdrateRun missing = run_bdrate(a + " /nonexistent/t.csv");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("/nonexistent/t.csv: cannot read the file (No such file or directory)"),
            std::string::npos) << missing.err;
  const BdrateRun bad = run_bdrate("--component");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--component needs a value"), std::string::npos) << bad.err;
}

// Every output names the build that made it: the table in a line of its own, the CSV in a last column of every
// row (a comment line would be read as a data row by most CSV readers).
TEST(BdrateCli, TableAndCsvNameTheVersion) {
  if (!have_bdrate()) GTEST_SKIP() << "bin/bdrate not built";
  const RefCurves c = curves("x265_presets");
  const std::string a = curve_csv("v_a.csv", anchor_of(c)), t = curve_csv("v_t.csv", test_of(c));
  const BdrateRun r = run_bdrate(a + " " + t);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\nversion: bdrate gme264 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(git "), std::string::npos) << r.out;
  const BdrateRun csv = run_bdrate("--csv " + a + " " + t);
  EXPECT_EQ(csv.status, 0) << csv.err;
  std::istringstream in(csv.out);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "component,bd_rate_percent,bd_psnr_db,overlap_kbps_lo,overlap_kbps_hi,overlap_psnr_lo,"
                  "overlap_psnr_hi,warning,version");
  int rows = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split_csv_line(line);
    ASSERT_EQ(f.size(), 9u) << line;
    EXPECT_EQ(f[8].rfind("bdrate gme264 ", 0), 0u) << line;
    EXPECT_NE(f[8].find("(git "), std::string::npos) << line;
    rows++;
  }
  EXPECT_GE(rows, 1);
}

// A StatsFile point as lencod writes it (doc/STATS.md), with what the encode was run with.
std::string stats_point(const std::string& name, double kbps, double psnr, const std::string& input, int frames,
                        int gpu) {
  return write_temp(name, "{\"summary\":{\"frames\":" + std::to_string(frames) + ",\"kbps\":" +
                              std::to_string(kbps) + ",\"psnr_y\":" + std::to_string(psnr) +
                              ",\"config\":{\"input\":\"" + input + "\",\"width\":176,\"height\":144,"
                              "\"frames\":" + std::to_string(frames) + ",\"gpu_integer_me\":" +
                              std::to_string(gpu) + "}}}\n");
}

// Points that cannot belong together, where StatsFiles record it: a curve mixing runs or clips, curves of different
// clips, one file in both curves. Each is a warning, an error under --strict.
TEST(BdrateCli, StatsFilePointsAreCrossChecked) {
  if (!have_bdrate()) GTEST_SKIP() << "bin/bdrate not built";
  const double rate[4] = {100, 200, 400, 800}, psnr[4] = {30, 33, 36, 39};
  std::string a, t;
  for (int i = 0; i < 4; i++) {
    a += " " + stats_point("xa" + std::to_string(i) + ".jsonl", rate[i], psnr[i], "/c/s.yuv", 10, 0);
    t += " " + stats_point("xt" + std::to_string(i) + ".jsonl", rate[i] * 1.1, psnr[i], "/c/s.yuv", 10, 1);
  }
  const BdrateRun clean = run_bdrate("--pchip --strict -a" + a + " -t" + t);
  EXPECT_EQ(clean.status, 0) << clean.err;
  EXPECT_TRUE(clean.err.empty()) << clean.err;
  // The anchor's last point taken from the test run (another ME path), and that file in both curves.
  const std::string t3 = scratch_dir() + "bd_xt3.jsonl";
  const std::string mixed_a = a.substr(0, a.rfind(' ')) + " " + t3;
  BdrateRun r = run_bdrate("--pchip -a" + mixed_a + " -t" + t);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("bdrate: warning: the anchor curve mixes integer-ME paths: " + scratch_dir() +
                       "bd_xa0.jsonl has GPUIntegerME 0, " + t3 + " has 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bdrate: warning: the same point is in both curves: " + t3), std::string::npos) << r.err;
  r = run_bdrate("--pchip --strict -a" + mixed_a + " -t" + t);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("bdrate: error: the anchor curve mixes integer-ME paths"), std::string::npos) << r.err;
  // The same file through another path is the same point.
  r = run_bdrate("--pchip -a" + a.substr(0, a.rfind(' ')) + " " + scratch_dir() + "./bd_xt3.jsonl -t" + t);
  EXPECT_NE(r.err.find("the same point is in both curves: " + scratch_dir() + "./bd_xt3.jsonl = " + t3),
            std::string::npos) << r.err;
  // Another clip or frame count inside a curve, and curves of different clips.
  const std::string other = stats_point("xo.jsonl", 800, 39, "/c/other.yuv", 10, 0);
  r = run_bdrate("--pchip --strict -a" + a.substr(0, a.rfind(' ')) + " " + other + " -t" + t);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bdrate: error: the anchor curve mixes encodes: " + scratch_dir() + "bd_xa0.jsonl (input "
                       "/c/s.yuv, 176x144, 10 frames) and " + other + " (input /c/other.yuv, 176x144, 10 frames)"),
            std::string::npos) << r.err;
  const std::string short_a = stats_point("xf.jsonl", 800, 39, "/c/s.yuv", 5, 0);
  r = run_bdrate("--pchip -a" + a.substr(0, a.rfind(' ')) + " " + short_a + " -t" + t);
  EXPECT_NE(r.err.find("(input /c/s.yuv, 176x144, 5 frames)"), std::string::npos) << r.err;
  std::string o;
  for (int i = 0; i < 4; i++)
    o += " " + stats_point("xq" + std::to_string(i) + ".jsonl", rate[i] * 1.1, psnr[i], "/c/other.yuv", 10, 1);
  r = run_bdrate("--pchip -a" + a + " -t" + o);
  EXPECT_NE(r.err.find("bdrate: warning: the curves encode different things: anchor input /c/s.yuv, 176x144, 10 "
                       "frames, test input /c/other.yuv, 176x144, 10 frames"), std::string::npos) << r.err;
  // CSV rows carry no such record: one results.csv giving both curves through filters is fine.
  const std::string csv = write_temp("x_rows.csv", "run,kbps,psnr_y\na,100,30\na,200,33\na,400,36\na,800,39\n"
                                                 "b,110,30\nb,220,33\nb,440,36\nb,880,39\n");
  r = run_bdrate("--strict '" + csv + "#run=a' '" + csv + "#run=b'");
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(RdJson, ParsesAndRejects) {
  JsonValue v;
  std::string err;
  ASSERT_TRUE(parse_json("{\"a\": [1, -2.5e3, \"x\\\"y\\u00e9\"], \"b\": {\"c\": false}}", &v, &err)) << err;
  EXPECT_DOUBLE_EQ(v.find("a")->array[1].number, -2500);
  EXPECT_EQ(v.find("a")->array[2].string, "x\"y\xc3\xa9");
  EXPECT_EQ(v.find("b")->find("c")->kind, JsonValue::Kind::kBool);
  EXPECT_FALSE(parse_json("{\"a\": 1,}", &v, &err));
  EXPECT_NE(err.find("expected a key string at column 9"), std::string::npos) << err;
  EXPECT_FALSE(parse_json("{\"a\": 1} x", &v, &err));
  EXPECT_FALSE(parse_json("{\"a\": \"unterminated", &v, &err));
}

}  // namespace
}  // namespace gme
