#include "common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace gme {
namespace {

// The one piece of process-wide state: a signal handler cannot be given a context, so what it needs lives in fixed
// tables it can read without allocating (unlink() and write() are async-signal-safe). A slot is claimed atomically,
// its name written, and only then marked ready, so the handler never reads a half-written name.
constexpr int kMaxTemps = 16;
constexpr size_t kMaxPath = 4096;
char g_temp_names[kMaxTemps][kMaxPath];
std::atomic<bool> g_temp_claimed[kMaxTemps];
std::atomic<bool> g_temp_ready[kMaxTemps];

char g_program[64];
std::atomic<bool> g_progress_set{false};
std::atomic<int64_t> g_progress_done{0}, g_progress_total{-1};
// While commit_outputs() renames, a signal is held back (the outputs are complete: removing half of them would
// be the worst outcome) and delivered once every rename is done.
std::atomic<bool> g_publishing{false};
std::atomic<int> g_pending_signal{0};

const int kFatalSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF};

int register_temp(const std::string& name) {
  if (name.size() >= kMaxPath) return -1;
  for (int i = 0; i < kMaxTemps; ++i) {
    bool expected = false;
    if (g_temp_claimed[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_temp_names[i], name.c_str(), name.size() + 1);
      g_temp_ready[i].store(true);
      return i;
    }
  }
  return -1;  // table full: the file is still removed on normal exits, just not on a signal
}

void unregister_temp(int slot) {
  if (slot < 0) return;
  g_temp_ready[slot].store(false);
  g_temp_claimed[slot].store(false);
}

// Appends text / a decimal number to a fixed buffer (no allocation, no locale: signal-safe).
void append(char* buf, size_t cap, size_t* len, const char* s) {
  while (*s && *len + 1 < cap) buf[(*len)++] = *s++;
}
void append_number(char* buf, size_t cap, size_t* len, int64_t v) {
  char digits[24];
  int n = 0;
  uint64_t u = v < 0 ? 0 : static_cast<uint64_t>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  while (n > 0 && *len + 1 < cap) buf[(*len)++] = digits[--n];
}

void report_interrupt() {
  if (!g_progress_set.load()) return;
  char line[256];
  size_t len = 0;
  append(line, sizeof line, &len, g_program);
  append(line, sizeof line, &len, ": interrupted at frame ");
  append_number(line, sizeof line, &len, g_progress_done.load());
  const int64_t total = g_progress_total.load();
  if (total >= 0) {
    append(line, sizeof line, &len, " of ");
    append_number(line, sizeof line, &len, total);
  }
  append(line, sizeof line, &len, "; outputs removed\n");
  ssize_t ignored = ::write(STDERR_FILENO, line, len);
  (void)ignored;
}

extern "C" void remove_temps_and_die(int sig) {
  if (g_publishing.load()) {
    g_pending_signal.store(sig);
    return;
  }
  for (int i = 0; i < kMaxTemps; ++i)
    if (g_temp_ready[i].load()) unlink(g_temp_names[i]);
  report_interrupt();
  std::signal(sig, SIG_DFL);
  std::raise(sig);  // blocked while the handler runs: delivered, with its default action, when it returns
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Makes the renames durable (ext4 and others order them only with a sync of the directory). Best effort.
void sync_directory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

}  // namespace

void install_signal_handlers(const char* program) {
  std::strncpy(g_program, program, sizeof g_program - 1);
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = remove_temps_and_die;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) sigaddset(&sa.sa_mask, sig);  // one handler at a time
  for (int sig : kFatalSignals) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;  // nohup, `trap '' SIG`
    sigaction(sig, &sa, nullptr);
  }
}

void set_interrupt_progress(int64_t done, int64_t total) {
  g_progress_done.store(done);
  g_progress_total.store(total);
  g_progress_set.store(true);
}

