// The plain C++ twin of the picture-level integer search: the reference the CUDA kernels are checked against, and
// the path the encoder takes when no GPU is usable. Written for clarity; the GPU is the fast path.
#include "gpu/me_twin.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/frame.h"
#include "common/pixel.h"

namespace gme {

namespace {

[[noreturn]] void bad_request(const std::string& what) {
  throw std::invalid_argument("picture integer search: " + what);
}

void check_plane(const Plane* p, const char* what, int width, int height, int min_pad) {
  if (!p) bad_request(std::string(what) + " plane is null");
  if (p->width != width || p->height != height)
    bad_request(std::string(what) + " plane is " + std::to_string(p->width) + "x" + std::to_string(p->height) +
                ", expected " + std::to_string(width) + "x" + std::to_string(height));
  if (p->pad < min_pad) bad_request(std::string(what) + " plane border " + std::to_string(p->pad) +
                                    " is below " + std::to_string(min_pad));
  size_t need = static_cast<size_t>(p->stride) * (height + 2 * p->pad);
  if (p->stride < width + 2 * p->pad || p->storage.size() < need)
    bad_request(std::string(what) + " plane storage is smaller than its stride and border say");
}


struct Kept {
  uint64_t key;
  MV mv;
  uint32_t sad;
};

}  // namespace

// The 41 partition SADs from the sixteen 4x4 SADs (raster order inside the macroblock), smaller blocks summed
// into larger ones in the partition order of me_interface.h.
void partition_sads(const uint32_t s4[16], uint32_t out[kNumPartitions]) {
  uint32_t s8[4];
  for (int b8 = 0; b8 < 4; ++b8) {
    const int o = (b8 >> 1) * 8 + (b8 & 1) * 2;  // top-left 4x4 block of this 8x8
    const uint32_t a = s4[o], b = s4[o + 1], c = s4[o + 4], d = s4[o + 5];
    out[kPart4x4 + 4 * b8 + 0] = a;
    out[kPart4x4 + 4 * b8 + 1] = b;
    out[kPart4x4 + 4 * b8 + 2] = c;
    out[kPart4x4 + 4 * b8 + 3] = d;
    out[kPart8x4 + 2 * b8 + 0] = a + b;
    out[kPart8x4 + 2 * b8 + 1] = c + d;
    out[kPart4x8 + 2 * b8 + 0] = a + c;
    out[kPart4x8 + 2 * b8 + 1] = b + d;
    s8[b8] = a + b + c + d;
    out[kPart8x8 + b8] = s8[b8];
  }
  out[kPart16x8 + 0] = s8[0] + s8[1];
  out[kPart16x8 + 1] = s8[2] + s8[3];
  out[kPart8x16 + 0] = s8[0] + s8[2];
  out[kPart8x16 + 1] = s8[1] + s8[3];
  out[kPart16x16] = s8[0] + s8[1] + s8[2] + s8[3];
}

void check_search_request(const PictureSearchRequest& req) {
  if (req.mb_width <= 0 || req.mb_height <= 0) bad_request("empty picture");
  const int width = req.mb_width * 16, height = req.mb_height * 16;
  check_plane(req.cur, "current", width, height, 0);
  // Origins are clamped to [-pad + 3, width + pad - 19] (frame.h); that equals edge replication only when a
  // clamped 16x16 block still lies wholly in the border, i.e. pad >= 19.
  for (size_t r = 0; r < req.refs.size(); ++r)
    check_plane(req.refs[r], ("reference " + std::to_string(r)).c_str(), width, height, 19);
  if (req.search_range < 1 || req.search_range > 128)
    bad_request("SearchRange " + std::to_string(req.search_range) + " outside 1..128");
  if (req.top_k < 1 || req.top_k > window_positions(req.search_range))
    bad_request("top_k " + std::to_string(req.top_k) + " outside 1.." +
                std::to_string(window_positions(req.search_range)));
  if (req.lambda_factor < 0) bad_request("negative lambda_factor");
  const size_t n = req.refs.size() * static_cast<size_t>(req.mb_width) * req.mb_height;
  if (req.centre.size() != n || req.penalty_pred.size() != n)
    bad_request("centre/penalty_pred need one entry per (ref, macroblock): " + std::to_string(n));
  if (req.subpel_metric != -1 && req.subpel_metric != 0 && req.subpel_metric != 2)
    bad_request("subpel_metric " + std::to_string(req.subpel_metric) + " is not -1, 0 (SAD) or 2 (SATD)");
  if (req.subpel_metric >= 0 && (req.subpel_ranks < 1 || req.subpel_ranks > req.top_k))
    bad_request("subpel_ranks " + std::to_string(req.subpel_ranks) + " outside 1..top_k");
  if (!req.ref_ids.empty() && req.ref_ids.size() != req.refs.size())
    bad_request("ref_ids must be empty or have one id per reference");
  // Every window vector must be representable as an MV (int16 quarter-pel). First one pass the compiler vectorises
  // (a GPU call's uploads start after it: 8,160 centres at 1920x1080), then the offender, where there is one.
  const int reach = 4 * req.search_range;
  static_assert(sizeof(MV) == 2 * sizeof(int16_t), "a centre is two int16 lanes");
  constexpr size_t kChunk = 4;  // centres a step: 8 int16 lanes, one SIMD register's worth
  int16_t lo[2 * kChunk] = {}, hi[2 * kChunk] = {}, low_bits[2 * kChunk] = {};
  const size_t whole = n - n % kChunk;
  for (size_t i = 0; i < whole; i += kChunk) {
    int16_t v[2 * kChunk];
    std::memcpy(v, &req.centre[i], sizeof v);
    for (size_t l = 0; l < 2 * kChunk; ++l) {
      lo[l] = std::min(lo[l], v[l]);
      hi[l] = std::max(hi[l], v[l]);
      low_bits[l] = static_cast<int16_t>(low_bits[l] | v[l]);
    }
  }
  int lo_all = 0, hi_all = 0, bits_all = 0;
  for (size_t l = 0; l < 2 * kChunk; ++l) {
    lo_all = std::min<int>(lo_all, lo[l]);
    hi_all = std::max<int>(hi_all, hi[l]);
    bits_all |= low_bits[l];
  }
  for (size_t i = whole; i < n; ++i) {
    const MV c = req.centre[i];
    lo_all = std::min(lo_all, std::min<int>(c.x, c.y));
    hi_all = std::max(hi_all, std::max<int>(c.x, c.y));
    bits_all |= c.x | c.y;
  }
  if ((bits_all & 3) == 0 && lo_all - reach >= -32768 && hi_all + reach <= 32767) return;
  for (size_t i = 0; i < n; ++i) {
    const MV c = req.centre[i];
    if ((c.x & 3) || (c.y & 3)) bad_request("window centre " + std::to_string(i) + " is not full-pel");
    if (c.x - reach < -32768 || c.x + reach > 32767 || c.y - reach < -32768 || c.y + reach > 32767)
      bad_request("window around centre " + std::to_string(i) + " leaves the motion vector range");
  }
}

PictureSearchRequest centred_request(const Plane& cur, std::vector<const Plane*> refs, int search_range, int top_k,
                                     int lambda_factor) {
  PictureSearchRequest req;
  req.cur = &cur;
  req.refs = std::move(refs);
  req.mb_width = cur.width / 16;
  req.mb_height = cur.height / 16;
  req.search_range = search_range;
  req.top_k = top_k;
  req.lambda_factor = lambda_factor;
  req.centre.assign(req.refs.size() * req.mb_width * req.mb_height, MV(0, 0));
  req.penalty_pred = req.centre;
  return req;
}

void run_twin_team(int threads, const std::function<void()>& work) {
  if (threads <= 1) {
    work();
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  std::vector<std::thread> team;
  team.reserve(static_cast<size_t>(threads) - 1);
  for (int t = 1; t < threads; ++t)
    team.emplace_back([&work, &errors, t] {
      try {
        work();
      } catch (...) {
        errors[static_cast<size_t>(t)] = std::current_exception();
      }
    });
  try {
    work();
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& th : team) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void TwinPictureSearch::search(const PictureSearchRequest& req, PictureCandidates& out) {
  check_search_request(req);
  const int num_refs = static_cast<int>(req.refs.size());
  const int num_mbs = req.mb_width * req.mb_height;
  const int k = req.top_k, range = req.search_range;
  out.resize(num_refs, num_mbs, k);
  const Plane& cur = *req.cur;
  // The sixteen 4x4 SADs come from the function table (SIMD where the CPU has it; checkasm holds every SIMD entry
  // to the plain one), everything else is written out plainly here.
  const auto search_mb = [&](int r, int mb, std::vector<Kept>& kept, std::vector<int>& bits_x,
                             std::vector<int>& bits_y) {
    const Plane& ref = *req.refs[r];
    const int x_lo = -ref.pad + 3, x_hi = ref.width + ref.pad - 19;
    const int y_lo = -ref.pad + 3, y_hi = ref.height + ref.pad - 19;
    const int mb_px = (mb % req.mb_width) * 16, mb_py = (mb / req.mb_width) * 16;
    const MV centre = req.centre[static_cast<size_t>(r) * num_mbs + mb];
    const MV pred = req.penalty_pred[static_cast<size_t>(r) * num_mbs + mb];
    for (Kept& e : kept) e.key = UINT64_MAX;
    // motion_cost() is (sad << 16) + lambda * (bits(mvx - pred.x) + bits(mvy - pred.y)); the bits of each window
    // column and row are the same for every position and partition.
    for (int d = -range; d <= range; ++d) {
      bits_x[d + range] = se_bits(centre.x + 4 * d - pred.x);
      bits_y[d + range] = se_bits(centre.y + 4 * d - pred.y);
    }
    const uint8_t* cur_mb = cur.at(mb_px, mb_py);
    for (int dy = -range; dy <= range; ++dy) {
      for (int dx = -range; dx <= range; ++dx) {
        const MV mv(centre.x + 4 * dx, centre.y + 4 * dy);
        // Clamp the block origin, not the vector (frame.h): same pixels as unbounded edge replication.
        const int ox = clip3(x_lo, x_hi, mb_px + mv.x / 4), oy = clip3(y_lo, y_hi, mb_py + mv.y / 4);
        uint32_t sad4[16];
        sad_4x4_x16_(cur_mb, cur.stride, ref.at(ox, oy), ref.stride, sad4);
        uint32_t sad[kNumPartitions];
        partition_sads(sad4, sad);
        const uint64_t mv_cost = static_cast<uint64_t>(req.lambda_factor) * (bits_x[dx + range] + bits_y[dy + range]);
        const int spiral = spiral_index(dx, dy);
        for (int p = 0; p < kNumPartitions; ++p) {
          const uint64_t cost = (static_cast<uint64_t>(sad[p]) << kLambdaBits) + mv_cost;
          const uint64_t key = candidate_key(cost, spiral);
          Kept* list = &kept[static_cast<size_t>(p) * k];
          if (key >= list[k - 1].key) continue;
          int i = k - 1;
          for (; i > 0 && list[i - 1].key > key; --i) list[i] = list[i - 1];
          list[i] = Kept{key, mv, sad[p]};
        }
      }
    }
    for (int p = 0; p < kNumPartitions; ++p) {
      Candidate* dst = out.at(r, mb, p);
      for (int i = 0; i < k; ++i) {
        dst[i].mv = kept[static_cast<size_t>(p) * k + i].mv;
        dst[i].sad = kept[static_cast<size_t>(p) * k + i].sad;
      }
    }
  };
  // A (reference, macroblock row) at a time; each thread keeps its own lists.
  const int rows = num_refs * req.mb_height;
  std::atomic<int> next{0};
  run_twin_team(std::min(threads_, rows), [&] {
    std::vector<Kept> kept(static_cast<size_t>(kNumPartitions) * k);
    std::vector<int> bits_x(2 * range + 1), bits_y(2 * range + 1);
    for (int j; (j = next.fetch_add(1)) < rows;) {
      const int r = j / req.mb_height, first = (j % req.mb_height) * req.mb_width;
      for (int mb = first; mb < first + req.mb_width; ++mb) search_mb(r, mb, kept, bits_x, bits_y);
    }
  });
  if (req.subpel_metric >= 0) {
    out.subpel_ranks = req.subpel_ranks;
    out.subpel.resize(out.subpel_tables());
    out.floors.resize(out.subpel_floor_count());
    subpel_tables_twin(req, out, req.subpel_metric, req.subpel_ranks, out.subpel.data(), out.floors.data(), threads_);
    out.subpel_metric = req.subpel_metric;
  }
}

}  // namespace gme
