#!/usr/bin/env python3
"""Compares the in-line force of a `kedr flow` run of the cylinder oscillating in fluid at rest
(cases/flow/oscillating_cylinder.ini: Dütsch, Durst, Becker & Lienhart, J. Fluid Mech. 360,
249-271, 1998, Re = 100, KC = 5) with the published force history in scripts/flow/ref/dutsch.csv.

Both are written in the paper's variables: the phase t/T of the motion x(t) = -A sin(2 pi t/T)
and the force on the cylinder along x over rho U_max^2 D. The script prints

- the run's force at each published phase (the mean over the periods used, and the spread
  between them) next to the published value, and the rms and largest difference;
- Morison's form for a body moving in fluid at rest,

      F(t) = -C_a rho (pi D^2 / 4) dU/dt - 1/2 rho C_d D |U| U,

  U(t) the cylinder's velocity, fitted by least squares (weighted by the time step, i.e. the
  integral over the periods) to the run over whole periods after the start-up, each period
  alone and all together, and fitted to the published points (evenly weighted); with the rms
  misfit of each fit over the peak force. The form's two terms are orthogonal over a period:
  C_a is the part of the force in phase with the acceleration, C_d the part in phase with U|U|.
  The published C_a, C_d rows of the reference file are compared when they hold a value.

usage: compare_dutsch.py --forces NAME-BODY.csv[.gz] --case CASE.ini [--body NAME]
                         [--ref ref/dutsch.csv] [--skip N] [--label TEXT]

--forces is the body history `kedr flow` writes (step, time, x, y, u, v, fx, fy, mz, cd, cl; a
.gz copy is read as well); --case the case file of the run (the body's diameter, amplitude,
frequency, phase, reference velocity and length, and nu); --skip the whole periods left out at
the start (default 1: the start-up). Exits 0 whatever the agreement, 2 when a file is missing or
malformed or the run holds no whole period after the skipped ones. Plain Python 3, no packages."""
import argparse
import csv
import gzip
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import casefile  # noqa: E402 (scripts/casefile.py)

FORCE_COLUMNS = ("step", "time", "x", "y", "u", "v", "fx", "fy", "mz", "cd", "cl")
REF_COLUMNS = ("quantity", "phase", "value", "unit", "uncertainty", "source")


def fail(msg):
    casefile.die("compare_dutsch", msg)


def read_ini(path):
    return casefile.read_ini_or_exit(path, "compare_dutsch")


def numbers(path, sec, key, entry, count):
    text, no = entry
    try:
        vals = [float(w) for w in text.split()]
    except ValueError:
        vals = []
    if len(vals) != count or not all(math.isfinite(v) for v in vals):
        fail(f"{path}:{no}: [{sec}] {key} = '{text}': expected {count} number(s)")
    return vals


def body_motion(path, ini, name):
    """The oscillating circle of the case: diameter, amplitude along x, f, phase (deg),
    U_ref, L_ref, and nu."""
    bodies = [s for s in ini if s.startswith("body.")]
    if name:
        sec = "body." + name
        if sec not in ini:
            fail(f"{path}: no section [{sec}] (bodies: {', '.join(bodies) or 'none'})")
    else:
        moving = [s for s in bodies if "amplitude" in ini[s]]
        if len(moving) != 1:
            fail(f"{path}: expected one body with an amplitude, found {len(moving)}; "
                 "name it with --body")
        sec = moving[0]
    b = ini[sec]
    shape = b.get("shape", ("", 0))[0]
    if shape != "circle":
        fail(f"{path}: [{sec}] shape = '{shape}': expected circle (a 2D cylinder)")
    for key in ("diameter", "amplitude", "frequency"):
        if key not in b:
            fail(f"{path}: [{sec}] has no '{key}'")
    d = numbers(path, sec, "diameter", b["diameter"], 1)[0]
    amp = numbers(path, sec, "amplitude", b["amplitude"], 2)
    f = numbers(path, sec, "frequency", b["frequency"], 1)[0]
    phase = numbers(path, sec, "phase", b["phase"], 1)[0] if "phase" in b else 0.0
    if d <= 0 or f <= 0:
        fail(f"{path}: [{sec}] diameter and frequency must be positive")
    if amp[0] == 0 or amp[1] != 0:
        fail(f"{path}: [{sec}] amplitude = {amp[0]:g} {amp[1]:g}: expected an in-line "
             "oscillation along x (the y amplitude 0)")
    if "velocity" in b:
        fail(f"{path}: [{sec}] has a 'velocity': expected a body oscillating in fluid at rest")
    umax = 2 * math.pi * f * abs(amp[0])
    uref = numbers(path, sec, "reference_velocity", b["reference_velocity"], 1)[0] \
        if "reference_velocity" in b else umax
    lref = numbers(path, sec, "reference_length", b["reference_length"], 1)[0] \
        if "reference_length" in b else d
    fluid = ini.get("fluid", {})
    if "nu" not in fluid:
        fail(f"{path}: [fluid] has no 'nu'")
    nu = numbers(path, "fluid", "nu", fluid["nu"], 1)[0]
    if uref <= 0 or lref <= 0 or nu <= 0:
        fail(f"{path}: [{sec}] reference_velocity, reference_length and [fluid] nu must be "
             "positive")
    return dict(name=sec[5:], d=d, amp=amp[0], f=f, phase=phase, umax=umax, uref=uref,
                lref=lref, nu=nu)


