// Output files that only appear under their names when every output of the run is complete (house rule 4).
//
// An OutputFile writes to a file without a name where the filesystem allows (O_TMPFILE: even SIGKILL or a power
// cut leaves nothing behind), else to "<name>.tmp-<pid>". commit_outputs() first flushes, syncs and closes every
// output of the run, each under a temporary name, and renames them over their final names only when all of that
// succeeded: a full disk, a file-size limit or a closed pipe in any of them leaves every existing file untouched.
// Destruction without commit removes the temporary file.
//
// An existing output is refused as cp would refuse it: a directory, or a file the user may not write (read-only).
// An existing output that is not a regular file (a device such as /dev/null or /dev/stdout, a pipe) is written
// directly: it cannot be replaced by a rename, and what reached it cannot be taken back.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>

namespace gme {

// The process's signal dispositions for a program that writes OutputFiles. Call once at the start of main.
//  - SIGPIPE and SIGXFSZ are ignored: a closed pipe or a file-size limit (ulimit -f) becomes an ordinary write
//    error, reported as such, instead of killing the process with its temporary files in place.
//  - SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM and SIGPROF (whose default action ends
//    the process) get a handler that removes the named temporary files, prints the interrupt line (see
//    set_interrupt_progress) and then lets the default action end the process, so the exit status still says
//    "killed by signal N". Only signals that are not ignored at start get the handler: under nohup (SIGHUP
//    ignored) the process keeps ignoring SIGHUP.
// `program` ("lencod") starts the interrupt line.
void install_signal_handlers(const char* program);

// What the signal handler reports: "<program>: interrupted at frame <done> of <total>; outputs removed"
// (total < 0: "... at frame <done>; outputs removed"). Until the first call the handler prints nothing.
void set_interrupt_progress(int64_t done, int64_t total);

class OutputFile {
 public:
  enum class Temp { kAuto, kNamed };  // kNamed: never O_TMPFILE (tests of the fallback)

  // `what` names the setting in messages ("OutputFile"). Throws std::runtime_error (one line) if the file cannot be
  // created: missing directory, no permission, `path` is a directory or a read-only file.
  OutputFile(const std::string& path, const std::string& what, Temp temp = Temp::kAuto);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t n);  // throws on a write error (disk full, closed pipe, file-size limit)
  void write(const std::string& s) { write(s.data(), s.size()); }

  // Two steps of commit_outputs(); commit() is both for a single file.
  void finish();   // flush, fsync, give the data its temporary name, close; throws on failure
  void publish();  // rename the temporary name over the final name; throws on failure
  void commit() {
    finish();
    publish();
  }

  const std::string& path() const { return path_; }
  // The temporary name: empty while the data has none (O_TMPFILE before finish()) and for direct outputs.
  const std::string& temp_path() const { return temp_; }
  bool unnamed() const { return unnamed_; }  // written to a file without a name until finish()
  bool direct() const { return direct_; }    // an existing non-regular file, written in place
  bool committed() const { return committed_; }

 private:
  [[noreturn]] void fail(const std::string& action, int err) const;
  void open_named_temp(int mode);
  void forget_temp();
  std::string path_;    // as the user gave it (messages)
  std::string target_;  // the file replaced on publish (path_, or what a symbolic link points to)
  std::string temp_, what_;
  std::FILE* f_ = nullptr;
  int fd_ = -1;
  bool unnamed_ = false, direct_ = false, finished_ = false, committed_ = false;
  int mode_ = -1;  // permission bits of the file being replaced, or -1 (new file: 0666 & ~umask)
  int slot_ = -1;  // entry in the signal handler's table of named temporary files
};

// Commits a run's outputs together (null entries are skipped): finish() on each, then publish() on each. When any
// finish() fails nothing is renamed and the exception propagates (the destructors remove the temporary files).
void commit_outputs(std::initializer_list<OutputFile*> outputs);

}  // namespace gme
