// What follows a picture's rows as the wavefront deblocks them, top down: the reconstruction's borders, and the
// picture-level search queued ahead for the next picture (PictureIntegerSearch::search_ahead), which starts on
// the rows that are final. Both would otherwise wait for the picture's end, the borders on the coder thread
// alone between two pictures' rows.
#pragma once
#include <atomic>
#include <mutex>

#include "common/frame.h"
#include "me/me_interface.h"

namespace gme {

class FinalRows {
 public:
  // `search`: the search to report the luma rows to (nullptr: none queued).
  FinalRows(Frame& rec, int mb_height, PictureIntegerSearch* search)
      : rec_(rec), mb_height_(mb_height), search_(search) {}

  // Every macroblock of row `mb_row` is deblocked (the wavefront deblocks rows in order, each once). Deblocking
  // the row below still changes this row's last 3 luma rows and its last chroma row, so the rows above those are
  // final; the last row is final whole. Called on any worker: calls for different rows may overlap, and touch
  // different samples (the sides of their own final rows; the first row also the top border, the last the bottom).
  void row_deblocked(int mb_row) {
    const int luma_end = final_luma_rows(mb_row);
    extend(rec_.plane[0], mb_row > 0 ? final_luma_rows(mb_row - 1) : 0, luma_end, mb_row);
    const int chroma_end = final_chroma_rows(mb_row);
    const int chroma_begin = mb_row > 0 ? final_chroma_rows(mb_row - 1) : 0;
    extend(rec_.plane[1], chroma_begin, chroma_end, mb_row);
    extend(rec_.plane[2], chroma_begin, chroma_end, mb_row);
    rows_extended_.fetch_add(1, std::memory_order_acq_rel);
    if (search_) report(luma_end);
  }

  // Whether row_deblocked() has run for every row: the borders are then extended whole.
  bool borders_extended() const { return rows_extended_.load(std::memory_order_acquire) == mb_height_; }

 private:
  int final_luma_rows(int mb_row) const { return mb_row >= mb_height_ - 1 ? 16 * mb_height_ : 16 * mb_row + 13; }
  int final_chroma_rows(int mb_row) const { return mb_row >= mb_height_ - 1 ? 8 * mb_height_ : 8 * mb_row + 7; }

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
    search_->reference_rows(rec_.plane[0], rec_.id, rows);
  }

  Frame& rec_;
  const int mb_height_;
  PictureIntegerSearch* search_;
  std::mutex m_;
  std::atomic<int> reported_{0};
  std::atomic<int> rows_extended_{0};
};

}  // namespace gme
