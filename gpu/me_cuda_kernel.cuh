// The integer-search kernel (gpu/me_cuda.cu launches it; doc/GPU.md describes the design), with its parts: geometry
// and arguments, arithmetic, block layout, stage 1, sweep, stage 2, merge (gpu/integer_*.cuh, included below). Kept
// apart from the host code so that the tests can also compile it as plain C++ under a small emulation of the CUDA
// execution model (gpu/kernel_emu.h) and hold its logic to the twin without a GPU, once as Hopper and once as an
// older GPU (GME_EMU_ARCH). Include it once per translation unit: it and its parts define their contents in an
// unnamed namespace.
//
// What one block computes: for one (macroblock, reference), every integer position of the window centre
// +- SearchRange and each of the 41 partitions, the top K positions by key = (motion cost << 17) | spiral index
// (me/spiral.h), i.e. by (cost, spiral): the twin's order (gpu/me_twin.cpp). One fused kernel does what the seed
// paper's three kernels do (4x4 SADs, partition tree with penalty, reductions); no intermediate SAD leaves shared
// memory. A split macroblock (at K 1 the costliest of a small picture, gpu/cost_order.h) has two blocks, each
// searching half of the window (the centre batch and those before it, or those after it) without the sweep; they
// merge their lists where they meet. The outline, in the order of the functions (in the parts this file includes,
// gpu/integer_*.cuh, then below; kThreads = 128 threads per block):
//
//   integer_search_kernel
//     load_current          the macroblock's 16x16 pixels to shared memory
//     load_bits             where the predictor is the window centre: the mv bits of the window's rows and columns
//     mark_padding          the slots stage 2 may read past a batch: invalid keys
//     for each batch of kBatch = 384 window positions (96 groups of 4 horizontally adjacent ones), the centre's
//     batch first, then alternately below and above it (batch_at):
//       batch_key_floor     a floor under the batch's keys: a block none of whose lists' bounds reaches it skips the
//                           batch
//       load_step_order     the batch's stage-2 step order (step_order_table, computed on the host)
//       load_tile           the reference rows the batch reads, every fetch clamped into the picture (whole
//                           aligned words, one column per thread, where the window allows)
//       stage 1 (threads 0..95, one group each; beside them threads 96..127, 3 groups each)
//         group_sads        16 4x4 SADs of the group's 4 positions (VABSDIFF4 on funnel-shifted words)
//         store_partitions  the 41 partition SADs, two positions per u16 pair, to shared memory
//         penalty_keys      (threads 96..127) each position's penalty key (lambda * mv bits << 17 | spiral) and u16
//                           screen half (the mv bits from load_bits' table, or computed where the predictor differs)
//       stage 2 (threads 0..122, 3 list threads per partition, each a third of the batch's positions)
//         list_bound        the screen's bound: the list's own K-th key, the pooled and previous-batch bounds
//                           and the split bound of the lists' published keys (publish_bound, at the batch's end)
//         seed_bound        centre batch: the largest key of the K positions nearest the window centre
//         coset_minima, coset_bound   centre batch: the K-th smallest of 16 disjoint coset minima
//         screen_batch      16 positions per step against the bound in packed u16 halves (a warp none of whose
//                           lists' bounds reaches the batch's key floor skips it); a warp with a possible entrant
//                           inserts (insert_entrants, or per-lane queues drained by drain_queue for K >= kQueueMinK)
//                           into the sorted register list (insert_key)
//     after the centre batch: pool_bound (the K-th key >> 33 of a partition's 3 lists together), then, where the
//     window lies within the padded reference (window_summed), the sweep instead of the other batches:
//       group_may_enter     per group of 4 positions, whether a lower bound from 4x4 block sums (block_sum_kernel)
//                           plus the group's fewest mv bits can reach some partition's bound (refused at once where
//                           that penalty alone passes the largest bound, least_slack); the survivors listed
//       stage1_chunk        every kGroups survivors: SADs and penalty keys, then stage 2 as for a batch
//     merge_lists           each list thread ranks its keys in the partition's union and places those of rank < K,
//                           decoded back to (mv, SAD); a split window's half ranks them (rank_half) and the second
//                           half to finish merges both (meet_halves)
//     write_out             the block's 41 x K candidates to device memory (and the page-locked host buffer)
//
// Every bound is exact: a position whose key >> 33 exceeds a bound that K distinct positions of its partition
// lie at or below cannot be in the partition's top K, and one that can passes every screen, so the lists' union
// holds the partition's top K whatever the bounds, the visiting order or the batch order.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/exp_golomb.h"
#include "gpu/integer_geometry.cuh"  // geometry, step-order table, KernelArgs (also for the host)
#include "gpu/integer_ops.cuh"       // packed arithmetic
#include "gpu/integer_block.cuh"     // shared layout, macroblock, batches, tile
#include "gpu/integer_stage1.cuh"    // SADs and penalty keys
#include "gpu/integer_sweep.cuh"     // successive elimination and its chunks
#include "gpu/integer_stage2.cuh"    // bounds, screen, sorted lists
#include "gpu/integer_merge.cuh"     // the lists merged, split halves met, candidates out

