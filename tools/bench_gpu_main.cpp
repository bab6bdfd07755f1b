// bench_gpu: picture-level integer motion estimation per P picture, CUDA against its twin.
// Prints, per size and search range: wall time per picture with uploads (the encoder's case when references are
// not resident), wall time with pictures resident, kernel-only time (CUDA events), achieved absolute differences
// per second against the device's integer peak, and the twin's time. Medians after warm-up.
//   bin/bench_gpu [--reps N] [--twin-all | --no-twin] [--only WIDTH RANGE K] [--stage2-sim]
// --stage2-sim needs no GPU: it models the kernel's stage 2 on the CPU (see stage2_sim below).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/frame.h"
#include "common/pixel.h"
#include "common/version.h"
#include "gpu/gpu_me.h"
#include "gpu/me_cuda.h"
#include "gpu/me_twin.h"

using namespace gme;

namespace {

// lambda_mf at QP 28 for SAD, about sqrt(0.85 * 2^(16/3)) * 65536: the penalty every benchmark request uses.
constexpr int kLambdaQp28 = 384000;

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Textured picture (gradients plus noise) and a reference moved by a few pixels: realistic SAD minima.
void make_pictures(int w, int h, Plane& cur, Plane& ref) {
  std::mt19937 rng(42);
  cur.alloc(w, h, kLumaPad);
  ref.alloc(w, h, kLumaPad);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) *cur.at(x, y) = static_cast<uint8_t>(((x * 3 + y * 5) / 2 + rng() % 32) & 255);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      *ref.at(x, y) = clip_pixel(*cur.at(clip3(0, w - 1, x + 3), clip3(0, h - 1, y - 2)) + static_cast<int>(rng() % 7) - 3);
  cur.extend_borders();
  ref.extend_borders();
}


// --stage2-sim: a CPU model of the CUDA kernel's stage 2 (gpu/me_cuda_kernel.cuh), for predicting top-K changes without a
// device. On bench_gpu's workload it replays, warp by warp in lockstep, the screening steps of the 123 list threads
// (3 per partition) and counts what the kernel pays for: steps, warp votes that enter the insertion path, and loop
// trips of that path (each costs the busiest lane's number of entrants). It also checks that the merged lists are
// the exact top-K. Variants:
//   v7     : the kernel as of v7 (raster scan inside each batch, each list screened against its own K-th key);
//   share  : at each batch start a list also screens against the best K-th key of its partition's 3 lists (still
//            exact: any list's K-th key bounds the partition's final K-th key from above);
//   order  : inside a batch the chunks of 3 pairs are visited centre-out (Chebyshev distance of their first
//            position from the window centre);
//   both   : share + order;
//   queue  : both, and entrants are queued per lane (up to Q) and inserted when some lane's queue would overflow or
//            the batch ends (one trip per queued entrant of the busiest lane, with a threshold that is stale
//            between drains);
//   step   : whole steps (4 chunks, 12 pairs) visited centre-out (smallest Chebyshev distance of their positions):
//            one table entry per step instead of per chunk, so the kernel's reads keep their constant offsets;
//   share+step: share + step (the kernel as of v9);
//   step+queue: share + step + queue;
//   seed   : share + step, and the centre batch's lists start with the bound of the K positions nearest the window
//            centre (the kernel as of v13).
// Cost model (doc/GPU.md): kernel ms ~ base + trips/block * (c0 + c1 * K), fitted to v7's measured kernels.
//   bin/bench_gpu --stage2-sim [--only WIDTH RANGE K] (default: 640x480 SR 32, K 1/4/8/16; every 7th macroblock)
// Mirrors of the kernel's geometry (gpu/me_cuda.cu).
constexpr int kThreads = 128, kWarp = 32, kSlices = 3, kGroups = 96;  // v13: 96 groups per batch
constexpr uint64_t kInvalidPenKey = 0xFFFC000000000000ull;
constexpr int kLambda = 384000;  // bench_gpu's lambda_factor


void insert(std::vector<uint64_t>& list, uint64_t key) {
  const size_t k = list.size();
  if (key >= list[k - 1]) return;
  size_t i = k - 1;
  for (; i > 0 && list[i - 1] > key; --i) list[i] = list[i - 1];
  list[i] = key;
}

