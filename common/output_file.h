// An output file that only appears under its name when complete: bytes go to "<name>.tmp-<pid>", commit() renames
// it over <name>, and destruction without commit() removes it. So a failed run leaves no half-written stream,
// reconstruction or statistics behind (house rule 4), and an unwritable path fails at construction, before any
// encoding starts.
#pragma once
#include <cstddef>
#include <cstdio>
#include <string>

namespace gme {

// Makes SIGINT, SIGTERM and SIGHUP remove the temporary files of every live OutputFile before the process dies
// (then the signal's default action runs, so the exit status still says "killed by signal"). Call once from main.
void remove_temp_files_on_signal();

class OutputFile {
 public:
  // `what` names the setting in messages ("OutputFile"). Throws std::runtime_error (one line) if the file cannot be
  // created: missing directory, no permission, or `path` is a directory.
  OutputFile(const std::string& path, const std::string& what);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t n);  // throws on a write error (disk full, ...)
  void write(const std::string& s) { write(s.data(), s.size()); }
  void commit();                           // flush, close, rename to the final name; throws on failure

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }
  bool committed() const { return committed_; }

 private:
  void fail(const std::string& action, int err);
  std::string path_, temp_, what_;
  std::FILE* f_ = nullptr;
  bool committed_ = false;
  int slot_ = -1;  // entry in the signal-cleanup table
};

}  // namespace gme
