// Frame and Plane: reusing a picture's storage, and the border extension in pieces.
#include <gtest/gtest.h>

#include <cstdint>

#include "common/frame.h"

namespace gme {
namespace {

TEST(Frame, ReshapeKeepsTheSamplesOfStorageOfTheSameSize) {
  Frame f;
  f.alloc(64, 48, 60, 44);
  for (Plane& p : f.plane) p.storage.assign(p.storage.size(), 7);
  const uint8_t* luma = f.plane[0].storage.data();
  f.reshape(64, 48, 62, 46);  // same coded size: nothing cleared, nothing reallocated
  EXPECT_EQ(f.plane[0].storage.data(), luma);
  EXPECT_EQ(f.crop_width, 62);
  EXPECT_EQ(f.crop_height, 46);
  for (const Plane& p : f.plane)
    for (uint8_t v : p.storage) ASSERT_EQ(v, 7);
  f.reshape(80, 48, 80, 48);  // another size: cleared, as alloc() does
  EXPECT_EQ(f.plane[0].width, 80);
  EXPECT_EQ(f.plane[0].stride, 80 + 2 * kLumaPad);
  EXPECT_EQ(f.plane[1].stride, 40 + 2 * kChromaPad);
  for (const Plane& p : f.plane) {
    ASSERT_EQ(p.storage.size(), static_cast<size_t>(p.stride) * (p.height + 2 * p.pad));
    for (uint8_t v : p.storage) ASSERT_EQ(v, 0);
  }
}

TEST(Frame, BordersExtendedInPiecesAreTheWholeExtension) {
  Plane whole, pieces;
  whole.alloc(32, 24, 8);
  for (size_t i = 0; i < whole.storage.size(); ++i) whole.storage[i] = static_cast<uint8_t>(i * 37 + 11);
  pieces = whole;
  whole.extend_borders();
  pieces.extend_sides(10, 24);
  pieces.extend_sides(0, 10);
  pieces.extend_bottom();
  pieces.extend_top();
  EXPECT_EQ(pieces.storage, whole.storage);
}

}  // namespace
}  // namespace gme
