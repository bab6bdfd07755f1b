// Picture-level integer motion estimation: the twin against a brute-force oracle written plainly here, the kernels'
// source emulated on the host against the twin (the integer kernel as for Hopper here and as for older GPUs in
// tests/test_gpu_me_pre_hopper.cpp), the CUDA search against the twin bit for bit (skipped without a device), and the
// fallback when no GPU is usable.
#define GME_EMU_ARCH 900  // this translation unit emulates the kernel's Hopper code
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/frame.h"
#include "common/yuv_io.h"
#include "gpu/kernel_emu.h"  // before the kernel: CUDA's keywords and built-ins for a host compiler
#include "gpu/cost_order_kernel.cuh"
#include "gpu/me_cuda_kernel.cuh"
#include "gpu/subpel_kernel.cuh"
#include "gpu/gpu_me.h"
#include "gpu/me_cuda.h"
#include "gpu/me_twin.h"
#include "tests/dsp_tables.h"
#include "tests/conformance_util.h"
#include "tests/kernel_emu_launch.h"

static_assert(GME_ME_ARCH >= 900, "this translation unit compiles the Hopper code");

namespace gme {
namespace {

enum class Content { kNoise, kSmooth, kFlat };

// A luma plane with the standard border, filled, borders extended.
Plane make_plane(int w, int h, std::mt19937& rng, Content content, int flat_value = 77) {
  Plane p;
  p.alloc(w, h, kLumaPad);
  std::uniform_int_distribution<int> byte(0, 255);
  const int fx = 1 + rng() % 7, fy = 1 + rng() % 5, phase = rng() % 64;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int v = flat_value;
      if (content == Content::kNoise) v = byte(rng);
      if (content == Content::kSmooth) v = ((x * fx + y * fy + phase) * 3 + byte(rng) % 24) & 255;
      *p.at(x, y) = static_cast<uint8_t>(v);
    }
  p.extend_borders();
  return p;
}

// Plane `src` shifted by (sx, sy) with some noise: a reference in which the true motion is findable.
Plane shifted_plane(const Plane& src, int sx, int sy, std::mt19937& rng) {
  Plane p;
  p.alloc(src.width, src.height, kLumaPad);
  for (int y = 0; y < src.height; ++y)
    for (int x = 0; x < src.width; ++x) {
      int v = *src.at(clip3(0, src.width - 1, x - sx), clip3(0, src.height - 1, y - sy)) + static_cast<int>(rng() % 5) - 2;
      *p.at(x, y) = clip_pixel(v);
    }
  p.extend_borders();
  return p;
}

struct Scene {
  std::vector<Plane> planes;  // [0] current, then references
  PictureSearchRequest req;
};

// A request over `refs` references with random centres (some far outside the picture), predictors and lambda.
Scene make_scene(int mbw, int mbh, int refs, int range, int k, std::mt19937& rng, Content content = Content::kSmooth,
                 bool far_centres = true) {
  Scene s;
  s.planes.reserve(1 + refs);
  s.planes.push_back(make_plane(mbw * 16, mbh * 16, rng, content));
  for (int r = 0; r < refs; ++r) {
    if (content == Content::kFlat)
      s.planes.push_back(make_plane(mbw * 16, mbh * 16, rng, content, 80));
    else if (r % 2 == 0)
      s.planes.push_back(shifted_plane(s.planes[0], static_cast<int>(rng() % 9) - 4, static_cast<int>(rng() % 9) - 4, rng));
    else
      s.planes.push_back(make_plane(mbw * 16, mbh * 16, rng, content));
  }
  PictureSearchRequest& q = s.req;
  q.cur = &s.planes[0];
  for (int r = 0; r < refs; ++r) q.refs.push_back(&s.planes[1 + r]);
  q.mb_width = mbw;
  q.mb_height = mbh;
  q.search_range = range;
  q.top_k = k;
  const int lambdas[] = {0, 1, 4 << 16, 384000, 5500000};
  q.lambda_factor = lambdas[rng() % 5];
  const int far = far_centres ? (mbw * 16 + 60) : 6;
  for (int i = 0; i < refs * mbw * mbh; ++i) {
    const int kind = rng() % 4;
    MV c(0, 0);
    if (kind == 1) c = MV(4 * (static_cast<int>(rng() % 9) - 4), 4 * (static_cast<int>(rng() % 9) - 4));
    if (kind >= 2) c = MV(4 * (static_cast<int>(rng() % (2 * far + 1)) - far), 4 * (static_cast<int>(rng() % (2 * far + 1)) - far));
    q.centre.push_back(c);
    q.penalty_pred.push_back(rng() % 3 == 0 ? c : MV(static_cast<int>(rng() % 161) - 80, static_cast<int>(rng() % 161) - 80));
  }
  return s;
}

// Far from the window centre the penalty alone passes the lists' bounds (batch_key_floor): warps skip those batches'
// screens and blocks skip the batches. Still flat pictures give every position the SAD 0, so the keys are the
// penalties and the partitions' K-th keys tie with the floors of batches farther out: a floor equal to a bound must
// not skip (the low bits of the keys decide those ties). Calls check(req) for such scenes of mbw x mbh macroblocks
// over lambdas and list lengths.
template <typename Check>
void for_each_still_flat_scene(int mbw, int mbh, Check&& check) {
  std::mt19937 rng(1234);
  for (int lambda : {65536, 384000})
    for (int k : {1, 8, 16}) {
      Scene s = make_scene(mbw, mbh, 1, 24, k, rng, Content::kFlat);
      s.planes[0] = s.planes[1];
      s.req.lambda_factor = lambda;
      check(s.req);
    }
}

// Copies of the scene's planes with border `pad`, so strides are no multiple of 16 (pad 37: 48 + 74 = 122).
void reborder(Scene& s, int pad) {
  for (Plane& p : s.planes) {
    Plane q;
    q.alloc(p.width, p.height, pad);
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x) *q.at(x, y) = *p.at(x, y);
    q.extend_borders();
    p = std::move(q);  // the request's pointers still address the same Plane objects
  }
}

// ---- The oracle: every partition, every position, pixel by pixel with unbounded edge replication -----------------
int replicated(const Plane& p, int x, int y) { return *p.at(clip3(0, p.width - 1, x), clip3(0, p.height - 1, y)); }

void oracle_search(const PictureSearchRequest& req, PictureCandidates& out) {
  const int mbs = req.mb_width * req.mb_height, range = req.search_range;
  out.resize(static_cast<int>(req.refs.size()), mbs, req.top_k);
  struct Entry { uint64_t cost; int spiral; MV mv; uint32_t sad; };
  for (size_t r = 0; r < req.refs.size(); ++r)
    for (int mb = 0; mb < mbs; ++mb) {
      const int px = (mb % req.mb_width) * 16, py = (mb / req.mb_width) * 16;
      const MV c = req.centre[r * mbs + mb], pred = req.penalty_pred[r * mbs + mb];
      for (int part = 0; part < kNumPartitions; ++part) {
        const PartitionGeometry g = partition_geometry(part);
        std::vector<Entry> all;
        for (int dy = -range; dy <= range; ++dy)
          for (int dx = -range; dx <= range; ++dx) {
            const MV mv(c.x + 4 * dx, c.y + 4 * dy);
            uint32_t sad = 0;
            for (int y = py + 4 * g.y; y < py + 4 * (g.y + g.h); ++y)
              for (int x = px + 4 * g.x; x < px + 4 * (g.x + g.w); ++x)
                sad += std::abs(replicated(*req.cur, x, y) - replicated(*req.refs[r], x + mv.x / 4, y + mv.y / 4));
            all.push_back({motion_cost(sad, req.lambda_factor, mv, pred), spiral_index(dx, dy), mv, sad});
          }
        std::partial_sort(all.begin(), all.begin() + req.top_k, all.end(), [](const Entry& a, const Entry& b) {
          return a.cost != b.cost ? a.cost < b.cost : a.spiral < b.spiral;
        });
        for (int i = 0; i < req.top_k; ++i) {
          out.at(static_cast<int>(r), mb, part)[i].mv = all[i].mv;
          out.at(static_cast<int>(r), mb, part)[i].sad = all[i].sad;
        }
      }
    }
}

// Bit-for-bit comparison, reporting the first difference.
::testing::AssertionResult same_candidates(const PictureCandidates& a, const PictureCandidates& b) {
  if (a.num_refs != b.num_refs || a.num_mbs != b.num_mbs || a.top_k != b.top_k || a.size() != b.size() ||
      (!a.view && a.data.size() != a.size()) || (!b.view && b.data.size() != b.size()))
    return ::testing::AssertionFailure() << "shapes differ";
  for (int r = 0; r < a.num_refs; ++r)
    for (int mb = 0; mb < a.num_mbs; ++mb)
      for (int p = 0; p < kNumPartitions; ++p)
        for (int i = 0; i < a.top_k; ++i) {
          const Candidate x = a.at(r, mb, p)[i], y = b.at(r, mb, p)[i];
          if (x.mv != y.mv || x.sad != y.sad)
            return ::testing::AssertionFailure()
                   << "ref " << r << " mb " << mb << " part " << p << " rank " << i << ": (" << x.mv.x << "," << x.mv.y
                   << ") sad " << x.sad << " vs (" << y.mv.x << "," << y.mv.y << ") sad " << y.sad;
        }
  return ::testing::AssertionSuccess();
}

std::string describe(const PictureSearchRequest& q) {
  return std::to_string(q.mb_width * 16) + "x" + std::to_string(q.mb_height * 16) + " refs " +
         std::to_string(q.refs.size()) + " range " + std::to_string(q.search_range) + " k " + std::to_string(q.top_k) +
         " lambda " + std::to_string(q.lambda_factor);
}

// ---- The driver's environment ----------------------------------------------------------------------------------
// set_default_cuda_connections() gives the driver kCudaConnections work queues per context unless the user chose a
// number; the process's own value comes back afterwards, so the GPU tests' contexts are made as before.
TEST(GpuMeEnvironment, CudaConnectionsDefaultKeepsTheUsersChoice) {
  const char* kVar = "CUDA_DEVICE_MAX_CONNECTIONS";
  const char* before = std::getenv(kVar);
  const std::string saved = before ? before : "";
  unsetenv(kVar);
  set_default_cuda_connections();
  const char* v = std::getenv(kVar);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v), std::to_string(kCudaConnections));
  setenv(kVar, "7", 1);
  set_default_cuda_connections();
  EXPECT_EQ(std::string(std::getenv(kVar)), "7");
  if (before) setenv(kVar, saved.c_str(), 1);
  else unsetenv(kVar);
}

// ---- Twin against the oracle ----------------------------------------------------------------------------------
TEST(GpuMeTwin, MatchesOracleOnRandomScenes) {
  std::mt19937 rng(1234);
  TwinPictureSearch twin(dsp_here());
  const int sizes[][2] = {{3, 2}, {5, 3}, {1, 1}};
  for (const auto& sz : sizes)
    for (int range : {1, 2, 5})
      for (int k : {1, 4}) {
        Scene s = make_scene(sz[0], sz[1], 2, range, k, rng, range == 2 ? Content::kNoise : Content::kSmooth);
        PictureCandidates want, got;
        oracle_search(s.req, want);
        twin.search(s.req, got);
        EXPECT_TRUE(same_candidates(got, want)) << describe(s.req);
      }
}

