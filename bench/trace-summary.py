#!/usr/bin/env python3
"""Summarise GPU timelines written by bench/trace/gpu_trace.c (one CSV a process).

    bench/trace-summary.py [--last K] [--top T] [--whole] DIR_OR_FILES...

Steps are found by the copies a kedr flow step starts with (each velocity component copied
whole: the largest device-to-device copies; see steps_of), and the last K whole steps are
summarised (default 3); --whole takes one window instead, from the kernel a third of the way
through the run's kernels to the last, for programs other than kedr flow. For each file (rank),
in milliseconds a step: the wall time, the GPU's work (kernels, copies and memsets, their union
over the streams) and idle time, the idle time by the work each gap follows, the kernels and
copies by total time, and the runtime calls that wait for the device or start its work."""
import argparse
import collections
import glob
import os
import re
import sys


def load(path):
    recs = []
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split(",", 4)
            if len(p) < 5:
                continue
            try:
                recs.append((p[0], int(p[1]), int(p[2]), int(p[3]), p[4]))
            except ValueError:
                continue
    recs.sort(key=lambda r: r[1])
    return recs


def demangle_len(name):
    m = re.match(r"_Z(\d+)", name)
    if m:
        k = int(m.group(1))
        s = len(m.group(0))
        return name[s:s + k]
    return name.split("(")[0].split("<")[0]


def steps_of(recs):
    """Step starts: a step copies the velocity whole (the largest device-to-device copies, a
    few in a row) after copying cell-sized vectors (the next largest) at the end of the step
    before, so a largest copy that follows a smaller large one (or none) starts a step."""
    copies = [(r[1], int(r[4].split(":")[1])) for r in recs if r[0] == "C" and r[4].startswith("8:")]
    if not copies:
        return []
    big = max(b for _, b in copies)
    large = [(t, b) for t, b in copies if b >= big // 2]
    return [t for i, (t, b) in enumerate(large) if b == big and (i == 0 or large[i - 1][1] < big)]


def what(r):
    """A record's label: a kernel's name, "copy KIND:BYTES" or "memset"."""
    return demangle_len(r[4]) if r[0] == "K" else ("copy " + r[4] if r[0] == "C" else "memset")


def summarise(path, last, top, whole=False):
    recs = load(path)
    ks = [r for r in recs if r[0] == "K"]
    if whole:
        starts = [ks[len(ks) // 3][1], max(r[2] for r in ks)] if ks else []
        what_window = "one window"
    else:
        starts = steps_of(recs)
        what_window = f"{len(starts)} steps found"
    if len(starts) < 2:
        print(f"{path}: {len(starts)} step marks: too few (no kernels, or no kedr flow steps: "
              "--whole takes any program)")
        return
    k = min(last, len(starts) - 1)
    t0, t1 = starts[-k - 1], starts[-1]
    wall = (t1 - t0) / 1e6 / k
    gpu = [r for r in recs if r[0] in "KCS" and r[2] > t0 and r[1] < t1]
    api = [r for r in recs if r[0] == "A" and r[2] > t0 and r[1] < t1]
    # the union of the GPU's work and the gaps between, each gap named by the work before it;
    # each record's time by its label
    busy = small_n = small_t = 0
    gaps, gapn, kt, kn = (collections.Counter() for _ in range(4))
    end = t0
    last_name = "(start)"
    for r in gpu:
        name, s, e = what(r), max(r[1], t0), min(r[2], t1)
        if s > end:
            gaps[last_name] += s - end
            gapn[last_name] += s - end > 5000
        if e > end:
            busy += e - max(s, end)
            end = e
            last_name = name
        d = r[2] - r[1]
        kt[name] += d
        kn[name] += 1
        if r[0] == "K" and d < 5000:
            small_n += 1
            small_t += d
    if t1 > end:
        gaps[last_name] += t1 - end
    at = collections.Counter()
    an = collections.Counter()
    for r in api:
        at[r[4]] += r[2] - r[1]
        an[r[4]] += 1
    ms = lambda ns: ns / 1e6 / k
    print(f"== {os.path.basename(path)}: {what_window}, the last {k}: ms a step")
    print(f"  wall {wall:.2f}  gpu busy {ms(busy):.2f}  idle {wall - ms(busy):.2f}  "
          f"kernels {sum(1 for r in gpu if r[0] == 'K') / k:.0f} a step, of which "
          f"{small_n / k:.0f} under 5 us ({ms(small_t):.2f} ms)")
    print("  kernels and copies by time (ms a step, count a step, us each):")
    for name, t in kt.most_common(top):
        print(f"    {ms(t):8.3f} {kn[name] / k:7.0f} {t / kn[name] / 1e3:9.1f}  {name}")
    print("  idle by the work before it (ms a step, gaps over 5 us a step):")
    for name, t in gaps.most_common(top // 2):
        print(f"    {ms(t):8.3f} {gapn[name] / k:7.0f}  {name}")
    print("  runtime calls (ms a step, count a step):")
    for name, t in at.most_common(top // 2):
        print(f"    {ms(t):8.3f} {an[name] / k:7.0f}  {name}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--last", type=int, default=3)
    ap.add_argument("--top", type=int, default=24)
    ap.add_argument("--whole", action="store_true",
                    help="one window, from the kernel a third of the way through the run's "
                    "kernels (past its set-up) to the last (any program)")
    a = ap.parse_args()
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "trace-*.csv")))
        elif os.path.isfile(p):
            files.append(p)
        else:
            sys.exit(f"trace-summary.py: {p}: no such file or folder (expected trace CSV files "
                     "or a folder of them)")
    if not files:
        sys.exit("trace-summary.py: no trace files")
    for f in files:
        summarise(f, a.last, a.top, a.whole)


if __name__ == "__main__":
    main()
