#!/usr/bin/env python3
"""The 70-degree blunted cone of the ONERA SR3 low-density wind tunnel (Allegre, Bisch &
Lengrand, J. Spacecraft Rockets 34 (1997) 714-728) as a body for `kedr dsmc`.

    scripts/dsmc/cone70.py [--stl OUT.stl] [--outline OUT.txt] [--azimuths N]

writes (by default) cases/dsmc/cone70.stl, the body of revolution as a closed binary STL
(counter-clockwise seen from outside), and cases/dsmc/cone70-outline.txt, its meridian as an
outline of `x r` points for the axisymmetric case (`[body] type = outline`). Both are in mm, the
nose at x = 0, the axis along +x (scale = 0.001 in the case files).

The model (mm): a 70-degree half-angle cone, base diameter 2 R_b = 50, spherical nose of radius
R_n = 12.5 (R_b / 2), rounded corner of radius R_c = 1.25 (R_b / 20) reaching r = 25; behind it a
flat base at the end of the corner, a concave fillet of radius 2.08 onto a cylindrical sting of
radius 6.25 (diameter 12.5), here cut at x = 75 and closed by a flat disc (the body must lie
inside the domain). Forebody dimensions as Allegre et al. give them; the base, fillet and sting as
the SR3 model of the PICLas DSMC tutorial "dsmc-cone-3D" (its STEP file, whose sting also ends at
x = 75 mm).

The module also gives `profile()` (the meridian with each point's distance s along the surface
from the stagnation point) and `surface_distance(x, r)` for the comparison script. Plain Python,
no packages."""
import argparse
import bisect
import math
import os
import struct
import sys

RN = 12.5       # nose radius
RB = 25.0       # base radius
RC = 1.25       # corner radius
HALF = 70.0     # cone half-angle, degrees
RF = 2.08       # fillet radius between the base and the sting
RS = 6.25       # sting radius
X_END = 75.0    # the sting's end (flat)


def key_points():
    """The meridian's key points (mm) and the corner centre: a dict."""
    a = math.radians(HALF)
    # nose/cone tangency: the nose sphere's normal there makes 90 - HALF degrees with the axis
    x1, r1 = RN * (1 - math.cos(math.pi / 2 - a)), RN * math.sin(math.pi / 2 - a)
    rc = RB - RC                       # the corner's centre radius
    r2 = rc + RC * math.cos(a)         # cone/corner tangency radius
    x2 = x1 + (r2 - r1) / math.tan(a)  # along the cone
    xc = x2 + RC * math.sin(a)         # the corner's centre
    xb = xc + RC                       # the flat base
    return {"x1": x1, "r1": r1, "x2": x2, "r2": r2, "xc": xc, "rc": rc, "xb": xb,
            "xs": xb + RF, "rf": RS + RF}


def _arc(cx, cr, rad, t0, t1, n):
    """n segments of the circle (cx, cr) of radius rad from angle t0 to t1 (from +x towards +r),
    without its first point."""
    return [(cx + rad * math.cos(t0 + (t1 - t0) * k / n), cr + rad * math.sin(t0 + (t1 - t0) * k / n))
            for k in range(1, n + 1)]


def _line(p, q, n):
    return [(p[0] + (q[0] - p[0]) * k / n, p[1] + (q[1] - p[1]) * k / n) for k in range(1, n + 1)]


def profile(fine=1):
    """The meridian from the nose (0, 0) to the sting end's centre (X_END, 0): a list of (x, r)
    in mm. `fine` multiplies the number of segments (1: the STL's; 4: the outline's)."""
    k = key_points()
    a = math.radians(HALF)
    f = max(1, int(fine))
    pts = [(0.0, 0.0)]
    # nose: the sphere centred at (RN, 0), from the tip (angle pi) to the tangency
    pts += _arc(RN, 0.0, RN, math.pi, math.pi - (math.pi / 2 - a), 8 * f)
    pts += _line(pts[-1], (k["x2"], k["r2"]), 30 * f)
    # corner: its outward normal turns from the cone's (angle pi - HALF from +x) through +r to +x
    pts += _arc(k["xc"], k["rc"], RC, math.pi - a, 0.0, 10 * f)
    pts += _line(pts[-1], (k["xb"], k["rf"]), 12 * f)
    # fillet: concave, centred at (xs, rf), from (xb, rf) (angle pi) to (xs, RS) (angle 3 pi / 2)
    pts += _arc(k["xs"], k["rf"], RF, math.pi, 1.5 * math.pi, 4 * f)
    pts += _line(pts[-1], (X_END, RS), 25 * f)
    pts += _line(pts[-1], (X_END, 0.0), 3 * f)
    # tidy rounding on the axis and on the fillet's end
    pts[-1] = (X_END, 0.0)
    return pts


def arc_lengths(pts):
    s = [0.0]
    for (x0, r0), (x1, r1) in zip(pts, pts[1:]):
        s.append(s[-1] + math.hypot(x1 - x0, r1 - r0))
    return s


_MERIDIANS = None
_SUB = 16  # fine segments per segment of profile(1)


def _nearest(pts, s, lo, hi, x, r):
    best, best_s = float("inf"), 0.0
    for i in range(lo, hi):
        (x0, r0), (x1, r1) = pts[i], pts[i + 1]
        dx, dr = x1 - x0, r1 - r0
        ll = dx * dx + dr * dr
        t = min(1.0, max(0.0, ((x - x0) * dx + (r - r0) * dr) / ll))
        d = (x0 + t * dx - x) ** 2 + (r0 + t * dr - r) ** 2
        if d < best:
            best, best_s, best_i = d, s[i] + t * math.sqrt(ll), i
    return best_s, best_i


