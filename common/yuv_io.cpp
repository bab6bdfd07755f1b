#include "common/yuv_io.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/output_file.h"

namespace gme {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

void check_size(const std::string& path, int w, int h, const char* source) {
  if (w <= 0 || h <= 0 || w % 2 || h % 2)
    fail("input '" + path + "': size " + std::to_string(w) + "x" + std::to_string(h) + " (" + source +
         ") is not supported: expected even width and height > 0 (4:2:0)");
}

int64_t frame_bytes(int w, int h) { return static_cast<int64_t>(w) * h + 2 * static_cast<int64_t>(w / 2) * (h / 2); }

// Copies one packed visible-size 4:2:0 picture into the frame and pads it.
void unpack(const uint8_t* src, Frame& f) {
  const int w = f.crop_width, h = f.crop_height;
  for (int y = 0; y < h; ++y, src += w) std::memcpy(f.plane[0].row(y), src, w);
  for (int c = 1; c <= 2; ++c)
    for (int y = 0; y < h / 2; ++y, src += w / 2) std::memcpy(f.plane[c].row(y), src, w / 2);
  pad_to_coded_size(f);
}

class RawReader : public FrameReader {
 public:
  RawReader(const std::string& path, int w, int h, int header) : header_(header) {
    path_ = path;
    format_ = InputFormat::Raw;
    check_size(path, w, h, "SourceWidth x SourceHeight");
    width_ = w;
    height_ = h;
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) fail("cannot open input file '" + path + "' (InputFile): " + std::strerror(errno));
    buf_.resize(frame_bytes(w, h));
  }
  ~RawReader() override { std::fclose(f_); }

  int64_t count_frames() override {
    struct stat st;
    if (fstat(fileno(f_), &st) != 0) fail("cannot read input file '" + path_ + "': " + std::strerror(errno));
    const int64_t data = static_cast<int64_t>(st.st_size) - header_;
    return data > 0 ? data / frame_bytes(width_, height_) : 0;
  }

  bool read_frame(int64_t index, Frame& f) override {
    const int64_t n = frame_bytes(width_, height_);
    if (fseeko(f_, static_cast<off_t>(header_ + index * n), SEEK_SET) != 0)
      fail("cannot seek in input file '" + path_ + "': " + std::strerror(errno));
    const size_t got = std::fread(buf_.data(), 1, buf_.size(), f_);
    if (got != buf_.size()) {
      if (std::ferror(f_)) fail("cannot read input file '" + path_ + "': " + std::strerror(errno));
      return false;
    }
    alloc_frame_for(f, width_, height_);
    unpack(buf_.data(), f);
    return true;
  }

 private:
  std::FILE* f_ = nullptr;
  int64_t header_;
  std::vector<uint8_t> buf_;
};

class GzipReader : public FrameReader {
 public:
  GzipReader(const std::string& path, int w, int h, int header) : header_(header) {
    path_ = path;
    format_ = InputFormat::Gzip;
    check_size(path, w, h, "SourceWidth x SourceHeight");
    width_ = w;
    height_ = h;
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
      fail("cannot open input file '" + path + "' (InputFile): " + std::strerror(errno));
    gz_ = gzopen(path.c_str(), "rb");
    if (!gz_) fail("cannot open input file '" + path + "' (InputFile): " + std::strerror(errno));
    buf_.resize(frame_bytes(w, h));
  }
  ~GzipReader() override { gzclose(gz_); }

  // Unknown without decompressing everything, until a read has hit the end of the stream.
  int64_t count_frames() override { return frames_at_eof_; }

  bool read_frame(int64_t index, Frame& f) override {
    const int64_t n = frame_bytes(width_, height_);
    const int64_t target = header_ + index * n;
    if (target < pos_) fail("internal: gzip input read backwards");
    // Skip forward by reading: gzseek would do the same, this keeps errors visible.
    while (pos_ < target) {
      const int64_t chunk = std::min<int64_t>(target - pos_, static_cast<int64_t>(buf_.size()));
      const int got = gzread(gz_, buf_.data(), static_cast<unsigned>(chunk));
      if (got < 0) gz_fail();
      if (got == 0) return at_eof();
      pos_ += got;
    }
    size_t have = 0;
    while (have < buf_.size()) {
      const int got = gzread(gz_, buf_.data() + have, static_cast<unsigned>(buf_.size() - have));
      if (got < 0) gz_fail();
      if (got == 0) break;
      have += static_cast<size_t>(got);
    }
    pos_ += static_cast<int64_t>(have);
    if (have != buf_.size()) return at_eof();
    alloc_frame_for(f, width_, height_);
    unpack(buf_.data(), f);
    return true;
  }

 private:
  bool at_eof() {
    const int64_t data = pos_ - header_;
    frames_at_eof_ = data > 0 ? data / frame_bytes(width_, height_) : 0;
    return false;
  }
  [[noreturn]] void gz_fail() {
    int code = 0;
    const char* msg = gzerror(gz_, &code);
    fail("cannot read gzip input file '" + path_ + "': " + (msg ? msg : "error"));
  }
  gzFile gz_ = nullptr;
  int64_t header_;
  int64_t pos_ = 0;  // uncompressed bytes consumed
  int64_t frames_at_eof_ = -1;
  std::vector<uint8_t> buf_;
};

