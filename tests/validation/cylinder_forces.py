#!/usr/bin/env python3
"""Reads a body's force history written by `kedr flow` (DIR/NAME-BODY.csv) and prints, over the
periodic part of the run (t >= --from), the Strouhal number f D / U from the lift's upward zero
crossings (its mean removed, crossings interpolated linearly), the largest and mean drag and lift
coefficients, and the lift's amplitude. With --check, compares them with the intervals given and
exits 1 when one is outside.

usage: cylinder_forces.py FILE.csv [--from T] [--length D] [--velocity U]
                          [--check st=LO:HI,cdmax=LO:HI,clmax=LO:HI,cdmean=LO:HI]
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--from", dest="t0", type=float, default=0.0)
    ap.add_argument("--length", type=float, default=0.1)
    ap.add_argument("--velocity", type=float, default=1.0)
    ap.add_argument("--check", default="")
    a = ap.parse_args()
    t, cd, cl = [], [], []
    with open(a.csv) as fp:
        for row in csv.DictReader(fp):
            if row.get("cl") is None:  # a row being written
                continue
            if float(row["time"]) >= a.t0:
                t.append(float(row["time"]))
                cd.append(float(row["cd"]))
                cl.append(float(row["cl"]))
    if len(t) < 10:
        sys.exit(f"{a.csv}: {len(t)} rows after t = {a.t0}: too few")
    mean = sum(cl) / len(cl)
    ups = []
    for i in range(1, len(t)):
        y0, y1 = cl[i - 1] - mean, cl[i] - mean
        if y0 < 0 <= y1:
            ups.append(t[i - 1] + (t[i] - t[i - 1]) * (-y0) / (y1 - y0))
    if len(ups) < 3:
        sys.exit(f"{a.csv}: {len(ups)} lift periods after t = {a.t0}: not periodic (yet)")
    period = (ups[-1] - ups[0]) / (len(ups) - 1)
    # extremes over whole periods only
    sel = [i for i in range(len(t)) if ups[0] <= t[i] <= ups[-1]]
    res = {
        "st": a.length / (period * a.velocity),
        "cdmax": max(cd[i] for i in sel),
        "cdmean": sum(cd[i] for i in sel) / len(sel),
        "clmax": max(cl[i] for i in sel),
        "clamp": 0.5 * (max(cl[i] for i in sel) - min(cl[i] for i in sel)),
    }
    print(f"{len(ups) - 1} periods from t = {ups[0]:.4f} to {ups[-1]:.4f}: period {period:.5f} s, "
          f"St {res['st']:.4f}, cD max {res['cdmax']:.4f} mean {res['cdmean']:.4f}, "
          f"cL max {res['clmax']:.4f} amplitude {res['clamp']:.4f}")
    bad = 0
    for item in filter(None, a.check.split(",")):
        key, rng = item.split("=")
        lo, hi = (float(v) for v in rng.split(":"))
        ok = lo <= res[key] <= hi
        bad |= not ok
        print(f"  {key} = {res[key]:.4f} in [{lo}, {hi}]: {'yes' if ok else 'NO'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
