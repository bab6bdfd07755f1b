#include "common/yuv_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <stdexcept>

#include "common/output_file.h"

namespace gme {
namespace {

// File name suffixes are matched without case: clip.Y4M and CLIP.YUV.GZ are what they say.
bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != std::tolower(static_cast<unsigned char>(suffix[i])))
      return false;
  return true;
}

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

std::string system_error(int err) { return std::strerror(err); }

void check_size(const std::string& path, int w, int h, const char* source) {
  if (w < 2 || h < 2 || w > kMaxPictureSide || h > kMaxPictureSide || w % 2 || h % 2)
    fail("input '" + path + "': size " + std::to_string(w) + "x" + std::to_string(h) + " (" + source +
         ") is not supported: expected even width and height in [2, " + std::to_string(kMaxPictureSide) +
         "] (4:2:0)");
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

std::string thousands(int64_t v);

// ---- Byte sources: a file (seekable or not) or a gzip stream, read front to back.

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to n bytes; fewer only at the end of the input. Throws on a read error.
  virtual size_t read(void* dst, size_t n) = 0;
  // The next byte, or EOF.
  virtual int get() = 0;
  // Skips up to n bytes; returns how many were skipped (fewer only at the end).
  virtual int64_t skip(int64_t n) = 0;
  // Bytes consumed so far.
  int64_t position() const { return pos_; }
  // Total size in bytes, or -1 when it cannot be known before the end (pipes, gzip).
  int64_t size() const { return size_; }
  // Returns to an earlier position: only where size() >= 0.
  virtual void seek(int64_t pos) = 0;

 protected:
  // skip() for sources that cannot seek: reads and drops the bytes.
  int64_t skip_by_reading(int64_t n) {
    std::vector<uint8_t> scratch(static_cast<size_t>(std::min<int64_t>(n, 1 << 16)));
    int64_t done = 0;
    while (done < n) {
      const size_t got = read(scratch.data(), static_cast<size_t>(std::min<int64_t>(n - done, scratch.size())));
      if (got == 0) break;
      done += static_cast<int64_t>(got);
    }
    return done;
  }

  int64_t pos_ = 0;
  int64_t size_ = -1;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

class FileSource : public ByteSource {
 public:
  FileSource(const std::string& path, std::FILE* f) : path_(path), f_(f) {
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) size_ = static_cast<int64_t>(st.st_size);
  }

  // The first bytes, kept to be read again (format detection on a pipe, which cannot seek back).
  std::string peek(size_t n) {
    while (peeked_.size() < n) {
      const int c = std::fgetc(f_.get());
      if (c == EOF) break;
      peeked_.push_back(static_cast<char>(c));
    }
    check_error();
    return peeked_.substr(0, n);
  }

  size_t read(void* dst, size_t n) override {
    size_t got = 0;
    uint8_t* out = static_cast<uint8_t*>(dst);
    while (got < n && next_peeked_ < peeked_.size()) out[got++] = static_cast<uint8_t>(peeked_[next_peeked_++]);
    if (got < n) got += std::fread(out + got, 1, n - got, f_.get());
    check_error();
    pos_ += static_cast<int64_t>(got);
    return got;
  }

  int get() override {
    int c;
    if (next_peeked_ < peeked_.size()) {
      c = static_cast<unsigned char>(peeked_[next_peeked_++]);
    } else {
      c = std::fgetc(f_.get());
      check_error();
    }
    if (c != EOF) ++pos_;
    return c;
  }

  int64_t skip(int64_t n) override {
    if (size_ >= 0) {
      const int64_t from = pos_, to = std::max(pos_, std::min(size_, pos_ + n));
      seek(to);
      return to - from;
    }
    return skip_by_reading(n);
  }

  void seek(int64_t pos) override {
    if (size_ < 0) fail("internal: seek in input '" + path_ + "', which cannot seek");
    if (fseeko(f_.get(), static_cast<off_t>(pos), SEEK_SET) != 0)
      fail("cannot seek in input file '" + path_ + "': " + system_error(errno));
    next_peeked_ = peeked_.size();  // the peeked bytes are behind the file position; seek() replaces them
    pos_ = pos;
  }

 private:
  void check_error() {
    if (std::ferror(f_.get())) fail("cannot read input file '" + path_ + "': " + system_error(errno));
  }
  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> f_;
  std::string peeked_;
  size_t next_peeked_ = 0;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(const std::string& path, gzFile gz) : path_(path), gz_(gz) {}
  ~GzipSource() override { gzclose(gz_); }

  size_t read(void* dst, size_t n) override {
    size_t have = 0;
    uint8_t* out = static_cast<uint8_t*>(dst);
    while (have < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - have, 1u << 30));
      const int got = gzread(gz_, out + have, chunk);
      if (got < 0) gz_fail();
      if (got == 0) {
        // zlib ends a gzip stream that stops early like a whole one, and says so only in its error state.
        int code = Z_OK;
        gzerror(gz_, &code);
        if (code == Z_BUF_ERROR)
          fail("gzip input file '" + path_ + "' is cut short: it ends after " + thousands(pos_ + static_cast<int64_t>(have)) +
               " bytes uncompressed, inside its compressed data");
        break;
      }
      have += static_cast<size_t>(got);
    }
    pos_ += static_cast<int64_t>(have);
    return have;
  }

  int get() override {
    uint8_t c;
    return read(&c, 1) == 1 ? c : EOF;
  }

  int64_t skip(int64_t n) override {
    // Skip forward by reading: gzseek would do the same, this keeps errors visible.
    return skip_by_reading(n);
  }

  void seek(int64_t) override { fail("internal: seek in gzip input '" + path_ + "'"); }

 private:
  [[noreturn]] void gz_fail() {
    int code = 0;
    const char* msg = gzerror(gz_, &code);
    fail("cannot read gzip input file '" + path_ + "': " + (msg ? msg : "error"));
  }
  std::string path_;
  gzFile gz_;
};

