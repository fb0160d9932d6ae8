"""Power-commutator presentations of finite p-groups, multiplication by
collection, and polynomials over Z_p in the text format of data/cayley/.

A presentation file (see data/cayley/burnside-pc.txt) has lines
    gens N
    weights w_1 ... w_N          lower-central weight of each generator
    power i v_1 ... v_N          a_i^p as an exponent vector
    conj j i v_1 ... v_N         a_j^(a_i) = a_i^-1 a_j a_i for i < j
with 1-based generator numbers; '#' starts a comment line. An element is the
list (y_0 .. y_{N-1}) of exponents of its normal form a_1^y_0 ... a_N^y_{N-1}.
Standard library only, so that the check needs nothing beyond python3.
"""

import re

P = 5


class Presentation:
    def __init__(self, n, weights, powers, conjs, p=P):
        self.n = n
        self.p = p
        self.weights = weights
        self.powers = powers          # powers[i]: a_i^p, 0-based
        self.conjs = conjs            # conjs[(j, i)]: a_j^(a_i), 0-based, i < j
        self._conj_pow = {}
        # a_A .. a_N span an elementary abelian normal subgroup (weights w with
        # 2w above the class: [gamma_c, gamma_c] <= gamma_2c = 1), on which
        # products are sums of exponent vectors and conjugation is linear
        cls = max(weights) if weights else 0
        a = next((k for k in range(n) if 2 * weights[k] > cls), n)
        while a < n and not self._abelian_from(a):
            a += 1
        self.abelian = a

    def _abelian_from(self, a):
        for i in range(a, self.n):
            if any(self.powers[i]):
                return False
            for j in range(i + 1, self.n):
                if self.conjs[(j, i)] != [int(k == j) for k in range(self.n)]:
                    return False
        for i in range(a):
            for j in range(a, self.n):
                if any(self.conjs[(j, i)][:a]):
                    return False
        return True

    @staticmethod
    def load(path):
        n = None
        weights = None
        powers = {}
        conjs = {}
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                t = line.split()
                if not t or t[0].startswith('#'):
                    continue
                try:
                    if t[0] == 'gens':
                        n = int(t[1])
                    elif t[0] == 'weights':
                        weights = [int(x) for x in t[1:]]
                    elif t[0] == 'power':
                        powers[int(t[1]) - 1] = [int(x) for x in t[2:]]
                    elif t[0] == 'conj':
                        conjs[(int(t[1]) - 1, int(t[2]) - 1)] = [int(x) for x in t[3:]]
                    else:
                        raise ValueError('unknown keyword ' + t[0])
                except (ValueError, IndexError) as e:
                    raise ValueError('%s:%d: %s' % (path, lineno, e))
        if n is None or weights is None or len(weights) != n:
            raise ValueError('%s: missing gens or weights' % path)
        for i in range(n):
            if len(powers.get(i, ())) != n:
                raise ValueError('%s: power %d missing or not of length %d' % (path, i + 1, n))
            for j in range(i + 1, n):
                if len(conjs.get((j, i), ())) != n:
                    raise ValueError('%s: conj %d %d missing or not of length %d'
                                     % (path, j + 1, i + 1, n))
        return Presentation(n, weights, [powers[i] for i in range(n)], conjs)

    def truncate(self, k):
        """The presentation of the quotient by <a_{k+1}, ..., a_N> (normal when
        the generators refine a central series, as here)."""
        return Presentation(k, self.weights[:k], [v[:k] for v in self.powers[:k]],
                            {(j, i): v[:k] for (j, i), v in self.conjs.items() if j < k},
                            self.p)

    # Collection: x * a_i = prefix * a_i^(y_i+1) * (tail)^(a_i), where the tail
    # a_{i+1}^y_{i+1} ... is conjugated generator by generator; every word this
    # produces lies in <a_{i+1}, ...>, so the recursion ends. The part of the
    # tail in the abelian subgroup <a_A, ...> is conjugated as a vector.

    def mul_gen(self, x, i):
        """x * a_i in place (x a list of exponents)."""
        p, n, a = self.p, self.n, self.abelian
        if i >= a:
            x[i] = (x[i] + 1) % p
            return x
        tail = x[i + 1:]
        for j in range(i + 1, n):
            x[j] = 0
        x[i] += 1
        if x[i] == p:
            x[i] = 0
            self.mul_into(x, self.powers[i], i + 1)
        for j in range(i + 1, a):
            e = tail[j - i - 1]
            if e:
                self.mul_into(x, self.conj_pow(j, i, e), i + 1)
        for j in range(max(a, i + 1), n):
            e = tail[j - i - 1]
            if e:
                self._add(x, self.conjs[(j, i)], a, e)
        return x

    def _add(self, x, v, a, e=1):
        """x * v^e for v in the abelian subgroup <a_A, ...>."""
        p = self.p
        for k in range(a, self.n):
            if v[k]:
                x[k] = (x[k] + e * v[k]) % p

    def conj_pow(self, j, i, e):
        """(a_j^e)^(a_i) = (a_j^(a_i))^e, cached."""
        key = (j, i, e)
        v = self._conj_pow.get(key)
        if v is None:
            if e == 1:
                v = self.conjs[(j, i)]
            else:
                v = self.mul_into(list(self.conj_pow(j, i, e - 1)), self.conjs[(j, i)], i + 1)
            self._conj_pow[key] = v
        return v

    def mul_into(self, x, y, start=0):
        """x * y in place; y's support starts at generator `start`."""
        a = self.abelian
        for k in range(start, a):
            for _ in range(y[k]):
                self.mul_gen(x, k)
        self._add(x, y, max(a, start))
        return x

    def mul(self, x, y):
        return self.mul_into(list(x), y)

    def identity(self):
        return [0] * self.n

    def gen(self, i, e=1):
        v = self.identity()
        v[i] = e % self.p
        return v


