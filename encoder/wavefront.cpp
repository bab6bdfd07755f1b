#include "encoder/wavefront.h"

#include <algorithm>
#include <mutex>

#include "common/deblock.h"
#include "common/picture_trace.h"
#include "common/stage_clock.h"
#include "encoder/cavlc.h"
#include "encoder/headers.h"
#include "encoder/mb_worker.h"

namespace gme {
namespace {

inline double seconds_since(double t) { return stage_clock_seconds() - t; }

// Thrown out of a worker's waits when another worker failed (the board was aborted): that worker's exception is
// the one the pool reports; this one only unwinds.
struct Aborted {};

inline void wait_or_unwind(ProgressBoard& board, int row, int value) {
  if (!board.wait_at_least(row, value)) throw Aborted{};
}

// JM's slice_too_big (macroblock.c, SliceMode 2, CAVLC), as encoder/slice.cpp counts it for the in-order loop.
int64_t slice_bytes_jm(const BitWriter& bw, int skip_run) {
  const int64_t bits = bw.bits();
  const int bits_to_go = 8 - static_cast<int>(bits % 8);
  const int rlc_bits = skip_run > 0 ? ue_bits(static_cast<uint32_t>(skip_run)) : 0;
  return bits / 8 + (bits_to_go < 8 ? 1 : 0) + (bits_to_go < rlc_bits ? 1 : 0);
}

// Writes a picture's slices in coding order from the macroblocks' bit writers: slice headers, the mb_skip_run codes
// between the macroblocks' syntax, and for SliceMode 2 JM's byte limit (encoder/slice.cpp has the in-order twin).
// It also adds up the picture's bits by syntax element (SliceLoopStats::bit_use) as the in-order loop counts them:
// one writer, macroblocks in coding order, so the sums do not depend on which worker decided what.
class SliceWriter {
 public:
  SliceWriter(const EncoderState& s, const WavefrontRows& rows, const PictureParams& pp, std::vector<uint8_t>& out,
              SliceLoopStats& st)
      : s_(s), rows_(rows), pp_(pp), out_(out), st_(st), p_slice_(pp.type == SliceType::P) {}

  void open(int first_mb) {
    bw_.clear();
    write_slice_header(bw_, s_.seq, slice_header(s_, pp_, first_mb));
    st_.bit_use.header += bw_.bits();
    run_ = 0;
    count_ = 0;
    refused_ = false;
  }

  // Appends decided macroblock mb. With a byte limit (SliceMode 2): false, and nothing appended, when the slice
  // would pass it and mb is not its first macroblock (mb then starts the next slice, decided again there).
  bool add(int mb, int byte_limit) {
    const DecidedMb& b = rows_.mbs[static_cast<size_t>(mb)];
    const BitWriter::Mark mark = bw_.mark();
    const int run_before = run_;
    MbBits use = b.use;
    if (b.skip) {
      ++run_;
    } else {
      if (p_slice_) {
        const int64_t before = bw_.bits();
        bw_.ue(static_cast<uint32_t>(run_));
        run_ = 0;
        use.mode += static_cast<int>(bw_.bits() - before);  // JM counts the pending mb_skip_run with this macroblock
      }
      const BitWriter& from = rows_.bits[static_cast<size_t>(mb)];
      if (b.pad_at < 0) {
        bw_.append(from, 0, from.bits());
      } else {  // I_PCM: the samples start byte aligned in the slice too
        bw_.append(from, 0, b.pad_at);
        const int64_t before = bw_.bits();
        bw_.align_zero();
        // coeff_y holds the alignment bits: those of the slice, not those of the macroblock's own writer.
        use.coeff_y += static_cast<int>(bw_.bits() - before) - b.pad;
        const int64_t rest = b.pad_at + b.pad;
        bw_.append(from, rest, from.bits() - rest);
      }
    }
    if (byte_limit > 0 && count_ > 0 && slice_bytes_jm(bw_, run_) > byte_limit) {
      bw_.rewind(mark);
      run_ = run_before;
      refused_ = true;
      return false;
    }
    ++count_;
    ++st_.mb_counts[static_cast<int>(b.type)];
    add_bits(st_.bit_use, use, b.type);
    return true;
  }

