// bin/lencod: the JM 19.0-compatible command-line encoder.
//   parse configuration -> open input (size/frame count checked up front) -> create outputs under temporary names
//   -> construct Encoder -> read, push, pull, write every picture (stream, reconstruction, statistics)
//   -> commit the outputs together (common/output_file.h).
// Any error ends in "lencod: error: ..." on stderr (one line per problem: a configuration reports all of its bad
// values at once), exit status 1, no output file left behind and every existing file untouched. A signal (Ctrl-C)
// ends it with one line "lencod: interrupted at frame N of M; outputs removed".
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/energy.h"
#include "common/output_file.h"
#include "common/version.h"
#include "common/yuv_io.h"
#include "encoder/encoder.h"
#include "encoder/params_check.h"
#include "gpu/gpu_me.h"
#include "lencod/config.h"
#include "lencod/report.h"

namespace gme {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

// FramesToBeEncoded for an input whose length is only known at its end (a pipe, gzip): code until then.
constexpr int kUntilEnd = INT_MAX;

// Frames available for coding: source indices start, start + (skip + 1), ... below `count`.
int64_t codable_frames(int64_t count, int start, int skip) {
  if (count <= start) return 0;
  return (count - start - 1) / (skip + 1) + 1;
}

std::string shorter_input_message(const EncoderParams& p, int64_t found) {
  const int64_t needed = p.start_frame + static_cast<int64_t>(p.frames_to_encode - 1) * (p.frame_skip + 1) + 1;
  return "input '" + p.input_file + "' is shorter than requested: found " + std::to_string(found) +
         " frames, StartFrame = " + std::to_string(p.start_frame) + ", FramesToBeEncoded = " +
         std::to_string(p.frames_to_encode) + ", FrameSkip = " + std::to_string(p.frame_skip) + " need " +
         std::to_string(needed) + " frames";
}

// The name a file has or would have, with its folder resolved ("./o.264" and "o.264" are one file, existing or
// not); the name as given when the folder does not exist (opening it fails later, with a clear message).
std::string canonical_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  char* real = realpath(dir.c_str(), nullptr);
  if (!real) return path;
  const std::string name = std::string(real) + "/" + path.substr(slash == std::string::npos ? 0 : slash + 1);
  std::free(real);
  return name;
}

// Two files are one when both exist and are one regular file (device and inode: "a.yuv", "./a.yuv", a link), or
// when their resolved names are equal. Devices may be named twice (ReconFile = StatsFile = /dev/null).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  const bool a_exists = stat(a.c_str(), &sa) == 0, b_exists = stat(b.c_str(), &sb) == 0;
  return a_exists && b_exists ? S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
                              : canonical_name(a) == canonical_name(b);
}

// Every file lencod writes must differ from every other file it reads or writes: an output renamed over a
// configuration file or the input destroys it, and two outputs in one file mix their contents. The configuration
// files may be read twice (-d a.cfg -f a.cfg), as JM allows.
void check_distinct_files(const EncoderParams& p, const std::vector<ConfigFileRead>& configs) {
  struct Named {
    std::string label;  // "OutputFile", "configuration file (-f)"
    std::string name;
    bool written;
    bool config;
  };
  std::vector<Named> files = {{"InputFile", p.input_file, false, false},
                              {"OutputFile", p.output_file, true, false},
                              {"ReconFile", p.recon_file, true, false},
                              {"StatsFile", p.stats_file, true, false}};
  // With JM's text statistics every run also appends a row to ./log.dat (as JM does).
  if (!p.stats_file.empty() && Report::stats_is_jm_text(p))
    files.push_back({"the run log (JM's log.dat, written with a .dat StatsFile)", "log.dat", true, false});
  for (const ConfigFileRead& c : configs) files.push_back({"configuration file (" + c.how + ")", c.path, false, true});
  for (size_t i = 0; i < files.size(); ++i) {
    for (size_t j = i + 1; j < files.size(); ++j) {
      const Named& a = files[i];
      const Named& b = files[j];
      if (a.config && b.config) continue;
      if (a.name.empty() || b.name.empty() || is_stdin_name(a.name) || is_stdin_name(b.name)) continue;
      if (same_file(a.name, b.name))
        fail(a.label + " '" + a.name + "' and " + b.label + " '" + b.name +
             "' name the same file: expected different files");
    }
  }
}

