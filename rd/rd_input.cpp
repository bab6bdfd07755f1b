// Readers for the rate-distortion inputs of bdrate and rdsweep (formats listed in rd_input.h).
#include "rd/rd_input.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>

#include "rd/bjontegaard.h"
#include "rd/rd_json.h"
#include "common/text_fields.h"

namespace gme {
namespace {

std::string trim(const std::string& s) { return trim_space(s); }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Reads a whole file; false with *why set to the system's reason ("No such file or directory", "Is a directory",
// "Permission denied") when it cannot.
bool read_text(const std::string& path, std::string* text, std::string* why) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *why = std::strerror(errno);
    return false;
  }
  text->clear();
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text->append(buf, n);
  const bool bad = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (bad) {
    *why = err ? std::strerror(err) : "read error";
    return false;
  }
  return true;
}

// Spreadsheet programs start a UTF-8 file with a byte order mark; it is no part of the first header name.
void strip_bom(std::string* text) {
  if (text->compare(0, 3, "\xEF\xBB\xBF") == 0) text->erase(0, 3);
}

// A count or QP read as a double: finite, whole and within [lo, hi], so the conversion to int is defined.
bool to_whole(double v, int lo, int hi, int* out) {
  if (!std::isfinite(v) || v != std::floor(v) || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

constexpr int kMaxFrames = 1 << 30;

std::string qp_error(const std::string& where, const std::string& what, double v) {
  return where + ": " + what + " " + fmt("%g", v) + " is not a QP, expected an integer in 0..51";
}
std::string frames_error(const std::string& where, const std::string& what, double v) {
  return where + ": " + what + " " + fmt("%g", v) + " is not a frame count, expected an integer in 0.." +
         std::to_string(kMaxFrames);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur)) {
    if (!cur.empty() && cur.back() == '\r') cur.pop_back();
    out.push_back(cur);
  }
  return out;
}

// Strict number: the whole (trimmed) field must be a finite number. strtod also takes "nan" and "inf", which no
// rate or PSNR can be; taken as numbers they would turn into "missing" later and silently drop a whole component.
bool to_number(const std::string& field, double* v) { return field_to_double(field, v) && std::isfinite(*v); }

// A point's rate and PSNRs within their domains: a rate is positive, a PSNR is not negative. `where` is the file
// (and line) that gave the point.
void check_point_values(const RdPoint& p, const std::string& where) {
  if (!(p.kbps > 0) || !std::isfinite(p.kbps))
    throw RdInputError(where + ": rate " + fmt("%g", p.kbps) + " kbit/s, expected a positive number");
  const struct { const char* name; double v; } psnrs[] = {
      {"psnr_y", p.psnr_y}, {"psnr_u", p.psnr_u}, {"psnr_v", p.psnr_v}, {"psnr_yuv", p.psnr_yuv}};
  for (const auto& q : psnrs)
    if (!std::isnan(q.v) && !(q.v >= 0 && std::isfinite(q.v)))
      throw RdInputError(where + ": " + q.name + " " + fmt("%g", q.v) + " dB, expected a PSNR of 0 dB or more");
}

bool matches(const std::map<std::string, std::string>& row, const std::vector<RdFilter>& filters) {
  for (const RdFilter& f : filters) {
    const auto it = row.find(lower(f.key));
    if (it == row.end()) return false;
    const std::string v = trim(it->second);
    if (f.substring ? v.find(f.value) == std::string::npos : v != f.value) return false;
  }
  return true;
}

void check_filter_keys(const std::vector<std::string>& header, const std::vector<RdFilter>& filters,
                       const std::string& name) {
  for (const RdFilter& f : filters) {
    if (std::find(header.begin(), header.end(), lower(f.key)) == header.end()) {
      std::string cols;
      for (const auto& h : header) cols += (cols.empty() ? "" : ", ") + h;
      throw RdInputError(name + ": filter column '" + f.key + "' not in the header (columns: " + cols + ")");
    }
  }
}

void complete(RdPoint* p) {
  if (std::isnan(p->psnr_yuv) && !std::isnan(p->psnr_y) && !std::isnan(p->psnr_u) && !std::isnan(p->psnr_v))
    p->psnr_yuv = combined_psnr(p->psnr_y, p->psnr_u, p->psnr_v);
}