TEST(GpuMeTwin, ZeroCopyRequestStillAnswersInData) {
  // The twin has no memory of its own to hand out: a zero_copy request is answered in `data`, view cleared.
  std::mt19937 rng(77);
  TwinPictureSearch twin(dsp_here());
  Scene s = make_scene(3, 2, 1, 3, 4, rng);
  s.req.zero_copy = true;
  PictureCandidates want, got;
  const Candidate earlier[2] = {};
  got.view = &earlier[1];  // stale view from an earlier answer
  oracle_search(s.req, want);
  twin.search(s.req, got);
  EXPECT_EQ(got.view, nullptr);
  EXPECT_EQ(got.data.size(), got.size());
  EXPECT_TRUE(same_candidates(got, want));
}

TEST(GpuMeTwin, ProgressiveRequestAnswersInFull) {
  // The twin answers in full whatever the request allows: every row is ready at once.
  std::mt19937 rng(12);
  Scene s = make_scene(3, 4, 1, 3, 2, rng);
  s.req.zero_copy = true;
  s.req.progressive = true;
  TwinPictureSearch twin(dsp_here());
  PictureCandidates got, want;
  twin.search(s.req, got);
  EXPECT_GE(twin.wait_rows(1), s.req.mb_height);
  s.req.progressive = false;
  twin.search(s.req, want);
  EXPECT_TRUE(same_candidates(got, want));
}

TEST(GpuMeTwin, MatchesOracleAtRange128) {
  std::mt19937 rng(99);
  TwinPictureSearch twin(dsp_here());
  Scene s = make_scene(2, 1, 1, 128, 4, rng);
  s.req.centre[1] = MV(-4 * 40, 4 * 20);  // window reaches far past the picture and its border on every side
  PictureCandidates want, got;
  oracle_search(s.req, want);
  twin.search(s.req, got);
  EXPECT_TRUE(same_candidates(got, want)) << describe(s.req);
}

TEST(GpuMeTwin, MatchesOracleWithOddStridesAndBorders) {
  std::mt19937 rng(4321);
  TwinPictureSearch twin(dsp_here());
  for (int pad : {19, 37}) {
    Scene s = make_scene(3, 2, 2, 4, 3, rng);
    reborder(s, pad);
    PictureCandidates want, got;
    oracle_search(s.req, want);
    twin.search(s.req, got);
    EXPECT_TRUE(same_candidates(got, want)) << "pad " << pad << ", " << describe(s.req);
  }
}

TEST(GpuMeTwin, TiesFollowSpiralOrder) {
  // Flat pictures: every SAD is equal; with lambda 0 every cost is equal, so the spiral index alone orders.
  std::mt19937 rng(7);
  TwinPictureSearch twin(dsp_here());
  Scene s = make_scene(2, 2, 1, 3, 9, rng, Content::kFlat);
  s.req.lambda_factor = 0;
  PictureCandidates got, want;
  twin.search(s.req, got);
  oracle_search(s.req, want);
  EXPECT_TRUE(same_candidates(got, want));
  for (int mb = 0; mb < 4; ++mb)
    for (int p = 0; p < kNumPartitions; ++p)
      for (int i = 0; i < 9; ++i) {
        const Candidate c = got.at(0, mb, p)[i];
        const MV centre = s.req.centre[mb];
        EXPECT_EQ(spiral_index((c.mv.x - centre.x) / 4, (c.mv.y - centre.y) / 4), i);
        EXPECT_EQ(c.sad, static_cast<uint32_t>(3 * 16 * partition_geometry(p).w * partition_geometry(p).h));
      }
  // With a penalty and the predictor at the centre, mirrored vectors tie on cost; the spiral must split them.
  s.req.lambda_factor = 65536;
  s.req.penalty_pred = s.req.centre;
  twin.search(s.req, got);
  oracle_search(s.req, want);
  EXPECT_TRUE(same_candidates(got, want));
}

TEST(GpuMeTwin, SpiralOffsetInvertsSpiralIndex) {
  std::vector<char> seen(257 * 257, 0);
  for (int dy = -128; dy <= 128; ++dy)
    for (int dx = -128; dx <= 128; ++dx) {
      const int s = spiral_index(dx, dy);
      ASSERT_GE(s, 0);
      ASSERT_LT(s, 257 * 257);
      EXPECT_FALSE(seen[s]) << s;
      seen[s] = 1;
      int x = 99, y = 99;
      spiral_offset(s, &x, &y);
      ASSERT_EQ(x, dx);
      ASSERT_EQ(y, dy);
    }
}

TEST(GpuMeTwin, RejectsBrokenRequests) {
  std::mt19937 rng(5);
  TwinPictureSearch twin(dsp_here());
  PictureCandidates out;
  auto broken = [&](auto&& edit) {
    Scene s = make_scene(2, 2, 1, 4, 1, rng);
    edit(s.req);
    EXPECT_THROW(twin.search(s.req, out), std::invalid_argument);
  };
  broken([](PictureSearchRequest& q) { q.search_range = 0; });
  broken([](PictureSearchRequest& q) { q.search_range = 129; });
  broken([](PictureSearchRequest& q) { q.top_k = 0; });
  broken([](PictureSearchRequest& q) { q.top_k = 82; });  // 9 x 9 window
  broken([](PictureSearchRequest& q) { q.centre[0] = MV(5, 0); });
  broken([](PictureSearchRequest& q) { q.centre[0] = MV(32764, 0); });
  broken([](PictureSearchRequest& q) { q.centre.pop_back(); });
  broken([](PictureSearchRequest& q) { q.ref_ids = {1, 2}; });
  broken([](PictureSearchRequest& q) { q.mb_width = 3; });
  broken([](PictureSearchRequest& q) { q.lambda_factor = -1; });
}

// The centres are checked in one vectorised pass, then the offender looked for: a fault at any centre, in either
// component, of either kind, is found and named (7 x 3 macroblocks: five whole steps of four centres, one left
// over); centres at the very edge of the range pass.
TEST(GpuMeTwin, RejectsEveryBrokenCentre) {
  std::mt19937 rng(6);
  TwinPictureSearch twin(dsp_here());
  const Scene s = make_scene(7, 3, 1, 4, 1, rng, Content::kSmooth, /*far_centres=*/false);
  PictureCandidates out;
  for (size_t i = 0; i < s.req.centre.size(); ++i)
    for (const MV bad : {MV(2, 0), MV(0, -1), MV(32764, 0), MV(0, -32768), MV(-32756, 0)}) {
      PictureSearchRequest q = s.req;
      q.centre[i] = bad;
      try {
        twin.search(q, out);
        ADD_FAILURE() << "centre " << i << " = (" << bad.x << ", " << bad.y << ") accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("centre " + std::to_string(i) + " "), std::string::npos) << e.what();
      }
    }
  PictureSearchRequest q = s.req;
  q.centre.back() = MV(32748, -32752);  // +-4 * SearchRange 4 reaches 32764 and -32768
  q.centre.front() = MV(-32752, 32748);
  EXPECT_NO_THROW(twin.search(q, out));
}

// ---- Fallback -------------------------------------------------------------------------------------------------
TEST(GpuMeFallback, MissingDeviceGivesTwinAndReason) {
  std::string why = "untouched";
  std::unique_ptr<PictureIntegerSearch> s;
  ASSERT_NO_THROW(s = make_picture_search(9999, dsp_here(), &why));
  ASSERT_TRUE(s);
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why, "untouched");
  EXPECT_STREQ(s->name(), "cpu-twin");
  std::mt19937 rng(11);
  Scene sc = make_scene(2, 2, 1, 3, 2, rng);
  PictureCandidates got, want;
  s->search(sc.req, got);
  TwinPictureSearch(dsp_here()).search(sc.req, want);
  EXPECT_TRUE(same_candidates(got, want));
  ASSERT_NO_THROW(s = make_picture_search(-1, dsp_here(), nullptr));
  EXPECT_TRUE(s);
}

TEST(GpuMeFallback, DefaultDeviceIsGpuOrTwinWithReason) {
  std::string why;
  std::unique_ptr<PictureIntegerSearch> s;
  ASSERT_NO_THROW(s = make_picture_search(0, dsp_here(), &why));
  ASSERT_TRUE(s);
  const std::string name = s->name();
  if (why.empty())
    EXPECT_EQ(name.rfind("cuda:", 0), 0u) << name;
  else
    EXPECT_EQ(name, "cpu-twin") << why;
#ifndef GME_HAVE_CUDA
  EXPECT_EQ(why, "built without CUDA");
#endif
}

// ---- The sub-pel table kernel's source run on the host, as gpu/me_cuda.cu launches it --------------------------------
// floors: the launches' floors, set to UINT32_MAX before them as gpu/me_cuda.cu does. ranks_per_block: a block's
// ranks (0: all of a macroblock's).
std::vector<SubpelTable> emulated_subpel_tables(const PictureSearchRequest& req, const PictureCandidates& cands,
                                                int metric, std::vector<SubpelFloors>* floors = nullptr,
                                                int ranks_per_block = 0) {
  const int num_mbs = req.mb_width * req.mb_height, ranks = req.subpel_ranks;
  std::vector<SubpelTable> out(req.refs.size() * num_mbs * ranks);
  std::memset(out.data(), 0xA5, out.size() * sizeof(SubpelTable));  // an unwritten entry cannot pass
  if (floors) {
    floors->resize(req.refs.size() * num_mbs);
    std::memset(floors->data(), 0xFF, floors->size() * sizeof(SubpelFloors));
  }
  const std::vector<uint8_t> cur = strip(*req.cur);
  for (size_t r = 0; r < req.refs.size(); ++r) {
    const std::vector<uint8_t> ref = strip(*req.refs[r]);
    std::vector<uint2> packed;
    for (int mb = 0; mb < num_mbs; ++mb)
      for (int p = 0; p < kNumPartitions; ++p)
        for (int i = 0; i < req.top_k; ++i) {
          const Candidate c = cands.at(static_cast<int>(r), mb, p)[i];
          packed.push_back(uint2{static_cast<uint16_t>(c.mv.x) | static_cast<uint32_t>(static_cast<uint16_t>(c.mv.y)) << 16,
                                 c.sad});
        }
    SubpelKernelArgs a = subpel_kernel_args(req);
    a.cur = cur.data();
    a.ref = ref.data();
    a.mb_first = 0;
    a.metric = metric;
    a.cands = packed.data();
    a.out = out.data() + r * num_mbs * ranks;
    a.floors = floors ? floors->data() + r * num_mbs : nullptr;
    set_subpel_ranks_per_block(a, ranks_per_block > 0 ? ranks_per_block : ranks);
    emu_launch(num_mbs * a.blocks_per_mb, kSubpelThreads, [&a] { subpel_table_kernel(a); });
  }
  return out;
}

