// rdsweep (rd/rdsweep_*.h): arguments, manifest, plan, resume, the process runner (against a stand-in
// encoder script), Table 2 and report formatting, SVG well-formedness, and one end-to-end run of bin/rdsweep with
// the real bin/lencod (skipped, with the reason, while the encoder cannot encode yet).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/version.h"
#include "rd/rd_input.h"
#include "rd/rdsweep_exec.h"
#include "rd/rdsweep_options.h"
#include "rd/rdsweep_plan.h"
#include "rd/rdsweep_report.h"
#include "rd/rdsweep_svg.h"
#include "tests/conformance_util.h"

namespace gme {
namespace {

// A fresh, empty folder of its own (mkdtemp): a name made of the process id alone was reused once the id came round
// again, and a test that checks that nothing was written then found an earlier run's output. The folders go when the
// test program ends (a static list of conf::TempDir), so runs leave nothing behind.
std::string temp_dir(const std::string& name) {
  static std::vector<std::unique_ptr<conf::TempDir>> made;
  made.push_back(std::make_unique<conf::TempDir>("rdsweep_" + name));
  return made.back()->path();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string error_of(const std::vector<std::string>& args) {
  try {
    parse_sweep_args(args, 4, "/x/lencod");
  } catch (const SweepError& e) {
    return e.what();
  }
  return "";
}

// ---- Arguments ----

TEST(RdsweepArgs, Defaults) {
  const SweepOptions o = parse_sweep_args({"-f", "cfg/x.cfg"}, 6, "/opt/bin/lencod");
  EXPECT_EQ(o.cfg, "cfg/x.cfg");
  EXPECT_EQ(o.qps, (std::vector<int>{28, 32, 36, 40}));
  ASSERT_EQ(o.runs.size(), 2u);
  EXPECT_EQ(o.runs[0].name, "unmodified");
  EXPECT_EQ(o.runs[0].params, (std::vector<std::pair<std::string, std::string>>{{"GPUIntegerME", "0"}}));
  EXPECT_EQ(o.runs[1].name, "gpu");
  EXPECT_EQ(o.runs[1].params, (std::vector<std::pair<std::string, std::string>>{{"GPUIntegerME", "1"}}));
  EXPECT_EQ(o.anchor, "unmodified");
  EXPECT_EQ(o.jobs, 6);
  EXPECT_EQ(o.out_dir, "results");
  EXPECT_EQ(o.lencod, "/opt/bin/lencod");
  EXPECT_EQ(o.manifest, "sequences/manifest.csv");
  EXPECT_FALSE(o.force);
}

// -j by default keeps -j x lencod's Threads within the cores; a given -j stays.
TEST(RdsweepArgs, DefaultJobsShareTheCoresWithThreads) {
  EXPECT_EQ(parse_sweep_args({"-f", "c", "-p", "Threads=4"}, 16, "l").jobs, 4);
  EXPECT_EQ(parse_sweep_args({"-f", "c", "-p", "Threads=3"}, 16, "l").jobs, 5);
  EXPECT_EQ(parse_sweep_args({"-f", "c", "-p", "Threads=32"}, 16, "l").jobs, 1);
  EXPECT_EQ(parse_sweep_args({"-f", "c", "-p", "Threads=0"}, 16, "l").jobs, 1);  // every core per encode
  EXPECT_EQ(parse_sweep_args({"-f", "c", "-p", "Threads=8", "-p", "Threads=2"}, 16, "l").jobs, 8);  // the last -p
  EXPECT_EQ(parse_sweep_args({"-f", "c", "--run", "unmodified", "--run", "b:GPUIntegerME=1,Threads=4"}, 16, "l").jobs, 4);
  EXPECT_EQ(parse_sweep_args({"-f", "c", "-p", "Threads=8", "--run", "b:Threads=2"}, 16, "l").jobs, 8);  // run wins
  EXPECT_EQ(parse_sweep_args({"-f", "c", "-p", "Threads=4", "-j", "16"}, 16, "l").jobs, 16);
}

TEST(RdsweepArgs, RunsQpsAndOverrides) {
  const SweepOptions o = parse_sweep_args(
      {"-f", "a.cfg", "--run", "unmodified", "--run", "top8:GPUIntegerME=1,GPUTopK=8", "--qp", "40", "28", "--qp",
       "32,36", "-p", "SearchRange=16", "-j3", "--out", "r", "--seq", "a,b", "--seq", "c", "--frames", "5", "--force",
       "--pchip", "--anchor", "top8", "s=x.yuv:176x144:10"},
      4, "l");
  ASSERT_EQ(o.runs.size(), 2u);
  EXPECT_EQ(o.runs[0].params[0].second, "0");
  EXPECT_EQ(o.runs[1].name, "top8");
  EXPECT_EQ(o.runs[1].params[1], (std::pair<std::string, std::string>{"GPUTopK", "8"}));
  EXPECT_EQ(o.qps, (std::vector<int>{28, 32, 36, 40}));
  EXPECT_EQ(o.overrides, std::vector<std::string>{"SearchRange=16"});
  EXPECT_EQ(o.jobs, 3);
  EXPECT_EQ(o.seq_filter, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(o.frames, 5);
  EXPECT_TRUE(o.force);
  EXPECT_TRUE(o.pchip);
  EXPECT_EQ(o.anchor, "top8");
  ASSERT_EQ(o.sequences.size(), 1u);
  EXPECT_EQ(o.sequences[0].file, "x.yuv");
}

TEST(RdsweepArgs, Errors) {
  EXPECT_NE(error_of({}).find("no configuration given, expected -f CFG"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--bogus"}).find("unknown option '--bogus'"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--qp", "52"}).find("'52' is not a QP in 0..51"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--qp", "28,32,36,32"}).find("--qp lists QP 32 twice"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--run", "x:A=1", "--run", "x:A=2"}).find("run 'x' is defined twice"),
            std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--run", "fast"}).find("only unmodified and gpu are predefined"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--run", "x:GPUTopK"}).find("setting 'GPUTopK' is not Key=Value"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--run", "a/b:K=1"}).find("may only use letters"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--anchor", "cpu"}).find("--anchor 'cpu' is not one of the runs"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-j", "0"}).find("-j '0' is not a positive integer"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-p", "QPISlice"}).find("is not Key=Value"), std::string::npos);
  EXPECT_NE(error_of({"-f"}).find("option -f needs a value"), std::string::npos);
  // Keys the sweep sets on every point: overridden (QPs, files) or overriding the sequence behind the report's back.
  EXPECT_EQ(error_of({"-f", "a", "-p", "QPISlice=20"}),
            "-p 'QPISlice=20': QPISlice is set by the sweep itself for every point; use --qp");
  EXPECT_NE(error_of({"-f", "a", "-p", "qppslice = 20"}).find("qppslice is set by the sweep itself for every point; "
                                                             "use --qp"), std::string::npos);  // lencod ignores case
  EXPECT_NE(error_of({"-f", "a", "--run", "x:GPUIntegerME=1,QPPSlice=20"})
                .find("run 'x:GPUIntegerME=1,QPPSlice=20': QPPSlice is set by the sweep itself"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-p", "FramesToBeEncoded=5"}).find("use --frames"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-p", "ReconFile=r.yuv"}).find("use --out, or --no-recon"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-p", "StatsFile=s.jsonl"}).find("use --out"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-p", "InputFile=x.yuv"}).find("use a sequence item"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-p", "SourceWidth=64"}).find("use a sequence item"), std::string::npos);
  EXPECT_EQ(error_of({"-f", "a", "-p", "SearchRange=8", "--run", "x:GPUTopK=8"}), "");  // other keys are the user's
  EXPECT_TRUE(parse_sweep_args({"--help"}, 1, "l").help);
  EXPECT_TRUE(parse_sweep_args({"--version"}, 1, "l").version);
}

