// Source frame readers and the reconstruction writer.
//   raw  planar 4:2:0 8-bit (I420), InputHeaderLength bytes skipped at the start;
//   y4m  YUVMPEG2 with 4:2:0 8-bit chroma (C420, C420jpeg, C420mpeg2, C420paldv or no C tag), progressive (Ip, or
//        I? / no I tag, taken as progressive); size (2..16384, even) and frame rate come from its header;
//   gz   gzip-compressed raw planar 4:2:0 (zlib), InputHeaderLength counted in uncompressed bytes.
// The format: a name ending in .gz is gzip; otherwise the content decides (a file starting "YUV4MPEG2 " is y4m,
// whatever its name, anything else raw). "-" reads the standard input; pipes and other files that cannot seek
// (/dev/stdin, a FIFO) are read front to back, so their number of frames is only known at their end.
// A raw input whose size is not a whole number of frames, and a y4m input whose last frame is cut short, are
// errors: both mean a wrong frame size or a damaged file, never a frame to drop silently.
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

// Largest width and height of a picture (SourceWidth/SourceHeight's range, and a y4m header's).
constexpr int kMaxPictureSide = 16384;

class FrameReader {
 public:
  virtual ~FrameReader() = default;
  int width() const { return width_; }    // visible size
  int height() const { return height_; }
  double frame_rate() const { return fps_; }  // from the file header; 0 when the format has none
  InputFormat format() const { return format_; }
  const std::string& path() const { return path_; }

  // Frames the input holds, or -1 when it cannot be known before the end is read (gzip, pipes). Throws when the
  // input ends inside a frame.
  virtual int64_t count_frames() = 0;
  // Reads source frame `index` (0-based position in the file). Indices must not decrease between calls.
  // Returns false if the input ends before that frame; throws std::runtime_error on a read or format error and
  // when the input ends inside a frame.
  virtual bool read_frame(int64_t index, Frame& f) = 0;

 protected:
  int width_ = 0, height_ = 0;
  double fps_ = 0;
  InputFormat format_ = InputFormat::Raw;
  std::string path_;
};

// True for the names of the standard input ("-"); /dev/stdin is an ordinary (non-seekable) path.
bool is_stdin_name(const std::string& path);

// Opens `path`. width/height/header_length are used for raw and gzip input (the y4m header gives the size).
// Throws std::runtime_error with a one-line message (missing file, bad header, unsupported chroma format,
// interlacing, size outside 2..16384 or odd, a raw size that is not a whole number of frames).
std::unique_ptr<FrameReader> open_frame_reader(const std::string& path, int width, int height, int header_length);

// Allocates `f` for a visible size (coded size rounded up to 16).
void alloc_frame_for(Frame& f, int visible_w, int visible_h);

// Fills the coded area outside the visible one by replicating the last visible column and row, every plane.
void pad_to_coded_size(Frame& f);

// Appends the visible area of `f` (Y, then Cb, then Cr, no padding) to `out` as raw planar 4:2:0.
void append_cropped_yuv(const Frame& f, std::vector<uint8_t>& out);
void write_cropped_yuv(const Frame& f, OutputFile& out);

// A YUV4MPEG2 reconstruction: the stream header once (W, H, F as a ratio, Ip, A1:1, C420jpeg), then "FRAME" and
// the cropped picture for each frame. True for names ending in ".y4m".
bool is_y4m_name(const std::string& path);
void write_y4m_header(OutputFile& out, int width, int height, double frame_rate);
void write_y4m_frame(const Frame& f, OutputFile& out);

}  // namespace gme