::testing::AssertionResult same_tables(const SubpelTable* a, const SubpelTable* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    for (int p = 0; p < kNumPartitions; ++p)
      for (int o = 0; o < kSubpelOffsets; ++o)
        if (a[i].at(p, o) != b[i].at(p, o))
          return ::testing::AssertionFailure() << "table " << i << " part " << p << " offset (" << o % 7 - 3 << ","
                                               << o / 7 - 3 << "): " << a[i].at(p, o) << " vs " << b[i].at(p, o);
  // The padding slots too: every byte of a table is written (zero), so tables compare whole.
  if (std::memcmp(a, b, n * sizeof(SubpelTable)) != 0) return ::testing::AssertionFailure() << "padding differs";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_floors(const SubpelFloors* a, const SubpelFloors* b, size_t n) {
  if (!a || !b) return ::testing::AssertionFailure() << (a ? "expected" : "got") << " no floors";
  for (size_t i = 0; i < n; ++i)
    for (int p = 0; p < kNumPartitions; ++p)
      if (a[i].d[p] != b[i].d[p])
        return ::testing::AssertionFailure() << "floors " << i << " part " << p << ": " << a[i].d[p] << " vs "
                                             << b[i].d[p];
  if (std::memcmp(a, b, n * sizeof(SubpelFloors)) != 0) return ::testing::AssertionFailure() << "tails differ";
  return ::testing::AssertionSuccess();
}

TEST(GpuMeTwin, FloorsAreEachPartitionsSmallestTableValue) {
  // What the encoder's bounds rest on: no table value of any rank lies below its partition's floor, and the floor
  // is one of them. Noise (large, varied values) and a flat scene (many equal ones), two references, every rank.
  std::mt19937 rng(43);
  TwinPictureSearch twin(dsp_here());
  for (Content content : {Content::kNoise, Content::kFlat}) {
    Scene s = make_scene(4, 3, 2, 6, 4, rng, content);
    s.req.subpel_metric = 2;
    s.req.subpel_ranks = 4;
    PictureCandidates got;
    twin.search(s.req, got);
    ASSERT_EQ(got.floors.size(), got.subpel_floor_count());
    for (int r = 0; r < 2; ++r)
      for (int mb = 0; mb < 12; ++mb) {
        const SubpelFloors* f = got.floors_at(r, mb);
        for (uint32_t t : f->tail) EXPECT_EQ(t, UINT32_MAX);
        for (int p = 0; p < kNumPartitions; ++p) {
          bool reached = false;
          for (int k = 0; k < 4; ++k)
            for (int o = 0; o < kSubpelOffsets; ++o) {
              const uint32_t v = got.subpel_at(r, mb, k)->at(p, o);
              ASSERT_GE(v, f->d[p]) << "ref " << r << " mb " << mb << " part " << p;
              reached |= v == f->d[p];
            }
          EXPECT_TRUE(reached) << "ref " << r << " mb " << mb << " part " << p;
        }
      }
  }
}

TEST(GpuMeTwin, SameAnswerAtAnyThreadCount) {
  // The twin shares (reference, macroblock row) items out among its threads, and the tables (reference, macroblock)
  // items: more threads than rows, a picture of one row, two references, with and without tables.
  std::mt19937 rng(31);
  for (int rows : {1, 5})
    for (int metric : {-1, 2}) {
      Scene s = make_scene(3, rows, 2, 4, 3, rng);
      s.req.subpel_metric = metric;
      s.req.subpel_ranks = metric >= 0 ? 2 : 0;
      PictureCandidates want, got;
      oracle_search(s.req, want);
      TwinPictureSearch one(dsp_here());
      PictureCandidates serial;
      one.search(s.req, serial);
      for (int threads : {2, 3, 16}) {
        TwinPictureSearch twin(dsp_here());
        twin.set_threads(threads);
        twin.search(s.req, got);
        EXPECT_TRUE(same_candidates(got, want)) << threads << " threads, " << describe(s.req);
        ASSERT_EQ(got.subpel.size(), serial.subpel.size());
        if (metric >= 0) {
          EXPECT_TRUE(same_tables(got.subpel.data(), serial.subpel.data(), got.subpel.size())) << threads << " threads";
          EXPECT_TRUE(same_floors(got.floors.data(), serial.floors.data(), got.floors.size())) << threads << " threads";
        }
      }
    }
}

TEST(GpuSubpelKernelEmu, MatchesTwin) {
  // Random scenes with centres far outside the picture (clamped samples on every side), both metrics, K 1..3
  // with tables for the first or for all K candidates, two references.
  std::mt19937 rng(2718);
  TwinPictureSearch twin(dsp_here());
  for (int metric : {2, 0})
    for (int range : {1, 3, 9})
      for (int k : {1, 3}) {
        Scene s = make_scene(3, 2, 1 + (range == 3), range, k, rng, range == 1 ? Content::kNoise : Content::kSmooth);
        s.req.subpel_metric = metric;
        s.req.subpel_ranks = range == 9 ? k : 1;
        PictureCandidates want;
        twin.search(s.req, want);
        ASSERT_EQ(want.subpel.size(), s.req.refs.size() * 6 * s.req.subpel_ranks);
        std::vector<SubpelFloors> floors;
        const std::vector<SubpelTable> got = emulated_subpel_tables(s.req, want, metric, &floors);
        EXPECT_TRUE(same_tables(got.data(), want.subpel.data(), got.size()))
            << "metric " << metric << " ranks " << s.req.subpel_ranks << ", " << describe(s.req);
        ASSERT_EQ(floors.size(), want.floors.size());
        EXPECT_TRUE(same_floors(floors.data(), want.floors.data(), floors.size()))
            << "metric " << metric << " ranks " << s.req.subpel_ranks << ", " << describe(s.req);
      }
}

// Distinct (4x4 block, vector) pairs among the first `ranks` candidates of a macroblock's partitions: the tasks the
// kernel computes when they all fit one group.
int distinct_block_vectors(const PictureCandidates& c, int ref, int mb, int ranks) {
  int n = 0;
  for (int blk = 0; blk < 16; ++blk) {
    std::vector<std::pair<int, int>> v;
    for (int part = 0; part < kNumPartitions; ++part) {
      const PartitionGeometry g = partition_geometry(part);
      const int bx = blk & 3, by = blk >> 2;
      if (bx < g.x || bx >= g.x + g.w || by < g.y || by >= g.y + g.h) continue;
      for (int k = 0; k < ranks; ++k) v.push_back({c.at(ref, mb, part)[k].mv.x, c.at(ref, mb, part)[k].mv.y});
    }
    std::sort(v.begin(), v.end());
    n += static_cast<int>(std::unique(v.begin(), v.end()) - v.begin());
  }
  return n;
}

TEST(GpuSubpelKernelEmu, MatchesTwinWhenRanksSplitIntoGroups) {
  // The kernel computes each distinct (block, vector) of a macroblock once, over as many ranks as kSubpelTaskCap
  // holds, then the next ranks: K 16 with every rank's table, on a shifted copy of the picture (the ranks share
  // most vectors: one group) and on unrelated noise (every partition its own vectors: several groups).
  std::mt19937 rng(4242);
  TwinPictureSearch twin(dsp_here());
  for (int ranks : {16, 7}) {
    Scene s = make_scene(2, 2, 2, 9, 16, rng, Content::kNoise);
    s.req.subpel_metric = 2;
    s.req.subpel_ranks = ranks;
    PictureCandidates want;
    twin.search(s.req, want);
    int one_group = 0, split = 0;
    for (int r = 0; r < 2; ++r)
      for (int mb = 0; mb < 4; ++mb) (distinct_block_vectors(want, r, mb, ranks) > kSubpelTaskCap ? split : one_group)++;
    EXPECT_GT(split, 0) << "no macroblock needs several groups: the test does not reach that path";
    EXPECT_GT(one_group, 0) << "every macroblock needs several groups";
    // One block per macroblock, and its ranks over several blocks (the launches of few macroblocks).
    for (int per_block : {0, 3, 1}) {
      std::vector<SubpelFloors> floors;
      const std::vector<SubpelTable> got = emulated_subpel_tables(s.req, want, 2, &floors, per_block);
      EXPECT_TRUE(same_tables(got.data(), want.subpel.data(), got.size()))
          << "ranks " << ranks << " per block " << per_block << ", " << describe(s.req);
      EXPECT_TRUE(same_floors(floors.data(), want.floors.data(), floors.size()))
          << "ranks " << ranks << " per block " << per_block;
    }
  }
}

TEST(GpuSubpelKernelEmu, RanksPerBlockFillTheLaunch) {
  // Enough blocks for the launch where the ranks allow, the fewest (most ranks a block) that reach them, every
  // rank covered.
  EXPECT_EQ(subpel_ranks_per_block(2040, 8, 792), 8);   // 1080p band: a block per macroblock
  EXPECT_EQ(subpel_ranks_per_block(320, 8, 792), 2);    // 640x480 band: 4 blocks a macroblock
  EXPECT_EQ(subpel_ranks_per_block(4, 8, 792), 1);      // tiny picture: as many blocks as ranks
  EXPECT_EQ(subpel_ranks_per_block(100, 1, 792), 1);
  EXPECT_EQ(subpel_ranks_per_block(0, 5, 792), 1);
  for (int mbs : {1, 7, 99, 300, 5000})
    for (int ranks = 1; ranks <= kGpuMaxTopK; ++ranks) {
      const int per = subpel_ranks_per_block(mbs, ranks, 792), blocks = (ranks + per - 1) / per;
      EXPECT_GE(per, 1);
      EXPECT_LE(per, ranks);
      EXPECT_TRUE(mbs * blocks >= 792 || per == 1) << mbs << " macroblocks, " << ranks << " ranks";
    }
}

TEST(GpuSubpelKernelEmu, FitsEverySupportedGpusSharedMemory) {
  // 64 KB per block on compute capability 7.5 (the most a Turing block can opt in to), and the three blocks of
  // __launch_bounds__ per Hopper SM (228 KB, 1 KB of it reserved per block).
  EXPECT_LE(kSubpelSmemBytes, 64u * 1024);
  EXPECT_LE(3 * (kSubpelSmemBytes + 1024), 228u * 1024);
}

// ---- The integer kernel's source, emulated on the host, against the twin (no device needed) ----------------------
// Every test runs twice: on the kernel compiled as for Hopper (its packed u16 instructions modelled by
// gpu/kernel_emu.h) and as for the GPUs before it (the portable packed arithmetic those run).
struct EmuArch {
  const char* name;
  void (*search)(const PictureSearchRequest&, PictureCandidates&);
};

void PrintTo(const EmuArch& a, std::ostream* os) { *os << a.name; }

class KernelEmu : public ::testing::TestWithParam<EmuArch> {
 protected:
  void expect_matches_twin(const PictureSearchRequest& req) {
    PictureCandidates got, want;
    GetParam().search(req, got);
    TwinPictureSearch(dsp_here()).search(req, want);
    EXPECT_TRUE(same_candidates(got, want)) << GetParam().name << ", " << describe(req);
  }
};

// Names: GpuMe/KernelEmu.<test>/Hopper and /PreHopper.
INSTANTIATE_TEST_SUITE_P(GpuMe, KernelEmu,
                         ::testing::Values(EmuArch{"Hopper", emulated_search}, EmuArch{"PreHopper", emulated_search_pre_hopper}),
                         [](const ::testing::TestParamInfo<EmuArch>& i) { return std::string(i.param.name); });

TEST_P(KernelEmu, MatchesTwinOnRandomScenes) {
  std::mt19937 rng(2718);
  for (int range : {1, 2, 5, 16, 33})
    for (int k : {1, 2, 3, 8, 16}) {
      const Content content = (range + k) % 3 == 0 ? Content::kNoise : Content::kSmooth;
      expect_matches_twin(make_scene(3, 2, 1 + (k % 2), range, std::min(k, window_positions(range)), rng, content).req);
    }
}

TEST_P(KernelEmu, MatchesTwinWhereWindowsLieInsideThePicture) {
  // Away from the edges, a window centred on a whole multiple of 4 pels takes load_tile's aligned path (whole words,
  // no clamp); edge macroblocks and other centres take the clamped one, in the same launch.
  std::mt19937 rng(4242);
  for (int range : {8, 16})
    for (int k : {1, 8})
      expect_matches_twin(make_scene(8, 7, 1, range, k, rng, Content::kSmooth, /*far_centres=*/false).req);
}

TEST_P(KernelEmu, MatchesTwinWhereTheSweepEliminates) {
  // After its centre batch a block whose window lies inside the picture sweeps the rest of its window (the others
  // visit it batch by batch), and on real pictures most groups fall to the block-sum
  // lower bounds while many lie within a few units of some partition's bound: a group dropped that could enter a
  // top K changes a list (a bound too tight by 8 does here; on the synthetic scenes above it does not).
  conf::Clip clip;
  if (!conf::manifest_clip("megamind_352x288", &clip)) GTEST_SKIP() << "needs sequences/make_clips.sh's megamind_352x288";
  const std::unique_ptr<FrameReader> in = open_frame_reader(clip.file, clip.width, clip.height, 0);
  Frame f[2];
  for (Frame& x : f) alloc_frame_for(x, clip.width, clip.height);
  ASSERT_TRUE(in->read_frame(4, f[0]) && in->read_frame(5, f[1]));
  for (Frame& x : f) x.plane[0].extend_borders();
  expect_matches_twin(centred_request(f[1].plane[0], {&f[0].plane[0]}, 16, 8, 384000));
  expect_matches_twin(centred_request(f[1].plane[0], {&f[0].plane[0]}, 16, 8, 65536));
}

TEST_P(KernelEmu, MatchesTwinOnTiesAndEdges) {
  std::mt19937 rng(314);
  for (int lambda : {0, 65536, 5500000}) {
    Scene s = make_scene(2, 2, 1, 4, 8, rng, Content::kFlat);
    s.req.lambda_factor = lambda;
    if (lambda == 65536) s.req.penalty_pred = s.req.centre;
    expect_matches_twin(s.req);
  }
  for (int k : {4, 5, 6, 7, 9, 12, 13})  // the other list lengths the device instantiates
    expect_matches_twin(make_scene(2, 1, 1, 7, k, rng).req);
}

TEST_P(KernelEmu, MatchesTwinWhenEverythingPassesTheScreen) {
  // Flat pictures and lambda 0: every position has the same cost, the screen passes all of them (ties are <=), and
  // the per-lane queues of stage 2 overflow again and again over several batches.
  std::mt19937 rng(99);
  for (int k : {1, 16}) {
    Scene s = make_scene(1, 1, 1, 33, k, rng, Content::kFlat);
    s.req.lambda_factor = 0;
    expect_matches_twin(s.req);
  }
}

TEST_P(KernelEmu, MatchesTwinWhereBatchesLieBeyondEveryBound) {
  for_each_still_flat_scene(2, 1, [this](const PictureSearchRequest& req) { expect_matches_twin(req); });
}

TEST_P(KernelEmu, MatchesTwinWhenScreenSumsPassSixteenBits) {
  // Stage 2 screens in u16 halves: penalty key >> 33 clamped to 65535, packed sums that wrap, a bound of 65536 or
  // more. A bright current picture over a dark reference gives 16x16 SADs of 40,000-65,280; lambda 2^26 gives
  // penalties of ~10,000-40,000 (sums past 16 bits), INT32_MAX penalties past 16 bits themselves (clamped), both
  // with bounds above 65535 for the large partitions. Any position the screen dropped wrongly changes a list.
  std::mt19937 rng(65536);
  for (int lambda : {1 << 26, INT32_MAX})
    for (int k : {1, 8, 16}) {
      Scene s = make_scene(2, 1, 1, k == 8 ? 16 : 5, k, rng, Content::kNoise);
      for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 32; ++x) {
          *s.planes[0].at(x, y) = static_cast<uint8_t>(192 + *s.planes[0].at(x, y) / 4);
          *s.planes[1].at(x, y) = static_cast<uint8_t>(*s.planes[1].at(x, y) / 4);
        }
      s.planes[0].extend_borders();
      s.planes[1].extend_borders();
      s.req.lambda_factor = lambda;
      expect_matches_twin(s.req);
    }
}