  void close() {
    if (run_ > 0) {
      const int64_t before = bw_.bits();
      bw_.ue(static_cast<uint32_t>(run_));
      // JM (end_macroblock, SliceMode 2) leaves the run before a macroblock it codes again out of its statistics.
      if (!refused_) st_.bit_use.mode += bw_.bits() - before;
    }
    bw_.rbsp_trailing_bits();
    // As JM: the picture's first slice with the 4-byte start code, the others with the 3-byte one.
    const size_t bytes = write_nal_annexb(out_, pp_.idr ? 3 : 2, pp_.idr ? kNalIdr : kNalSlice, bw_.bytes(),
                                          st_.num_slices == 0 ? 4 : 3);
    st_.bits += static_cast<int64_t>(bytes) * 8;
    ++st_.num_slices;
  }

 private:
  const EncoderState& s_;
  const WavefrontRows& rows_;
  const PictureParams& pp_;
  std::vector<uint8_t>& out_;
  SliceLoopStats& st_;
  const bool p_slice_;
  BitWriter bw_;
  int run_ = 0, count_ = 0;
  bool refused_ = false;  // SliceMode 2: the slice ends because the next macroblock did not fit
};

// The workers of one picture. With SliceMode 0 or 1 every macroblock's slice is known in advance and one pass
// decides them all. With SliceMode 2 the picture is coded in passes ("epochs"): each decides the macroblocks from
// the current slice's next one on as if the slice went on to the end of the picture, while the workers put the
// decided macroblocks into the slice in order (commit(), whoever gets the lock); when one would pass the byte
// limit the epoch ends, everything decided past it is dropped, and the next epoch starts there with the next
// slice - as the in-order loop decides that macroblock again as the first of the next slice.
class Wavefront final : public RowJob {
 public:
  Wavefront(const EncoderState& s, PictureSlot& slot, const PictureParams& pp, const MbContext& base,
            const MacroblockDeblocker* dbk, SliceWriter* commits, FinalRows* final_rows, RowGate gate)
      : base_(base), slot_(slot), rows_(slot.rows), dbk_(dbk), commits_(commits), final_rows_(final_rows),
        gate_(gate), mb_w_(s.mb_w), mb_h_(s.mb_h), total_(s.mb_w * s.mb_h) {
    const EncoderParams& p = s.p;
    slice_argument_ = p.slice_mode == 1 ? p.slice_argument : 0;
    byte_limit_ = p.slice_mode == 2 ? p.slice_argument : 0;
    // Only RDOptimization 1's P_Skip decision reads the run (encoder/analyse_inter.cpp skip_wins).
    track_run_ = pp.type == SliceType::P && p.rd_optimization != 0 && p.p_slice_skip;
    // A row parks only at the waits that rows handed out before it satisfy while they run (the row above's
    // decisions, the picture before's final rows at the row's start); the run's wait (for the whole row above),
    // the per-macroblock gate, SliceMode 2's passes and a GPU search's answer (wait_rows) block instead
    // (doc/THREADS.md).
    can_park_ = !track_run_ && gate_.window == 0 && byte_limit_ == 0;
  }

  // Ready for a pass deciding macroblocks [first_mb, total) in slice slice_id (SliceMode 2; 0, 0 otherwise): the
  // rows above are done, and so is the start of first_mb's row. Returns the pass's rows (its items).
  int begin_epoch(int first_mb, int slice_id) {
    epoch_first_ = first_mb;
    epoch_slice_ = slice_id;
    const int y0 = first_mb / mb_w_;
    rows_.decided.reset(mb_h_);
    for (int y = 0; y < y0; ++y) rows_.decided.raise(y, mb_w_);
    rows_.decided.raise(y0, first_mb % mb_w_);
    full_ = false;
    progress_.assign(static_cast<size_t>(mb_h_), RowProgress());
    return mb_h_ - y0;
  }