class Y4mReader : public FrameReader {
 public:
  explicit Y4mReader(const std::string& path) {
    path_ = path;
    format_ = InputFormat::Y4m;
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) fail("cannot open input file '" + path + "' (InputFile): " + std::strerror(errno));
    std::string header;
    if (!read_line(&header, 4096) || header.compare(0, 10, "YUV4MPEG2 ") != 0)
      fail("input '" + path + "' is not a YUV4MPEG2 file: expected a 'YUV4MPEG2 ' header line");
    std::string colour = "420jpeg";
    size_t pos = 10;
    while (pos < header.size()) {
      size_t end = header.find(' ', pos);
      if (end == std::string::npos) end = header.size();
      const std::string tok = header.substr(pos, end - pos);
      pos = end + 1;
      if (tok.empty()) continue;
      switch (tok[0]) {
        case 'W': width_ = std::atoi(tok.c_str() + 1); break;
        case 'H': height_ = std::atoi(tok.c_str() + 1); break;
        case 'C': colour = tok.substr(1); break;
        case 'F': {
          long num = 0, den = 0;
          if (std::sscanf(tok.c_str() + 1, "%ld:%ld", &num, &den) == 2 && num > 0 && den > 0)
            fps_ = static_cast<double>(num) / den;
          break;
        }
        default: break;  // I (interlacing), A (aspect), X (comments): no effect on the samples
      }
    }
    if (colour != "420jpeg" && colour != "420" && colour != "420mpeg2" && colour != "420paldv")
      fail("input '" + path + "': Y4M colour space 'C" + colour +
           "' is not supported: expected 4:2:0 8-bit (C420, C420jpeg, C420mpeg2, C420paldv)");
    check_size(path, width_, height_, "Y4M header");
    buf_.resize(frame_bytes(width_, height_));
  }
  ~Y4mReader() override { std::fclose(f_); }

  int64_t count_frames() override {
    const off_t here = ftello(f_);
    const int64_t here_index = next_;
    int64_t n = next_;
    while (skip_frame()) ++n;
    std::clearerr(f_);
    fseeko(f_, here, SEEK_SET);
    next_ = here_index;
    return n;
  }

  bool read_frame(int64_t index, Frame& f) override {
    if (index < next_) fail("internal: y4m input read backwards");
    while (next_ < index)
      if (!skip_frame()) return false;
    if (!read_frame_header()) return false;
    if (std::fread(buf_.data(), 1, buf_.size(), f_) != buf_.size()) return false;
    ++next_;
    alloc_frame_for(f, width_, height_);
    unpack(buf_.data(), f);
    return true;
  }

 private:
  bool read_line(std::string* line, size_t max) {
    line->clear();
    int c;
    while ((c = std::fgetc(f_)) != EOF && c != '\n') {
      line->push_back(static_cast<char>(c));
      if (line->size() > max) return false;
    }
    return c == '\n';
  }
  bool read_frame_header() {
    std::string line;
    if (!read_line(&line, 4096)) return false;
    if (line.compare(0, 5, "FRAME") != 0)
      fail("input '" + path_ + "': frame " + std::to_string(next_) + " does not start with 'FRAME' (corrupt Y4M)");
    return true;
  }
  bool skip_frame() {
    if (!read_frame_header()) return false;
    const off_t here = ftello(f_);
    struct stat st;
    fstat(fileno(f_), &st);
    if (here + static_cast<off_t>(buf_.size()) > st.st_size) return false;
    fseeko(f_, here + static_cast<off_t>(buf_.size()), SEEK_SET);
    ++next_;
    return true;
  }
  std::FILE* f_ = nullptr;
  int64_t next_ = 0;  // index of the frame the file position is at
  std::vector<uint8_t> buf_;
};

}  // namespace

InputFormat input_format_from_name(const std::string& path) {
  if (ends_with(path, ".y4m")) return InputFormat::Y4m;
  if (ends_with(path, ".gz")) return InputFormat::Gzip;
  return InputFormat::Raw;
}

std::unique_ptr<FrameReader> open_frame_reader(const std::string& path, int width, int height, int header_length) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    fail("cannot open input file '" + path + "' (InputFile): it is a directory");
  switch (input_format_from_name(path)) {
    case InputFormat::Y4m: return std::make_unique<Y4mReader>(path);
    case InputFormat::Gzip: return std::make_unique<GzipReader>(path, width, height, header_length);
    case InputFormat::Raw: break;
  }
  return std::make_unique<RawReader>(path, width, height, header_length);
}

void alloc_frame_for(Frame& f, int visible_w, int visible_h) {
  const int cw = (visible_w + 15) & ~15, ch = (visible_h + 15) & ~15;
  if (f.width == cw && f.height == ch && f.crop_width == visible_w && f.crop_height == visible_h) return;
  f.alloc(cw, ch, visible_w, visible_h);
}

void pad_to_coded_size(Frame& f) {
  for (int c = 0; c < 3; ++c) {
    Plane& p = f.plane[c];
    const int vw = c ? f.crop_width / 2 : f.crop_width;
    const int vh = c ? f.crop_height / 2 : f.crop_height;
    for (int y = 0; y < vh; ++y) {
      uint8_t* r = p.row(y);
      std::memset(r + vw, r[vw - 1], p.width - vw);
    }
    for (int y = vh; y < p.height; ++y) std::memcpy(p.row(y), p.row(vh - 1), p.width);
  }
}

void append_cropped_yuv(const Frame& f, std::vector<uint8_t>& out) {
  const int w = f.crop_width, h = f.crop_height;
  for (int y = 0; y < h; ++y) out.insert(out.end(), f.plane[0].row(y), f.plane[0].row(y) + w);
  for (int c = 1; c <= 2; ++c)
    for (int y = 0; y < h / 2; ++y) out.insert(out.end(), f.plane[c].row(y), f.plane[c].row(y) + w / 2);
}

void write_cropped_yuv(const Frame& f, OutputFile& out) {
  std::vector<uint8_t> buf;
  buf.reserve(static_cast<size_t>(frame_bytes(f.crop_width, f.crop_height)));
  append_cropped_yuv(f, buf);
  out.write(buf.data(), buf.size());
}

}  // namespace gme