def surface_distance(x, r):
    """Distance s (mm) along the meridian from the stagnation point to the point of the surface
    nearest to (x, r) (mm): the nearest segment of profile(1), then the nearest of the 16 times
    finer meridian's segments within that one and its neighbours (each part of profile(f) has f
    times the segments of profile(1), so segment i of one is segments 16 i .. 16 i + 15 of the
    other)."""
    global _MERIDIANS
    if _MERIDIANS is None:
        c, f = profile(1), profile(_SUB)
        _MERIDIANS = (c, arc_lengths(c), f, arc_lengths(f))
    c, cs, f, fs = _MERIDIANS
    _, i = _nearest(c, cs, 0, len(c) - 1, x, r)
    lo, hi = max(0, (i - 1) * _SUB), min(len(f) - 1, (i + 2) * _SUB)
    return _nearest(f, fs, lo, hi, x, r)[0]


def landmarks():
    """s (mm) where each part of the surface begins: a list of (name, s)."""
    pts = profile(1)
    s = arc_lengths(pts)
    k = key_points()
    names = [("nose", 0.0), ("cone", surface_distance(k["x1"], k["r1"])),
             ("corner", surface_distance(k["x2"], k["r2"])),
             ("base", surface_distance(k["xb"], k["rc"])),
             ("fillet", surface_distance(k["xb"], k["rf"])),
             ("sting", surface_distance(k["xs"], RS)),
             ("sting end", surface_distance(X_END, RS)), ("axis", s[-1])]
    return names


def triangles(azimuths):
    """The surface of revolution of profile(1) as triangles ((x, y, z) x 3, mm), counter-clockwise
    seen from outside; the axis is x. Ring vertices are computed once, so shared vertices are
    bit-identical (kedr joins vertices whose coordinates are equal)."""
    pts = profile(1)
    n = azimuths
    cs = [(math.cos(2 * math.pi * j / n), math.sin(2 * math.pi * j / n)) for j in range(n)]
    rings = [[(x, r * c, r * s) for c, s in cs] if r > 0 else None for x, r in pts]
    tris = []
    for i in range(len(pts) - 1):
        a, b = rings[i], rings[i + 1]
        for j in range(n):
            jn = (j + 1) % n
            if a is None:    # the nose tip: a fan
                tris.append(((pts[i][0], 0.0, 0.0), b[jn], b[j]))
            elif b is None:  # the sting end's centre: a fan
                tris.append((a[j], a[jn], (pts[i + 1][0], 0.0, 0.0)))
            else:
                tris.append((a[j], a[jn], b[jn]))
                tris.append((a[j], b[jn], b[j]))
    return tris


def _normal(t):
    (ax, ay, az), (bx, by, bz), (cx, cy, cz) = t
    u = (bx - ax, by - ay, bz - az)
    v = (cx - ax, cy - ay, cz - az)
    nx, ny, nz = u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]
    ln = math.sqrt(nx * nx + ny * ny + nz * nz)
    return (nx / ln, ny / ln, nz / ln), ln / 2


def check_outward(tris):
    """The enclosed volume (divergence theorem) must be positive: the triangles face outward."""
    vol = 0.0
    for (a, b, c) in tris:
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0
    return vol


def write_stl(path, tris):
    with open(path, "wb") as f:
        f.write(b"kedr cone70: SR3 70-degree blunted cone, mm, axis +x".ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        for t in tris:
            n, _ = _normal(t)
            f.write(struct.pack("<3f", *n))
            for v in t:
                f.write(struct.pack("<3f", *v))
            f.write(b"\0\0")


def write_outline(path, fine):
    pts = profile(fine)
    with open(path, "w") as f:
        f.write("# The meridian of the SR3 70-degree blunted cone (scripts/dsmc/cone70.py), mm:\n"
                "# x along the axis from the nose, r the radius; from the nose over the forebody,\n"
                "# corner, base, fillet and sting to the sting end's centre. The axis closes the\n"
                "# outline (that segment has no surface). %d points.\n" % len(pts))
        for x, r in pts:
            f.write("%.12g %.12g\n" % (x, r))
    return len(pts)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    cases = os.path.normpath(os.path.join(here, "..", "..", "cases", "dsmc"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stl", default=os.path.join(cases, "cone70.stl"))
    ap.add_argument("--outline", default=os.path.join(cases, "cone70-outline.txt"))
    ap.add_argument("--azimuths", type=int, default=64, help="segments around the axis (64)")
    ap.add_argument("--outline-fine", type=int, default=4,
                    help="outline segments per STL meridian segment (4)")
    ap.add_argument("--landmarks", action="store_true", help="print where each part begins")
    a = ap.parse_args()
    if a.azimuths < 8 or a.azimuths > 4096:
        sys.exit("cone70.py: --azimuths must be 8..4096")
    tris = triangles(a.azimuths)
    vol = check_outward(tris)
    if vol <= 0:
        sys.exit("cone70.py: the triangles face inward (volume %g)" % vol)
    write_stl(a.stl, tris)
    npts = write_outline(a.outline, a.outline_fine)
    area = sum(_normal(t)[1] for t in tris)
    print("%s: %d triangles, %d bytes, volume %.1f mm^3, area %.1f mm^2" %
          (a.stl, len(tris), 84 + 50 * len(tris), vol, area))
    print("%s: %d points" % (a.outline, npts))
    if a.landmarks:
        for name, s in landmarks():
            print("  %-9s from s = %7.3f mm  (s/R_n %.3f)" % (name, s, s / RN))


if __name__ == "__main__":
    main()
