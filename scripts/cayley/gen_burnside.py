#!/usr/bin/env python3
"""Turns the Hall polynomials of multiplication by a2 in B0(2,5) into C code.

usage: gen_burnside.py [DATA [HEADER]]
  DATA    the polynomials (default data/cayley/burnside-a2.txt next to this script's repository)
  HEADER  where to write the C header (default src/cayley/burnside_hall.h; '-' for stdout)

The data has one line "z<i> = terms" per component i = 0, 1, ... in order ('#' starts a comment
line). Component i must be y<i> plus a polynomial in y0..y<i-1> and a constant: the map is then
unitriangular, and its inverse is found by solving for y0, y1, ... in turn, which the header
also provides. Sums are accumulated in 32-bit unsigned integers; the generator bounds every
partial sum and reduces mod 5 before it could overflow.
"""
import os
import re
import sys

LIMIT = 2**31  # partial sums and products stay below this
TERM = re.compile(r"^(?:([1-4])\*)?(y\d+(?:\^[2-4])?(?:\*y\d+(?:\^[2-4])?)*)$")
FACTOR = re.compile(r"^y(\d+)(?:\^([2-4]))?$")


class DataError(Exception):
    pass


def parse(path):
    """[(constant, {monomial: coefficient})] per component; a monomial is a sorted tuple of
    (variable, exponent)."""
    components = []
    with open(path, encoding="ascii") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            where = "%s:%d" % (path, lineno)
            m = re.match(r"^z(\d+) = (.+)$", line)
            if not m:
                raise DataError("%s: expected 'z<i> = <terms>', got '%s'" % (where, line))
            i = int(m.group(1))
            if i != len(components):
                raise DataError("%s: component z%d out of order (expected z%d)"
                                % (where, i, len(components)))
            const, poly = 0, {}
            for term in m.group(2).split(" + "):
                if re.match(r"^[1-4]$", term):
                    const += int(term)
                    continue
                t = TERM.match(term)
                if not t:
                    raise DataError("%s: malformed term '%s' (expected [c*]y<j>[^e]*..., c and "
                                    "a constant in 1..4, e in 2..4)" % (where, term))
                coef = int(t.group(1) or 1)
                mono = {}
                for factor in t.group(2).split("*"):
                    fm = FACTOR.match(factor)
                    j, e = int(fm.group(1)), int(fm.group(2) or 1)
                    if j in mono:
                        raise DataError("%s: y%d appears twice in the term '%s'" % (where, j, term))
                    mono[j] = e
                key = tuple(sorted(mono.items()))
                poly[key] = poly.get(key, 0) + coef
            poly = {k: c % 5 for k, c in poly.items() if c % 5}
            if poly.pop(((i, 1),), 0) != 1:
                raise DataError("%s: z%d must contain the term y%d with coefficient 1"
                                % (where, i, i))
            for mono in poly:
                if any(j >= i for j, _ in mono):
                    raise DataError("%s: z%d may depend only on y0..y%d besides y%d"
                                    % (where, i, i - 1, i))
            components.append((const % 5, poly))
    if not components:
        raise DataError("%s: no components" % path)
    return components


def power_name(j, e):
    return "y[%d]" % j if e == 1 else "y%d_%d" % (j, e)


class Emitter:
    """Straight-line code: the powers y_j^e are declared once, before their first use."""

    def __init__(self, out):
        self.out = out
        self.declared = set()

    def power(self, j, e):
        if e == 1 or (j, e) in self.declared:
            return
        if e == 2:
            self.out.append("    uint32_t y%d_2 = y[%d] * y[%d];" % (j, j, j))
        else:
            self.power(j, 2)
            other = "y[%d]" % j if e == 3 else "y%d_2" % j
            self.out.append("    uint32_t y%d_%d = y%d_2 * %s;" % (j, e, j, other))
        self.declared.add((j, e))

    def polynomial(self, const, poly, start, start_bound):
        """C expression for start + const + poly, with its bound; the powers are declared."""
        expr, bound = start, start_bound
        if const:
            expr, bound = self.add(expr, bound, "%du" % const, const)
        for mono, coef in sorted(poly.items()):
            factors = [(power_name(j, e), 4 ** e) for j, e in mono]
            for j, e in mono:
                self.power(j, e)
            term, tb = ("%du" % coef, coef) if coef > 1 else factors.pop(0)
            for name, fb in factors:
                if tb * fb >= LIMIT:
                    term, tb = "(%s) %% 5u" % term, 4
                term, tb = "%s * %s" % (term, name), tb * fb
            expr, bound = self.add(expr, bound, term, tb)
        return expr, bound

    @staticmethod
    def add(expr, bound, term, tb):
        if not expr:
            return term, tb
        if bound + tb >= LIMIT:
            expr, bound = "(%s) %% 5u" % expr, 4
        return "%s + %s" % (expr, term), bound + tb