struct Counts {
  double steps = 0, votes = 0, trips = 0, entrants = 0, skips = 0;
  long blocks = 0;
  bool exact = true;
};

// coset+u0 is kernel v14; oracle starts the centre batch with the exact final bound (what no pre-pass can beat).
enum Variant { kV7, kShare, kOrder, kBoth, kQueue, kStep, kShareStep, kStepQueue, kSeed, kCoset, kCosetU0, kOracle,
               kNumVariants };
const char* const kVariantNames[] = {"v7",   "share", "order",    "both",  "queue", "step", "share+step",
                                     "step+queue", "seed", "coset", "coset+u0", "oracle"};

struct Sim {
  int range, win, groups_per_row, num_groups, k, queue;
  // keys[p][slot], slot = 4 * group + s (the kernel's window slots; past the right edge: invalid)
  std::vector<uint64_t> keys;
  std::vector<uint32_t> halves;  // [slot]: penalty key >> 33 (invalid past the right edge)

  uint64_t key(int p, size_t slot) const { return keys[static_cast<size_t>(p) * num_groups * 4 + slot]; }

  void fill(const Plane& cur, const Plane& ref, int mb_px, int mb_py) {
    const PixelFuncs& px = pixel_best();
    keys.assign(static_cast<size_t>(kNumPartitions) * num_groups * 4, kInvalidPenKey);
    halves.assign(static_cast<size_t>(num_groups) * 4, static_cast<uint32_t>(kInvalidPenKey >> 33));
    const int x_lo = -ref.pad + 3, x_hi = ref.width + ref.pad - 19, y_lo = -ref.pad + 3, y_hi = ref.height + ref.pad - 19;
    for (int g = 0; g < num_groups; ++g)
      for (int s = 0; s < 4; ++s) {
        const int wy = g / groups_per_row, xi = 4 * (g % groups_per_row) + s;
        if (xi >= win) continue;
        const int dx = xi - range, dy = wy - range;
        uint32_t s4[16], sad[kNumPartitions];
        px.sad_4x4_x16(cur.at(mb_px, mb_py), cur.stride, ref.at(clip3(x_lo, x_hi, mb_px + dx), clip3(y_lo, y_hi, mb_py + dy)),
                       ref.stride, s4);
        partition_sads(s4, sad);
        const uint64_t pen = ((static_cast<uint64_t>(kLambda) * (se_bits(4 * dx) + se_bits(4 * dy))) << kSpiralBits) |
                             static_cast<uint64_t>(spiral_index(dx, dy));
        halves[4 * static_cast<size_t>(g) + s] = static_cast<uint32_t>(pen >> 33);
        for (int p = 0; p < kNumPartitions; ++p)
          keys[static_cast<size_t>(p) * num_groups * 4 + 4 * static_cast<size_t>(g) + s] =
              pen + (static_cast<uint64_t>(sad[p]) << (kLambdaBits + kSpiralBits));
      }
  }

  // Distance of step t of a batch (pairs 12 t .. 12 t + 11) from the window centre: the smallest Chebyshev
  // distance of its positions (explored: its first position's distance, 316 -> 345 K = 8 trips; its middle one's,
  // 309; this, 290 with share).
  int step_distance(int g0, int groups, int t) const {
    int best = 1 << 30;
    for (int p = 24 * t; p < 24 * t + 24 && p < 4 * groups; ++p) {
      const int g = g0 + p / 4, xi = 4 * (g % groups_per_row) + p % 4, wy = g / groups_per_row;
      if (xi >= win) continue;
      best = std::min(best, std::max(std::abs(xi - range), std::abs(wy - range)));
    }
    return best;
  }