namespace gme {
namespace {

// ---- The kernel -------------------------------------------------------------------------------------------------
template <int K>
__global__ void __launch_bounds__(kThreads, min_blocks_per_sm(K)) integer_search_kernel(const KernelArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const SharedLayout s = shared_layout(smem);
  const int tid = threadIdx.x;
  const long long start = clock64();
  if constexpr (splits_windows(K))
    if (a.slot_mb && a.slot_mb[blockIdx.x] == kSpareBlock) return;  // a block without a macroblock
  const Macroblock m = block_macroblock(a);
  load_current(a, m, s.cur, tid);
  load_bits(a, m, s.bits, tid);
  mark_padding(s, tid);

  // Stage-2 roles: list thread (partition, slice); threads past the last one rescan partition 40.
  const int part = tid / kSlices, slice = tid - part * kSlices;
  const bool lister = part < kNumPartitions;
  const int list_part = min(part, kNumPartitions - 1);
  uint64_t best[K];
GME_UNROLL
  for (int i = 0; i < K; ++i) best[i] = kEmptyKey;
  // What the first batch reads: no bound.
  for (int f = 0; f < kWorstFields; ++f) s.worst[(kWorstFields + f) * kThreads + tid] = ~0u;
  // No partition bound for the sweep yet; the batches the block searches (batch_span), read after barriers.
  if (tid < kSeaParts) s.sea[tid] = tid == kSeaSpan && splits_windows(K) ? batch_span(a) : 0u;
  int done = 0;                   // batches processed: selects the s.worst half to write
  uint32_t pooled = ~0u;          // pool_bound after the centre batch
  uint32_t bound = ~0u;           // this list's bound after the last batch it screened

  const uint32_t* row = s.sad + list_part * kSadRow;
  const uint32_t* half2 = reinterpret_cast<const uint32_t*>(s.half);  // u16 pairs, as the SAD pairs
  // A batch's (or a sweep chunk's) bound from what the lists published at the end of the previous one.
  auto previous_bound = [&]() {
    return list_bound<K>(best, pooled, s.worst + ((done & 1) ^ 1) * kWorstFields * kThreads + kSlices * list_part);
  };
  // Stage 2 of a batch or sweep chunk, whose slots stage 1 filled, from bound `worst`.
  auto screen = [&](uint32_t worst, uint32_t key_floor, int steps) {
    worst = screen_batch<K>(best, worst, key_floor, row, half2, s.pen, reinterpret_cast<const unsigned char*>(s.order),
                            steps, slice, s.tile + tid);
    bound = worst;
    publish_bound<K>(best, worst, s.worst + (done & 1) * kWorstFields * kThreads, tid);  // read after two barriers
    ++done;
  };

  // Batches in order of distance from the window centre: the mv penalty grows away from the centre and good
  // matches cluster near it, so the lists fill with good keys early and later positions rarely pass the screen.
  const TileWalk walk = tile_walk(a, tid);
  const int num_batches = (a.num_groups + kGroups - 1) / kGroups;
  const int centre_batch = centre_batch_of(a.range, a.groups_per_row, num_batches);
  for (int i = 0; i < 2 * num_batches; ++i) {
    if (i == 1) {  // after the centre batch: the pooled bound, then the sweep where the block can
      __syncthreads();  // stage 2 is done with s.sad
      publish_lists<K>(best, s.sad, tid);
      __syncthreads();
      pooled = pool_bound<K>(s.sad + kSlices * list_part);
      const uint32_t pb = min(bound, pooled);
      if (lister && pb < kSeaCap) atomicMax(s.sea + part, (0x8000u - pb) * 0x10001u);  // the smallest of the 3
      // A split window's halves search their batches (uniform).
      if (!__syncthreads_or(lister && pb >= kSeaCap) && window_summed(a, m) &&
          (!splits_windows(K) || whole_span(s.sea[kSeaSpan]))) {
        if (tid < kOrderWords) s.order[tid] = 0x03020100u + 0x04040404u * static_cast<uint32_t>(tid);  // in turn
        uint16_t* list = reinterpret_cast<uint16_t*>(s.tile);
        const int centre_first = centre_batch * kGroups;  // the centre batch's groups are done
        int listed = 0;  // listed groups not yet processed, the same in every thread
        const int rounds = (a.num_groups + kThreads - 1) / kThreads;
        // Rounds from the centre batch outwards, alternately below and above it, so that the bounds the chunks
        // tighten meet the farther rows.
        const int centre_round = min((centre_first + kGroups / 2) / kThreads, rounds - 1);
        int visited = 0;
        uint32_t slack = least_slack(s.sea);  // after the pooled bounds' barrier; again after each chunk's
        for (int n = 0; visited < rounds; ++n) {
          const int r = centre_round + ((n & 1) ? (n + 1) / 2 : -(n / 2));
          if (r < 0 || r >= rounds) continue;
          const bool last_round = ++visited == rounds;
          const int g = r * kThreads + tid;
          const bool keep = g < a.num_groups && (g < centre_first || g >= centre_first + kGroups) &&
                            group_may_enter(a, m, g, s.sea, s.bits, slack);
          const unsigned mask = __ballot_sync(0xffffffffu, keep);
          uint32_t* counts = s.sea + kSeaCounts + 4 * (visited & 1);  // by parity: a warp may write the next round's
          if ((tid & 31) == 0) counts[tid >> 5] = static_cast<uint32_t>(__popc(mask));
          __syncthreads();
          int at = listed;
          for (int w = 0; w < kThreads / 32; ++w) {
            const int c = static_cast<int>(counts[w]);
            at += w < (tid >> 5) ? c : 0;
            listed += c;
          }
          if (keep) list[at + __popc(mask & ((1u << (tid & 31)) - 1u))] = static_cast<uint16_t>(g);
          // Whole chunks of kGroups listed groups, and at the end what is left.
          while (listed >= kGroups || (last_round && listed > 0)) {
            __syncthreads();  // the list is written
            const int chunk = min(listed, kGroups), rest = listed - chunk;
            const int steps = (2 * chunk + kStepPairs - 1) / kStepPairs;
            stage1_chunk(a, m, s, list, chunk, steps, tid);
            const uint16_t carry = tid < rest ? list[kGroups + tid] : 0;  // stage 2's queues overwrite the list
            __syncthreads();
            screen(previous_bound(), 0u, steps);
            // The tests of the rounds left take the lists' new bounds.
            if (lister && bound < kSeaCap) atomicMax(s.sea + part, (0x8000u - bound) * 0x10001u);
            __syncthreads();  // stage 2 is done with s.sad and the tile's memory
            if (tid < rest) list[tid] = carry;
            listed = rest;
            slack = least_slack(s.sea);
          }
        }
        break;
      }
    }
    const int batch = centre_batch + ((i & 1) ? (i + 1) / 2 : -(i / 2));
    if (batch < 0 || batch >= num_batches) continue;
    const Batch b = batch_at(a, batch);
    const uint32_t key_floor = batch_key_floor(a, m, b);
    // The previous batch's stage 2 has finished with s.sad, s.pen, s.order and the tile; a batch that no list can
    // take anything from is skipped (the batches after it on its side lie farther out, but their floors are
    // computed alike), and so is one of the other half of a split window.
    if (!__syncthreads_or(lister && key_floor <= bound)) continue;
    if constexpr (splits_windows(K))
      if (!in_span(s.sea[kSeaSpan], batch)) continue;  // uniform
    load_step_order(a, batch, s.order, tid);
    load_tile(a, m, b, walk, s.tile, tid);
    __syncthreads();
    stage1(a, m, b, s, tid);
    __syncthreads();

    uint32_t worst = previous_bound();
    if (done == 0) {  // the centre batch (a split window's second half: the one after it); uniform
      macroblock_block_sums(s.cur, s.sea, tid);
      worst = min(worst, seed_bound<K>(a, num_batches, row, s.pen));
      coset_minima(row, half2, slice, b.steps, s.tile, tid);
      __syncthreads();
      worst = min(worst, coset_bound<K>(s.tile, list_part));
      if constexpr (K >= kQueueMinK) __syncthreads();  // the queue reuses the coset minima's memory
    }
    screen(worst, key_floor, b.steps);
  }

  // Merge the 3 sorted lists of each partition through shared memory (the SAD buffer), then write out.
  __syncthreads();
  uint64_t* s_merge = reinterpret_cast<uint64_t*>(smem);
  if (lister) {
GME_UNROLL
    for (int i = 0; i < K; ++i) s_merge[(part * kSlices + slice) * K + i] = best[i];
  }
  __syncthreads();
  uint2* s_out = reinterpret_cast<uint2*>(smem + kNumPartitions * kSlices * K * 8);
  const int half_again = splits_windows(K) ? block_half(a) : -1;  // not kept through the batches
  if (half_again < 0) {  // uniform
    if (lister) merge_lists<K>(best, s_merge, s_out, part, slice, m, a.lambda, a.order + a.offsets_at);
  } else {  // the half's keys where s_out lies, then both halves' candidates where the lists were
    uint64_t* s_keys = reinterpret_cast<uint64_t*>(s_out);
    if (lister) rank_half<K>(best, s_merge, s_keys, part, slice);
    __syncthreads();
    const uint32_t cycles = static_cast<uint32_t>(min(clock64() - start, static_cast<long long>(UINT32_MAX)));
    s_out = reinterpret_cast<uint2*>(smem);  // then the other half's keys, where the lists were too
    uint64_t* s_theirs = reinterpret_cast<uint64_t*>(smem + kNumPartitions * K * 8);
    if (!meet_halves<K>(a, m, half_again, s_keys, s_theirs, s_out, s.cur, cycles, tid)) return;
  }
  __syncthreads();
  write_out<K>(a, s_out, m.index, tid);
  if (a.cost && tid == 0 && half_again < 0)
    a.cost[m.index] = static_cast<uint32_t>(min(clock64() - start, static_cast<long long>(UINT32_MAX)));
}

}  // namespace
}  // namespace gme