def read_forces(path):
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    opener = gzip.open if path.endswith(".gz") else open
    rows = []
    try:
        with opener(path, "rt") as fp:
            rd = csv.reader(fp)
            head = next(rd, None)
            if head is None or tuple(h.strip() for h in head[:len(FORCE_COLUMNS)]) != FORCE_COLUMNS:
                fail(f"{path}:1: expected the columns {','.join(FORCE_COLUMNS)}")
            for no, r in enumerate(rd, 2):
                if not r:
                    continue
                try:
                    t, cd = float(r[1]), float(r[9])
                except (ValueError, IndexError):
                    fail(f"{path}:{no}: malformed row '{','.join(r)}'")
                if not (math.isfinite(t) and math.isfinite(cd)):
                    fail(f"{path}:{no}: time or cd is not a finite number")
                if rows and t <= rows[-1][0]:
                    fail(f"{path}:{no}: time {t:g} does not increase")
                rows.append((t, cd, float(r[4])))
    except (OSError, EOFError, UnicodeDecodeError) as e:
        fail(f"{path}: cannot read: {e}")
    if len(rows) < 10:
        fail(f"{path}: {len(rows)} rows: too few for a force history")
    return rows


def read_ref(path):
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    force, scalars = [], {}
    with open(path) as fp:
        lines = [(no, ln) for no, ln in enumerate(fp, 1) if ln.strip() and not ln.startswith("#")]
    if not lines or tuple(c.strip() for c in lines[0][1].strip().split(",")) != REF_COLUMNS:
        fail(f"{path}: expected a header line {','.join(REF_COLUMNS)}")
    for no, ln in lines[1:]:
        r = next(csv.reader([ln]))
        if len(r) != len(REF_COLUMNS):
            fail(f"{path}:{no}: expected {len(REF_COLUMNS)} fields, got {len(r)}")
        q, ph, val = r[0].strip(), r[1].strip(), r[2].strip()
        try:
            v = float(val) if val else None
            unc = float(r[4]) if r[4].strip() else None
            p = float(ph) if ph else None
        except ValueError:
            fail(f"{path}:{no}: malformed number in '{ln.strip()}'")
        if q == "force":
            if p is None or v is None or not 0 <= p < 1:
                fail(f"{path}:{no}: a force row needs a phase in [0, 1) and a value")
            force.append((p, v, unc))
        elif q in ("cd", "ca"):
            scalars[q] = (v, unc, r[5].strip())
        else:
            fail(f"{path}:{no}: unknown quantity '{q}' (expected force, cd or ca)")
    if len(force) < 4:
        fail(f"{path}: {len(force)} force rows: too few")
    force.sort()
    return force, scalars


def basis(theta, kc):
    """The two Morison terms over rho U_max^2 D at phase theta (x = -A sin 2 pi theta):
    -(pi/4) a D / U_max^2 and -(1/2) U|U| / U_max^2."""
    s, c = math.sin(2 * math.pi * theta), math.cos(2 * math.pi * theta)
    a = 2 * math.pi / kc * s          # dU/dt D / U_max^2, U = -U_max cos 2 pi theta
    u = -c
    return -math.pi / 4 * a, -0.5 * u * abs(u)