  void run(Variant v, Counts& c) const {
    const bool coset = v == kCoset || v == kCosetU0;
    const bool seeded = v == kSeed || v == kOracle || coset;
    const bool share = v == kShare || v == kBoth || v == kQueue || v == kShareStep || v == kStepQueue || seeded;
    const bool order = v == kOrder || v == kBoth || v == kQueue;
    const bool step_order = v == kStep || v == kShareStep || v == kStepQueue || seeded;
    const int cap = (v == kQueue || v == kStepQueue) ? queue : 0;
    std::vector<std::vector<uint64_t>> best(kThreads, std::vector<uint64_t>(k, ~0ull));
    std::vector<uint32_t> last_worst(kThreads, 0xFFFFFFFFu);  // each list's K-th key >> 33 after the last batch
    const int num_batches = (num_groups + kGroups - 1) / kGroups;
    const int centre_batch = std::min(num_batches - 1, (range * groups_per_row + groups_per_row / 2) / kGroups);
    for (int i = 0; i < 2 * num_batches; ++i) {
      const int batch = centre_batch + ((i & 1) ? (i + 1) / 2 : -(i / 2));
      if (batch < 0 || batch >= num_batches) continue;
      const int g0 = batch * kGroups, groups = std::min(kGroups, num_groups - g0), pairs = 2 * groups;
      const int trips = (pairs + 4 * kSlices - 1) / (4 * kSlices);
      // Chunk c = pairs 3c .. 3c + 2; the kernel visits chunk 4 t + j at step t.
      std::vector<int> chunk(4 * trips);
      for (int q = 0; q < 4 * trips; ++q) chunk[q] = q;
      if (order) {
        auto dist = [&](int q) {
          if (3 * q >= pairs) return 1 << 30;
          const int p = 6 * q, g = g0 + p / 4, xi = 4 * (g % groups_per_row) + p % 4;
          return std::max(std::abs(xi - range), std::abs(g / groups_per_row - range));
        };
        std::stable_sort(chunk.begin(), chunk.end(), [&](int a, int b) { return dist(a) < dist(b); });
      }
      if (step_order) {  // whole steps (4 chunks = 12 pairs) reordered: the kernel's v9 order
        std::vector<int> st(trips);
        for (int t = 0; t < trips; ++t) st[t] = t;
        auto dist = [&](int t) { return step_distance(g0, groups, t); };
        std::stable_sort(st.begin(), st.end(), [&](int a, int b) { return dist(a) < dist(b); });
        for (int t = 0; t < trips; ++t)
          for (int j = 0; j < 4; ++j) chunk[4 * t + j] = 4 * st[t] + j;
      }
      std::vector<uint32_t> worst(kThreads);
      // seed: in the first batch, every list of partition p starts with the bound max(key >> 33) over the K valid
      // positions of the batch nearest the window centre (smallest spiral index): K real positions at or below it.
      std::vector<uint32_t> seed(kNumPartitions, 0xFFFFFFFFu);
      if (v == kOracle && i == 0) {
        for (int p = 0; p < kNumPartitions; ++p) {
          std::vector<uint64_t> want(k, ~0ull);
          for (size_t slot = 0; slot < static_cast<size_t>(num_groups) * 4; ++slot)
            if (key(p, slot) < kInvalidPenKey) insert(want, key(p, slot));
          seed[p] = static_cast<uint32_t>(want[k - 1] >> 33);
        }
      } else if (seeded && i == 0) {
        std::vector<std::pair<uint32_t, size_t>> near;  // (spiral index, slot)
        for (size_t slot = 4 * static_cast<size_t>(g0); slot < 4 * static_cast<size_t>(g0 + groups); ++slot) {
          const uint64_t key0 = key(0, slot);
          if (key0 < kInvalidPenKey) near.push_back({static_cast<uint32_t>(key0 & ((1u << 17) - 1)), slot});
        }
        std::sort(near.begin(), near.end());
        if (near.size() >= static_cast<size_t>(k))
          for (int p = 0; p < kNumPartitions; ++p) {
            seed[p] = 0;
            for (int q = 0; q < k; ++q) seed[p] = std::max(seed[p], static_cast<uint32_t>(key(p, near[q].second) >> 33));
          }
      }
      // coset: a pre-pass over the first batch; lane t's positions of natural step st, pair j, half e go to coset
      // (st mod nc, e), nc = ceil(K / 2); the 3 lanes' minima of a coset are combined, and the bound is the K-th
      // smallest coset minimum (K distinct positions lie at or below it).
      std::vector<uint32_t> lane_bound(kThreads, 0xFFFFFFFFu);
      if (coset && i == 0) {
        const int nc = (k + 1) / 2;
        std::vector<std::vector<uint32_t>> cm(kThreads, std::vector<uint32_t>(2 * nc, 0xFFFFFFFFu));
        for (int t = 0; t < kThreads; ++t) {
          const int part = std::min(t / kSlices, kNumPartitions - 1), slice = t % kSlices;
          for (int st = 0; st < trips; ++st)
            for (int j = 0; j < 4; ++j)
              for (int e = 0; e < 2; ++e) {
                const int m = kSlices * (4 * st + j) + slice;
                if (m >= pairs) continue;
                const uint64_t kk = key(part, 4 * static_cast<size_t>(g0) + 2 * m + e);
                uint32_t c16 = static_cast<uint32_t>(std::min<uint64_t>(kk >> 33, 0xFFFFFFFFu));
                uint32_t& slot = cm[t][2 * (st % nc) + e];
                slot = std::min(slot, c16);
              }
        }
        auto kth = [&](std::vector<uint32_t> c) { std::sort(c.begin(), c.end()); return c[k - 1]; };
        for (int t = 0; t < kThreads; ++t) {
          const int part = std::min(t / kSlices, kNumPartitions - 1);
          std::vector<uint32_t> c(2 * nc, 0xFFFFFFFFu);
          for (int s2 = 0; s2 < kSlices; ++s2)
            for (int q = 0; q < 2 * nc; ++q) c[q] = std::min(c[q], cm[kSlices * part + s2][q]);
          lane_bound[t] = kth(c);
        }
      }
      for (int t = 0; t < kThreads; ++t) {
        worst[t] = std::min(lane_bound[t], static_cast<uint32_t>(best[t][k - 1] >> 33));
        const int part = std::min(t / kSlices, kNumPartitions - 1);
        if (share)
          for (int s = 0; s < kSlices; ++s) worst[t] = std::min(worst[t], last_worst[kSlices * part + s]);
        worst[t] = std::min(worst[t], seed[part]);
      }
      for (int w = 0; w < kThreads / kWarp; ++w) {
        auto at = [&](int t, int step, int e) {  // entrant e (0..7) of thread t at step
          const int part = t / kSlices, slice = t - part * kSlices;
          const int m = kSlices * chunk[4 * step + (e >> 1)] + slice;
          return m < pairs ? key(std::min(part, kNumPartitions - 1), 4 * static_cast<size_t>(g0) + 2 * m + (e & 1))
                           : kInvalidPenKey;
        };
        auto refresh = [&](int t) {
          worst[t] = std::min(share ? worst[t] : 0xFFFFFFFFu, static_cast<uint32_t>(best[t][k - 1] >> 33));
        };
        std::vector<std::vector<uint64_t>> queued(kWarp);
        auto drain = [&] {
          size_t most = 0;
          for (int l = 0; l < kWarp; ++l) {
            most = std::max(most, queued[l].size());
            for (uint64_t key : queued[l]) insert(best[kWarp * w + l], key);
            queued[l].clear();
            refresh(kWarp * w + l);
          }
          c.trips += static_cast<double>(most);
        };
        for (int step = 0; step < trips; ++step) {
          unsigned pass[kWarp];
          bool any = false;
          auto screen = [&] {
            any = false;
            for (int l = 0; l < kWarp; ++l) {
              pass[l] = 0;
              for (int e = 0; e < 8; ++e)
                if (static_cast<uint32_t>(at(kWarp * w + l, step, e) >> 33) <= worst[kWarp * w + l]) pass[l] |= 1u << e;
              any |= pass[l] != 0;
            }
          };
          screen();
          c.steps += 1;
          {  // could the warp skip this step on the smallest penalty of its 24 positions alone?
            uint32_t minh = 0xFFFFFFFFu;
            for (int j = 0; j < 4; ++j)
              for (int sl = 0; sl < kSlices; ++sl) {
                const int m = kSlices * chunk[4 * step + j] + sl;
                if (m < pairs)
                  for (int e = 0; e < 2; ++e) minh = std::min(minh, halves[4 * static_cast<size_t>(g0) + 2 * m + e]);
              }
            bool all = true;
            for (int l = 0; l < kWarp; ++l) all &= minh > worst[kWarp * w + l];
            c.skips += all;
          }
          if (!any) continue;
          c.votes += 1;
          if (cap) {
            bool full = false;
            for (int l = 0; l < kWarp; ++l)
              full |= static_cast<int>(queued[l].size()) + __builtin_popcount(pass[l]) > cap;
            if (full) {
              drain();
              screen();
            }
          }
          int most = 0;
          for (int l = 0; l < kWarp; ++l) {
            const int t = kWarp * w + l;
            most = std::max(most, __builtin_popcount(pass[l]));
            c.entrants += __builtin_popcount(pass[l]);
            for (int e = 0; e < 8; ++e)
              if (pass[l] >> e & 1) {
                if (cap) queued[l].push_back(at(t, step, e));
                else insert(best[t], at(t, step, e));
              }
            if (!cap) refresh(t);
          }
          if (!cap) c.trips += most;
        }
        if (cap) drain();
      }
      for (int t = 0; t < kThreads; ++t) last_worst[t] = worst[t];
      // coset+u0: at the end of the centre batch each list's bound becomes the K-th smallest key >> 33 of its
      // partition's 3 lists together (pooling after every batch measured 145 trips against 168, but cost more in the
      // kernel than it saved).
      if (v == kCosetU0 && i == 0)
        for (int p = 0; p < kNumPartitions; ++p) {
          std::vector<uint32_t> u;
          for (int s2 = 0; s2 < kSlices; ++s2)
            for (uint64_t key : best[kSlices * p + s2]) u.push_back(static_cast<uint32_t>(std::min<uint64_t>(key >> 33, 0xFFFFFFFFu)));
          std::sort(u.begin(), u.end());
          for (int s2 = 0; s2 < kSlices; ++s2) last_worst[kSlices * p + s2] = std::min(last_worst[kSlices * p + s2], u[k - 1]);
        }
    }
    // Merge and check against the exact top-K of every partition.
    for (int p = 0; p < kNumPartitions; ++p) {
      std::vector<uint64_t> merged(k, ~0ull), want(k, ~0ull);
      for (int s = 0; s < kSlices; ++s)
        for (uint64_t key : best[kSlices * p + s]) insert(merged, key);
      for (size_t slot = 0; slot < static_cast<size_t>(num_groups) * 4; ++slot) {
        const uint64_t key = this->key(p, slot);
        if (key < kInvalidPenKey) insert(want, key);
      }
      c.exact &= merged == want;
    }
    ++c.blocks;
  }
};

