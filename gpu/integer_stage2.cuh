// Stage 2 of the integer kernel (gpu/me_cuda_kernel.cuh): the bounds and screen that keep each partition's best
// keys in sorted register lists.
#pragma once

#include <cstdint>

#include "gpu/integer_block.cuh"

namespace gme {
namespace {

// key = penalty key + (SAD << 33) = (cost << 17) | spiral, so key >> 33 = (penalty key >> 33) + SAD exactly (the SAD
// enters at bit 33), and a position whose key >> 33 exceeds a bound that K positions of its partition lie at or
// below cannot enter the partition's top K. So positions are screened with cheap adds and compares, and only a
// warp in which some lane has a possible entrant takes the 64-bit insertion path.

// Sorted insertion into K registers (constant indices only, so the list never goes to local memory). One comparison
// per entry (keys are unique, so key < best[i] decides both whether entry i moves down and whether the key lands
// there), shared by entry i and entry i + 1.
template <int K>
__device__ __forceinline__ void insert_key(uint64_t (&best)[K], uint64_t key) {
  if (key < best[K - 1]) {
    bool below[K];  // key < best[i]
GME_UNROLL
    for (int i = 0; i < K; ++i) below[i] = key < best[i];
GME_UNROLL
    for (int i = K - 1; i > 0; --i) best[i] = below[i - 1] ? best[i - 1] : (below[i] ? key : best[i]);
    best[0] = below[0] ? key : best[0];
  }
}

// The 2 kLanePairs positions of a step for this lane that pass: pairs base + 3j (j < kLanePairs), each a u16 SAD
// pair in v[j] and a u16 pair of penalty halves in h[j]; bit j of the mask = the low half of pair j, bit
// kLanePairs + j its high half. w16 = min(bound, 65535). Each half's sum is capped at W = w16 + 1 (one add-and-min)
// and W subtracted mod 2^16: a half that passes is below W by at most W, so while W <= 2^15 the difference has its
// top bit set exactly where the position passes (two instructions a pair and a shift into the mask, against a
// compare, a select and an or per position). A lane whose bound is larger (a 16x16 SAD above 2^15, or no bound yet)
// passes every position: the insertion compares whole keys, so a position passed in excess costs only time.
static_assert(kLanePairs <= 16, "the mask's halves: bits 0..15 and 16..31 before they are joined");
__device__ __forceinline__ uint32_t screen_mask(const uint32_t (&v)[kLanePairs], const uint32_t (&h)[kLanePairs],
                                                uint32_t w16) {
  if (w16 >= 0x8000u) return (1u << (2 * kLanePairs)) - 1;
  const uint32_t cap = (w16 + 1) * 0x10001u;             // W in both halves
  const uint32_t minus = (0x10000u - (w16 + 1)) * 0x10001u;  // -W mod 2^16 in both halves
  uint32_t top = 0;  // the low half of pair j at bit j, its high half at bit 16 + j
GME_UNROLL
  for (int j = 0; j < kLanePairs; ++j)
    top |= (add_u16x2(add_min_u16x2(v[j], h[j], cap), minus) & 0x80008000u) >> (15 - j);
  return (top & 0xffffu) | ((top >> 16) << kLanePairs);
}

// Inserts the positions of `pass` one at a time (a loop: the warp pays for its busiest lane), each re-read from
// shared memory by its index.
template <int K>
__device__ __forceinline__ void insert_entrants(uint64_t (&best)[K], const uint32_t* row, const uint64_t* pen, int base,
                                                uint32_t pass) {
  while (pass) {
    const int e = __ffs(pass) - 1;
    pass &= pass - 1;
    const int high = e >= kLanePairs ? 1 : 0;  // screen_mask's layout
    const int m = base + (e - high * kLanePairs) * kSlices;
    const uint32_t sad = high ? row[m] >> 16 : row[m] & 0xffffu;
    insert_key<K>(best, pen[2 * m + high] + (static_cast<uint64_t>(sad) << (kLambdaBits + kSpiralBits)));
  }
}

// Inserts this lane's queued entrants (queue = its column of the queue) and empties the queue.
template <int K>
__device__ __forceinline__ void drain_queue(uint64_t (&best)[K], const uint32_t* row, const uint64_t* pen,
                                            const uint32_t* queue, int slice, int& entries, int& queued) {
  for (int q = 0; q < entries; ++q) {
    const uint32_t entry = queue[q * kThreads];
    insert_entrants<K>(best, row, pen, slice + kStepPairs * static_cast<int>(entry & 0xffu), entry >> 8);
  }
  entries = 0;
  queued = 0;
}

// Each list's keys >> 33 (clamped to 32 bits) to s_sad, column tid, for pool_bound after the next barrier.
template <int K>
__device__ __forceinline__ void publish_lists(const uint64_t (&best)[K], uint32_t* s_sad, int tid) {
GME_UNROLL
  for (int i = 0; i < K; ++i)
    s_sad[i * kThreads + tid] = static_cast<uint32_t>(min(best[i] >> 33, static_cast<uint64_t>(0xffffffffu)));
}

// The K-th smallest of the partition's three sorted lists of K values (element i of list s at
// lists[i * kThreads + s]): a three-way merge that stops after K values. K distinct positions lie at or below it,
// where each list's own K-th key is about the 3K-th of what the partition has seen.
template <int K>
__device__ __forceinline__ uint32_t pool_bound(const uint32_t* lists) {
  const uint32_t *la = lists, *lb = lists + 1, *lc = lists + 2;
  int ia = 0, ib = 0, ic = 0;
  uint32_t va = la[0], vb = lb[0], vc = lc[0], x = 0;
  for (int n = 0; n < K; ++n) {
    if (va <= vb && va <= vc) {
      x = va;
      va = ++ia < K ? la[ia * kThreads] : ~0u;
    } else if (vb <= vc) {
      x = vb;
      vb = ++ib < K ? lb[ib * kThreads] : ~0u;
    } else {
      x = vc;
      vc = ++ic < K ? lc[ic * kThreads] : ~0u;
    }
  }
  return x;
}

// The ranks (1-based) of the two keys each list publishes at the end of a batch, K / 3 and ceil(K / 3): for any
// counts k0 + k1 + k2 = K, the largest of list 0's k0-th key, list 1's k1-th and list 2's k2-th has K distinct
// positions at or below it (the lists hold disjoint positions), so it bounds the partition's final K-th key. With
// the counts as even as they go, that is about the partition's (K + 3)-th key so far, where the smallest of the
// lists' own K-th keys is about its 3K-th. Rank 0 stands for no key (value 0).
template <int K> constexpr int kSplitLow = K / 3;
template <int K> constexpr int kSplitHigh = (K + 2) / 3;

// What a list publishes at the end of a batch for list_bound (s.worst, column tid, the batch's parity half): its
// bound and its keys >> 33 at the two split ranks.
template <int K>
__device__ __forceinline__ void publish_bound(const uint64_t (&best)[K], uint32_t worst, uint32_t* half, int tid) {
  half[tid] = worst;
  half[kThreads + tid] = kSplitLow<K> ? static_cast<uint32_t>(best[kSplitLow<K> - 1] >> 33) : 0u;
  half[2 * kThreads + tid] = static_cast<uint32_t>(best[kSplitHigh<K> - 1] >> 33);
}

// The bound a list screens a batch against: the smallest of its own K-th key >> 33, the pooled bound, the bounds its
// partition's 3 lists had at the end of the previous batch and their split bound (prev: the partition's first
// column of the previous batch's s.worst half; any list's K-th key bounds the partition's final K-th key from
// above, and a position that can be in the partition's top K is in the top K of any subset holding it, so its own
// list still keeps it).
template <int K>
__device__ __forceinline__ uint32_t list_bound(const uint64_t (&best)[K], uint32_t pooled, const uint32_t* prev) {
  const uint32_t* lo = prev + kThreads;      // keys at rank kSplitLow
  const uint32_t* hi = prev + 2 * kThreads;  // keys at rank kSplitHigh
  uint32_t split;
  if constexpr (K % 3 == 0) {
    split = max(lo[0], max(lo[1], lo[2]));
  } else if constexpr (K % 3 == 1) {  // one list gives K / 3 + 1 keys, the others K / 3
    split = min(max(hi[0], max(lo[1], lo[2])), min(max(lo[0], max(hi[1], lo[2])), max(lo[0], max(lo[1], hi[2]))));
  } else {  // two lists give K / 3 + 1 keys, one K / 3
    split = min(max(lo[0], max(hi[1], hi[2])), min(max(hi[0], max(lo[1], hi[2])), max(hi[0], max(hi[1], lo[2]))));
  }
  return min(min(min(static_cast<uint32_t>(best[K - 1] >> 33), pooled), min(prev[0], min(prev[1], prev[2]))), split);
}

// Centre batch, before any list holds a key: the largest key >> 33 of the K positions nearest the window centre
// (smallest spiral index; their batch slots follow the step orders in the table). K real positions lie at or below
// it. ~0 where the batch holds fewer than K valid positions. In the first batch of a split window's second half the
// same slots hold other positions, real ones or invalid ones (whose penalty key makes the bound no bound): a bound
// all the same.
template <int K>
__device__ __forceinline__ uint32_t seed_bound(const KernelArgs& a, int num_batches, const uint32_t* row,
                                               const uint64_t* pen) {
  const uint16_t* seeds = reinterpret_cast<const uint16_t*>(a.order + num_batches * kOrderWords);
  uint32_t bound = 0;
GME_UNROLL
  for (int q = 0; q < K; ++q) {
    const int slot = __ldg(seeds + q);
    const uint32_t sad = slot == kNoSeed ? 0u : (row[slot >> 1] >> (16 * (slot & 1))) & 0xffffu;
    bound = slot == kNoSeed ? ~0u : max(bound, static_cast<uint32_t>(pen[slot == kNoSeed ? 0 : slot] >> 33) + sad);
  }
  return bound;
}

// Centre batch: every position of the partition in the batch belongs to one of 2 kCosetClasses disjoint cosets (this
// lane's step st, even or odd half of a pair: coset (st mod kCosetClasses, half)). Each lane writes its minima of
// (penalty key >> 33) + SAD per coset to column tid of s_coset; below kHalfCap they are exact and belong to real
// positions (coset_bound takes anything from kHalfCap up as "no bound"). Each SAD is capped at 0x8000 before the add,
// so that no sum passes 65535 and wraps (a penalty half is at most kHalfCap) and a capped one stays at 0x8000 or more:
// one instruction a pair fewer than a saturating add. The cosets interleave finely (a step is 48 positions of one or
// two window rows), so each holds a position near the batch's best matches.
__device__ __forceinline__ void coset_minima(const uint32_t* row, const uint32_t* half2, int slice, int steps,
                                             uint32_t* s_coset, int tid) {
  static_assert(kHalfCap + 0x8000u <= 0xffffu, "a capped SAD plus a penalty half stays below 2^16");
  uint32_t cm[kCosetClasses];
GME_UNROLL
  for (int c = 0; c < kCosetClasses; ++c) cm[c] = ~0u;
  for (int st0 = 0; st0 < steps; st0 += kCosetClasses) {
GME_UNROLL
    for (int c = 0; c < kCosetClasses; ++c) {
      if (st0 + c < steps) {
        const int b = slice + kStepPairs * (st0 + c);
GME_UNROLL
        for (int j = 0; j < kLanePairs; ++j)
          cm[c] = add_min_u16x2(min_u16x2(row[b + j * kSlices], 0x80008000u), half2[b + j * kSlices], cm[c]);
      }
    }
  }
GME_UNROLL
  for (int c = 0; c < kCosetClasses; ++c) s_coset[c * kThreads + tid] = cm[c];
}

// After coset_minima and a barrier: the partition's coset minima are the smallest of its 3 lanes'; the K-th smallest
// of the 2 kCosetClasses is a bound (the cosets are disjoint, so K distinct positions lie at or below it), found by
// sorting them (a bitonic network, once a block; for K = 1 their minimum). ~0 where it is kHalfCap or more: such a
// minimum may come from an invalid slot or a clamped penalty, "no bound".
template <int K>
__device__ __forceinline__ uint32_t coset_bound(const uint32_t* s_coset, int list_part) {
  constexpr int kCosets = 2 * kCosetClasses;
  static_assert(K <= kCosets && (kCosets & (kCosets - 1)) == 0, "the K-th of a power-of-two number of minima");
  uint32_t v[kCosets];
GME_UNROLL
  for (int c = 0; c < kCosetClasses; ++c) {
    const uint32_t* col = s_coset + c * kThreads + kSlices * list_part;
    const uint32_t x = min_u16x2(col[0], min_u16x2(col[1], col[2]));
    v[2 * c] = x & 0xffffu;
    v[2 * c + 1] = x >> 16;
  }
  if constexpr (K == 1) {  // the smallest: no sort
GME_UNROLL
    for (int i = 1; i < kCosets; ++i) v[0] = min(v[0], v[i]);
  } else {
GME_UNROLL
    for (int k = 2; k <= kCosets; k *= 2)
GME_UNROLL
      for (int j = k / 2; j > 0; j /= 2)
GME_UNROLL
        for (int i = 0; i < kCosets; ++i) {
          const int l = i ^ j;
          if (l > i) {
            const uint32_t lo = min(v[i], v[l]), hi = max(v[i], v[l]);
            v[i] = (i & k) == 0 ? lo : hi;
            v[l] = (i & k) == 0 ? hi : lo;
          }
        }
  }
  return v[K - 1] >= kHalfCap ? ~0u : v[K - 1];
}

// Screens the batch's positions of this lane (its slice of partition row `row`) step by step in the order of
// s_order, and inserts the entrants; returns the bound at the end. The screen works on u16 halves, two positions per
// packed add-and-min: a position with (penalty key >> 33) + SAD <= bound has both terms and the sum below 2^16 when
// the bound is (w16 = min(bound, 65535)), so it passes (a penalty clamped to kHalfCap only makes its sum smaller);
// what passes wrongly (a clamped penalty, a sum that wraps, every position while the bound is 65535 or more) goes to
// insert_key, which compares whole 64-bit keys. The vote
// keeps the insertion a real branch (if-converted, its instructions would issue for every position) and needs whole
// warps: threads past the last list thread scan partition 40 again and discard the result. With K >= kQueueMinK the
// entrants are queued per lane and the warp inserts all queues together when some lane's queue would overflow and
// at the end of the batch; between drains the bound is stale (larger), which only lets more positions through.
template <int K>
__device__ __forceinline__ uint32_t screen_batch(uint64_t (&best)[K], uint32_t worst, uint32_t key_floor,
                                                 const uint32_t* row, const uint32_t* half2, const uint64_t* pen,
                                                 const unsigned char* order, int steps, int slice,
                                                 [[maybe_unused]] uint32_t* queue) {
  // No position of the batch can pass any of the warp's lists (batch_key_floor): nothing to read.
  if (!__any_sync(0xffffffffu, key_floor <= worst)) return worst;
  uint32_t w16 = min(worst, 0xffffu);
  [[maybe_unused]] int entries = 0, queued = 0;  // this lane's queue entries and queued positions
  for (int step = 0; step < steps; ++step) {
    const int base = slice + kStepPairs * order[step];
    uint32_t v[kLanePairs], h[kLanePairs], m = ~0u;
GME_UNROLL
    for (int j = 0; j < kLanePairs; ++j) {
      v[j] = row[base + j * kSlices];
      h[j] = half2[base + j * kSlices];
      m = add_min_u16x2(v[j], h[j], m);
    }
    const bool maybe = min(m & 0xffffu, m >> 16) <= w16;
    if (__any_sync(0xffffffffu, maybe)) {
      uint32_t pass = screen_mask(v, h, w16);
      if constexpr (K >= kQueueMinK) {
        if (__any_sync(0xffffffffu, queued + __popc(pass) > kQueueCap)) {
          drain_queue<K>(best, row, pen, queue, slice, entries, queued);
          worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
          w16 = min(worst, 0xffffu);
          pass = screen_mask(v, h, w16);
        }
        if (pass) {
          queue[entries * kThreads] = order[step] | (pass << 8);
          ++entries;
          queued += __popc(pass);
        }
      } else {
        insert_entrants<K>(best, row, pen, base, pass);
        worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
        w16 = min(worst, 0xffffu);
      }
    }
  }
  if constexpr (K >= kQueueMinK) {
    drain_queue<K>(best, row, pen, queue, slice, entries, queued);
    worst = min(worst, static_cast<uint32_t>(best[K - 1] >> 33));
  }
  return worst;
}

}  // namespace
}  // namespace gme
