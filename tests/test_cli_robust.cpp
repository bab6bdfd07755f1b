// bin/lencod as a process under hostile conditions and the conventions users of command-line tools expect: signals,
// closed pipes, file-size limits, read-only outputs, input from a pipe, y4m limits, a byte order mark, wrong raw
// frame sizes, several bad values at once, --version, a y4m ReconFile. Each test starts the real program, in a
// fresh directory, and looks at its exit status, its stderr and what it left in the directory.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/version.h"
#include "tests/conformance_util.h"

namespace gme {
namespace {

using conf::TempDir;
using conf::absolute;
using conf::read_text;
using conf::write_text;
using conf::list_dir;

std::string program(const std::string& name) { return absolute(conf::bin_dir()) + "/" + name; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Packed 4:2:0 frames of a simple pattern.
std::string clip(int w, int h, int frames) {
  std::string v;
  for (int f = 0; f < frames; ++f)
    for (int i = 0; i < w * h * 3 / 2; ++i) v.push_back(static_cast<char>((i * 7 + f * 13 + (i / w) * 3) & 0xff));
  return v;
}

std::string y4m_clip(int w, int h, int frames, const std::string& tags = "F25:1 C420jpeg", const char* eol = "\n") {
  std::string v = "YUV4MPEG2 W" + std::to_string(w) + " H" + std::to_string(h) + " " + tags + eol;
  const std::string raw = clip(w, h, frames);
  const size_t fb = static_cast<size_t>(w) * h * 3 / 2;
  for (int f = 0; f < frames; ++f) v += std::string("FRAME") + eol + raw.substr(f * fb, fb);
  return v;
}

// How a child runs: its stdin (a pipe the test writes, or /dev/null), its stdout (a file, or a pipe the test
// reads), signals it inherits as ignored, its user, a file-size limit.
struct Spawn {
  bool stdin_pipe = false;
  bool stdout_pipe = false;
  bool ignore_hup = false;
  uid_t uid = static_cast<uid_t>(-1);
  long fsize_limit = -1;  // RLIMIT_FSIZE in bytes
};

struct Child {
  pid_t pid = -1;
  int in = -1;   // write end of its stdin
  int out = -1;  // read end of its stdout
  std::string out_file, err_file;

  void close_in() {
    if (in >= 0) close(in);
    in = -1;
  }
  void close_out() {
    if (out >= 0) close(out);
    out = -1;
  }
  bool write_in(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(in, bytes.data() + done, bytes.size() - done);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // Waits up to 60 s for its stdout file to contain `text`; false at once when it has ended.
  bool wait_for_output(const std::string& text) {
    for (int i = 0; i < 6000; ++i) {
      if (contains(read_text(out_file), text)) return true;
      if (status < 0 && waitpid(pid, &status, WNOHANG) != pid) status = -1;
      if (status >= 0) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  int wait() {
    close_in();
    close_out();
    if (status < 0 && waitpid(pid, &status, 0) != pid) return -1;
    return status;
  }
  int status = -1;  // wait status once it has ended
};

// Starts `exe args...` in `dir`; stdout and stderr go to files in `logs` unless piped.
Child spawn(const std::string& exe, const std::vector<std::string>& args, const TempDir& dir, const TempDir& logs,
            const Spawn& how = Spawn()) {
  Child c;
  c.out_file = logs.file("out.txt");
  c.err_file = logs.file("err.txt");
  std::vector<std::string> words = {exe};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(&w[0]);
  argv.push_back(nullptr);
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
  if (how.stdin_pipe && pipe(in_pipe) != 0) return c;
  if (how.stdout_pipe && pipe(out_pipe) != 0) return c;
  const std::string dir_path = dir.path();
  // The logs are emptied before the child exists: a caller polling them (wait_for_output) must never read the
  // previous child's lines as this one's.
  const int out_log = how.stdout_pipe ? -1 : open(c.out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_log = open(c.err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  c.pid = fork();
  if (c.pid == 0) {
    // Only async-signal-safe calls until exec.
    if (chdir(dir_path.c_str()) != 0) _exit(127);
    const int in = how.stdin_pipe ? in_pipe[0] : open("/dev/null", O_RDONLY);
    const int out = how.stdout_pipe ? out_pipe[1] : out_log;
    const int err = err_log;
    if (in < 0 || out < 0 || err < 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (how.stdin_pipe) close(in_pipe[1]);
    if (how.stdout_pipe) close(out_pipe[0]);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // SIGQUIT would leave a core file in the directory
    if (how.fsize_limit >= 0) {
      struct rlimit fsize = {static_cast<rlim_t>(how.fsize_limit), static_cast<rlim_t>(how.fsize_limit)};
      setrlimit(RLIMIT_FSIZE, &fsize);
    }
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM, SIGPIPE, SIGXFSZ}) signal(sig, SIG_DFL);
    if (how.ignore_hup) signal(SIGHUP, SIG_IGN);  // as nohup does
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (how.uid != static_cast<uid_t>(-1) && (setgid(how.uid) != 0 || setuid(how.uid) != 0)) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (out_log >= 0) close(out_log);
  if (err_log >= 0) close(err_log);
  if (how.stdin_pipe) {
    close(in_pipe[0]);
    c.in = in_pipe[1];
  }
  if (how.stdout_pipe) {
    close(out_pipe[1]);
    c.out = out_pipe[0];
  }
  return c;
}

struct Result {
  int status = -1;  // exit status, or -1 when killed by a signal
  std::string out, err;
};

Result run(const std::string& exe, const std::vector<std::string>& args, const TempDir& dir, const TempDir& logs,
        const Spawn& how = Spawn()) {
  Child c = spawn(exe, args, dir, logs, how);
  const int st = c.wait();
  Result r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = read_text(c.out_file);
  r.err = read_text(c.err_file);
  return r;
}

std::vector<std::string> p_args(const std::vector<std::string>& settings) {
  std::vector<std::string> a;
  for (const std::string& s : settings) {
    a.push_back("-p");
    a.push_back(s);
  }
  return a;
}

class CliRobust : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(program("lencod").c_str(), X_OK) != 0) GTEST_FAIL() << program("lencod") << " not built";
  }
  Result lencod(const std::vector<std::string>& settings, const Spawn& how = Spawn()) {
    return run(program("lencod"), p_args(settings), dir, logs, how);
  }
  TempDir dir{"robust"};
  TempDir logs{"robust_logs"};
};

// ---- Outputs are replaced all or none: a run that cannot finish must not cost the results of an earlier run.

TEST_F(CliRobust, FileSizeLimitInTheLastOutputLeavesOldOutputsUntouched) {
  write_text(dir.file("in.yuv"), clip(16, 16, 1));
  write_text(dir.file("o.264"), "old stream");
  write_text(dir.file("r.yuv"), "old recon");
  // 600 bytes: the stream (~50) and the reconstruction (384) fit, the statistics (~2 KB) do not. SIGXFSZ is
  // ignored, so the limit is a write error, found before anything is renamed.
  Spawn how;
  how.fsize_limit = 600;
  const Result r = lencod({"InputFile=in.yuv", "SourceWidth=16", "SourceHeight=16", "QPISlice=51", "OutputFile=o.264",
                        "ReconFile=r.yuv", "StatsFile=s.jsonl"},
                       how);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: error: cannot write StatsFile 's.jsonl': File too large")) << r.err;
  EXPECT_EQ(read_text(dir.file("o.264")), "old stream");
  EXPECT_EQ(read_text(dir.file("r.yuv")), "old recon");
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"in.yuv", "o.264", "r.yuv"}));
}

TEST_F(CliRobust, FullDiskInTheLastOutputLeavesOldOutputsUntouched) {
  write_text(dir.file("in.yuv"), clip(16, 16, 1));
  write_text(dir.file("o.264"), "old stream");
  const Result r = lencod({"InputFile=in.yuv", "SourceWidth=16", "SourceHeight=16", "OutputFile=o.264",
                        "StatsFile=/dev/full"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: error: cannot write StatsFile '/dev/full': No space left on device")) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(read_text(dir.file("o.264")), "old stream");
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"in.yuv", "o.264"}));
}

// ---- Signals (Ctrl-C, kill, a closed terminal or pipe): no temporary file left, and a line saying where it stopped.

// lencod reading frames from a pipe, stopped after its first picture: a signal then finds it mid-encode with every
// output open.
class Signals : public CliRobust {
 protected:
  Child start(const Spawn& extra = Spawn()) {
    Spawn how = extra;
    how.stdin_pipe = true;
    Child c = spawn(program("lencod"),
                    p_args({"InputFile=-", "SourceWidth=32", "SourceHeight=32", "FramesToBeEncoded=3",
                            "OutputFile=o.264", "ReconFile=r.yuv", "StatsFile=s.jsonl"}),
                    dir, logs, how);
    EXPECT_GT(c.pid, 0);
    EXPECT_TRUE(c.write_in(clip(32, 32, 1)));
    EXPECT_TRUE(c.wait_for_output("00000(IDR)")) << read_text(c.out_file) << read_text(c.err_file);
    return c;
  }
};

TEST_F(Signals, EachFatalSignalLeavesNoFileBehind) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM, SIGKILL}) {
    Child c = start();
    kill(c.pid, sig);
    const int st = c.wait();
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << strsignal(sig) << ": status " << st;
    EXPECT_EQ(list_dir(dir.path()), std::set<std::string>{}) << strsignal(sig);
    if (sig != SIGKILL) {
      EXPECT_EQ(read_text(c.err_file), "lencod: interrupted at frame 1 of 3; outputs removed\n") << strsignal(sig);
    }
  }
}

