#include "encoder/mb_worker.h"

#include "common/stage_clock.h"
#include "encoder/analyse_intra.h"

namespace gme {

void MbWorker::begin_picture(const MbContext& c, CandidateSourceFactory* sources) {
  const EncoderParams& p = *c.p;
  sources_ = sources;
  source.reset();
  times = StageTimes();
  wait_seconds = 0;
  for (int& n : mb_counts) n = 0;
  ic = InterContext();
  ic.times = &times;
  ic.msp.lambda_factor_fpel = c.lam.mf[0];
  ic.msp.lambda_factor_hpel = c.lam.mf[1];
  ic.msp.lambda_factor_qpel = c.lam.mf[2];
  ic.msp.hpel_metric = p.me_distortion_hpel;
  ic.msp.qpel_metric = p.me_distortion_qpel;
  ic.msp.disable_subpel = p.disable_subpel_me;
  ic.msp.memo = memo.get();
}

void MbWorker::decide(const MbContext& c, MbCoding& coding) {
  if (c.p_slice) {
    if (!source) {
      source = sources_->make(&wait_seconds);
      ic.source = source.get();
    }
    analyse_p_macroblock(c, ic, coding);  // accounts its own stage times
  } else {
    const double t0 = stage_clock_seconds();
    double coding_s = 0;
    analyse_intra(c, coding, &coding_s);
    times.mode_decision += stage_clock_seconds() - t0 - coding_s;
    times.coding += coding_s;
  }
}

}  // namespace gme