  // Item i of the pass: its i-th row.
  void run_item(int item, int worker) override { run_or_park(item, worker, nullptr); }

  // The row, from where it parked: a row that would wait for the row above (or, at its start, for the picture
  // before) parks, and its worker takes other rows meanwhile - of this picture or the next.
  bool run_or_park(int item, int worker, ParkRequest* park) override {
    const int y = epoch_first_ / mb_w_ + item;
    try {
      return code_row(y, *slot_.workers[static_cast<size_t>(worker)], can_park_ ? park : nullptr);
    } catch (const Aborted&) {
      return true;  // another row failed (its exception is the job's), or the slice is full (SliceMode 2)
    }
  }

  void abort() override {
    rows_.decided.abort();
    rows_.deblocked.abort();
    if (final_rows_) final_rows_->abort();
  }

  // Puts decided macroblocks into the slices in coding order, from next_commit_ on, until one is not decided yet.
  // Without wait_for_lock it returns at once when another worker is at it: workers come here after each row
  // (SliceMode 0 and 1) or each macroblock (SliceMode 2), so what is decided just after the committer looked is
  // taken by a later call, and the end of the pass (wait_for_lock) takes the rest. Writing the slices thus overlaps
  // the rows still being decided instead of following the last one. SliceMode 2: a macroblock that would pass the
  // byte limit fills the slice, which ends the epoch (the workers stop at their next macroblock or wait).
  void commit(bool wait_for_lock) {
    std::unique_lock<std::mutex> lock(commit_m_, std::defer_lock);
    if (wait_for_lock) lock.lock();
    else if (!lock.try_lock()) return;
    while (!full_ && next_commit_ < total_) {
      const int y = next_commit_ / mb_w_, x = next_commit_ % mb_w_;
      if (rows_.decided.get(y) <= x) return;
      if (byte_limit_ == 0 && next_commit_ > 0 && slice_starts(next_commit_)) {  // SliceMode 1's next slice
        commits_->close();
        commits_->open(next_commit_);
      }
      if (!commits_->add(next_commit_, byte_limit_)) {
        full_ = true;
        rows_.decided.abort();
        return;
      }
      ++next_commit_;
    }
  }
  int next_commit() const { return next_commit_; }
  bool slice_full() const { return full_; }

 private:
  int slice_of(int mb) const {
    if (byte_limit_ > 0) return epoch_slice_;
    return slice_argument_ > 0 ? mb / slice_argument_ : 0;
  }
  bool slice_starts(int mb) const {
    if (byte_limit_ > 0) return mb == epoch_first_;
    return slice_argument_ > 0 ? mb % slice_argument_ == 0 : mb == 0;
  }

  // The run before a macroblock of row y that continues the run the previous row ended with: known once that row
  // is done (its run_out is written before its last macroblock is published).
  class RowRun final : public SkipRunWait {
   public:
    RowRun(Wavefront& wf, int y) : wf_(wf), y_(y) {}
    void reset(int since_row_start) {
      since_ = since_row_start;
      resolved_ = false;
    }
    int wait() override {
      if (!resolved_) {
        wait_or_unwind(wf_.rows_.decided, y_ - 1, wf_.mb_w_);
        value_ = wf_.rows_.run_out[static_cast<size_t>(y_ - 1)] + since_;
        resolved_ = true;
      }
      return value_;
    }
    bool resolved() const { return resolved_; }

   private:
    Wavefront& wf_;
    int y_;
    int since_ = 0, value_ = 0;
    bool resolved_ = false;
  };