// Column name -> field of RdPoint (aliases accepted for hand-written CSVs).
int csv_column_role(const std::string& h) {
  static const std::map<std::string, int> roles = {
      {"kbps", 0}, {"kbit/s", 0}, {"rate_kbps", 0}, {"bitrate_kbps", 0}, {"rate", 0}, {"bitrate", 0},
      {"psnr_y", 1}, {"y", 1}, {"psnr", 1}, {"psnr_u", 2}, {"u", 2}, {"psnr_v", 3}, {"v", 3},
      {"psnr_yuv", 4}, {"yuv", 4}, {"qp", 5}, {"time_s", 6}, {"time_me_s", 7}, {"frames", 8},
      {"integer_me_path", 9}};
  const auto it = roles.find(h);
  return it == roles.end() ? -1 : it->second;
}

std::vector<RdPoint> parse_csv(const std::string& text, const std::string& name, const std::vector<RdFilter>& filters) {
  const std::vector<std::string> lines = lines_of(text);
  size_t ln = 0;
  while (ln < lines.size() && (trim(lines[ln]).empty() || trim(lines[ln])[0] == '#')) ln++;
  if (ln == lines.size()) throw RdInputError(name + ": empty file, expected a CSV header line with a kbps column");
  std::vector<std::string> header;
  for (const std::string& h : split_csv_line(lines[ln])) header.push_back(lower(trim(h)));
  std::vector<int> role(header.size());
  bool have_rate = false, have_y = false;
  const std::string hwhere = name + ":" + std::to_string(ln + 1);
  for (size_t i = 0; i < header.size(); i++) {
    role[i] = csv_column_role(header[i]);
    // A column given twice (or twice through aliases such as psnr and psnr_y) leaves it open which one is meant.
    for (size_t k = 0; k < i; k++) {
      if (header[k] == header[i])
        throw RdInputError(hwhere + ": column " + header[i] + " is given twice (columns " + std::to_string(k + 1) +
                           " and " + std::to_string(i + 1) + ")");
      if (role[i] >= 0 && role[k] == role[i])
        throw RdInputError(hwhere + ": columns " + header[k] + " and " + header[i] +
                           " both give the same value (columns " + std::to_string(k + 1) + " and " +
                           std::to_string(i + 1) + "), expected one of them");
    }
    have_rate |= role[i] == 0;
    have_y |= role[i] == 1;
  }
  if (!have_rate || !have_y)
    throw RdInputError(name + ":" + std::to_string(ln + 1) + ": CSV header needs columns kbps and psnr_y (got '" +
                       lines[ln] + "')");
  check_filter_keys(header, filters, name);
  std::vector<RdPoint> out;
  for (size_t i = ln + 1; i < lines.size(); i++) {
    const std::string t = trim(lines[i]);
    if (t.empty() || t[0] == '#') continue;
    const std::string where = name + ":" + std::to_string(i + 1);
    const std::vector<std::string> f = split_csv_line(lines[i]);
    if (f.size() != header.size())
      throw RdInputError(where + ": " + std::to_string(f.size()) + " fields, the header has " +
                         std::to_string(header.size()));
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < f.size(); c++) row[header[c]] = f[c];
    if (!matches(row, filters)) continue;
    RdPoint p;
    p.origin = where;
    for (size_t c = 0; c < f.size(); c++) {
      if (role[c] < 0) continue;
      if (role[c] == 9) {
        p.integer_me_path = f[c];
        continue;
      }
      double v;
      if (!to_number(f[c], &v)) {
        // Optional columns may be left empty; the rate and luma PSNR may not.
        if (trim(f[c]).empty() && role[c] >= 2) continue;
        throw RdInputError(where + ": column " + header[c] + " is '" + f[c] + "', expected a number");
      }
      switch (role[c]) {
        case 0: p.kbps = v; break;
        case 1: p.psnr_y = v; break;
        case 2: p.psnr_u = v; break;
        case 3: p.psnr_v = v; break;
        case 4: p.psnr_yuv = v; break;
        case 5:
          if (!to_whole(v, 0, 51, &p.qp)) throw RdInputError(qp_error(where, "column " + header[c] + ":", v));
          break;
        case 6: p.time_s = v; break;
        case 7: p.time_me_s = v; break;
        case 8:
          if (!to_whole(v, 0, kMaxFrames, &p.frames))
            throw RdInputError(frames_error(where, "column " + header[c] + ":", v));
          break;
      }
    }
    complete(&p);
    out.push_back(p);
  }
  return out;
}