TEST_F(Signals, NohupKeepsEncodingThroughSighup) {
  Spawn how;
  how.ignore_hup = true;
  Child c = start(how);
  kill(c.pid, SIGHUP);
  EXPECT_TRUE(c.write_in(clip(32, 32, 2)));
  const int st = c.wait();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st << ": " << read_text(c.err_file);
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"o.264", "r.yuv", "s.jsonl"}));
}

// `lencod ... | head`: the console's reader goes away mid-encode. The console is only information: the encode goes
// on and commits its outputs (SIGPIPE would have killed it with its temporary files in place).
TEST_F(Signals, ConsoleToAClosedPipeStillCommitsTheOutputs) {
  Spawn how;
  how.stdin_pipe = true;
  how.stdout_pipe = true;
  Child c = spawn(program("lencod"),
                  p_args({"InputFile=-", "SourceWidth=32", "SourceHeight=32", "FramesToBeEncoded=3",
                          "OutputFile=o.264", "ReconFile=r.yuv"}),
                  dir, logs, how);
  ASSERT_GT(c.pid, 0);
  char buf[16];
  ASSERT_GT(read(c.out, buf, sizeof buf), 0);  // it has started
  c.close_out();
  EXPECT_TRUE(c.write_in(clip(32, 32, 3)));
  const int st = c.wait();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st << ": " << read_text(c.err_file);
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"o.264", "r.yuv"}));
}

