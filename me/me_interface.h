// Integer motion estimation: the contract between the macroblock loop and whoever finds integer vectors.
//
// Two producers exist.
//  * The unmodified run (GPUIntegerME = 0): JM 19.0 fast full search (SearchMode 0). Per macroblock and reference
//    the window is +-SearchRange around the 16x16 motion-vector predictor rounded to full pel; every partition is
//    searched over that whole window with its *own exact* predictor at the moment mode decision asks for it. That
//    predictor depends on decisions made earlier in the macroblock loop, so this producer is lazy: it computes the
//    4x4 SAD table of a macroblock/reference when first asked.
//  * The picture-level search (GPUIntegerME = 1): at the start of each P picture, one call computes for every
//    macroblock, reference and the 41 partitions the cost of every position of a window around a centre known at
//    picture start, with the lambda * mv-bits penalty taken against a predictor known at picture start, and keeps
//    the best K candidates with their raw SADs (gpu/: CUDA kernels and their plain C++ twin). The macroblock loop
//    re-ranks the K candidates with the exact predictor.
// Both are seen by sub-pel refinement and mode decision through IntegerCandidateSource only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/types.h"
#include "me/spiral.h"

namespace gme {

struct Plane;

// ---- The 41 partitions of a macroblock --------------------------------------------------------------------
// 0: 16x16; 1-2: 16x8 (top, bottom); 3-4: 8x16 (left, right); 5-8: 8x8 (raster);
// 9-16: 8x4, two per 8x8 (9 + 2*b8 + i, i = top/bottom); 17-24: 4x8 (17 + 2*b8 + i, i = left/right);
// 25-40: 4x4 (25 + 4*b8 + i, i raster inside the 8x8).
constexpr int kNumPartitions = 41;

struct PartitionGeometry {
  int x, y, w, h;  // in 4x4-block units inside the macroblock
};

constexpr PartitionGeometry compute_partition_geometry(int p) {
  if (p == 0) return {0, 0, 4, 4};
  if (p <= 2) return {0, 2 * (p - 1), 4, 2};
  if (p <= 4) return {2 * (p - 3), 0, 2, 4};
  if (p <= 8) return {2 * ((p - 5) & 1), 2 * ((p - 5) >> 1), 2, 2};
  if (p <= 16) { int b8 = (p - 9) >> 1, i = (p - 9) & 1; return {2 * (b8 & 1), 2 * (b8 >> 1) + i, 2, 1}; }
  if (p <= 24) { int b8 = (p - 17) >> 1, i = (p - 17) & 1; return {2 * (b8 & 1) + i, 2 * (b8 >> 1), 1, 2}; }
  { int b8 = (p - 25) >> 2, i = (p - 25) & 3; return {2 * (b8 & 1) + (i & 1), 2 * (b8 >> 1) + (i >> 1), 1, 1}; }
}

// The same as a table built at compile time: the macroblock loop asks for it several times per partition search,
// and the branchy computation is not always inlined.
struct PartitionGeometryTable {
  PartitionGeometry g[41];
  constexpr PartitionGeometryTable() : g() {
    for (int p = 0; p < 41; ++p) g[p] = compute_partition_geometry(p);
  }
};
inline constexpr PartitionGeometryTable kPartitionGeometry{};

constexpr PartitionGeometry partition_geometry(int p) { return kPartitionGeometry.g[p]; }

// First partition index of each block size, and how many there are.
constexpr int kPart16x16 = 0, kPart16x8 = 1, kPart8x16 = 3, kPart8x8 = 5, kPart8x4 = 9, kPart4x8 = 17, kPart4x4 = 25;

// ---- Deterministic tie-breaking ---------------------------------------------------------------------------
// Equal costs are resolved in JM's spiral order: spiral_index() in me/spiral.h.

// ---- Costs --------------------------------------------------------------------------------------------------
// JM 19.0 motion cost at full pel (JCOST_CALC_SCALEUP = 1):
//   J = (SAD << 16) + lambda_factor * (se_bits(4*mvx - pred.x) + se_bits(4*mvy - pred.y))
// with lambda_factor = JM's lambda_mf[P][qp][F_PEL] (5 fractional bits) << 11, see common/types.h and doc/RD.md.
inline uint64_t motion_cost(uint32_t sad, int lambda_factor, MV mv_qpel, MV pred_qpel) {
  return (static_cast<uint64_t>(sad) << kLambdaBits) +
         static_cast<uint64_t>(lambda_factor) * (se_bits(mv_qpel.x - pred_qpel.x) + se_bits(mv_qpel.y - pred_qpel.y));
}

struct Candidate {
  MV mv;             // integer vector, in quarter-pel units (multiples of 4)
  uint32_t sad = 0;  // raw SAD of the partition at mv
};

// ---- Sub-pel distortions computed with the picture-level search -------------------------------------------
// Sub-pel refinement (me/motion_search.cpp) evaluates quarter-pel positions within +-3/4 pel of the integer
// vector the macroblock loop chose; their distortions (SAD or JM SATD of the partition against the 8.4.2.2.1
// interpolation) do not depend on the predictor, only the choice among them does. The picture-level search can
// therefore compute them ahead, for the candidates the loop is most likely to choose, the first `subpel_ranks` of
// each list: offset index (oy + 3) * 7 + (ox + 3) for quarter-pel offsets ox, oy in [-3, 3]. The loop uses a table
// only when the vector it chose is one of those candidates and the metric is the table's; otherwise it computes as
// before. Same values, same decisions, same stream.
constexpr int kSubpelOffsets = 49;
constexpr int subpel_offset_index(int ox, int oy) { return (oy + 3) * 7 + (ox + 3); }

// Where each offset sits in a table row. A row is read by one refinement: its 9 half-pel offsets, then the 8
// quarter-pel offsets around the half-pel winner. Slot order: slots 0-8 the half-pel offsets in the refinement's
// (JM's spiral) order, 9-16 the quarter-pel ring around the centre, then the rings around the half-pel winners
// (-2, 0) and (2, 0) (5 new offsets each), and slot 27: a row's near part, which with the row's base makes 32 bytes
// within one cache line and alone serves a refinement whose half-pel winner is one of those three (most
// refinements: the centre wins most often), so the macroblock loop prefetches that line per candidate (doc/GPU.md,
// "Sub-pel tables"). The other 21 offsets, slots 28-48, are the row's far part, kept apart and without padding:
// the tables' download weighs on the GPU's time, and the far parts are what few refinements read.
constexpr int kSubpelNearSlots = 28;
constexpr int kSubpelFarSlots = kSubpelOffsets - kSubpelNearSlots;
struct SubpelSlotMap {
  int8_t slot_of_offset[kSubpelOffsets];
  int8_t offset_of_slot[kSubpelOffsets];
};
constexpr SubpelSlotMap make_subpel_slot_map() {
  // Quarter-pel (ox, oy) in slot order.
  constexpr int8_t kOrder[kSubpelOffsets][2] = {
      {0, 0},   {0, -2},  {0, 2},   {-2, -2}, {2, -2},  {-2, 0},  {2, 0},   {-2, 2},  {2, 2},    // half pel
      {0, -1},  {0, 1},   {-1, -1}, {1, -1},  {-1, 0},  {1, 0},   {-1, 1},  {1, 1},              // ring of (0, 0)
      {-3, -1}, {-3, 0},  {-3, 1},  {-2, -1}, {-2, 1},                                           // ring of (-2, 0)
      {3, -1},  {3, 0},   {3, 1},   {2, -1},  {2, 1},                                            // ring of (2, 0)
      {-1, -3}, {0, -3},  {1, -3},  {-1, -2}, {1, -2},                                           // ring of (0, -2)
      {-1, 3},  {0, 3},   {1, 3},   {-1, 2},  {1, 2},                                            // ring of (0, 2)
      {-3, -3}, {-2, -3}, {-3, -2}, {3, -3},  {2, -3},  {3, -2},                                 // corner rings
      {-3, 3},  {-2, 3},  {-3, 2},  {3, 3},   {2, 3},   {3, 2}};
  SubpelSlotMap m{};
  for (int s = 0; s < kSubpelOffsets; ++s) {
    const int oi = subpel_offset_index(kOrder[s][0], kOrder[s][1]);
    m.slot_of_offset[oi] = static_cast<int8_t>(s);
    m.offset_of_slot[s] = static_cast<int8_t>(oi);
  }
  return m;
}
inline constexpr SubpelSlotMap kSubpelSlots = make_subpel_slot_map();
constexpr int subpel_slot(int ox, int oy) { return kSubpelSlots.slot_of_offset[subpel_offset_index(ox, oy)]; }

// One per (ref, mb, rank): 2176 bytes, 64-byte aligned. The tables' download weighs on the GPU's time per picture, so
// a row keeps its smallest value (its base) whole and each entry as its excess over the base in one byte: exact up
// to 254, while kSubpelEscape says only "at least base + 255". A refinement needs exact values only where they could
// win, and an entry that far above the row's minimum rarely can; where one could (me/motion_search.cpp), the
// refinement measures that position itself. Same values where it matters, same decisions, same stream.
constexpr uint8_t kSubpelEscape = 255;
struct SubpelRow {
  uint32_t base;                    // the row's smallest value: JM SATD up to 16 * 8160 for 16x16
  uint8_t near[kSubpelNearSlots];   // excesses, slots 0-27
};
static_assert(sizeof(SubpelRow) == 32, "a row's base and near part: half a cache line");
constexpr int kSubpelFarOffset = kNumPartitions * static_cast<int>(sizeof(SubpelRow));  // byte offset of `far`
struct alignas(64) SubpelTable {
  SubpelRow row[kNumPartitions];
  uint8_t far[kNumPartitions][kSubpelFarSlots];    // excesses, slots 28-48
  uint8_t tail[3];                                 // up to the alignment, written 0 (tables compare whole)
  uint32_t row_base(int part) const { return row[part].base; }
  uint8_t excess(int part, int s) const {
    return s < kSubpelNearSlots ? row[part].near[s] : far[part][s - kSubpelNearSlots];
  }
  bool exact(int part, int s) const { return excess(part, s) != kSubpelEscape; }
  // The entry's value where exact(), else the lower bound base + 255.
  uint32_t slot(int part, int s) const { return row_base(part) + excess(part, s); }
  uint32_t at(int part, int offset_index) const { return slot(part, kSubpelSlots.slot_of_offset[offset_index]); }
  bool exact_at(int part, int offset_index) const { return exact(part, kSubpelSlots.slot_of_offset[offset_index]); }
  // A partition's 49 values in slot order: the row's base is their minimum.
  void set_row(int part, const uint32_t (&by_slot)[kSubpelOffsets]) {
    uint32_t b = by_slot[0];
    for (uint32_t v : by_slot) b = v < b ? v : b;
    row[part].base = b;
    for (int s = 0; s < kSubpelOffsets; ++s) {
      const uint32_t e = by_slot[s] - b;
      (s < kSubpelNearSlots ? row[part].near[s] : far[part][s - kSubpelNearSlots]) =
          static_cast<uint8_t>(e < kSubpelEscape ? e : kSubpelEscape);
    }
  }
};
static_assert(sizeof(SubpelTable) == 2176 && sizeof(SubpelTable) % 64 == 0, "no padding beyond the tail");
static_assert(offsetof(SubpelTable, far) == kSubpelFarOffset, "the GPU kernel writes the table as words at these offsets");

// One per (ref, mb), beside its tables: each partition's smallest value over the tables of every rank and all 49
// offsets. Whichever candidate the exact predictor picks, a refinement read from these tables returns one of
// those values as its distortion, so the floor bounds it from below before any search (encoder/analyse_inter.cpp
// leaves out the partitionings that cannot win). 192 bytes, 64-byte aligned; the tail is UINT32_MAX.
struct alignas(64) SubpelFloors {
  uint32_t d[kNumPartitions];
  uint32_t tail[7];
};
static_assert(sizeof(SubpelFloors) == 192, "three cache lines, no padding beyond the tail");

// ---- Picture-level search (GPU and its twin) -------------------------------------------------------------
struct PictureSearchRequest {
  const Plane* cur = nullptr;              // current luma, coded size (multiple of 16), borders not needed
  std::vector<const Plane*> refs;          // reference lumas (borders extended), index = ref_idx
  int mb_width = 0, mb_height = 0;
  int search_range = 32;                   // +-full pel, 1..128
  int top_k = 1;                           // candidates kept per (ref, mb, partition)
  int lambda_factor = 0;                   // as in motion_cost()
  // Per (ref, mb) in ref-major order: window centre (full pel, quarter-pel units: multiples of 4) and the
  // predictor the penalty is taken against (quarter pel). The paper-faithful mode uses (0,0) for both.
  std::vector<MV> centre;
  std::vector<MV> penalty_pred;
  // Optional identity of the pictures' pixel content (e.g. Frame::id), so the GPU keeps pictures resident and a
  // picture uploaded once (as current or reference) is not uploaded again. -1 (or an empty ref_ids) means unknown:
  // the picture is uploaded on every call. Two pictures with different pixels must never share an id.
  int cur_id = -1;
  std::vector<int> ref_ids;                // empty, or one per ref
  // The producer may answer with a view of its own memory (PictureCandidates::view, valid until its next search())
  // instead of copying into PictureCandidates::data: the CUDA search then hands out its page-locked download
  // buffer, saving a 3 MB (640x480, K = 8) host copy per picture. The candidates are the same either way.
  bool zero_copy = false;
  // -1: no sub-pel tables; 0 (SAD) or 2 (JM SATD): also fill PictureCandidates' SubpelTables in this metric, for
  // the first subpel_ranks (1..top_k) candidates of every list.
  int subpel_metric = -1;
  int subpel_ranks = 1;
  // true: search() may return once the work is queued, before every band of macroblock rows has landed; the caller
  // then calls PictureIntegerSearch::wait_rows() before it reads a row's candidates or tables, so the macroblock
  // loop starts on the first rows while the GPU still computes the last (the GPU's time hides behind the CPU's).
  // Producers that answer in full (the twin, copied answers) ignore it. Same candidates either way.
  bool progressive = false;
  // Where search() takes up a search queued ahead (search_ahead) whose growing reference is not final yet: true
  // lets it return at once, the rest of that reference still to come through reference_rows() and preload() (the
  // picture before still being coded: doc/THREADS.md, "Pictures in flight"); wait_rows() then also waits for the
  // rows its bands read to be reported. false: the reference is final now, and search() sends what is left of it.
  // In a search_ahead() request: the search is likely to be taken up so (the producer may cut its bands for it).
  // Not part of the request's identity (same_search_request).
  bool reference_grows = false;
};

// Result: for each (ref, mb, partition) top_k candidates ordered by (cost at the penalty predictor, spiral index
// relative to the centre). Positions whose block would leave the padded reference are clamped as in frame.h, so
// every window position is a valid candidate.
struct PictureCandidates {
  int num_refs = 0, num_mbs = 0, top_k = 0;
  std::vector<Candidate> data;
  const Candidate* view = nullptr;  // set by a zero_copy answer: the candidates are there, `data` is unused
  // Sub-pel tables, one per (ref, mb, rank < subpel_ranks) in that order, when the request asked for them
  // (subpel_metric >= 0).
  int subpel_metric = -1;           // the tables' metric; -1: no tables in this answer
  int subpel_ranks = 0;
  std::vector<SubpelTable> subpel;
  const SubpelTable* subpel_view = nullptr;  // zero_copy answers: the tables are there, `subpel` is unused
  // The tables' floors, one per (ref, mb), where the answer has them (producers may leave them out: no bounds).
  std::vector<SubpelFloors> floors;
  const SubpelFloors* floors_view = nullptr;  // zero_copy answers, as subpel_view
  void resize(int refs, int mbs, int k) {
    num_refs = refs; num_mbs = mbs; top_k = k;
    view = nullptr;
    data.assign(static_cast<size_t>(refs) * mbs * kNumPartitions * k, Candidate{});
    subpel_metric = -1;
    subpel_ranks = 0;
    subpel_view = nullptr;
    subpel.clear();
    floors_view = nullptr;
    floors.clear();
  }
  const SubpelTable* subpel_at(int ref, int mb, int rank) const {
    if (subpel_metric < 0 || rank >= subpel_ranks) return nullptr;
    const SubpelTable* t = subpel_view ? subpel_view : subpel.data();
    return t + (static_cast<size_t>(ref) * num_mbs + mb) * subpel_ranks + rank;
  }
  const SubpelFloors* floors_at(int ref, int mb) const {
    const SubpelFloors* f = floors_view ? floors_view : floors.empty() ? nullptr : floors.data();
    if (subpel_metric < 0 || !f) return nullptr;
    return f + static_cast<size_t>(ref) * num_mbs + mb;
  }
  size_t subpel_floor_count() const { return static_cast<size_t>(num_refs) * num_mbs; }
  size_t subpel_tables() const { return static_cast<size_t>(num_refs) * num_mbs * subpel_ranks; }
  size_t size() const { return static_cast<size_t>(num_refs) * num_mbs * kNumPartitions * top_k; }
  const Candidate* begin() const { return view ? view : data.data(); }
  Candidate* at(int ref, int mb, int part) {  // producers write into `data`
    return data.data() + ((static_cast<size_t>(ref) * num_mbs + mb) * kNumPartitions + part) * top_k;
  }
  const Candidate* at(int ref, int mb, int part) const {
    return begin() + ((static_cast<size_t>(ref) * num_mbs + mb) * kNumPartitions + part) * top_k;
  }
};

class PictureIntegerSearch {
 public:
  virtual ~PictureIntegerSearch() = default;
  virtual void search(const PictureSearchRequest& req, PictureCandidates& out) = 0;
  virtual const char* name() const = 0;  // "cuda:<device name>" or "cpu-twin"
  // True when the search runs beside the CPU (a GPU): extra work asked of it, such as the sub-pel tables, is then
  // nearly free for the encode; on the CPU twin it would cost more than the macroblock loop saves.
  virtual bool runs_beside_cpu() const { return false; }
  // After a progressive search(): blocks until macroblock rows [0, rows) of every reference (candidates and
  // tables) are in the answer, and returns how many rows are ready now (>= rows; all of them when the answer is
  // complete). The answer stays valid until the next search(). The caller keeps the answer and the request's
  // pictures alive until every row was waited for. Producers that answer in full return at once.
  virtual int wait_rows(int rows) { (void)rows; return INT32_MAX; }
  // Sends a picture that later calls will name as a reference (by `id`, as in PictureSearchRequest::ref_ids) ahead
  // of them: the encoder hands over each reconstruction as soon as its picture is done, so the next P picture's
  // search finds its reference resident and sends only the current picture. The plane is read before this returns.
  // Producers that keep no pictures ignore it. Same candidates either way.
  virtual void preload(const Plane& plane, int id) { (void)plane; (void)id; }
  // Holds the host memory [data, data + bytes) page-locked for this producer while the returned handle lives (for
  // Plane::lock); null where the producer gains nothing from it (the twin) or could not lock it. A current
  // picture whose rows lie in such memory is sent to the device straight from it instead of being copied into the
  // producer's own page-locked buffer first. The memory must outlive the handle, and the handle may outlive the
  // producer. Same candidates either way.
  virtual std::shared_ptr<void> page_lock(const void* data, size_t bytes) {
    (void)data;
    (void)bytes;
    return nullptr;
  }
  // How many CPU threads search() may use where it runs on the CPU (the twin, or a GPU search's twin fallback): the
  // encoder passes its Threads. Same candidates at any count.
  virtual void set_threads(int threads) { (void)threads; }