TEST_P(KernelEmu, MatchesTwinAtLargeRanges) {
  std::mt19937 rng(1618);
  expect_matches_twin(make_scene(1, 1, 1, 64, 8, rng).req);
  expect_matches_twin(make_scene(1, 1, 1, 128, 4, rng, Content::kNoise).req);
}

// pad_kernel and block_sum_kernel (emulated, one launch each over the whole picture) against plain sums of the
// picture with its edges replicated, at every position of the border too, on random pictures and the extremes (all 0,
// all 255: the largest sum, 4080).
TEST(GpuMeKernelOps, BlockSumsMatchPlainSums) {
  std::mt19937 rng(4080);
  for (int fill : {-1, 0, 255})
    for (const auto& [w, h] : {std::pair<int, int>{16, 16}, {48, 32}, {80, 48}}) {
      std::vector<uint8_t> pic(static_cast<size_t>(w) * h);
      for (uint8_t& v : pic) v = static_cast<uint8_t>(fill < 0 ? rng() & 255u : static_cast<unsigned>(fill));
      const std::vector<uint16_t> sums = emulated_block_sums(emulated_padded(pic, w, h), w, h);
      int bad = 0;
      for (int y = -kSumBorder; y <= h + kSumBorder - 4; ++y)
        for (int x = -kSumBorder; x <= w + kSumBorder - 4; ++x) {
          int want = 0;
          for (int r = 0; r < 4; ++r)
            for (int k = 0; k < 4; ++k) want += pic[static_cast<size_t>(clip3(0, h - 1, y + r)) * w + clip3(0, w - 1, x + k)];
          const int got = sums[sum_origin(w) + static_cast<size_t>(static_cast<ptrdiff_t>(y) * sum_pitch(w) + x)];
          if (got != want && ++bad <= 3) ADD_FAILURE() << w << "x" << h << " fill " << fill << " at (" << x << ", " << y << "): " << got << " vs " << want;
        }
      EXPECT_EQ(bad, 0) << w << "x" << h << " fill " << fill;
    }
}

// The launch order: cost_order_kernel against cost_order_plain on random costs, costs with many ties, saturating
// sums over references, and bands from one macroblock to the largest the kernel takes, heaviest first with and
// without splits and in the mixed order (runs of 1, 3 and kMixRun, over the whole band or a first wave of 10 or 661
// blocks); and the table is what it claims: per band, each of its macroblocks once, the split ones (those
// split_worthy, at most kMaxSplit) first as two halves, then the others with costs not increasing (mixed: in the
// wave, the blocks of the costly runs' costs not increasing, the cheap runs' not decreasing, none of which costs more
// than a costly run's block; after it, costs not increasing, none above the wave's cheapest costly block nor below
// its dearest cheap one), then the spare blocks.
TEST(GpuMeKernelOps, CostOrderMatchesPlainOrder) {
  std::mt19937 rng(1717);
  const std::vector<std::vector<int>> layouts = {
      {0, 1}, {0, 300, 600, 900, 1200}, {0, 3, 13, 23, 33, 43}, {0, kCostOrderMaxMbs}, {0, 120, 1320, 2520}};
  int splits_seen = 0, full_splits_seen = 0;
  for (const std::vector<int>& layout : layouts)
    for (int refs : {1, 2, 3})
      for (int spread : {0, 3, 1 << 20, -1, -2})  // -1: costs near UINT32_MAX, whose sums saturate; -2: a few large
        for (int policy = 0; policy < 7; ++policy) {  // heaviest first, split, mixed (runs 1, 3, kMixRun; waves)
          const int num_mbs = layout.back();
          std::vector<uint32_t> cost(static_cast<size_t>(refs) * num_mbs);
          for (uint32_t& c : cost)
            c = spread == -1  ? UINT32_MAX - (rng() & 7u)
                : spread == -2 ? (rng() % 16 == 0 ? 1000000u + static_cast<uint32_t>(rng() % 1000) : 1000u)
                : spread == 0  ? 5u
                               : static_cast<uint32_t>(rng() % (spread + 1u));
          CostOrderBands bands;
          bands.count = static_cast<int>(layout.size()) - 1;
          int widest = 0;
          for (int b = 0; b <= bands.count; ++b) {
            bands.start_mb[b] = layout[static_cast<size_t>(b)];
            if (b > 0) widest = std::max(widest, layout[static_cast<size_t>(b)] - layout[static_cast<size_t>(b) - 1]);
          }
          std::vector<int> got(cost_order_entries(num_mbs, bands.count), -7);
          ASSERT_LE(static_cast<size_t>(widest) * 4 + kCostOrderThreads * 8, kEmuSmemBytes);
          const int chunks = (widest + kCostOrderThreads - 1) / kCostOrderThreads;
          const bool splits = policy == 1;
          const int run = policy == 2 ? 1 : policy == 3 || policy == 6 ? 3 : policy >= 4 ? kMixRun : 0;
          const int wave = policy == 1 ? 660 : policy == 5 ? 10 : policy == 6 ? 661 : 0;
          const bool mix = run > 0;
          emu_launch(bands.count * chunks, kCostOrderThreads, [&] {
            cost_order_kernel(cost.data(), refs, num_mbs, bands, chunks, wave, splits, run, got.data());
          });
          const std::vector<int> want = cost_order_plain(cost.data(), refs, num_mbs, bands, wave, splits, run);
          ASSERT_EQ(got, want) << "layout of " << bands.count << " bands, " << refs << " refs, spread " << spread
                               << ", policy " << policy;
          uint64_t total = 0;
          for (int mb = 0; mb < num_mbs; ++mb) total += macroblock_cost(cost.data(), refs, num_mbs, mb);
          for (int b = 0; b < bands.count; ++b) {
            const int lo = bands.start_mb[b], n = bands.start_mb[b + 1] - lo;
            const int* e = &want[static_cast<size_t>(lo + b * kMaxSplit)];
            int worthy = 0;
            for (int mb = lo; mb < lo + n; ++mb)
              worthy += splits && split_worthy(macroblock_cost(cost.data(), refs, num_mbs, mb), total, refs, wave);
            const int split = std::min(worthy, kMaxSplit);
            splits_seen += split > 0;
            full_splits_seen += split == kMaxSplit;
            std::vector<int> mbs;
            for (int i = 0; i < n + kMaxSplit; ++i) {
              if (i < 2 * split) {
                ASSERT_EQ(entry_half(e[i]), i & 1) << i;
                if (i & 1) ASSERT_EQ(entry_mb(e[i]), entry_mb(e[i - 1])) << i;
                else mbs.push_back(entry_mb(e[i]));
              } else if (i < n + split) {
                ASSERT_EQ(entry_half(e[i]), -1) << i;
                mbs.push_back(entry_mb(e[i]));
              } else {
                ASSERT_EQ(e[i], kSpareBlock) << i;
              }
            }
            ASSERT_EQ(static_cast<int>(mbs.size()), n);
            auto cost_at = [&](size_t i) { return macroblock_cost(cost.data(), refs, num_mbs, mbs[i]); };
            // Mixed: the first `mixed` blocks (the wave, an even count, or all n) in whole runs of `run` costly
            // blocks then `run` cheap ones while the cheap half has whole runs left, then single blocks
            // alternating, costly first; the blocks after the wave in order.
            const size_t mixed = mix && wave > 0 && wave < n ? static_cast<size_t>(wave / 2 * 2) : mbs.size();
            const size_t whole = mix ? 2 * (mixed / 2 / run * run) : 0;
            auto costly = [&](size_t i) { return i < whole ? (i / run) % 2 == 0 : (i - whole) % 2 == 0; };
            uint32_t cheapest_costly = UINT32_MAX, dearest_cheap = 0;
            size_t last_costly = SIZE_MAX, last_cheap = SIZE_MAX, costly_blocks = 0;
            for (size_t i = 0; i < mixed; ++i) {
              if (!mix) {
                if (i > 0) {
                  ASSERT_GE(cost_at(i - 1), cost_at(i)) << i;
                }
              } else if (costly(i)) {
                if (last_costly != SIZE_MAX) {
                  ASSERT_GE(cost_at(last_costly), cost_at(i)) << i;
                }
                last_costly = i;
                ++costly_blocks;
                cheapest_costly = std::min(cheapest_costly, cost_at(i));
              } else {
                if (last_cheap != SIZE_MAX) {
                  ASSERT_LE(cost_at(last_cheap), cost_at(i)) << i;
                }
                last_cheap = i;
                dearest_cheap = std::max(dearest_cheap, cost_at(i));
              }
            }
            if (mix) {
              ASSERT_EQ(costly_blocks, (mixed + 1) / 2);
              if (n > 1) {
                ASSERT_GE(cheapest_costly, dearest_cheap);
              }
              for (size_t i = mixed; i < mbs.size(); ++i) {
                if (i > mixed) {
                  ASSERT_GE(cost_at(i - 1), cost_at(i)) << i;
                }
                ASSERT_LE(cost_at(i), cheapest_costly) << i;
                ASSERT_GE(cost_at(i), dearest_cheap) << i;
              }
            }
            std::sort(mbs.begin(), mbs.end());
            for (int i = 0; i < n; ++i) ASSERT_EQ(mbs[static_cast<size_t>(i)], lo + i);
          }
        }
  EXPECT_GT(splits_seen, 0);
  EXPECT_GT(full_splits_seen, 0);
}

