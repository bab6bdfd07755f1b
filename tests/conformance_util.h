// Helpers of the conformance tests: run bin/lencod on a clip, decode the stream with FFmpeg and compare the decoded
// pictures with the encoder's ReconFile byte for byte. Tests run from the repository root; programs are found in
// $GME_BIN (default "bin", relative to the root).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace gme::conf {

// Directory of the programs (GME_BIN or "bin").
std::string bin_dir();

// Quotes a word for /bin/sh.
std::string shell_quote(const std::string& s);

struct CommandResult {
  int status = -1;     // exit status; -1 if it could not run or was killed
  std::string output;  // stdout and stderr together
};
// Runs `cmd` through /bin/sh, stdin from /dev/null.
CommandResult run_command(const std::string& cmd);

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor unless keep() was called.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

bool read_file(const std::string& path, std::vector<uint8_t>* out);
bool file_exists(const std::string& path);
// The whole file as text ("" when it cannot be read), and a file written with exactly `text`.
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);
// The names in a directory, "." and ".." left out: what a run left behind.
std::set<std::string> list_dir(const std::string& dir);
// p made absolute against the working directory (for commands run from another directory).
std::string absolute(const std::string& p);

// A row of a golden table (tests/golden/*.tsv): name, clip, frames, space-separated parameters, then hash columns.
struct HashTableRow {
  std::string name, clip;
  int frames = 0;
  std::vector<std::string> params;
  std::vector<std::string> hashes;  // always `hash_columns` entries ("" where the row is malformed)
  int line = 0;
};
// The rows of a tab-separated golden table with `hash_columns` hash columns ('#' lines are comments). A missing
// table is one row named "missing_table", a malformed line a row named "malformed_line_N": tests built on the rows
// then fail, so a broken table can never pass by having fewer rows.
std::vector<HashTableRow> read_hash_table(const std::string& path, size_t hash_columns);

// A 4:2:0 input clip.
struct Clip {
  std::string file;
  int width = 0, height = 0, frames = 0;
  std::string made_by;  // command that made a synthetic clip (its file is temporary), "" otherwise
};

// A clip made by bin/synth (once per process, kept in a process-wide temporary directory).
// ext: "yuv", "y4m" or "yuv.gz"; mode_args: extra bin/synth arguments ("" or "--mode shift --shift 7,-3").
// Fails the calling test (and returns an empty file name) if bin/synth fails.
Clip synth_clip(int width, int height, int frames, const std::string& ext = "yuv", const std::string& mode_args = "");

// A clip from a spec: "synth:WxH[:y4m|:gz|:noise|:shift]" (bin/synth; shift: the whole picture moves by (+7, -3)
// pel per frame) with at least `frames` frames (8 or more), or "real:NAME" (manifest_clip). An empty file name when
// the real clip is not made (the caller skips); a bad spec or a failing bin/synth fails the calling test.
Clip clip_from_spec(const std::string& spec, int frames);

// A clip listed in sequences/manifest.csv whose file exists (made by sequences/make_clips.sh).
bool manifest_clip(const std::string& name, Clip* out);

// First difference between two 4:2:0 sequences of width x height pictures, as "frame F plane P (x, y): a vs b",
// or "" when equal. Also reports size mismatches.
std::string first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int width, int height);

// Annex B NAL units of a stream: type (nal_unit_type) and size in bytes (start code excluded).
struct NalUnit {
  int type = 0;
  size_t size = 0;
};
std::vector<NalUnit> split_annexb(const std::vector<uint8_t>& stream);

struct EncodeOutput {
  std::string lencod_cmd, ffmpeg_cmd;
  std::vector<uint8_t> stream;
  std::vector<uint8_t> recon;  // the ReconFile
  std::string stats;  // StatsFile contents (JSON lines) when asked for
  std::string console;
};

// Encodes the first `frames` frames of `clip` with cfg/encoder_baseline.cfg ($GME_CONF_CFG if set) plus `params` ("Key=Value" each), then
// requires: lencod exits 0; the ReconFile holds `frames` pictures; `ffmpeg -v error -i s.264 -f rawvideo
// -pix_fmt yuv420p dec.yuv` exits 0 and prints nothing; dec.yuv == ReconFile byte for byte. On failure the message
// gives both command lines, the output and the first differing sample, and the working directory is kept.
// decode = false skips FFmpeg: only for a caller that compares the stream with one FFmpeg has decoded elsewhere (the
// golden table on a machine without FFmpeg).
::testing::AssertionResult encode_and_verify(const Clip& clip, int frames, const std::vector<std::string>& params,
                                             EncodeOutput* out = nullptr, bool want_stats = false, bool decode = true);

}  // namespace gme::conf