// Reads n bytes into buf, growing it as the bytes arrive: a stream that ends early (a pipe whose y4m header
// promises a 16384x16384 picture) never costs more memory than it delivered. Returns the bytes read.
size_t read_growing(ByteSource& src, std::vector<uint8_t>& buf, size_t n) {
  size_t have = 0;
  while (have < n) {
    const size_t want = std::min(n, std::max<size_t>(2 * have, size_t{1} << 20));
    if (buf.size() < want) buf.resize(want);
    const size_t got = src.read(buf.data() + have, want - have);
    have += got;
    if (have < want) break;
  }
  return have;
}

std::string thousands(int64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The message for a raw input whose size is not a whole number of frames: the nearest sizes that would be, and
// common picture sizes that would fit the file exactly (a wrong SourceWidth/SourceHeight is the usual cause).
std::string raw_size_message(const std::string& path, int64_t size, int64_t header, int w, int h, bool gzip) {
  const int64_t fb = frame_bytes(w, h), data = size - header;
  const int64_t below = data / fb, above = below + 1;
  std::string m = "input '" + path + "' (" + thousands(size) + (gzip ? " bytes uncompressed" : " bytes");
  if (header) m += ", InputHeaderLength = " + std::to_string(header);
  m += ") is not a whole number of " + std::to_string(w) + "x" + std::to_string(h) + " frames (" + thousands(fb) +
       " bytes each): " + std::to_string(below) + " frames would be " + thousands(header + below * fb) +
       " bytes, " + std::to_string(above) + " frames " + thousands(header + above * fb) + " bytes";
  static const int kCommon[][2] = {{128, 96},   {176, 144},  {320, 240},  {352, 240},  {352, 288},
                                   {416, 240},  {640, 360},  {640, 480},  {704, 480},  {704, 576},
                                   {720, 480},  {720, 576},  {832, 480},  {1024, 768}, {1280, 720},
                                   {1920, 1080}, {2560, 1440}, {3840, 2160}};
  std::string fits;
  int found = 0;
  for (const auto& c : kCommon) {
    const int64_t cb = frame_bytes(c[0], c[1]);
    if (data > 0 && data % cb == 0 && found < 4) {
      fits += std::string(found++ ? ", " : "") + std::to_string(c[0]) + "x" + std::to_string(c[1]) + " (" +
              std::to_string(data / cb) + " frames)";
    }
  }
  m += fits.empty() ? "; check SourceWidth, SourceHeight and InputHeaderLength"
                    : "; sizes that fit: " + fits + " (check SourceWidth and SourceHeight)";
  return m;
}

class RawReader : public FrameReader {
 public:
  // size: the input's length in bytes (uncompressed, for gzip) when known before reading it, else -1.
  RawReader(const std::string& path, std::unique_ptr<ByteSource> src, InputFormat format, int w, int h, int header,
            int64_t size)
      : src_(std::move(src)), header_(header) {
    path_ = path;
    format_ = format;
    check_size(path, w, h, "SourceWidth x SourceHeight");
    width_ = w;
    height_ = h;
    fb_ = frame_bytes(w, h);
    if (size >= 0) {
      const bool gzip = format == InputFormat::Gzip;
      if (size < header_)
        fail("input '" + path + "' (" + thousands(size) + (gzip ? " bytes uncompressed" : " bytes") +
             ") is shorter than InputHeaderLength = " + thousands(header_));
      if ((size - header_) % fb_ != 0) fail(raw_size_message(path, size, header_, w, h, gzip));
      frames_ = (size - header_) / fb_;
    }
  }

  int64_t count_frames() override { return frames_; }

  bool read_frame(int64_t index, Frame& f) override {
    if (index < next_) fail("internal: input '" + path_ + "' read backwards");
    if (frames_ >= 0 && index >= frames_) return false;
    const int64_t target = header_ + index * fb_;
    if (src_->position() < target && src_->skip(target - src_->position()) < target - src_->position())
      return at_end();
    if (read_growing(*src_, buf_, static_cast<size_t>(fb_)) != static_cast<size_t>(fb_)) return at_end();
    next_ = index + 1;
    alloc_frame_for(f, width_, height_);
    unpack(buf_.data(), f);
    return true;
  }

 private:
  // The input ended (a stream whose length was unknown): a whole number of frames, or an error.
  bool at_end() {
    const int64_t data = std::max<int64_t>(0, src_->position() - header_);
    if (data % fb_ != 0)
      fail("input '" + path_ + "' ends inside frame " + std::to_string(data / fb_) + ": " +
           std::to_string(data % fb_) + " of its " + std::to_string(fb_) + " bytes (" + std::to_string(width_) +
           "x" + std::to_string(height_) + "); check SourceWidth, SourceHeight and InputHeaderLength");
    frames_ = data / fb_;
    return false;
  }
  std::unique_ptr<ByteSource> src_;
  int64_t header_;
  int64_t fb_ = 0;
  int64_t frames_ = -1;  // known for files, and for streams once their end was read
  int64_t next_ = 0;
  std::vector<uint8_t> buf_;
};

// Strict decimal digits (no sign, no blanks), at most 9 of them.
bool parse_digits(const std::string& s, long* v) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  *v = std::strtol(s.c_str(), nullptr, 10);
  return true;
}