// The portable packed u16 arithmetic of the GPUs before Hopper against the models of Hopper's instructions, on the
// values where halves wrap, saturate or tie, and on random words.
TEST(GpuMeKernelOps, PreHopperPackedU16MatchesHopperInstructions) {
  const uint32_t edges[] = {0u, 1u, 0x7fffu, 0x8000u, 0xffffu, 0x10000u, 0x7fff7fffu, 0x80008000u, 0xffff0000u,
                            0x0000ffffu, 0xfffffffeu, 0xffffffffu, 0x12348765u, 0x8001ffffu};
  std::mt19937 rng(16);
  std::vector<uint32_t> words(edges, edges + sizeof edges / sizeof edges[0]);
  for (int i = 0; i < 200; ++i) words.push_back(static_cast<uint32_t>(rng()));
  const char* const names[] = {"add_u16x2", "min_u16x2", "add_min_u16x2"};
  for (int op = 0; op < 3; ++op)
    for (uint32_t a : words)
      for (uint32_t b : words) {
        const uint32_t c = a ^ (b >> 3) ^ 0x5a5a1234u;
        ASSERT_EQ(packed_u16_op_pre_hopper(op, a, b, c), packed_u16_op(op, a, b, c))
            << names[op] << std::hex << " a 0x" << a << " b 0x" << b << " c 0x" << c;
      }
}

// Stage 2's pass mask against its definition: bit j where the low half of pair j, bit kLanePairs + j where its high
// half has (SAD + penalty) mod 2^16 <= w16; every bit where w16 is 2^15 or more (the insertion then decides).
TEST(GpuMeKernelOps, ScreenMaskPassesThePositionsUnderTheBound) {
  std::mt19937 rng(29);
  const uint32_t bounds[] = {0u, 1u, 17u, 0x3fffu, 0x7ffeu, 0x7fffu, 0x8000u, 0xfffeu, 0xffffu};
  for (int trial = 0; trial < 4000; ++trial) {
    uint32_t v[kLanePairs], h[kLanePairs];
    for (int j = 0; j < kLanePairs; ++j) {
      // Small sums near the bound, wrapping sums and the invalid slots' kHalfCap penalty.
      const uint32_t r = static_cast<uint32_t>(rng());
      v[j] = (trial & 1) ? r : r & 0x00ff00ffu;
      const uint32_t low = static_cast<uint32_t>(rng()) & ((trial & 2) ? ~0u : 0x003f003fu);
      h[j] = (r & 0x100u) ? (kHalfCap | kHalfCap << 16) : low;
    }
    const uint32_t w16 = trial < 9 * 8 ? bounds[trial % 9] : static_cast<uint32_t>(rng()) % 0x10000u;
    uint32_t want = 0;
    for (int j = 0; j < kLanePairs; ++j)
      for (int e = 0; e < 2; ++e) {
        const uint32_t sum = ((v[j] >> (16 * e)) + (h[j] >> (16 * e))) & 0xffffu;
        if (w16 >= 0x8000u || sum <= w16) want |= 1u << (j + e * kLanePairs);
      }
    ASSERT_EQ(screen_mask(v, h, w16), want) << "trial " << trial << " w16 " << w16;
  }
}

// coset_bound: the K-th smallest of the partition's 2 kCosetClasses coset minima (each the smallest of its 3 lanes'),
// or no bound (~0) where that is kHalfCap or more.
// Calls f(std::integral_constant<int, K>{}) for each K of the list, in order: a kernel op's check instantiated for
// several list lengths.
template <int... Ks, class F>
void for_each_k(F f) {
  (f(std::integral_constant<int, Ks>{}), ...);
}

template <int K>
void expect_coset_bound(std::mt19937& rng) {
  std::vector<uint32_t> s_coset(static_cast<size_t>(kCosetClasses) * kThreads);
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t mask = (trial % 3 == 0) ? 0xffffffffu : 0x03ff03ffu;  // some minima from kHalfCap up, or none
    for (uint32_t& w : s_coset) w = static_cast<uint32_t>(rng()) & mask;
    const int part = trial % kNumPartitions;
    std::vector<uint32_t> minima;
    for (int c = 0; c < kCosetClasses; ++c)
      for (int e = 0; e < 2; ++e) {
        uint32_t m = 0xffffu;
        for (int l = 0; l < kSlices; ++l)
          m = std::min(m, (s_coset[c * kThreads + kSlices * part + l] >> (16 * e)) & 0xffffu);
        minima.push_back(m);
      }
    std::sort(minima.begin(), minima.end());
    const uint32_t want = minima[K - 1] >= kHalfCap ? ~0u : minima[K - 1];
    ASSERT_EQ(coset_bound<K>(s_coset.data(), part), want) << "K " << K << " trial " << trial;
  }
}

TEST(GpuMeKernelOps, CosetBoundIsTheKthSmallestMinimum) {
  std::mt19937 rng(31);
  for_each_k<1, 2, 7, 8, 16>([&rng](auto k) { expect_coset_bound<decltype(k)::value>(rng); });
}

// list_bound with the keys publish_bound leaves: never below the K-th smallest key >> 33 of the partition's 3 lists
// together (what makes the screen exact), and never above the smallest of the lists' own bounds.
template <int K>
void expect_split_bound(std::mt19937& rng) {
  std::vector<uint32_t> worst(static_cast<size_t>(kWorstFields) * kThreads, ~0u);
  for (int trial = 0; trial < 500; ++trial) {
    uint64_t lists[kSlices][K];
    std::vector<uint64_t> all;
    for (int l = 0; l < kSlices; ++l) {
      const int filled = static_cast<int>(rng() % (K + 1));  // lists not yet full hold kEmptyKey
      for (int i = 0; i < K; ++i) {
        // Distinct keys (the low bits hold a spiral index), close enough together that the lists interleave.
        lists[l][i] = i < filled ? ((static_cast<uint64_t>(rng() % 3000) << 33) | (static_cast<uint64_t>(l) << 20) |
                                    static_cast<uint64_t>(i))
                                 : kEmptyKey;
      }
      std::sort(lists[l], lists[l] + K);
      const uint32_t own = static_cast<uint32_t>(lists[l][K - 1] >> 33);
      publish_bound<K>(lists[l], own, worst.data(), l);
      all.insert(all.end(), lists[l], lists[l] + K);
    }
    std::sort(all.begin(), all.end());
    const uint32_t kth = static_cast<uint32_t>(all[K - 1] >> 33);
    const uint32_t own_min = std::min({worst[0], worst[1], worst[2]});
    const uint32_t got = list_bound<K>(lists[0], ~0u, worst.data());
    ASSERT_GE(got, kth) << "K " << K << " trial " << trial;
    ASSERT_LE(got, own_min) << "K " << K << " trial " << trial;
  }
}

TEST(GpuMeKernelOps, SplitBoundNeverCutsThePartitionsTopK) {
  std::mt19937 rng(37);
  for_each_k<1, 2, 3, 4, 5, 8, 16>([&rng](auto k) { expect_split_bound<decltype(k)::value>(rng); });
}

TEST(GpuMeKernelOps, RowOfGroupDividesExactly) {
  // Every group a batch can name (the last batch runs up to kGroups past the window) at every search range.
  for (int range = 1; range <= 128; ++range) {
    const Geometry g = geometry(range);
    const uint32_t magic = row_magic(g.groups_per_row);
    for (int grp = 0; grp < g.num_groups + kGroups; ++grp)
      ASSERT_EQ(row_of_group(grp, magic), grp / g.groups_per_row) << "range " << range << " group " << grp;
  }
}

TEST(GpuMeKernelOps, LeastSlackIsTheSmallestOfThePartitionsWords) {
  // The sweep's early rejection takes the largest bound from the smallest 0x8000 - bound among the 41 partitions'
  // words (low halves), in every thread of a block: against a plain minimum, on random words, zeros (no bound yet)
  // and the extreme in each slot.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 500; ++trial) {
    uint32_t words[kSeaParts];
    for (uint32_t& w : words) w = rng();
    if (trial % 3 == 0) words[rng() % kNumPartitions] = 0;
    if (trial < kNumPartitions) words[trial] = 0x0001ffffu;  // the smallest slack (1) in slot `trial`
    uint32_t want = UINT32_MAX;
    for (int p = 0; p < kNumPartitions; ++p) want = std::min(want, words[p] & 0xffffu);
    std::vector<uint32_t> got(kThreads, 0xDEADBEEFu);
    emu_launch(1, kThreads, [&] { got[threadIdx.x] = least_slack(words); });
    for (int t = 0; t < kThreads; ++t) ASSERT_EQ(got[t], want) << "trial " << trial << ", thread " << t;
  }
}

