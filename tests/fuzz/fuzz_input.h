// What the input-reader harnesses share: arbitrary bytes as a file (a memfd, seekable), as the standard input (a
// pipe: read front to back), or as a gzip file, then every frame read the way lencod reads them.
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/frame.h"
#include "common/yuv_io.h"

namespace gme::fuzz {

enum class Via { kFile, kPipe, kGzipFile };

// Reads what open_frame_reader(path...) gives: the count, then frames start, start + step, ... (at most 64).
// A std::runtime_error (a bad header, a cut frame) is the expected answer to bad bytes.
inline void read_all(const std::string& path, int w, int h, int header, int step) {
  try {
    std::unique_ptr<FrameReader> r = open_frame_reader(path, w, h, header);
    r->count_frames();
    Frame f;
    for (int64_t i = 0, n = 0; n < 64 && r->read_frame(i, f); i += step, ++n) {
    }
    r->count_frames();
  } catch (const std::runtime_error&) {
  }
}

// The .gz input's file: the reader picks decompression by the name's extension, so it needs a real path (a memfd's
// /proc path has none). One folder for the whole run, removed when the fuzzer exits (libFuzzer ends with exit(),
// which runs static destructors), so that fuzzing leaves nothing in TMPDIR.
struct GzipScratch {
  std::string dir, path;
  GzipScratch() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/gme_fuzz_XXXXXX";
    if (mkdtemp(&tmpl[0])) {
      dir = tmpl.c_str();
      path = dir + "/in.yuv.gz";
    }
  }
  ~GzipScratch() {
    if (dir.empty()) return;
    unlink(path.c_str());
    rmdir(dir.c_str());
  }
  GzipScratch(const GzipScratch&) = delete;
  GzipScratch& operator=(const GzipScratch&) = delete;
};

// Runs read_all on `bytes` delivered `via` a file, a pipe or a .gz file.
inline void read_bytes(const std::string& bytes, Via via, int w, int h, int header, int step) {
  if (via == Via::kPipe && bytes.size() < 65536) {  // one write fills the pipe: no writer thread needed
    int p[2];
    if (pipe(p) != 0) return;
    const ssize_t n = write(p[1], bytes.data(), bytes.size());
    close(p[1]);
    const int saved = dup(STDIN_FILENO);
    dup2(p[0], STDIN_FILENO);
    close(p[0]);
    if (n == static_cast<ssize_t>(bytes.size())) read_all("-", w, h, header, step);
    dup2(saved, STDIN_FILENO);
    close(saved);
    return;
  }
  if (via == Via::kGzipFile) {
    static const GzipScratch scratch;
    const std::string& path = scratch.path;
    if (path.empty()) return;
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    const bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    close(fd);
    if (ok) read_all(path, w, h, header, step);
    return;
  }
  const int fd = memfd_create("fuzz_input", MFD_CLOEXEC);
  if (fd < 0) return;
  if (write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()))
    read_all("/proc/self/fd/" + std::to_string(fd), w, h, header, step);
  close(fd);
}

}  // namespace gme::fuzz
