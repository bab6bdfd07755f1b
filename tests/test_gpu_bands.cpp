// The CUDA search's bands of macroblock rows (gpu/bands.h): where a picture is cut for its uploads and launches.
#include <gtest/gtest.h>

#include <vector>

#include "gpu/bands.h"

namespace gme {
namespace {

using cuda_search::band_of_row;
using cuda_search::band_starts;
using cuda_search::bands_for;
using cuda_search::bands_queued_ahead;

std::vector<int> picture_bands(int width, int height) {
  const int mb_width = width / 16, mb_height = (height + 15) / 16;
  return band_starts(mb_height, bands_for(mb_width * mb_height));
}

TEST(GpuBands, UsualPictures) {
  // The short band first: a short band last would start its costliest blocks at the picture's very end.
  EXPECT_EQ(picture_bands(1920, 1080), (std::vector<int>{0, 5, 14, 23, 32, 41, 50, 59, 68}));
  EXPECT_EQ(picture_bands(3840, 2160), (std::vector<int>{0, 16, 33, 50, 67, 84, 101, 118, 135}));
  EXPECT_EQ(picture_bands(720, 576), (std::vector<int>{0, 18, 36}));
  // Up to 640x480 one band; a search queued ahead keeps two, the first starting before its reference is whole.
  EXPECT_EQ(picture_bands(640, 480), (std::vector<int>{0, 30}));
  EXPECT_EQ(picture_bands(176, 144), (std::vector<int>{0, 9}));
  EXPECT_EQ(band_starts(30, bands_queued_ahead(40 * 30)), (std::vector<int>{0, 15, 30}));
  EXPECT_EQ(band_starts(9, bands_queued_ahead(11 * 9)), (std::vector<int>{0, 4, 9}));
  EXPECT_EQ(bands_queued_ahead(120 * 68), bands_for(120 * 68));
}

TEST(GpuBands, EveryRowOnceTheOthersEqualTheFirstNoLonger) {
  for (int height = 1; height <= 160; ++height) {
    for (int bands = 1; bands <= 16; ++bands) {
      SCOPED_TRACE(testing::Message() << height << " rows, " << bands << " bands");
      const std::vector<int> start = band_starts(height, bands);
      ASSERT_GE(start.size(), 2u);
      ASSERT_LE(static_cast<int>(start.size()) - 1, bands);
      EXPECT_EQ(start.front(), 0);
      EXPECT_EQ(start.back(), height);
      const int rows = (height + bands - 1) / bands;  // every band after the first
      EXPECT_GE(start[1], 1);
      EXPECT_LE(start[1], rows);
      for (size_t b = 2; b < start.size(); ++b) EXPECT_EQ(start[b] - start[b - 1], rows);
      for (int row = 0; row < height; ++row) {
        const int b = band_of_row(start, row);
        ASSERT_GE(b, 0);
        ASSERT_LT(b + 1, static_cast<int>(start.size()));
        EXPECT_LE(start[static_cast<size_t>(b)], row);
        EXPECT_LT(row, start[static_cast<size_t>(b) + 1]);
      }
    }
  }
}

}  // namespace
}  // namespace gme
