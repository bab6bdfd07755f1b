// bin/lencod: the JM 19.0-compatible command-line encoder.
//   parse configuration -> open input (size/frame count checked up front) -> create outputs under temporary names
//   -> construct Encoder -> read, push, pull, write every picture (stream, reconstruction, statistics)
//   -> rename outputs.
// Any error ends in one line "lencod: error: ..." on stderr, exit status 1, and no output file left behind
// (OutputFile removes its temporary file unless committed).
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/energy.h"
#include "common/output_file.h"
#include "common/yuv_io.h"
#include "encoder/encoder.h"
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

void check_distinct_files(const EncoderParams& p) {
  struct Named { const char* key; const std::string* name; };
  const Named files[] = {{"InputFile", &p.input_file}, {"OutputFile", &p.output_file},
                         {"ReconFile", &p.recon_file}, {"StatsFile", &p.stats_file}};
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = i + 1; j < 4; ++j) {
      const std::string& a = *files[i].name;
      const std::string& b = *files[j].name;
      if (a.empty() || b.empty()) continue;
      // Same text, or two names of one existing file ("a.yuv" and "./a.yuv").
      struct stat sa, sb;
      const bool same = a == b || (stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 &&
                                   sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
      if (same)
        fail(std::string(files[i].key) + " '" + a + "' and " + files[j].key + " '" + b +
             "' name the same file: expected different files");
    }
  }
}

void print_parameters(const EncoderParams& p, std::ostream& o) {
  const char* metric[3] = {"SAD", "SSE", "Hadamard SAD"};
  char b[256];
  o << "------------------------------- gme264 (JM 19.0 compatible) -----------------\n";
  o << " Input YUV file                    : " << p.input_file << " \n";
  o << " Output H.264 bitstream            : " << p.output_file << " \n";
  if (!p.recon_file.empty()) o << " Output YUV file                   : " << p.recon_file << " \n";
  o << " YUV Format                        : YUV 4:2:0 \n";
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
  std::cout << "Setting Default Parameters...\n";
  for (const std::string& s : cl.sources)
    std::cout << (s.rfind("-p ", 0) == 0 ? "Parsing command line string '" + s.substr(3) + "'"
                                         : "Parsing Configfile " + s)
              << "\n";
  std::cout.flush();
  for (const std::string& w : cl.warnings) std::cerr << "lencod: warning: " << w << "\n";
  EncoderParams p = cl.params;
  check_distinct_files(p);

  // ---- Input: open and check its length before anything is written or encoded.
  std::unique_ptr<FrameReader> reader =
      open_frame_reader(p.input_file, p.source_width, p.source_height, p.input_header_length);
  if (reader->format() == InputFormat::Y4m) {
    p.source_width = reader->width();
    p.source_height = reader->height();
    if (reader->frame_rate() > 0) p.frame_rate = reader->frame_rate();
  }
  const int64_t count = reader->count_frames();
  if (p.frames_to_encode == -1) {
    if (count < 0)
      fail("FramesToBeEncoded = -1 needs the number of frames in '" + p.input_file +
           "', which a gzip input cannot tell: set FramesToBeEncoded");
    const int64_t n = codable_frames(count, p.start_frame, p.frame_skip);
    if (n < 1)
      fail("input '" + p.input_file + "' has no frame to encode: found " + std::to_string(count) +
           " frames, StartFrame = " + std::to_string(p.start_frame));
    resolve_frame_count(p, static_cast<int>(n));
  } else if (count >= 0 && codable_frames(count, p.start_frame, p.frame_skip) < p.frames_to_encode) {
    fail(shorter_input_message(p, count));
  }

  // ---- Outputs under temporary names: an unwritable path fails here, before encoding.
  OutputFile stream(p.output_file, "OutputFile");
  std::unique_ptr<OutputFile> recon, stats;
  if (!p.recon_file.empty()) recon = std::make_unique<OutputFile>(p.recon_file, "ReconFile");
  if (!p.stats_file.empty()) stats = std::make_unique<OutputFile>(p.stats_file, "StatsFile");

  print_parameters(p, std::cout);
  Encoder encoder(p, make_picture_search);
  Report report(p, std::cout, stats.get(), encoder.dsp());
  report.print_header(encoder.integer_me_path_so_far());  // GPU start-up overlaps the first pictures

  // read -> push -> pull -> write: the encoder holds pictures while the GPU starts and hands them out in order.
  EncodedPicture coded;
  auto write_coded = [&] {
    while (encoder.pull(&coded)) {
      stream.write(coded.bytes.data(), coded.bytes.size());
      if (recon) write_cropped_yuv(*coded.recon, *recon);
      report.add_picture(coded.user_index, coded.result, *coded.source, *coded.recon, coded.result.times.total,
                         coded.mbs.data(), static_cast<int>(coded.mbs.size()));
    }
  };
  for (int k = 0; k < p.frames_to_encode; ++k) {
    const int64_t index = p.start_frame + static_cast<int64_t>(k) * (p.frame_skip + 1);
    Frame src;
    if (!reader->read_frame(index, src)) {
      // Only a gzip input gets here (the others were counted up front): its length is known now.
      const int64_t found = reader->count_frames();
      fail(found >= 0 ? shorter_input_message(p, found)
                      : "input '" + p.input_file + "' ended before frame " + std::to_string(index));
    }
    encoder.push(std::move(src), index);
    write_coded();
  }
  encoder.flush();
  write_coded();
  const double total_s = seconds_since(t_start);
  report.add_summary_members(
      energy_json_members(energy.stop(p.gpu_device, encoder.integer_me_path().rfind("gpu:", 0) == 0)));
  report.finish(total_s, encoder.integer_me_path());

  stream.commit();
  if (recon) recon->commit();
  if (stats) stats->commit();
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
  gme::remove_temp_files_on_signal();  // Ctrl-C must not leave "<name>.tmp-<pid>" files behind either
  try {
    return gme::run(argc, argv);
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
