#!/usr/bin/env python3
"""Compares a run of cases/dsmc/sphere-reentry-100km.ini with the published DSMC of Dogra,
Wilmoth & Moss (AIAA J. 30 (1992) 1789) in scripts/dsmc/ref/reentry-100km.csv.

    compare_reentry.py --out DIR [--name NAME] [--log RUN.log] [--ref REF.csv] [--case CASE.ini]

Reads DIR/NAME-surface.csv (the sphere's zones), DIR/NAME.csv (cell fields), DIR/NAME-stats.csv
(if there) and the run's stdout (for the Cd kedr prints), and prints:
- drag coefficient on pi R^2 (kedr's printed value, and the same integrated from the surface
  file's pressure and shear as a check);
- stagnation-point heat transfer coefficient C_H = q / (1/2 rho U^3) (the paper's definition,
  kedr's `ch` column): the area-weighted mean of the zones within 5 degrees of the nose, and the
  nose zone alone; the total heat transfer coefficient Q / (1/2 rho U^3 pi R^2);
- shock standoff on the stagnation line by two kedr measures (distance from the nose of the peak
  translational temperature, and of the point where the density first reaches twice the
  freestream's), and a short stagnation-line profile (written whole to DIR/NAME-stagline.csv);
- each species' mole fraction along the stagnation line (the cell fields' x_NAME columns; in
  the stagline file too);
- the free-molecular limits of Cd and stagnation C_H for this gas, speed and wall (closed forms
  for a diffuse sphere, Schaaf & Chambre / Bird 1994 ch. 7): bounds the transitional values lie
  below;
each against the reference value where the reference file has one. Python 3, standard library.
Exits 1 when a file is missing or malformed, never because of a disagreement."""
import argparse
import csv
import math
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import casefile  # noqa: E402 (scripts/casefile.py)

K_B = 1.380649e-23
STAG_DEG = 5.0


def fail(msg):
    print("compare_reentry: error: " + msg, file=sys.stderr)
    sys.exit(1)


def read_ini(path):
    """Sections of an INI file as {section: {key: value}} (scripts/casefile.py)."""
    try:
        ini = casefile.read_ini(path)
    except casefile.CaseFileError as e:
        fail(str(e))
    return {sec: {k: v for k, (v, _) in keys.items()} for sec, keys in ini.items()}


def num(sec, key, where, default=None):
    if key not in sec:
        if default is not None:
            return default
        fail("%s: missing key %s" % (where, key))
    try:
        return float(sec[key])
    except ValueError:
        fail("%s: %s = %r is not a number" % (where, key, sec[key]))


def nums(sec, key, where):
    try:
        return [float(v) for v in sec[key].split()]
    except (KeyError, ValueError):
        fail("%s: %s must be numbers" % (where, key))


