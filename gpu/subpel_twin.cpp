// Plain C++ twin of the sub-pel table kernel: written for clarity, from the encoder's own reference primitives
// (mc_luma for the interpolation, pixel_ref() for the metric), so it is also an oracle independent of the
// sub-pel refinement's SubpelRegion/plane/memo machinery.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "common/frame.h"
#include "common/mc.h"
#include "common/pixel.h"
#include "gpu/me_twin.h"

namespace gme {

void subpel_tables_twin(const PictureSearchRequest& req, const PictureCandidates& cands, int metric, int ranks,
                        SubpelTable* out, SubpelFloors* floors, int threads) {
  const PixelFuncs& px = pixel_ref();
  const int num_mbs = req.mb_width * req.mb_height;
  const Plane& cur = *req.cur;
  const auto table = [&](int r, int mb, int rank) {
    const Plane& ref = *req.refs[static_cast<size_t>(r)];
    uint8_t pred[16 * 16];
    SubpelTable& t = out[(static_cast<size_t>(r) * num_mbs + mb) * ranks + rank];
    t = SubpelTable{};  // the tail 0, as the kernel writes it
    const int mb_px = (mb % req.mb_width) * 16, mb_py = (mb / req.mb_width) * 16;
    for (int part = 0; part < kNumPartitions; ++part) {
      const PartitionGeometry g = partition_geometry(part);
      const int x = mb_px + 4 * g.x, y = mb_py + 4 * g.y, w = 4 * g.w, h = 4 * g.h;
      int bs = 0;
      while (kBlockW[bs] != w || kBlockH[bs] != h) ++bs;
      const MV mv = cands.at(r, mb, part)[rank].mv;
      uint32_t by_slot[kSubpelOffsets];
      for (int oy = -3; oy <= 3; ++oy)
        for (int ox = -3; ox <= 3; ++ox) {
          mc_luma(pred, 16, ref, x, y, MV(mv.x + ox, mv.y + oy), w, h);
          by_slot[subpel_slot(ox, oy)] = metric == 2 ? px.satd[bs](cur.at(x, y), cur.stride, pred, 16)
                                                     : px.sad[bs](cur.at(x, y), cur.stride, pred, 16);
        }
      t.set_row(part, by_slot);
    }
  };
  // A (reference, macroblock) at a time, every rank of it.
  const int items = static_cast<int>(req.refs.size()) * num_mbs;
  std::atomic<int> next{0};
  run_twin_team(threads < items ? threads : items, [&] {
    for (int j; (j = next.fetch_add(1)) < items;) {
      for (int rank = 0; rank < ranks; ++rank) table(j / num_mbs, j % num_mbs, rank);
      if (!floors) continue;
      SubpelFloors& f = floors[j];
      for (uint32_t& v : f.d) v = UINT32_MAX;
      for (uint32_t& v : f.tail) v = UINT32_MAX;
      for (int rank = 0; rank < ranks; ++rank) {  // a row's base is its smallest value
        const SubpelTable& t = out[static_cast<size_t>(j) * ranks + rank];
        for (int part = 0; part < kNumPartitions; ++part) f.d[part] = std::min(f.d[part], t.row_base(part));
      }
    }
  });
}

}  // namespace gme
