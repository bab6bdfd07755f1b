// What follows a picture's rows as the wavefront deblocks them, top down: the reconstruction's borders, its
// half-pel planes where the next picture refines against it, and the picture-level search queued ahead for the
// next picture (PictureIntegerSearch::search_ahead), which starts on the rows that are final. All of them would
// otherwise wait for the picture's end; and the next picture's rows, which read this reconstruction only within
// their vectors' reach, wait here (wait_final) for the rows they read instead of for the whole picture.
#pragma once
#include <atomic>
#include <mutex>

#include "common/frame.h"
#include "common/halfpel.h"
#include "encoder/thread_pool.h"
#include "me/me_interface.h"

namespace gme {

class FinalRows {
 public:
  // `search`: the search to report the luma rows to (nullptr: none queued). `planes` (prepared by
  // prepare_halfpel_planes for rec's luma, nullptr: none): built row by row with the kernels `hp`.
  FinalRows(Frame& rec, int mb_height, PictureIntegerSearch* search, const HalfpelFuncs* hp = nullptr,
            HalfpelPlanes* planes = nullptr)
      : rec_(rec), mb_height_(mb_height), search_(search), hp_(hp), planes_(planes) {
    in_order_.reset(1);
  }

  // Every macroblock of row `mb_row` is deblocked (the wavefront deblocks rows in order, each once). Deblocking
  // the row below still changes this row's last 3 luma rows and its last chroma row, so the rows above those are
  // final; the last row is final whole. Called on any worker: calls for different rows may overlap, and touch
  // different samples (the sides of their own final rows; the first row also the top border, the last the bottom).
  // The planes' rows follow in order (a band reads luma rows on both sides of its own): a call waits for the call
  // of the row above, which started before it (row mb_row - 1 was deblocked first). `scratch`: the calling
  // worker's, for the planes. Returns false when abort() came first.
  bool row_deblocked(int mb_row, HalfpelScratch* scratch = nullptr) {
    const int luma_end = final_luma_rows(mb_row);
    extend(rec_.plane[0], mb_row > 0 ? final_luma_rows(mb_row - 1) : 0, luma_end, mb_row);
    const int chroma_end = final_chroma_rows(mb_row);
    const int chroma_begin = mb_row > 0 ? final_chroma_rows(mb_row - 1) : 0;
    extend(rec_.plane[1], chroma_begin, chroma_end, mb_row);
    extend(rec_.plane[2], chroma_begin, chroma_end, mb_row);
    for (int seen = final_luma_.load(); seen < luma_end && !final_luma_.compare_exchange_weak(seen, luma_end);) {
    }
    if (search_.load()) report(luma_end);
    if (!in_order_.wait_at_least(0, mb_row)) return false;
    if (planes_) {
      const int y0 = mb_row > 0 ? plane_rows(mb_row - 1) : -kHalfpelPad;
      build_halfpel_plane_rows(*hp_, rec_.plane[0], planes_, y0, plane_rows(mb_row), scratch);
    }
    in_order_.raise(0, mb_row + 1);
    return true;
  }

  // From now on the rows go to `search` too (a search queued ahead after the picture started): the rows final so
  // far at once. At most once, and only where the constructor was given no search.
  void attach(PictureIntegerSearch* search) {
    std::lock_guard<std::mutex> lock(m_);
    search_.store(search);
    const int rows = final_luma_.load();
    if (rows > reported_.load(std::memory_order_relaxed)) {
      reported_.store(rows, std::memory_order_relaxed);
      search->reference_rows(rec_.plane[0], rec_.id, rows);
    }
  }

  // Whether row_deblocked() has run for every row: the borders (and planes) are then whole.
  bool borders_extended() const { return in_order_.get(0) == mb_height_; }

  // Blocks until rows [0, mb_row] are final, borders and planes included (mb_row >= mb_height: all). Returns false
  // when abort() came first.
  bool wait_final(int mb_row) { return in_order_.wait_at_least(0, std::min(mb_row, mb_height_ - 1) + 1); }

  // What wait_final(mb_row) waits for, for a row that parks instead (RowJob::run_or_park).
  ParkRequest final_park(int mb_row) { return ParkRequest{&in_order_, 0, std::min(mb_row, mb_height_ - 1) + 1}; }

  // Whether wait_final(mb_row) would return at once.
  bool is_final(int mb_row) const { return in_order_.get(0) >= std::min(mb_row, mb_height_ - 1) + 1; }

  // The picture failed: wait_final() and row_deblocked() return false from now on.
  void abort() { in_order_.abort(); }

  // The macroblock row whose row_deblocked() makes luma rows [0, luma_rows) of the reconstruction final, with
  // their half-pel planes (luma_rows past the picture: the last row, whose call adds the bottom border).
  int row_for_luma(int luma_rows) const {
    const int r = (luma_rows - 10 + 15) / 16;  // plane_rows(r) = 16 r + 10 >= luma_rows
    return std::max(0, std::min(r, mb_height_ - 1));
  }

 private:
  int final_luma_rows(int mb_row) const { return mb_row >= mb_height_ - 1 ? 16 * mb_height_ : 16 * mb_row + 13; }
  int final_chroma_rows(int mb_row) const { return mb_row >= mb_height_ - 1 ? 8 * mb_height_ : 8 * mb_row + 7; }
  // The planes' rows [.., plane_rows(mb_row)) read luma rows up to 2 below them: final after row mb_row.
  int plane_rows(int mb_row) const {
    return mb_row >= mb_height_ - 1 ? 16 * mb_height_ + kHalfpelPad : final_luma_rows(mb_row) - 3;
  }

  void extend(Plane& p, int y0, int y1, int mb_row) {
    p.extend_sides(y0, y1);
    if (mb_row == 0) p.extend_top();  // row 0 is final (and its sides extended) from the first row on
    if (mb_row == mb_height_ - 1) p.extend_bottom();
  }

  // The wavefront deblocks a row while it decides the row below, so the rows reported lie above decided macroblock
  // rows only: the search's contract (reference_rows) for writing the next answer over the current one. The calls
  // reach the search one at a time, the rows only growing.
  void report(int rows) {
    if (rows <= reported_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(m_);
    if (rows <= reported_.load(std::memory_order_relaxed)) return;
    reported_.store(rows, std::memory_order_relaxed);
    search_.load()->reference_rows(rec_.plane[0], rec_.id, rows);
  }

  Frame& rec_;
  const int mb_height_;
  std::atomic<PictureIntegerSearch*> search_;
  std::atomic<int> final_luma_{0};  // the most luma rows a call made final (calls may come out of order)
  const HalfpelFuncs* hp_;
  HalfpelPlanes* planes_;
  std::mutex m_;
  std::atomic<int> reported_{0};
  ProgressBoard in_order_;  // slot 0: rows whose row_deblocked() has finished, counted in order
};

}  // namespace gme
