#include "common/frame.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace gme {

Plane& Plane::operator=(const Plane& o) {
  if (this != &o) *this = Plane(o);  // a copy has no lock; the move lets this one's go first
  return *this;
}

Plane& Plane::operator=(Plane&& o) noexcept {
  if (this == &o) return *this;
  lock.reset();  // before this storage is freed
  width = o.width;
  height = o.height;
  stride = o.stride;
  pad = o.pad;
  storage = std::move(o.storage);
  lock = std::move(o.lock);
  return *this;
}

void Plane::alloc(int w, int h, int border) {
  width = w;
  height = h;
  pad = border;
  stride = w + 2 * border;
  const size_t bytes = static_cast<size_t>(stride) * (h + 2 * border);
  if (bytes != storage.size()) lock.reset();  // the storage may move
  storage.assign(bytes, 0);
}

void Plane::reshape(int w, int h, int border) {
  const size_t bytes = static_cast<size_t>(w + 2 * border) * (h + 2 * border);
  if (storage.size() != bytes) {
    alloc(w, h, border);
    return;
  }
  width = w;
  height = h;
  pad = border;
  stride = w + 2 * border;
}

void Plane::extend_sides(int y0, int y1) {
  for (int y = y0; y < y1; ++y) {
    uint8_t* r = row(y);
    std::memset(r - pad, r[0], pad);
    std::memset(r + width, r[width - 1], pad);
  }
}

// Whole rows, borders included: the sides of the row copied must be extended first.
void Plane::extend_top() {
  const uint8_t* top = row(0) - pad;
  for (int y = 1; y <= pad; ++y) std::memcpy(row(-y) - pad, top, stride);
}

void Plane::extend_bottom() {
  const uint8_t* bottom = row(height - 1) - pad;
  for (int y = 1; y <= pad; ++y) std::memcpy(row(height - 1 + y) - pad, bottom, stride);
}

void Plane::extend_borders() {
  extend_sides(0, height);
  extend_top();
  extend_bottom();
}

void Frame::reshape(int coded_w, int coded_h, int visible_w, int visible_h) {
  width = coded_w;
  height = coded_h;
  crop_width = visible_w;
  crop_height = visible_h;
  plane[0].reshape(coded_w, coded_h, kLumaPad);
  plane[1].reshape(coded_w / 2, coded_h / 2, kChromaPad);
  plane[2].reshape(coded_w / 2, coded_h / 2, kChromaPad);
}

void Frame::alloc(int coded_w, int coded_h, int visible_w, int visible_h) {
  reshape(coded_w, coded_h, visible_w, visible_h);  // storage of the same size (and its lock) kept
  for (Plane& p : plane) std::fill(p.storage.begin(), p.storage.end(), uint8_t{0});
}

}  // namespace gme
