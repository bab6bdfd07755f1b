// Rate-distortion points read from the files that encoders leave behind, for bdrate and rdsweep.
//
// Formats, recognised by content (not by name):
//  - CSV with a header line (doc/TOOLS.md): columns kbps, psnr_y and optionally psnr_u, psnr_v, psnr_yuv, qp,
//    time_s, time_me_s, frames, integer_me_path, plus any others (sequence, run, ...) usable in filters.
//    rdsweep's results.csv is such a file. Lines starting with '#' are comments.
//  - our StatsFile (JSON lines, doc/STATS.md): one point, taken from the final {"summary":{...}} object.
//  - JM 19.0 stats.dat (report.c report_stats): one point; JM prints the averages with only 2 decimals.
//  - JM 19.0 log.dat (report.c report_log): one point per encoding session row (SNR[YUV] N, #Bitr IPB, times).
//  - the lencod console output (JM's "Y { PSNR (dB), ...}" and "Bit rate (kbit/s) @ ..." lines), ours or JM's:
//    one point per run found in the file.
// A spec is PATH, PATH#KEY=VALUE,KEY~TEXT (keep CSV / log.dat rows whose column KEY equals VALUE or contains TEXT;
// keys are header names, compared without case) or @LIST (a text file naming one spec per line; relative paths
// are taken from the list's folder).
#pragma once
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gme {

struct RdInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr double kRdMissing = std::numeric_limits<double>::quiet_NaN();

struct RdPoint {
  double kbps = kRdMissing;
  double psnr_y = kRdMissing, psnr_u = kRdMissing, psnr_v = kRdMissing;
  double psnr_yuv = kRdMissing;  // Eq. 2 of the seed paper; filled from Y/U/V when the file lacks it
  double time_s = kRdMissing;    // total encoding time
  double time_me_s = kRdMissing; // motion estimation time
  int qp = -1;                   // QPPSlice (or QPISlice when only that is known); -1 unknown
  int frames = 0;
  std::string integer_me_path;   // StatsFile summary: which integer-ME path ran ("cpu twin: ..." etc.)
  std::string version;           // StatsFile summary: the encoder's version, when it records one
  // StatsFile summary's "config" object (input, width, height, frames, qp_i, gpu_integer_me, ...): what the encode
  // was run with, as text (numbers as %.10g), so that rdsweep can check a point's files against its command and
  // bdrate can tell points of different inputs or ME paths apart. Empty for other formats.
  std::map<std::string, std::string> config;
  // StatsFile summary (common/energy.h): joules over energy_interval_s, or NaN with the reason in *_what.
  double energy_interval_s = kRdMissing;
  double energy_gpu_j = kRdMissing, energy_cpu_j = kRdMissing;
  std::string energy_gpu_what, energy_cpu_what;
  std::string origin;            // "file" or "file:line", for messages
  std::string identity;          // origin with the file's real path (read_rd_points): one point named twice, by
                                 // two paths or specs, has one identity
};

enum class RdFormat { kUnknown, kCsv, kStatsFile, kJmStats, kJmLog, kConsoleLog };
const char* rd_format_name(RdFormat f);

// Row filter of a spec: column KEY equals VALUE (exact, after trimming) or contains TEXT (substring).
struct RdFilter {
  std::string key, value;
  bool substring = false;
};

// Reads every point named by `spec`. Throws RdInputError with one line (file, line, what was expected).
std::vector<RdPoint> read_rd_points(const std::string& spec);

// ---- Pieces, exposed for tests and for rdsweep ----

RdFormat detect_rd_format(const std::string& text);
// Parses text of a known format; `name` is used in messages and origins.
std::vector<RdPoint> parse_rd_text(const std::string& text, RdFormat format, const std::string& name,
                                   const std::vector<RdFilter>& filters);
// The summary point of a StatsFile, or false with *why ("no summary line", "line 3: ...") when it is incomplete or
// unreadable. Never throws: rdsweep uses it to decide whether a point must be encoded again.
bool read_stats_summary(const std::string& path, RdPoint* out, std::string* why);
// Splits "PATH#k=v,k~t" into the path and its filters. A '#' that is part of an existing file name is kept.
std::string split_rd_spec(const std::string& spec, std::vector<RdFilter>* filters);
// One CSV line into fields (double quotes protect commas; "" inside quotes is a quote).
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace gme
