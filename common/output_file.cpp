#include "common/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

namespace gme {
namespace {

// The one piece of process-wide state: a signal handler cannot be given a context, so the temporary names live in
// a fixed table it can read without allocating (unlink() is async-signal-safe). Slots are claimed atomically.
constexpr int kMaxTemps = 16;
constexpr size_t kMaxPath = 4096;
char g_temp_names[kMaxTemps][kMaxPath];
std::atomic<bool> g_temp_used[kMaxTemps];

int register_temp(const std::string& name) {
  if (name.size() >= kMaxPath) return -1;
  for (int i = 0; i < kMaxTemps; ++i) {
    bool expected = false;
    if (g_temp_used[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_temp_names[i], name.c_str(), name.size() + 1);
      return i;
    }
  }
  return -1;  // table full: the file is still removed on normal exits, just not on a signal
}

void unregister_temp(int slot) {
  if (slot >= 0) g_temp_used[slot].store(false);
}

extern "C" void remove_temps_and_die(int sig) {
  for (int i = 0; i < kMaxTemps; ++i)
    if (g_temp_used[i].load()) unlink(g_temp_names[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void remove_temp_files_on_signal() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temps_and_die);
}

OutputFile::OutputFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  if (path.empty()) throw std::runtime_error(what + " is empty: expected a file name");
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw std::runtime_error("cannot write " + what + " '" + path + "': it is a directory");
  temp_ = path + ".tmp-" + std::to_string(static_cast<long>(getpid()));
  slot_ = register_temp(temp_);  // before the file exists, so a signal can never miss it
  f_ = std::fopen(temp_.c_str(), "wb");
  if (!f_) {
    unregister_temp(slot_);
    const int err = errno;
    throw std::runtime_error("cannot write " + what + " '" + path + "': " + std::strerror(err));
  }
}

OutputFile::~OutputFile() {
  if (f_) std::fclose(f_);
  if (!committed_) std::remove(temp_.c_str());
  unregister_temp(slot_);
}

void OutputFile::fail(const std::string& action, int err) {
  throw std::runtime_error(action + " " + what_ + " '" + path_ + "': " + std::strerror(err));
}

void OutputFile::write(const void* data, size_t n) {
  if (!f_) throw std::runtime_error("internal: write to closed " + what_ + " '" + path_ + "'");
  if (n && std::fwrite(data, 1, n, f_) != n) fail("cannot write", errno);
}

void OutputFile::commit() {
  if (committed_) return;
  if (!f_) throw std::runtime_error("internal: commit of closed " + what_ + " '" + path_ + "'");
  std::FILE* f = f_;
  f_ = nullptr;
  // fclose flushes; a full disk shows up here, not in fwrite.
  if (std::fflush(f) != 0) {
    const int err = errno;
    std::fclose(f);
    fail("cannot write", err);
  }
  if (std::fclose(f) != 0) fail("cannot write", errno);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) fail("cannot rename temporary file to", errno);
  committed_ = true;
  unregister_temp(slot_);
  slot_ = -1;
}

}  // namespace gme