// The stream itself to a closed pipe: an ordinary write error, no other output committed.
TEST_F(Signals, StreamToAClosedPipeIsAWriteError) {
  write_text(dir.file("in.yuv"), clip(32, 32, 2));
  Spawn how;
  how.stdout_pipe = true;
  Child c = spawn(program("lencod"),
                  p_args({"InputFile=in.yuv", "SourceWidth=32", "SourceHeight=32", "FramesToBeEncoded=2",
                          "OutputFile=/dev/stdout", "ReconFile=r.yuv"}),
                  dir, logs, how);
  ASSERT_GT(c.pid, 0);
  c.close_out();
  const int st = c.wait();
  const std::string err = read_text(c.err_file);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << "status " << st << ": " << err;
  EXPECT_TRUE(contains(err, "lencod: error: cannot write OutputFile '/dev/stdout': Broken pipe")) << err;
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"in.yuv"}));
}

// ---- An existing output the user may not write is refused, as cp refuses it (renaming over it would succeed).

TEST_F(CliRobust, ReadOnlyExistingOutputIsRefused) {
  write_text(dir.file("in.yuv"), clip(16, 16, 1));
  write_text(dir.file("o.264"), "read-only");
  ASSERT_EQ(chmod(dir.file("o.264").c_str(), 0444), 0);
  Spawn how;
  if (geteuid() == 0) {
    // root may write any file: run as nobody in a folder anyone may write, so that only the file is protected.
    how.uid = 65534;
    ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
    ASSERT_EQ(chmod(logs.path().c_str(), 0777), 0);
    ASSERT_EQ(chmod(dir.file("in.yuv").c_str(), 0644), 0);
  }
  std::string exe = program("lencod");
  if (how.uid != static_cast<uid_t>(-1)) {
    // The checkout may sit in a folder nobody cannot enter (mktemp -d): run a copy from the logs folder.
    exe = logs.file("lencod");
    ASSERT_EQ(std::system(("cp " + conf::shell_quote(program("lencod")) + " " + conf::shell_quote(exe)).c_str()), 0);
    ASSERT_EQ(chmod(exe.c_str(), 0755), 0);
  }
  const Result r = run(exe, p_args({"InputFile=in.yuv", "SourceWidth=16", "SourceHeight=16", "OutputFile=o.264"}),
                       dir, logs, how);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: error: cannot write OutputFile 'o.264': Permission denied")) << r.err;
  EXPECT_TRUE(contains(r.err, "read-only")) << r.err;
  EXPECT_EQ(read_text(dir.file("o.264")), "read-only");
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"in.yuv", "o.264"}));
}