void warn(const std::string& line) { std::cerr << "lencod: warning: " << line << "\n"; }

std::string fmt_num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// Where a key's value came from, for a message ("default" when no file or -p set it).
std::string origin_of(const std::map<std::string, std::string>& origins, const char* key) {
  const auto it = origins.find(key);
  return it == origins.end() ? std::string("default") : it->second;
}

// A YUV4MPEG2 header states the size and the rate, and those are what get coded. A different value set in a
// configuration file or by -p is replaced, which the user learns here rather than from a size they did not ask for.
void warn_y4m_header_wins(const EncoderParams& p, const FrameReader& r,
                          const std::map<std::string, std::string>& origins) {
  const std::string header = "the YUV4MPEG2 header of '" + p.input_file + "'";
  std::string size_keys;
  int differing = 0;
  const struct { const char* key; int value, header; } sizes[] = {{"SourceWidth", p.source_width, r.width()},
                                                                  {"SourceHeight", p.source_height, r.height()}};
  for (const auto& k : sizes) {
    if (!origins.count(k.key) || k.value == k.header) continue;
    size_keys += (size_keys.empty() ? "" : " and ") + std::string(k.key) + " = " + std::to_string(k.value) + " (" +
                 origin_of(origins, k.key) + ")";
    ++differing;
  }
  if (differing > 0)
    warn(size_keys + (differing > 1 ? " differ" : " differs") + " from " + header + ", " + std::to_string(r.width()) +
         "x" + std::to_string(r.height()) + ": the header's size is coded");
  // Rates within 1e-4 are one rate (29.97 and the header's 30000:1001).
  if (origins.count("FrameRate") && r.frame_rate() > 0 &&
      std::fabs(p.frame_rate - r.frame_rate()) > 1e-4 * r.frame_rate())
    warn("FrameRate = " + fmt_num(p.frame_rate) + " (" + origin_of(origins, "FrameRate") + ") differs from " + header +
         ", " + fmt_num(r.frame_rate()) + ": the header's rate is used");
  if (p.input_header_length != 0)
    warn("InputHeaderLength = " + std::to_string(p.input_header_length) + " (" +
         origin_of(origins, "InputHeaderLength") + ") is ignored: input '" + p.input_file +
         "' is YUV4MPEG2, whose header tells where its frames start");
}

// Slice settings that are valid but cannot mean what they say, once the picture size is known.
void warn_degenerate_slices(const EncoderParams& p, const std::map<std::string, std::string>& origins) {
  const int64_t mbs = static_cast<int64_t>((p.source_width + 15) / 16) * ((p.source_height + 15) / 16);
  const std::string arg = "SliceArgument = " + std::to_string(p.slice_argument) + " (" +
                          origin_of(origins, "SliceArgument") + ")";
  if (p.slice_mode == 1 && p.slice_argument > mbs)
    warn("SliceMode = 1 with " + arg + ": more macroblocks than the picture's " + std::to_string(mbs) +
         ", so every picture is one slice, as with SliceMode = 0");
  // A slice header takes 15 bits at the least and a second macroblock (or a skip run of 2) pushes the slice past
  // 2 bytes: below 3 bytes every slice holds exactly one macroblock.
  if (p.slice_mode == 2 && p.slice_argument < 3)
    warn("SliceMode = 2 with " + arg + " bytes: a slice header and a second macroblock take 3 bytes at the least, "
         "so every slice holds one macroblock (" + std::to_string(mbs) + " slices per picture)");
}