// The StatsFile: per-frame objects then {"summary":{...}}. Returns false with *why when there is no usable summary.
bool parse_stats(const std::string& text, const std::string& name, RdPoint* p, std::string* why) {
  const std::vector<std::string> lines = lines_of(text);
  int last_qp = -1;
  for (size_t i = 0; i < lines.size(); i++) {
    if (trim(lines[i]).empty()) continue;
    JsonValue v;
    std::string err;
    if (!parse_json(lines[i], &v, &err)) {
      *why = name + ":" + std::to_string(i + 1) + ": not a JSON object (" + err + ")";
      return false;
    }
    if (v.kind != JsonValue::Kind::kObject) continue;  // tolerated: the spec only defines objects
    if (const JsonValue* s = v.find("summary")) {
      *p = RdPoint();
      p->origin = name;
      p->kbps = s->number_or("kbps", kRdMissing);
      p->psnr_y = s->number_or("psnr_y", kRdMissing);
      p->psnr_u = s->number_or("psnr_u", kRdMissing);
      p->psnr_v = s->number_or("psnr_v", kRdMissing);
      p->psnr_yuv = s->number_or("psnr_yuv", kRdMissing);
      // JSON here may carry nan/inf (rd_json accepts them); as a value they are no number, not "absent".
      for (const char* key : {"kbps", "psnr_y", "psnr_u", "psnr_v", "psnr_yuv"}) {
        const double x = s->number_or(key, 0);
        if (!std::isfinite(x)) {
          *why = name + ":" + std::to_string(i + 1) + ": summary " + key + " is " + fmt("%g", x) +
                 ", expected a number";
          return false;
        }
      }
      p->time_s = s->number_or("time_s", kRdMissing);
      p->time_me_s = s->number_or("time_me_s", kRdMissing);
      const std::string where = name + ":" + std::to_string(i + 1);
      const double frames = s->number_or("frames", 0);
      if (!to_whole(frames, 0, kMaxFrames, &p->frames)) {
        *why = frames_error(where, "summary frames", frames);
        return false;
      }
      const double qp = s->number_or("qp", s->number_or("qp_p", last_qp));
      if (qp != -1 && !to_whole(qp, 0, 51, &p->qp)) {
        *why = qp_error(where, "summary qp", qp);
        return false;
      }
      p->integer_me_path = s->string_or("integer_me_path", "");
      p->version = s->string_or("version", "");
      if (const JsonValue* c = s->find("config")) {
        for (const auto& [key, value] : c->object) {
          if (value.kind == JsonValue::Kind::kString) p->config[key] = value.string;
          else if (value.kind == JsonValue::Kind::kNumber) p->config[key] = fmt("%.10g", value.number);
          else if (value.kind == JsonValue::Kind::kBool) p->config[key] = value.boolean ? "true" : "false";
        }
      }
      p->energy_interval_s = s->number_or("energy_interval_s", kRdMissing);
      p->energy_gpu_j = s->number_or("energy_gpu_j", kRdMissing);
      p->energy_cpu_j = s->number_or("energy_cpu_j", kRdMissing);
      p->energy_gpu_what = s->string_or("energy_gpu", "");
      p->energy_cpu_what = s->string_or("energy_cpu", "");
      if (std::isnan(p->kbps) || std::isnan(p->psnr_y)) {
        *why = name + ":" + std::to_string(i + 1) + ": summary lacks kbps or psnr_y";
        return false;
      }
      complete(p);
      return true;
    }
    // A frame object: remember the QP of the last P picture (the sweep's QPPSlice), else of any picture.
    const double qp = v.number_or("qp", -1);
    int q = -1;
    if (qp != -1 && !to_whole(qp, 0, 51, &q)) {
      *why = qp_error(name + ":" + std::to_string(i + 1), "picture qp", qp);
      return false;
    }
    if (q >= 0 && (v.string_or("type", "") == "P" || last_qp < 0)) last_qp = q;
  }
  *why = name + ": no summary line (the encode did not finish?)";
  return false;
}

