// Bjontegaard deltas: validation of the curves, the two fitting methods and their exact integrals.
#include "rd/bjontegaard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "common/text_fields.h"

namespace gme {
namespace {

// A validated curve: log10 rates and PSNRs, both strictly increasing (sorted by rate).
struct SortedCurve {
  std::vector<double> log_rate;
  std::vector<double> psnr;
};

// "point 3 (anchor.csv:4)": the point as the user can find it (its place in the input, where known).
std::string point_name(const BdCurve& c, size_t i) {
  std::string s = "point " + std::to_string(i + 1);
  if (i < c.origin.size() && !c.origin[i].empty()) s += " (" + c.origin[i] + ")";
  return s;
}

SortedCurve validate(const BdCurve& c) {
  if (c.kbps.size() != c.psnr.size())
    throw BdError(c.name + ": " + std::to_string(c.kbps.size()) + " rates but " + std::to_string(c.psnr.size()) +
                  " PSNR values");
  const size_t n = c.kbps.size();
  if (n < static_cast<size_t>(kBdMinPoints))
    throw BdError(c.name + ": " + std::to_string(n) + " point" + (n == 1 ? "" : "s") + ", at least " +
                  std::to_string(kBdMinPoints) + " are needed for a cubic fit");
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = 0; i < n; i++) {
    if (!std::isfinite(c.kbps[i]) || !(c.kbps[i] > 0))
      throw BdError(c.name + ": " + point_name(c, i) + " has rate " + fmt("%g", c.kbps[i]) +
                    " kbit/s, expected a positive number");
    if (!std::isfinite(c.psnr[i]))
      throw BdError(c.name + ": " + point_name(c, i) + " has no PSNR value");
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return c.kbps[a] < c.kbps[b]; });
  SortedCurve s;
  for (size_t k = 0; k < n; k++) {
    const size_t i = order[k];
    if (k > 0) {
      const size_t p = order[k - 1];
      // Both fits need a one-to-one rate <-> PSNR relation; a curve that is not strictly increasing means a broken
      // encode or mixed-up points, and any delta computed from it would be meaningless.
      if (c.kbps[i] == c.kbps[p])
        throw BdError(c.name + ": " + point_name(c, p) + " and " + point_name(c, i) + " have the same rate " +
                      fmt("%.3f", c.kbps[i]) + " kbit/s");
      if (c.psnr[i] <= c.psnr[p])
        throw BdError(c.name + ": curve is not monotonic: PSNR " + fmt("%.3f", c.psnr[p]) + " dB at " +
                      fmt("%.3f", c.kbps[p]) + " kbit/s, " + point_name(c, p) + ", but " + fmt("%.3f", c.psnr[i]) +
                      " dB at " + fmt("%.3f", c.kbps[i]) + " kbit/s, " + point_name(c, i));
    }
    s.log_rate.push_back(std::log10(c.kbps[i]));
    s.psnr.push_back(c.psnr[i]);
  }
  return s;
}

// Solves the 4x4 system m a = r by Gaussian elimination with partial pivoting.
bool solve4(double m[4][4], double r[4], double a[4]) {
  for (int col = 0; col < 4; col++) {
    int piv = col;
    for (int i = col + 1; i < 4; i++)
      if (std::fabs(m[i][col]) > std::fabs(m[piv][col])) piv = i;
    if (!(std::fabs(m[piv][col]) > 1e-300)) return false;
    std::swap(r[col], r[piv]);
    for (int j = 0; j < 4; j++) std::swap(m[col][j], m[piv][j]);
    for (int i = col + 1; i < 4; i++) {
      const double f = m[i][col] / m[col][col];
      for (int j = col; j < 4; j++) m[i][j] -= f * m[col][j];
      r[i] -= f * r[col];
    }
  }
  for (int i = 3; i >= 0; i--) {
    double s = r[i];
    for (int j = i + 1; j < 4; j++) s -= m[i][j] * a[j];
    a[i] = s / m[i][i];
  }
  return true;
}

// Cubic least-squares fit in the scaled variable t = (x - centre) / scale.
struct ScaledCubic {
  double centre = 0, scale = 1;
  double a[4] = {};
};

ScaledCubic fit_scaled(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 4) throw BdError("cubic fit needs at least 4 points");
  ScaledCubic f;
  const auto [mn, mx] = std::minmax_element(x.begin(), x.end());
  f.centre = 0.5 * (*mn + *mx);
  f.scale = 0.5 * (*mx - *mn);
  if (!(f.scale > 0)) throw BdError("cubic fit needs distinct abscissae");
  double m[4][4] = {}, r[4] = {};
  for (size_t i = 0; i < x.size(); i++) {
    const double t = (x[i] - f.centre) / f.scale;
    double p[7];
    p[0] = 1;
    for (int k = 1; k < 7; k++) p[k] = p[k - 1] * t;
    for (int a = 0; a < 4; a++) {
      r[a] += p[a] * y[i];
      for (int b = 0; b < 4; b++) m[a][b] += p[a + b];
    }
  }
  if (!solve4(m, r, f.a)) throw BdError("cubic fit is singular (fewer than 4 distinct abscissae)");
  return f;
}