// Settings that act only while another key is on: a value other than the default, set while that key is off,
// changes nothing (as in JM), which the user learns here instead of from streams that do not differ.
void warn_inert_settings(const EncoderParams& p, const std::map<std::string, std::string>& origins) {
  const EncoderParams d;
  struct Setting {
    const char* key;
    bool differs;
    std::string value;
  };
  auto warn_set = [&](const std::vector<Setting>& settings, const char* switch_key, const std::string& why) {
    std::string list;
    int n = 0;
    for (const Setting& st : settings) {
      if (!st.differs || !origins.count(st.key)) continue;
      list += (n++ ? ", " : "") + std::string(st.key) + " = " + st.value + " (" + origin_of(origins, st.key) + ")";
    }
    if (n > 0)
      warn(list + (n > 1 ? " have" : " has") + " no effect with " + switch_key + " = 0 (" +
           origin_of(origins, switch_key) + "): " + why);
  };
  auto i = [](int v) { return std::to_string(v); };
  if (!p.df_parameters_flag)
    warn_set({{"DFDisableRefISlice", p.df_disable_idc[0] != d.df_disable_idc[0], i(p.df_disable_idc[0])},
              {"DFAlphaRefISlice", p.df_alpha[0] != d.df_alpha[0], i(p.df_alpha[0])},
              {"DFBetaRefISlice", p.df_beta[0] != d.df_beta[0], i(p.df_beta[0])},
              {"DFDisableRefPSlice", p.df_disable_idc[1] != d.df_disable_idc[1], i(p.df_disable_idc[1])},
              {"DFAlphaRefPSlice", p.df_alpha[1] != d.df_alpha[1], i(p.df_alpha[1])},
              {"DFBetaRefPSlice", p.df_beta[1] != d.df_beta[1], i(p.df_beta[1])}},
             "DFParametersFlag",
             "the slice headers carry no deblocking parameters, so the standard filter runs (set DFParametersFlag = 1)");
  if (!p.adaptive_rounding)
    warn_set({{"AdaptRoundingFixed", p.adapt_rounding_fixed != d.adapt_rounding_fixed, i(p.adapt_rounding_fixed)},
              {"AdaptRndPeriod", p.adapt_rnd_period != d.adapt_rnd_period, i(p.adapt_rnd_period)},
              {"AdaptRndChroma", p.adapt_rnd_chroma != d.adapt_rnd_chroma, i(p.adapt_rnd_chroma)},
              {"AdaptRndWFactorIRef", p.adapt_rnd_wfactor_i_ref != d.adapt_rnd_wfactor_i_ref,
               i(p.adapt_rnd_wfactor_i_ref)},
              {"AdaptRndWFactorPRef", p.adapt_rnd_wfactor_p_ref != d.adapt_rnd_wfactor_p_ref,
               i(p.adapt_rnd_wfactor_p_ref)}},
             "AdaptiveRounding", "the fixed rounding offsets are used (set AdaptiveRounding = 1)");
}

void print_parameters(const EncoderParams& p, std::ostream& o) {
  const char* metric[3] = {"SAD", "SSE", "Hadamard SAD"};
  char b[256];
  o << "------------------------------- gme264 (JM 19.0 compatible) -----------------\n";
  o << " Version                           : " << version_string() << "\n";
  o << " CPU                               : " << cpu_description() << "\n";
  o << " Input YUV file                    : " << p.input_file << " \n";
  o << " Output H.264 bitstream            : " << p.output_file << " \n";
  if (!p.recon_file.empty()) o << " Output YUV file                   : " << p.recon_file << " \n";
  o << " YUV Format                        : YUV 4:2:0 \n";
  if (p.frames_to_encode == kUntilEnd)
    o << " Frames to be encoded              : all (until the end of the input)\n";
  else
    o << " Frames to be encoded              : " << p.frames_to_encode << "\n";
  std::snprintf(b, sizeof b, " Freq. for encoded bitstream       : %3.2f\n", p.frame_rate / (p.frame_skip + 1));
  o << b;
  o << " ME Metric for Refinement Level 0  : " << metric[p.me_distortion_fpel] << "\n";
  o << " ME Metric for Refinement Level 1  : " << metric[p.me_distortion_hpel] << "\n";
  o << " ME Metric for Refinement Level 2  : " << metric[p.me_distortion_qpel] << "\n";
  o << " Mode Decision Metric              : " << metric[p.md_distortion] << "\n";
  const int cw = (p.source_width + 15) & ~15, ch = (p.source_height + 15) & ~15;
  std::snprintf(b, sizeof b, " Image format                      : %dx%d (%dx%d)\n", p.source_width,
                p.source_height, cw, ch);
  o << b;
  o << " Search range                      : " << p.search_range << "\n";
  o << " Total number of references        : " << p.num_ref_frames << "\n";
  o << " Profile/Level IDC                 : (" << p.profile_idc << "," << p.level_idc << ")\n";
  o << " Entropy coding method             : CAVLC\n";
  o << " RD-optimized mode decision        : " << (p.rd_optimization ? "used" : "not used") << "\n";
  o << " QP (I, P)                         : (" << p.qp_i << ", " << p.qp_p << ")\n";
  o << " Intra period / IDR period         : " << p.intra_period << " / " << p.idr_period << "\n";
  o << " GPU integer ME                    : " << (p.gpu_integer_me ? "on" : "off") << "\n";
}

