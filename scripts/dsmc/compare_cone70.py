#!/usr/bin/env python3
"""Compare a kedr run of the SR3 70-degree blunted cone (cases/dsmc/cone70-sr3*.ini) with the
published numbers in scripts/dsmc/ref/cone70.csv.

    compare_cone70.py SURFACE.csv|SURFACE.vtp [--log RUN.log] [--ref REF.csv] [--profile OUT.csv]
                      [--set 1] [--alpha DEG] [--label NAME]

SURFACE is kedr's NAME-surface.csv of the 3D case (one row per triangle: x, y, z, area, ...)
or of the axisymmetric one (x, y = r, area of the band), or the 3D case's binary NAME-surface.vtp
(the triangles' corners: centroid and area from them). Each element is placed at its distance
s along the surface from the stagnation point (the meridian of scripts/dsmc/cone70.py, nearest
point to (x, r)). It prints:
  - the drag coefficient on the base area pi (25 mm)^2 from the elements' pressure and shear:
    the whole body (which must equal kedr's own Cd, checked against RUN.log when given), the
    model without the sting (what a balance on the sting measures) and the forebody alone;
  - the heat flux averaged (by area) over +-0.13 R_n about each thermocouple position, against
    the experiment and the published DSMC of the reference file, with the differences; at an
    incidence (--alpha, a 3D run whose freestream is turned towards +y) on the windward meridian
    (the body's -y side: elements within +-WEDGE degrees of it; the first thermocouple's cap
    whole), the leeward one printed beside it, against the reference rows of that incidence;
  - with --profile, the heat flux, pressure and shear in bins of 0.25 R_n over the whole surface
    to OUT.csv (for a plot against the paper's figure).
Python 3 standard library only. Exit status: 0 done (whatever the agreement), 1 a missing or
malformed file."""
import argparse
import csv
import math
import os
import re
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cone70  # noqa: E402  (the geometry: same directory)

# set 1 freestream (cases/dsmc/cone70-sr3.ini): N2 of species.ini's mass
MASS = 46.5e-27
N_INF = 3.715e20
U_INF = 1502.57
A_REF = math.pi * 0.025 ** 2
BIN_HALF = 0.13   # thermocouple bins: +-0.13 R_n about each position
WEDGE = 8.0       # at incidence: degrees either side of a meridian
PROFILE_BIN = 0.25
KINDS = ("heat_flux", "cd", "cd_nose_cone")


def fail(msg):
    sys.exit("compare_cone70.py: " + msg)


def read_csv_surface(path):
    """kedr's NAME-surface.csv: rows of numbers by column name; whether it is 3D."""
    try:
        f = open(path, newline="")
    except OSError as e:
        fail("cannot read the surface file %s: %s" % (path, e.strerror))
    with f:
        rows = list(csv.reader(f))
    if not rows:
        fail("%s is empty" % path)
    head = rows[0]
    three = "z" in head
    need = ["x", "y", "nx", "ny", "area", "pressure", "shear", "heat_flux"] + (["z", "nz"] if three else [])
    for k in need:
        if k not in head:
            fail("%s: no column '%s' (is it kedr's NAME-surface.csv?)" % (path, k))
    col = {k: head.index(k) for k in need}
    out = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(head):
            fail("%s:%d: %d fields, the header has %d" % (path, i, len(r), len(head)))
        try:
            out.append({k: float(r[col[k]]) for k in need})
        except ValueError:
            fail("%s:%d: a field is not a number" % (path, i))
    return out, three


def read_surface(path, alpha=0.0):
    """The surface elements of a CSV or (3D) .vtp file, each placed at its s / R_n with its force
    on the body along the freestream (x turned by alpha degrees towards +y: the drag)."""
    if path.endswith(".vtp"):
        rows, three = read_vtp(path), True
    else:
        rows, three = read_csv_surface(path)
    el = []
    for i, v in enumerate(rows):
        if any(math.isnan(v[k]) for k in ("area", "pressure", "shear", "heat_flux")):
            fail("%s: element %d: NaN pressure, shear or heat flux (was the surface ever "
                 "sampled?)" % (path, i))
        x, r_ = v["x"] * 1e3, (math.hypot(v["y"], v["z"]) if three else v["y"]) * 1e3
        # force on the body along the freestream direction d: -p n.d + shear t.d, t the unit
        # vector of d projected on the element's plane (kedr's definition of the 3D shear; t.d =
        # sqrt(1 - (n.d)^2)); in the axisymmetric mode (d = x) the shear is along t = (-n_y,
        # n_x) of the meridian
        ca, sa = math.cos(math.radians(alpha)), math.sin(math.radians(alpha))
        nd = v["nx"] * ca + v["ny"] * sa if three else v["nx"]
        td = math.sqrt(max(0.0, 1.0 - nd * nd)) if three else -v["ny"]
        fx = (-v["pressure"] * nd + v["shear"] * td) * v["area"]
        # azimuth about the axis from +y (3D): 180 degrees on the -y side
        phi = math.degrees(math.atan2(v["z"], v["y"])) if three else 0.0
        el.append({"x": x, "r": r_, "s": cone70.surface_distance(x, r_) / cone70.RN, "phi": phi,
                   "area": v["area"], "q": v["heat_flux"], "p": v["pressure"],
                   "tau": v["shear"], "fx": fx})
    if not el:
        fail("%s has no elements" % path)
    return el, three