TEST(RdsweepArgs, GnuLongOptionForms) {
  // "--key=value" and "--key value" are the same (getopt_long); short options take attached values.
  const SweepOptions a = parse_sweep_args({"-f", "c.cfg", "--frames=2", "--qp=30,34", "--out=r", "-j3", "--seq=x"}, 1,
                                          "l");
  const SweepOptions b = parse_sweep_args({"-f", "c.cfg", "--frames", "2", "--qp", "30", "34", "--out", "r", "-j", "3",
                                           "--seq", "x"}, 1, "l");
  EXPECT_EQ(a.frames, 2);
  EXPECT_EQ(b.frames, 2);
  EXPECT_EQ(a.qps, b.qps);
  EXPECT_EQ(a.qps, (std::vector<int>{30, 34}));
  EXPECT_EQ(a.out_dir, b.out_dir);
  EXPECT_EQ(a.jobs, 3);
  EXPECT_EQ(b.jobs, 3);
  EXPECT_EQ(a.seq_filter, b.seq_filter);
  // A number after --qp's list is a QP; a sequence item after it is a sequence.
  const SweepOptions c = parse_sweep_args({"-f", "c", "--qp", "28", "40", "s=x.yuv:16x16:2"}, 1, "l");
  EXPECT_EQ(c.qps, (std::vector<int>{28, 40}));
  ASSERT_EQ(c.sequences.size(), 1u);
  EXPECT_NE(error_of({"-f", "a", "--frames=x"}).find("--frames 'x' is not a positive integer"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--frames"}).find("option --frames needs a value"), std::string::npos)
      << error_of({"-f", "a", "--frames"});
}

TEST(RdsweepArgs, ModesTimingShardAndSlurm) {
  const SweepOptions d = parse_sweep_args({"-f", "c"}, 4, "l");
  EXPECT_EQ(d.timing, SweepTiming::kParallel);
  const SweepOptions s = parse_sweep_args({"-f", "c", "--timing", "serial"}, 4, "l");
  EXPECT_EQ(s.timing, SweepTiming::kSerial);
  EXPECT_EQ(s.jobs, 1);  // one encode at a time, whatever the core count
  EXPECT_NE(error_of({"-f", "c", "--timing=serial", "-j", "2"}).find("--timing serial runs one encode at a time"),
            std::string::npos);
  EXPECT_NE(error_of({"-f", "c", "--timing", "fast"}).find("expected serial or parallel"), std::string::npos);
  const SweepOptions sh = parse_sweep_args({"-f", "c", "--shard=2/3"}, 4, "l");
  EXPECT_EQ(sh.shard_index, 2);
  EXPECT_EQ(sh.shard_count, 3);
  EXPECT_NE(error_of({"-f", "c", "--shard", "0/2"}).find("expected I/N with 1 <= I <= N"), std::string::npos);
  EXPECT_NE(error_of({"-f", "c", "--shard", "3/2"}).find("expected I/N"), std::string::npos);
  EXPECT_NE(error_of({"-f", "c", "--shard", "1/2", "--report-only"}).find("exclude each other"), std::string::npos);
  EXPECT_NE(error_of({"-f", "c", "--partition", "gpu"}).find("apply to --slurm only"), std::string::npos);
  const SweepOptions sl = parse_sweep_args({"-f", "c", "--slurm", "--partition=p", "--time-limit", "1:00:00",
                                            "--cpus-per-task=4", "--gpus-per-task", "2", "--sbatch-arg=--qos=low",
                                            "--sbatch-arg", "--account=a", "--no-wait", "--poll=0.5"}, 4, "l");
  EXPECT_TRUE(sl.slurm.enabled);
  EXPECT_EQ(sl.slurm.partition, "p");
  EXPECT_EQ(sl.slurm.time_limit, "1:00:00");
  EXPECT_EQ(sl.slurm.cpus_per_task, 4);
  EXPECT_EQ(sl.slurm.gpus_per_task, 2);
  EXPECT_EQ(sl.slurm.sbatch_args, (std::vector<std::string>{"--qos=low", "--account=a"}));
  EXPECT_TRUE(sl.slurm.no_wait);
  EXPECT_DOUBLE_EQ(sl.slurm.poll_s, 0.5);
  EXPECT_NE(error_of({"-f", "c", "--slurm", "--timing", "serial"}).find("with --slurm"), std::string::npos);
  const SweepOptions rp = parse_sweep_args({"-f", "c", "--run-point", "s/gpu/qp28", "--no-recon", "--strict"}, 4, "l");
  EXPECT_EQ(rp.run_point, "s/gpu/qp28");
  EXPECT_TRUE(rp.no_recon);
  EXPECT_TRUE(rp.strict);
}

TEST(RdsweepArgs, PlanArgumentsReproduceThePlan) {
  const SweepOptions o = parse_sweep_args({"-f", "/c/base.cfg", "--qp", "30,34", "--run", "unmodified", "--run",
                                           "k8:GPUIntegerME=1,GPUTopK=8", "--anchor", "k8", "-p", "SearchRange=8",
                                           "--frames", "3", "--out", "/r", "--lencod", "/b/lencod", "--no-recon",
                                           "-j", "2", "--shard", "1/2", "s=/clips/s.yuv:176x144:10:25"},
                                          2, "unused");
  std::vector<std::string> again = plan_arguments(o);
  // No engine options: a point runner plans the same points whatever the engine.
  for (const std::string& a : again) {
    EXPECT_EQ(a.find("--shard"), std::string::npos);
    EXPECT_NE(a, "-j");
  }
  const SweepOptions p = parse_sweep_args(again, 7, "other");
  const auto plan_o = build_plan(o, select_sequences(o)), plan_p = build_plan(p, select_sequences(p));
  ASSERT_EQ(plan_o.size(), plan_p.size());
  for (size_t i = 0; i < plan_o.size(); i++) {
    EXPECT_EQ(plan_o[i].id(), plan_p[i].id());
    EXPECT_EQ(command_text(plan_o[i].argv), command_text(plan_p[i].argv));
  }
  EXPECT_EQ(p.anchor, "k8");
}

TEST(RdsweepArgs, SequenceItems) {
  const SweepSequence s = parse_sequence_item("fm=/data/a:b/foreman.yuv:352x288:300:29.97");
  EXPECT_EQ(s.name, "fm");
  EXPECT_EQ(s.file, "/data/a:b/foreman.yuv");
  EXPECT_EQ(s.width, 352);
  EXPECT_EQ(s.height, 288);
  EXPECT_EQ(s.frames, 300);
  EXPECT_DOUBLE_EQ(s.fps, 29.97);
  EXPECT_DOUBLE_EQ(parse_sequence_item("q=q.yuv:176x144:10").fps, 30.0);
  EXPECT_THROW(parse_sequence_item("q.yuv:176x144:10"), SweepError);
  EXPECT_THROW(parse_sequence_item("q=q.yuv:176x144"), SweepError);
  EXPECT_THROW(parse_sequence_item("q=q.yuv:175x144:10"), SweepError);
  EXPECT_THROW(parse_sequence_item("q=q.yuv:176x144:0"), SweepError);
  EXPECT_THROW(parse_sequence_item("q=q.yuv:176x144:ten"), SweepError);
}

// ---- Manifest ----

TEST(RdsweepManifest, ReadsResolvesAndFilters) {
  const std::string root = temp_dir("manifest");
  std::string err;
  ASSERT_TRUE(make_dirs(root + "/sequences", &err)) << err;
  write(root + "/sequences/manifest.csv",
        "name,file,width,height,frames,fps\n"
        "a,sequences/a.yuv,176,144,10,30\n"
        "\n"
        "b,/abs/b.yuv.gz,640,480,30,23.976\n");
  const auto seqs = read_manifest(root + "/sequences/manifest.csv");
  ASSERT_EQ(seqs.size(), 2u);
  EXPECT_EQ(seqs[0].file, root + "/sequences/../sequences/a.yuv");  // relative to the repository root
  EXPECT_EQ(seqs[1].file, "/abs/b.yuv.gz");
  EXPECT_DOUBLE_EQ(seqs[1].fps, 23.976);

  SweepOptions o = parse_sweep_args({"-f", "c", "--manifest", root + "/sequences/manifest.csv", "--seq", "b",
                                     "--frames", "4"}, 1, "l");
  auto sel = select_sequences(o);
  ASSERT_EQ(sel.size(), 1u);
  EXPECT_EQ(sel[0].name, "b");
  EXPECT_EQ(sel[0].frames, 4);
  std::vector<std::string> warnings;
  select_sequences(o, &warnings);
  EXPECT_TRUE(warnings.empty());
  o.frames = 100;  // never more frames than the clip has, and said
  EXPECT_EQ(select_sequences(o, &warnings)[0].frames, 30);
  EXPECT_EQ(warnings, std::vector<std::string>{"--frames 100: sequence b has 30 frames; encoding 30"});
  o.seq_filter = {"zz"};
  try {
    select_sequences(o);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("--seq 'zz' is not a known sequence (known: a, b)"), std::string::npos);
  }
}

TEST(RdsweepManifest, ErrorsNameLine) {
  const std::string d = temp_dir("badmanifest");
  write(d + "/m.csv", "name,file,width,height,frames,fps\na,a.yuv,176,144,10,30\nb,b.yuv,176,1x4,10,30\n");
  try {
    read_manifest(d + "/m.csv");
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("m.csv:3: height '1x4' is not an integer"), std::string::npos) << e.what();
  }
  write(d + "/h.csv", "file,name\n");
  EXPECT_THROW(read_manifest(d + "/h.csv"), SweepError);
  write(d + "/dup.csv", "name,file,width,height,frames\na,a.yuv,176,144,10\na,b.yuv,176,144,10\n");
  EXPECT_THROW(read_manifest(d + "/dup.csv"), SweepError);
  EXPECT_THROW(read_manifest(d + "/missing.csv"), SweepError);
}

// ---- Plan and resume ----

SweepOptions small_options(const std::string& out, const std::string& lencod) {
  SweepOptions o = parse_sweep_args({"-f", "/cfg/base.cfg", "--qp", "30,34", "-p", "SearchRange=8", "--out", out,
                                     "--lencod", lencod, "s=/clips/s.yuv:176x144:3:25"},
                                    2, "unused");
  return o;
}

TEST(RdsweepPlan, PointsFoldersAndSettingOrder) {
  const SweepOptions o = small_options("/res", "/bin/lencod");
  const auto plan = build_plan(o, o.sequences);
  ASSERT_EQ(plan.size(), 4u);  // 1 sequence x 2 runs x 2 QPs
  EXPECT_EQ(plan[0].run, "unmodified");
  EXPECT_EQ(plan[1].qp, 34);
  EXPECT_EQ(plan[2].run, "gpu");
  EXPECT_EQ(plan[3].dir, "/res/s/gpu/qp34");
  EXPECT_EQ(plan[3].stats(), "/res/s/gpu/qp34/stats.jsonl");
  EXPECT_EQ(plan[3].id(), "s/gpu/qp34");
  EXPECT_EQ(plan[3].index, 3);
  const std::string cmd = command_text(plan[3].argv);
  EXPECT_EQ(cmd,
            "/bin/lencod -f /cfg/base.cfg -p InputFile=/clips/s.yuv -p SourceWidth=176 -p SourceHeight=144 "
            "-p FramesToBeEncoded=3 -p FrameRate=25 -p SearchRange=8 -p GPUIntegerME=1 -p QPISlice=34 "
            "-p QPPSlice=34 -p OutputFile=/res/s/gpu/qp34/stream.part.264 -p ReconFile=/res/s/gpu/qp34/recon.part.yuv "
            "-p StatsFile=/res/s/gpu/qp34/stats.part.jsonl");
  EXPECT_EQ(command_text({"a b", "it's"}), "'a b' 'it'\\''s'");
  // --no-recon: JM's quoted empty value switches the reconstruction off.
  SweepOptions n = o;
  n.no_recon = true;
  EXPECT_NE(command_text(build_plan(n, n.sequences)[0].argv).find("-p 'ReconFile=\"\"'"), std::string::npos);
}

TEST(RdsweepPlan, GpuNeedFindAndOrder) {
  const SweepOptions o = small_options("/res", "/bin/lencod");
  auto plan = build_plan(o, o.sequences);
  EXPECT_FALSE(plan[0].needs_gpu);
  EXPECT_TRUE(plan[2].needs_gpu);
  // A run without GPUIntegerME of its own: the cfg decides.
  SweepOptions c = parse_sweep_args({"-f", "/c.cfg", "--run", "mine:SearchRange=8", "s=/s.yuv:16x16:2"}, 1, "l");
  EXPECT_FALSE(build_plan(c, c.sequences, "GPUIntegerME = 0 # cpu\n")[0].needs_gpu);
  EXPECT_TRUE(build_plan(c, c.sequences, "# GPUIntegerME = 0\nGPUIntegerME = 1\n")[0].needs_gpu);
  EXPECT_FALSE(build_plan(c, c.sequences, "")[0].needs_gpu);
  // Keys in any case, as lencod reads them.
  EXPECT_TRUE(build_plan(c, c.sequences, "gpuintegerme = 1\n")[0].needs_gpu);
  SweepOptions l = parse_sweep_args({"-f", "/c.cfg", "--run", "mine:gpuIntegerMe=1", "s=/s.yuv:16x16:2"}, 1, "l");
  EXPECT_TRUE(build_plan(l, l.sequences, "GPUIntegerME = 0\n")[0].needs_gpu);
  EXPECT_EQ(find_point(plan, "s/gpu/qp30"), &plan[2]);
  EXPECT_EQ(find_point(plan, "3"), &plan[3]);
  EXPECT_EQ(find_point(plan, "s/gpu/qp31"), nullptr);
  EXPECT_EQ(find_point(plan, "4"), nullptr);
  // Interleaved: per QP, both runs back to back.
  const auto order = interleaved(plan);
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[0]->id(), "s/unmodified/qp30");
  EXPECT_EQ(order[1]->id(), "s/gpu/qp30");
  EXPECT_EQ(order[2]->id(), "s/unmodified/qp34");
  EXPECT_EQ(order[3]->id(), "s/gpu/qp34");
}