  // The picture boundary, pipelined: the next picture's search queued while the picture before it, its newest
  // reference, is still being coded. `req` is that next request; its reference `growing` (an index into req.refs,
  // named by an id >= 0) is final only in the rows reference_rows() has reported, and the producer starts the work
  // whose reads lie in them. The next search() with an equal request (same_search_request) takes up this work, any
  // other discards it; so does a later search_ahead(). Returns false where the producer does not pipeline (then
  // nothing was queued). The current call's answer stays valid: the producer writes a row of the next answer only
  // once the caller can no longer read that row of the current one, which reference_rows() implies (see there).
  // The producer may read req.cur until the search is taken up or discarded: it must stay as it is till then.
  // Same candidates either way.
  virtual bool search_ahead(const PictureSearchRequest& req, int growing) {
    (void)req; (void)growing;
    return false;
  }
  // Rows [0, rows) of the picture `id` (a search_ahead's growing reference) are final (deblocked). Reporting rows
  // past the bottom of a band of macroblock rows tells the producer that the current call's answer is no longer read
  // in that band: the caller reports a row only once its macroblock analysis has passed every row the reported rows'
  // search windows cover. Calls are serialised by the caller; they may run beside any other call (the picture
  // that reports them is still being coded while the next one's search() takes its search up with
  // reference_grows). preload() of the growing reference reports every row.
  virtual void reference_rows(const Plane& plane, int id, int rows) { (void)plane; (void)id; (void)rows; }
};

// Whether two requests ask for the same search of the same pictures (the planes by address and id): what
// search() compares a search_ahead() with.
bool same_search_request(const PictureSearchRequest& a, const PictureSearchRequest& b);

// Makes the picture-level search the encoder uses with GPUIntegerME = 1 (the driver passes gpu/'s factory, tests
// may pass their own): tries `device`, and where it is not usable returns a fallback with *why set to a one-line
// reason (*why cleared when the device is used). Called once per encoder, on a background thread. dsp: the
// encoder's function table (common/dsp.h), which the search keeps using (the encoder outlives it).
struct DspFuncs;
using PictureSearchFactory =
    std::function<std::unique_ptr<PictureIntegerSearch>(int device, const DspFuncs& dsp, std::string* why)>;

// ---- What the macroblock loop sees -------------------------------------------------------------------------
class IntegerCandidateSource {
 public:
  virtual ~IntegerCandidateSource() = default;
  // Called once per macroblock and reference before any query; pred16x16 is the exact 16x16 MV predictor.
  virtual void begin_mb(int mb_x, int mb_y, int ref, MV pred16x16) = 0;
  // Best integer vector of a partition for the partition's exact predictor (minimum of motion_cost; ties by
  // spiral index around the window centre). The returned SAD is that of the returned vector.
  virtual Candidate best(int part, MV exact_pred) = 0;
  // Precomputed sub-pel distortions of partition `part` around integer vector `mv` in `metric` (see SubpelTable),
  // or nullptr: the caller computes them. Valid until the next begin_mb().
  virtual const SubpelTable* subpel(int part, MV mv, int metric) = 0;
  // Floors (SubpelFloors) of the macroblock begun, for reference `ref`, where every candidate best() may return has
  // a table in `metric`: then each partition's refinement from the tables returns a distortion of at least its
  // floor. nullptr: no bound. Valid until the next begin_mb().
  virtual const SubpelFloors* subpel_floors(int ref, int metric) {
    (void)ref; (void)metric;
    return nullptr;
  }
};

}  // namespace gme