// Antiderivative of the scaled cubic at t.
double scaled_antiderivative(const ScaledCubic& f, double t) {
  return t * (f.a[0] + t * (f.a[1] / 2 + t * (f.a[2] / 3 + t * f.a[3] / 4)));
}

// Average of the integral of a curve's fit over [lo, hi].
double mean_over(const std::vector<double>& x, const std::vector<double>& y, double lo, double hi, BdMethod m) {
  const double integral = m == BdMethod::kPolynomial ? integrate_polyfit3(x, y, lo, hi) : integrate_pchip(x, y, lo, hi);
  return integral / (hi - lo);
}

}  // namespace

const char* bd_method_name(BdMethod m) {
  return m == BdMethod::kPolynomial ? "VCEG-M33 cubic least-squares fit" : "piecewise cubic Hermite (PCHIP)";
}

std::vector<double> polyfit3(const std::vector<double>& x, const std::vector<double>& y) {
  const ScaledCubic f = fit_scaled(x, y);
  // q(t) with t = (x - c) / s expanded into powers of x: t^k = sum_j C(k,j) x^j (-c)^(k-j) / s^k.
  std::vector<double> c(4, 0.0);
  static const int binom[4][4] = {{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 2, 1, 0}, {1, 3, 3, 1}};
  for (int k = 0; k < 4; k++) {
    const double sk = std::pow(f.scale, k);
    for (int j = 0; j <= k; j++) c[j] += f.a[k] * binom[k][j] * std::pow(-f.centre, k - j) / sk;
  }
  return c;
}

bool polyfit3_decreases(const std::vector<double>& x, const std::vector<double>& y, double lo, double hi,
                        double* from, double* to) {
  const ScaledCubic f = fit_scaled(x, y);
  const double tlo = (lo - f.centre) / f.scale, thi = (hi - f.centre) / f.scale;
  // Slope in t: q'(t) = a1 + 2 a2 t + 3 a3 t^2 (the scale is positive, so the sign is that of dy/dx).
  auto slope = [&](double t) { return f.a[1] + t * (2 * f.a[2] + t * 3 * f.a[3]); };
  // Candidate points where the slope can change sign or be smallest: the ends, the vertex and the roots.
  std::vector<double> ts = {tlo, thi};
  const double qa = 3 * f.a[3], qb = 2 * f.a[2], qc = f.a[1];
  if (qa != 0) {
    const double vertex = -qb / (2 * qa);
    if (vertex > tlo && vertex < thi) ts.push_back(vertex);
    const double disc = qb * qb - 4 * qa * qc;
    if (disc >= 0) {
      const double r = std::sqrt(disc);
      for (double t : {(-qb - r) / (2 * qa), (-qb + r) / (2 * qa)})
        if (t > tlo && t < thi) ts.push_back(t);
    }
  } else if (qb != 0) {
    const double t = -qc / qb;
    if (t > tlo && t < thi) ts.push_back(t);
  }
  std::sort(ts.begin(), ts.end());
  // The slope is a quadratic: between consecutive candidates it keeps one sign, so each piece's midpoint tells.
  // A slope that only touches zero (x^3 at 0) still rises strictly; rounding may leave it a hair below zero there,
  // so only a slope below -1e-9 of the largest one counts as falling.
  double largest = 0;
  for (double t : ts) largest = std::max(largest, std::fabs(slope(t)));
  const double tolerance = 1e-9 * largest;
  double a = 0, b = 0;
  bool found = false;
  for (size_t i = 0; i + 1 < ts.size(); i++) {
    if (slope(0.5 * (ts[i] + ts[i + 1])) > -tolerance) {
      if (found) break;  // the first falling part has ended
      continue;
    }
    if (!found) a = ts[i];
    found = true;
    b = ts[i + 1];
  }
  if (!found) return false;
  *from = f.centre + f.scale * a;
  *to = f.centre + f.scale * b;
  return true;
}

double integrate_polyfit3(const std::vector<double>& x, const std::vector<double>& y, double lo, double hi) {
  const ScaledCubic f = fit_scaled(x, y);
  const double tlo = (lo - f.centre) / f.scale, thi = (hi - f.centre) / f.scale;
  return f.scale * (scaled_antiderivative(f, thi) - scaled_antiderivative(f, tlo));
}

