#!/usr/bin/env python3
"""Writes basin-depth.txt, the depth map of cases/adi/basin.ini: a generated basin with an
irregular coastline and bottom (the seed's White Sea bathymetry is not public), by this recipe:

1. The coastline is the curve r(theta) = R (1 + sum_m a_m cos(m theta + p_m)) around the centre
   of an NX x NY map, m = 2..9, with amplitudes a_m = 0.35 / m and phases p_m drawn from
   Python's random.Random(2015); straits 5 nodes wide join it to the west and east edges.
2. The depth in nodes is 2 + (DMAX - 2) (1 - exp(-d / L)) (0.8 + 0.2 cos(0.21 i) cos(0.17 j)),
   rounded, d the distance in nodes to the nearest land (L = 6): shallow near the coast, DMAX
   offshore, with bumps on the bottom.
3. One-node segments are removed, as kedr adi refuses them: while some water node of some level
   has land (or the map's edge, except in the straits) on both sides along x or y, the shallower
   of the two columns is made shallow enough to leave that level; a water column of depth 1 is
   made land.
Run: python3 make_basin.py > basin-depth.txt (deterministic: the same file every time)."""
import math
import random

NX, NY, NZ, DMAX, SEED, L = 160, 120, 24, 20, 2015, 6.0

rng = random.Random(SEED)
modes = [(m, 0.35 / m, rng.uniform(0, 2 * math.pi)) for m in range(2, 10)]
cx, cy, R = NX / 2, NY / 2, 0.36 * min(NX, NY)


def water(i, j):
    x, y = i - cx, (j - cy) * NX / NY
    if abs(j - cy) < 3:  # the straits: a channel 5 nodes wide from the west edge to the east
        return True
    t = math.atan2(y, x)
    r = R * (1 + sum(a * math.cos(m * t + p) for m, a, p in modes))
    return math.hypot(x, y) < r


wet = [[water(i, j) and 0 < j < NY - 1 for i in range(NX)] for j in range(NY)]
# distance to land by passes of a chamfer transform (3-4 metric / 3)
INF = 10 ** 9
dist = [[0 if not wet[j][i] else INF for i in range(NX)] for j in range(NY)]
for _ in range(2):
    for j in range(NY):
        for i in range(NX):
            for di, dj, w in ((-1, 0, 3), (0, -1, 3), (-1, -1, 4), (1, -1, 4)):
                a, b = i + di, j + dj
                if 0 <= a < NX and 0 <= b < NY and dist[b][a] + w < dist[j][i]:
                    dist[j][i] = dist[b][a] + w
    for j in reversed(range(NY)):
        for i in reversed(range(NX)):
            for di, dj, w in ((1, 0, 3), (0, 1, 3), (1, 1, 4), (-1, 1, 4)):
                a, b = i + di, j + dj
                if 0 <= a < NX and 0 <= b < NY and dist[b][a] + w < dist[j][i]:
                    dist[j][i] = dist[b][a] + w
depth = [[0] * NX for _ in range(NY)]
for j in range(NY):
    for i in range(NX):
        if wet[j][i]:
            d = dist[j][i] / 3.0
            bump = 0.8 + 0.2 * math.cos(0.21 * i) * math.cos(0.17 * j)
            depth[j][i] = max(2, round(2 + (DMAX - 2) * (1 - math.exp(-d / L)) * bump))


def level_wet(i, j, k):
    """Water at map node (i, j), level k (0 = bottom of the grid, NZ - 1 = the surface)."""
    if not (0 <= i < NX and 0 <= j < NY):
        return False
    return depth[j][i] > 0 and k >= NZ - depth[j][i]


def fix():
    """One pass: removes the one-node segments found; returns how many."""
    found = 0
    for k in range(NZ):
        for j in range(NY):
            for i in range(NX):
                if not level_wet(i, j, k):
                    continue
                for di, dj in ((1, 0), (0, 1)):
                    lo = level_wet(i - di, j - dj, k)
                    hi = level_wet(i + di, j + dj, k)
                    if lo or hi:
                        continue
                    # a node between two walls along this axis: lift its column's bottom
                    depth[j][i] = NZ - 1 - k
                    found += 1
                    break
    for j in range(NY):
        for i in range(NX):
            if depth[j][i] == 1:
                depth[j][i] = 0
                found += 1
    return found


while fix():
    pass

print("# basin: a generated basin with an irregular coastline and bottom (cases/adi/make_basin.py")
print("# says how); depth of water in nodes at each (i, j), 0 = land; the first row is j = NY - 1")
print("kedr-adi-depth %d %d" % (NX, NY))
for j in reversed(range(NY)):
    print(" ".join(str(depth[j][i]) for i in range(NX)))