TEST(RdsweepPlan, ShardsPartitionThePlanAndKeepQpPairsTogether) {
  SweepOptions o = parse_sweep_args({"-f", "/c.cfg", "--qp", "22,27,32,37,42", "a=/a.yuv:16x16:2",
                                     "b=/b.yuv:16x16:2"}, 1, "l");
  const auto plan = build_plan(o, o.sequences);
  for (int n : {1, 2, 3, 7}) {
    std::vector<int> hits(plan.size(), 0);
    for (int i = 1; i <= n; i++)
      for (const auto& p : plan)
        if (in_shard(p, plan, i, n)) hits[p.index]++;
    for (size_t k = 0; k < plan.size(); k++) EXPECT_EQ(hits[k], 1) << "point " << k << " of " << n << " shards";
    for (const auto& p : plan)
      for (const auto& q : plan)
        if (p.seq.name == q.seq.name && p.qp == q.qp) {
          for (int i = 1; i <= n; i++) EXPECT_EQ(in_shard(p, plan, i, n), in_shard(q, plan, i, n));
        }
  }
  EXPECT_TRUE(in_shard(plan[3], plan, 0, 0));  // no --shard: every point
}

// A fingerprint set and a point.json as the runner writes them.
SweepFingerprints prints_for(const SweepPoint& p) {
  SweepFingerprints f;
  f.encoder_sha256 = std::string(64, 'e');
  f.cfg_sha256 = std::string(64, 'c');
  f.inputs[absolute_path(p.seq.file)] = std::string(64, 'i');
  return f;
}

PointRecord record_for(const SweepPoint& p, const SweepFingerprints& f) {
  PointRecord r;
  r.command = command_text(p.argv);
  r.encoder_sha256 = f.encoder_sha256;
  r.cfg_sha256 = f.cfg_sha256;
  r.input_sha256 = f.inputs.at(absolute_path(p.seq.file));
  r.stream_sha256 = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881";  // sha256sum of "x"
  r.host = "h";
  r.invocation = "h:1:2";
  r.warnings = {"a \"quoted\" warning"};
  return r;
}

TEST(RdsweepPlan, ResumeNeedsMarkerMatchingCommandAndFingerprints) {
  const std::string out = temp_dir("resume");
  const SweepOptions o = small_options(out, "/bin/lencod");
  const SweepPoint p = build_plan(o, o.sequences)[0];
  const SweepFingerprints f = prints_for(p);
  PointStatus st = point_status(p, f);
  EXPECT_EQ(st.state, PointState::kMissing);
  EXPECT_EQ(st.why, "not encoded yet");
  std::string err;
  make_dirs(p.dir, &err);
  write(p.stats(), "{\"frame\":0}\n{\"summary\":{\"kbps\":100,\"psnr_y\":35,\"psnr_u\":40,\"psnr_v\":41}}\n");
  write(p.stream(), "x");
  st = point_status(p, f);
  EXPECT_EQ(st.state, PointState::kIncomplete) << st.why;  // no point.json: never counted as complete
  ASSERT_TRUE(write_point_record(p, record_for(p, f), &err)) << err;
  st = point_status(p, f);
  EXPECT_EQ(st.state, PointState::kComplete) << st.why;
  EXPECT_DOUBLE_EQ(st.result.kbps, 100);
  EXPECT_EQ(st.record.warnings, std::vector<std::string>{"a \"quoted\" warning"});
  EXPECT_EQ(st.record.invocation, "h:1:2");
  // Each input of the result, changed alone, makes the point stale and says which.
  auto stale_because = [&](SweepFingerprints g) {
    const PointStatus s2 = point_status(p, g);
    EXPECT_EQ(s2.state, PointState::kStale);
    return s2.why;
  };
  SweepFingerprints g = f;
  g.encoder_sha256[0] = 'x';
  EXPECT_EQ(stale_because(g), "encoder binary changed");
  g = f;
  g.cfg_sha256[5] = 'x';
  EXPECT_EQ(stale_because(g), "configuration file changed");
  g = f;
  g.inputs.begin()->second[9] = 'x';
  EXPECT_EQ(stale_because(g), "input file changed");
  PointRecord r = record_for(p, f);
  r.command += " -p SearchRange=4";
  ASSERT_TRUE(write_point_record(p, r, &err));
  EXPECT_EQ(stale_because(f), "settings changed");
  // Without the encoder's fingerprint (collecting where it is missing) that comparison is skipped.
  ASSERT_TRUE(write_point_record(p, record_for(p, f), &err));
  g = f;
  g.encoder_sha256.clear();
  EXPECT_EQ(point_status(p, g).state, PointState::kComplete);
  ::unlink(p.stream().c_str());
  EXPECT_EQ(point_status(p, f).why, "stream.264 is missing");
  // A failed point says why.
  ::unlink(p.record_file().c_str());
  write(p.failed_file(), "exit status 1: boom\n");
  st = point_status(p, f);
  EXPECT_EQ(st.state, PointState::kFailed);
  EXPECT_EQ(st.why, "failed before: exit status 1: boom");
}

// A complete point's files, written over after the encode, no longer count as its result: a StatsFile of another
// QP copied over stats.jsonl, or another stream, makes the point stale and says which file and field.
TEST(RdsweepPlan, FilesWrittenOverAfterTheEncodeMakeThePointStale) {
  const std::string out = temp_dir("tamper");
  const SweepOptions o = small_options(out, "/bin/lencod");
  const SweepPoint p = build_plan(o, o.sequences)[0];  // s/unmodified/qp30
  SweepFingerprints f = prints_for(p);
  f.hash_cache = out + "/.rdsweep/hash";
  std::string err;
  make_dirs(p.dir, &err);
  auto stats = [&](int qp, const std::string& input) {
    return "{\"frame\":0,\"type\":\"I\",\"qp\":" + std::to_string(qp) +
           "}\n{\"summary\":{\"kbps\":100,\"psnr_y\":35,\"qp_i\":" + std::to_string(qp) + ",\"qp_p\":" +
           std::to_string(qp) + ",\"config\":{\"input\":\"" + input + "\",\"width\":176,\"height\":144,"
           "\"frames\":3,\"qp_i\":" + std::to_string(qp) + ",\"qp_p\":" + std::to_string(qp) +
           ",\"search_range\":8}}}\n";
  };
  write(p.stats(), stats(30, "/clips/s.yuv"));
  write(p.stream(), "x");
  ASSERT_TRUE(write_point_record(p, record_for(p, f), &err)) << err;
  PointStatus st = point_status(p, f);
  ASSERT_EQ(st.state, PointState::kComplete) << st.why;
  EXPECT_EQ(st.result.config.at("search_range"), "8");
  EXPECT_FALSE(st.files_changed);
  // The qp40 point's StatsFile copied over this one's.
  write(p.stats(), stats(40, "/clips/s.yuv"));
  st = point_status(p, f);
  EXPECT_EQ(st.state, PointState::kStale);
  EXPECT_TRUE(st.files_changed);
  EXPECT_NE(st.why.find("stats.jsonl summary qp is 40, point.json's command sets QPPSlice=30"), std::string::npos)
      << st.why;
  EXPECT_NE(st.why.find("stats.jsonl config qp_i is 40, point.json's command sets QPISlice=30"), std::string::npos)
      << st.why;
  // Another clip's StatsFile at the same QP.
  write(p.stats(), stats(30, "/clips/other.yuv"));
  st = point_status(p, f);
  EXPECT_EQ(st.state, PointState::kStale);
  EXPECT_EQ(st.why, "files do not match point.json: stats.jsonl config input is /clips/other.yuv, point.json's "
                    "command sets InputFile=/clips/s.yuv");
  write(p.stats(), stats(30, "/clips/s.yuv"));
  EXPECT_EQ(point_status(p, f).state, PointState::kComplete);
  // The stream written over (its hash was cached above: the cache must follow the file, not the name).
  write(p.stream(), "garbage");
  st = point_status(p, f);
  EXPECT_EQ(st.state, PointState::kStale);
  EXPECT_TRUE(st.files_changed);
  EXPECT_NE(st.why.find("stream.264's SHA-256 is "), std::string::npos) << st.why;
  EXPECT_NE(st.why.find("point.json records 2d711642b726b044..."), std::string::npos) << st.why;
  // A point.json without the stream's hash cannot vouch for the stream.
  write(p.stream(), "x");
  PointRecord r = record_for(p, f);
  r.stream_sha256.clear();
  ASSERT_TRUE(write_point_record(p, r, &err));
  st = point_status(p, f);
  EXPECT_EQ(st.state, PointState::kStale);
  EXPECT_NE(st.why.find("point.json records no stream SHA-256"), std::string::npos) << st.why;
}

