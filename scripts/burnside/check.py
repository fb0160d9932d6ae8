#!/usr/bin/env python3
"""Check the Hall polynomials of B0(2,5) against multiplication by collection.

usage:
  check.py [--samples N] [--seed S] [--exhaustive K] [--root DIR]
      For every K = 1..34, N random elements y of B_K: the first K components of
      the polynomials for a2 * y (data/cayley/burnside-a2.txt) and a2^-1 * y
      (burnside-a2inv.txt, when present) must equal the product computed by
      collection in the presentation of B_K (data/cayley/burnside-pc.txt
      truncated to K generators), and a1 * y must be y with y0 + 1. For
      K <= the --exhaustive bound (default 5), every element of B_K is checked.
      Components 0..13 must also equal seed 004 (scripts/burnside/seed004.txt).
      Exit status 1 with a message on the first mismatch.
  check.py bfs K [--inverses] [--root DIR]
      Print the growth function F(0), F(1), ... of the Cayley graph of B_K with
      generators {a1, a2} (or {a1^+-1, a2^+-1}) as one line of integers, by a
      breadth-first search that multiplies by collection only (K <= 7).
"""

import itertools
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, HERE)
import pc  # noqa: E402

P = pc.P


def fail(msg):
    print('check.py: ' + msg, file=sys.stderr)
    sys.exit(1)


def check_polys(root, samples, seed, exhaustive):
    pres = pc.Presentation.load(os.path.join(root, 'data/cayley/burnside-pc.txt'))
    n = pres.n
    files = [('a2', 1, os.path.join(root, 'data/cayley/burnside-a2.txt'))]
    inv = os.path.join(root, 'data/cayley/burnside-a2inv.txt')
    if os.path.exists(inv):
        files.append(('a2^-1', P - 1, inv))
    polys = []
    for name, power, path in files:
        try:
            ps = pc.load_polys(path, n)
        except (OSError, ValueError) as e:
            fail(str(e))
        if len(ps) != n:
            fail('%s: %d components, expected %d' % (path, len(ps), n))
        polys.append((name, power, pc.compile_polys(ps)))
        if name == 'a2':
            s = pc.load_polys(os.path.join(HERE, 'seed004.txt'), n)
            for i, poly in enumerate(s):
                if ps[i] != poly:
                    fail('%s: z%d differs from seed 004' % (path, i))

    rng = random.Random(seed)
    checked = 0
    for k in range(1, n + 1):
        quo = pres.truncate(k)
        if k <= exhaustive:
            elems = itertools.product(range(P), repeat=k)
        else:
            elems = ([rng.randrange(P) for _ in range(k)] for _ in range(samples))
        for y in elems:
            y = list(y)
            z = quo.mul(quo.gen(0), y)
            want = [(y[0] + 1) % P] + y[1:]
            if z != want:
                fail('B_%d: a1 * %s = %s by collection, not y0 + 1' % (k, y, z))
            for name, power, cp in polys:
                z = quo.mul(pres.gen(1, power)[:k], y)
                got = pc.eval_compiled(cp, y, k)
                if got != z:
                    i = next(i for i in range(k) if got[i] != z[i])
                    fail('B_%d: %s * %s: polynomial z%d = %d, collection gives %d'
                         % (k, name, y, i, got[i], z[i]))
            checked += 1
    print('ok: %d elements over K = 1..%d, polynomials for %s agree with collection'
          % (checked, n, ', '.join(name for name, _, _ in polys)))


def bfs(root, k, inverses):
    pres = pc.Presentation.load(os.path.join(root, 'data/cayley/burnside-pc.txt')).truncate(k)
    # right multiplication x * a_i^e: the word length, hence F, is the same as
    # for left multiplication
    gens = [(0, 1), (1, 1)] + ([(0, P - 1), (1, P - 1)] if inverses else [])
    start = tuple(pres.identity())
    seen = {start}
    frontier = [start]
    growth = []
    while frontier:
        growth.append(len(frontier))
        nxt = []
        for x in frontier:
            for i, e in gens:
                y = list(x)
                for _ in range(e):
                    pres.mul_gen(y, i)
                y = tuple(y)
                if y not in seen:
                    seen.add(y)
                    nxt.append(y)
        frontier = nxt
    if len(seen) != P ** k:
        fail('B_%d: BFS reached %d elements, not 5^%d' % (k, len(seen), k))
    print(' '.join(map(str, growth)))


def main():
    args = sys.argv[1:]
    root = os.path.dirname(os.path.dirname(HERE))
    if '--root' in args:
        i = args.index('--root')
        root = args[i + 1]
        del args[i:i + 2]
    if args[:1] == ['bfs']:
        inverses = '--inverses' in args
        rest = [a for a in args[1:] if a != '--inverses']
        if len(rest) != 1 or not rest[0].isdigit() or not 1 <= int(rest[0]) <= 7:
            fail('usage: check.py bfs K [--inverses], K from 1 to 7')
        bfs(root, int(rest[0]), inverses)
        return
    opts = {'--samples': 10, '--seed': 1, '--exhaustive': 5}
    while args:
        if args[0] in opts and len(args) > 1 and args[1].isdigit():
            opts[args[0]] = int(args[1])
            args = args[2:]
        else:
            fail('unknown argument %r; see the usage at the top of check.py' % args[0])
    check_polys(root, opts['--samples'], opts['--seed'], opts['--exhaustive'])


if __name__ == '__main__':
    main()
