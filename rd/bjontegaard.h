// Bjontegaard delta metrics between two rate-distortion curves: BD-rate (average bit-rate difference in percent at
// equal quality) and BD-PSNR (average quality difference in dB at equal rate).
//
// Default method (VCEG-M33, "Calculation of average PSNR differences between RD-curves", 2001): each curve is
// fitted by a third-order least-squares polynomial - PSNR as a function of log10(rate) for BD-PSNR, log10(rate) as a
// function of PSNR for BD-rate - and the difference of the two fits is averaged over the interval both curves
// cover. Option: piecewise cubic Hermite interpolation (PCHIP, Fritsch-Carlson slopes as in scipy and the later
// JCT-VC/JVET spreadsheets), integrated exactly over the same interval.
//
// Sign convention (as in the seed paper's Table 2): BD-rate > 0 means the test curve needs more bits than the
// anchor for the same PSNR; BD-PSNR < 0 means the test curve has lower PSNR at the same rate.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gme {

// Thrown for every input that has no meaningful answer; what() is one line naming the curve and the problem.
struct BdError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class BdMethod { kPolynomial, kPchip };

// One curve for one component: rates in kbit/s (> 0) and PSNR in dB, in any order. `name` appears in errors, and
// so does `origin[i]` (where point i was read, "file:line"), when given, for the point an error is about.
struct BdCurve {
  BdCurve() = default;
  BdCurve(std::string n, std::vector<double> rates, std::vector<double> psnrs, std::vector<std::string> where = {})
      : name(std::move(n)), kbps(std::move(rates)), psnr(std::move(psnrs)), origin(std::move(where)) {}
  std::string name;
  std::vector<double> kbps;
  std::vector<double> psnr;
  std::vector<std::string> origin;  // empty, or one per point
};

struct BdResult {
  double bd_rate_percent = 0;
  double bd_psnr_db = 0;
  double overlap_kbps_lo = 0, overlap_kbps_hi = 0;  // rate interval both curves cover (BD-PSNR integral)
  double overlap_psnr_lo = 0, overlap_psnr_hi = 0;  // PSNR interval both curves cover (BD-rate integral)
  // Doubts about the numbers above, one line each (empty: none). A warning means the number must not be
  // published as it is: a fit that is not monotonic over the integration interval, a result outside the range the
  // data can support, or an overlap below kBdMinOverlap of a curve's range.
  std::vector<std::string> warnings;
};

// Smallest common interval, as a fraction of each curve's own range, below which a delta extrapolates too much to
// be trusted (the bjontegaard Python package warns at the same ratio).
constexpr double kBdMinOverlap = 0.75;

// Minimum number of points of a curve (a cubic has four coefficients).
constexpr int kBdMinPoints = 4;

// Checks both curves (>= 4 finite points, positive rates, PSNR strictly increasing with rate, overlapping
// intervals) and computes both deltas. Throws BdError. Degenerate fits and small overlaps give warnings.
BdResult bjontegaard(const BdCurve& anchor, const BdCurve& test, BdMethod method);

// Eq. 2 of the seed paper: the 4:2:0 weighted average of the component PSNRs.
inline double combined_psnr(double y, double u, double v) { return (4.0 * y + u + v) / 6.0; }

const char* bd_method_name(BdMethod m);

// ---- Building blocks, exposed for the tests ----

// Least-squares polynomial of degree 3 through (x, y); coefficients c[0] + c[1] x + c[2] x^2 + c[3] x^3.
// The fit is done on centred and scaled abscissae so that the normal equations stay well conditioned.
std::vector<double> polyfit3(const std::vector<double>& x, const std::vector<double>& y);

// Integral over [lo, hi] of the least-squares cubic of (x, y).
double integrate_polyfit3(const std::vector<double>& x, const std::vector<double>& y, double lo, double hi);

// Integral over [lo, hi] (inside [x.front(), x.back()]) of the PCHIP interpolant of (x, y); x strictly increasing.
double integrate_pchip(const std::vector<double>& x, const std::vector<double>& y, double lo, double hi);

// PCHIP derivatives at the knots (exposed so tests can compare them with scipy's).
std::vector<double> pchip_slopes(const std::vector<double>& x, const std::vector<double>& y);

// Where the least-squares cubic of (x, y) decreases inside [lo, hi]: false when it rises strictly over the whole
// interval, else true with [*from, *to] the (first) part where its slope is zero or negative.
bool polyfit3_decreases(const std::vector<double>& x, const std::vector<double>& y, double lo, double hi,
                        double* from, double* to);

}  // namespace gme