TEST(RdsweepPlan, FileHashCacheFollowsTheFile) {
  const std::string d = temp_dir("hash");
  write(d + "/clip.yuv", "abc");
  std::string h1, h2, h3, err;
  ASSERT_TRUE(cached_file_sha256(d + "/clip.yuv", d + "/cache", &h1, &err)) << err;
  EXPECT_EQ(h1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // sha256sum of "abc"
  ASSERT_TRUE(cached_file_sha256(d + "/clip.yuv", d + "/cache", &h2, &err)) << err;
  EXPECT_EQ(h2, h1);
  write(d + "/clip.yuv", "abd");  // same size, rewritten: the cache entry no longer applies
  ASSERT_TRUE(cached_file_sha256(d + "/clip.yuv", d + "/cache", &h3, &err)) << err;
  EXPECT_NE(h3, h1);
  EXPECT_FALSE(cached_file_sha256(d + "/none.yuv", d + "/cache", &h3, &err));
  EXPECT_NE(err.find("No such file or directory"), std::string::npos) << err;
}

// ---- Runner, with a stand-in encoder: a shell script that honours the -p keys rdsweep sets ----

std::string fake_encoder(const std::string& dir) {
  const std::string path = dir + "/fake_lencod.sh";
  write(path,
        "#!/bin/sh\n"
        "qp=0; gpu=0\n"
        "while [ $# -gt 0 ]; do\n"
        "  if [ \"$1\" = -p ]; then shift; case \"$1\" in\n"
        "    QPPSlice=*) qp=${1#*=};; GPUIntegerME=*) gpu=${1#*=};; OutputFile=*) out=${1#*=};;\n"
        "    ReconFile=*) rec=${1#*=};; StatsFile=*) st=${1#*=};; esac; fi\n"
        "  shift\n"
        "done\n"
        "pwd > where.txt\n"
        "if [ \"$qp\" = 51 ]; then echo 'Error: stand-in encoder refuses QP 51' >&2; printf '{\"frame\":0}\\n' > \"$st\"; "
        "exit 3; fi\n"
        "printf 'stream' > \"$out\"; printf 'recon' > \"$rec\"\n"
        "awk -v qp=$qp -v g=$gpu 'BEGIN{k=1000*2^((28-qp)/6)*(1+0.05*g); y=60-0.6*qp; "
        "printf \"{\\\"summary\\\":{\\\"frames\\\":3,\\\"kbps\\\":%.6f,\\\"psnr_y\\\":%.4f,\\\"psnr_u\\\":%.4f,"
        "\\\"psnr_v\\\":%.4f,\\\"time_s\\\":%.3f,\\\"time_me_s\\\":1,\\\"integer_me_path\\\":\\\"%s\\\"}}\\n\", "
        "k, y, y+4, y+5, (g?1:4), (g?\"cpu twin: no CUDA device found\":\"cpu fast full search\")}' > \"$st\"\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

SweepJobContext job_context(const SweepFingerprints* f, int jobs) {
  SweepJobContext c;
  c.jobs = jobs;
  c.prints = f;
  c.base.host = "testhost";
  c.base.invocation = "testhost:1:1";
  c.base.timing = "parallel";
  c.base.jobs = jobs;
  return c;
}

TEST(RdsweepRunner, EncodesRenamesAndRecordsTheCommand) {
  const std::string out = temp_dir("runner");
  SweepOptions o = small_options(out + "/res", fake_encoder(out));
  const auto plan = build_plan(o, o.sequences);
  std::vector<const SweepPoint*> todo;
  for (const auto& p : plan) todo.push_back(&p);
  const SweepFingerprints f = prints_for(plan[0]);
  std::ostringstream progress;
  const auto res = run_sweep_jobs(todo, job_context(&f, 2), progress);
  ASSERT_EQ(res.size(), 4u);
  for (size_t i = 0; i < res.size(); i++) {
    ASSERT_TRUE(res[i].ok) << res[i].error;
    const PointStatus st = point_status(plan[i], f);
    EXPECT_EQ(st.state, PointState::kComplete) << st.why;
    EXPECT_EQ(st.record.host, "testhost");
    EXPECT_EQ(st.record.jobs, 2);
    EXPECT_EQ(st.record.encoder_sha256, f.encoder_sha256);
    EXPECT_EQ(st.record.stream_sha256, "dca83e717b1f64eb141057a7415a330ad1361f51703efa2e4776f40047898a04");  // sha256sum of "stream"
    EXPECT_EQ(read(plan[i].stream()), "stream");
    EXPECT_EQ(read(plan[i].recon()), "recon");
    EXPECT_FALSE(exists(part_name(plan[i].stats())));
    EXPECT_EQ(read(plan[i].dir + "/where.txt"), plan[i].dir + "\n");  // the encoder ran in its point's folder
  }
  EXPECT_NEAR(res[2].point.kbps, 1000 * std::pow(2.0, -2.0 / 6) * 1.05, 1e-4);
  EXPECT_NE(progress.str().find("[4/4] "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("kbit/s"), std::string::npos);
}

TEST(RdsweepRunner, FailedEncodeLeavesNoCompletePoint) {
  const std::string out = temp_dir("runfail");
  SweepOptions o = parse_sweep_args({"-f", "/c.cfg", "--qp", "51", "--run", "gpu", "--out", out + "/res", "--lencod",
                                     fake_encoder(out), "s=/s.yuv:16x16:1"}, 1, "u");
  const auto plan = build_plan(o, o.sequences);
  ASSERT_EQ(plan.size(), 1u);
  const SweepFingerprints f = prints_for(plan[0]);
  std::ostringstream progress;
  const auto res = run_sweep_jobs({&plan[0]}, job_context(&f, 1), progress);
  ASSERT_FALSE(res[0].ok);
  EXPECT_NE(res[0].error.find("exit status 3: Error: stand-in encoder refuses QP 51"), std::string::npos) << res[0].error;
  EXPECT_FALSE(exists(part_name(plan[0].stats())));
  EXPECT_FALSE(exists(plan[0].record_file()));
  const PointStatus st = point_status(plan[0], f);
  EXPECT_EQ(st.state, PointState::kFailed);
  EXPECT_NE(st.why.find("stand-in encoder refuses QP 51"), std::string::npos) << st.why;
  EXPECT_NE(progress.str().find("FAILED"), std::string::npos);

  SweepOptions m = o;
  m.lencod = out + "/no_such_encoder";
  const auto plan2 = build_plan(m, m.sequences);
  const auto res2 = run_sweep_jobs({&plan2[0]}, job_context(&f, 1), progress);
  ASSERT_FALSE(res2[0].ok);
  EXPECT_NE(res2[0].error.find("exit status 127"), std::string::npos) << res2[0].error;
}

TEST(RdsweepRunner, WarningsAreCollectedAndFailThePointUnderStrict) {
  EXPECT_EQ(warnings_in_log("Setting Default Parameters...\nlencod: warning: unknown configuration keys ignored: "
                            "QPISlcie\n  Warning: JM-style text\r\n"),
            (std::vector<std::string>{"unknown configuration keys ignored: QPISlcie", "JM-style text"}));
  EXPECT_TRUE(warnings_in_log("the word warning: inside a sentence\nno warning: here\n").empty());
  const std::string out = temp_dir("runwarn");
  const std::string enc = out + "/warn.sh";
  write(enc, "#!/bin/sh\necho 'lencod: warning: AdaptiveRounding = 1 not honoured' >&2\nexec " + fake_encoder(out) +
                 " \"$@\"\n");
  ::chmod(enc.c_str(), 0755);
  SweepOptions o = parse_sweep_args({"-f", "/c.cfg", "--qp", "30", "--run", "gpu", "--out", out + "/res", "--lencod",
                                     enc, "s=/s.yuv:16x16:1"}, 1, "u");
  const auto plan = build_plan(o, o.sequences);
  const SweepFingerprints f = prints_for(plan[0]);
  std::ostringstream progress;
  auto ctx = job_context(&f, 1);
  auto res = run_sweep_jobs({&plan[0]}, ctx, progress);
  ASSERT_TRUE(res[0].ok) << res[0].error;
  EXPECT_EQ(res[0].warnings, std::vector<std::string>{"AdaptiveRounding = 1 not honoured"});
  EXPECT_EQ(point_status(plan[0], f).record.warnings, res[0].warnings);
  EXPECT_NE(progress.str().find("1 lencod warning"), std::string::npos) << progress.str();
  ctx.strict = true;
  res = run_sweep_jobs({&plan[0]}, ctx, progress);
  ASSERT_FALSE(res[0].ok);
  EXPECT_NE(res[0].error.find("lencod warned (--strict): AdaptiveRounding = 1 not honoured"), std::string::npos)
      << res[0].error;
  EXPECT_EQ(point_status(plan[0], f).state, PointState::kFailed);
}

// ---- Table 2, results.csv and report.md ----

SweepResult result(const SweepSequence& s, const std::string& run, int qp, double kbps, double y, double time_s,
                   const std::string& path = "") {
  SweepResult r;
  r.seq = s;
  r.run = run;
  r.qp = qp;
  r.point.kbps = kbps;
  r.point.psnr_y = y;
  r.point.psnr_u = y + 3;
  r.point.psnr_v = y + 4;
  r.point.psnr_yuv = combined_psnr(y, y + 3, y + 4);
  r.point.time_s = time_s;
  r.point.time_me_s = time_s / 2;
  r.point.integer_me_path = path;
  r.record.host = "h";
  r.record.invocation = "h:1:1";  // every point timed in one invocation unless a test says otherwise
  r.record.timing = "serial";
  return r;
}

struct TableFixture {
  std::vector<SweepSequence> seqs;
  std::vector<SweepResult> results;
  TableFixture() {
    seqs = {parse_sequence_item("vga=a.yuv:640x480:220"), parse_sequence_item("cif=b.yuv:352x288:260"),
            parse_sequence_item("short=c.yuv:176x144:30")};
    const int qps[4] = {28, 32, 36, 40};
    for (int i = 0; i < 4; i++) {
      const double rate = 2000.0 / (1 << i), y = 40 - 3 * i;
      // vga: test needs 1.05x the rate at equal PSNR, takes 10 s instead of 100 s per point.
      results.push_back(result(seqs[0], "unmodified", qps[i], rate, y, 100));
      results.push_back(result(seqs[0], "gpu", qps[i], rate * 1.05, y, 10, "cpu twin: no CUDA device found"));
      // cif: test 0.1 dB worse at equal rate, 20 s instead of 40 s.
      results.push_back(result(seqs[1], "unmodified", qps[i], rate, y, 40));
      results.push_back(result(seqs[1], "gpu", qps[i], rate, y - 0.1, 20, "cpu twin: no CUDA device found"));
      // short: the gpu run lost two points.
      results.push_back(result(seqs[2], "unmodified", qps[i], rate, y, 1));
      if (i < 2) results.push_back(result(seqs[2], "gpu", qps[i], rate, y, 1, "gpu: NVIDIA H100"));
    }
  }
};

TEST(RdsweepReport, Table2FollowsEq3AndBjontegaard) {
  const TableFixture f;
  const Table2 t = make_table2(f.results, f.seqs, {28, 32, 36, 40}, "unmodified", "gpu", BdMethod::kPolynomial);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0].format, "VGA");
  EXPECT_EQ(t.rows[0].qps, "(28,32,36,40)");
  EXPECT_DOUBLE_EQ(t.rows[0].dtime_percent, -90.0);  // (40 - 400) / 400
  EXPECT_NEAR(t.rows[0].dbitrate_percent, 5.0, 1e-9);
  EXPECT_DOUBLE_EQ(t.rows[1].dtime_percent, -50.0);
  EXPECT_NEAR(t.rows[1].dpsnr_db, -0.1, 1e-9);
  EXPECT_NEAR(t.rows[1].dpsnr_y_db, -0.1, 1e-9);
  EXPECT_FALSE(t.rows[2].ok);
  EXPECT_NE(t.rows[2].error.find("2 points, at least 4"), std::string::npos) << t.rows[2].error;
  EXPECT_DOUBLE_EQ(t.rows[2].dtime_percent, 0.0);  // over the two QPs both runs have
  // Average over the sequences with deltas, frames summed as in the paper's Table 2.
  EXPECT_EQ(t.averaged, 2);
  EXPECT_EQ(t.average.frames, 480);
  EXPECT_EQ(t.average.format, "mixed");
  EXPECT_DOUBLE_EQ(t.average.dtime_percent, -70.0);
  EXPECT_NEAR(t.average.dbitrate_percent, (5.0 + t.rows[1].dbitrate_percent) / 2, 1e-12);
}

// A run that lost a point: its row must not claim the sweep's QPs for numbers computed from fewer.
TEST(RdsweepReport, RowsFromFewerQpsNameTheirQps) {
  const std::vector<SweepSequence> seqs = {parse_sequence_item("vga=a.yuv:640x480:220"),
                                           parse_sequence_item("cif=b.yuv:352x288:260")};
  const std::vector<int> qps = {28, 32, 36, 40, 44};
  std::vector<SweepResult> results;
  for (int i = 0; i < 5; i++) {
    const double rate = 2000.0 / (1 << i), y = 40 - 3 * i;
    for (const auto& s : seqs) {
      results.push_back(result(s, "unmodified", qps[i], rate, y, 100));
      if (s.name == "cif" || qps[i] != 44) results.push_back(result(s, "gpu", qps[i], rate * 1.05, y, 10));
    }
  }
  const Table2 t = make_table2(results, seqs, qps, "unmodified", "gpu", BdMethod::kPolynomial);
  ASSERT_EQ(t.rows.size(), 2u);
  ASSERT_TRUE(t.rows[0].ok) << t.rows[0].error;
  EXPECT_EQ(t.rows[0].qps, "(28,32,36,40) ‡");
  EXPECT_EQ(t.rows[0].partial, "Time (%) over QPs 28,32,36,40 only; ΔPSNR/ΔBitrate from unmodified QPs "
                               "28,32,36,40,44 and gpu QPs 28,32,36,40 (sweep QPs 28,32,36,40,44)");
  EXPECT_EQ(t.rows[1].qps, "(28,32,36,40,44)");
  EXPECT_TRUE(t.rows[1].partial.empty());
  EXPECT_EQ(t.average.qps, "(28,32,36,40,44) ‡");
  SweepOptions o = parse_sweep_args({"-f", "cfg/encoder_baseline.cfg", "--qp", "28,32,36,40,44"}, 1, "l");
  ReportInput in;
  in.options = &o;
  in.sequences = seqs;
  in.results = results;
  const std::string md = format_report(in);
  EXPECT_NE(md.find("| vga | VGA | 220 | (28,32,36,40) ‡ | -90.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| cif | CIF | 260 | (28,32,36,40,44) | -90.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("‡ Computed from fewer points than the sweep's QPs:\n\n- vga: Time (%) over QPs 28,32,36,40 "
                    "only"), std::string::npos) << md;
  EXPECT_NE(md.find("- Average: the average includes rows computed from fewer QPs"), std::string::npos) << md;
}

TEST(RdsweepReport, ResultsCsvReadsBackWithBdrateReader) {
  const TableFixture f;
  const std::string d = temp_dir("csv");
  std::string err;
  ASSERT_TRUE(write_file_atomically(d + "/results.csv", format_results_csv(f.results), &err)) << err;
  const auto gpu = read_rd_points(d + "/results.csv#sequence=vga,run=gpu");
  ASSERT_EQ(gpu.size(), 4u);
  EXPECT_DOUBLE_EQ(gpu[1].kbps, 1050.0);
  EXPECT_EQ(gpu[1].qp, 32);
  EXPECT_EQ(gpu[1].frames, 220);
  EXPECT_NEAR(gpu[1].psnr_yuv, combined_psnr(37, 40, 41), 1e-4);
  EXPECT_EQ(gpu[1].integer_me_path, "cpu twin: no CUDA device found");
}

// The report of the fixture's sweep under options o (which must outlive it).
ReportInput report_input(const TableFixture& f, const SweepOptions& o) {
  ReportInput in;
  in.options = &o;
  in.sequences = f.seqs;
  in.results = f.results;
  return in;
}

TEST(RdsweepReport, MarkdownHasTable2NotesAndFailures) {
  const TableFixture f;
  const SweepOptions o = parse_sweep_args({"-f", "cfg/encoder_baseline.cfg"}, 1, "l");
  ReportInput in = report_input(f, o);
  in.failures = {"short gpu QP 36: exit status 1: out of memory"};
  in.plots = {"vga/rd.svg", "", ""};
  const std::string md = format_report(in);
  EXPECT_NE(md.find("## gpu vs unmodified (Table 2 form)"), std::string::npos);
  EXPECT_NE(md.find("| Sequence | Format | Frames | QPs | Time (%) | ΔPSNR (dB) | ΔBitrate (%) |"), std::string::npos);
  EXPECT_NE(md.find("| vga | VGA | 220 | (28,32,36,40) | -90.00 | "), std::string::npos) << md;
  EXPECT_NE(md.find("| 5.00 |"), std::string::npos);
  EXPECT_NE(md.find("| **Average** | mixed | 480 | (28,32,36,40) | -70.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("- short: gpu short: 2 points, at least 4"), std::string::npos) << md;  // why short has no deltas
  EXPECT_NE(md.find("used the CPU twin for integer motion estimation on 8 of its 10 points"), std::string::npos) << md;
  EXPECT_NE(md.find("![RD curve of vga](vga/rd.svg)"), std::string::npos);
  EXPECT_NE(md.find("## Failed points\n\n- short gpu QP 36: exit status 1: out of memory"), std::string::npos);
}

TEST(RdsweepReport, TimeOfPointsTimedApartIsMarked) {
  TableFixture f;
  // cif: the gpu point of QP 32 was encoded in another invocation (another sweep run, another Slurm task).
  for (auto& r : f.results)
    if (r.seq.name == "cif" && r.run == "gpu" && r.qp == 32) r.record.invocation = "h:2:9";
  const Table2 t = make_table2(f.results, f.seqs, {28, 32, 36, 40}, "unmodified", "gpu", BdMethod::kPolynomial);
  EXPECT_FALSE(t.rows[0].dtime_mixed);
  EXPECT_TRUE(t.rows[1].dtime_mixed);
  EXPECT_TRUE(t.average.dtime_mixed);
  const SweepOptions o = parse_sweep_args({"-f", "cfg/encoder_baseline.cfg"}, 1, "l");
  ReportInput in = report_input(f, o);
  const std::string md = format_report(in);
  EXPECT_NE(md.find("| cif | CIF | 260 | (28,32,36,40) | -50.00 † |"), std::string::npos) << md;
  EXPECT_NE(md.find("| vga | VGA | 220 | (28,32,36,40) | -90.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("† The unmodified and gpu points of at least one QP were timed in different invocations"),
            std::string::npos) << md;
  // The provenance lists both invocations and their timing mode.
  EXPECT_NE(md.find("timed in 2 invocations"), std::string::npos) << md;
  EXPECT_NE(md.find("--timing serial: one encode at a time"), std::string::npos) << md;
}

TEST(RdsweepReport, ProvenanceWarningsAndMissingPoints) {
  TableFixture f;
  for (auto& r : f.results) {
    r.record.cpu = "Test CPU 9000, 4 cores";
    r.record.gpus = "none (NVML not available)";
    r.record.timing = "parallel";
    r.record.jobs = 4;
    if (r.run == "gpu") r.record.warnings = {"unknown configuration keys ignored: QPISlcie"};
  }
  f.results[0].point.version = "gme264 1.2.3 (git abc, g++, no CUDA)";
  const SweepOptions o = parse_sweep_args({"-f", "cfg/encoder_baseline.cfg"}, 1, "l");
  ReportInput in = report_input(f, o);
  in.collector = "rdsweep gme264 9.9 on collector";
  in.prints.encoder_sha256 = std::string(64, 'a');
  in.missing = {"short/gpu/qp36: not encoded yet"};
  const std::string md = format_report(in);
  EXPECT_NE(md.find("- Report written by: rdsweep gme264 9.9 on collector"), std::string::npos) << md;
  EXPECT_NE(md.find("(SHA-256 " + std::string(64, 'a') + ")"), std::string::npos) << md;
  EXPECT_NE(md.find("version `gme264 1.2.3 (git abc, g++, no CUDA)` (1 point)"), std::string::npos) << md;
  EXPECT_NE(md.find("h: Test CPU 9000, 4 cores; GPU: none (NVML not available) (22 points)"), std::string::npos) << md;
  EXPECT_NE(md.find("parallel, -j 4 (4 encodes at once)"), std::string::npos) << md;
  EXPECT_NE(md.find("were timed while other encodes ran at once"), std::string::npos) << md;
  // Each distinct lencod warning once, with the points that printed it.
  EXPECT_NE(md.find("## lencod warnings"), std::string::npos) << md;
  size_t n = 0;
  for (size_t k = md.find("`unknown configuration keys ignored: QPISlcie`"); k != std::string::npos;
       k = md.find("`unknown configuration keys ignored: QPISlcie`", k + 1))
    n++;
  EXPECT_EQ(n, 1u) << md;
  EXPECT_NE(md.find("— 10 points: vga gpu QP 28"), std::string::npos) << md;
  EXPECT_NE(md.find("## Missing points\n\n1 point of the sweep is not complete"), std::string::npos) << md;
  EXPECT_NE(md.find("- short/gpu/qp36: not encoded yet"), std::string::npos) << md;
  const auto w = collect_warnings(f.results);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].points.size(), 10u);
}

TEST(RdsweepReport, Table3FromMeasuredCountersOnly) {
  TableFixture f;
  // vga: NVML on every point (the unmodified run idles the GPU), RAPL on none.
  for (auto& r : f.results) {
    r.point.energy_interval_s = r.point.time_s;
    r.point.energy_cpu_what = "RAPL not available (no package domain)";
    if (r.seq.name == "vga") {
      r.point.energy_gpu_j = r.run == "gpu" ? 100.0 : 800.0;  // 10 s at 10 W, 100 s at 8 W
      r.point.energy_gpu_what = "NVML total energy of GPU 0 (Fake)";
    } else if (r.seq.name == "cif") {
      // cif: one gpu point lacks the counter: no cell may be filled from the other three.
      const bool lacking = r.run == "gpu" && r.qp == 36;
      r.point.energy_gpu_j = lacking ? kRdMissing : 50.0;
      r.point.energy_gpu_what = lacking ? "NVML not available (no driver)" : "NVML total energy of GPU 0 (Fake)";
    } else {
      r.point.energy_gpu_what = "NVML not available (no driver)";
    }
  }
  const std::vector<SweepRun> runs = default_sweep_runs();
  const auto vga = make_table3(f.results, f.seqs[0], {28, 32, 36, 40}, runs, "unmodified", EnergySourceKind::kGpu);
  ASSERT_EQ(vga.size(), 2u);
  EXPECT_EQ(vga[0].run, "unmodified");
  ASSERT_TRUE(vga[0].ok);
  EXPECT_DOUBLE_EQ(vga[0].energy_j, 3200);
  EXPECT_DOUBLE_EQ(vga[0].time_s, 400);
  EXPECT_DOUBLE_EQ(vga[0].power_w, 8);
  EXPECT_DOUBLE_EQ(vga[0].energy_time, 3200.0 * 400);
  EXPECT_DOUBLE_EQ(vga[1].power_w, 10);
  EXPECT_DOUBLE_EQ(vga[1].ratio, 8.0);  // 3200 J against 400 J
  const auto cif = make_table3(f.results, f.seqs[1], {28, 32, 36, 40}, runs, "unmodified", EnergySourceKind::kGpu);
  ASSERT_EQ(cif.size(), 2u);
  EXPECT_TRUE(cif[0].ok);
  EXPECT_FALSE(cif[1].ok);
  EXPECT_TRUE(std::isnan(cif[1].energy_j));
  EXPECT_NE(cif[1].missing.find("1 of 4 points without this counter: NVML not available (no driver)"),
            std::string::npos) << cif[1].missing;
  EXPECT_TRUE(make_table3(f.results, f.seqs[2], {28, 32, 36, 40}, runs, "unmodified", EnergySourceKind::kGpu).empty());
  EXPECT_TRUE(make_table3(f.results, f.seqs[0], {28, 32, 36, 40}, runs, "unmodified", EnergySourceKind::kCpu).empty());
  EXPECT_TRUE(make_table3(f.results, f.seqs[0], {28, 32, 36, 40}, runs, "unmodified", EnergySourceKind::kBoth).empty());

  const SweepOptions o = parse_sweep_args({"-f", "cfg/encoder_baseline.cfg"}, 1, "l");
  ReportInput in = report_input(f, o);
  const std::string md = format_report(in);
  EXPECT_NE(md.find("## Energy (Table 3 form)"), std::string::npos) << md;
  EXPECT_NE(md.find("| unmodified | 8.00 | 400.000 | 3200.00 | 1280000.00 | 1.00× |"), std::string::npos) << md;
  EXPECT_NE(md.find("| gpu | 10.00 | 40.000 | 400.00 | 16000.00 | 8.00× |"), std::string::npos) << md;
  EXPECT_NE(md.find("| gpu | — | — | — | — | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("Not available, CPU package (RAPL): RAPL not available (no package domain);"), std::string::npos)
      << md;
  EXPECT_EQ(md.find("### short (30 frames"), std::string::npos) << md;  // no energy block without counters
  EXPECT_EQ(md.find("> **Energy:**"), std::string::npos) << md;  // the fixture's points ran one at a time
  // Counters read while other encodes ran: the table stays, with a warning naming how many points.
  int parallel = 0;
  for (auto& r : in.results) {
    r.record.timing = "parallel";
    r.record.jobs = 4;
    parallel += !std::isnan(r.point.energy_gpu_j) || !std::isnan(r.point.energy_cpu_j);
  }
  const std::string shared = format_report(in);
  EXPECT_NE(shared.find("> **Energy:** " + std::to_string(parallel) + " points had their counters read while other "
                        "encodes ran at once (-j > 1)"), std::string::npos) << shared;
  EXPECT_NE(shared.find("| gpu | 10.00 | 40.000 | 400.00 | 16000.00 | 8.00× |"), std::string::npos);
}

// ---- SVG ----

// Minimal XML well-formedness check: every tag closes in order, attributes are quoted, '&' only in entities,
// no '<' in text.
bool well_formed_xml(const std::string& s, std::string* why) {
  std::vector<std::string> stack;
  size_t i = 0;
  if (s.rfind("<?xml", 0) == 0) i = s.find("?>") + 2;
  bool root_seen = false;
  while (i < s.size()) {
    if (s[i] == '&') {
      const size_t semi = s.find(';', i);
      const std::string ent = s.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;") { *why = "bad entity at " + std::to_string(i); return false; }
      i = semi + 1;
      continue;
    }
    if (s[i] != '<') {
      if (stack.empty() && !std::isspace(static_cast<unsigned char>(s[i]))) { *why = "text outside the root"; return false; }
      i++;
      continue;
    }
    const size_t end = s.find('>', i);
    if (end == std::string::npos) { *why = "unterminated tag"; return false; }
    std::string tag = s.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) { *why = "mismatched </" + tag.substr(1) + ">"; return false; }
      stack.pop_back();
      continue;
    }
    const bool self_closing = tag.back() == '/';
    if (self_closing) tag.pop_back();
    const std::string name = tag.substr(0, tag.find_first_of(" \n\t"));
    // Attributes: name="value" pairs.
    size_t a = name.size();
    while (a < tag.size()) {
      while (a < tag.size() && std::isspace(static_cast<unsigned char>(tag[a]))) a++;
      if (a >= tag.size()) break;
      const size_t eq = tag.find('=', a);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"') { *why = "unquoted attribute in <" + name; return false; }
      const size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos) { *why = "unterminated attribute in <" + name; return false; }
      if (tag.substr(eq + 2, close - eq - 2).find('<') != std::string::npos) { *why = "'<' in attribute"; return false; }
      a = close + 1;
    }
    if (stack.empty() && root_seen) { *why = "second root element"; return false; }
    root_seen = true;
    if (!self_closing) stack.push_back(name);
  }
  if (!stack.empty()) { *why = "<" + stack.back() + "> not closed"; return false; }
  return root_seen;
}

TEST(RdsweepSvg, WellFormedWithOneCurvePerRunAndLegend) {
  PlotSpec p;
  p.title = "a <test> & \"plot\"";
  p.x_label = "bit rate (kbit/s)";
  p.y_label = "PSNR (dB)";
  p.series = {{"unmodified", {250, 400, 630, 1000}, {37.5, 39.9, 42.3, 44.7}},
              {"gpu & <twin>", {257, 409, 649, 1030}, {37.4, 39.8, 42.2, 44.6}},
              {"empty", {}, {}}};
  const std::string svg = render_svg_plot(p);
  std::string why;
  EXPECT_TRUE(well_formed_xml(svg, &why)) << why;
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  size_t polylines = 0;
  for (size_t k = svg.find("<polyline"); k != std::string::npos; k = svg.find("<polyline", k + 1)) polylines++;
  EXPECT_EQ(polylines, 2u);
  EXPECT_NE(svg.find(">gpu &amp; &lt;twin&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">empty</text>"), std::string::npos);
  EXPECT_NE(svg.find(">bit rate (kbit/s)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1200</text>"), std::string::npos);  // the x axis reaches past 1030
  EXPECT_NE(svg.find(">36</text>"), std::string::npos);
  EXPECT_EQ(svg.find("<desc>"), std::string::npos);  // nothing to say, no element
  // The build and date that made the plot: in <desc> and as a visible line.
  p.provenance = "rdsweep gme264 1.0 (git abc, g++ <12>), 2024-05-01 12:00:00 UTC";
  const std::string signed_svg = render_svg_plot(p);
  EXPECT_TRUE(well_formed_xml(signed_svg, &why)) << why;
  EXPECT_NE(signed_svg.find("<desc>rdsweep gme264 1.0 (git abc, g++ &lt;12&gt;), 2024-05-01 12:00:00 UTC</desc>"),
            std::string::npos) << signed_svg;
  EXPECT_NE(signed_svg.find("font-size=\"9\" fill=\"#888888\">rdsweep gme264 1.0"), std::string::npos) << signed_svg;
  // The checker itself rejects broken documents.
  EXPECT_FALSE(well_formed_xml("<svg><g></svg>", &why));
  EXPECT_FALSE(well_formed_xml("<svg a=1/>", &why));
  EXPECT_FALSE(well_formed_xml("<svg>a & b</svg>", &why));
}

TEST(RdsweepSvg, NiceTicksCoverTheRange) {
  const auto t = nice_ticks(257.5, 1030, 6);
  EXPECT_LE(t.front(), 257.5);
  EXPECT_GE(t.back(), 1030);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 200);
  const auto u = nice_ticks(37.48, 44.7, 6);
  EXPECT_DOUBLE_EQ(u.front(), 36);
  EXPECT_DOUBLE_EQ(u.back(), 46);
  const auto flat = nice_ticks(5, 5, 6);  // one point: still an interval
  EXPECT_LT(flat.front(), flat.back());
}

// ---- End to end: bin/rdsweep with the real bin/lencod ----

struct ProgramRun {
  int status = -1;
  std::string out;  // stdout and stderr
};

// Programs from $GME_BIN (default bin), as absolute paths.
std::string abs_bin(const std::string& name) { return absolute_path(conf::bin_dir() + "/" + name); }

// A 32x32 clip of 3 frames (a moving gradient) and a small cfg, in a fresh folder.
struct E2E {
  std::string d, clip, cfg, seq;
  explicit E2E(const std::string& name) {
    d = temp_dir(name);
    clip = d + "/clip.yuv";
    std::ofstream c(clip, std::ios::binary);
    for (int f = 0; f < 3; f++) {
      for (int y = 0; y < 32; y++)
        for (int x = 0; x < 32; x++) c.put(static_cast<char>((x * 7 + y * 3 + f * 5) & 255));
      for (int k = 0; k < 2 * 16 * 16; k++) c.put(static_cast<char>(128 + (k % 16) - f));
    }
    cfg = d + "/tiny.cfg";
    write(cfg, "# rdsweep end-to-end test\nIntraPeriod = 0\nSearchRange = 4\n");
    seq = "tiny=" + clip + ":32x32:3";
  }
  ProgramRun run(const std::string& args, const std::string& env = "") const {
    const std::string log = d + "/run.log";
    const std::string cmd = env + (env.empty() ? "" : " ") + abs_bin("rdsweep") + " " + args + " > " + log + " 2>&1";
    const int rc = std::system(cmd.c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read(log)};
  }
  std::string base(const std::string& out = "res") const {
    return "-f " + cfg + " --qp 30,40 --out " + d + "/" + out + " -j 2 --lencod " + abs_bin("lencod") + " " + seq;
  }
};

bool have_programs() { return exists(abs_bin("rdsweep")) && exists(abs_bin("lencod")); }

// The columns of results.csv that depend only on the encoder's output (not on timing or the machine).
std::string result_columns(const std::string& csv_path) {
  std::istringstream in(read(csv_path));
  std::string line, out;
  std::vector<std::string> keep = {"sequence", "run", "qp", "kbps", "psnr_y", "psnr_u", "psnr_v", "psnr_yuv",
                                   "frames", "stream_sha256"};
  std::vector<int> idx;
  bool header = true;
  while (std::getline(in, line)) {
    const auto f = split_csv_line(line);
    if (header) {
      for (const auto& k : keep)
        for (size_t c = 0; c < f.size(); c++)
          if (f[c] == k) idx.push_back(static_cast<int>(c));
      header = false;
      EXPECT_EQ(idx.size(), keep.size()) << line;
    }
    for (int c : idx) out += f[c] + ",";
    out += "\n";
  }
  return out;
}

TEST(RdsweepEndToEnd, TinyClipTwoQps) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("e2e");
  const ProgramRun r = e.run(e.base() + " --no-recon");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto pts = read_rd_points(e.d + "/res/results.csv");
  ASSERT_EQ(pts.size(), 4u);  // 2 runs x 2 QPs
  for (const auto& p : pts) {
    EXPECT_GT(p.kbps, 0);
    EXPECT_GT(p.psnr_y, 20);
  }
  EXPECT_TRUE(exists(e.d + "/res/tiny/gpu/qp40/stream.264"));
  EXPECT_TRUE(exists(e.d + "/res/tiny/gpu/qp40/point.json"));
  EXPECT_FALSE(exists(e.d + "/res/tiny/gpu/qp40/recon.yuv"));  // --no-recon
  EXPECT_FALSE(exists(e.d + "/res/tiny/gpu/qp40/recon.part.yuv"));
  EXPECT_TRUE(exists(e.d + "/res/tiny/rd.svg"));
  const std::string report = read(e.d + "/res/report.md");
  EXPECT_NE(report.find("## gpu vs unmodified (Table 2 form)"), std::string::npos);
  EXPECT_NE(report.find("2 points, at least 4"), std::string::npos);  // two QPs give no Bjontegaard delta
  // Resume: nothing is encoded again.
  const ProgramRun again = e.run(e.base() + " --no-recon");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("4 complete, 0 to encode"), std::string::npos) << again.out;
  // Without --no-recon the points are encoded again (another command) and keep their reconstructions.
  const ProgramRun recon = e.run(e.base());
  EXPECT_NE(recon.out.find("4 to encode (4 stale: settings changed)"), std::string::npos) << recon.out;
  EXPECT_TRUE(exists(e.d + "/res/tiny/gpu/qp40/recon.yuv"));
}

TEST(RdsweepEndToEnd, VersionProvenanceAndConsoleHonesty) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("prov");
  const ProgramRun v = e.run("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("rdsweep gme264 ", 0), 0u) << v.out;
  const ProgramRun r = e.run(e.base());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string csv = read(e.d + "/res/results.csv");
  EXPECT_NE(csv.find(",stream_sha256,version,energy_interval_s,energy_gpu_j,energy_cpu_j,host\n"), std::string::npos)
      << csv;
  const std::string report = read(e.d + "/res/report.md");
  // Which build, machine and timing produced the numbers.
  EXPECT_NE(report.find("- Report written by: rdsweep gme264 "), std::string::npos) << report;
  EXPECT_NE(report.find("- Encoder: `" + abs_bin("lencod") + "` (SHA-256 "), std::string::npos) << report;
  EXPECT_NE(report.find(cpu_description()), std::string::npos) << report;
  EXPECT_NE(report.find("; GPU: "), std::string::npos) << report;
  EXPECT_NE(report.find("parallel, -j 2 (2 encodes at once)"), std::string::npos) << report;
  EXPECT_NE(report.find("## Energy (Table 3 form)"), std::string::npos) << report;
  // The plot and each point's command.txt name the build too; command.txt's second line is point.json's command.
  const std::string svg = read(e.d + "/res/tiny/rd.svg");
  EXPECT_NE(svg.find("<desc>rdsweep " + version_string() + ", "), std::string::npos) << svg;
  EXPECT_NE(svg.find(" UTC</text>"), std::string::npos) << svg;
  const std::string command = read(e.d + "/res/tiny/gpu/qp30/command.txt");
  EXPECT_EQ(command.rfind("# rdsweep " + version_string() + "\n", 0), 0u) << command;
  PointRecord rec;
  std::string why;
  ASSERT_TRUE(read_point_record(e.d + "/res/tiny/gpu/qp30/point.json", &rec, &why)) << why;
  EXPECT_EQ(command.substr(command.find('\n') + 1), rec.command + "\n");
  // Without a GPU the gpu run used the CPU twin, and the console says so.
  if (r.out.find("cpu twin") != std::string::npos) {
    EXPECT_NE(r.out.find("note: run gpu used the CPU twin, not a GPU, for integer ME on 2 of its 2 points"),
              std::string::npos) << r.out;
  }
}

TEST(RdsweepEndToEnd, StalePointsAfterEncoderCfgOrInputChange) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("stale");
  const std::string enc = e.d + "/lencod";
  ASSERT_EQ(std::system(("cp " + abs_bin("lencod") + " " + enc).c_str()), 0);
  const std::string args = "-f " + e.cfg + " --qp 30,40 --out " + e.d + "/res -j 2 --lencod " + enc + " " + e.seq;
  ASSERT_EQ(e.run(args).status, 0);
  EXPECT_NE(e.run(args).out.find("4 complete, 0 to encode"), std::string::npos);
  // One byte more in the encoder binary (a rebuild): every point is stale, and the sweep says why.
  { std::ofstream(enc, std::ios::binary | std::ios::app) << '\0'; }
  ProgramRun r = e.run(args);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("0 complete, 4 to encode (4 stale: encoder binary changed)"), std::string::npos) << r.out;
  // The cfg edited in place (same path): stale.
  { std::ofstream(e.cfg, std::ios::app) << "SearchRange = 8\n"; }
  r = e.run(args);
  EXPECT_NE(r.out.find("4 to encode (4 stale: configuration file changed)"), std::string::npos) << r.out;
  // The clip rewritten with other contents: stale.
  {
    std::fstream c(e.clip, std::ios::binary | std::ios::in | std::ios::out);
    c.seekp(100);
    c.put('\x55');
  }
  r = e.run(args);
  EXPECT_NE(r.out.find("4 to encode (4 stale: input file changed)"), std::string::npos) << r.out;
  EXPECT_NE(e.run(args).out.find("4 complete, 0 to encode"), std::string::npos);
}

