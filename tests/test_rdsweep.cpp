// rdsweep (rd/rdsweep_*.h): arguments, manifest, plan, resume, the process runner (against a stand-in
// encoder script), Table 2 and report formatting, SVG well-formedness, and one end-to-end run of bin/rdsweep with
// the real bin/lencod (skipped, with the reason, while the encoder cannot encode yet).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rd/rd_input.h"
#include "rd/rdsweep_exec.h"
#include "rd/rdsweep_options.h"
#include "rd/rdsweep_plan.h"
#include "rd/rdsweep_report.h"
#include "rd/rdsweep_svg.h"

namespace gme {
namespace {

std::string temp_dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "rdsweep_" + name + "_" + std::to_string(::getpid());
  std::string err;
  EXPECT_TRUE(make_dirs(d, &err)) << err;
  return d;
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
  EXPECT_NE(error_of({"-f", "a", "--qp", "28,28"}).find("lists a QP twice"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--run", "x:A=1", "--run", "x:A=2"}).find("run 'x' is defined twice"),
            std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--run", "fast"}).find("only unmodified and gpu are predefined"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--run", "x:GPUTopK"}).find("setting 'GPUTopK' is not Key=Value"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--run", "a/b:K=1"}).find("may only use letters"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "--anchor", "cpu"}).find("--anchor 'cpu' is not one of the runs"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-j", "0"}).find("-j '0' is not a positive integer"), std::string::npos);
  EXPECT_NE(error_of({"-f", "a", "-p", "QPISlice"}).find("is not Key=Value"), std::string::npos);
  EXPECT_NE(error_of({"-f"}).find("option -f needs a value"), std::string::npos);
  EXPECT_TRUE(parse_sweep_args({"--help"}, 1, "l").help);
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
  o.frames = 100;  // never more frames than the clip has
  EXPECT_EQ(select_sequences(o)[0].frames, 30);
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
  const std::string cmd = command_text(plan[3].argv);
  EXPECT_EQ(cmd,
            "/bin/lencod -f /cfg/base.cfg -p InputFile=/clips/s.yuv -p SourceWidth=176 -p SourceHeight=144 "
            "-p FramesToBeEncoded=3 -p FrameRate=25 -p SearchRange=8 -p GPUIntegerME=1 -p QPISlice=34 "
            "-p QPPSlice=34 -p OutputFile=/res/s/gpu/qp34/stream.part.264 -p ReconFile=/res/s/gpu/qp34/recon.part.yuv "
            "-p StatsFile=/res/s/gpu/qp34/stats.part.jsonl");
  EXPECT_EQ(command_text({"a b", "it's"}), "'a b' 'it'\\''s'");
}