void stage2_sim(int width, int height, int range, const std::vector<int>& ks, int mb_step, int queue) {
  Plane cur, ref;
  make_pictures(width, height, cur, ref);
  const int mbw = width / 16, mbh = height / 16;
  // Kernel ms ~ base + trips * (c0 + c1 K): fitted to v7's 640x480 SR32 kernels (K 1/4/8/16: 0.191/0.225/0.281/0.447
  // ms, this model's v7 trips 127/238/358/571 per block at --mb-step 7); printed for 640x480 SR32 only.
  const double base = 0.1718, c0 = 1.320e-4, c1 = 2.185e-5;
  std::printf("%dx%d SR%d, every %d-th macroblock, queue %d; per block (macroblock x reference):\n", width, height,
              range, mb_step, queue);
  std::printf("%2s %-10s %7s %7s %7s %7s %9s %6s %10s\n", "K", "variant", "steps", "skip", "votes", "trips", "entr/list",
              "exact", "model_ms");
  for (int k : ks) {
    Sim sim;
    sim.range = range;
    sim.win = 2 * range + 1;
    sim.groups_per_row = (sim.win + 3) / 4;
    sim.num_groups = sim.groups_per_row * sim.win;
    sim.k = std::min(k, sim.win * sim.win);
    sim.queue = queue;
    Counts counts[kNumVariants];
    for (int mb = 0; mb < mbw * mbh; mb += mb_step) {
      sim.fill(cur, ref, (mb % mbw) * 16, (mb / mbw) * 16);
      for (int v = 0; v < kNumVariants; ++v) sim.run(static_cast<Variant>(v), counts[v]);
    }
    for (int v = 0; v < kNumVariants; ++v) {
      const Counts& c = counts[v];
      const double n = static_cast<double>(c.blocks);
      const double model = (range == 32 && width == 640 && height == 480) ? base + c.trips / n * (c0 + c1 * k) : 0;
      char model_text[32] = "-";
      if (model > 0) std::snprintf(model_text, sizeof model_text, "%.3f", model);
      std::printf("%2d %-10s %7.0f %7.0f %7.0f %7.0f %9.1f %6s %10s\n", k, kVariantNames[v], c.steps / n, c.skips / n, c.votes / n,
                  c.trips / n, c.entrants / n / (kNumPartitions * kSlices), c.exact ? "yes" : "NO", model_text);
    }
  }
}

}  // namespace