// JM stats.dat: "Total Bitrate(kb/s) : x" and the first "SNR Y(dB) | intra | all |" / "SNR U/V (dB) | i/i | a/a |".
std::vector<RdPoint> parse_jm_stats(const std::string& text, const std::string& name) {
  RdPoint p;
  p.origin = name;
  bool have_y = false, have_uv = false;
  for (const std::string& line : lines_of(text)) {
    const std::string t = trim(line);
    if (t.rfind("Total Bitrate(kb/s)", 0) == 0) {
      const size_t c = t.find(':');
      double v;
      if (c != std::string::npos && to_number(t.substr(c + 1), &v)) p.kbps = v;
    } else if (!have_y && t.rfind("SNR Y(dB)", 0) == 0) {
      std::vector<std::string> cols;
      std::stringstream ss(t);
      for (std::string f; std::getline(ss, f, '|');) cols.push_back(f);
      double v;
      if (cols.size() >= 3 && to_number(cols[2], &v)) { p.psnr_y = v; have_y = true; }
    } else if (!have_uv && t.rfind("SNR U/V (dB)", 0) == 0) {
      std::vector<std::string> cols;
      std::stringstream ss(t);
      for (std::string f; std::getline(ss, f, '|');) cols.push_back(f);
      if (cols.size() >= 3) {
        const size_t slash = cols[2].find('/');
        double u, v;
        if (slash != std::string::npos && to_number(cols[2].substr(0, slash), &u) &&
            to_number(cols[2].substr(slash + 1), &v)) {
          p.psnr_u = u;
          p.psnr_v = v;
          have_uv = true;
        }
      }
    } else if (t.rfind("No.of coded pictures", 0) == 0) {
      const size_t c = t.find(':');
      double v;
      if (c != std::string::npos && to_number(t.substr(c + 1), &v) && !to_whole(v, 0, kMaxFrames, &p.frames))
        throw RdInputError(frames_error(name, "'No.of coded pictures'", v));
    }
  }
  if (std::isnan(p.kbps) || !have_y)
    throw RdInputError(name + ": JM stats.dat without 'Total Bitrate(kb/s)' or 'SNR Y(dB)' lines");
  complete(&p);
  return {p};
}

// JM log.dat: a '|'-separated table; the header row names the columns, every later row is one encoding session.
std::vector<RdPoint> parse_jm_log(const std::string& text, const std::string& name,
                                  const std::vector<RdFilter>& filters) {
  const std::vector<std::string> lines = lines_of(text);
  auto cells = [](const std::string& line) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, '|');) c.push_back(lower(trim(f)));
    return c;
  };
  std::vector<std::string> header;
  std::vector<RdPoint> out;
  for (size_t i = 0; i < lines.size(); i++) {
    const std::string t = trim(lines[i]);
    if (t.empty() || t[0] != '|') continue;
    std::vector<std::string> c = cells(t);
    if (std::find(c.begin(), c.end(), "ver") != c.end()) {
      header = c;
      check_filter_keys(header, filters, name);
      continue;
    }
    if (header.empty() || c.size() < header.size()) continue;  // title row or a truncated line
    std::map<std::string, std::string> row;
    for (size_t k = 0; k < header.size(); k++) row[header[k]] = c[k];
    if (!matches(row, filters)) continue;
    const std::string where = name + ":" + std::to_string(i + 1);
    auto num = [&](const char* key, bool required) {
      double v = kRdMissing;
      const auto it = row.find(key);
      const bool given = it != row.end() && !it->second.empty();
      if (given ? !to_number(it->second, &v) : required)
        throw RdInputError(where + ": log.dat column '" + key + "' " +
                           (given ? "is '" + it->second + "', expected a number" : std::string("missing")));
      return v;
    };
    RdPoint p;
    p.origin = where;
    p.kbps = num("#bitr ipb", true) / 1000.0;  // JM writes bit/s here
    p.psnr_y = num("snry n", true);
    p.psnr_u = num("snru n", false);
    p.psnr_v = num("snrv n", false);
    p.time_s = num("total time", false) / 1000.0;  // milliseconds in JM
    p.time_me_s = num("me time", false) / 1000.0;
    const double qp = num("qpp", false);
    if (!std::isnan(qp) && !to_whole(qp, 0, 51, &p.qp)) throw RdInputError(qp_error(where, "QPP", qp));
    const double frames = num("#img", false);
    if (!std::isnan(frames) && !to_whole(frames, 0, kMaxFrames, &p.frames))
      throw RdInputError(frames_error(where, "#Img", frames));
    complete(&p);
    out.push_back(p);
  }
  if (header.empty()) throw RdInputError(name + ": JM log.dat without its header row");
  return out;
}