# Polynomials over Z_p: dict {exponent tuple (e_0, ..., e_{N-1}): coefficient}.

_TERM = re.compile(r'^(?:([0-9]+)\*)?(.*)$')


def parse_poly(text, n):
    poly = {}
    for term in text.split('+'):
        term = term.strip()
        if not term:
            raise ValueError('empty term in %r' % text)
        e = [0] * n
        if term.isdigit():
            c = int(term)
        else:
            m = _TERM.match(term)
            c = int(m.group(1)) if m.group(1) else 1
            for f in m.group(2).split('*'):
                fm = re.fullmatch(r'y([0-9]+)(?:\^([0-9]+))?', f.strip())
                if not fm or int(fm.group(1)) >= n:
                    raise ValueError('bad factor %r in %r' % (f, text))
                e[int(fm.group(1))] += int(fm.group(2) or 1)
        k = tuple(e)
        poly[k] = (poly.get(k, 0) + c) % P
    return {k: c for k, c in poly.items() if c}


def term_key(i, e):
    """Canonical order of the terms of z_i: y_i first, then the constant, then by
    total degree, then by exponent vector (e_0, e_1, ...) in decreasing order."""
    if sum(e) == 1 and e[i] == 1:
        return (0, 0, ())
    return (1, sum(e), tuple(-x for x in e))


def format_poly(i, poly):
    terms = []
    for e in sorted(poly, key=lambda e: term_key(i, e)):
        c = poly[e]
        factors = ['y%d' % j if x == 1 else 'y%d^%d' % (j, x) for j, x in enumerate(e) if x]
        if not factors:
            terms.append(str(c))
        else:
            terms.append(('%d*' % c if c != 1 else '') + '*'.join(factors))
    return ' + '.join(terms) if terms else '0'


def load_polys(path, n=None):
    """Read 'z<i> = poly' lines; returns a list of polynomials, index i = z_i."""
    lines = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                lines.append(line)
    n = n or len(lines)
    polys = []
    for i, line in enumerate(lines):
        lhs, _, rhs = line.partition('=')
        if lhs.strip() != 'z%d' % i:
            raise ValueError('%s: expected z%d, got %r' % (path, i, line))
        polys.append(parse_poly(rhs, n))
    return polys


def compile_polys(polys):
    """A fast evaluator: a list, per component, of (coefficient, [(j, e), ...])."""
    return [[(c, [(j, x) for j, x in enumerate(e) if x]) for e, c in poly.items()]
            for poly in polys]


def eval_compiled(cp, y, k=None):
    k = len(cp) if k is None else k
    z = []
    for terms in cp[:k]:
        s = 0
        for c, factors in terms:
            t = c
            for j, x in factors:
                t *= y[j] ** x
            s += t
        z.append(s % P)
    return z
