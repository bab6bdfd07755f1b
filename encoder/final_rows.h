// Reports a picture's final (deblocked) luma rows to the picture-level search while the wavefront codes it, so the
// next picture's search, queued ahead (PictureIntegerSearch::search_ahead), starts on the rows that are final.
#pragma once
#include <atomic>
#include <mutex>

#include "common/frame.h"
#include "me/me_interface.h"

namespace gme {

class FinalRowsReporter {
 public:
  FinalRowsReporter(PictureIntegerSearch& search, const Plane& luma, int id, int mb_height)
      : search_(search), luma_(luma), id_(id), mb_height_(mb_height) {}

  // Every macroblock of row `mb_row` is deblocked (the wavefront deblocks rows in order). Deblocking the row below
  // still changes this row's last 3 luma rows, so the rows above those are final; the last row is final whole. The
  // wavefront deblocks a row while it decides the row below, so the rows reported lie above decided macroblock
  // rows only: the search's contract (reference_rows) for writing the next answer over the current one. Called on
  // any worker: the calls reach the search one at a time, the rows only growing.
  void row_deblocked(int mb_row) {
    const int rows = mb_row >= mb_height_ - 1 ? 16 * mb_height_ : 16 * mb_row + 13;
    if (rows <= reported_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(m_);
    if (rows <= reported_.load(std::memory_order_relaxed)) return;
    reported_.store(rows, std::memory_order_relaxed);
    search_.reference_rows(luma_, id_, rows);
  }

 private:
  PictureIntegerSearch& search_;
  const Plane& luma_;
  const int id_, mb_height_;
  std::mutex m_;
  std::atomic<int> reported_{0};
};

}  // namespace gme
