// Self-written SVG plot of RD curves (one polyline with markers per run, axes with ticks and labels, legend), so
// the report needs no plotting package.
#pragma once
#include <string>
#include <vector>

namespace gme {

struct PlotSeries {
  std::string name;
  std::vector<double> x, y;  // plotted in the given order (sort by x first for an RD curve)
};

struct PlotSpec {
  std::string title, x_label, y_label;
  // Which build made the plot and when ("rdsweep gme264 ... , 2024-05-01 12:00:00 UTC"): written into the SVG's
  // <desc> and as a small line in the bottom right corner, so a plot copied into a paper keeps its origin.
  std::string provenance;
  std::vector<PlotSeries> series;
  int width = 720, height = 480;
};

// A complete SVG document. Series with no points are listed in the legend only.
std::string render_svg_plot(const PlotSpec& spec);

// Tick positions covering [lo, hi] at a 1-2-5 step giving about `target` intervals.
std::vector<double> nice_ticks(double lo, double hi, int target);

// Text with &, <, >, " escaped for XML.
std::string xml_escape(const std::string& s);

}  // namespace gme
