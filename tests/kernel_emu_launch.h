// The integer kernel's launches as gpu/me_cuda.cu makes them, run on the host by gpu/kernel_emu.h: one emulated
// launch per reference over the whole picture. Include it after gpu/kernel_emu.h and gpu/me_cuda_kernel.cuh; the
// including translation unit's GME_EMU_ARCH decides which instruction set's code runs. tests/test_gpu_me.cpp compiles
// the kernel as for Hopper, tests/test_gpu_me_pre_hopper.cpp as for the GPUs before it (emulated_search_pre_hopper).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/frame.h"
#include "gpu/cost_order.h"
#include "me/me_interface.h"

namespace gme {

// The kernel compiled without Hopper's packed u16 instructions (tests/test_gpu_me_pre_hopper.cpp): the search, and
// the packed u16 helpers (op 0 add_u16x2, 1 min_u16x2, 2 add_min_u16x2) for comparing them with
// the Hopper instructions' models.
void emulated_search_pre_hopper(const PictureSearchRequest& req, PictureCandidates& out);
uint32_t packed_u16_op_pre_hopper(int op, uint32_t a, uint32_t b, uint32_t c);

namespace {

// The device holds pictures without border, pitch = width.
inline std::vector<uint8_t> strip(const Plane& p) {
  std::vector<uint8_t> v(static_cast<size_t>(p.width) * p.height);
  for (int y = 0; y < p.height; ++y) std::memcpy(&v[static_cast<size_t>(y) * p.width], p.row(y), p.width);
  return v;
}

// pad_kernel's launch for a picture sent in one piece (CudaSearch::send_rows()).
inline std::vector<uint8_t> emulated_padded(const std::vector<uint8_t>& pic, int width, int height) {
  std::vector<uint8_t> padded(sum_plane_elements(width, height), 0xA5u);
  emu_launch(height + 2 * kSumBorder, kSumThreads,
             [&] { pad_kernel(pic.data(), padded.data() + sum_origin(width), width, height, -kSumBorder); });
  return padded;
}

// block_sum_kernel's launch on that copy; what the kernel does not write (the border's last 3 columns and rows)
// poisoned.
inline std::vector<uint16_t> emulated_block_sums(const std::vector<uint8_t>& padded, int width, int height) {
  std::vector<uint16_t> sums(sum_plane_elements(width, height), 0xA5A5u);
  emu_launch(height + 2 * kSumBorder - 3, kSumThreads,
             [&] { block_sum_kernel(padded.data() + sum_origin(width), sums.data() + sum_origin(width), width, -kSumBorder); });
  return sums;
}

template <int K = 1>
void emulate_launch_k(int k, const KernelArgs& a, int blocks) {
  if constexpr (K <= kGpuMaxTopK) {
    if (k == K) emu_launch(blocks, kThreads, [&a] { integer_search_kernel<K>(a); });
    else emulate_launch_k<K + 1>(k, a, blocks);
  }
}

inline void emulated_search(const PictureSearchRequest& req, PictureCandidates& out) {
  check_search_request(req);
  ASSERT_LE(req.top_k, kGpuMaxTopK);
  const int num_refs = static_cast<int>(req.refs.size()), num_mbs = req.mb_width * req.mb_height;
  out.resize(num_refs, num_mbs, req.top_k);
  const std::vector<uint8_t> cur = strip(*req.cur);
  const Geometry g = geometry(req.search_range);
  const std::vector<uint32_t> order = step_order_table(req.search_range);
  for (int r = 0; r < num_refs; ++r) {
    const std::vector<uint8_t> ref = strip(*req.refs[r]);
    const std::vector<uint8_t> padded = emulated_padded(ref, req.refs[r]->width, req.refs[r]->height);
    const std::vector<uint16_t> sums = emulated_block_sums(padded, req.refs[r]->width, req.refs[r]->height);
    std::vector<short2> centre(num_mbs), pred(num_mbs);
    for (int mb = 0; mb < num_mbs; ++mb) {
      const MV c = req.centre[static_cast<size_t>(r) * num_mbs + mb], p = req.penalty_pred[static_cast<size_t>(r) * num_mbs + mb];
      centre[mb] = short2{c.x, c.y};
      pred[mb] = short2{p.x, p.y};
    }
    std::vector<uint2> res(static_cast<size_t>(num_mbs) * kNumPartitions * req.top_k, uint2{0xDEADBEEFu, 0xDEADBEEFu});
    KernelArgs a = kernel_args(req, g);
    a.cur = cur.data();
    a.ref = ref.data();
    a.sums = sums.data() + sum_origin(req.refs[r]->width);
    a.padded = padded.data() + sum_origin(req.refs[r]->width);
    a.mb_first = 0;
    a.centre = centre.data();
    a.pred = pred.data();
    a.order = order.data();
    a.out = res.data();
    // The second copy the kernel writes for the host (direct candidates): poisoned, and it must equal the first.
    std::vector<uint2> host(res.size(), uint2{0xA5A5A5A5u, 0xA5A5A5A5u});
    a.out_host = host.data();
    // Blocks take their macroblocks in an order (cost_order_kernel's): the reverse in the Hopper build, its first 3
    // split where the kernel splits (every macroblock of a picture of 3 or fewer), none in the other, so that both
    // ways run; either way each block writes its macroblock's cost. The split ones' meeting words start at an even
    // count other than 0, as an earlier call leaves them.
    const bool splits = splits_windows(req.top_k);
    std::vector<int> table(cost_order_entries(num_mbs, 1), kSpareBlock);
    const int split = splits ? std::min(num_mbs, 3) : 0;
    for (int s = 0; s < num_mbs; ++s) place_block(table.data(), num_mbs - 1 - s, s, num_mbs, split, 0, 0);
    std::vector<uint64_t> split_keys(static_cast<size_t>(kMaxSplit) * 2 * kNumPartitions * req.top_k, ~0ull);
    std::vector<uint32_t> split_meet(static_cast<size_t>(kMaxSplit) * kMeetWords, 2u);
    const bool ordered = GME_EMU_ARCH >= 900;
    if (ordered) {
      a.slot_mb = table.data();
      a.split_keys = split_keys.data();
      a.split_meet = split_meet.data();
    }
    std::vector<uint32_t> cost(static_cast<size_t>(num_mbs), 0u);
    a.cost = cost.data();
    ASSERT_LE(g.smem, kEmuSmemBytes);
    emulate_launch_k(req.top_k, a, num_mbs + (ordered && splits ? kMaxSplit : 0));
    ASSERT_EQ(std::memcmp(host.data(), res.data(), res.size() * sizeof(uint2)), 0) << "host copy differs";
    for (int mb = 0; mb < num_mbs; ++mb) ASSERT_GT(cost[static_cast<size_t>(mb)], 0u) << "no cost for macroblock " << mb;
    for (int mb = 0; mb < num_mbs; ++mb)
      for (int p = 0; p < kNumPartitions; ++p)
        for (int i = 0; i < req.top_k; ++i) {
          const uint2 v = res[(static_cast<size_t>(mb) * kNumPartitions + p) * req.top_k + i];
          Candidate& c = out.at(r, mb, p)[i];
          c.mv = MV(static_cast<int16_t>(v.x & 0xffffu), static_cast<int16_t>(v.x >> 16));
          c.sad = v.y;
        }
  }
}

inline uint32_t packed_u16_op(int op, uint32_t a, uint32_t b, uint32_t c) {
  switch (op) {
    case 0: return add_u16x2(a, b);
    case 1: return min_u16x2(a, b);
    default: return add_min_u16x2(a, b, c);
  }
}

}  // namespace
}  // namespace gme