// Calls whose centres and predictors are all (0, 0) read resident zeros instead of sending them: any nonzero
// component anywhere (whole steps of four words, the words after them, the odd vector) must be seen.
TEST(GpuMeKernelOps, AllZeroVectorsSeesEveryComponent) {
  for (size_t n : {0u, 1u, 2u, 7u, 8u, 9u, 17u, 8160u}) {
    std::vector<MV> v(n);
    EXPECT_TRUE(all_zero_vectors(v)) << n;
    for (size_t i = 0; i < n; ++i)
      for (const MV m : {MV(4, 0), MV(0, -4), MV(-32768, 0), MV(0, 1)}) {
        v[i] = m;
        EXPECT_FALSE(all_zero_vectors(v)) << n << " vectors, nonzero at " << i;
        v[i] = MV();
      }
  }
}

TEST(GpuMeKernelTables, MvBitsOfTheWindowsRowsAndColumns) {
  // The bytes a block whose predictor is its window centre reads its penalties' mv bits from: per window row or
  // column d, se_bits of the vector difference 4 (d - range) (0 past the window), and per group column the fewest of
  // its columns', at every search range; they fit the shared memory kept for them.
  for (int range = 1; range <= 128; ++range) {
    const Geometry g = geometry(range);
    const int batches = (g.num_groups + kGroups - 1) / kGroups;
    const std::vector<uint32_t> table = step_order_table(range);
    const int at = bits_table_offset(batches, g.win, g.groups_per_row);
    ASSERT_EQ(table.size(), static_cast<size_t>(at + bits_table_words(g.groups_per_row))) << range;
    ASSERT_LE(bits_table_words(g.groups_per_row) * 4, kBitsBytes) << range;
    ASSERT_GE(at, offset_table_offset(batches, g.win, g.groups_per_row) + g.win * g.win) << range;
    const unsigned char* bits = reinterpret_cast<const unsigned char*>(&table[static_cast<size_t>(at)]);
    for (int d = 0; d < 4 * g.groups_per_row; ++d)
      ASSERT_EQ(bits[d], d < g.win ? se_bits(4 * (d - range)) : 0) << range << " " << d;
    for (int gx = 0; gx < g.groups_per_row; ++gx) {
      int fewest = INT_MAX;
      for (int d = 4 * gx; d < std::min(4 * gx + 4, g.win); ++d) fewest = std::min(fewest, se_bits(4 * (d - range)));
      ASSERT_EQ(bits[4 * g.groups_per_row + gx], fewest) << range << " " << gx;
    }
  }
}

TEST(GpuMeKernelLimits, SharedMemoryAllowsTheBlocksPerSm) {
  // An H100 SM has 228 KB of shared memory and reserves 1 KB per block: the blocks per SM of the launch bound
  // (5 for K <= 8: at most 45,670 bytes each) must fit at every search range.
  for (int range = 1; range <= 128; ++range)
    EXPECT_LE(geometry(range).smem, 233472u / kMinBlocksPerSm - 1024) << range;
}

// Macroblock row `row` of a progressive answer (every reference: candidates and sub-pel tables) against the twin's.
::testing::AssertionResult same_row(const PictureCandidates& got, const PictureCandidates& want,
                                    const PictureSearchRequest& req, int row) {
  for (int r = 0; r < static_cast<int>(req.refs.size()); ++r)
    for (int mb = row * req.mb_width; mb < (row + 1) * req.mb_width; ++mb) {
      for (int p = 0; p < kNumPartitions; ++p)
        for (int i = 0; i < req.top_k; ++i) {
          const Candidate x = got.at(r, mb, p)[i], y = want.at(r, mb, p)[i];
          if (!(x.mv == y.mv && x.sad == y.sad))
            return ::testing::AssertionFailure() << "ref " << r << " mb " << mb << " part " << p << " rank " << i;
        }
      for (int k = 0; k < (req.subpel_metric >= 0 ? req.subpel_ranks : 0); ++k)
        if (!same_tables(got.subpel_at(r, mb, k), want.subpel_at(r, mb, k), 1))
          return ::testing::AssertionFailure() << "ref " << r << " mb " << mb << " tables of rank " << k;
      if (req.subpel_metric >= 0 && !same_floors(got.floors_at(r, mb), want.floors_at(r, mb), 1))
        return ::testing::AssertionFailure() << "ref " << r << " mb " << mb << " floors";
    }
  return ::testing::AssertionSuccess();
}

// ---- CUDA against the twin (needs a device) -----------------------------------------------------------------------
class GpuMeCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    search_ = make_picture_search(0, dsp_here(), &why);
    if (!why.empty()) GTEST_SKIP() << "no usable GPU: " << why;
  }
  void expect_same_as_twin(const PictureSearchRequest& req) {
    PictureCandidates got, want;
    // Poison the output so an unwritten candidate cannot pass.
    got.resize(static_cast<int>(req.refs.size()), req.mb_width * req.mb_height, req.top_k);
    for (Candidate& c : got.data) { c.mv = MV(-1111, 2222); c.sad = 0xDEADBEEF; }
    search_->search(req, got);
    twin_.search(req, want);
    EXPECT_TRUE(same_candidates(got, want)) << describe(req);
  }
  std::unique_ptr<PictureIntegerSearch> search_;
  TwinPictureSearch twin_{dsp_here()};
};

TEST_F(GpuMeCuda, MatchesTwinSmall) {
  std::mt19937 rng(2024);
  for (int range : {1, 5, 16})
    for (int k : {1, 4, 16}) expect_same_as_twin(make_scene(4, 3, 1, range, std::min(k, window_positions(range)), rng).req);
}

TEST_F(GpuMeCuda, MatchesTwinAtEveryListLength) {
  // Each list length has a kernel of its own (kKernels), whose machine code a change anywhere in its translation
  // unit may alter; with two references, so a launch's second kernel reads its own reference.
  std::mt19937 rng(1616);
  for (int k = 1; k <= kGpuMaxTopK; ++k)
    expect_same_as_twin(make_scene(6, 5, 2, 16, k, rng, k % 2 ? Content::kNoise : Content::kSmooth).req);
}

TEST_F(GpuMeCuda, MatchesTwinOnRandomScenes) {
  std::mt19937 rng(31337);
  const int sizes[][2] = {{11, 9}, {1, 1}, {7, 2}};
  for (const auto& sz : sizes)
    for (int range : {1, 2, 3, 7, 16, 33})
      for (int k : {1, 2, 3, 4, 8, 16}) {
        const Content content = (range + k) % 3 == 0 ? Content::kNoise : Content::kSmooth;
        const int kk = std::min(k, window_positions(range));  // top_k may not exceed the window
        expect_same_as_twin(make_scene(sz[0], sz[1], 1 + (k % 3), range, kk, rng, content).req);
      }
}

// Calls after the first with the same bands launch their blocks in the order the call before's costs give
// (gpu/cost_order.h), on other pictures and other reference counts; each still matches the twin (a block that took
// a wrong macroblock would leave another's candidates poisoned). Heaviest first (K 4) and mixed (K 8).
TEST_F(GpuMeCuda, MatchesTwinInTheCostOrder) {
  std::mt19937 rng(8088);
  int call = 0;
  for (int k : {4, 8})
    for (int refs : {2, 2, 1, 2, 1})  // calls take the two slots in turn; a slot's order is the call before's there
      expect_same_as_twin(make_scene(40, 30, refs, 8, k, rng, call++ % 2 ? Content::kNoise : Content::kSmooth,
                                     /*far_centres=*/false)
                              .req);
}

// K 1 splits the costliest macroblocks' windows between two blocks (gpu/cost_order.h): on a picture this small,
// every macroblock from the third call on (SearchRange 16: 4 batches, 2 a half), the halves meeting through the
// call slot's buffers call after call.
TEST_F(GpuMeCuda, SplitMacroblocksMatchTwin) {
  std::mt19937 rng(6060);
  int call = 0;
  for (int refs : {1, 2, 1, 2, 1, 1})
    expect_same_as_twin(
        make_scene(6, 4, refs, 16, 1, rng, call++ % 2 ? Content::kNoise : Content::kSmooth, /*far_centres=*/false).req);
}

// Calls whose centres and predictors are all (0, 0) read a resident buffer of zeros, which grows with the picture;
// calls with other vectors, before and after, send theirs. Each matches the twin.
TEST_F(GpuMeCuda, AllZeroVectorsAlternateWithOthers) {
  std::mt19937 rng(4711);
  const int sizes[][2] = {{4, 3}, {4, 3}, {11, 9}, {4, 3}, {11, 9}, {11, 9}};
  for (int i = 0; i < 6; ++i) {
    Scene s = make_scene(sizes[i][0], sizes[i][1], 1 + i % 2, 8, 4, rng, Content::kNoise, /*far_centres=*/false);
    if (i % 3 != 1) {
      std::fill(s.req.centre.begin(), s.req.centre.end(), MV());
      std::fill(s.req.penalty_pred.begin(), s.req.penalty_pred.end(), MV());
    }
    expect_same_as_twin(s.req);
  }
}

// bench_gpu --blocks reads the last call's block cycles: one per (reference, macroblock), each block's own (none
// left at zero or poisoned by another call's layout), and what turns them into time.
TEST_F(GpuMeCuda, LastBlockCyclesCoverEveryBlock) {
  auto* gpu = dynamic_cast<GpuPictureSearch*>(search_.get());
  ASSERT_NE(gpu, nullptr);
  EXPECT_TRUE(gpu->last_block_cycles().cycles.empty());  // no call yet
  std::mt19937 rng(77);
  for (int refs : {2, 1}) {
    const Scene s = make_scene(12, 5, refs, 16, 8, rng);
    PictureCandidates got;
    search_->search(s.req, got);
    const BlockCycles b = gpu->last_block_cycles();
    ASSERT_EQ(b.cycles.size(), static_cast<size_t>(refs) * 12 * 5);
    for (size_t i = 0; i < b.cycles.size(); ++i) EXPECT_GT(b.cycles[i], 1000u) << "block " << i;
    EXPECT_GE(b.blocks_per_sm, 1);
    EXPECT_GE(b.sms, 1);
    EXPECT_GT(b.clock_mhz, 100.0);
  }
}

TEST_F(GpuMeCuda, MatchesTwinWhereBatchesLieBeyondEveryBound) {
  for_each_still_flat_scene(5, 3, [this](const PictureSearchRequest& req) { expect_same_as_twin(req); });
}

TEST_F(GpuMeCuda, ZeroCopyMatchesTwin) {
  // The encoder's mode: the answer is a view of the search's page-locked buffer, valid until the next search.
  std::mt19937 rng(4242);
  for (int k : {1, 8}) {
    Scene s = make_scene(9, 7, 2, 16, k, rng);
    s.req.zero_copy = true;
    PictureCandidates got, want;
    search_->search(s.req, got);
    twin_.search(s.req, want);
    EXPECT_NE(got.view, nullptr);
    EXPECT_TRUE(got.data.empty());
    EXPECT_TRUE(same_candidates(got, want)) << describe(s.req);
  }
}