// lencod console output; a point ends at the "Bit rate (kbit/s)" line, so concatenated logs give several points.
std::vector<RdPoint> parse_console(const std::string& text, const std::string& name) {
  std::vector<RdPoint> out;
  RdPoint p;
  const std::vector<std::string> lines = lines_of(text);
  auto after_colon = [](const std::string& t) {
    const size_t c = t.find(':');
    return c == std::string::npos ? std::string() : t.substr(c + 1);
  };
  auto first_in_braces = [&](const std::string& t, double* v) {
    const std::string r = after_colon(t);
    const size_t b = r.find('{'), comma = r.find(',', b == std::string::npos ? 0 : b);
    return b != std::string::npos && comma != std::string::npos && to_number(r.substr(b + 1, comma - b - 1), v);
  };
  for (size_t i = 0; i < lines.size(); i++) {
    const std::string t = trim(lines[i]);
    double v;
    std::string sec;
    if (t.rfind("Total encoding time for the seq.", 0) == 0) {
      std::istringstream(after_colon(t)) >> p.time_s;
    } else if (t.rfind("Total ME time for sequence", 0) == 0) {
      std::istringstream(after_colon(t)) >> p.time_me_s;
    } else if (t.size() > 1 && std::strchr("YUV", t[0]) && t.compare(1, 12, " { PSNR (dB)") == 0) {
      if (!first_in_braces(t, &v))
        throw RdInputError(name + ":" + std::to_string(i + 1) + ": " + t[0] + " PSNR is not a number ('" + t + "')");
      (t[0] == 'Y' ? p.psnr_y : t[0] == 'U' ? p.psnr_u : p.psnr_v) = v;
    } else if (t.rfind("Bit rate (kbit/s)", 0) == 0) {
      if (!to_number(after_colon(t), &v))
        throw RdInputError(name + ":" + std::to_string(i + 1) + ": bit rate is not a number ('" + t + "')");
      p.kbps = v;
      p.origin = name + ":" + std::to_string(i + 1);
      if (std::isnan(p.psnr_y))
        throw RdInputError(p.origin + ": bit rate line without a preceding 'Y { PSNR (dB) ...' line");
      complete(&p);
      out.push_back(p);
      p = RdPoint();
    }
  }
  return out;
}

void read_spec(const std::string& spec, int depth, std::vector<RdPoint>* out) {
  if (depth > 8) throw RdInputError(spec + ": list files nest too deeply");
  if (!spec.empty() && spec[0] == '@') {
    const std::string list = spec.substr(1);
    std::string text, why;
    if (!read_text(list, &text, &why)) throw RdInputError(list + ": cannot read the list file (" + why + ")");
    const size_t slash = list.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : list.substr(0, slash + 1);
    strip_bom(&text);
    const std::vector<std::string> lines = lines_of(text);
    for (size_t i = 0; i < lines.size(); i++) {
      const std::string t = trim(lines[i]);
      if (t.empty() || t[0] == '#') continue;
      try {
        read_spec(t[0] == '/' || t[0] == '@' ? t : dir + t, depth + 1, out);
      } catch (const RdInputError& e) {
        // The entry's own message first, then where the list named it, so a bad line of the list can be found.
        throw RdInputError(std::string(e.what()) + " (listed at " + list + ":" + std::to_string(i + 1) + ")");
      }
    }
    return;
  }
  std::vector<RdFilter> filters;
  const std::string path = split_rd_spec(spec, &filters);
  std::string text, why;
  if (!read_text(path, &text, &why)) throw RdInputError(path + ": cannot read the file (" + why + ")");
  strip_bom(&text);
  const RdFormat fmt = detect_rd_format(text);
  if (fmt == RdFormat::kUnknown)
    throw RdInputError(path + ": unknown format (expected a CSV with kbps and psnr_y columns, a StatsFile, "
                       "JM stats.dat or log.dat, or a lencod console log)");
  if (!filters.empty() && fmt != RdFormat::kCsv && fmt != RdFormat::kJmLog)
    throw RdInputError(path + ": row filters apply to CSV and JM log.dat only, this is a " +
                       std::string(rd_format_name(fmt)));
  const std::vector<RdPoint> pts = parse_rd_text(text, fmt, path, filters);
  for (const RdPoint& p : pts) check_point_values(p, p.origin.empty() ? path : p.origin);
  if (pts.empty())
    throw RdInputError(path + ": no rate-distortion point" +
                       (filters.empty() ? std::string(" in the file") : std::string(" matches the filter")));
  char* real = ::realpath(path.c_str(), nullptr);
  const std::string resolved = real ? real : path;
  std::free(real);
  for (RdPoint p : pts) {
    p.identity = p.origin.rfind(path, 0) == 0 ? resolved + p.origin.substr(path.size()) : p.origin;
    out->push_back(p);
  }
}

}  // namespace