  void deblock(int x, int y, MbWorker& w) {
    if (!dbk_) return;  // SliceMode 2: after the last epoch, once every slice is known
    if (y > 0) wait_or_unwind(rows_.deblocked, y - 1, std::min(x + 2, mb_w_));
    const double t = stage_clock_seconds();
    dbk_->filter(x, y);
    w.times.deblocking += seconds_since(t);
    rows_.deblocked.raise(y, x + 1);
    if (x == mb_w_ - 1 && final_rows_) {
      // The borders and the next picture's planes (part of its sub-pel stage, as when built at its start).
      const double t2 = stage_clock_seconds();
      const bool ok = final_rows_->row_deblocked(y, &w.halfpel);
      w.times.subpel_me += seconds_since(t2);
      if (!ok) throw Aborted{};
    }
  }

  // Blocks until the picture before (RowGate) is final down to `luma_rows`; a wait that blocks is traced with the
  // number of the macroblock that waits.
  void wait_for_reference(int luma_rows, int mb) {
    const int row = gate_.rows->row_for_luma(luma_rows);
    const bool traced = picture_trace_on() && !gate_.rows->is_final(row);
    if (traced) picture_trace("gate_wait", mb);
    if (!gate_.rows->wait_final(row)) throw std::runtime_error("the picture before this one failed");
    if (traced) picture_trace("gate_landed", mb);
  }