OutputFile::OutputFile(const std::string& path, const std::string& what, Temp temp)
    : path_(path), target_(path), what_(what) {
  if (path.empty()) throw std::runtime_error(what + " is empty: expected a file name");
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write " + what + " '" + path + "': it is a directory");
    if (!S_ISREG(st.st_mode)) {
      // A device or a pipe: written in place.
      direct_ = true;
      fd_ = open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) fail("cannot write", errno);
      f_ = fdopen(fd_, "wb");
      if (!f_) {
        const int err = errno;
        close(fd_);
        fail("cannot write", err);
      }
      return;
    }
    // As cp: an existing file the user may not write is not replaced, even though the folder would allow it.
    if (access(path.c_str(), W_OK) != 0) {
      const int err = errno;
      throw std::runtime_error("cannot write " + what + " '" + path + "': " + std::strerror(err) +
                               " (the existing file is read-only; remove it or make it writable)");
    }
    mode_ = static_cast<int>(st.st_mode & 0777);
    // A symbolic link: replace the file it points to, not the link.
    if (char* real = realpath(path.c_str(), nullptr)) {
      target_ = real;
      std::free(real);
    }
  }
  const int mode = mode_ >= 0 ? mode_ : 0666;
  if (temp == Temp::kAuto) {
    fd_ = open(directory_of(target_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    unnamed_ = fd_ >= 0;  // else the filesystem has no O_TMPFILE (or the folder is unusable: the named try says why)
  }
  if (!unnamed_) open_named_temp(mode);
  if (mode_ >= 0) fchmod(fd_, static_cast<mode_t>(mode_));  // the replaced file's permissions, not the umask's
  f_ = fdopen(fd_, "wb");
  if (!f_) {  // the destructor does not run for a constructor that throws: clean up here
    const int err = errno;
    close(fd_);
    if (!temp_.empty()) unlink(temp_.c_str());
    forget_temp();
    fail("cannot write", err);
  }
}

void OutputFile::open_named_temp(int mode) {
  const std::string base = target_ + ".tmp-" + std::to_string(static_cast<long>(getpid()));
  for (int attempt = 0;; ++attempt) {
    temp_ = attempt ? base + "-" + std::to_string(attempt) : base;
    slot_ = register_temp(temp_);  // before the file exists, so a signal can never miss it
    if (unnamed_) {
      // Give the unnamed file its temporary name. AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc works for all.
      int rc = linkat(fd_, "", AT_FDCWD, temp_.c_str(), AT_EMPTY_PATH);
      if (rc != 0 && errno != EEXIST) {
        const std::string self = "/proc/self/fd/" + std::to_string(fd_);
        rc = linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp_.c_str(), AT_SYMLINK_FOLLOW);
      }
      if (rc == 0) return;
    } else {
      fd_ = open(temp_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
      if (fd_ >= 0) return;
    }
    const int err = errno;
    forget_temp();
    if (err != EEXIST || attempt >= 100) fail("cannot write", err);
  }
}

void OutputFile::forget_temp() {
  unregister_temp(slot_);
  slot_ = -1;
  temp_.clear();
}

OutputFile::~OutputFile() {
  if (f_) std::fclose(f_);
  if (!committed_ && !temp_.empty()) unlink(temp_.c_str());
  unregister_temp(slot_);
}

void OutputFile::fail(const std::string& action, int err) const {
  throw std::runtime_error(action + " " + what_ + " '" + path_ + "': " + std::strerror(err));
}

void OutputFile::write(const void* data, size_t n) {
  if (!f_) throw std::runtime_error("internal: write to closed " + what_ + " '" + path_ + "'");
  if (n && std::fwrite(data, 1, n, f_) != n) fail("cannot write", errno);
}

void OutputFile::finish() {
  if (finished_) return;
  if (!f_) throw std::runtime_error("internal: finish of closed " + what_ + " '" + path_ + "'");
  // A full disk or a quota shows up in the flush or the sync, not necessarily in fwrite.
  if (std::fflush(f_) != 0) fail("cannot write", errno);
  if (fsync(fd_) != 0 && !(direct_ && (errno == EINVAL || errno == EROFS || errno == ENOTSUP)))
    fail("cannot write", errno);
  if (unnamed_) open_named_temp(0);
  std::FILE* f = f_;
  f_ = nullptr;
  if (std::fclose(f) != 0) fail("cannot write", errno);
  finished_ = true;
}

void OutputFile::publish() {
  if (committed_) return;
  if (!finished_) throw std::runtime_error("internal: publish of unfinished " + what_ + " '" + path_ + "'");
  if (!direct_) {
    if (std::rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot rename temporary file to", errno);
    sync_directory(directory_of(target_));
  }
  committed_ = true;
  forget_temp();
}

void commit_outputs(std::initializer_list<OutputFile*> outputs) {
  for (OutputFile* o : outputs)
    if (o) o->finish();
  g_publishing.store(true);
  try {
    for (OutputFile* o : outputs)
      if (o) o->publish();
  } catch (...) {
    g_publishing.store(false);
    throw;
  }
  g_progress_set.store(false);  // every output is complete: a later signal has nothing to report
  g_publishing.store(false);
  if (const int sig = g_pending_signal.exchange(0)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

}  // namespace gme
