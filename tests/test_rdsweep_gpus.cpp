// rdsweep's spreading of GPU points over the host's CUDA devices: how many devices an encoder sees, which device a
// worker slot gets, which points are left alone, and the record of the device in point.json.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rd/rdsweep_gpus.h"
#include "rd/rdsweep_options.h"
#include "rd/rdsweep_plan.h"
#include "tests/conformance_util.h"

namespace gme {
namespace {

TEST(RdsweepGpus, VisibleDevicesAsCudaReadsTheList) {
  const std::vector<std::string> three = {"A", "B", "C"};
  EXPECT_EQ(visible_gpus("0,1", three).count, 2);
  EXPECT_EQ(visible_gpus("0,1", three).how, "CUDA_VISIBLE_DEVICES=0,1");
  EXPECT_EQ(visible_gpus("3", {}).count, 1);
  EXPECT_EQ(visible_gpus("GPU-8d3e6f0a-1b2c-4d5e-8f90-a1b2c3d4e5f6,MIG-x,2", {}).count, 3);
  // CUDA stops at the first entry it does not take: "" and "-1" hide every device.
  EXPECT_EQ(visible_gpus("", three).count, 0);
  EXPECT_EQ(visible_gpus("-1", three).count, 0);
  EXPECT_EQ(visible_gpus("1,-1,2", three).count, 1);
  EXPECT_EQ(visible_gpus("0,,1", three).count, 1);
  EXPECT_EQ(visible_gpus("0, 1", three).count, 1);
  EXPECT_EQ(visible_gpus("GPU-", three).count, 0);
  // Unset: what NVML reports.
  EXPECT_EQ(visible_gpus(nullptr, three).count, 3);
  EXPECT_EQ(visible_gpus(nullptr, three).how, "NVML");
  EXPECT_EQ(visible_gpus(nullptr, {}).count, 0);
}

TEST(RdsweepGpus, SlotsTakeTheDevicesInTurn) {
  std::vector<int> got;
  for (int slot = 0; slot < 7; slot++) got.push_back(device_for_slot(slot, 3));
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(device_for_slot(1, 2), 1);
  // Nothing to spread over: the command's GPUDevice applies.
  EXPECT_EQ(device_for_slot(0, 1), -1);
  EXPECT_EQ(device_for_slot(3, 0), -1);
  EXPECT_EQ(device_for_slot(-1, 2), -1);
}

TEST(RdsweepGpus, PointsThatChooseTheirDeviceAreLeftAlone) {
  auto plan_for = [](std::vector<std::string> args, const std::string& cfg) {
    args.insert(args.begin(), {"-f", "/c.cfg", "--qp", "30"});
    args.push_back("s=/s.yuv:16x16:2");
    const SweepOptions o = parse_sweep_args(args, 1, "/bin/lencod");
    return build_plan(o, o.sequences, cfg);
  };
  auto p = plan_for({}, "");
  ASSERT_EQ(p.size(), 2u);  // unmodified, gpu
  EXPECT_FALSE(p[1].sets_gpu_device);
  EXPECT_TRUE(plan_for({"-p", "GPUDevice=1"}, "")[1].sets_gpu_device);
  EXPECT_TRUE(plan_for({"--run", "g:GPUIntegerME=1,GPUDevice=0"}, "")[0].sets_gpu_device);
  EXPECT_TRUE(plan_for({}, "GPUDevice = 2  # the second card\n")[1].sets_gpu_device);
  EXPECT_FALSE(plan_for({}, "# GPUDevice = 2\n")[1].sets_gpu_device);
  // The shipped cfg lists GPUDevice = 0 with every other key: the default, not a choice of card.
  EXPECT_FALSE(plan_for({}, "GPUDevice = 0 # CUDA device index\n")[1].sets_gpu_device);
  EXPECT_TRUE(plan_for({"-p", "GPUDevice=0"}, "GPUDevice = 0\n")[1].sets_gpu_device);
}

TEST(RdsweepGpus, PointRecordKeepsTheDevice) {
  const conf::TempDir dir("rdsweep_gpus");
  const SweepOptions o = parse_sweep_args({"-f", "/c.cfg", "--out", dir.path(), "s=/s.yuv:16x16:2"}, 1, "/l");
  const SweepPoint p = build_plan(o, o.sequences)[1];
  std::string err;
  ASSERT_TRUE(make_dirs(p.dir, &err)) << err;
  PointRecord r;
  r.command = command_text(p.argv);
  r.cuda_device = 1;
  ASSERT_TRUE(write_point_record(p, r, &err)) << err;
  PointRecord back;
  ASSERT_TRUE(read_point_record(p.record_file(), &back, &err)) << err;
  EXPECT_EQ(back.cuda_device, 1);
  EXPECT_EQ(back.command, r.command);  // the device is not part of the command: -j never makes a point stale
  r.cuda_device = -1;
  ASSERT_TRUE(write_point_record(p, r, &err)) << err;
  ASSERT_TRUE(read_point_record(p.record_file(), &back, &err)) << err;
  EXPECT_EQ(back.cuda_device, -1);
  // A record from before the field: no device chosen.
  conf::write_text(p.record_file(), "{\"point\":\"s/gpu/qp28\",\"command\":\"x\"}\n");
  ASSERT_TRUE(read_point_record(p.record_file(), &back, &err)) << err;
  EXPECT_EQ(back.cuda_device, -1);
}

}  // namespace
}  // namespace gme
