// SVG rendering of RD curves.
#include "rd/rdsweep_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/text_fields.h"

namespace gme {
namespace {

// Colour-blind-safe palette (Okabe-Ito); markers differ too, so curves stay apart in greyscale.
const char* const kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

std::string marker(int kind, double x, double y, const char* colour) {
  const std::string cx = fmt("%.2f", x), cy = fmt("%.2f", y);
  switch (kind % 3) {
    case 0:
      return "<circle cx=\"" + cx + "\" cy=\"" + cy + "\" r=\"4\" fill=\"" + colour + "\"/>";
    case 1:
      return "<rect x=\"" + fmt("%.2f", x - 3.5) + "\" y=\"" + fmt("%.2f", y - 3.5) +
             "\" width=\"7\" height=\"7\" fill=\"" + colour + "\"/>";
    default:
      return "<path d=\"M" + fmt("%.2f", x) + "," + fmt("%.2f", y - 4.5) + " L" + fmt("%.2f", x + 4.5) + "," +
             fmt("%.2f", y + 3.5) + " L" + fmt("%.2f", x - 4.5) + "," + fmt("%.2f", y + 3.5) + " Z\" fill=\"" +
             colour + "\"/>";
  }
}

// Tick label with just enough decimals for the step.
std::string tick_label(double v, double step) {
  int decimals = 0;
  while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) > 1e-6)
    decimals++;
  char f[16];
  std::snprintf(f, sizeof f, "%%.%df", decimals);
  if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0"
  return fmt(f, v);
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.05;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  // From the last tick at or below lo to the first at or above hi (eps absorbs rounding of k * step).
  const double eps = step * 1e-9;
  const double first = std::floor((lo + eps) / step);
  std::vector<double> t;
  for (int k = 0; t.empty() || t.back() < hi - eps; k++) t.push_back((first + k) * step);
  if (t.size() == 1) t.push_back(t[0] + step);
  return t;
}