std::vector<double> pchip_slopes(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2 || y.size() != n) throw BdError("PCHIP needs at least 2 points");
  std::vector<double> h(n - 1), delta(n - 1), d(n);
  for (size_t k = 0; k + 1 < n; k++) {
    h[k] = x[k + 1] - x[k];
    if (!(h[k] > 0)) throw BdError("PCHIP needs strictly increasing abscissae");
    delta[k] = (y[k + 1] - y[k]) / h[k];
  }
  if (n == 2) return {delta[0], delta[0]};
  auto sign = [](double v) { return (v > 0) - (v < 0); };
  // Interior knots: weighted harmonic mean of the neighbouring secants (Fritsch-Butland), zero at extrema.
  for (size_t k = 1; k + 1 < n; k++) {
    if (sign(delta[k - 1]) * sign(delta[k]) <= 0) {
      d[k] = 0;
    } else {
      const double w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
      d[k] = (w1 + w2) / (w1 / delta[k - 1] + w2 / delta[k]);
    }
  }
  // End knots: one-sided three-point estimate, limited so the interpolant stays shape preserving.
  auto end_slope = [&](double h0, double h1, double m0, double m1) {
    double s = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
    if (sign(s) != sign(m0)) s = 0;
    else if (sign(m0) != sign(m1) && std::fabs(s) > 3 * std::fabs(m0)) s = 3 * m0;
    return s;
  };
  d[0] = end_slope(h[0], h[1], delta[0], delta[1]);
  d[n - 1] = end_slope(h[n - 2], h[n - 3], delta[n - 2], delta[n - 3]);
  return d;
}

double integrate_pchip(const std::vector<double>& x, const std::vector<double>& y, double lo, double hi) {
  const std::vector<double> d = pchip_slopes(x, y);
  double sum = 0;
  for (size_t k = 0; k + 1 < x.size(); k++) {
    const double a = std::max(lo, x[k]), b = std::min(hi, x[k + 1]);
    if (!(b > a)) continue;
    // Hermite cubic on [x_k, x_k+1] written in s = x - x_k: y_k + d_k s + c2 s^2 + c3 s^3.
    const double h = x[k + 1] - x[k], delta = (y[k + 1] - y[k]) / h;
    const double c2 = (3 * delta - 2 * d[k] - d[k + 1]) / h;
    const double c3 = (d[k] + d[k + 1] - 2 * delta) / (h * h);
    auto prim = [&](double s) { return s * (y[k] + s * (d[k] / 2 + s * (c2 / 3 + s * c3 / 4))); };
    sum += prim(b - x[k]) - prim(a - x[k]);
  }
  return sum;
}

