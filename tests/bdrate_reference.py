#!/usr/bin/env python3
"""Independent reference values for tests/test_bjontegaard.cpp.

The C++ code (rd/bjontegaard.cpp) fits and integrates by hand; this script computes the same quantities with
numpy (polyfit + polyint: VCEG-M33) and scipy (PchipInterpolator.integrate: PCHIP), so the expected values in the
test come from a separate implementation. If the PyPI package `bjontegaard` is installed, its results (which its
authors checked against the JCT-VC/JVET Excel sheets) are printed as a further cross-check.

    pip install numpy scipy [bjontegaard]
    python3 tests/bdrate_reference.py

Prints C++ initialisers that are pasted into tests/test_bjontegaard.cpp.
"""
import numpy as np
from scipy.interpolate import PchipInterpolator

# name: (anchor kbps, anchor psnr, test kbps, test psnr)
CASES = {
    # Published-style example (x265 presets, the data set of the FAU-LMS bjontegaard package README).
    "x265_presets": ([9487.76, 4593.60, 2486.44, 1358.24], [40.037, 38.615, 36.845, 34.851],
                     [9787.80, 4469.00, 2451.52, 1356.24], [40.121, 38.651, 36.970, 34.987]),
    # A JM-style QP 28/32/36/40 sweep of a VGA clip, combined PSNR (4Y+U+V)/6 (made-up but realistic numbers),
    # test slightly worse as in the seed paper's Table 2.
    "vga_qp_sweep": ([2510.4, 1301.7, 690.2, 380.9], [38.912, 36.104, 33.388, 30.871],
                     [2580.1, 1342.5, 713.8, 394.0], [38.875, 36.050, 33.321, 30.802]),
    # More than four points (least squares, not interpolation) and different counts per curve.
    "six_vs_five": ([120.0, 180.0, 260.0, 400.0, 610.0, 950.0], [29.10, 30.65, 32.02, 33.71, 35.30, 36.95],
                    [150.0, 230.0, 350.0, 540.0, 830.0], [29.80, 31.30, 32.95, 34.62, 36.20]),
    # Only partly overlapping curves (test shifted to higher rates): the integral covers the common part only.
    "partial_overlap": ([100.0, 200.0, 400.0, 800.0], [30.0, 33.2, 36.1, 38.7],
                        [300.0, 600.0, 1200.0, 2400.0], [34.6, 37.5, 40.1, 42.2]),
    # Points given in decreasing-rate order (QP 28 first), to check the sorting.
    "unsorted_input": ([686.76, 309.58, 157.11, 85.95], [40.28, 37.18, 34.24, 31.42],
                       [893.34, 407.8, 204.93, 112.75], [40.39, 37.21, 34.17, 31.24]),
}

# Knots for a direct check of the PCHIP slopes (one end slope is clipped to zero, one interior knot is flat).
SLOPE_CASES = {
    "clipped_end": ([0.0, 1.0, 2.0, 3.0, 4.5], [0.0, 0.1, 5.0, 5.1, 5.2]),
    "uneven": ([1.0, 1.5, 3.0, 3.2, 6.0], [2.0, 2.8, 3.1, 4.9, 5.0]),
}


def m33_avg(x, y, lo, hi):
    p = np.polyfit(x, y, 3)
    ip = np.polyint(p)
    return (np.polyval(ip, hi) - np.polyval(ip, lo)) / (hi - lo)


def pchip_avg(x, y, lo, hi):
    o = np.argsort(x)
    return PchipInterpolator(np.asarray(x)[o], np.asarray(y)[o]).integrate(lo, hi) / (hi - lo)


def bd(ra, pa, rt, pt, avg):
    la, lt = np.log10(ra), np.log10(rt)
    pa, pt = np.asarray(pa), np.asarray(pt)
    lo, hi = max(la.min(), lt.min()), min(la.max(), lt.max())
    bd_psnr = avg(lt, pt, lo, hi) - avg(la, pa, lo, hi)
    lo, hi = max(pa.min(), pt.min()), min(pa.max(), pt.max())
    bd_rate = (10 ** (avg(pt, lt, lo, hi) - avg(pa, la, lo, hi)) - 1) * 100
    return bd_rate, bd_psnr


def main():
    try:
        import bjontegaard as cross  # optional
    except ImportError:
        cross = None
    print("// BD cases: {name, method, bd_rate_percent, bd_psnr_db}")
    for name, (ra, pa, rt, pt) in CASES.items():
        for method, avg in (("kPolynomial", m33_avg), ("kPchip", pchip_avg)):
            r, p = bd(ra, pa, rt, pt, avg)
            print(f'{{"{name}", BdMethod::{method}, {r:.10f}, {p:.10f}}},')
            if cross is not None:
                m = "cubic" if method == "kPolynomial" else "pchip"
                kw = dict(method=m, require_matching_points=False)
                cr, cp = cross.bd_rate(ra, pa, rt, pt, **kw), cross.bd_psnr(ra, pa, rt, pt, **kw)
                print(f"//   bjontegaard package ({m}): {cr:.10f} {cp:.10f}")
    print("// PCHIP slopes: {name, {slopes}}")
    for name, (x, y) in SLOPE_CASES.items():
        d = PchipInterpolator(np.asarray(x), np.asarray(y)).derivative()(np.asarray(x))
        print(f'{{"{name}", {{' + ", ".join(f"{v:.12f}" for v in d) + "}},")
    print("// numpy.polyfit coefficients (highest power first) of six_vs_five anchor, PSNR over log10(rate)")
    ra, pa = CASES["six_vs_five"][0], CASES["six_vs_five"][1]
    print("{" + ", ".join(f"{v:.10f}" for v in np.polyfit(np.log10(ra), pa, 3)) + "}")


if __name__ == "__main__":
    main()