class Y4mReader : public FrameReader {
 public:
  Y4mReader(const std::string& path, std::unique_ptr<ByteSource> src) : src_(std::move(src)) {
    path_ = path;
    format_ = InputFormat::Y4m;
    std::string header;
    const Line got = read_line(&header);
    if (got == Line::kTooLong) fail("input '" + path + "': the YUV4MPEG2 header line is longer than 4096 bytes");
    if (got != Line::kComplete || header.compare(0, 10, "YUV4MPEG2 ") != 0)
      fail("input '" + path + "' is not a YUV4MPEG2 file: expected a 'YUV4MPEG2 ' header line");
    std::string colour = "420jpeg";
    long w = -1, h = -1;
    size_t pos = 10;
    while (pos < header.size()) {
      size_t end = header.find(' ', pos);
      if (end == std::string::npos) end = header.size();
      const std::string tok = header.substr(pos, end - pos);
      pos = end + 1;
      if (tok.empty()) continue;
      const std::string value = tok.substr(1);
      switch (tok[0]) {
        case 'W':
          if (!parse_digits(value, &w)) bad_tag(tok, "a width in digits");
          break;
        case 'H':
          if (!parse_digits(value, &h)) bad_tag(tok, "a height in digits");
          break;
        case 'C': colour = value; break;
        case 'F': parse_rate(tok); break;
        case 'I':
          if (value == "t" || value == "b" || value == "m")
            fail("input '" + path + "': interlaced YUV4MPEG2 ('" + tok +
                 "') is not supported: gme264 codes progressive frames (deinterlace first, e.g. ffmpeg -vf yadif)");
          if (value != "p" && value != "?") bad_tag(tok, "Ip, It, Ib, Im or I?");
          break;
        default: break;  // A (aspect), X (comments) and unknown tags: no effect on the samples
      }
    }
    if (w < 0 || h < 0) fail("input '" + path + "': the YUV4MPEG2 header has no " + (w < 0 ? "W" : "H") + " tag");
    if (colour != "420jpeg" && colour != "420" && colour != "420mpeg2" && colour != "420paldv")
      fail("input '" + path + "': Y4M colour space 'C" + colour +
           "' is not supported: expected 4:2:0 8-bit (C420, C420jpeg, C420mpeg2, C420paldv)");
    if (w > kMaxPictureSide || h > kMaxPictureSide)  // before the int conversion
      fail("input '" + path + "': size " + std::to_string(w) + "x" + std::to_string(h) +
           " (Y4M header) is not supported: expected even width and height in [2, " +
           std::to_string(kMaxPictureSide) + "] (4:2:0)");
    check_size(path, static_cast<int>(w), static_cast<int>(h), "Y4M header");
    width_ = static_cast<int>(w);
    height_ = static_cast<int>(h);
    fb_ = frame_bytes(width_, height_);
  }

