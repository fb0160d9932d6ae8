#!/usr/bin/env python3
"""A unit sphere as a triangulated surface for `[body] type = stl`: the icosahedron with each
triangle split into four LEVEL times (20 * 4^LEVEL triangles), the new vertices pushed out to the
sphere, written as binary STL, counter-clockwise seen from outside (outward normals).

    scripts/dsmc/icosphere.py LEVEL OUT.stl       (LEVEL 0..9; 3: 1280 triangles, 6: 81 920,
                                                   8: 1 310 720 in a 66 MB file)

Scale and place it in the case file ([body] scale, translate). Plain Python, no packages."""
import math
import struct
import sys


def icosphere(level):
    t = (1 + math.sqrt(5)) / 2
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    verts = [norm(v) for v in verts]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
             (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
             (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(level):
        mid = {}

        def middle(a, b):
            key = (a, b) if a < b else (b, a)
            if key not in mid:
                va, vb = verts[a], verts[b]
                verts.append(norm(((va[0] + vb[0]) / 2, (va[1] + vb[1]) / 2, (va[2] + vb[2]) / 2)))
                mid[key] = len(verts) - 1
            return mid[key]

        split = []
        for a, b, c in faces:
            ab, bc, ca = middle(a, b), middle(b, c), middle(c, a)
            split += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = split
    return verts, faces


def norm(v):
    r = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return (v[0] / r, v[1] / r, v[2] / r)


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) > 9:
        sys.exit("usage: icosphere.py LEVEL OUT.stl   (LEVEL 0..9)")
    level, out = int(sys.argv[1]), sys.argv[2]
    verts, faces = icosphere(level)
    # each triangle turned to face outward: its normal along its first vertex (a convex body
    # around the origin)
    with open(out, "wb") as f:
        header = b"kedr icosphere level %d" % level
        f.write(header.ljust(80, b" "))
        f.write(struct.pack("<I", len(faces)))
        for a, b, c in faces:
            va, vb, vc = verts[a], verts[b], verts[c]
            u = [vb[i] - va[i] for i in range(3)]
            w = [vc[i] - va[i] for i in range(3)]
            n = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
            if n[0] * va[0] + n[1] * va[1] + n[2] * va[2] < 0:
                vb, vc = vc, vb
                n = (-n[0], -n[1], -n[2])
            f.write(struct.pack("<12fH", *norm(n), *va, *vb, *vc, 0))
    print("%s: %d triangles" % (out, len(faces)))


if __name__ == "__main__":
    main()