TEST(RdsweepEndToEnd, FilesWrittenOverAreEncodedAgainOrAnErrorWhenCollecting) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("tamper");
  ASSERT_EQ(e.run(e.base()).status, 0);
  const std::string res = e.d + "/res/tiny/";
  const std::string good_csv = read(e.d + "/res/results.csv");
  // The qp40 StatsFile over the qp30 one, and garbage over a stream: collecting names the point and the field.
  ASSERT_EQ(std::system(("cp " + res + "gpu/qp40/stats.jsonl " + res + "gpu/qp30/stats.jsonl").c_str()), 0);
  write(res + "unmodified/qp40/stream.264", "garbage");
  ProgramRun r = e.run(e.base() + " --report-only");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("rdsweep: error: tiny/gpu/qp30: files do not match point.json: stats.jsonl summary qp is 40, "
                       "point.json's command sets QPPSlice=30"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rdsweep: error: tiny/unmodified/qp40: files do not match point.json: stream.264's SHA-256 "
                       "is "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 complete, 2 to collect as missing (2 stale: files do not match point.json)"),
            std::string::npos) << r.out;
  EXPECT_EQ(read(e.d + "/res/results.csv").find(",gpu,30,"), std::string::npos);  // QP 30 not at QP 40's rate
  // A sweep encodes both again, saying why, and ends with the results of a clean sweep.
  r = e.run(e.base());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rdsweep: tiny/gpu/qp30 is stale, encoding it again: files do not match point.json"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 complete, 2 to encode (2 stale: files do not match point.json)"), std::string::npos)
      << r.out;
  EXPECT_EQ(result_columns(e.d + "/res/results.csv"), [&] {
    write(e.d + "/good.csv", good_csv);
    return result_columns(e.d + "/good.csv");
  }());
}