def _vtp_arrays(path):
    """The arrays of kedr's binary .vtp (appended data, raw or zlib blocks as VTK writes them,
    docs/dsmc.md "Binary VTK files"): {name: list of numbers}, the points under "points"."""
    try:
        data = open(path, "rb").read()
    except OSError as e:
        fail("cannot read the surface file %s: %s" % (path, e.strerror))
    mark = data.find(b"<AppendedData")
    start = data.find(b"_", mark) + 1 if mark >= 0 else 0
    head = data[:mark].decode("ascii", "replace")
    if mark < 0 or start <= 0 or 'type="PolyData"' not in head:
        fail("%s: not a binary VTK PolyData file with appended data (write it with "
             "[output] vtk = binary or raw)" % path)
    if 'byte_order="LittleEndian"' not in head or 'header_type="UInt64"' not in head:
        fail("%s: expected byte_order LittleEndian and header_type UInt64" % path)
    zipped = "vtkZLibDataCompressor" in head
    fmt = {"Float64": "d", "Int64": "q", "Int32": "i"}
    out = {}
    for tag in re.findall(r"<DataArray [^>]*>", head):
        at = dict(re.findall(r'(\w+)="([^"]*)"', tag))
        name = at.get("Name", "points")
        if at.get("format") != "appended" or at.get("type") not in fmt or "offset" not in at:
            fail("%s: array %s is not an appended Float64/Int64/Int32 array" % (path, name))
        pos = start + int(at["offset"])
        try:
            if zipped:
                nb, _, _ = struct.unpack_from("<3Q", data, pos)
                sizes = struct.unpack_from("<%dQ" % nb, data, pos + 24)
                pos += 24 + 8 * nb
                raw = b""
                for size in sizes:
                    raw += zlib.decompress(data[pos:pos + size])
                    pos += size
            else:
                (nbytes,) = struct.unpack_from("<Q", data, pos)
                raw = data[pos + 8:pos + 8 + nbytes]
            t = fmt[at["type"]]
            w = struct.calcsize(t)
            if len(raw) % w:
                raise ValueError("length")
            out[name] = struct.unpack("<%d%s" % (len(raw) // w, t), raw)
        except (struct.error, zlib.error, ValueError):
            fail("%s: array %s is truncated or corrupt" % (path, name))
    return out


def read_vtp(path):
    """A 3D surface from kedr's NAME-surface.vtp: the rows read_surface takes from the CSV."""
    a = _vtp_arrays(path)
    for k in ("points", "offsets", "pressure", "shear", "heat_flux", "normal"):
        if k not in a:
            fail("%s: no array '%s' (is it kedr's NAME-surface.vtp?)" % (path, k))
    pts, offs = a["points"], a["offsets"]
    ne = len(offs)
    if len(a["normal"]) != 3 * ne or any(len(a[k]) != ne for k in ("pressure", "shear", "heat_flux")):
        fail("%s: the cell arrays do not match the %d cells" % (path, ne))
    rows, first = [], 0
    for e in range(ne):
        last = offs[e]
        if last - first != 3 or 3 * last > len(pts):
            fail("%s: cell %d is not a triangle (the 3D surface of an stl body)" % (path, e))
        v = [pts[3 * i:3 * i + 3] for i in range(first, last)]
        u = [v[1][k] - v[0][k] for k in range(3)]
        w = [v[2][k] - v[0][k] for k in range(3)]
        c = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
        rows.append({"x": sum(p[0] for p in v) / 3, "y": sum(p[1] for p in v) / 3,
                     "z": sum(p[2] for p in v) / 3, "nx": a["normal"][3 * e],
                     "ny": a["normal"][3 * e + 1], "nz": a["normal"][3 * e + 2],
                     "area": 0.5 * math.sqrt(c[0] ** 2 + c[1] ** 2 + c[2] ** 2),
                     "pressure": a["pressure"][e], "shear": a["shear"][e],
                     "heat_flux": a["heat_flux"][e]})
        first = last
    return rows


def read_ref(path, want_set, want_alpha):
    try:
        f = open(path, newline="")
    except OSError as e:
        fail("cannot read the reference file %s: %s" % (path, e.strerror))
    with f:
        lines = [l for l in f if not l.startswith("#")]
    rd = csv.DictReader(lines)
    cols = ["kind", "origin", "set", "alpha_deg", "s_over_Rn", "value", "unit", "uncertainty",
            "source", "note"]
    if rd.fieldnames != cols:
        fail("%s: the header must be %s" % (path, ",".join(cols)))
    out = []
    for i, r in enumerate(rd, start=2):
        if r["kind"] not in KINDS or r["origin"] not in ("exp", "dsmc"):
            fail("%s: data row %d: kind must be one of %s, origin exp or dsmc" %
                 (path, i, ", ".join(KINDS)))
        try:
            s = float(r["s_over_Rn"]) if r["s_over_Rn"] else None
            val = float(r["value"]) if r["value"] else None
            alpha = float(r["alpha_deg"])
        except ValueError:
            fail("%s: data row %d: alpha_deg, s_over_Rn or value is not a number" % (path, i))
        if r["kind"] == "heat_flux" and (s is None or r["unit"] != "kW/m2"):
            fail("%s: data row %d: a heat_flux row needs s_over_Rn and the unit kW/m2" % (path, i))
        if r["set"] == str(want_set) and alpha == want_alpha:
            out.append({"kind": r["kind"], "origin": r["origin"], "s": s, "value": val,
                        "source": r["source"]})
    return out


def log_cd(path):
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        fail("cannot read the run log %s: %s" % (path, e.strerror))
    m = re.findall(r"^body 1: Cd (\S+)", text, re.M)
    if not m:
        fail("%s: no 'body 1: Cd' line (did the run finish?)" % path)
    return float(m[-1])


def area_mean(el, lo, hi, key, phi=None):
    """The area mean of key over the elements with lo <= s < hi (and, given phi, within WEDGE
    degrees of azimuth phi), with their area."""
    def near(e):
        return phi is None or abs((e["phi"] - phi + 180.0) % 360.0 - 180.0) <= WEDGE
    sel = [e for e in el if lo <= e["s"] < hi and near(e)]
    a = sum(e["area"] for e in sel)
    if a <= 0:
        return None, 0
    return sum(e[key] * e["area"] for e in sel) / a, a


def fmt(v, spec="%.3f"):
    return "n/a" if v is None else spec % v


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("surface")
    ap.add_argument("--log")
    ap.add_argument("--ref", default=os.path.join(here, "ref", "cone70.csv"))
    ap.add_argument("--profile")
    ap.add_argument("--set", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.0,
                    help="incidence in degrees of the run (3D; the freestream turned towards +y)")
    ap.add_argument("--label", default="kedr")
    a = ap.parse_args()
    if not 0 <= a.alpha <= 30:
        fail("--alpha %g: expected 0 to 30 degrees" % a.alpha)
    el, three = read_surface(a.surface, a.alpha)
    if a.alpha and not three:
        fail("--alpha %g: the axisymmetric surface has no incidence" % a.alpha)
    ref = read_ref(a.ref, a.set, a.alpha)
    rho = N_INF * MASS
    q_inf = 0.5 * rho * U_INF ** 2
    marks = dict(cone70.landmarks())
    s_base = marks["base"] / cone70.RN
    s_sting = marks["sting"] / cone70.RN
    cd_all = sum(e["fx"] for e in el) / (q_inf * A_REF)
    cd_model = sum(e["fx"] for e in el if e["s"] < s_sting) / (q_inf * A_REF)
    cd_fore = sum(e["fx"] for e in el if e["s"] < s_base) / (q_inf * A_REF)
    s_corner = marks["corner"] / cone70.RN
    cd_nc = sum(e["fx"] for e in el if e["s"] < s_corner) / (q_inf * A_REF)
    print("SR3 70-degree blunted cone, set %d, incidence %g deg, %s (%s, %d surface elements)" %
          (a.set, a.alpha, a.label, "3D" if three else "axisymmetric", len(el)))
    print("drag on the base area %.4g m^2 (q_inf %.4g Pa):" % (A_REF, q_inf))
    print("  Cd whole body (with the 62.5 mm sting) %.4f" % cd_all)
    if a.log:
        c = log_cd(a.log)
        print("  Cd printed by kedr                     %.4f  (elements' sum %+.2f%%)" %
              (c, 100 * (cd_all - c) / c))
    print("  Cd model without the sting             %.4f" % cd_model)
    print("  Cd forebody (nose, cone, corner)       %.4f" % cd_fore)
    print("  %-39s%.4f" % ("Cd nose and cone (to r = %.2f mm)" % cone70.key_points()["r2"], cd_nc))
    for r in ref:
        if r["kind"] in ("cd", "cd_nose_cone"):
            v = r["value"]
            k, what = (cd_model, "model") if r["kind"] == "cd" else (cd_nc, "nose and cone")
            d = "" if v is None else "  kedr %+.1f%%" % (100 * (k - v) / v)
            print("  published %-4s Cd (%s) %s%s   [%s]" % (r["origin"], what, fmt(v, "%.3f"), d,
                                                        r["source"]))
    side = "" if not a.alpha else (", windward meridian (+-%g deg; the first thermocouple's "
                                   "cap whole), leeward beside it" % WEDGE)
    print("heat flux [kW/m^2], area mean over s/R_n +-%.2f about each thermocouple%s:" %
          (BIN_HALF, side))
    print("  s/R_n   kedr    exp   kedr-exp     dsmc  kedr-dsmc" + ("  leeward" if a.alpha else ""))
    pos = sorted({r["s"] for r in ref if r["kind"] == "heat_flux"})
    if not pos and a.alpha:
        print("  (no reference rows at %g degrees: %s has 0, 10, 20 and 30)" % (a.alpha, a.ref))
    for s in pos:
        wind = 180.0 if a.alpha and s > BIN_HALF else None
        q, _ = area_mean(el, max(0.0, s - BIN_HALF), s + BIN_HALF, "q", wind)
        q = None if q is None else q / 1e3
        lee = ""
        if a.alpha:
            ql, _ = area_mean(el, max(0.0, s - BIN_HALF), s + BIN_HALF, "q",
                              0.0 if wind is not None else None)
            lee = "  %7s" % fmt(None if ql is None else ql / 1e3, "%.2f")
        e = next((r["value"] for r in ref if r["kind"] == "heat_flux" and r["origin"] == "exp"
                  and r["s"] == s), None)
        d = next((r["value"] for r in ref if r["kind"] == "heat_flux" and r["origin"] == "dsmc"
                  and r["s"] == s), None)

        def diff(x):
            return "n/a" if q is None or x is None else "%+.1f%%" % (100 * (q - x) / x)
        print("  %5.2f %6s %6s %9s %8s %9s%s" % (s, fmt(q, "%.2f"), fmt(e, "%.2f"), diff(e),
                                                 fmt(d, "%.2f"), diff(d), lee))
    if a.profile:
        smax = max(e["s"] for e in el)
        nb = int(math.ceil(smax / PROFILE_BIN))
        try:
            with open(a.profile, "w") as f:
                f.write("s_over_Rn_lo,s_over_Rn_hi,area_m2,heat_flux_W_m2,pressure_Pa,shear_Pa,ch,cp\n")
                p_inf = N_INF * 1.380649e-23 * 13.3
                ph = 180.0 if a.alpha else None  # at incidence: the windward meridian
                for b in range(nb):
                    lo, hi = b * PROFILE_BIN, (b + 1) * PROFILE_BIN
                    q, ar = area_mean(el, lo, hi, "q", ph)
                    if q is None:
                        continue
                    p, _ = area_mean(el, lo, hi, "p", ph)
                    t, _ = area_mean(el, lo, hi, "tau", ph)
                    f.write("%.3f,%.3f,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n" %
                            (lo, hi, ar, q, p, t, q / (q_inf * U_INF), (p - p_inf) / q_inf))
        except OSError as e:
            fail("cannot write %s: %s" % (a.profile, e.strerror))
        print("profile (bins of %.2f R_n%s, forebody to s/R_n %.2f, base %.2f-%.2f, sting %.2f-%.2f)"
              " written to %s" % (PROFILE_BIN, ", windward meridian" if a.alpha else "",
                                  marks["corner"] / cone70.RN, s_base,
                                  marks["fillet"] / cone70.RN, s_sting,
                                  marks["sting end"] / cone70.RN, a.profile))


if __name__ == "__main__":
    main()