const char* rd_format_name(RdFormat f) {
  switch (f) {
    case RdFormat::kCsv: return "CSV";
    case RdFormat::kStatsFile: return "StatsFile";
    case RdFormat::kJmStats: return "JM stats.dat";
    case RdFormat::kJmLog: return "JM log.dat";
    case RdFormat::kConsoleLog: return "lencod console log";
    case RdFormat::kUnknown: break;
  }
  return "unknown";
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); i++) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back().push_back('"');
        i++;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back().push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back().push_back(c);
    }
  }
  return out;
}

std::string split_rd_spec(const std::string& spec, std::vector<RdFilter>* filters) {
  filters->clear();
  const size_t hash = spec.rfind('#');
  if (hash == std::string::npos || file_exists(spec)) return spec;
  std::stringstream ss(spec.substr(hash + 1));
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t eq = item.find_first_of("=~");
    if (eq == std::string::npos || eq == 0)
      throw RdInputError(spec + ": filter '" + item + "' is not KEY=VALUE or KEY~TEXT");
    filters->push_back({trim(item.substr(0, eq)), trim(item.substr(eq + 1)), item[eq] == '~'});
  }
  return spec.substr(0, hash);
}

RdFormat detect_rd_format(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return RdFormat::kUnknown;
  if (text[first] == '{') return RdFormat::kStatsFile;
  if (text.find("This file contains statistics for the last encoded sequence") != std::string::npos)
    return RdFormat::kJmStats;
  if (text.find("Encoder statistics. This file is generated") != std::string::npos ||
      text.find("|     ver     |") != std::string::npos)
    return RdFormat::kJmLog;
  if (text.find("Bit rate (kbit/s)") != std::string::npos) return RdFormat::kConsoleLog;
  // A CSV: the first non-comment line is a header naming a rate column.
  for (const std::string& line : lines_of(text)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    for (const std::string& h : split_csv_line(t))
      if (csv_column_role(lower(trim(h))) == 0) return RdFormat::kCsv;
    break;
  }
  return RdFormat::kUnknown;
}

std::vector<RdPoint> parse_rd_text(const std::string& text, RdFormat format, const std::string& name,
                                   const std::vector<RdFilter>& filters) {
  switch (format) {
    case RdFormat::kCsv: return parse_csv(text, name, filters);
    case RdFormat::kStatsFile: {
      RdPoint p;
      std::string why;
      if (!parse_stats(text, name, &p, &why)) throw RdInputError(why);
      return {p};
    }
    case RdFormat::kJmStats: return parse_jm_stats(text, name);
    case RdFormat::kJmLog: return parse_jm_log(text, name, filters);
    case RdFormat::kConsoleLog: return parse_console(text, name);
    case RdFormat::kUnknown: break;
  }
  throw RdInputError(name + ": unknown format");
}

bool read_stats_summary(const std::string& path, RdPoint* out, std::string* why) {
  std::string text, reason;
  if (!read_text(path, &text, &reason)) {
    *why = path + ": cannot read the file (" + reason + ")";
    return false;
  }
  strip_bom(&text);
  return parse_stats(text, path, out, why);
}

std::vector<RdPoint> read_rd_points(const std::string& spec) {
  std::vector<RdPoint> out;
  read_spec(spec, 0, &out);
  return out;
}

}  // namespace gme