def lsq(samples, kc):
    """Weighted least squares of F = C_a b_a + C_d b_d; samples (theta, F, weight).
    Returns C_a, C_d and the weighted rms misfit."""
    saa = sad = sdd = sfa = sfd = sw = 0.0
    for th, fv, w in samples:
        ba, bd = basis(th, kc)
        saa += w * ba * ba
        sad += w * ba * bd
        sdd += w * bd * bd
        sfa += w * fv * ba
        sfd += w * fv * bd
        sw += w
    det = saa * sdd - sad * sad
    if det <= 0 or sw <= 0:
        return float("nan"), float("nan"), float("nan")
    ca = (sfa * sdd - sfd * sad) / det
    cd = (saa * sfd - sad * sfa) / det
    res = 0.0
    for th, fv, w in samples:
        ba, bd = basis(th, kc)
        res += w * (fv - ca * ba - cd * bd) ** 2
    return ca, cd, math.sqrt(res / sw)


def interp(ths, fs, th):
    lo, hi = 0, len(ths) - 1
    if th < ths[lo] or th > ths[hi]:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ths[mid] <= th:
            lo = mid
        else:
            hi = mid
    if ths[hi] == ths[lo]:
        return fs[lo]
    w = (th - ths[lo]) / (ths[hi] - ths[lo])
    return fs[lo] + w * (fs[hi] - fs[lo])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--forces", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--body", default="")
    ap.add_argument("--ref", default=os.path.join(here, "ref", "dutsch.csv"))
    ap.add_argument("--skip", type=int, default=1)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    if a.skip < 0:
        fail(f"--skip {a.skip}: expected 0 or more whole periods")

    m = body_motion(a.case, read_ini(a.case), a.body)
    rows = read_forces(a.forces)
    ref, scalars = read_ref(a.ref)

    f, umax, d = m["f"], m["umax"], m["d"]
    kc = umax / (f * d)
    re = umax * d / m["nu"]
    # phase in the paper's convention x = -A sin(2 pi theta)
    th0 = m["phase"] / 360.0 + (0.5 if m["amp"] > 0 else 0.0)
    scale = 0.5 * m["uref"] ** 2 * m["lref"] / (umax ** 2 * d)   # cd -> F / (rho U_max^2 D)
    # A last step clipped to end on [time] end_time carries the force that corrects the slip of
    # the step before over its own, much shorter, dt (the no-slip holds to first order in dt):
    # not a force of the flow. It is left out, and said so.
    dropped = None
    if len(rows) > 2:
        dt1, dt0 = rows[-1][0] - rows[-2][0], rows[-2][0] - rows[-3][0]
        if dt1 < 0.1 * dt0:
            dropped = (rows[-1], dt1, dt0)
            rows = rows[:-1]
    ths = [f * t + th0 for t, _, _ in rows]
    fs = [cd * scale for _, cd, _ in rows]
    # the velocity column against the prescribed motion (a check of the phase convention)
    du = max(abs(u + umax * math.cos(2 * math.pi * th)) for th, (_, _, u) in zip(ths, rows))

    # periods counted from the run's start, t = 0 (phase th0)
    first = math.ceil(th0 - 1e-9)
    periods = []
    n = first + a.skip
    reach = ths[-1] + 1.5 * (ths[-1] - ths[-2])     # the last whole period may end a step short
    while n + 1 <= reach:
        periods.append(n)
        n += 1
    if not periods:
        fail(f"{a.forces}: the run ends at t = {rows[-1][0]:g} (phase {ths[-1]:.3f}): no whole "
             f"period after the {a.skip} skipped")

    def samples(n0, n1):
        out = []
        for i, th in enumerate(ths):
            if n0 - 1e-9 <= th <= n1 + 1e-9:
                lo = ths[i - 1] if i > 0 else th
                hi = ths[i + 1] if i + 1 < len(ths) else th
                out.append((th, fs[i], 0.5 * (max(min(hi, n1), th) - max(min(lo, th), n0))))
        return out

    label = f" ({a.label})" if a.label else ""
    print(f"Dütsch et al. (1998) in-line oscillating cylinder{label}")
    print(f"  run: {a.forces}")
    print(f"  case: {a.case}: body {m['name']}, D = {d:g}, A = {abs(m['amp']):g}, f = {f:g}, "
          f"U_max = {umax:.6g}, Re = {re:.4g}, KC = {kc:.4g}; {len(rows)} rows to t = "
          f"{rows[-1][0]:g}")
    if abs(re - 100) > 1e-6 * 100 or abs(kc - 5) > 1e-6 * 5:
        print("  note: the published values are for Re = 100, KC = 5")
    if dropped:
        r, dt1, dt0 = dropped
        print(f"  note: the last row (t = {r[0]:g}, dt {dt1:.2g} after {dt0:.2g}: a step clipped "
              f"to end_time) is left out; its force is {r[1] * scale:.4g}")
    print(f"  body velocity against -U_max cos(2 pi t/T): largest difference {du / umax:.1e} U_max")
    print(f"  periods used: {len(periods)} whole period(s) after {a.skip} skipped, t = "
          f"{(periods[0] - th0) / f:g} .. {(periods[-1] + 1 - th0) / f:g} (T = {1 / f:g})")
    print("  force: F_x / (rho U_max^2 D); phase t/T of x = -A sin(2 pi t/T)")
    print()

    # phase-wise comparison
    print("  phase   kedr (mean)  spread   published   kedr - published")
    diffs, peak = [], max(abs(v) for _, v, _ in ref)
    for p, v, unc in ref:
        vals = [interp(ths, fs, n + p) for n in periods]
        vals = [x for x in vals if x is not None]
        if not vals:
            print(f"  {p:6.4f}   (outside the run)")
            continue
        mean = sum(vals) / len(vals)
        diffs.append(mean - v)
        print(f"  {p:6.4f}   {mean:10.4f}  {max(vals) - min(vals):7.4f}   {v:9.4f}   "
              f"{mean - v:+8.4f}" + (f"  (published +-{unc:g})" if unc is not None and
                                    abs(mean - v) <= unc else ""))
    rms = math.sqrt(sum(x * x for x in diffs) / len(diffs))
    big = max(diffs, key=abs)
    kpeak = max(abs(x) for n in periods for x, th in zip(fs, ths) if n <= th <= n + 1)
    print(f"  rms difference {rms:.4f} = {100 * rms / peak:.1f}% of the largest published value "
          f"{peak:.4f}; largest difference {big:+.4f}")
    print()

    # Morison fits
    print("  Morison fit F = -C_a rho (pi D^2/4) dU/dt - 1/2 rho C_d D |U| U   "
          "(rms misfit over the peak force)")
    for n in periods:
        ca, cd, r = lsq(samples(n, n + 1), kc)
        print(f"    kedr, period {n + 1 - first}  (t = {(n - th0) / f:g} .. {(n + 1 - th0) / f:g}): "
              f"C_a = {ca:.3f}, C_d = {cd:.3f}  ({100 * r / kpeak:.1f}%)")
    ca_k, cd_k, r_k = lsq(samples(periods[0], periods[-1] + 1), kc)
    print(f"    kedr, periods together:            C_a = {ca_k:.3f}, C_d = {cd_k:.3f}  "
          f"({100 * r_k / kpeak:.1f}%)")
    ca_p, cd_p, r_p = lsq([(p, v, 1.0) for p, v, _ in ref], kc)
    print(f"    published points (digitised):      C_a = {ca_p:.3f}, C_d = {cd_p:.3f}  "
          f"({100 * r_p / peak:.1f}%)")
    print(f"    kedr / published:                  C_a {100 * (ca_k / ca_p - 1):+.1f}%, "
          f"C_d {100 * (cd_k / cd_p - 1):+.1f}%")
    for q, name, mine in (("ca", "C_a", ca_k), ("cd", "C_d", cd_k)):
        if q in scalars:
            v, unc, src = scalars[q]
            if v is None:
                print(f"    published {name} as printed in the paper: not available: {src}")
            else:
                print(f"    published {name} = {v:g} ({src}): kedr {mine:.3f}, "
                      f"{100 * (mine / v - 1):+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