def function(components, inverse):
    lines = []
    em = Emitter(lines)
    for i, (const, poly) in enumerate(components):
        if i:
            lines.append("    if (k <= %d)" % i)
            lines.append("        return;")
        if inverse:
            if not const and not poly:
                lines.append("    y[%d] = z[%d];" % (i, i))
                continue
            f, _ = em.polynomial(const, poly, "", 0)
            if poly:
                lines.append("    y[%d] = (z[%d] + 5u - (%s) %% 5u) %% 5u;" % (i, i, f))
            else:
                lines.append("    y[%d] = (z[%d] + %du) %% 5u;" % (i, i, 5 - const))
        else:
            if not const and not poly:
                lines.append("    z[%d] = y[%d];" % (i, i))
                continue
            f, _ = em.polynomial(const, poly, "y[%d]" % i, 4)
            lines.append("    z[%d] = (%s) %% 5u;" % (i, f))
    return lines


def wrap(line, width=99):
    """Breaks a long statement after ' + ' with an 8-space continuation indent."""
    out = []
    while len(line) > width:
        cut = line.rfind(" + ", 0, width - 1)
        if cut < 0:
            break
        out.append(line[:cut + 2])
        line = "        " + line[cut + 3:]
    return out + [line]


# Ranks are base-5 numbers below 2^62 (kedr/cayley.h), so K <= 26 whatever the data holds.
RANK_K = 26


def header(components, data_name):
    n = len(components)
    components = components[:RANK_K]
    out = [
        "/* generated by scripts/cayley/gen_burnside.py from %s; do not edit. */" % data_name,
        "/* Multiplication by a2 in B0(2,5) on the exponent vectors y (digits 0..4) of the pc",
        " * basis a1..a34, components 0..k-1 only (components >= k are not computed), as",
        " * straight-line code for host and device. Include after CAYLEY_HD is defined. */",
        "#ifndef CAYLEY_BURNSIDE_HALL_H",
        "#define CAYLEY_BURNSIDE_HALL_H",
        "",
        "/* components in the data, and those compiled (ranks below 2^62 allow K <= %d) */" % RANK_K,
        "#define BURNSIDE_DATA_K %d" % n,
        "#define BURNSIDE_MAX_K %d" % len(components),
        "",
        "/* z = the exponents of y times a2; y and z must not overlap. */",
        "CAYLEY_HD void burnside_a2(const uint32_t *y, uint32_t *z, int k)",
        "{",
    ]
    out += function(components, False)
    out += [
        "}",
        "",
        "/* y = the exponents of z times a2^-1, solving z = y times a2 for y0, y1, ... in turn (each",
        " * component is y_i plus a polynomial in y_0..y_{i-1}); y and z must not overlap. */",
        "CAYLEY_HD void burnside_a2_inverse(const uint32_t *z, uint32_t *y, int k)",
        "{",
    ]
    out += function(components, True)
    out += ["}", "", "#endif", ""]
    return "\n".join(w for line in out for w in wrap(line))


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    data = argv[1] if len(argv) > 1 else os.path.join(root, "data/cayley/burnside-a2.txt")
    target = argv[2] if len(argv) > 2 else os.path.join(root, "src/cayley/burnside_hall.h")
    if len(argv) > 3:
        sys.stderr.write("usage: gen_burnside.py [DATA [HEADER]]\n")
        return 2
    try:
        components = parse(data)
    except (DataError, OSError, UnicodeDecodeError) as e:
        sys.stderr.write("gen_burnside.py: %s\n" % e)
        return 1
    text = header(components, "data/cayley/" + os.path.basename(data))
    if target == "-":
        sys.stdout.write(text)
    else:
        with open(target, "w", encoding="ascii") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