int run(int argc, const char* const* argv) {
  EnergyMeter energy;  // counters read before the clock starts, so loading NVML is not in the encode's time
  const Clock::time_point t_start = Clock::now();
  CommandLine cl = parse_command_line(argc, argv);
  if (cl.help) {
    print_help(std::cout);
    return 0;
  }
  if (cl.version) {
    std::cout << "lencod " << version_string() << "\n";
    return 0;
  }
  std::cout << "Setting Default Parameters...\n";
  for (const std::string& s : cl.sources)
    std::cout << (s.rfind("-p ", 0) == 0 ? "Parsing command line string '" + s.substr(3) + "'"
                                         : "Parsing Configfile " + s)
              << "\n";
  std::cout.flush();
  for (const std::string& w : cl.warnings) std::cerr << "lencod: warning: " << w << "\n";
  EncoderParams p = cl.params;
  check_distinct_files(p, cl.config_files);

  // ---- Input: open and check its length before anything is written or encoded.
  std::unique_ptr<FrameReader> reader =
      open_frame_reader(p.input_file, p.source_width, p.source_height, p.input_header_length);
  if (reader->format() == InputFormat::Y4m) {
    warn_y4m_header_wins(p, *reader, cl.origins);
    p.source_width = reader->width();
    p.source_height = reader->height();
    if (reader->frame_rate() > 0) p.frame_rate = reader->frame_rate();
  }
  warn_degenerate_slices(p, cl.origins);
  for (const std::string& w : level_warnings(p)) warn(w);
  warn_inert_settings(p, cl.origins);
  const int64_t count = reader->count_frames();
  if (p.frames_to_encode == -1 && count >= 0) {
    const int64_t n = codable_frames(count, p.start_frame, p.frame_skip);
    if (n < 1)
      fail("input '" + p.input_file + "' has no frame to encode: found " + std::to_string(count) +
           " frames, StartFrame = " + std::to_string(p.start_frame));
    if (n > kUntilEnd - 1) fail("input '" + p.input_file + "' has more frames than lencod can count");
    resolve_frame_count(p, static_cast<int>(n));
  } else if (p.frames_to_encode == -1) {
    // A pipe or gzip: its length is known at its end. JM's automatic field sizes need it before the first picture.
    const struct { const char* key; int value; } derived[] = {{"Log2MaxFNumMinus4", p.log2_max_frame_num_minus4},
                                                              {"Log2MaxPOCLsbMinus4", p.log2_max_poc_lsb_minus4}};
    for (const auto& d : derived)
      if (d.value == -1)
        fail(std::string(d.key) + " = -1 derives its size from the number of frames, which input '" + p.input_file +
             "' cannot tell before its end (a pipe or gzip): set FramesToBeEncoded or " + d.key);
    p.frames_to_encode = kUntilEnd;
  } else if (count >= 0 && codable_frames(count, p.start_frame, p.frame_skip) < p.frames_to_encode) {
    fail(shorter_input_message(p, count));
  }
  const bool until_end = p.frames_to_encode == kUntilEnd;

  // ---- Outputs under temporary names: an unwritable path fails here, before encoding.
  OutputFile stream(p.output_file, "OutputFile");
  std::unique_ptr<OutputFile> recon, stats;
  if (!p.recon_file.empty()) recon = std::make_unique<OutputFile>(p.recon_file, "ReconFile");
  if (!p.stats_file.empty()) stats = std::make_unique<OutputFile>(p.stats_file, "StatsFile");
  const bool recon_y4m = recon && is_y4m_name(p.recon_file);
  if (recon_y4m) write_y4m_header(*recon, p.source_width, p.source_height, p.frame_rate / (p.frame_skip + 1));

  print_parameters(p, std::cout);
  Encoder encoder(p, make_picture_search);
  Report report(p, std::cout, stats.get(), encoder.dsp());
#ifdef GME_HAVE_CUDA
  report.print_header(encoder.integer_me_path_so_far());  // GPU start-up overlaps the first pictures
#else
  report.print_header(encoder.integer_me_path());  // no CUDA: known at once (the twin), never "starting"
#endif

  // read -> push -> pull -> write: the encoder holds pictures while the GPU starts and hands them out in order.
  const int64_t total = until_end ? -1 : p.frames_to_encode;
  int64_t done = 0;
  set_interrupt_progress(done, total);
  EncodedPicture coded;
  auto write_one = [&] {
    stream.write(coded.bytes.data(), coded.bytes.size());
    if (recon_y4m) write_y4m_frame(*coded.recon, *recon);
    else if (recon) write_cropped_yuv(*coded.recon, *recon);
    // Counted before its console line: a signal arriving once the line is out reports this picture as done.
    set_interrupt_progress(++done, total);
    report.add_picture(coded.user_index, coded.result, *coded.source, *coded.recon, coded.result.times.total,
                       coded.mbs.data(), static_cast<int>(coded.mbs.size()));
    coded = EncodedPicture();  // its reconstruction goes back to the encoder's pool now
  };
  auto write_coded = [&] {
    while (encoder.pull(&coded)) write_one();
  };
  int pushed = 0;
  for (; pushed < p.frames_to_encode; ++pushed) {
    const int64_t index = p.start_frame + static_cast<int64_t>(pushed) * (p.frame_skip + 1);
    std::shared_ptr<Frame> src = encoder.input_frame();  // the encoder's own: its memory is reused, page-locked
    if (!reader->read_frame(index, *src)) {
      if (until_end) break;
      // Only an input of unknown length gets here (the others were counted up front): its length is known now.
      const int64_t found = reader->count_frames();
      fail(found >= 0 ? shorter_input_message(p, found)
                      : "input '" + p.input_file + "' ended before frame " + std::to_string(index));
    }
    encoder.push(std::move(src), index);
    write_coded();
  }
  if (until_end) {
    if (pushed == 0)
      fail("input '" + p.input_file + "' has no frame to encode: found " +
           std::to_string(std::max<int64_t>(0, reader->count_frames())) + " frames, StartFrame = " +
           std::to_string(p.start_frame));
    p.frames_to_encode = pushed;  // what the report states
  }
  while (encoder.drain(&coded)) write_one();
  // A raw stream (a pipe) is checked for whole frames only at its end: one left unread may have been cut at a
  // wrong size, which the coded pictures would not show.
  if (reader->format() == InputFormat::Raw && reader->count_frames() < 0)
    warn("input '" + p.input_file + "' is a raw stream whose end was not read, so its length could not confirm " +
         std::to_string(p.source_width) + "x" + std::to_string(p.source_height) +
         " frames (SourceWidth, SourceHeight, InputHeaderLength): check them, or encode it to its end "
         "(FramesToBeEncoded = -1)");
  const double total_s = seconds_since(t_start);
  report.add_summary_members(
      energy_json_members(energy.stop(p.gpu_device, encoder.integer_me_path().rfind("gpu:", 0) == 0)));
  report.finish(total_s, encoder.integer_me_path());

  commit_outputs({&stream, recon.get(), stats.get()});
  // As JM, every run with JM's text stats appends its row to ./log.dat; the outputs are complete by now, so a
  // failure is a warning.
  if (stats && Report::stats_is_jm_text(p)) {
    try {
      append_jm_log("log.dat", report.jm_log_row());
    } catch (const std::exception& e) {
      std::cerr << "lencod: warning: " << e.what() << "\n";
    }
  }
  return 0;
}

}  // namespace
}  // namespace gme

int main(int argc, char** argv) {
  gme::set_default_cuda_connections();  // before any thread and any CUDA call (gpu/gpu_me.h)
  // SIGPIPE/SIGXFSZ become write errors; Ctrl-C and kill leave no temporary file and say where they stopped.
  gme::install_signal_handlers("lencod");
  try {
    return gme::run(argc, argv);
  } catch (const gme::ConfigError& e) {
    std::cout.flush();
    for (const std::string& line : e.lines()) std::cerr << "lencod: error: " << line << "\n";
    std::cerr.flush();
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "lencod: error: " << e.what() << std::endl;
    return 1;
  } catch (...) {
    std::cout.flush();
    std::cerr << "lencod: error: unexpected internal error (non-standard exception)" << std::endl;
    return 1;
  }
}