// --frames beyond a clip's length encodes the clip's frames, and the console says so once per sequence; -p of a key
// the sweep sets is an error before anything is encoded.
TEST(RdsweepEndToEnd, FramesCutToTheClipAreSaidAndSweepKeysRefused) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("frames");
  const ProgramRun r = e.run(e.base() + " --frames 8 -n");
  EXPECT_EQ(r.status, 0) << r.out;
  const std::string w = "rdsweep: warning: --frames 8: sequence tiny has 3 frames; encoding 3\n";
  EXPECT_NE(r.out.find(w), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(w), r.out.rfind(w)) << r.out;
  EXPECT_NE(r.out.find("FramesToBeEncoded=3"), std::string::npos) << r.out;
  EXPECT_EQ(e.run(e.base() + " --frames 2 -n").out.find("warning: --frames"), std::string::npos);
  const ProgramRun p = e.run(e.base() + " -p QPISlice=20");
  EXPECT_EQ(p.status, 2) << p.out;
  EXPECT_NE(p.out.find("rdsweep: error: -p 'QPISlice=20': QPISlice is set by the sweep itself for every point; use "
                       "--qp"), std::string::npos) << p.out;
  EXPECT_FALSE(exists(e.d + "/res"));
}

TEST(RdsweepEndToEnd, LencodWarningsOnceAndStrict) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("warn");
  const ProgramRun r = e.run(e.base() + " -p QPISlcie=30");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string w = "rdsweep: warning: lencod: unknown configuration keys ignored: QPISlcie";
  const size_t at = r.out.find(w);
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(at, r.out.rfind(w)) << r.out;  // once, for the 4 points that printed it
  EXPECT_NE(r.out.substr(at, r.out.find('\n', at) - at).find("(4 points, e.g. tiny unmodified QP 30)"),
            std::string::npos) << r.out;
  const std::string report = read(e.d + "/res/report.md");
  EXPECT_NE(report.find("- `unknown configuration keys ignored: QPISlcie"), std::string::npos) << report;
  EXPECT_NE(report.find("` — 4 points: tiny unmodified QP 30"), std::string::npos) << report;
  // --strict: a warning fails the point; the sweep exits 1 and the point is not complete.
  const ProgramRun s = e.run(e.base("strict") + " -p QPISlcie=30 --strict");
  EXPECT_EQ(s.status, 1) << s.out;
  EXPECT_NE(s.out.find("lencod warned (--strict): unknown configuration keys ignored: QPISlcie"), std::string::npos)
      << s.out;
  EXPECT_FALSE(exists(e.d + "/strict/tiny/unmodified/qp30/point.json"));
  EXPECT_TRUE(exists(e.d + "/strict/tiny/unmodified/qp30/failed.txt"));
}

