#include "encoder/wavefront.h"

#include <algorithm>

#include "common/deblock.h"
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

// The workers of one picture.
class Wavefront {
 public:
  Wavefront(EncoderState& s, const PictureParams& pp, const MbContext& base, const MacroblockDeblocker& dbk)
      : s_(s), pp_(pp), base_(base), rows_(s.wavefront), dbk_(dbk), mb_w_(s.mb_w), mb_h_(s.mb_h) {
    const EncoderParams& p = s.p;
    slice_argument_ = p.slice_mode == 1 ? p.slice_argument : 0;
    // Only RDOptimization 1's P_Skip decision reads the run (encoder/analyse_inter.cpp skip_wins).
    track_run_ = pp.type == SliceType::P && p.rd_optimization != 0 && p.p_slice_skip;
  }

  void worker(int index) {
    MbWorker& w = *s_.workers[static_cast<size_t>(index)];
    try {
      for (;;) {
        const int y = rows_.next_row.fetch_add(1);
        if (y >= mb_h_) return;
        code_row(y, w);
      }
    } catch (const Aborted&) {
      return;
    } catch (...) {
      rows_.decided.abort();
      rows_.deblocked.abort();
      throw;
    }
  }

  int slice_of(int mb) const { return slice_argument_ > 0 ? mb / slice_argument_ : 0; }
  bool slice_starts(int mb) const { return slice_argument_ > 0 ? mb % slice_argument_ == 0 : mb == 0; }

 private:
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
    if (y > 0) wait_or_unwind(rows_.deblocked, y - 1, std::min(x + 2, mb_w_));
    const double t = stage_clock_seconds();
    dbk_.filter(x, y);
    w.times.deblocking += seconds_since(t);
    rows_.deblocked.raise(y, x + 1);
  }

  void code_row(int y, MbWorker& w) {
    MbContext c = base_;
    BitWriter& bw = rows_.bits[static_cast<size_t>(y)];
    std::vector<MbBits>& places = rows_.mbs[static_cast<size_t>(y)];
    bw.clear();
    MbInfo* row_info = s_.mbs.data() + static_cast<size_t>(y) * mb_w_;
    std::fill(row_info, row_info + mb_w_, MbInfo());
    // The pending mb_skip_run: known from the row's start in the first row and where a slice starts there,
    // otherwise it continues the previous row's until a coded macroblock (or a slice start) ends it.
    int run = 0;
    bool known = y == 0 || slice_starts(y * mb_w_);
    RowRun row_run(*this, y);
    const int ipcm_type_bits = ue_bits(static_cast<uint32_t>(kMbTypeIPCM + (c.p_slice ? 5 : 0)));
    for (int x = 0; x < mb_w_; ++x) {
      if (y > 0) wait_or_unwind(rows_.decided, y - 1, std::min(x + 2, mb_w_));
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
      MbCoding coding;
      w.decide(c, coding);
      if (c.skip_run_wait && row_run.resolved()) {
        run = row_run.wait();
        known = true;
      }

      const double t1 = stage_clock_seconds();
      MbInfo& info = row_info[x];
      MbBits& b = places[static_cast<size_t>(x)];
      b = MbBits();
      b.start = static_cast<uint32_t>(bw.bits());
      if (coding.type == MbType::PSkip) {
        fill_mbinfo(c, coding, info);
        b.skip = true;
        ++run;
      } else {
        write_macroblock(bw, c, coding, info);
        run = 0;
        known = true;
        if (coding.type == MbType::IPCM) {
          b.pad_at = static_cast<int16_t>(ipcm_type_bits);
          b.pad = static_cast<int8_t>((8 - (b.start + ipcm_type_bits) % 8) % 8);
        }
      }
      b.size = static_cast<uint32_t>(bw.bits()) - b.start;
      w.times.coding += seconds_since(t1);
      ++w.mb_counts[static_cast<int>(coding.type)];
      if (x == mb_w_ - 1) {
        if (track_run_ && !known) {  // the whole row continued the previous row's run
          row_run.reset(run);
          run = row_run.wait();
        }
        rows_.run_out[static_cast<size_t>(y)] = run;
      }
      rows_.decided.raise(y, x + 1);
      // Row y no longer reads (x - 1, y - 1)'s unfiltered samples (its top-right reader was (x - 2, y)).
      if (y > 0 && x >= 1) deblock(x - 1, y - 1, w);
    }
    if (y > 0) deblock(mb_w_ - 1, y - 1, w);
    if (y == mb_h_ - 1)  // nothing below reads the last row: it follows at once
      for (int x = 0; x < mb_w_; ++x) deblock(x, y, w);
  }

  EncoderState& s_;
  const PictureParams& pp_;
  const MbContext& base_;
  WavefrontRows& rows_;
  const MacroblockDeblocker& dbk_;
  const int mb_w_, mb_h_;
  int slice_argument_ = 0;  // SliceMode 1: macroblocks per slice; 0: one slice
  bool track_run_ = false;
};

// Runs job(worker) on n workers: on the pool when there is one and n > 1, else on this thread.
void run_workers(EncoderState& s, int n, const std::function<void(int)>& job) {
  if (n > 1 && s.pool) s.pool->run(n, job);
  else job(0);
}

}  // namespace

