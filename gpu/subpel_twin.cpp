// Plain C++ twin of the sub-pel table kernel: written for clarity, from the encoder's own reference primitives
// (mc_luma for the interpolation, pixel_ref() for the metric), so it is also an oracle independent of the
// sub-pel refinement's SubpelRegion/plane/memo machinery.
#include <cstdint>

#include "common/frame.h"
#include "common/mc.h"
#include "common/pixel.h"
#include "gpu/me_twin.h"

namespace gme {

void subpel_tables_twin(const PictureSearchRequest& req, const PictureCandidates& cands, int metric, int ranks,
                        SubpelTable* out) {
  const PixelFuncs& px = pixel_ref();
  const int num_mbs = req.mb_width * req.mb_height;
  const Plane& cur = *req.cur;
  uint8_t pred[16 * 16];
  for (size_t r = 0; r < req.refs.size(); ++r) {
    const Plane& ref = *req.refs[r];
    for (int mbr = 0; mbr < num_mbs * ranks; ++mbr) {
      const int mb = mbr / ranks, rank = mbr % ranks;
      SubpelTable& t = out[r * num_mbs * ranks + mbr];
      t = SubpelTable{};  // padding slots 0, as the kernel writes them
      const int mb_px = (mb % req.mb_width) * 16, mb_py = (mb / req.mb_width) * 16;
      for (int part = 0; part < kNumPartitions; ++part) {
        const PartitionGeometry g = partition_geometry(part);
        const int x = mb_px + 4 * g.x, y = mb_py + 4 * g.y, w = 4 * g.w, h = 4 * g.h;
        int bs = 0;
        while (kBlockW[bs] != w || kBlockH[bs] != h) ++bs;
        const MV mv = cands.at(static_cast<int>(r), mb, part)[rank].mv;
        for (int oy = -3; oy <= 3; ++oy)
          for (int ox = -3; ox <= 3; ++ox) {
            mc_luma(pred, 16, ref, x, y, MV(mv.x + ox, mv.y + oy), w, h);
            const uint32_t d = metric == 2 ? px.satd[bs](cur.at(x, y), cur.stride, pred, 16)
                                           : px.sad[bs](cur.at(x, y), cur.stride, pred, 16);
            const int i = subpel_slot(ox, oy);
            if (part == 0) t.d16x16[i] = d;
            else t.d[part - 1][i] = static_cast<uint16_t>(d);
          }
      }
    }
  }
}

}  // namespace gme