// ---- Inputs as other tools write them: y4m limits, interlacing, CRLF; a byte order mark in a cfg.

TEST_F(CliRobust, Y4mHeaderLimitsAndInterlacing) {
  write_text(dir.file("wide.y4m"), "YUV4MPEG2 W100000 H16 F25:1 C420jpeg\nFRAME\n");
  Result r = lencod({"InputFile=wide.y4m", "OutputFile=o.264"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "100000x16 (Y4M header) is not supported")) << r.err;
  EXPECT_TRUE(contains(r.err, "[2, 16384]")) << r.err;
  write_text(dir.file("tff.y4m"), y4m_clip(16, 16, 1, "F25:1 It C420jpeg"));
  r = lencod({"InputFile=tff.y4m", "OutputFile=o.264"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "interlaced YUV4MPEG2 ('It') is not supported")) << r.err;
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"wide.y4m", "tff.y4m"}));
  // Windows line ends.
  write_text(dir.file("crlf.y4m"), y4m_clip(16, 16, 2, "F25:1 C420jpeg", "\r\n"));
  r = lencod({"InputFile=crlf.y4m", "FramesToBeEncoded=-1", "OutputFile=o.264"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "00001( P )")) << r.out;
}

// The y4m header's size and rate are what get coded: a configured value that differs is named in a warning, and
// so is an InputHeaderLength that cannot apply. Values that agree give no line.
TEST_F(CliRobust, Y4mHeaderReplacingASettingIsWarned) {
  write_text(dir.file("in.y4m"), y4m_clip(32, 32, 1));  // F25:1
  Result r = lencod({"InputFile=in.y4m", "SourceWidth=16", "SourceHeight=32", "FrameRate=30", "InputHeaderLength=10",
                     "OutputFile=o.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: warning: SourceWidth = 16 (-p 'SourceWidth=16') differs from the YUV4MPEG2 "
                              "header of 'in.y4m', 32x32: the header's size is coded\n"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: warning: FrameRate = 30 (-p 'FrameRate=30') differs from the YUV4MPEG2 header "
                              "of 'in.y4m', 25: the header's rate is used\n"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: warning: InputHeaderLength = 10 (-p 'InputHeaderLength=10') is ignored"))
      << r.err;
  EXPECT_EQ(count_lines(r.err), 3) << r.err;
  EXPECT_TRUE(contains(r.out, "32x32")) << r.out;
  // The same size and rate (29.97 is the header's 30000:1001), and the suffix in capitals.
  write_text(dir.file("ntsc.Y4M"), y4m_clip(32, 32, 1, "F30000:1001 C420jpeg"));
  r = lencod({"InputFile=ntsc.Y4M", "SourceWidth=32", "SourceHeight=32", "FrameRate=29.97", "OutputFile=o.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // An odd configured size does not stop a .Y4M input either; it is named.
  r = lencod({"InputFile=ntsc.Y4M", "SourceWidth=175", "SourceHeight=33", "OutputFile=o.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "SourceWidth = 175 (-p 'SourceWidth=175') and SourceHeight = 33 (-p 'SourceHeight=33') "
                              "differ from the YUV4MPEG2 header of 'ntsc.Y4M', 32x32"))
      << r.err;
}

// A raw pipe shows whether it holds whole frames only at its end: an encode that stops before it says its size was
// not confirmed (a wrong SourceWidth would otherwise code noise without a word); one that reads it to its end, or a
// file, is checked and says nothing.
TEST_F(CliRobust, RawPipeNotReadToItsEndIsWarned) {
  for (const char* frames : {"FramesToBeEncoded=1", "FramesToBeEncoded=-1"}) {
    Spawn how;
    how.stdin_pipe = true;
    Child c = spawn(program("lencod"),
                    p_args({"InputFile=-", "SourceWidth=32", "SourceHeight=32", frames, "Log2MaxFNumMinus4=0",
                            "Log2MaxPOCLsbMinus4=0", "OutputFile=o.264"}),
                    dir, logs, how);
    ASSERT_GT(c.pid, 0);
    c.write_in(clip(32, 32, 2));
    c.close_in();
    const int st = c.wait();
    const std::string err = read_text(c.err_file);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << frames << ": " << err;
    if (std::string(frames) == "FramesToBeEncoded=1") {
      EXPECT_TRUE(contains(err, "lencod: warning: input '-' is a raw stream whose end was not read, so its length "
                                "could not confirm 32x32 frames"))
          << err;
      EXPECT_EQ(count_lines(err), 1) << err;
    } else {
      EXPECT_EQ(err, "") << frames;
    }
  }
}

// The level in the SPS is held to H.264 Table A-1: more references than its picture buffer holds is refused before
// any output exists; a picture size or rate past it is a warning (the stream still decodes).
TEST_F(CliRobust, LevelLimitsRefuseReferencesAndWarnOfSizeAndRate) {
  write_text(dir.file("in.yuv"), clip(176, 144, 1));
  Result r = lencod({"InputFile=in.yuv", "SourceWidth=176", "SourceHeight=144", "LevelIDC=9",
                     "NumberReferenceFrames=5", "OutputFile=o.264"});
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.err, "NumberReferenceFrames = 5 (-p 'NumberReferenceFrames=5'): level 1b (LevelIDC = 9) "
                              "holds 4 reference frames of 176x144"))
      << r.err;
  EXPECT_EQ(list_dir(dir.path()), std::set<std::string>{"in.yuv"});
  r = lencod({"InputFile=in.yuv", "SourceWidth=176", "SourceHeight=144", "LevelIDC=10", "FrameRate=30",
              "OutputFile=o.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: warning: LevelIDC = 10 (level 1) allows 1485 macroblocks/s; 176x144 at "
                              "FrameRate 30 needs 2970"))
      << r.err;
  r = lencod({"InputFile=in.yuv", "SourceWidth=176", "SourceHeight=144", "LevelIDC=10", "FrameRate=15",
              "OutputFile=o.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// A setting that acts only while another key is on, set to other than its default while that key is off, is
// named with the key that would make it act; the stream is the same as without it.
TEST_F(CliRobust, SettingsThatCannotActWhileTheirSwitchIsOffAreWarned) {
  write_text(dir.file("in.yuv"), clip(32, 32, 2));
  Result r = lencod({"InputFile=in.yuv", "SourceWidth=32", "SourceHeight=32", "OutputFile=a.264",
                     "DFParametersFlag=0", "DFAlphaRefISlice=3", "AdaptiveRounding=0", "AdaptRndPeriod=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: warning: DFAlphaRefISlice = 3 (-p 'DFAlphaRefISlice=3') has no effect with "
                              "DFParametersFlag = 0 (-p 'DFParametersFlag=0')"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: warning: AdaptRndPeriod = 1 (-p 'AdaptRndPeriod=1') has no effect with "
                              "AdaptiveRounding = 0"))
      << r.err;
  EXPECT_EQ(count_lines(r.err), 2) << r.err;
  r = lencod({"InputFile=in.yuv", "SourceWidth=32", "SourceHeight=32", "OutputFile=b.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(read_text(dir.file("a.264")), read_text(dir.file("b.264")));
  // Switched on, the same settings act and nothing is said.
  r = lencod({"InputFile=in.yuv", "SourceWidth=32", "SourceHeight=32", "OutputFile=c.264", "DFParametersFlag=1",
              "DFAlphaRefISlice=3", "AdaptiveRounding=1", "AdaptRndPeriod=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// Slice settings that are valid but cannot act as written are named once the picture size is known.
TEST_F(CliRobust, SliceArgumentsThatCannotActAreWarned) {
  write_text(dir.file("in.yuv"), clip(32, 32, 1));  // 4 macroblocks
  const std::vector<std::string> base = {"InputFile=in.yuv", "SourceWidth=32", "SourceHeight=32", "OutputFile=o.264"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return lencod(extra);
  };
  Result r = with({"SliceMode=1", "SliceArgument=100000"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "lencod: warning: SliceMode = 1 with SliceArgument = 100000 (-p 'SliceArgument=100000'): more "
                   "macroblocks than the picture's 4, so every picture is one slice, as with SliceMode = 0\n");
  r = with({"SliceMode=1", "SliceArgument=4"});
  EXPECT_EQ(r.err, "");
  r = with({"SliceMode=2", "SliceArgument=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "lencod: warning: SliceMode = 2 with SliceArgument = 2 (-p 'SliceArgument=2') bytes: "
                              "a slice header and a second macroblock take 3 bytes at the least, so every slice "
                              "holds one macroblock (4 slices per picture)\n"))
      << r.err;
  // What the warning says: SPS, PPS and one slice per macroblock.
  const std::string stream = read_text(dir.file("o.264"));
  int start_codes = 0;
  for (size_t i = 0; i + 2 < stream.size(); ++i)
    if (stream[i] == 0 && stream[i + 1] == 0 && stream[i + 2] == 1) ++start_codes;
  EXPECT_EQ(start_codes, 2 + 4);
  r = with({"SliceMode=2", "SliceArgument=3"});
  EXPECT_EQ(r.err, "");
}

TEST_F(CliRobust, ConfigFileWithByteOrderMark) {
  write_text(dir.file("in.yuv"), clip(16, 16, 1));
  write_text(dir.file("bom.cfg"), "\xEF\xBB\xBFInputFile = in.yuv\nSourceWidth = 16\nSourceHeight = 16\n");
  const Result r = run(program("lencod"), {"-d", "bom.cfg", "-p", "OutputFile=o.264"}, dir, logs);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(conf::file_exists(dir.file("o.264")));
}

// ---- A raw input that is not a whole number of frames: the size given is wrong, so no frame can be trusted.

TEST_F(CliRobust, RawSizeNotAWholeNumberOfFramesIsAnError) {
  write_text(dir.file("vga.yuv"), clip(640, 480, 2));
  Result r = lencod({"InputFile=vga.yuv", "SourceWidth=352", "SourceHeight=288", "OutputFile=o.264"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "input 'vga.yuv' (921,600 bytes) is not a whole number of 352x288 frames")) << r.err;
  EXPECT_TRUE(contains(r.err, "640x480 (2 frames)")) << r.err;
  // FramesToBeEncoded = -1 must not drop a trailing partial frame either.
  write_text(dir.file("tail.yuv"), clip(16, 16, 3) + "xyz");
  r = lencod({"InputFile=tail.yuv", "SourceWidth=16", "SourceHeight=16", "FramesToBeEncoded=-1", "OutputFile=o.264"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "not a whole number of 16x16 frames")) << r.err;
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"vga.yuv", "tail.yuv"}));
}

// ---- Conventions of command-line video tools: pipes, ffmpeg, a y4m ReconFile, empty values, all bad values at once.

// Input from a pipe, raw or y4m: the same stream as from the file. FramesToBeEncoded = -1 codes until its end.
TEST_F(CliRobust, InputFromAPipeGivesTheSameStream) {
  const std::string y4m = y4m_clip(32, 32, 3);
  write_text(dir.file("in.y4m"), y4m);
  Result r = lencod({"InputFile=in.y4m", "FramesToBeEncoded=3", "OutputFile=file.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"-", "/dev/stdin"}) {
    Spawn how;
    how.stdin_pipe = true;
    Child c = spawn(program("lencod"),
                    p_args({std::string("InputFile=") + name, "FramesToBeEncoded=-1", "OutputFile=pipe.264"}), dir,
                    logs, how);
    EXPECT_TRUE(c.write_in(y4m));
    const int st = c.wait();
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << name << ": " << read_text(c.err_file);
    EXPECT_EQ(read_text(dir.file("pipe.264")), read_text(dir.file("file.264"))) << name;
    EXPECT_TRUE(contains(read_text(c.out_file), "all (until the end of the input)")) << name;
  }
  // Raw from a pipe, and a pipe that ends inside a frame.
  const std::string raw = clip(32, 32, 3);
  write_text(dir.file("in.yuv"), raw);
  r = lencod({"InputFile=in.yuv", "SourceWidth=32", "SourceHeight=32", "FramesToBeEncoded=3", "OutputFile=file.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string& tail : {std::string(), std::string("xy")}) {
    Spawn how;
    how.stdin_pipe = true;
    Child c = spawn(program("lencod"),
                    p_args({"InputFile=-", "SourceWidth=32", "SourceHeight=32", "FramesToBeEncoded=-1",
                            "OutputFile=pipe.264"}),
                    dir, logs, how);
    EXPECT_TRUE(c.write_in(raw + tail));
    const int st = c.wait();
    if (tail.empty()) {
      ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << read_text(c.err_file);
      EXPECT_EQ(read_text(dir.file("pipe.264")), read_text(dir.file("file.264")));
    } else {
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1);
      EXPECT_TRUE(contains(read_text(c.err_file), "input '-' ends inside frame 3: 2 of its 1536 bytes"))
          << read_text(c.err_file);
    }
  }
}

// FFmpeg's y4m pipe into lencod, as users write it.
TEST_F(CliRobust, FfmpegPipeIntoLencod) {
  if (std::system("ffmpeg -version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg not installed";
  const std::string lencod = conf::shell_quote(program("lencod"));
  const std::string cmd = "cd " + conf::shell_quote(dir.path()) +
                          " && ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=25 -frames:v 4 -pix_fmt yuv420p"
                          " -f yuv4mpegpipe - | " + lencod +
                          " -p InputFile=- -p FramesToBeEncoded=-1 -p OutputFile=o.264 >" +
                          conf::shell_quote(logs.file("out.txt")) + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(logs.file("out.txt"));
  EXPECT_TRUE(contains(read_text(logs.file("out.txt")), "00003( P )")) << read_text(logs.file("out.txt"));
}

// ReconFile = *.y4m is a YUV4MPEG2 file FFmpeg reads, with the same pictures as the raw reconstruction.
TEST_F(CliRobust, Y4mReconFileIsReadByFfmpeg) {
  write_text(dir.file("in.yuv"), clip(48, 32, 3));
  const std::vector<std::string> common = {"InputFile=in.yuv", "SourceWidth=48", "SourceHeight=32",
                                           "FramesToBeEncoded=3", "FrameRate=29.97", "OutputFile=o.264"};
  std::vector<std::string> a = common, b = common;
  a.push_back("ReconFile=r.yuv");
  b.push_back("ReconFile=r.y4m");
  ASSERT_EQ(lencod(a).status, 0);
  const Result r = lencod(b);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string y4m = read_text(dir.file("r.y4m"));
  EXPECT_EQ(y4m.substr(0, y4m.find('\n')), "YUV4MPEG2 W48 H32 F2997:100 Ip A1:1 C420jpeg");
  if (std::system("ffprobe -version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg not installed";
  const std::string d = conf::shell_quote(dir.path());
  const conf::CommandResult probe = conf::run_command(
      "ffprobe -v error -show_entries stream=width,height,pix_fmt,r_frame_rate -of csv=p=0 " + d + "/r.y4m");
  EXPECT_EQ(probe.status, 0) << probe.output;
  EXPECT_EQ(probe.output, "48,32,yuv420p,2997/100\n");
  const conf::CommandResult conv =
      conf::run_command("ffmpeg -v error -i " + d + "/r.y4m -f rawvideo -pix_fmt yuv420p " + d + "/back.yuv");
  ASSERT_EQ(conv.status, 0) << conv.output;
  EXPECT_EQ(read_text(dir.file("back.yuv")), read_text(dir.file("r.yuv")));
}

TEST_F(CliRobust, EmptyStatsFileSwitchesItOff) {
  write_text(dir.file("in.yuv"), clip(16, 16, 1));
  const Result r = lencod({"InputFile=in.yuv", "SourceWidth=16", "SourceHeight=16", "OutputFile=o.264", "StatsFile="});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"in.yuv", "o.264"}));
}

TEST_F(CliRobust, EveryBadValueIsReportedInOneRun) {
  write_text(dir.file("in.yuv"), clip(16, 16, 1));
  write_text(dir.file("bad.cfg"), "QPISlice = 60\nSymbolMode = 1\nSearchRange = x\nNumberBFrames = 2\n");
  const Result r = run(program("lencod"),
                    {"-d", "bad.cfg", "-p", "InputFile=in.yuv", "-p", "GPUTopK=0", "-p", "OutputFile=o.264"}, dir,
                    logs);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(count_lines(r.err), 5) << r.err;
  for (const char* part : {"lencod: error: QPISlice = 60 (bad.cfg:1)", "lencod: error: SymbolMode = 1 (bad.cfg:2)",
                           "lencod: error: SearchRange = 'x' (bad.cfg:3)", "lencod: error: NumberBFrames = 2 (bad.cfg:4)",
                           "lencod: error: GPUTopK = 0 (-p 'GPUTopK=0')"})
    EXPECT_TRUE(contains(r.err, part)) << part << " missing in:\n" << r.err;
  EXPECT_EQ(list_dir(dir.path()), (std::set<std::string>{"in.yuv", "bad.cfg"}));
}

// ---- Provenance: a published number must name the program version and machine that produced it.

TEST_F(CliRobust, EveryProgramAnswersVersion) {
  const std::string v = version_string();
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"lencod", "--version"}, {"lencod", "-V"}, {"synth", "--version"}, {"bench_me", "--version"},
           {"bench_gpu", "--version"}}) {
    const Result r = run(program(cmd[0]), {cmd[1]}, dir, logs);
    EXPECT_EQ(r.status, 0) << cmd[0] << " " << cmd[1] << ": " << r.err;
    EXPECT_EQ(r.out, cmd[0] + " " + v + "\n") << cmd[0] << " " << cmd[1];
  }
  EXPECT_EQ(v.rfind("gme264 ", 0), 0u) << v;
}

TEST_F(CliRobust, VersionInTheBannerAndTheStatsFile) {
  write_text(dir.file("in.yuv"), clip(16, 16, 1));
  const Result r = lencod({"InputFile=in.yuv", "SourceWidth=16", "SourceHeight=16", "OutputFile=o.264",
                        "StatsFile=s.jsonl"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, " Version                           : " + version_string() + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, " CPU                               : " + cpu_description() + "\n")) << r.out;
  const std::string stats = read_text(dir.file("s.jsonl"));
  EXPECT_TRUE(contains(stats, ",\"version\":\"" + version_string() + "\",\"cpu\":\"" + cpu_description() +
                                  "\",\"gpu\":null,"))
      << stats;
}

// ---- What GPUIntegerME = 1 says without a GPU, in one warning with the usual prefix.

TEST_F(CliRobust, NoGpuIsSaidPlainly) {
  write_text(dir.file("in.yuv"), clip(16, 16, 2));
  const Result r = lencod({"InputFile=in.yuv", "SourceWidth=16", "SourceHeight=16", "FramesToBeEncoded=2",
                        "GPUIntegerME=1", "OutputFile=o.264"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "Warning:")) << r.err;
  EXPECT_FALSE(contains(r.err, "insufficient")) << r.err;
#ifndef GME_HAVE_CUDA
  EXPECT_FALSE(contains(r.out, "starting CUDA device")) << r.out;
  EXPECT_TRUE(contains(r.err, "lencod: warning: GPUIntegerME = 1 runs on the CPU twin: built without CUDA")) << r.err;
#else
  if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY)) {
    dlclose(driver);
    GTEST_SKIP() << "an NVIDIA driver is installed: the message for its absence cannot be seen here";
  }
  EXPECT_TRUE(contains(r.err, "lencod: warning: GPUIntegerME = 1 runs on the CPU twin: no NVIDIA driver found")) << r.err;
#endif
}

}  // namespace
}  // namespace gme