def read_csv(path, need):
    """Rows of a CSV file as dicts; the columns in need must be there."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail("cannot read %s: %s" % (path, e.strerror))
    if not rows:
        fail("%s: no rows" % path)
    miss = [c for c in need if c not in rows[0]]
    if miss:
        fail("%s: missing column(s) %s" % (path, ", ".join(miss)))
    return rows


def fnum(row, key, path):
    v = row.get(key, "")
    if v is None or v == "":
        return None
    try:
        return float(v)
    except ValueError:
        fail("%s: %s = %r is not a number" % (path, key, v))


def gas_of(case, case_path):
    """The freestream mixture: [(name, fraction, mass, rot_dof, theta_v)]."""
    sp = case.get("species", {})
    sfile = sp.get("file", "species.ini")
    if not os.path.isabs(sfile):
        sfile = os.path.join(os.path.dirname(os.path.abspath(case_path)), sfile)
    lib = read_ini(sfile)
    gas = sp.get("gas")
    if not gas or gas not in lib:
        fail("%s: [species] gas %r is not a section of %s" % (case_path, gas, sfile))
    if "mixture" in lib[gas]:
        parts = []
        for item in lib[gas]["mixture"].split(","):
            f = item.split()
            if len(f) != 2:
                fail("%s: [%s] mixture: bad entry %r" % (sfile, gas, item))
            parts.append((f[0], float(f[1])))
    else:
        parts = [(gas, 1.0)]
    total = sum(x for _, x in parts)
    out = []
    for name, x in parts:
        if name not in lib:
            fail("%s: no species %s" % (sfile, name))
        s = lib[name]
        w = "%s [%s]" % (sfile, name)
        out.append((name, x / total, num(s, "mass", w), num(s, "rot_dof", w, 0.0),
                    num(s, "theta_v", w, 0.0)))
    return out


def e_vib(theta, t):
    """Mean vibrational energy / k of a harmonic oscillator at t (0 for theta = 0)."""
    if theta <= 0:
        return 0.0
    return theta / math.expm1(theta / t)


def free_molecular(gas, n, t, u, tw):
    """Diffuse sphere in free-molecular flow: (Cd on pi R^2, stagnation-point C_H). Cd: Schaaf &
    Chambre's closed form per species, weighted by its share of the mass flux; C_H at a surface
    element facing the flow: incident translational (1/2 m U (U^2 + 5kT/m) per molecule to
    O(exp(-s^2))), rotational (rot_dof/2 kT) and vibrational energy, less the diffuse
    re-emission at Tw (2kTw + rot_dof/2 kTw + e_vib(Tw)), over 1/2 rho U^3."""
    rho = sum(n * x * m for _, x, m, _, _ in gas)
    cd = 0.0
    q = 0.0
    for _, x, m, rot, theta in gas:
        s = u / math.sqrt(2 * K_B * t / m)
        c = ((2 * s * s + 1) / (math.sqrt(math.pi) * s ** 3) * math.exp(-s * s) +
             (4 * s ** 4 + 4 * s * s - 1) / (2 * s ** 4) * math.erf(s) +
             2 * math.sqrt(math.pi) / (3 * s) * math.sqrt(tw / t))
        cd += n * x * m / rho * c
        flux = n * x * u  # molecules per m^2 s on the nose (large speed ratio)
        e_in = 0.5 * m * (u * u + 5 * K_B * t / m) + K_B * (rot / 2 * t + e_vib(theta, t))
        e_out = K_B * (2 * tw + rot / 2 * tw + e_vib(theta, tw))
        q += flux * (e_in - e_out)
    return cd, q / (0.5 * rho * u ** 3)


def read_ref(path):
    ref = {}
    try:
        with open(path, newline="") as f:
            lines = [l for l in f if l.strip() and not l.lstrip().startswith("#")]
    except OSError as e:
        fail("cannot read %s: %s" % (path, e.strerror))
    rows = list(csv.DictReader(lines))
    if not rows or any(c not in rows[0] for c in ("quantity", "value", "uncertainty", "source")):
        fail("%s: expected columns quantity, value, uncertainty, unit, source" % path)
    for r in rows:
        v = (r["value"] or "").strip()
        u = (r["uncertainty"] or "").strip()
        try:
            ref[r["quantity"].strip()] = (float(v) if v else None, float(u) if u else None,
                                          r["source"])
        except ValueError:
            fail("%s: quantity %s: value %r / uncertainty %r are not numbers" %
                 (path, r["quantity"], v, u))
    return ref


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="kedr's output directory")
    ap.add_argument("--name", default="sphere-reentry-100km", help="case name (file name less .ini)")
    ap.add_argument("--log", help="kedr dsmc's stdout (for the printed Cd and mcs/mfp)")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--ref", default=os.path.join(here, "ref", "reentry-100km.csv"))
    ap.add_argument("--case", default=os.path.join(here, "..", "..", "cases", "dsmc",
                                                   "sphere-reentry-100km.ini"))
    a = ap.parse_args()

    case = read_ini(a.case)
    fs, body, wall = case.get("freestream", {}), case.get("body", {}), case.get("wall", {})
    if body.get("type") != "circle":
        fail("%s: expected [body] type = circle (the sphere of the axisymmetric case)" % a.case)
    xc = nums(body, "center", a.case)[0]
    radius = num(body, "radius", a.case)
    u = num(fs, "velocity_x", a.case)
    t_inf = num(fs, "temperature", a.case)
    tw = num(wall, "temperature", a.case)
    gas = gas_of(case, a.case)
    mbar = sum(x * m for _, x, m, _, _ in gas)
    if "density" in fs:
        rho = num(fs, "density", a.case)
        n_inf = rho / mbar
    else:
        n_inf = num(fs, "number_density", a.case)
        rho = n_inf * mbar
    ref = read_ref(a.ref)

    # Surface: the sphere's zones (area, position, normal into the gas, p, tau, q, ch).
    spath = os.path.join(a.out, a.name + "-surface.csv")
    zones = read_csv(spath, ["x", "y", "nx", "ny", "area", "pressure", "shear", "heat_flux",
                             "ch", "hits_per_step"])
    drag = heat = 0.0
    stag_a = stag_ch = 0.0
    nose = None
    for z in zones:
        x, y, nx, ny = (fnum(z, k, spath) for k in ("x", "y", "nx", "ny"))
        area, p, tau, q, ch = (fnum(z, k, spath) for k in ("area", "pressure", "shear",
                                                             "heat_flux", "ch"))
        if None in (x, y, nx, ny, area, p, tau, q, ch):
            fail("%s: a zone with an empty field" % spath)
        drag += (-p * nx + tau * (-ny)) * area  # the gas pushes along -n; shear along t = (-ny, nx)
        heat += q * area
        ang = math.degrees(math.atan2(y, xc - x))
        if ang < STAG_DEG:
            stag_a += area
            stag_ch += ch * area
        if nose is None or ang < nose[0]:
            nose = (ang, ch)
    if stag_a <= 0:
        fail("%s: no zone within %g degrees of the nose" % (spath, STAG_DEG))
    q_ref = 0.5 * rho * u ** 2 * math.pi * radius ** 2
    cd_surface = drag / q_ref
    ch_stag = stag_ch / stag_a
    cq = heat / (0.5 * rho * u ** 3 * math.pi * radius ** 2)

    cd_log = mcs = None
    if a.log:
        try:
            text = open(a.log).read()
        except OSError as e:
            fail("cannot read %s: %s" % (a.log, e.strerror))
        m = re.search(r"body 1: Cd ([-+0-9.eE]+)", text)
        if not m:
            fail("%s: no 'body 1: Cd' line (did the run finish?)" % a.log)
        cd_log = float(m.group(1))
        m = re.search(r"mean collision separation / mean free path over the run: ([-+0-9.eE]+)",
                      text)
        mcs = float(m.group(1)) if m else None

    # Stagnation line: the row of rings next to the axis, upstream of the nose.
    fpath = os.path.join(a.out, a.name + ".csv")
    cells = read_csv(fpath, ["i", "j", "x", "number_density", "temperature", "temperature_rot",
                             "temperature_overall", "mfp_over_cell"])
    has_vib = "temperature_vib" in cells[0]
    # a mixture's mole fractions x_NAME, in the file's order of species
    species = [k[2:] for k in cells[0] if k.startswith("x_")]
    line = []
    x_nose = xc - radius
    for c in cells:
        if c["j"] != "0":
            continue
        x = fnum(c, "x", fpath)
        nd = fnum(c, "number_density", fpath)
        if x is None or nd is None or x >= x_nose:
            continue
        line.append((x, nd, fnum(c, "temperature", fpath), fnum(c, "temperature_rot", fpath),
                     fnum(c, "temperature_vib", fpath) if has_vib else None,
                     fnum(c, "temperature_overall", fpath), fnum(c, "mfp_over_cell", fpath),
                     [fnum(c, "x_" + s, fpath) for s in species]))
    line.sort()
    if len(line) < 3:
        fail("%s: fewer than 3 sampled cells on the stagnation line" % fpath)
    lpath = os.path.join(a.out, a.name + "-stagline.csv")
    with open(lpath, "w") as f:
        f.write("x,distance_from_nose,n_over_n_inf,temperature,temperature_rot,temperature_vib,"
                "temperature_overall,mfp_over_cell%s\n" % "".join(",x_" + s for s in species))
        for x, nd, t, tr, tv, to, mfp, xs in line:
            f.write("%.6g,%.6g,%.6g" % (x, x_nose - x, nd / n_inf) +
                    "".join("," + ("" if v is None else "%.6g" % v)
                            for v in (t, tr, tv, to, mfp, *xs)) + "\n")
    t_peak = max((r for r in line if r[2] is not None), key=lambda r: r[2])
    shock_t = x_nose - t_peak[0]
    dens2 = next((r for r in line if r[1] >= 2 * n_inf), None)
    shock_n = x_nose - dens2[0] if dens2 else None
    wall_cell = line[-1]

    react = None
    stpath = os.path.join(a.out, a.name + "-stats.csv")
    if os.path.exists(stpath):
        srows = read_csv(stpath, ["step"])
        start = int(num(case.get("sample", {}), "start", a.case, 0))
        vals = [fnum(r, "reactions", stpath) for r in srows
                if "reactions" in r and int(r["step"]) > start]
        vals = [v for v in vals if v is not None]
        react = sum(vals) / len(vals) if vals else None

    cd_fm, ch_fm = free_molecular(gas, n_inf, t_inf, u, tw)

    print()
    print("re-entry sphere: R = %g m, U = %g m/s, T = %g K, rho = %.4g kg/m^3 (n = %.4g m^-3), "
          "Tw = %g K" % (radius, u, t_inf, rho, n_inf, tw))
    print("%-36s %12s %12s %10s  %s" % ("quantity", "kedr", "published", "diff", "reference"))

    def row(label, key, val, fmt="%.4f"):
        r = ref.get(key) if key else None
        pub = r[0] if r else None
        kv = "-" if val is None else fmt % val
        if pub is None:
            pv, dv = "-", "-"
            src = "(not entered in the reference file)" if r else ""
        else:
            pv = fmt % pub + ("" if r[1] is None else " +-" + fmt % r[1])
            dv = "-" if val is None else "%+.1f%%" % (100 * (val / pub - 1))
            src = r[2].strip()
        print("%-36s %12s %12s %10s  %s" % (label, kv, pv, dv, src))

    row("Cd (printed by kedr)", "cd", cd_log)
    row("Cd (integrated from the surface)", "cd", cd_surface)
    row("C_H stagnation (zones < %g deg)" % STAG_DEG, "ch_stag", ch_stag)
    row("C_H nose zone (%.2f deg)" % nose[0], None, nose[1])
    row("C_Q total heat / (q U pi R^2)", None, cq)
    row("standoff: peak T_tr [m]", "standoff", shock_t, "%.4g")
    row("standoff: n = 2 n_inf [m]", "standoff", shock_n, "%.4g")
    row("free-molecular Cd (bound)", None, cd_fm)
    row("free-molecular C_H stagnation", None, ch_fm)
    print()
    print("stagnation line (%d rings; whole profile in %s):" % (len(line), lpath))
    print("  %10s %10s %10s %10s %10s %10s" % ("dist [m]", "n/n_inf", "T [K]", "T_rot [K]",
                                                 "T_vib [K]", "mfp/cell"))
    step = max(1, len(line) // 12)
    pick = line[::step]
    if pick[-1] is not line[-1]:
        pick.append(line[-1])
    for x, nd, t, tr, tv, to, mfp, xs in pick:
        print("  %10.4f %10.3g %10s %10s %10s %10s" % (
            x_nose - x, nd / n_inf, *("-" if v is None else "%.0f" % v for v in (t, tr, tv)),
            "-" if mfp is None else "%.3g" % mfp))
    print("last ring before the nose: T %s K, n/n_inf %.3g, mean free path / cell %s" % (
        "-" if wall_cell[2] is None else "%.0f" % wall_cell[2], wall_cell[1] / n_inf,
        "-" if wall_cell[6] is None else "%.3g" % wall_cell[6]))
    if mcs is not None:
        print("mean collision separation / mean free path over the run: %.3g" % mcs)
    if react is not None:
        print("reactions per step while sampling (stats rows): %.4g" % react)
    if species:
        print()
        print("mole fractions along the stagnation line (no published profile in the reference "
              "file to compare with):")
        print("  %10s" % "dist [m]" + "".join(" %9s" % ("x_" + s) for s in species))
        for x, nd, t, tr, tv, to, mfp, xs in pick:
            print("  %10.4f" % (x_nose - x) +
                  "".join(" %9s" % ("-" if v is None else "%.4f" % v) for v in xs))
    else:
        print("species profiles: none (a simple gas)")
    print("compare_reentry: published values missing for: %s" % (
        ", ".join(k for k in ("cd", "ch_stag", "standoff") if not ref.get(k) or
                  ref[k][0] is None) or "none"))


if __name__ == "__main__":
    main()
