// bdrate: Bjontegaard deltas (BD-rate %, BD-PSNR dB) of a test RD curve against an anchor, per component
// Y, U, V and combined (4Y+U+V)/6. Inputs are read by rd/rd_input.h; the math is rd/bjontegaard.h.
#include <getopt.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/version.h"
#include "rd/bjontegaard.h"
#include "rd/rd_input.h"

namespace {

const char* kUsage =
    "Usage: bdrate [options] ANCHOR TEST\n"
    "       bdrate [options] -a SPEC [SPEC...] -t SPEC [SPEC...]\n"
    "Bjontegaard delta rate (%) and PSNR (dB) of the TEST curve against the ANCHOR curve (>= 4 points each).\n"
    "A SPEC is a file (CSV with kbps,psnr_y[,psnr_u,psnr_v] header; a StatsFile, one point; JM stats.dat or\n"
    "log.dat; a lencod console log), FILE#KEY=VALUE,KEY~TEXT to keep matching CSV/log.dat rows, or @LIST.\n"
    "Options (GNU style: --component=Y or --component Y):\n"
    "  --pchip              piecewise cubic Hermite interpolation instead of the VCEG-M33 cubic fit\n"
    "  -c, --component C    Y, U, V, YUV or a comma list (default: every component both curves have)\n"
    "  --csv                print CSV (component,bd_rate_percent,bd_psnr_db,...,warning) instead of a table\n"
    "  --strict             a doubtful result (fit not monotonic over the interval, implausible value, overlap\n"
    "                       below 75 % of a curve's range) is an error: exit status 1\n"
    "  -V, --version        the version of this build\n"
    "  -h, --help           this text\n"
    "Positive BD-rate: the test needs more bits for the same PSNR; negative BD-PSNR: lower PSNR at equal rate.\n";

struct Options {
  std::vector<std::string> anchor, test;
  gme::BdMethod method = gme::BdMethod::kPolynomial;
  std::vector<int> components;  // 0 Y, 1 U, 2 V, 3 YUV; empty: automatic
  bool csv = false;
  bool strict = false;
};

const char* kComponentNames[4] = {"Y", "U", "V", "YUV"};

double component(const gme::RdPoint& p, int c) {
  switch (c) {
    case 0: return p.psnr_y;
    case 1: return p.psnr_u;
    case 2: return p.psnr_v;
    default: return p.psnr_yuv;
  }
}

bool has_component(const std::vector<gme::RdPoint>& pts, int c) {
  for (const auto& p : pts)
    if (std::isnan(component(p, c))) return false;
  return true;
}

// The first point of a curve that lacks component c while another point has it ("" when all or none have it): a
// component given for some points only is a mistake in the inputs, not a component to leave out quietly.
std::string partly_missing(const std::vector<gme::RdPoint>& pts, int c) {
  const gme::RdPoint* lacking = nullptr;
  bool some = false;
  for (const auto& p : pts) {
    if (std::isnan(component(p, c))) {
      if (!lacking) lacking = &p;
    } else {
      some = true;
    }
  }
  return some && lacking ? lacking->origin : "";
}

bool parse_components(const std::string& list, std::vector<int>* out) {
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    int found = -1;
    for (int c = 0; c < 4; c++)
      if (name == kComponentNames[c]) found = c;
    if (found < 0) {
      std::fprintf(stderr, "bdrate: error: component '%s' unknown, expected Y, U, V or YUV\n", name.c_str());
      return false;
    }
    out->push_back(found);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

enum class Action { kRun, kHelp, kVersion };

// GNU getopt_long in "return in order" mode ('-'), so "-a X Y -t Z W" keeps each file with its option.
// Returns false (with the message printed) on a bad command line.
bool parse_args(int argc, char** argv, Options* o, Action* action) {
  enum { kPchip = 256, kCsv, kStrict };
  static const option kLong[] = {{"anchor", no_argument, nullptr, 'a'},   {"test", no_argument, nullptr, 't'},
                                 {"component", required_argument, nullptr, 'c'},
                                 {"pchip", no_argument, nullptr, kPchip}, {"csv", no_argument, nullptr, kCsv},
                                 {"strict", no_argument, nullptr, kStrict},
                                 {"version", no_argument, nullptr, 'V'},  {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  std::vector<std::string> positional;
  std::vector<std::string>* target = nullptr;
  optind = 0;  // full re-initialisation of getopt's state
  opterr = 0;
  for (;;) {
    const int c = getopt_long(argc, argv, "-:atc:Vh", kLong, nullptr);
    if (c == -1) break;
    switch (c) {
      case 1:
        (target ? *target : positional).push_back(optarg);
        break;
      case 'a': target = &o->anchor; break;
      case 't': target = &o->test; break;
      case 'c':
        if (!parse_components(optarg, &o->components)) return false;
        break;
      case kPchip: o->method = gme::BdMethod::kPchip; break;
      case kCsv: o->csv = true; break;
      case kStrict: o->strict = true; break;
      case 'V': *action = Action::kVersion; return true;
      case 'h': *action = Action::kHelp; return true;
      case ':':
        std::fprintf(stderr, "bdrate: error: %s needs a value (Y, U, V, YUV)\n", argv[optind - 1]);
        return false;
      default:
        std::fprintf(stderr, "bdrate: error: unknown option '%s' (see bdrate --help)\n", argv[optind - 1]);
        return false;
    }
  }
  if (o->anchor.empty() && o->test.empty()) {
    if (positional.size() != 2) {
      std::fprintf(stderr, "bdrate: error: expected ANCHOR and TEST (got %zu argument%s; see bdrate --help)\n",
                   positional.size(), positional.size() == 1 ? "" : "s");
      return false;
    }
    o->anchor.push_back(positional[0]);
    o->test.push_back(positional[1]);
  } else if (!positional.empty() || o->anchor.empty() || o->test.empty()) {
    std::fprintf(stderr, "bdrate: error: give the curves either as ANCHOR TEST or as -a SPEC... -t SPEC...\n");
    return false;
  }
  return true;
}

std::vector<gme::RdPoint> read_curve(const std::vector<std::string>& specs) {
  std::vector<gme::RdPoint> pts;
  for (const auto& s : specs) {
    const auto more = gme::read_rd_points(s);
    pts.insert(pts.end(), more.begin(), more.end());
  }
  return pts;
}

// What a StatsFile says was encoded ("input a.yuv, 176x144, 10 frames"), "" when the point records none of it.
std::string encoded_what(const gme::RdPoint& p) {
  auto get = [&](const char* k) {
    const auto it = p.config.find(k);
    return it == p.config.end() ? std::string("?") : it->second;
  };
  if (!p.config.count("input") && !p.config.count("width") && !p.config.count("frames")) return "";
  return "input " + get("input") + ", " + get("width") + "x" + get("height") + ", " + get("frames") + " frames";
}

// Points that cannot belong together, where the inputs record it (StatsFiles): a curve whose points encoded
// different inputs, sizes or frame counts, or ran different integer-ME paths (GPUIntegerME), is two runs mixed; two
// curves of different inputs compare nothing; a point in both curves is a mistake in the command line.
std::vector<std::string> cross_check(const std::vector<gme::RdPoint>& anchor, const std::vector<gme::RdPoint>& test) {
  std::vector<std::string> out;
  std::string what[2];
  for (int k = 0; k < 2; k++) {
    const std::vector<gme::RdPoint>& curve = k ? test : anchor;
    const char* name = k ? "test" : "anchor";
    const gme::RdPoint* first = nullptr;
    const gme::RdPoint* first_me = nullptr;
    bool mixed = false, me_mixed = false;
    for (const gme::RdPoint& p : curve) {
      const std::string w = encoded_what(p);
      if (!w.empty()) {
        if (!first) {
          first = &p;
          what[k] = w;
        } else if (w != what[k] && !mixed) {
          out.push_back(std::string("the ") + name + " curve mixes encodes: " + first->origin + " (" + what[k] +
                        ") and " + p.origin + " (" + w + ")");
          mixed = true;
        }
      }
      const auto me = p.config.find("gpu_integer_me");
      if (me == p.config.end() || me_mixed) continue;
      if (!first_me) {
        first_me = &p;
      } else if (first_me->config.at("gpu_integer_me") != me->second) {
        out.push_back(std::string("the ") + name + " curve mixes integer-ME paths: " + first_me->origin +
                      " has GPUIntegerME " + first_me->config.at("gpu_integer_me") + ", " + p.origin + " has " +
                      me->second);
        me_mixed = true;  // once per curve
      }
    }
    if (mixed) what[k].clear();
  }
  if (!what[0].empty() && !what[1].empty() && what[0] != what[1])
    out.push_back("the curves encode different things: anchor " + what[0] + ", test " + what[1]);
  for (const gme::RdPoint& a : anchor)
    for (const gme::RdPoint& t : test)
      if (!a.identity.empty() && a.identity == t.identity)
        out.push_back("the same point is in both curves: " + a.origin + (a.origin == t.origin ? "" : " = " + t.origin));
  return out;
}

std::string describe(const std::vector<std::string>& specs) {
  std::string d;
  for (const auto& s : specs) d += (d.empty() ? "" : " ") + s;
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  Action action = Action::kRun;
  if (!parse_args(argc, argv, &o, &action)) return 2;
  if (action == Action::kHelp) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (action == Action::kVersion) {
    std::printf("bdrate %s\n", gme::version_string().c_str());
    return 0;
  }
  int warnings = 0;
  try {
    const std::vector<gme::RdPoint> anchor = read_curve(o.anchor), test = read_curve(o.test);
    for (const std::string& w : cross_check(anchor, test)) {
      std::fprintf(stderr, "bdrate: %s: %s\n", o.strict ? "error" : "warning", w.c_str());
      warnings++;
    }
    std::vector<int> comps = o.components;
    if (comps.empty()) {
      for (int c = 0; c < 4; c++) {
        if (has_component(anchor, c) && has_component(test, c)) {
          comps.push_back(c);
          continue;
        }
        for (const auto* curve : {&anchor, &test}) {
          const std::string where = partly_missing(*curve, c);
          if (where.empty()) continue;
          std::fprintf(stderr, "bdrate: %s: %s: %s has no %s value while other points of the %s curve have one; "
                       "component %s left out\n", o.strict ? "error" : "warning", kComponentNames[c], where.c_str(),
                       kComponentNames[c], curve == &anchor ? "anchor" : "test", kComponentNames[c]);
          warnings++;
        }
      }
      if (comps.empty()) throw gme::RdInputError("no component (Y, U, V, YUV) is given for every point of both curves");
    } else {
      for (int c : comps) {
        if (!has_component(anchor, c) || !has_component(test, c))
          throw gme::RdInputError(std::string("component ") + kComponentNames[c] + " is missing from the " +
                                  (has_component(anchor, c) ? "test" : "anchor") + " curve");
      }
    }
    std::vector<gme::BdResult> results;
    for (int c : comps) {
      gme::BdCurve a{"anchor", {}, {}}, t{"test", {}, {}};
      for (const auto& p : anchor) { a.kbps.push_back(p.kbps); a.psnr.push_back(component(p, c)); a.origin.push_back(p.origin); }
      for (const auto& p : test) { t.kbps.push_back(p.kbps); t.psnr.push_back(component(p, c)); t.origin.push_back(p.origin); }
      a.name = std::string("anchor ") + kComponentNames[c];
      t.name = std::string("test ") + kComponentNames[c];
      results.push_back(gme::bjontegaard(a, t, o.method));
      // Rule 4 of the developers' guide: a doubtful number is never printed silently.
      for (const std::string& w : results.back().warnings) {
        std::fprintf(stderr, "bdrate: %s: %s: %s\n", o.strict ? "error" : "warning", kComponentNames[c], w.c_str());
        warnings++;
      }
    }
    if (o.csv) {
      // The version as a last column, on every row: a comment line (first or last) is read as a data row by
      // spreadsheet programs and most CSV readers, and its commas would split it into cells.
      std::string version = "\"bdrate ";
      for (char ch : gme::version_string()) version += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      version += "\"";
      std::printf("component,bd_rate_percent,bd_psnr_db,overlap_kbps_lo,overlap_kbps_hi,overlap_psnr_lo,"
                  "overlap_psnr_hi,warning,version\n");
      for (size_t i = 0; i < comps.size(); i++) {
        const auto& r = results[i];
        std::string w;
        for (const std::string& x : r.warnings) w += (w.empty() ? "" : " | ") + x;
        std::string quoted = "\"";
        for (char ch : w) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
        std::printf("%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%s\n", kComponentNames[comps[i]], r.bd_rate_percent,
                    r.bd_psnr_db, r.overlap_kbps_lo, r.overlap_kbps_hi, r.overlap_psnr_lo, r.overlap_psnr_hi,
                    w.empty() ? "" : (quoted + "\"").c_str(), version.c_str());
      }
    } else {
      std::printf("anchor : %zu points  %s\n", anchor.size(), describe(o.anchor).c_str());
      std::printf("test   : %zu points  %s\n", test.size(), describe(o.test).c_str());
      std::printf("method : %s\n", gme::bd_method_name(o.method));
      std::printf("version: bdrate %s\n\n", gme::version_string().c_str());
      std::printf("component  BD-rate (%%)  BD-PSNR (dB)  rate overlap (kbit/s)   PSNR overlap (dB)\n");
      for (size_t i = 0; i < comps.size(); i++) {
        const auto& r = results[i];
        char rate[48], psnr[48];
        std::snprintf(rate, sizeof rate, "%.2f-%.2f", r.overlap_kbps_lo, r.overlap_kbps_hi);
        std::snprintf(psnr, sizeof psnr, "%.3f-%.3f", r.overlap_psnr_lo, r.overlap_psnr_hi);
        std::printf("%-9s  %11.3f  %12.4f  %-22s  %s%s\n", kComponentNames[comps[i]], r.bd_rate_percent,
                    r.bd_psnr_db, rate, psnr, r.warnings.empty() ? "" : "  (doubtful: see the warnings)");
      }
      if (comps.size() < 4 && o.components.empty())
        std::printf("(components missing from a curve are left out)\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bdrate: error: %s\n", e.what());
    return 1;
  }
  if (warnings > 0 && o.strict) {
    std::fprintf(stderr, "bdrate: error: %d doubtful result%s (--strict)\n", warnings, warnings == 1 ? "" : "s");
    return 1;
  }
  return 0;
}