// The sub-pel tables (me_interface.h SubpelTable) the encoder asks for with the candidates: the extra time per
// picture on the GPU (same call with and without tables, the encoder's case: both pictures uploaded, zero copy)
// for tables of the first 1, 2, 4 and 8 candidates, the kernel's plain twin on the CPU (first candidate), and
// whether the two agree byte for byte.
void bench_subpel_tables(PictureIntegerSearch& search, GpuPictureSearch* gpu, int reps, bool no_twin) {
  std::printf("\nSub-pel tables (SATD at the 49 quarter-pel offsets around a partition's first `ranks` candidates),\n"
              "SR 32, K 8, medians of %d calls, ms: wall without / with tables, the difference, the twin's tables\n"
              "alone (ranks 1).\n", reps);
  std::printf("%-10s %5s %10s %10s %8s %9s %s\n", "size", "ranks", "no_tables", "tables", "extra", "twin_ms",
              "identical");
  struct Size { int w, h, coded_h; };
  for (const Size& sz : {Size{640, 480, 480}, Size{1920, 1080, 1088}}) {
    Plane cur, ref;
    make_pictures(sz.w, sz.coded_h, cur, ref);
    PictureSearchRequest req = centred_request(cur, {&ref}, 32, 8, kLambdaQp28);
    req.zero_copy = true;
    PictureCandidates got;
    auto timed = [&](int metric, int ranks) {
      req.subpel_metric = metric;
      req.subpel_ranks = ranks;
      std::vector<double> w;
      for (int i = 0; i < 3; ++i) search.search(req, got);
      for (int i = 0; i < reps; ++i) {
        const double t0 = now_ms();
        search.search(req, got);
        w.push_back(now_ms() - t0);
      }
      return median(w);
    };
    const double without = gpu ? timed(-1, 1) : 0;
    for (int ranks : {8, 4, 2, 1}) {  // ranks 1 last: its answer is what the twin is compared with
      const double with = gpu ? timed(2, ranks) : 0;
      double twin_ms = -1;
      std::string identical = "-";
      if (ranks == 1 && !no_twin && (sz.w == 640 || !gpu)) {
        PictureCandidates want;
        req.subpel_metric = -1;
        TwinPictureSearch().search(req, want);
        std::vector<SubpelTable> tables(static_cast<size_t>(req.mb_width) * req.mb_height);
        const double t0 = now_ms();
        subpel_tables_twin(req, want, 2, 1, tables.data());
        twin_ms = now_ms() - t0;
        if (gpu)
          identical = std::memcmp(tables.data(), got.subpel_at(0, 0, 0), tables.size() * sizeof(SubpelTable)) == 0
                          ? "yes" : "NO";
      }
      std::printf("%4dx%-5d %5d %10.3f %10.3f %8.3f %9.1f %s\n", sz.w, sz.h, ranks, without, with, with - without,
                  twin_ms, identical.c_str());
      std::fflush(stdout);
    }
  }
}