TEST(RdsweepEndToEnd, SerialTimingInterleavesAndIsReported) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("serial");
  const std::string args = "-f " + e.cfg + " --qp 30,40 --out " + e.d + "/res --timing serial --lencod " +
                           abs_bin("lencod") + " " + e.seq;
  const ProgramRun r = e.run(args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("timing: serial"), std::string::npos) << r.out;
  // One at a time, anchor and test of each QP back to back.
  const size_t a30 = r.out.find("] tiny unmodified QP 30:"), g30 = r.out.find("] tiny gpu QP 30:"),
               a40 = r.out.find("] tiny unmodified QP 40:"), g40 = r.out.find("] tiny gpu QP 40:");
  ASSERT_NE(g40, std::string::npos) << r.out;
  EXPECT_LT(a30, g30);
  EXPECT_LT(g30, a40);
  EXPECT_LT(a40, g40);
  const std::string report = read(e.d + "/res/report.md");
  EXPECT_NE(report.find("--timing serial: one encode at a time, anchor and test of each QP back to back"),
            std::string::npos) << report;
  EXPECT_EQ(report.find("were timed while other encodes ran at once"), std::string::npos) << report;
  EXPECT_EQ(e.run(args + " -j 2").status, 2);
}

TEST(RdsweepEndToEnd, PointsCompleteAnywhereShardsAndCollection) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("shard");
  // Reference: one local sweep.
  ASSERT_EQ(e.run(e.base("one")).status, 0);
  // Before anything ran there is nothing to collect: an error, and no folder with an empty report.
  ProgramRun c = e.run(e.base("split") + " --report-only");
  EXPECT_EQ(c.status, 2) << c.out;
  EXPECT_NE(c.out.find("is not a folder of a sweep (check --out); nothing written"), std::string::npos) << c.out;
  EXPECT_FALSE(exists(e.d + "/split"));
  // Two shards, then collection: the same results as the single sweep. After one shard, collection lists the
  // other's points as missing and fails.
  ProgramRun s1 = e.run(e.base("split") + " --shard 1/2");
  ASSERT_EQ(s1.status, 0) << s1.out;
  EXPECT_NE(s1.out.find("shard 1/2 of 4 points: 2 points"), std::string::npos) << s1.out;
  c = e.run(e.base("split") + " --report-only");
  EXPECT_EQ(c.status, 1) << c.out;
  EXPECT_NE(read(e.d + "/split/report.md").find("## Missing points\n\n2 points of the sweep are not complete"),
            std::string::npos) << read(e.d + "/split/report.md");
  ProgramRun s2 = e.run(e.base("split") + " --shard=2/2");
  ASSERT_EQ(s2.status, 0) << s2.out;
  EXPECT_FALSE(exists(e.d + "/split/report.md.tmp"));
  c = e.run(e.base("split") + " --report-only");
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_EQ(result_columns(e.d + "/split/results.csv"), result_columns(e.d + "/one/results.csv"));
  // Each shard is its own invocation, but both runs of a QP share one: no time marked.
  EXPECT_EQ(read(e.d + "/split/report.md").find(" † |"), std::string::npos);
  // Points run one by one with --run-point (as on a cluster): complete, but their times are marked.
  for (const char* id : {"tiny/unmodified/qp30", "tiny/gpu/qp30", "tiny/unmodified/qp40", "3"}) {
    const ProgramRun p = e.run(e.base("points") + " --run-point=" + id);
    ASSERT_EQ(p.status, 0) << p.out;
  }
  EXPECT_EQ(e.run(e.base("points") + " --run-point=tiny/gpu/qp99").status, 2);
  c = e.run(e.base("points") + " --report-only");
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_EQ(result_columns(e.d + "/points/results.csv"), result_columns(e.d + "/one/results.csv"));
  const std::string report = read(e.d + "/points/report.md");
  EXPECT_NE(report.find("timed in different invocations"), std::string::npos) << report;
  EXPECT_NE(report.find("one point per process (run-point)"), std::string::npos) << report;
}