TEST(RdsweepPlan, ResumeNeedsSummaryAndSameCommand) {
  const std::string out = temp_dir("resume");
  const SweepOptions o = small_options(out, "/bin/lencod");
  const SweepPoint p = build_plan(o, o.sequences)[0];
  RdPoint pt;
  std::string why;
  EXPECT_FALSE(point_is_complete(p, &pt, &why));
  EXPECT_EQ(why, "not encoded yet");
  make_dirs(p.dir, &why);
  write(p.stats(), "{\"frame\":0,\"type\":\"I\",\"qp\":30}\n");
  EXPECT_FALSE(point_is_complete(p, &pt, &why));
  EXPECT_NE(why.find("no summary line"), std::string::npos) << why;
  write(p.stats(), "{\"frame\":0}\n{\"summary\":{\"kbps\":100,\"psnr_y\":35,\"psnr_u\":40,\"psnr_v\":41}}\n");
  EXPECT_FALSE(point_is_complete(p, &pt, &why));
  EXPECT_EQ(why, "no command.txt beside the stats file");
  write(p.command_file(), command_text(p.argv) + " -p SearchRange=4\n");
  EXPECT_FALSE(point_is_complete(p, &pt, &why));
  EXPECT_NE(why.find("different command"), std::string::npos);
  write(p.command_file(), command_text(p.argv) + "\n");
  EXPECT_FALSE(point_is_complete(p, &pt, &why));
  EXPECT_EQ(why, "stream.264 is missing");
  write(p.stream(), "x");
  EXPECT_TRUE(point_is_complete(p, &pt, &why)) << why;
  EXPECT_DOUBLE_EQ(pt.kbps, 100);
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

TEST(RdsweepRunner, EncodesRenamesAndRecordsTheCommand) {
  const std::string out = temp_dir("runner");
  SweepOptions o = small_options(out + "/res", fake_encoder(out));
  const auto plan = build_plan(o, o.sequences);
  std::vector<const SweepPoint*> todo;
  for (const auto& p : plan) todo.push_back(&p);
  std::ostringstream progress;
  const auto res = run_sweep_jobs(todo, 2, progress);
  ASSERT_EQ(res.size(), 4u);
  for (size_t i = 0; i < res.size(); i++) {
    ASSERT_TRUE(res[i].ok) << res[i].error;
    RdPoint pt;
    std::string why;
    EXPECT_TRUE(point_is_complete(plan[i], &pt, &why)) << why;
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
  std::ostringstream progress;
  const auto res = run_sweep_jobs({&plan[0]}, 1, progress);
  ASSERT_FALSE(res[0].ok);
  EXPECT_NE(res[0].error.find("exit status 3: Error: stand-in encoder refuses QP 51"), std::string::npos) << res[0].error;
  EXPECT_FALSE(exists(part_name(plan[0].stats())));
  EXPECT_FALSE(exists(plan[0].command_file()));
  RdPoint pt;
  std::string why;
  EXPECT_FALSE(point_is_complete(plan[0], &pt, &why));
  EXPECT_NE(progress.str().find("FAILED"), std::string::npos);

  SweepOptions m = o;
  m.lencod = out + "/no_such_encoder";
  const auto plan2 = build_plan(m, m.sequences);
  const auto res2 = run_sweep_jobs({&plan2[0]}, 1, progress);
  ASSERT_FALSE(res2[0].ok);
  EXPECT_NE(res2[0].error.find("exit status 127"), std::string::npos) << res2[0].error;
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

TEST(RdsweepReport, MarkdownHasTable2NotesAndFailures) {
  const TableFixture f;
  const SweepOptions o = parse_sweep_args({"-f", "cfg/encoder_baseline.cfg"}, 1, "l");
  ReportInput in;
  in.options = &o;
  in.sequences = f.seqs;
  in.results = f.results;
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

// ---- End to end with the real encoder ----

TEST(RdsweepEndToEnd, TinyClipTwoQps) {
  const std::string lencod = "bin/lencod", rdsweep = "bin/rdsweep";
  if (!exists(rdsweep) || !exists(lencod)) GTEST_SKIP() << "bin/rdsweep or bin/lencod not built";
  const std::string d = temp_dir("e2e");
  // 32x32, 3 frames of a moving gradient.
  {
    std::ofstream clip(d + "/clip.yuv", std::ios::binary);
    for (int f = 0; f < 3; f++) {
      for (int y = 0; y < 32; y++)
        for (int x = 0; x < 32; x++) clip.put(static_cast<char>((x * 7 + y * 3 + f * 5) & 255));
      for (int c = 0; c < 2 * 16 * 16; c++) clip.put(static_cast<char>(128 + (c % 16) - f));
    }
  }
  write(d + "/tiny.cfg", "# rdsweep end-to-end test\nIntraPeriod = 0\nSearchRange = 4\n");
  // Probe: while the encoder cannot encode, say so and skip instead of failing a test of rdsweep.
  const std::string probe = lencod + " -f " + d + "/tiny.cfg -p InputFile=" + d + "/clip.yuv -p SourceWidth=32 " +
                            "-p SourceHeight=32 -p FramesToBeEncoded=1 -p OutputFile=" + d + "/probe.264 > " + d +
                            "/probe.log 2>&1";
  if (std::system(probe.c_str()) != 0) {
    std::ifstream log(d + "/probe.log");
    std::string line, last;
    while (std::getline(log, line))
      if (!line.empty()) last = line;
    GTEST_SKIP() << "bin/lencod cannot encode yet: " << last;
  }
  const std::string cmd = rdsweep + " -f " + d + "/tiny.cfg --qp 30,40 --out " + d + "/res -j 2 --lencod " + lencod +
                          " tiny=" + d + "/clip.yuv:32x32:3 > " + d + "/sweep.log 2>&1";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << read(d + "/sweep.log");
  const auto pts = read_rd_points(d + "/res/results.csv");
  ASSERT_EQ(pts.size(), 4u);  // 2 runs x 2 QPs
  for (const auto& p : pts) {
    EXPECT_GT(p.kbps, 0);
    EXPECT_GT(p.psnr_y, 20);
  }
  EXPECT_TRUE(exists(d + "/res/tiny/gpu/qp40/stream.264"));
  EXPECT_TRUE(exists(d + "/res/tiny/rd.svg"));
  const std::string report = read(d + "/res/report.md");
  EXPECT_NE(report.find("## gpu vs unmodified (Table 2 form)"), std::string::npos);
  EXPECT_NE(report.find("2 points, at least 4"), std::string::npos);  // two QPs give no Bjontegaard delta
  // Resume: nothing is encoded again.
  const std::string again = cmd.substr(0, cmd.find(" > ")) + " > " + d + "/sweep2.log 2>&1";
  ASSERT_EQ(std::system(again.c_str()), 0);
  EXPECT_NE(read(d + "/sweep2.log").find("4 complete, 0 to encode"), std::string::npos) << read(d + "/sweep2.log");
}

}  // namespace
}  // namespace gme