  // Codes row y from where it parked last (its start the first time). `park` (nullptr: never park): where a row
  // that would wait parks; returns false then, true when the row is done.
  bool code_row(int y, MbWorker& w, ParkRequest* park) {
    RowProgress& rp = progress_[static_cast<size_t>(y)];
    MbInfo* row_info = slot_.mbs.data() + static_cast<size_t>(y) * mb_w_;
    if (!rp.started) {
      // The picture before, still being coded, is final down to every row this row's vectors can reach.
      if (gate_.rows && gate_.window == 0) {
        const int luma_rows = gate_luma_rows(y, gate_.reach);
        const int final_row = gate_.rows->row_for_luma(luma_rows);
        if (park && !gate_.rows->is_final(final_row)) {
          *park = gate_.rows->final_park(final_row);
          if (picture_trace_on()) picture_trace("row_park", y * mb_w_);
          return false;
        }
        wait_for_reference(luma_rows, y * mb_w_);
      }
      rp.started = true;
      rp.x = y == epoch_first_ / mb_w_ ? epoch_first_ % mb_w_ : 0;
      std::fill(row_info + rp.x, row_info + mb_w_, MbInfo());
      // The pending mb_skip_run: known from the row's start in the first row and where a slice starts there,
      // otherwise it continues the previous row's until a coded macroblock (or a slice start) ends it.
      rp.run = 0;
      rp.known = y == 0 || slice_starts(y * mb_w_);
    }
    MbContext c = base_;
    int run = rp.run;
    bool known = rp.known;
    RowRun row_run(*this, y);
    const int ipcm_type_bits = ue_bits(static_cast<uint32_t>(kMbTypeIPCM + (c.p_slice ? 5 : 0)));
    for (int x = rp.x; x < mb_w_; ++x) {
      if (y > 0) {
        const int need = std::min(x + 2, mb_w_);
        if (park && !rows_.decided.spin_at_least(y - 1, need)) {
          rp.x = x;
          rp.run = run;
          rp.known = known;
          *park = ParkRequest{&rows_.decided, y - 1, need};
          if (picture_trace_on()) picture_trace("row_park", y * mb_w_ + x);
          return false;
        }
        wait_or_unwind(rows_.decided, y - 1, need);
      }
      if (rows_.decided.aborted()) throw Aborted{};  // the slice is full: this epoch's decisions are void
      const int mb = y * mb_w_ + x;
      if (slice_starts(mb)) {
        run = 0;
        known = true;
      }
      c.mb_x = x;
      c.mb_y = y;
      c.slice_id = slice_of(mb);
      c.skip_run = run;
      c.skip_run_wait = nullptr;
      if (track_run_ && !known) {
        row_run.reset(run);
        c.skip_run_wait = &row_run;
      }
      // Windows centred on the predictors: the picture before must be final as far as this macroblock's reach.
      if (gate_.rows && gate_.window > 0)
        wait_for_reference(predictor_gate_luma_rows(slot_.mbs.data(), mb_w_, x, y, gate_.window), mb);
      MbCoding coding;
      w.decide(c, coding);
      if (c.skip_run_wait && row_run.resolved()) {
        run = row_run.wait();
        known = true;
      }

      const double t1 = stage_clock_seconds();
      MbInfo& info = row_info[x];
      DecidedMb& b = rows_.mbs[static_cast<size_t>(mb)];
      BitWriter& bw = rows_.bits[static_cast<size_t>(mb)];
      bw.clear();
      b = DecidedMb();
      b.type = coding.type;
      if (coding.type == MbType::PSkip) {
        fill_mbinfo(c, coding, info);
        b.skip = true;
        ++run;
      } else {
        write_macroblock(bw, c, coding, info, &b.use);
        run = 0;
        known = true;
        if (coding.type == MbType::IPCM) {
          b.pad_at = static_cast<int16_t>(ipcm_type_bits);
          b.pad = static_cast<int8_t>((8 - ipcm_type_bits % 8) % 8);
        }
      }
      w.times.coding += seconds_since(t1);
      if (x == mb_w_ - 1) {
        if (track_run_ && !known) {  // the whole row continued the previous row's run
          row_run.reset(run);
          run = row_run.wait();
        }
        rows_.run_out[static_cast<size_t>(y)] = run;
      }
      rows_.decided.raise(y, x + 1);
      if (byte_limit_ > 0) {  // whoever finishes a macroblock moves the slice on (or finds another doing it)
        const double t2 = stage_clock_seconds();
        commit(false);
        w.times.coding += seconds_since(t2);
      }
      // Row y no longer reads (x - 1, y - 1)'s unfiltered samples (its top-right reader was (x - 2, y)).
      if (y > 0 && x >= 1) deblock(x - 1, y - 1, w);
    }
    if (y > 0) deblock(mb_w_ - 1, y - 1, w);
    if (y == mb_h_ - 1)  // nothing below reads the last row: it follows at once
      for (int x = 0; x < mb_w_; ++x) deblock(x, y, w);
    if (byte_limit_ == 0) {  // SliceMode 2 commits after every macroblock (above)
      const double t = stage_clock_seconds();
      commit(false);
      w.times.coding += seconds_since(t);
    }
    return true;
  }

  // Where a row stands between its parks (RowJob::run_or_park).
  struct RowProgress {
    bool started = false;
    int x = 0;           // the next macroblock to decide
    int run = 0;         // the mb_skip_run pending before it
    bool known = false;  // whether `run` is known (RDOptimization 1 rows, which never park, may not know it)
  };