// Collecting with options that match no point (another --qp, another cfg) must not replace a good report.
TEST(RdsweepEndToEnd, ReportOnlyWithNothingToCollectWritesNothing) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("collect_none");
  ASSERT_EQ(e.run(e.base()).status, 0);
  const std::string report = read(e.d + "/res/report.md"), csv = read(e.d + "/res/results.csv");
  ASSERT_NE(csv.find("tiny,gpu,40,"), std::string::npos) << csv;
  std::string args = e.base() + " --report-only";
  args.replace(args.find("--qp 30,40"), 10, "--qp 20,24");
  const ProgramRun c = e.run(args);
  EXPECT_EQ(c.status, 2) << c.out;
  EXPECT_NE(c.out.find("--report-only: none of the 4 points of this sweep is complete in " + e.d + "/res (first: "
                       "tiny/"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("nothing written"), std::string::npos) << c.out;
  EXPECT_EQ(read(e.d + "/res/report.md"), report);
  EXPECT_EQ(read(e.d + "/res/results.csv"), csv);
}

TEST(RdsweepEndToEnd, DryRunPrintsCommandsThatWork) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("dry");
  const ProgramRun n = e.run(e.base() + " -n");
  ASSERT_EQ(n.status, 0) << n.out;
  EXPECT_FALSE(exists(e.d + "/res"));  // nothing ran, nothing was written
  // The printed lines, run by a shell from another folder, complete every point.
  std::string script;
  std::istringstream in(n.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(abs_bin("rdsweep"), 0) == 0) script += line + "\n";
  write(e.d + "/dry.sh", script);
  ASSERT_EQ(std::system(("cd / && sh " + e.d + "/dry.sh > " + e.d + "/dry.log 2>&1").c_str()), 0)
      << read(e.d + "/dry.log");
  const ProgramRun c = e.run(e.base() + " --report-only");
  EXPECT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("4 complete, 0 to collect as missing"), std::string::npos) << c.out;
}

// With several CUDA devices, -j N gives each worker slot's GPU points a device of their own (GPUDevice = slot mod
// devices), records it in point.json and the report, and changes no byte of the results.
TEST(RdsweepEndToEnd, GpuPointsSpreadOverTheHostsDevices) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("spread");
  // As in the shipped cfg files, which list GPUDevice = 0 with every other key: the default, not a choice of card.
  const std::string cfg = e.d + "/device0.cfg";
  write(cfg, read(e.cfg) + "GPUDevice = 0\n");
  auto args = [&](const std::string& out, const std::string& extra) {
    return "-f " + cfg + " --qp 30,40 --out " + e.d + "/" + out + " -j 2 --run gpu --no-recon " + extra +
           " --lencod " + abs_bin("lencod") + " " + e.seq;
  };
  auto record = [&](const std::string& out, int qp) {
    PointRecord r;
    std::string why;
    EXPECT_TRUE(read_point_record(e.d + "/" + out + "/tiny/gpu/qp" + std::to_string(qp) + "/point.json", &r, &why))
        << why;
    return r;
  };
  const std::string spread = "rdsweep: GPU points spread over ";
  // Two devices: both QPs start at once, one in each slot.
  ProgramRun r = e.run(args("two", ""), "CUDA_VISIBLE_DEVICES=0,1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(spread + "2 CUDA devices (CUDA_VISIBLE_DEVICES=0,1): worker slot k of -j 2 gets GPUDevice k "
                       "mod 2"), std::string::npos) << r.out;
  const PointRecord a = record("two", 30), b = record("two", 40);
  EXPECT_EQ(std::set<int>({a.cuda_device, b.cuda_device}), std::set<int>({0, 1}));
  EXPECT_EQ(a.command.find("GPUDevice"), std::string::npos) << a.command;  // not part of the command
  EXPECT_EQ(read(e.d + "/two/tiny/gpu/qp30/command.txt").find("GPUDevice"), std::string::npos);
  EXPECT_NE(read(e.d + "/two/report.md").find("; GPU points spread over CUDA devices 0, 1"), std::string::npos);
  // One device: nothing to spread; the same streams.
  r = e.run(args("one", ""), "CUDA_VISIBLE_DEVICES=0");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find(spread), std::string::npos) << r.out;
  EXPECT_EQ(record("one", 30).cuda_device, -1);
  EXPECT_EQ(record("one", 30).stream_sha256, a.stream_sha256);
  EXPECT_EQ(record("one", 40).stream_sha256, b.stream_sha256);
  // A sweep that chooses GPUDevice itself keeps it.
  r = e.run(args("own", "-p GPUDevice=0"), "CUDA_VISIBLE_DEVICES=0,1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find(spread), std::string::npos) << r.out;
  EXPECT_EQ(record("own", 40).cuda_device, -1);
  // Without CUDA_VISIBLE_DEVICES, NVML's devices count.
  r = e.run(args("nvml", ""), "env -u CUDA_VISIBLE_DEVICES FAKE_NVML_COUNT=3 GME_NVML_LIBRARY=" +
                                  abs_bin("libfake_nvml.so"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(spread + "3 CUDA devices (NVML)"), std::string::npos) << r.out;
}

TEST(RdsweepEndToEnd, EnergyTableFromTheCountersOrSaysWhatIsMissing) {
  if (!have_programs() || !exists(abs_bin("libfake_nvml.so"))) GTEST_SKIP() << "programs or bin/libfake_nvml.so not built";
  const E2E e("energy");
  // No counters on this machine: the report says so and has no table.
  ProgramRun r = e.run(e.base("none"), "GME_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 GME_POWERCAP_ROOT=/nonexistent");
  ASSERT_EQ(r.status, 0) << r.out;
  std::string report = read(e.d + "/none/report.md");
  EXPECT_NE(report.find("Not available, GPU (NVML): NVML not available (/nonexistent/libnvidia-ml.so.1: cannot open "
                        "shared object file"), std::string::npos) << report;
  EXPECT_NE(report.find("Not available, CPU package (RAPL): RAPL not available (/nonexistent: No such file or "
                        "directory)"), std::string::npos) << report;
  EXPECT_EQ(report.find("| Run | Power (W)"), std::string::npos) << report;
  // A stand-in NVML (each read advances its counter by 1.5 J): the Table 3 cells come from the counter, the CPU
  // package stays "not available".
  r = e.run(e.base("fake"), "GME_NVML_LIBRARY=" + abs_bin("libfake_nvml.so") + " GME_POWERCAP_ROOT=/nonexistent");
  ASSERT_EQ(r.status, 0) << r.out;
  report = read(e.d + "/fake/report.md");
  EXPECT_NE(report.find("**GPU (NVML)**"), std::string::npos) << report;
  EXPECT_NE(report.find("| 3.00 | "), std::string::npos) << report;  // 2 QPs x 1.5 J per run
  EXPECT_NE(report.find("| 1.00× |"), std::string::npos) << report;
  EXPECT_NE(report.find("Measured, GPU (NVML): gpu: NVML total energy of GPU 0 (Fake GPU 0 (tests), "),
            std::string::npos) << report;
  EXPECT_EQ(report.find("**CPU package (RAPL)**"), std::string::npos) << report;
  EXPECT_NE(read(e.d + "/fake/results.csv").find(",1.500,,"), std::string::npos);
}

// Starts rdsweep as a child with default signal dispositions and no blocked signal, whatever this test program
// inherited: a non-interactive shell starts a background job with SIGINT and SIGQUIT ignored, an ignored signal
// stays ignored across exec, and rdsweep rightly keeps ignoring what its caller ignores (nohup), so the tests'
// signals would not reach it.
pid_t start_sweep(const E2E& e, const std::string& args, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl("/bin/sh", "sh", "-c", ("exec " + abs_bin("rdsweep") + " " + args).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  (void)e;
  return pid;
}

// The children of a process (Linux /proc).
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (long c; in >> c;) out.push_back(static_cast<pid_t>(c));
  return out;
}

bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// An encoder that takes its time: a script that sleeps, then runs the real lencod.
std::string slow_encoder(const E2E& e) {
  const std::string path = e.d + "/slow.sh";
  write(path, "#!/bin/sh\nsleep 30\nexec " + abs_bin("lencod") + " \"$@\"\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(RdsweepEndToEnd, InterruptSaysWhereItStoppedAndResumes) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("sigint");
  const std::string args = "-f " + e.cfg + " --qp 30,40 --out " + e.d + "/res -j 2 --lencod " + slow_encoder(e) +
                           " " + e.seq;
  const pid_t pid = start_sweep(e, args, e.d + "/int.log");
  std::vector<pid_t> kids;
  for (int i = 0; i < 200 && kids.size() < 2; i++) {
    ::usleep(50000);
    kids = children_of(pid);
  }
  ASSERT_EQ(kids.size(), 2u) << read(e.d + "/int.log");
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
  const std::string log = read(e.d + "/int.log");
  EXPECT_NE(log.find("rdsweep: interrupted: 0 of 4 points complete; rerun the same command to resume"),
            std::string::npos) << log;
  for (pid_t k : kids) EXPECT_FALSE(alive(k)) << "encoder " << k << " outlived rdsweep";
  EXPECT_FALSE(exists(e.d + "/res/tiny/unmodified/qp30/point.json"));
  EXPECT_FALSE(exists(e.d + "/res/tiny/unmodified/qp30/failed.txt"));  // interrupted is not failed
}

TEST(RdsweepEndToEnd, KilledSweepTakesItsEncodersWithIt) {
  if (!have_programs()) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const E2E e("sigkill");
  const std::string args = "-f " + e.cfg + " --qp 30 --run unmodified --out " + e.d + "/res --lencod " +
                           slow_encoder(e) + " " + e.seq;
  const pid_t pid = start_sweep(e, args, e.d + "/kill.log");
  std::vector<pid_t> kids;
  for (int i = 0; i < 200 && kids.empty(); i++) {
    ::usleep(50000);
    kids = children_of(pid);
  }
  ASSERT_EQ(kids.size(), 1u) << read(e.d + "/kill.log");
  ::kill(pid, SIGKILL);  // cannot be caught: the encoder must learn it from the kernel
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; i++) {
    gone = !alive(kids[0]);
    if (!gone) ::usleep(50000);
  }
  EXPECT_TRUE(gone) << "encoder " << kids[0] << " still runs after rdsweep was killed";
  if (!gone) ::kill(kids[0], SIGKILL);
}

}  // namespace
}  // namespace gme