TEST_F(GpuMeCuda, SubpelTablesMatchTwin) {
  // The encoder's request (zero copy, tables in the quarter-pel metric), copies, both metrics, several refs;
  // pictures resident by id between calls.
  std::mt19937 rng(161);
  int call = 0;
  for (int metric : {2, 0})
    for (bool zero_copy : {true, false})
      for (int size : {0, 1}) {
        Scene s = make_scene(size ? 11 : 4, size ? 9 : 3, 1 + call % 3, 16, 1 + 7 * (call % 2), rng);
        s.req.subpel_metric = metric;
        s.req.subpel_ranks = call % 4 == 3 ? s.req.top_k : 1;
        s.req.zero_copy = zero_copy;
        PictureCandidates got, want;
        search_->search(s.req, got);
        twin_.search(s.req, want);
        EXPECT_TRUE(same_candidates(got, want)) << describe(s.req);
        ASSERT_EQ(got.subpel_metric, metric);
        const size_t n = s.req.refs.size() * s.req.mb_width * s.req.mb_height * s.req.subpel_ranks;
        EXPECT_EQ(zero_copy ? got.subpel_view != nullptr : got.subpel.size() == n, true);
        EXPECT_TRUE(same_tables(got.subpel_at(0, 0, 0), want.subpel.data(), n))
            << "metric " << metric << " ranks " << s.req.subpel_ranks << ", " << describe(s.req);
        EXPECT_EQ(zero_copy ? got.floors_view != nullptr : got.floors.size() == want.floors.size(), true);
        EXPECT_TRUE(same_floors(got.floors_at(0, 0), want.floors.data(), want.floors.size()))
            << "metric " << metric << " ranks " << s.req.subpel_ranks << ", " << describe(s.req);
        ++call;
      }
  // A request without tables answers without them.
  Scene s = make_scene(3, 2, 1, 4, 2, rng);
  PictureCandidates got;
  search_->search(s.req, got);
  EXPECT_EQ(got.subpel_at(0, 0, 0), nullptr);
  EXPECT_EQ(got.floors_at(0, 0), nullptr);
}

TEST_F(GpuMeCuda, ProgressiveAnswerLandsRowByRow) {
  // The encoder's request: zero copy, tables, progressive. The macroblock loop asks for rows as it reaches them;
  // every row it was told is ready must hold the twin's candidates and tables, whatever has landed after it.
  // 1920x720's 45 rows make 8 bands, the first shorter than the others (3/6/.../6: gpu/bands.h).
  std::mt19937 rng(8080);
  struct Shape { int mbw, mbh, refs, range, k; };
  for (const Shape& sh : {Shape{11, 17, 1, 16, 8}, Shape{11, 17, 2, 16, 8}, Shape{120, 45, 1, 4, 2}}) {
    const int refs = sh.refs;
    Scene s = make_scene(sh.mbw, sh.mbh, refs, sh.range, sh.k, rng);
    s.req.zero_copy = true;
    s.req.progressive = true;
    s.req.subpel_metric = 2;
    s.req.subpel_ranks = 2;
    PictureCandidates answer, want;
    search_->search(s.req, answer);
    twin_.search(s.req, want);
    const PictureCandidates& got = answer;  // readers' view (the non-const at() is the producers' `data`)
    ASSERT_NE(got.view, nullptr);
    int ready = 0;
    for (int row = 0; row < s.req.mb_height; ++row) {
      if (row >= ready) {
        const int now = search_->wait_rows(row + 1);
        EXPECT_GT(now, row);
        EXPECT_GE(now, ready);
        ready = now;
      }
      ASSERT_TRUE(same_row(got, want, s.req, row)) << "row " << row;
    }
    EXPECT_GE(search_->wait_rows(s.req.mb_height), s.req.mb_height);
  }
  // A progressive answer nobody waited for is completed by the next search, which answers correctly.
  Scene a = make_scene(5, 9, 1, 8, 4, rng), b = make_scene(5, 9, 1, 8, 4, rng);
  a.req.zero_copy = b.req.zero_copy = true;
  a.req.progressive = b.req.progressive = true;
  PictureCandidates ga, gb, wb;
  search_->search(a.req, ga);
  search_->search(b.req, gb);
  search_->wait_rows(b.req.mb_height);
  twin_.search(b.req, wb);
  EXPECT_TRUE(same_candidates(gb, wb)) << describe(b.req);
}

TEST_F(GpuMeCuda, TimesItsCalls) {
  // What bench_gpu reads: the call's device time and its kernels' share, both from the call's CUDA events, which
  // calls record only when asked to (time_calls); the counts hold either way.
  auto* gpu = dynamic_cast<GpuPictureSearch*>(search_.get());
  ASSERT_NE(gpu, nullptr);
  std::mt19937 rng(555);
  const Scene scene = make_scene(9, 7, 2, 16, 5, rng);  // owns the planes the request points to
  const PictureSearchRequest& req = scene.req;
  expect_same_as_twin(req);
  GpuSearchTiming t = gpu->last_timing();
  EXPECT_EQ(t.kernel_ms, 0.0);
  EXPECT_EQ(t.total_ms, 0.0);
  EXPECT_EQ(t.pictures_uploaded, 3);
  gpu->time_calls(true);
  for (bool progressive : {false, true}) {
    PictureSearchRequest r = req;
    r.zero_copy = r.progressive = progressive;
    PictureCandidates got, want;
    search_->search(r, got);
    search_->wait_rows(r.mb_height);  // a progressive answer's last rows complete the call
    twin_.search(r, want);
    EXPECT_TRUE(same_candidates(got, want)) << progressive;
    t = gpu->last_timing();
    EXPECT_GT(t.kernel_ms, 0.0) << progressive;
    EXPECT_GE(t.total_ms, t.kernel_ms) << progressive;
    EXPECT_GT(t.upload_ms, 0.0) << progressive;
    EXPECT_EQ(t.pictures_uploaded, 3) << progressive;
  }
  gpu->time_calls(false);
}

TEST_F(GpuMeCuda, MatchesTwinAtRange64And128) {
  std::mt19937 rng(4096);
  expect_same_as_twin(make_scene(3, 2, 2, 64, 4, rng).req);
  expect_same_as_twin(make_scene(3, 2, 1, 128, 1, rng).req);
  expect_same_as_twin(make_scene(2, 2, 1, 128, 8, rng, Content::kNoise).req);
}

TEST_F(GpuMeCuda, MatchesTwinWithOddStridesAndBorders) {
  std::mt19937 rng(1717);
  for (int pad : {19, 37}) {
    Scene s = make_scene(5, 3, 1, 20, 4, rng);
    reborder(s, pad);
    expect_same_as_twin(s.req);
  }
}

TEST_F(GpuMeCuda, MatchesTwinOnTies) {
  std::mt19937 rng(8);
  for (int lambda : {0, 65536, 5500000}) {
    Scene s = make_scene(3, 3, 2, 4, 8, rng, Content::kFlat);
    s.req.lambda_factor = lambda;
    if (lambda == 65536) s.req.penalty_pred = s.req.centre;
    expect_same_as_twin(s.req);
  }
}

TEST_F(GpuMeCuda, TopKAboveKernelLimitStillMatches) {
  std::mt19937 rng(9);
  expect_same_as_twin(make_scene(3, 2, 1, 4, kGpuMaxTopK + 3, rng).req);
}

TEST_F(GpuMeCuda, KeepsPicturesResidentById) {
  auto* gpu = dynamic_cast<GpuPictureSearch*>(search_.get());
  ASSERT_NE(gpu, nullptr);
  std::mt19937 rng(77);
  // Picture A is current in call 1 and reference in call 2: uploaded once.
  Scene s1 = make_scene(5, 4, 1, 8, 2, rng);
  s1.req.cur_id = 10;
  s1.req.ref_ids = {9};
  expect_same_as_twin(s1.req);
  EXPECT_EQ(gpu->last_timing().pictures_uploaded, 2);
  Scene s2 = make_scene(5, 4, 1, 8, 2, rng);
  s2.req.cur_id = 11;
  s2.req.refs = {&s1.planes[0]};
  s2.req.ref_ids = {10};
  expect_same_as_twin(s2.req);
  EXPECT_EQ(gpu->last_timing().pictures_uploaded, 1);
  EXPECT_EQ(gpu->last_timing().pictures_reused, 1);
  // Unknown ids are uploaded every time, and still give the right answer after the cache has been churned.
  for (int i = 0; i < 3; ++i) {
    Scene s3 = make_scene(5, 4, 2, 8, 1, rng);
    expect_same_as_twin(s3.req);
    EXPECT_EQ(gpu->last_timing().pictures_uploaded, 3);
  }
  // Picture 11 (s2's current) is still resident as reference after the churn only if not evicted; either way the
  // candidates must be right.
  s2.req.cur_id = 12;
  s2.req.cur = &s1.planes[1];
  s2.req.refs = {&s2.planes[0]};
  s2.req.ref_ids = {11};
  expect_same_as_twin(s2.req);
}

TEST_F(GpuMeCuda, SearchesAPictureAgainstItselfById) {
  // The current picture named again as a reference (same id, same pixels): the kernels must read it on the device,
  // so it cannot wait for the current picture's upload after the last band. Uploaded once.
  auto* gpu = dynamic_cast<GpuPictureSearch*>(search_.get());
  ASSERT_NE(gpu, nullptr);
  std::mt19937 rng(4711);
  Scene s = make_scene(9, 7, 2, 8, 4, rng);
  s.req.cur_id = 40;
  s.req.refs = {&s.planes[1], &s.planes[0]};
  s.req.ref_ids = {41, 40};
  expect_same_as_twin(s.req);
  EXPECT_EQ(gpu->last_timing().pictures_uploaded, 2);
  EXPECT_EQ(gpu->last_timing().pictures_reused, 1);
}

// The encoder preloads each reconstruction when its picture is done (PictureIntegerSearch::preload): the next
// search must read the preloaded pixels from the device and send only its current picture.
TEST_F(GpuMeCuda, PreloadedReferencesAreNotSentAgain) {
  auto* gpu = dynamic_cast<GpuPictureSearch*>(search_.get());
  ASSERT_NE(gpu, nullptr);
  std::mt19937 rng(91);
  Scene s = make_scene(5, 4, 2, 8, 8, rng);
  search_->preload(s.planes[1], 20);
  search_->preload(s.planes[2], 21);
  search_->preload(s.planes[2], 21);  // already on the device: nothing sent
  search_->preload(s.planes[1], -1);  // no id: ignored
  // The request names the preloaded ids with planes holding other pixels: only the device's copies give the twin's
  // answer on the original pictures.
  Scene other = make_scene(5, 4, 2, 8, 8, rng);
  PictureSearchRequest req = s.req;
  req.refs = {&other.planes[1], &other.planes[2]};
  req.ref_ids = {20, 21};
  PictureCandidates got, want;
  got.resize(2, req.mb_width * req.mb_height, req.top_k);
  for (Candidate& c : got.data) { c.mv = MV(-1111, 2222); c.sad = 0xDEADBEEF; }
  search_->search(req, got);
  twin_.search(s.req, want);
  EXPECT_TRUE(same_candidates(got, want)) << describe(req);
  EXPECT_EQ(gpu->last_timing().pictures_uploaded, 1);
  EXPECT_EQ(gpu->last_timing().pictures_reused, 2);
  // More preloads than the device keeps: the least recently used go, and a search naming an evicted id sends its
  // picture again (right answer either way).
  for (int i = 0; i < 4; ++i) search_->preload(other.planes[i % 3], 30 + i);
  s.req.ref_ids = {20, 21};
  expect_same_as_twin(s.req);
}


