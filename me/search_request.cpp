// Comparing picture-level search requests (me/me_interface.h): how a search queued ahead is matched with the call
// that takes it up.
#include "me/me_interface.h"

namespace gme {

bool same_search_request(const PictureSearchRequest& a, const PictureSearchRequest& b) {
  return a.cur == b.cur && a.refs == b.refs && a.mb_width == b.mb_width && a.mb_height == b.mb_height &&
         a.search_range == b.search_range && a.top_k == b.top_k && a.lambda_factor == b.lambda_factor &&
         a.centre == b.centre && a.penalty_pred == b.penalty_pred && a.cur_id == b.cur_id &&
         a.ref_ids == b.ref_ids && a.zero_copy == b.zero_copy && a.subpel_metric == b.subpel_metric &&
         (a.subpel_metric < 0 || a.subpel_ranks == b.subpel_ranks) && a.progressive == b.progressive;
}

}  // namespace gme
