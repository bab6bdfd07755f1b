// A cheap monotonic clock for the per-stage time split (integer ME, sub-pel, mode decision, coding), which is read
// several times per partition query: ~300k reads per 640x480 P picture. steady_clock goes through the kernel's
// clock source; where that is not the TSC (seen on the GPU host: stage times twice the development VM's), each
// read costs far more than the work it times. On x86 this reads the TSC directly (invariant on every CPU the
// encoder targets) and converts with a rate measured once against steady_clock; elsewhere it is steady_clock.
// Picture and sequence totals stay on steady_clock; only the split between stages uses this clock.
#pragma once

namespace gme {

// Seconds since an arbitrary origin; differences are stage durations.
double stage_clock_seconds();

}  // namespace gme