// Two pictures' searches for the pipelined boundary: b's first reference is the picture a is coding, `growing`,
// which holds other pixels (255 - the real ones) in every row not made final yet (finalise), so a band started
// before its rows were reported answers wrongly; `ahead` is b's request naming it. With two references, b's second
// is a's first. Built in place: `ahead` points into it.
struct GrowingPair {
  Scene a, b;
  PictureCandidates want_a, want_b;
  const Plane* real = nullptr;
  Plane growing;
  PictureSearchRequest ahead;

  void make(std::mt19937& rng, int refs, int id, TwinPictureSearch& twin) {
    a = make_scene(40, 30, refs, 16, 8, rng, Content::kSmooth, refs == 2);
    b = make_scene(40, 30, refs, 16, 8, rng, Content::kSmooth, refs == 2);
    for (Scene* s : {&a, &b}) {
      s->req.zero_copy = s->req.progressive = true;
      s->req.subpel_metric = 2;
      s->req.subpel_ranks = 2;
    }
    a.req.ref_ids = refs == 1 ? std::vector<int>{id} : std::vector<int>{id, id + 1};
    b.req.ref_ids = refs == 1 ? std::vector<int>{id + 2} : std::vector<int>{id + 2, id};
    if (refs == 2) b.req.refs[1] = a.req.refs[0];
    twin.search(a.req, want_a);
    twin.search(b.req, want_b);
    real = b.req.refs[0];
    growing.alloc(real->width, real->height, real->pad);
    for (int y = 0; y < real->height; ++y)
      for (int x = 0; x < real->width; ++x) *growing.at(x, y) = static_cast<uint8_t>(255 - *real->at(x, y));
    ahead = b.req;
    ahead.refs[0] = &growing;
  }
  // Rows [y0, y1) of the growing reference become final.
  void finalise(int y0, int y1) {
    for (int y = y0; y < y1; ++y)
      for (int x = 0; x < real->width; ++x) *growing.at(x, y) = *real->at(x, y);
  }
};

// The picture boundary, pipelined (PictureIntegerSearch::search_ahead): the next picture's search is queued while
// the current answer is still being read and its newest reference still being coded. The rows of that reference
// not reported yet hold other pixels here, so a band started before its rows were reported gives a wrong answer;
// rows are reported only below the current answer's rows already read (the contract), and each of those rows must
// still hold the current answer.
TEST_F(GpuMeCuda, SearchQueuedAheadStartsOnReportedRows) {
  std::mt19937 rng(777);
  for (int refs : {1, 2}) {
    const int id = 10 * refs;  // ids name pixels: each round's pictures have their own
    GrowingPair g;
    g.make(rng, refs, id, twin_);
    const auto& [a, b, want_a, want_b, real, growing, ahead] = g;

    PictureCandidates got_a, got_b;
    search_->search(a.req, got_a);
    ASSERT_TRUE(search_->search_ahead(ahead, 0)) << "refs " << refs;
    const PictureCandidates& read_a = got_a;
    for (int row = 0; row < a.req.mb_height; ++row) {
      search_->wait_rows(row + 1);
      ASSERT_TRUE(same_row(read_a, want_a, a.req, row)) << "refs " << refs << " row " << row;
      // Rows of the growing reference become final; every third row they are reported (as the wavefront does,
      // in steps), never beyond the current answer's rows read.
      const int final_rows = std::min(real->height, 16 * (row + 1) - 3);
      g.finalise(std::max(0, final_rows - 16), final_rows);
      if (row % 3 == 2) search_->reference_rows(growing, id + 2, final_rows);
    }
    g.finalise(0, real->height);
    search_->preload(growing, id + 2);  // the last rows, as the encoder sends a finished reconstruction
    search_->search(ahead, got_b);
    search_->wait_rows(ahead.mb_height);
    const PictureCandidates& read_b = got_b;
    for (int row = 0; row < ahead.mb_height; ++row)
      ASSERT_TRUE(same_row(read_b, want_b, ahead, row)) << "refs " << refs << " row " << row;
  }
  // A search queued ahead that the next call does not ask for is dropped: that call answers its own request, and
  // the growing reference, never reported whole, is not taken for resident later.
  Scene c = make_scene(6, 5, 1, 8, 4, rng), d = make_scene(6, 5, 1, 8, 4, rng);
  for (Scene* s : {&c, &d}) s->req.zero_copy = s->req.progressive = true;
  c.req.ref_ids = {50};
  d.req.ref_ids = {51};
  PictureCandidates got_c, got_d, want_d;
  search_->search(c.req, got_c);
  search_->wait_rows(c.req.mb_height);
  ASSERT_TRUE(search_->search_ahead(d.req, 0));
  search_->reference_rows(*d.req.refs[0], 51, 40);
  Scene e = make_scene(6, 5, 1, 8, 4, rng);
  e.req.ref_ids = {51};  // the id of d's growing reference, with other pixels: must be sent, not found resident
  e.req.zero_copy = e.req.progressive = true;
  PictureCandidates got_e, want_e;
  search_->search(e.req, got_e);
  search_->wait_rows(e.req.mb_height);
  twin_.search(e.req, want_e);
  EXPECT_TRUE(same_candidates(got_e, want_e));
}

// Pictures in flight (doc/THREADS.md): the next picture's search() takes up the search queued ahead while its
// reference is still being coded (reference_grows), and its rows are read while another thread reports the
// reference's rows. wait_rows() must block until the bands of the rows asked for have started on reported rows,
// and the answer must be the twin's; the call after it queues ahead as usual.
TEST_F(GpuMeCuda, SearchTakenUpWhileItsReferenceGrows) {
  std::mt19937 rng(4242);
  for (int refs : {1, 2}) {
    const int id = 100 + 10 * refs;
    GrowingPair g;
    g.make(rng, refs, id, twin_);
    auto& [a, b, want_a, want_b, real, growing, ahead] = g;
    ahead.reference_grows = refs == 2;  // queued saying so: thinner bands (the other round: the usual ones)

    PictureCandidates got_a, got_b;
    search_->search(a.req, got_a);
    ASSERT_TRUE(search_->search_ahead(ahead, 0)) << "refs " << refs;
    search_->wait_rows(a.req.mb_height);  // the picture before read its answer whole (its last rows still coded)
    for (int row = 0; row < a.req.mb_height; ++row) ASSERT_TRUE(same_row(got_a, want_a, a.req, row));
    // The first rows are final before this picture's search() comes, as the wavefront reports them.
    int reported = 16 * 4 - 3;
    g.finalise(0, reported);
    search_->reference_rows(growing, id + 2, reported);
    PictureSearchRequest take = ahead;
    take.reference_grows = true;
    search_->search(take, got_b);  // returns with the rest of the reference still to come
    std::atomic<int> final_rows{reported};
    std::thread reporter([&] {  // through g: a lambda cannot capture structured bindings (C++17)
      for (int rows = reported + 16; rows < g.real->height + 16; rows += 16) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const int to = std::min(g.real->height, rows);
        g.finalise(final_rows.load(), to);
        final_rows.store(to);
        search_->reference_rows(g.growing, id + 2, to);
      }
      search_->preload(g.growing, id + 2);  // the picture before is done
    });
    for (int row = 0; row < ahead.mb_height; ++row) {
      search_->wait_rows(row + 1);
      ASSERT_TRUE(same_row(got_b, want_b, ahead, row)) << "refs " << refs << " row " << row << " with "
                                                        << final_rows.load() << " reference rows final";
    }
    reporter.join();
    search_->wait_rows(ahead.mb_height);
    for (int row = 0; row < ahead.mb_height; ++row)
      ASSERT_TRUE(same_row(got_b, want_b, ahead, row)) << "refs " << refs << " row " << row;
  }
  // After it the next search is queued ahead and taken up as before, and the grown reference is resident.
  Scene c = make_scene(6, 5, 1, 8, 4, rng);
  c.req.zero_copy = c.req.progressive = true;
  c.req.ref_ids = {130};
  PictureCandidates got_c, want_c;
  search_->search(c.req, got_c);
  search_->wait_rows(c.req.mb_height);
  twin_.search(c.req, want_c);
  EXPECT_TRUE(same_candidates(got_c, want_c));
}


// The encoder's input pictures are page-locked for the search (Encoder::input_frame, Plane::lock): a current picture
// whose rows lie in locked memory goes to the device by DMA straight from them. Each call reads what the memory holds
// then (pixels changed in place between calls); the encoder's request (zero copy, progressive, tables) and a search
// queued ahead match the twin; the rows are staged again once the lock is let go; a lock may outlive its search.
TEST_F(GpuMeCuda, PageLockedCurrentPictureMatchesTwin) {
  std::mt19937 rng(5150);
  Scene s = make_scene(40, 30, 2, 16, 8, rng);
  Plane& cur = s.planes[0];
  cur.lock = search_->page_lock(cur.storage.data(), cur.storage.size());
  ASSERT_NE(cur.lock, nullptr);
  for (int call = 0; call < 3; ++call) {
    expect_same_as_twin(s.req);
    for (int y = 0; y < cur.height; ++y)
      for (int x = 0; x < cur.width; ++x) *cur.at(x, y) = static_cast<uint8_t>(*cur.at(x, y) + 17 + (rng() & 7));
  }
  s.req.zero_copy = s.req.progressive = true;
  s.req.subpel_metric = 2;
  s.req.subpel_ranks = 2;
  PictureCandidates got, want;
  search_->search(s.req, got);
  search_->wait_rows(s.req.mb_height);
  twin_.search(s.req, want);
  for (int row = 0; row < s.req.mb_height; ++row) ASSERT_TRUE(same_row(got, want, s.req, row)) << "row " << row;

  GrowingPair g;
  g.make(rng, 1, 140, twin_);
  Plane& next = g.b.planes[0];  // the current picture of the search queued ahead
  next.lock = search_->page_lock(next.storage.data(), next.storage.size());
  ASSERT_NE(next.lock, nullptr);
  PictureCandidates got_a, got_b;
  search_->search(g.a.req, got_a);
  search_->wait_rows(g.a.req.mb_height);
  ASSERT_TRUE(search_->search_ahead(g.ahead, 0));
  g.finalise(0, g.real->height);
  search_->preload(g.growing, 142);  // the reference's rows: the bands launch, each sending its current rows
  search_->search(g.ahead, got_b);
  search_->wait_rows(g.ahead.mb_height);
  for (int row = 0; row < g.ahead.mb_height; ++row)
    ASSERT_TRUE(same_row(got_b, g.want_b, g.ahead, row)) << "queued ahead, row " << row;

  cur.lock.reset();
  s.req.zero_copy = s.req.progressive = false;
  s.req.subpel_metric = -1;
  expect_same_as_twin(s.req);
  cur.lock = search_->page_lock(cur.storage.data(), cur.storage.size());
  search_.reset();
  cur.lock.reset();
  next.lock.reset();
}

}  // namespace
}  // namespace gme
