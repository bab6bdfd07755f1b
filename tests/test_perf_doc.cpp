// tools/perf_doc.sh stamps a regenerated section of doc/PERFORMANCE.md with the version of the programs that made
// its figures (their --version), and says so when that is not the tree's own: programs not rebuilt since a change
// must not pass for the tree's. A stand-in bench_me (GME_BIN) prints a version of our choosing.
#include <gtest/gtest.h>

#include <string>

#include "tests/conformance_util.h"

namespace gme::conf {
namespace {

// The tree's version as the script computes it.
std::string tree_version() {
  const CommandResult r = run_command("git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown");
  std::string v = r.output;
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

struct Regenerated {
  CommandResult run;
  std::string doc;
};

// Regenerates the cpu-me section of a small document with a bench_me that reports `version` and prints `figures`.
Regenerated regenerate(const TempDir& dir, const std::string& version, const std::string& figures) {
  const std::string bin = dir.file("bin");
  EXPECT_EQ(run_command("mkdir -p " + shell_quote(bin)).status, 0);
  write_text(bin + "/bench_me",
             "#!/bin/sh\n"
             "if [ \"$1\" = --version ]; then echo 'bench_me gme264 0.9.0 (git " + version + ", g++ 13)'; exit 0; fi\n"
             "echo '" + figures + "'\n");
  EXPECT_EQ(run_command("chmod +x " + shell_quote(bin + "/bench_me")).status, 0);
  const std::string doc = dir.file("PERF.md");
  write_text(doc, "# Figures\n\n<!-- perf:cpu-me -->\nold text\n<!-- /perf -->\n\nAfter.\n");
  Regenerated r;
  r.run = run_command("GME_BIN=" + shell_quote(bin) + " tools/perf_doc.sh --doc " + shell_quote(doc) + " cpu-me");
  r.doc = read_text(doc);
  return r;
}

TEST(PerfDoc, StampsTheProgramsBuildAndWarnsWhereTheTreeDiffers) {
  TempDir dir("perf_doc_stale");
  const std::string tree = tree_version();
  const Regenerated r = regenerate(dir, "0123456789ab", "figure 42");
  ASSERT_EQ(r.run.status, 0) << r.run.output;
  EXPECT_NE(r.run.output.find("warning: the programs were built from 0123456789ab, the tree is at " + tree),
            std::string::npos)
      << r.run.output;
  EXPECT_NE(r.doc.find("source: 0123456789ab (the programs' build; the tree: " + tree + ")"), std::string::npos)
      << r.doc;
  EXPECT_NE(r.doc.find("figure 42"), std::string::npos) << r.doc;
  EXPECT_EQ(r.doc.find("old text"), std::string::npos) << r.doc;
  EXPECT_NE(r.doc.find("\nAfter."), std::string::npos) << "the text after the section stays: " << r.doc;
}

TEST(PerfDoc, StampsTheTreeWithoutWarningWhereTheProgramsAreItsBuild) {
  TempDir dir("perf_doc_fresh");
  const std::string tree = tree_version();
  const Regenerated r = regenerate(dir, tree, "figure 7");
  ASSERT_EQ(r.run.status, 0) << r.run.output;
  EXPECT_EQ(r.run.output.find("warning"), std::string::npos) << r.run.output;
  EXPECT_NE(r.doc.find("source: " + tree + "\n"), std::string::npos) << r.doc;
  EXPECT_NE(r.doc.find("figure 7"), std::string::npos) << r.doc;
}

}  // namespace
}  // namespace gme::conf
