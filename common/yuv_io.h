// Source frame readers and the reconstruction writer.
//   raw  (.yuv and anything else): planar 4:2:0 8-bit (I420), InputHeaderLength bytes skipped at the start;
//   y4m  (.y4m): YUVMPEG2 with 4:2:0 8-bit chroma (C420, C420jpeg, C420mpeg2, C420paldv or no C tag); size and
//         frame rate come from its header;
//   gz   (.gz): gzip-compressed raw planar 4:2:0 (zlib), InputHeaderLength counted in uncompressed bytes.
// Frames are read into a Frame whose coded size is the visible size rounded up to 16; the extra columns and rows
// repeat the last visible column/row (edge replication), which the SPS cropping then removes again.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/frame.h"

namespace gme {

class OutputFile;

enum class InputFormat { Raw, Y4m, Gzip };

class FrameReader {
 public:
  virtual ~FrameReader() = default;
  int width() const { return width_; }    // visible size
  int height() const { return height_; }
  double frame_rate() const { return fps_; }  // from the file header; 0 when the format has none
  InputFormat format() const { return format_; }
  const std::string& path() const { return path_; }

  // Frames the input holds, or -1 when it cannot be known without decoding (gzip).
  virtual int64_t count_frames() = 0;
  // Reads source frame `index` (0-based position in the file). Indices must not decrease between calls.
  // Returns false if the input ends before that frame; throws std::runtime_error on a read or format error.
  virtual bool read_frame(int64_t index, Frame& f) = 0;

 protected:
  int width_ = 0, height_ = 0;
  double fps_ = 0;
  InputFormat format_ = InputFormat::Raw;
  std::string path_;
};

InputFormat input_format_from_name(const std::string& path);

// Opens `path`. width/height/header_length are used for raw and gzip input (the y4m header gives the size).
// Throws std::runtime_error with a one-line message (missing file, bad header, unsupported chroma format, odd size).
std::unique_ptr<FrameReader> open_frame_reader(const std::string& path, int width, int height, int header_length);

// Allocates `f` for a visible size (coded size rounded up to 16).
void alloc_frame_for(Frame& f, int visible_w, int visible_h);

// Fills the coded area outside the visible one by replicating the last visible column and row, every plane.
void pad_to_coded_size(Frame& f);

// Appends the visible area of `f` (Y, then Cb, then Cr, no padding) to `out` as raw planar 4:2:0.
void append_cropped_yuv(const Frame& f, std::vector<uint8_t>& out);
void write_cropped_yuv(const Frame& f, OutputFile& out);

}  // namespace gme