  int64_t count_frames() override {
    if (frames_ >= 0 || src_->size() < 0) return frames_;
    // A file: walk the frame headers once (and check the last frame is whole), then come back.
    const int64_t here = src_->position(), here_index = next_;
    while (skip_frame()) {
    }
    frames_ = next_;
    src_->seek(here);
    next_ = here_index;
    return frames_;
  }

  bool read_frame(int64_t index, Frame& f) override {
    if (index < next_) fail("internal: y4m input '" + path_ + "' read backwards");
    while (next_ < index)
      if (!skip_frame()) return false;
    if (!read_frame_header()) return false;
    // A file says up front whether the frame is whole, before the (possibly large) buffer is allocated.
    if (src_->size() >= 0 && src_->size() - src_->position() < fb_) truncated(src_->size() - src_->position());
    const size_t got = read_growing(*src_, buf_, static_cast<size_t>(fb_));
    if (got != static_cast<size_t>(fb_)) truncated(static_cast<int64_t>(got));
    ++next_;
    alloc_frame_for(f, width_, height_);
    unpack(buf_.data(), f);
    return true;
  }

 private:
  enum class Line { kComplete, kEof, kPartial, kTooLong };

  // One header line without its '\n' (and without a '\r' before it: CRLF headers are accepted).
  Line read_line(std::string* line) {
    line->clear();
    for (;;) {
      const int c = src_->get();
      if (c == EOF) return line->empty() ? Line::kEof : Line::kPartial;
      if (c == '\n') break;
      line->push_back(static_cast<char>(c));
      if (line->size() > 4096) return Line::kTooLong;
    }
    if (!line->empty() && line->back() == '\r') line->pop_back();
    return Line::kComplete;
  }

  [[noreturn]] void bad_tag(const std::string& tok, const char* expected) {
    fail("input '" + path_ + "': YUV4MPEG2 header tag '" + tok + "' is malformed: expected " + expected);
  }

  void parse_rate(const std::string& tok) {
    const std::string v = tok.substr(1);
    const size_t colon = v.find(':');
    long num = 0, den = 0;
    if (colon == std::string::npos || !parse_digits(v.substr(0, colon), &num) ||
        !parse_digits(v.substr(colon + 1), &den) || (den == 0 && num != 0))
      bad_tag(tok, "a frame rate NUM:DEN in digits (e.g. F30000:1001)");
    if (num > 0 && den > 0) fps_ = static_cast<double>(num) / static_cast<double>(den);  // F0:0: unknown
  }

  [[noreturn]] void truncated(int64_t got) {
    fail("input '" + path_ + "' ends inside frame " + std::to_string(next_) + ": " + std::to_string(got) +
         " of its " + std::to_string(fb_) + " bytes (a damaged or cut YUV4MPEG2 file)");
  }

  // False at the end of the input (exactly between frames); throws on anything else.
  bool read_frame_header() {
    std::string line;
    switch (read_line(&line)) {
      case Line::kEof: return false;
      case Line::kComplete: break;
      case Line::kPartial:
      case Line::kTooLong:
        fail("input '" + path_ + "' ends inside the header of frame " + std::to_string(next_) +
             " (a damaged or cut YUV4MPEG2 file)");
    }
    if (line.compare(0, 5, "FRAME") != 0 || (line.size() > 5 && line[5] != ' '))
      fail("input '" + path_ + "': frame " + std::to_string(next_) + " does not start with 'FRAME' (corrupt Y4M)");
    return true;
  }

  bool skip_frame() {
    if (!read_frame_header()) return false;
    const int64_t got = src_->skip(fb_);
    if (got != fb_) truncated(got);
    ++next_;
    return true;
  }

  std::unique_ptr<ByteSource> src_;
  int64_t fb_ = 0;
  int64_t frames_ = -1;
  int64_t next_ = 0;  // index of the frame the input position is at
  std::vector<uint8_t> buf_;
};

std::unique_ptr<FileSource> open_file_source(const std::string& path) {
  std::FILE* f = nullptr;
  if (is_stdin_name(path)) {
    const int fd = dup(STDIN_FILENO);
    if (fd < 0 || !(f = fdopen(fd, "rb"))) {
      const int err = errno;
      if (fd >= 0) close(fd);
      fail("cannot read the standard input (InputFile = -): " + system_error(err));
    }
  } else {
    f = std::fopen(path.c_str(), "rb");
    if (!f) fail("cannot open input file '" + path + "' (InputFile): " + system_error(errno));
  }
  return std::make_unique<FileSource>(path, f);
}

