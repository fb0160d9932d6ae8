#!/usr/bin/env python3
"""Compares a `kedr dsmc` run of the Lofthouse cylinder (argon past a circular cylinder;
Lofthouse, Boyd & Wright, Phys. Fluids 19, 027105, 2007) with the published numbers in
scripts/dsmc/ref/lofthouse.csv and with two closed-form limits computed here from the case file:

- the continuum stagnation pressure behind a normal shock (Rayleigh pitot formula, gamma = 5/3);
- free-molecular flow (no collisions) past the same cylinder with diffuse walls at T_w: the
  local pressure and shear of Schaaf & Chambre (1961; Bird 1994 ch. 7) and the heat flux of a
  monatomic gas, integrated over the surface (the drag also from its closed form).

A transitional flow (Kn 0.01 .. 0.25) lies between the two: its stagnation pressure near the
pitot value, its drag and heat flux below the free-molecular ones.

usage: compare_lofthouse.py --case CASE.ini --surface NAME-surface.csv [--log kedr.log]
                            [--ref ref/lofthouse.csv] [--id m10-kn001] [--label TEXT]

The surface CSV is the one `kedr dsmc` writes (element, body, x, y, nx, ny, length,
hits_per_step, pressure, shear, heat_flux, cp, cf, ch); the log is the run's stdout (its
`body 1: Cd ...` line). Prints the comparison; exits 0 whatever the agreement, 2 when a file is
missing or malformed. Plain Python 3, no packages."""
import argparse
import csv
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import casefile  # noqa: E402 (scripts/casefile.py)

KB = 1.380649e-23
SURFACE_COLUMNS = ("element", "body", "x", "y", "nx", "ny", "length", "hits_per_step",
                   "pressure", "shear", "heat_flux", "cp", "cf", "ch")
REF_COLUMNS = ("case", "quantity", "value", "unit", "uncertainty", "source")


def fail(msg):
    casefile.die("compare_lofthouse", msg)


def read_ini(path):
    return casefile.read_ini_or_exit(path, "compare_lofthouse")


def ini_num(ini, path, sec, key, default=None):
    if sec in ini and key in ini[sec]:
        v, no = ini[sec][key]
        try:
            return float(v)
        except ValueError:
            fail(f"{path}:{no}: [{sec}] {key} = '{v}' is not a number")
    if default is None:
        fail(f"{path}: [{sec}] {key} missing (the comparison needs it)")
    return default


def case_conditions(path):
    """Freestream, wall and cylinder of a case file, and the gas mass from its species file."""
    ini = read_ini(path)
    c = {}
    c["n"] = ini_num(ini, path, "freestream", "number_density")
    c["T"] = ini_num(ini, path, "freestream", "temperature")
    c["U"] = math.hypot(ini_num(ini, path, "freestream", "velocity_x", 0.0),
                        ini_num(ini, path, "freestream", "velocity_y", 0.0))
    if c["U"] <= 0:
        fail(f"{path}: [freestream] has no velocity")
    body = ini.get("body", {})
    if body.get("type", ("", 0))[0] != "circle":
        fail(f"{path}: [body] type must be circle for this comparison")
    c["R"] = ini_num(ini, path, "body", "radius")
    ctr = body.get("center", ("0 0", 0))[0].replace(",", " ").split()
    try:
        c["cx"], c["cy"] = float(ctr[0]), float(ctr[1])
    except (ValueError, IndexError):
        fail(f"{path}: [body] center = '{' '.join(ctr)}' is not two numbers")
    c["Tw"] = ini_num(ini, path, "body", "temperature", -1.0)
    if c["Tw"] < 0:
        c["Tw"] = ini_num(ini, path, "wall", "temperature")
    model = ini.get("wall", {}).get("model", ("diffuse", 0))[0]
    if model != "diffuse":
        fail(f"{path}: [wall] model = {model}: the free-molecular limits here assume diffuse walls")
    spec = ini.get("species", {})
    sfile = spec.get("file", ("species.ini", 0))[0]
    if not os.path.isabs(sfile):
        sfile = os.path.join(os.path.dirname(os.path.abspath(path)), sfile)
    gas = spec.get("gas", ("", 0))[0]
    sp = read_ini(sfile)
    if gas not in sp or "mass" not in sp[gas]:
        fail(f"{sfile}: no species [{gas}] with a mass (needed for the density)")
    c["m"] = ini_num(sp, sfile, gas, "mass")
    c["gas"] = gas
    c["rho"] = c["n"] * c["m"]
    c["q_inf"] = 0.5 * c["rho"] * c["U"] ** 2
    c["Rgas"] = KB / c["m"]
    c["s"] = c["U"] / math.sqrt(2 * c["Rgas"] * c["T"])
    c["mach"] = c["U"] / math.sqrt(5.0 / 3.0 * c["Rgas"] * c["T"])
    c["p_inf"] = c["n"] * KB * c["T"]
    return c