SliceLoopStats code_slices_wavefront(EncoderState& s, const PictureParams& pp, const Frame& src, Frame& rec,
                                     const std::vector<const Frame*>& refs, CandidateSourceFactory* sources,
                                     std::vector<uint8_t>& out) {
  const EncoderParams& p = s.p;
  const int total = s.mb_w * s.mb_h;
  const int per_slice = p.slice_mode == 1 ? p.slice_argument : total;
  const int num_slices = (total + per_slice - 1) / per_slice;
  const std::vector<SliceDeblockParams> dbp(static_cast<size_t>(num_slices), pp.deblock);
  const MacroblockDeblocker dbk(rec, s.mbs.data(), s.mb_w, dbp, p.chroma_qp_offset);
  const MbContext base = picture_context(s, pp, src, rec, refs);

  WavefrontRows& rows = s.wavefront;
  rows.bits.resize(static_cast<size_t>(s.mb_h));
  rows.mbs.resize(static_cast<size_t>(s.mb_h));
  for (std::vector<MbBits>& r : rows.mbs) r.resize(static_cast<size_t>(s.mb_w));
  rows.run_out.assign(static_cast<size_t>(s.mb_h), 0);
  rows.decided.reset(s.mb_h);
  rows.deblocked.reset(s.mb_h);
  rows.next_row.store(0);

  const int n = std::max(1, std::min(s.threads, s.mb_h));
  for (int i = 0; i < n; ++i) s.workers[static_cast<size_t>(i)]->begin_picture(base, sources);
  Wavefront wf(s, pp, base, dbk);
  run_workers(s, n, [&wf](int w) { wf.worker(w); });

  SliceLoopStats st;
  for (int i = 0; i < n; ++i) {
    MbWorker& w = *s.workers[static_cast<size_t>(i)];
    st.times += w.times;
    st.wait_seconds += w.wait_seconds;
    for (int k = 0; k < 9; ++k) st.mb_counts[k] += w.mb_counts[k];
    w.end_picture();
  }

  // The slices, in order: each macroblock's syntax from its row's writer, mb_skip_run codes between them.
  const double t0 = stage_clock_seconds();
  const bool p_slice = pp.type == SliceType::P;
  BitWriter bw;
  for (int first = 0; first < total; first += per_slice) {
    const int end = std::min(total, first + per_slice);
    bw.clear();
    write_slice_header(bw, s.seq, slice_header(s, pp, first));
    int run = 0;
    for (int mb = first; mb < end; ++mb) {
      const int y = mb / s.mb_w;
      const MbBits& b = rows.mbs[static_cast<size_t>(y)][static_cast<size_t>(mb % s.mb_w)];
      if (b.skip) {
        ++run;
        continue;
      }
      if (p_slice) {
        bw.ue(static_cast<uint32_t>(run));
        run = 0;
      }
      const BitWriter& from = rows.bits[static_cast<size_t>(y)];
      if (b.pad_at < 0) {
        bw.append(from, b.start, b.size);
      } else {  // I_PCM: the samples start byte aligned in the slice, wherever they were in the row
        bw.append(from, b.start, b.pad_at);
        bw.align_zero();
        const int64_t rest = b.start + b.pad_at + b.pad;
        bw.append(from, rest, b.start + b.size - rest);
      }
    }
    if (run > 0) bw.ue(static_cast<uint32_t>(run));
    bw.rbsp_trailing_bits();
    const size_t bytes = write_nal_annexb(out, pp.idr ? 3 : 2, pp.idr ? kNalIdr : kNalSlice, bw.bytes());
    st.bits += static_cast<int64_t>(bytes) * 8;
    ++st.num_slices;
  }
  st.times.coding += seconds_since(t0);
  return st;
}

void deblock_picture_parallel(EncoderState& s, Frame& rec, const std::vector<SliceDeblockParams>& params,
                              StageTimes* times) {
  const MacroblockDeblocker dbk(rec, s.mbs.data(), s.mb_w, params, s.p.chroma_qp_offset);
  const int n = std::max(1, std::min(s.threads, s.mb_h));
  WavefrontRows& rows = s.wavefront;
  rows.deblocked.reset(s.mb_h);
  rows.next_row.store(0);
  std::vector<double> seconds(static_cast<size_t>(n), 0.0);
  run_workers(s, n, [&](int w) {
    const double t = stage_clock_seconds();
    try {
      for (int y; (y = rows.next_row.fetch_add(1)) < s.mb_h;)
        for (int x = 0; x < s.mb_w; ++x) {
          if (y > 0) wait_or_unwind(rows.deblocked, y - 1, std::min(x + 2, s.mb_w));
          dbk.filter(x, y);
          rows.deblocked.raise(y, x + 1);
        }
    } catch (const Aborted&) {
    } catch (...) {
      rows.deblocked.abort();
      throw;
    }
    seconds[static_cast<size_t>(w)] = seconds_since(t);
  });
  for (double t : seconds) times->deblocking += t;
}

}  // namespace gme
