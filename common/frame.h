// Pictures: three 8-bit planes (4:2:0) with replicated borders, so motion vectors may point outside the picture.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gme {

// Luma planes carry kLumaPad pixels of border, chroma kChromaPad. Any block fetch (with interpolation taps) whose
// origin is clamped to [-kLumaPad + 3, width + kLumaPad - 16 - 3] reads the same values an unbounded edge
// replication would give, so motion search and compensation clamp fetch coordinates instead of vectors.
constexpr int kLumaPad = 32;
constexpr int kChromaPad = 16;

struct Plane {
  int width = 0;   // coded width in pixels (multiple of 16 for luma, 8 for chroma)
  int height = 0;
  int stride = 0;  // bytes between rows, padding included
  int pad = 0;
  std::vector<uint8_t> storage;
  // Holds `storage` page-locked for the GPU search while set (PictureIntegerSearch::page_lock: a current picture's
  // rows then go to the device straight from it). Where the samples live, not what they are, so the encoder sets it
  // on a picture it only reads (mutable). It is let go before the storage is freed or moves (the destructor,
  // assignments, alloc() at another size), and a copy of the plane does not share it: the search must never take
  // other memory, or memory freed since, for the locked range.
  mutable std::shared_ptr<void> lock;

  Plane() = default;
  Plane(const Plane& o) : width(o.width), height(o.height), stride(o.stride), pad(o.pad), storage(o.storage) {}
  Plane(Plane&& o) noexcept = default;  // the buffer keeps its address: the lock moves with it
  Plane& operator=(const Plane& o);
  Plane& operator=(Plane&& o) noexcept;
  ~Plane() { lock.reset(); }

  // Clears the samples; with another size the storage is allocated anew (and the lock let go first).
  void alloc(int w, int h, int border);
  // The same geometry as alloc(), keeping the samples when the storage already has that size: for a buffer whose
  // every sample, border included, is written before it is read (a reconstruction: its macroblocks, then
  // extend_borders), where clearing would be a pass over the picture for nothing.
  void reshape(int w, int h, int border);
  uint8_t* row(int y) { return storage.data() + static_cast<size_t>(y + pad) * stride + pad; }
  const uint8_t* row(int y) const { return storage.data() + static_cast<size_t>(y + pad) * stride + pad; }
  uint8_t* at(int x, int y) { return row(y) + x; }
  const uint8_t* at(int x, int y) const { return row(y) + x; }
  // Replicates the outermost picture samples into the border (call after the picture is final, i.e. deblocked).
  void extend_borders();
  // The same in pieces, for a picture that becomes final from the top down: the left and right borders of rows
  // [y0, y1), and the top or bottom border from the first or last row (each once that row is final).
  void extend_sides(int y0, int y1);
  void extend_top();
  void extend_bottom();
};

struct HalfpelPlanes;  // common/halfpel.h

struct Frame {
  Plane plane[3];       // Y, Cb, Cr
  int width = 0;        // coded luma size: multiple of 16
  int height = 0;
  int crop_width = 0;   // visible size (SPS frame cropping removes the rest)
  int crop_height = 0;

  // Coding bookkeeping, filled by the encoder.
  int frame_num = 0;    // frame_num as coded
  int poc = 0;          // picture order count (display order * 2)
  int id = -1;          // unique id for "same reference picture" tests (deblocking, MV prediction)
  bool is_idr = false;
  // Full/half-pel planes of the luma for sub-pel refinement (common/halfpel.h), built by the encoder when the
  // picture is first used as a reference; null when not built (sub-pel then interpolates locally, same results).
  std::shared_ptr<const HalfpelPlanes> halfpel;
  // One of the encoder's input pictures (Encoder::input_frame), which come back to be read into again: worth
  // page-locking for the GPU search (Plane::lock), which a picture used once is not (locking costs more than the
  // copy it saves).
  bool reused_input = false;

  void alloc(int coded_w, int coded_h, int visible_w, int visible_h);
  void reshape(int coded_w, int coded_h, int visible_w, int visible_h);  // Plane::reshape's contract
  void extend_borders() { for (Plane& p : plane) p.extend_borders(); }
  Plane& y() { return plane[0]; }
  const Plane& y() const { return plane[0]; }
};

}  // namespace gme