def read_surface(path):
    if not os.path.isfile(path):
        fail(f"{path}: no such file (did the run sample anything?)")
    rows = []
    with open(path, newline="") as fp:
        rd = csv.DictReader(fp)
        if rd.fieldnames is None:
            fail(f"{path}: empty file")
        miss = [k for k in SURFACE_COLUMNS if k not in rd.fieldnames]
        if miss:
            fail(f"{path}: missing columns {', '.join(miss)}")
        for no, r in enumerate(rd, 2):
            try:
                rows.append({k: float(r[k]) for k in SURFACE_COLUMNS})
            except (TypeError, ValueError):
                fail(f"{path}:{no}: a value is not a number")
    if len(rows) < 8:
        fail(f"{path}: {len(rows)} elements; a circle has at least 8")
    return rows


def read_log(path):
    """Cd, drag [N/m] and sampled steps from the `body 1: Cd ...` line of kedr's stdout."""
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    with open(path, errors="replace") as fp:
        for line in fp:
            if line.startswith("body 1: Cd "):
                t = line.replace("(", " ").replace(",", " ").split()
                try:
                    cd = float(t[3])
                    drag = float(t[t.index("drag") + 1])
                    steps = int(t[t.index("sampled)") - 2]) if "sampled)" in t else 0
                except (ValueError, IndexError):
                    fail(f"{path}: malformed line '{line.strip()}'")
                return {"cd": cd, "drag": drag, "steps": steps}
    fail(f"{path}: no 'body 1: Cd' line (the run did not finish or sampled nothing)")


def read_ref(path, case_id):
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    with open(path, newline="") as fp:
        lines = [ln for ln in fp if ln.strip() and not ln.lstrip().startswith("#")]
    rd = csv.DictReader(lines)
    if rd.fieldnames is None or any(k not in rd.fieldnames for k in REF_COLUMNS):
        fail(f"{path}: the header must name {', '.join(REF_COLUMNS)}")
    out = []
    for r in rd:
        if r["case"] != case_id:
            continue
        v = r["value"].strip()
        u = r["uncertainty"].strip()
        try:
            r["value"] = float(v) if v else None
            r["uncertainty"] = float(u) if u else None
        except ValueError:
            fail(f"{path}: case {case_id}, {r['quantity']}: value '{v}' or uncertainty '{u}' "
                 "is not a number")
        out.append(r)
    return out


# ---- free-molecular local coefficients, diffuse walls (Schaaf & Chambre 1961; Bird 1994 ch. 7)
def chi(sn):
    return math.exp(-sn * sn) + math.sqrt(math.pi) * sn * (1 + math.erf(sn))


def fm_cp(s, sn, tr):
    """Pressure over q_inf on an element whose normal speed ratio (into the wall) is sn."""
    return ((sn / math.sqrt(math.pi) * math.exp(-sn * sn) + (0.5 + sn * sn) * (1 + math.erf(sn)))
            / (s * s) + math.sqrt(tr) * chi(sn) / (2 * s * s))


def fm_cf(s, sn, cos_t):
    """Shear over q_inf; cos_t the cosine of the angle between the flow and the surface."""
    return cos_t * chi(sn) / (math.sqrt(math.pi) * s)