// The uncompressed length of gzip file `path`, for the frame-size check at open (a .gz input is read front to
// back, and an encode of its first frames would otherwise never learn that they were cut at a wrong size). The
// last member's trailer holds its length mod 2^32: when that is a whole number of frames after the header, which a
// wrong frame size almost never gives, the file is taken as consistent (-1: length not known, as for a pipe).
// Otherwise the file is decompressed once and counted, since a file of several members or past 4 GiB has a trailer
// that says nothing about the whole: that count is exact. A file that is not gzip (zlib reads it as it is) has its
// own size.
int64_t gzip_input_size(const std::string& path, int64_t header, int64_t fb) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return -1;  // gzopen reports it
  struct stat st;
  if (fstat(fileno(f.get()), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  unsigned char head[2] = {0, 0};
  if (std::fread(head, 1, 2, f.get()) != 2 || head[0] != 0x1f || head[1] != 0x8b) return st.st_size;
  if (st.st_size >= 18 && fseeko(f.get(), static_cast<off_t>(st.st_size - 4), SEEK_SET) == 0) {
    unsigned char t[4];
    if (std::fread(t, 1, 4, f.get()) == 4) {
      const int64_t isize = t[0] | t[1] << 8 | t[2] << 16 | static_cast<int64_t>(t[3]) << 24;
      if (isize >= header && (isize - header) % fb == 0) return -1;
    }
  }
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) return -1;
  GzipSource counter(path, gz);
  std::vector<uint8_t> chunk(1 << 20);
  while (counter.read(chunk.data(), chunk.size()) == chunk.size()) {
  }
  return counter.position();
}

}  // namespace

bool is_stdin_name(const std::string& path) { return path == "-"; }

std::unique_ptr<FrameReader> open_frame_reader(const std::string& path, int width, int height, int header_length) {
  struct stat st;
  if (!is_stdin_name(path) && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    fail("cannot open input file '" + path + "' (InputFile): it is a directory");
  if (ends_with(path, ".gz") && !is_stdin_name(path)) {
    if (stat(path.c_str(), &st) != 0)
      fail("cannot open input file '" + path + "' (InputFile): " + system_error(errno));
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) fail("cannot open input file '" + path + "' (InputFile): " + system_error(errno));
    auto src = std::make_unique<GzipSource>(path, gz);  // owns gz from here on, whatever the size check throws
    const int64_t size =
        width >= 2 && height >= 2 && width % 2 == 0 && height % 2 == 0 && width <= kMaxPictureSide &&
                height <= kMaxPictureSide && header_length >= 0
            ? gzip_input_size(path, header_length, frame_bytes(width, height))
            : -1;
    return std::make_unique<RawReader>(path, std::move(src), InputFormat::Gzip, width, height, header_length, size);
  }
  std::unique_ptr<FileSource> src = open_file_source(path);
  if (src->peek(10) == "YUV4MPEG2 ") return std::make_unique<Y4mReader>(path, std::move(src));
  if (ends_with(path, ".y4m"))
    fail("input '" + path + "' is not a YUV4MPEG2 file: expected a 'YUV4MPEG2 ' header line");
  const int64_t size = src->size();
  return std::make_unique<RawReader>(path, std::move(src), InputFormat::Raw, width, height, header_length, size);
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

bool is_y4m_name(const std::string& path) { return ends_with(path, ".y4m"); }

void write_y4m_header(OutputFile& out, int width, int height, double frame_rate) {
  // The rate as a ratio: NTSC-style rates (30000/1001, ...) exactly, others to 1/1000.
  long num = 0, den = 1;
  if (frame_rate > 0 && frame_rate < 1e6) {
    const double ntsc = frame_rate * 1.001;
    if (std::fabs(ntsc - std::round(ntsc)) < 1e-6 && std::fabs(frame_rate - std::round(frame_rate)) > 1e-6) {
      num = std::lround(ntsc) * 1000;
      den = 1001;
    } else {
      num = std::lround(frame_rate * 1000);
      den = 1000;
      while (den > 1 && num % 10 == 0 && den % 10 == 0) {
        num /= 10;
        den /= 10;
      }
    }
  }
  out.write("YUV4MPEG2 W" + std::to_string(width) + " H" + std::to_string(height) + " F" + std::to_string(num) +
            ":" + std::to_string(den) + " Ip A1:1 C420jpeg\n");
}

void write_y4m_frame(const Frame& f, OutputFile& out) {
  out.write("FRAME\n");
  write_cropped_yuv(f, out);
}

}  // namespace gme