BdResult bjontegaard(const BdCurve& anchor, const BdCurve& test, BdMethod method) {
  const SortedCurve a = validate(anchor), t = validate(test);
  BdResult r;
  const double lr_lo = std::max(a.log_rate.front(), t.log_rate.front());
  const double lr_hi = std::min(a.log_rate.back(), t.log_rate.back());
  const double p_lo = std::max(a.psnr.front(), t.psnr.front());
  const double p_hi = std::min(a.psnr.back(), t.psnr.back());
  auto range = [](const char* unit, const char* f, double lo, double hi) {
    return fmt(f, lo) + "-" + fmt(f, hi) + " " + unit;
  };
  const std::string rates = anchor.name + " " + range("kbit/s", "%.3f", std::pow(10, a.log_rate.front()),
                                                      std::pow(10, a.log_rate.back())) +
                            ", " + test.name + " " +
                            range("kbit/s", "%.3f", std::pow(10, t.log_rate.front()), std::pow(10, t.log_rate.back()));
  const std::string psnrs = anchor.name + " " + range("dB", "%.3f", a.psnr.front(), a.psnr.back()) + ", " +
                            test.name + " " + range("dB", "%.3f", t.psnr.front(), t.psnr.back());
  const bool rate_overlap = lr_hi > lr_lo, psnr_overlap = p_hi > p_lo;
  if (!rate_overlap && !psnr_overlap)
    throw BdError("curves do not overlap in rate (" + rates + ") nor in PSNR (" + psnrs + ")");
  if (!rate_overlap)
    throw BdError("curves do not overlap in rate (" + rates + "); they overlap only in PSNR, over " +
                  range("dB", "%.3f", p_lo, p_hi));
  if (!psnr_overlap)
    throw BdError("curves do not overlap in PSNR (" + psnrs + "); they overlap only in rate, over " +
                  range("kbit/s", "%.3f", std::pow(10, lr_lo), std::pow(10, lr_hi)));
  r.overlap_kbps_lo = std::pow(10, lr_lo);
  r.overlap_kbps_hi = std::pow(10, lr_hi);
  r.overlap_psnr_lo = p_lo;
  r.overlap_psnr_hi = p_hi;
  r.bd_psnr_db = mean_over(t.log_rate, t.psnr, lr_lo, lr_hi, method) -
                 mean_over(a.log_rate, a.psnr, lr_lo, lr_hi, method);
  const double log_diff = mean_over(t.psnr, t.log_rate, p_lo, p_hi, method) -
                          mean_over(a.psnr, a.log_rate, p_lo, p_hi, method);
  r.bd_rate_percent = (std::pow(10.0, log_diff) - 1.0) * 100.0;

  // ---- Doubts: each one a warning line that names the curve, the interval and what to do.
  const char* pchip_hint = "; the PCHIP method (bdrate/rdsweep --pchip) is monotonic by construction";
  if (method == BdMethod::kPolynomial) {
    struct Fit { const SortedCurve* c; const BdCurve* named; };
    for (const Fit f : {Fit{&a, &anchor}, Fit{&t, &test}}) {
      double from, to;
      if (polyfit3_decreases(f.c->psnr, f.c->log_rate, p_lo, p_hi, &from, &to))
        r.warnings.push_back(f.named->name + ": the cubic fit of log-rate over PSNR is not monotonic over the "
                             "BD-rate interval " + range("dB", "%.3f", p_lo, p_hi) + " (it does not rise between " +
                             fmt("%.3f", from) + " and " + fmt("%.3f", to) + " dB): the BD-rate is not meaningful" +
                             pchip_hint);
      if (polyfit3_decreases(f.c->log_rate, f.c->psnr, lr_lo, lr_hi, &from, &to))
        r.warnings.push_back(f.named->name + ": the cubic fit of PSNR over log-rate is not monotonic over the "
                             "BD-PSNR interval " + range("kbit/s", "%.3f", std::pow(10, lr_lo), std::pow(10, lr_hi)) +
                             " (it does not rise between " + fmt("%.3f", std::pow(10, from)) + " and " +
                             fmt("%.3f", std::pow(10, to)) + " kbit/s): the BD-PSNR is not meaningful" + pchip_hint);
    }
  }
  // Implausible results: a shift larger than the span the two curves cover cannot come from these data.
  const double lr_span = std::max(a.log_rate.back(), t.log_rate.back()) - std::min(a.log_rate.front(),
                                                                                  t.log_rate.front());
  const double p_span = std::max(a.psnr.back(), t.psnr.back()) - std::min(a.psnr.front(), t.psnr.front());
  if (!std::isfinite(r.bd_rate_percent) || std::fabs(log_diff) > lr_span)
    r.warnings.push_back("BD-rate " + fmt("%.3f", r.bd_rate_percent) + " % is implausible: the rate ratio it "
                         "implies exceeds the ratio between the highest and the lowest rate of both curves (" +
                         fmt("%.2f", std::pow(10, lr_span)) + "x)" + (method == BdMethod::kPolynomial ? pchip_hint : ""));
  if (!std::isfinite(r.bd_psnr_db) || std::fabs(r.bd_psnr_db) > p_span)
    r.warnings.push_back("BD-PSNR " + fmt("%.4f", r.bd_psnr_db) + " dB is implausible: larger than the PSNR span of "
                         "both curves (" + fmt("%.3f", p_span) + " dB)" +
                         (method == BdMethod::kPolynomial ? pchip_hint : ""));
  // Small overlaps: the delta then rests on a small part of a curve (the fit outside it does not count).
  auto overlap_check = [&](const char* delta, const char* axis, double lo, double hi, const SortedCurve& c1,
                           const SortedCurve& c2, bool log_axis) {
    const double r1 = log_axis ? c1.log_rate.back() - c1.log_rate.front() : c1.psnr.back() - c1.psnr.front();
    const double r2 = log_axis ? c2.log_rate.back() - c2.log_rate.front() : c2.psnr.back() - c2.psnr.front();
    const double f1 = (hi - lo) / r1, f2 = (hi - lo) / r2;
    if (f1 < kBdMinOverlap || f2 < kBdMinOverlap)
      r.warnings.push_back(std::string(delta) + ": the curves overlap in " + axis + " over " + fmt("%.0f", 100 * f1) +
                           " % of the anchor's range and " + fmt("%.0f", 100 * f2) + " % of the test's (below " +
                           fmt("%.0f", 100 * kBdMinOverlap) + " %): the delta rests on a small common part");
  };
  overlap_check("BD-rate", "PSNR", p_lo, p_hi, a, t, false);
  overlap_check("BD-PSNR", "log-rate", lr_lo, lr_hi, a, t, true);
  return r;
}

}  // namespace gme