int main(int argc, char** argv) {
  int reps = 30;
  bool twin_all = false, no_twin = false, sim = false;
  int only_w = 0, only_range = 0, only_k = 0;  // --only: one configuration (for profilers)
  if (argc > 1 && !std::strcmp(argv[1], "--version")) {
    std::printf("bench_gpu %s\n", gme::version_string().c_str());
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--twin-all")) twin_all = true;
    else if (!std::strcmp(argv[i], "--no-twin")) no_twin = true;
    else if (!std::strcmp(argv[i], "--stage2-sim")) sim = true;
    else if (!std::strcmp(argv[i], "--only") && i + 3 < argc) {
      only_w = std::atoi(argv[++i]); only_range = std::atoi(argv[++i]); only_k = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "bench_gpu: unknown argument '%s' (expected --reps N, --twin-all, --no-twin, "
                   "--only WIDTH RANGE K, --stage2-sim)\n", argv[i]);
      return 2;
    }
  }
  if (sim) {
    if (only_w && (only_range < 1 || only_range > 128 || only_k < 1 || only_k > 16 || only_w % 16)) {
      std::fprintf(stderr, "bench_gpu: --stage2-sim --only needs WIDTH a multiple of 16, RANGE 1..128, K 1..16\n");
      return 2;
    }
    if (only_w) stage2_sim(only_w, only_w == 1920 ? 1088 : only_w * 3 / 4, only_range, {only_k}, 7, 8);
    else stage2_sim(640, 480, 32, {1, 4, 8, 16}, 7, 8);
    return 0;
  }
  std::string why;
  const double t_start = now_ms();
  std::unique_ptr<PictureIntegerSearch> search = make_picture_search(0, &why);
  const double start_ms = now_ms() - t_start;
  auto* gpu = dynamic_cast<GpuPictureSearch*>(search.get());
  if (!gpu) std::printf("GPU: none (%s); twin only\n", why.c_str());
  else std::printf("GPU: %s\nInteger peak: %.3g absdiff/s (SMs x 64 lanes x 4 bytes x clock)\n",
                   gpu->device_description().c_str(), gpu->peak_absdiff_per_s());
  if (gpu) {
    // What an encode's first P picture waits for (less the I picture it overlaps): device start-up, then the
    // first call (module load of the kernels it runs, allocations), here 640x480 SR 32 K 8 with tables.
    Plane cur, ref;
    make_pictures(640, 480, cur, ref);
    PictureSearchRequest req = centred_request(cur, {&ref}, 32, 8, kLambdaQp28);
    req.zero_copy = true;
    req.subpel_metric = 2;
    PictureCandidates got;
    const double t0 = now_ms();
    search->search(req, got);
    std::printf("CUDA start-up: %.1f ms to create the search, %.1f ms for its first call (640x480, K 8, tables)\n",
                start_ms, now_ms() - t0);
  }
  TwinPictureSearch twin;

  struct Size { int w, h, coded_h; };
  const Size sizes[] = {{640, 480, 480}, {1920, 1080, 1088}};
  std::printf("\nwall: per picture, both pictures uploaded, pipelined; enc: the encoder's steady state, the reference\n"
              "resident and the current picture uploaded; enc_dl: the same with the candidates downloaded per band\n"
              "instead of written to host memory by the kernels (set_direct_candidates(false)); resid: both pictures\n"
              "resident;\n"
              "seq: uploads, kernels, download one after the other; kernel: kernels alone (CUDA events);\n"
              "upload: host staging + DMA of both pictures (sequential mode); dev: first upload to last result on the\n"
              "device (CUDA events) in the wall case. Medians of %d calls, ms.\n", reps);
  std::printf("\n%-10s %3s %2s %8s %8s %8s %8s %8s %8s %8s %8s %10s %6s %9s %s\n", "size", "SR", "K", "wall", "enc",
              "enc_dl", "dev", "resid", "seq", "kernel", "upload", "absdiff/s", "%peak", "twin_ms", "identical");
  for (const Size& sz : sizes) {
    Plane cur, ref;
    make_pictures(sz.w, sz.coded_h, cur, ref);
    const int mbw = sz.w / 16, mbh = sz.coded_h / 16;
    struct Run { int range, k; };
    const Run runs[] = {{16, 1}, {32, 1}, {64, 1}, {16, 4}, {32, 4}, {64, 4},
                        {16, 8}, {32, 8}, {64, 8}, {16, 16}, {32, 16}, {64, 16}};
    for (const Run& run : runs) {
      if (only_w && (only_w != sz.w || only_range != run.range || only_k != run.k)) continue;
      PictureSearchRequest req = centred_request(cur, {&ref}, run.range, run.k, kLambdaQp28);
      req.zero_copy = true;  // as the encoder asks: the answer is a view of the download buffer, no host copy
      const double absdiffs = static_cast<double>(mbw) * mbh * window_positions(run.range) * 256.0;
      PictureCandidates got;
      double wall = 0, encoder_case = 0, encoder_download = 0, resident = 0, kernel = 0, upload = 0, sequential = 0,
             device_total = 0;
      if (gpu) {
        // One timed loop: median of `reps` calls after 3 warm-up calls (module load, allocations, caches).
        // Residency: 0 both pictures uploaded, 1 the reference resident and a new current picture each call (the
        // encoder's steady state: the reference was uploaded as the previous current picture), 2 both resident.
        auto timed = [&](bool pipelined, int residency, std::vector<double>* kernel_ms,
                         std::vector<double>* upload_ms, std::vector<double>* total_ms = nullptr) {
          gpu->set_pipelined(pipelined);
          int next_id = 100;
          req.cur_id = residency == 2 ? 1 : -1;
          if (residency >= 1) req.ref_ids = {2}; else req.ref_ids.clear();
          std::vector<double> w;
          for (int i = 0; i < 3; ++i) search->search(req, got);
          for (int i = 0; i < reps; ++i) {
            if (residency == 1) req.cur_id = next_id++;  // same pixels, new id: uploaded as a new picture
            const double t0 = now_ms();
            search->search(req, got);
            w.push_back(now_ms() - t0);
            if (kernel_ms) kernel_ms->push_back(gpu->last_timing().kernel_ms);
            if (upload_ms) upload_ms->push_back(gpu->last_timing().upload_ms);
            if (total_ms) total_ms->push_back(gpu->last_timing().total_ms);
          }
          return median(w);
        };
        std::vector<double> k, u, t;
        wall = timed(true, 0, nullptr, nullptr, &t);  // both pictures uploaded
        encoder_case = timed(true, 1, nullptr, nullptr);  // reference resident, current uploaded
        gpu->set_direct_candidates(false);
        encoder_download = timed(true, 1, nullptr, nullptr);  // the same, candidates downloaded per band
        gpu->set_direct_candidates(true);
        resident = timed(true, 2, nullptr, nullptr);  // both pictures already on the device
        sequential = timed(false, 0, nullptr, &u);    // no overlap: uploads, then kernels, then download
        timed(false, 2, &k, nullptr);                 // kernels alone, CUDA events
        kernel = median(k);
        upload = median(u);
        device_total = median(t);
        gpu->set_pipelined(true);
        req.cur_id = -1;
        req.ref_ids.clear();
      }
      double twin_ms = -1;
      std::string identical = "-";
      const bool run_twin = !no_twin && (twin_all || !gpu || (sz.w == 640 && run.range <= 32));
      if (run_twin) {
        PictureCandidates want;
        const double t0 = now_ms();
        twin.search(req, want);
        twin_ms = now_ms() - t0;
        if (gpu) identical = (want.size() == got.size() &&
                              std::memcmp(want.begin(), got.begin(), want.size() * sizeof(Candidate)) == 0)
                                 ? "yes" : "NO";
      }
      const double rate = kernel > 0 ? absdiffs / (kernel * 1e-3) : 0;
      std::printf("%4dx%-5d %3d %2d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %10.3g %5.1f%% %9.1f %s\n", sz.w,
                  sz.h, run.range, run.k, wall, encoder_case, encoder_download, device_total, resident, sequential,
                  kernel, upload, rate,
                  gpu ? 100.0 * rate / gpu->peak_absdiff_per_s() : 0.0, twin_ms, identical.c_str());
      std::fflush(stdout);
      if (identical == "NO") return 1;
    }
  }
  if (!only_w) bench_subpel_tables(*search, gpu, reps, no_twin);
  return 0;
}