std::string render_svg_plot(const PlotSpec& spec) {
  const double W = spec.width, H = spec.height;
  const double left = 80, right = 24, top = 44, bottom = 64;
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  for (const auto& s : spec.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); i++) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      xmin = std::min(xmin, s.x[i]);
      xmax = std::max(xmax, s.x[i]);
      ymin = std::min(ymin, s.y[i]);
      ymax = std::max(ymax, s.y[i]);
    }
  }
  if (!std::isfinite(xmin)) { xmin = 0; xmax = 1; ymin = 0; ymax = 1; }
  const std::vector<double> xt = nice_ticks(xmin, xmax, 6), yt = nice_ticks(ymin, ymax, 6);
  const double x0 = xt.front(), x1 = xt.back(), y0 = yt.front(), y1 = yt.back();
  const double pw = W - left - right, ph = H - top - bottom;
  auto px = [&](double v) { return left + (v - x0) / (x1 - x0) * pw; };
  auto py = [&](double v) { return top + ph - (v - y0) / (y1 - y0) * ph; };
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1, ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;

  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", W) + "\" height=\"" + fmt("%.0f", H) +
       "\" viewBox=\"0 0 " + fmt("%.0f", W) + " " + fmt("%.0f", H) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  if (!spec.provenance.empty()) o += "<desc>" + xml_escape(spec.provenance) + "</desc>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + fmt("%.0f", W) + "\" height=\"" + fmt("%.0f", H) + "\" fill=\"white\"/>\n";
  if (!spec.provenance.empty())
    o += "<text x=\"" + fmt("%.1f", W - 4) + "\" y=\"" + fmt("%.1f", H - 3) +
         "\" text-anchor=\"end\" font-size=\"9\" fill=\"#888888\">" + xml_escape(spec.provenance) + "</text>\n";
  o += "<text x=\"" + fmt("%.1f", W / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" +
       xml_escape(spec.title) + "</text>\n";
  // Grid, ticks and tick labels.
  o += "<g stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (double v : xt)
    o += "<line x1=\"" + fmt("%.2f", px(v)) + "\" y1=\"" + fmt("%.2f", top) + "\" x2=\"" + fmt("%.2f", px(v)) +
         "\" y2=\"" + fmt("%.2f", top + ph) + "\"/>\n";
  for (double v : yt)
    o += "<line x1=\"" + fmt("%.2f", left) + "\" y1=\"" + fmt("%.2f", py(v)) + "\" x2=\"" + fmt("%.2f", left + pw) +
         "\" y2=\"" + fmt("%.2f", py(v)) + "\"/>\n";
  o += "</g>\n<g stroke=\"black\" stroke-width=\"1\">\n";
  o += "<line x1=\"" + fmt("%.2f", left) + "\" y1=\"" + fmt("%.2f", top + ph) + "\" x2=\"" + fmt("%.2f", left + pw) +
       "\" y2=\"" + fmt("%.2f", top + ph) + "\"/>\n";
  o += "<line x1=\"" + fmt("%.2f", left) + "\" y1=\"" + fmt("%.2f", top) + "\" x2=\"" + fmt("%.2f", left) +
       "\" y2=\"" + fmt("%.2f", top + ph) + "\"/>\n";
  for (double v : xt)
    o += "<line x1=\"" + fmt("%.2f", px(v)) + "\" y1=\"" + fmt("%.2f", top + ph) + "\" x2=\"" + fmt("%.2f", px(v)) +
         "\" y2=\"" + fmt("%.2f", top + ph + 5) + "\"/>\n";
  for (double v : yt)
    o += "<line x1=\"" + fmt("%.2f", left - 5) + "\" y1=\"" + fmt("%.2f", py(v)) + "\" x2=\"" + fmt("%.2f", left) +
         "\" y2=\"" + fmt("%.2f", py(v)) + "\"/>\n";
  o += "</g>\n<g>\n";
  for (double v : xt)
    o += "<text x=\"" + fmt("%.2f", px(v)) + "\" y=\"" + fmt("%.2f", top + ph + 19) + "\" text-anchor=\"middle\">" +
         tick_label(v, xstep) + "</text>\n";
  for (double v : yt)
    o += "<text x=\"" + fmt("%.2f", left - 8) + "\" y=\"" + fmt("%.2f", py(v) + 4) + "\" text-anchor=\"end\">" +
         tick_label(v, ystep) + "</text>\n";
  o += "<text x=\"" + fmt("%.2f", left + pw / 2) + "\" y=\"" + fmt("%.2f", H - 16) + "\" text-anchor=\"middle\">" +
       xml_escape(spec.x_label) + "</text>\n";
  o += "<text x=\"18\" y=\"" + fmt("%.2f", top + ph / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " +
       fmt("%.2f", top + ph / 2) + ")\">" + xml_escape(spec.y_label) + "</text>\n</g>\n";
  // Curves.
  for (size_t k = 0; k < spec.series.size(); k++) {
    const PlotSeries& s = spec.series[k];
    const char* colour = kColours[k % (sizeof kColours / sizeof kColours[0])];
    std::string pts;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); i++)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
        pts += (pts.empty() ? "" : " ") + fmt("%.2f", px(s.x[i])) + "," + fmt("%.2f", py(s.y[i]));
    o += "<g>\n";
    if (!pts.empty())
      o += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); i++)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
        o += marker(static_cast<int>(k), px(s.x[i]), py(s.y[i]), colour) + "\n";
    o += "</g>\n";
  }
  // Legend in the lower right, where RD curves (rising to the upper right) leave room.
  const double lw = 170, lh = 10 + 20.0 * spec.series.size();
  const double lx = left + pw - lw - 10, ly = top + ph - lh - 10;
  o += "<g>\n<rect x=\"" + fmt("%.2f", lx) + "\" y=\"" + fmt("%.2f", ly) + "\" width=\"" + fmt("%.0f", lw) +
       "\" height=\"" + fmt("%.0f", lh) + "\" fill=\"white\" stroke=\"#999999\"/>\n";
  for (size_t k = 0; k < spec.series.size(); k++) {
    const char* colour = kColours[k % (sizeof kColours / sizeof kColours[0])];
    const double yy = ly + 15 + 20.0 * k;
    o += "<line x1=\"" + fmt("%.2f", lx + 8) + "\" y1=\"" + fmt("%.2f", yy) + "\" x2=\"" + fmt("%.2f", lx + 38) +
         "\" y2=\"" + fmt("%.2f", yy) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    o += marker(static_cast<int>(k), lx + 23, yy, colour) + "\n";
    o += "<text x=\"" + fmt("%.2f", lx + 46) + "\" y=\"" + fmt("%.2f", yy + 4) + "\">" +
         xml_escape(spec.series[k].name) + "</text>\n";
  }
  o += "</g>\n</svg>\n";
  return o;
}

}  // namespace gme