def fm_ch(s, sn, tr):
    """Net heat flux into the wall over 1/2 rho U^3, monatomic gas: incident energy flux
    rho R T sqrt(RT / 2 pi) [(s^2 + 5/2) chi - e^{-sn^2} / 2], re-emitted 2 k T_w a molecule."""
    q = (s * s + 2.5 - 2 * tr) * chi(sn) - 0.5 * math.exp(-sn * sn)
    # rho R T sqrt(RT/2pi) / (1/2 rho U^3) = 1 / (2 sqrt(pi) s^3), with U = s sqrt(2RT)
    return q / (2 * math.sqrt(math.pi) * s ** 3)


def bessel_i(nu, x):
    """Modified Bessel function I_nu(x), nu = 0 or 1, by its series (x up to a few hundred)."""
    term = (x / 2) ** nu / math.factorial(nu)
    total, k = term, 0
    while True:
        k += 1
        term *= (x / 2) ** 2 / (k * (k + nu))
        total += term
        if term < 1e-17 * total:
            return total


def fm_cylinder(c, nphi=3600):
    """Free-molecular profiles (phi from the stagnation line) and the drag coefficient on D."""
    s, tr = c["s"], c["Tw"] / c["T"]
    prof, cd = [], 0.0
    for i in range(nphi):
        phi = (i + 0.5) * math.pi / nphi              # 0 .. pi over the upper half
        sn = s * math.cos(phi)                        # flow along +x, normal (-cos, sin)
        cp, cf = fm_cp(s, sn, tr), fm_cf(s, sn, abs(math.sin(phi)))
        # force along x per unit span on an element R dphi: pressure along -n, shear along the
        # surface in the flow direction (+x component sin(phi)); both halves
        cd += 2 * (cp * math.cos(phi) + cf * math.sin(phi)) * (math.pi / nphi) * c["R"] / (2 * c["R"])
        prof.append((math.degrees(phi), cp, cf, fm_ch(s, sn, tr)))
    x = s * s / 2
    closed = (math.sqrt(math.pi) / s * math.exp(-x) * ((s * s + 1.5) * bessel_i(0, x)
              + (s * s + 0.5) * bessel_i(1, x)) + math.pi ** 1.5 / (4 * s) * math.sqrt(tr))
    return prof, cd, closed


def pitot(mach, g=5.0 / 3.0):
    """Stagnation pressure behind a normal shock over the freestream static pressure."""
    m2 = mach * mach
    return (((g + 1) ** 2 * m2 / (4 * g * m2 - 2 * (g - 1))) ** (g / (g - 1))
            * (1 - g + 2 * g * m2) / (g + 1))


# ---- the run's surface, folded onto the upper half and binned by angle from the stagnation line
def profiles(rows, c, width):
    nb = int(round(180.0 / width))
    acc = [[0.0] * 5 for _ in range(nb)]            # length, p L, tau L, q L, hits
    fx = 0.0
    for r in rows:
        if r["body"] != 1:
            continue
        dx, dy = r["x"] - c["cx"], r["y"] - c["cy"]
        phi = math.degrees(math.atan2(abs(dy), -dx))
        L = r["length"]
        # shear is the force on the wall along t = (-ny, nx); along the flow around the body
        # that is -tau on the upper half and +tau on the lower one
        tau = -r["shear"] if dy >= 0 else r["shear"]
        b = min(int(phi / width), nb - 1)
        a = acc[b]
        a[0] += L
        a[1] += r["pressure"] * L
        a[2] += tau * L
        a[3] += r["heat_flux"] * L
        a[4] += r["hits_per_step"]
        fx += L * (-r["pressure"] * r["nx"] - r["shear"] * r["ny"])
    out = []
    for b, a in enumerate(acc):
        if a[0] > 0:
            out.append({"phi": (b + 0.5) * width, "p": a[1] / a[0], "tau": a[2] / a[0],
                        "q": a[3] / a[0], "hits": a[4]})
    if not out:
        fail("the surface file has no element of body 1")
    return out, fx


def near(prof, phi):
    return min(prof, key=lambda b: abs(b["phi"] - phi))