  const MbContext& base_;
  PictureSlot& slot_;
  WavefrontRows& rows_;
  const MacroblockDeblocker* dbk_;  // nullptr: no deblocking in the workers (SliceMode 2)
  SliceWriter* commits_;            // the slices being written as macroblocks are decided
  FinalRows* final_rows_;           // nullptr: the picture is extended after its rows
  const RowGate gate_;
  const int mb_w_, mb_h_, total_;
  int slice_argument_ = 0;  // SliceMode 1: macroblocks per slice; 0: one slice
  int byte_limit_ = 0;      // SliceMode 2: bytes per slice; 0: none
  bool track_run_ = false;
  bool can_park_ = false;
  std::vector<RowProgress> progress_;  // per row of the pass
  int epoch_first_ = 0, epoch_slice_ = 0;
  std::mutex commit_m_;
  int next_commit_ = 0;     // under commit_m_
  bool full_ = false;       // under commit_m_ (and read after the epoch)
};

// Deblocks a picture whose macroblocks are all coded, a row per item (a row a little behind the one above:
// MacroblockDeblocker's order).
class DeblockRows final : public RowJob {
 public:
  DeblockRows(const MacroblockDeblocker& dbk, WavefrontRows& rows, int mb_w, int mb_h, int threads)
      : dbk_(dbk), rows_(rows), mb_w_(mb_w), seconds_(static_cast<size_t>(threads), 0.0) {
    rows_.deblocked.reset(mb_h);
  }
  void run_item(int y, int worker) override {
    const double t = stage_clock_seconds();
    try {
      for (int x = 0; x < mb_w_; ++x) {
        if (y > 0) wait_or_unwind(rows_.deblocked, y - 1, std::min(x + 2, mb_w_));
        dbk_.filter(x, y);
        rows_.deblocked.raise(y, x + 1);
      }
    } catch (const Aborted&) {
    }
    seconds_[static_cast<size_t>(worker)] += seconds_since(t);
  }
  void abort() override { rows_.deblocked.abort(); }
  double seconds() const {
    double sum = 0;
    for (double t : seconds_) sum += t;
    return sum;
  }

 private:
  const MacroblockDeblocker& dbk_;
  WavefrontRows& rows_;
  const int mb_w_;
  std::vector<double> seconds_;  // per thread
};

}  // namespace

int gate_luma_rows(int mb_row, int reach) {
  // Beyond a vector's reach a row reads +-3/4 pel of sub-pel refinement and the 6-tap filter's 3 rows below.
  constexpr int kMargin = 8;
  return reach < 0 ? INT32_MAX / 2 : 16 * (mb_row + 1) + reach + kMargin;
}

int predictor_gate_luma_rows(const MbInfo* mbs, int mb_w, int x, int y, int range) {
  int down = 0;  // quarter pel: the farthest any neighbour's vector points down
  auto neighbour = [&](int nx, int ny) {
    if (nx < 0 || nx >= mb_w || ny < 0) return;
    for (const MV& v : mbs[static_cast<size_t>(ny) * mb_w + nx].mv) down = std::max(down, static_cast<int>(v.y));
  };
  neighbour(x - 1, y);
  neighbour(x - 1, y - 1);
  neighbour(x, y - 1);
  neighbour(x + 1, y - 1);
  // The window centre is the predictor rounded to whole pels (halves up), so at most ceil(down / 4) pels down.
  return gate_luma_rows(y, (down + 3) / 4 + range);
}

// A picture's wavefront between start_wavefront and finish_wavefront: what its rows read and write.
struct WavefrontPicture {
  EncoderState& s;
  PictureSlot& slot;
  const PictureParams pp;
  std::vector<SliceDeblockParams> dbp;
  MacroblockDeblocker dbk;
  MbContext base;
  SliceLoopStats st;
  std::vector<uint8_t> bytes;  // the slices' NAL units
  SliceWriter slices;
  Wavefront wf;
  bool byte_slices;

  WavefrontPicture(EncoderState& s_, PictureSlot& slot_, const PictureParams& pp_, const Frame& src, Frame& rec,
                   const std::vector<const Frame*>& refs, FinalRows* final_rows, RowGate gate)
      : s(s_), slot(slot_), pp(pp_), dbp(deblock_params(s_, pp_)),
        dbk(s_.dsp.deblock, rec, slot_.mbs.data(), s_.mb_w, dbp, s_.p.chroma_qp_offset),
        base(picture_context(s_, slot_, pp_, src, rec, refs, false)), slices(s_, slot_.rows, pp, bytes, st),
        wf(s_, slot_, pp, base, s_.p.slice_mode == 2 ? nullptr : &dbk, &slices,
           s_.p.slice_mode == 2 ? nullptr : final_rows, gate),
        byte_slices(s_.p.slice_mode == 2) {}