def fmt(v, unit=""):
    if v is None:
        return "-"
    a = abs(v)
    s = f"{v:.4g}" if (a == 0 or 1e-3 <= a < 1e5) else f"{v:.3e}"
    return s + (" " + unit if unit else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", required=True, help="the case file the run used")
    ap.add_argument("--surface", required=True, help="DIR/NAME-surface.csv")
    ap.add_argument("--log", help="kedr's stdout (for the printed Cd and drag)")
    ap.add_argument("--ref", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "ref", "lofthouse.csv"))
    ap.add_argument("--id", default="m10-kn001", help="the case's rows in the reference file")
    ap.add_argument("--label", default="", help="printed with the results (e.g. 'cpu, SMALL')")
    ap.add_argument("--bin", type=float, default=3.0, help="angle bin width, degrees (default 3)")
    a = ap.parse_args()
    if not 0.5 <= a.bin <= 30:
        fail(f"--bin {a.bin}: expected 0.5 to 30 degrees")

    c = case_conditions(a.case)
    rows = read_surface(a.surface)
    log = read_log(a.log) if a.log else None
    ref = read_ref(a.ref, a.id)
    prof, fx = profiles(rows, c, a.bin)
    fm_prof, fm_cd, fm_cd_closed = fm_cylinder(c)
    D, q_inf, h_inf = 2 * c["R"], c["q_inf"], 0.5 * c["rho"] * c["U"] ** 3

    stag = prof[0]
    peak_p = max(prof, key=lambda b: b["p"])
    peak_tau = max(prof, key=lambda b: abs(b["tau"]))
    peak_q = max(prof, key=lambda b: b["q"])
    kedr = {
        "drag": log["drag"] if log else fx,
        "cd": log["cd"] if log else fx / (q_inf * D),
        "stagnation_pressure": stag["p"],
        "peak_pressure": peak_p["p"],
        "peak_shear": abs(peak_tau["tau"]),
        "peak_shear_angle": peak_tau["phi"],
        "stagnation_heat_flux": stag["q"],
        "peak_heat_flux": peak_q["q"],
    }
    for r in ref:
        q = r["quantity"]
        if "@" in q:                                   # a profile point, e.g. pressure@45
            what, ang = q.split("@", 1)
            key = {"pressure": "p", "shear": "tau", "heat_flux": "q"}.get(what)
            try:
                angle = float(ang)
            except ValueError:
                angle = None
            if key is None or angle is None:
                fail(f"{a.ref}: quantity '{q}': expected pressure@, shear@ or heat_flux@DEGREES")
            b = near(prof, angle)
            kedr[q] = abs(b[key]) if key == "tau" else b[key]

    print(f"Lofthouse cylinder, case {a.id}" + (f" ({a.label})" if a.label else ""))
    print(f"  {c['gas']}: n {c['n']:.4g} m^-3, T {c['T']:g} K, U {c['U']:g} m/s (Mach "
          f"{c['mach']:.2f}, s {c['s']:.3f}), wall {c['Tw']:g} K, D {D:g} m; q_inf "
          f"{q_inf:.4g} Pa, 1/2 rho U^3 {h_inf:.4g} W/m^2")
    nsteps = log["steps"] if log else 0
    hits0 = stag["hits"] * nsteps
    print(f"  {len(rows)} surface elements in {len(prof)} bins of {a.bin:g} degrees (both halves "
          f"folded); {nsteps} sampled steps" + (f", {hits0:.3g} wall hits in the stagnation bin "
                                                f"(noise about {100 / math.sqrt(hits0):.2g}%)"
                                                if hits0 > 0 else ""))
    if log:
        d = (fx - log["drag"]) / log["drag"] * 100 if log["drag"] else float("nan")
        print(f"  drag: printed {log['drag']:.5g} N/m, integrated from the surface file "
              f"{fx:.5g} N/m ({d:+.2g}%)")

    # the case's conditions against the published ones
    cond = {"number_density": c["n"], "temperature": c["T"], "velocity": c["U"],
            "wall_temperature": c["Tw"], "diameter": D}
    bad = []
    for r in ref:
        if r["quantity"] in cond and r["value"] is not None:
            if abs(cond[r["quantity"]] - r["value"]) > 1e-3 * abs(r["value"]):
                bad.append(f"{r['quantity']} {cond[r['quantity']]:g} (published {r['value']:g})")
    if bad:
        print("  NOTE: the case's conditions differ from the published ones: " + "; ".join(bad))

    print()
    print("  kedr against the published values")
    print(f"  {'quantity':<24} {'kedr':>14} {'published':>14} {'diff':>8}  source")
    compared = missing = 0
    for r in ref:
        q = r["quantity"]
        if q in cond:
            continue
        if q not in kedr:
            print(f"  {q:<24} {'?':>14} {fmt(r['value'], ''):>14} {'':>8}  (unknown quantity: "
                  "not compared)")
            continue
        k, v = kedr[q], r["value"]
        unit = r["unit"]
        if v is None:
            missing += 1
            print(f"  {q:<24} {fmt(k):>14} {'not filled':>14} {'':>8}  {r['source']}")
            continue
        compared += 1
        d = (k - v) / v * 100 if v else float("nan")
        unc = f" +-{r['uncertainty']:g}" if r["uncertainty"] is not None else ""
        print(f"  {q:<24} {fmt(k):>14} {fmt(v):>14} {d:>+7.1f}%  [{unit}{unc}] {r['source']}")
    if not ref:
        print(f"  (the reference file has no rows for case {a.id})")

    print()
    print("  kedr against the closed-form limits")
    p0 = pitot(c["mach"]) * c["p_inf"]
    fm0 = fm_prof[0]
    fm_tau = max(fm_prof, key=lambda t: t[2])
    lim = [
        ("stagnation pressure", kedr["stagnation_pressure"], p0, "Pa",
         "continuum: Rayleigh pitot, gamma 5/3"),
        ("stagnation pressure", kedr["stagnation_pressure"], fm0[1] * q_inf + 0.0, "Pa",
         "free-molecular"),
        ("peak shear", kedr["peak_shear"], fm_tau[2] * q_inf, "Pa",
         f"free-molecular (at {fm_tau[0]:.0f} deg; kedr at {kedr['peak_shear_angle']:.0f})"),
        ("stagnation heat flux", kedr["stagnation_heat_flux"], fm0[3] * h_inf, "W/m^2",
         "free-molecular"),
        ("drag", kedr["drag"], fm_cd * q_inf * D, "N/m",
         f"free-molecular (Cd {fm_cd:.4f}; closed form {fm_cd_closed:.4f})"),
    ]
    print(f"  {'quantity':<24} {'kedr':>14} {'limit':>14} {'ratio':>8}  limit")
    for name, k, v, unit, what in lim:
        print(f"  {name:<24} {fmt(k):>14} {fmt(v):>14} {k / v:>8.3f}  [{unit}] {what}")

    print()
    print("  surface profiles (angle from the stagnation line; kedr, and free-molecular in ())")
    print(f"  {'deg':>5} {'p [Pa]':>10} {'Cp':>7} {'tau [Pa]':>10} {'Cf':>8} {'q [W/m^2]':>11} "
          f"{'Ch':>8}   {'Cp_fm':>6} {'Cf_fm':>6} {'Ch_fm':>6}")
    for target in range(0, 181, 15):
        b = near(prof, target)
        f = min(fm_prof, key=lambda t: abs(t[0] - b["phi"]))
        print(f"  {b['phi']:5.1f} {b['p']:10.4g} {(b['p'] - c['p_inf']) / q_inf:7.3f} "
              f"{b['tau']:10.4g} {b['tau'] / q_inf:8.4f} {b['q']:11.4g} {b['q'] / h_inf:8.4f}   "
              f"({f[1]:5.3f} {f[2]:6.4f} {f[3]:6.4f})")

    print()
    print(f"SUMMARY lofthouse {a.id}{' ' + a.label if a.label else ''}: Cd {kedr['cd']:.4f}, "
          f"drag {kedr['drag']:.4g} N/m, p_stag {kedr['stagnation_pressure']:.4g} Pa "
          f"({kedr['stagnation_pressure'] / p0:.3f} of pitot), q_stag "
          f"{kedr['stagnation_heat_flux']:.4g} W/m^2, peak shear {kedr['peak_shear']:.4g} Pa at "
          f"{kedr['peak_shear_angle']:.0f} deg; published values compared: {compared}, "
          f"not filled: {missing}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