  static std::vector<SliceDeblockParams> deblock_params(const EncoderState& s, const PictureParams& pp) {
    const int total = s.mb_w * s.mb_h;
    const int per_slice = s.p.slice_mode == 1 ? s.p.slice_argument : total;
    return std::vector<SliceDeblockParams>(static_cast<size_t>((total + per_slice - 1) / per_slice), pp.deblock);
  }
};

WavefrontPicturePtr start_wavefront(EncoderState& s, PictureSlot& slot, const PictureParams& pp,
                                                  const Frame& src, Frame& rec, const std::vector<const Frame*>& refs,
                                                  CandidateSourceFactory* sources, FinalRows* final_rows,
                                                  RowGate gate) {
  const int total = s.mb_w * s.mb_h;
  WavefrontRows& rows = slot.rows;
  rows.bits.resize(static_cast<size_t>(total));
  rows.mbs.resize(static_cast<size_t>(total));
  rows.run_out.assign(static_cast<size_t>(s.mb_h), 0);
  rows.deblocked.reset(s.mb_h);
  WavefrontPicturePtr w(new WavefrontPicture(s, slot, pp, src, rec, refs, final_rows, gate));
  for (auto& worker : slot.workers) worker->begin_picture(w->base, sources);
  w->slices.open(0);
  if (!w->byte_slices) {
    s.rows->submit(w->wf, w->wf.begin_epoch(0, 0));
    return w;
  }
  // SliceMode 2: pass after pass, each waiting for the one before (no other picture's rows in between).
  for (int first = 0, slice_id = 0; first < total;) {
    s.rows->submit(w->wf, w->wf.begin_epoch(first, slice_id));
    s.rows->wait(w->wf);
    w->wf.commit(true);  // what the workers left decided but not committed
    if (!w->wf.slice_full()) break;  // every macroblock is in
    w->slices.close();
    first = w->wf.next_commit();
    w->slices.open(first);
    ++slice_id;
  }
  return w;
}

SliceLoopStats finish_wavefront(WavefrontPicture& w, std::vector<uint8_t>& out) {
  EncoderState& s = w.s;
  if (!w.byte_slices) {
    s.rows->wait(w.wf);
    const double t0 = stage_clock_seconds();
    w.wf.commit(true);  // what the workers left decided but not committed
    w.st.times.coding += seconds_since(t0);
  }
  w.slices.close();
  SliceLoopStats& st = w.st;
  for (auto& worker : w.slot.workers) {
    st.times += worker->times;
    st.wait_seconds += worker->wait_seconds;
    worker->end_picture();
  }
  if (w.byte_slices) {
    const std::vector<SliceDeblockParams> params(static_cast<size_t>(st.num_slices), w.pp.deblock);
    deblock_picture_parallel(s, w.slot, *w.base.rec, params, &st.times);
  }
  out.insert(out.end(), w.bytes.begin(), w.bytes.end());
  return st;
}

void WavefrontPictureDeleter::operator()(WavefrontPicture* w) const {
  try {
    w->s.rows->wait(w->wf);  // returns at once once waited for; otherwise no row may still be running
  } catch (...) {
  }
  for (auto& worker : w->slot.workers) worker->end_picture();
  delete w;
}

void deblock_picture_parallel(EncoderState& s, PictureSlot& slot, Frame& rec,
                              const std::vector<SliceDeblockParams>& params, StageTimes* times) {
  const MacroblockDeblocker dbk(s.dsp.deblock, rec, slot.mbs.data(), s.mb_w, params, s.p.chroma_qp_offset);
  DeblockRows job(dbk, slot.rows, s.mb_w, s.mb_h, s.rows->threads());
  s.rows->submit(job, s.mb_h);
  s.rows->wait(job);
  times->deblocking += job.seconds();
}

}  // namespace gme
