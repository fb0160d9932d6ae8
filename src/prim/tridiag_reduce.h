/* Private to prim: cyclic reduction, parallel cyclic reduction, their hybrid, and the part
 * elimination of the partitioned solver, for one system, compiled by gcc (one thread a system)
 * and by nvcc (several threads of a block a system, in shared memory). tridiag_cuda.h includes
 * this file once per type with PRIM_T (float or double) and PRIM_NAME(x) (x_f32 or x_f64)
 * defined; PRIM_TRIDIAG_HD, PRIM_TRIDIAG_SYNC and PRIM_TRIDIAG_HYBRID_ROWS come from there. */

/* Cyclic reduction (CR; Hockney 1965, Buzbee, Golub & Nielson 1970), parallel cyclic reduction
 * (PCR; Hockney & Jesshope, Parallel Computers 2, 1988) and the CR-PCR hybrid (Zhang, Cohen &
 * Owens, Fast tridiagonal solvers on the GPU, PPoPP 2010) on rows 0 .. m-1 of a non-periodic
 * system whose element i is at [i] of a, b, c, d (and z, a second right side, when z is not
 * NULL); a[0] and c[m-1] must be 0. x replaces d (and z). wa .. wz: a second copy of m rows for
 * the PCR steps (unused by CR). Thread r of the q threads that share the system (cpu: 0 of 1)
 * takes rows r, r + q, ... of every step; every thread of the block calls this with the same m.
 *
 * CR level s -> 2s replaces each row i = 2s k - 1 (the rows left at level 2s) by itself plus
 * the multiples of rows i - s and i + s that eliminate x_{i-s} and x_{i+s}; the rows it reads
 * are left alone at that level, so the update is in place. CR stops at one row (CR) or at
 * PRIM_TRIDIAG_HYBRID_ROWS rows (the hybrid), whose system of every s-th row PCR then solves;
 * back substitution fills in the rows of each level from the level above. PCR replaces every
 * row at once, hence the second copy. A coupling beyond the ends is zero at every level: row
 * 0's a and row m-1's c start at zero, and each step multiplies them into the rows that would
 * reach beyond. */
PRIM_TRIDIAG_HD void PRIM_NAME(prim_tridiag_reduce)(PRIM_T *a, PRIM_T *b, PRIM_T *c, PRIM_T *d,
                                                   PRIM_T *z, PRIM_T *wa, PRIM_T *wb,
                                                   PRIM_T *wc, PRIM_T *wd, PRIM_T *wz,
                                                   size_t m, int alg, size_t r, size_t q)
{
    size_t s = 1, stop = alg == KEDR_TRIDIAG_CR ? 1
                         : alg == KEDR_TRIDIAG_PCR ? m : PRIM_TRIDIAG_HYBRID_ROWS;
    while (m / s > stop) { /* CR forward: at least two rows at level s */
        for (size_t i = 2 * s * (r + 1) - 1; i < m; i += 2 * s * q) {
            size_t lo = i - s, hi = i + s;
            PRIM_T f = -a[i] / b[lo];
            PRIM_T nb = b[i] + f * c[lo], nd = d[i] + f * d[lo], nz = 0;
            a[i] = f * a[lo];
            if (z)
                nz = z[i] + f * z[lo];
            if (hi < m) {
                PRIM_T g = -c[i] / b[hi];
                c[i] = g * c[hi];
                nb += g * a[hi];
                nd += g * d[hi];
                if (z)
                    nz += g * z[hi];
            }
            b[i] = nb, d[i] = nd;
            if (z)
                z[i] = nz;
        }
        PRIM_TRIDIAG_SYNC();
        s *= 2;
    }
    /* PCR on the k rows left, row j at (j + 1) s - 1, from the arrays x* into y*. */
    size_t k = m / s;
    PRIM_T *xa = a, *xb = b, *xc = c, *xd = d, *xz = z;
    PRIM_T *ya = wa, *yb = wb, *yc = wc, *yd = wd, *yz = wz;
    for (size_t delta = 1; delta < k; delta *= 2) {
        for (size_t j = r; j < k; j += q) {
            size_t i = (j + 1) * s - 1;
            PRIM_T na = 0, nb = xb[i], nc = 0, nd = xd[i], nz = z ? xz[i] : 0;
            if (j >= delta) {
                size_t lo = i - delta * s;
                PRIM_T f = -xa[i] / xb[lo];
                na = f * xa[lo];
                nb += f * xc[lo];
                nd += f * xd[lo];
                if (z)
                    nz += f * xz[lo];
            }
            if (j + delta < k) {
                size_t hi = i + delta * s;
                PRIM_T g = -xc[i] / xb[hi];
                nc = g * xc[hi];
                nb += g * xa[hi];
                nd += g * xd[hi];
                if (z)
                    nz += g * xz[hi];
            }
            ya[i] = na, yb[i] = nb, yc[i] = nc, yd[i] = nd;
            if (z)
                yz[i] = nz;
        }
        PRIM_TRIDIAG_SYNC(); /* every row of this step written before the next reads */
        PRIM_T *t;
        t = xa, xa = ya, ya = t;
        t = xb, xb = yb, yb = t;
        t = xc, xc = yc, yc = t;
        t = xd, xd = yd, yd = t;
        t = xz, xz = yz, yz = t;
    }
    for (size_t j = r; j < k; j += q) { /* each row left is one unknown */
        size_t i = (j + 1) * s - 1;
        PRIM_T inv = (PRIM_T)1 / xb[i];
        d[i] = xd[i] * inv;
        if (z)
            z[i] = xz[i] * inv;
    }
    PRIM_TRIDIAG_SYNC();
    while (s > 1) { /* CR backward: the rows of level s / 2 from those of level s */
        size_t h = s / 2;
        for (size_t i = h - 1 + r * s; i < m; i += q * s) {
            PRIM_T y = d[i], w = z ? z[i] : 0;
            if (i >= h) {
                y -= a[i] * d[i - h];
                if (z)
                    w -= a[i] * z[i - h];
            }
            if (i + h < m) {
                y -= c[i] * d[i + h];
                if (z)
                    w -= c[i] * z[i + h];
            }
            PRIM_T inv = (PRIM_T)1 / b[i];
            d[i] = y * inv;
            if (z)
                z[i] = w * inv;
        }
        PRIM_TRIDIAG_SYNC();
        s = h;
    }
}

/* One part of the partitioned solver: rows 0 .. len-1 at [i * st] (len >= 2), a[0] coupling the
 * unknown before the part and c[len-1] the one after it. The elimination of Wang (A parallel
 * method for tridiagonal equations, ACM TOMS 1981), in the two-sweep form of Laszlo, Giles &
 * Appleyard (Manycore algorithms for batch scalar and block tridiagonal solvers, ACM TOMS 2016),
 * leaves every row i as wa_i x_first + x_i + wc_i x_last = d_i for the part's first and last
 * unknowns (wa, wc at [i * wst]; d is overwritten), except the first and last rows, which
 * couple to the neighbouring parts: the interface rows returned in row[0..5] as
 * (a, c, d) of the first row and (a, c, d) of the last, each with b = 1. A strictly row
 * dominant part gives |wa_i| + |wc_i| < 1 in every row: the interface system is dominant too. */
PRIM_TRIDIAG_HD void PRIM_NAME(prim_tridiag_part_reduce)(const PRIM_T *a, const PRIM_T *b,
                                                        const PRIM_T *c, PRIM_T *d, size_t st,
                                                        PRIM_T *wa, PRIM_T *wc, size_t wst,
                                                        size_t len, PRIM_T row[6])
{
    for (size_t i = 0; i < 2; i++) { /* rows 0 and 1: divided by their diagonal */
        size_t k = i * st, e = i * wst;
        PRIM_T inv = (PRIM_T)1 / b[k];
        wa[e] = a[k] * inv, wc[e] = c[k] * inv, d[k] *= inv;
    }
    for (size_t i = 2; i < len; i++) { /* x_{i-1} eliminated by row i-1: couples to x_first */
        size_t k = i * st, e = i * wst;
        PRIM_T ai = a[k], inv = (PRIM_T)1 / (b[k] - ai * wc[e - wst]);
        d[k] = (d[k] - ai * d[k - st]) * inv;
        wa[e] = -ai * wa[e - wst] * inv;
        wc[e] = c[k] * inv;
    }
    for (size_t i = len - 2; i-- > 1;) { /* x_{i+1} eliminated by row i+1: couples to x_last */
        size_t k = i * st, e = i * wst;
        PRIM_T ci = wc[e];
        d[k] -= ci * d[k + st];
        wa[e] -= ci * wa[e + wst];
        wc[e] = -ci * wc[e + wst];
    }
    if (len > 2) { /* row 0: x_1 eliminated by row 1 */
        PRIM_T c0 = wc[0], inv = (PRIM_T)1 / (1 - c0 * wa[wst]);
        d[0] = (d[0] - c0 * d[st]) * inv;
        wa[0] *= inv;
        wc[0] = -c0 * wc[wst] * inv;
    }
    size_t l = (len - 1) * st, e = (len - 1) * wst;
    row[0] = wa[0], row[1] = wc[0], row[2] = d[0];
    row[3] = wa[e], row[4] = wc[e], row[5] = d[l];
}

/* The part's unknowns from its first and last, x0 and xl, after prim_tridiag_part_reduce. */
PRIM_TRIDIAG_HD void PRIM_NAME(prim_tridiag_part_complete)(const PRIM_T *wa, const PRIM_T *wc,
                                                          size_t wst, PRIM_T *d, size_t st,
                                                          size_t len, PRIM_T x0, PRIM_T xl)
{
    for (size_t i = 1; i + 1 < len; i++) {
        size_t k = i * st, e = i * wst;
        d[k] = d[k] - wa[e] * x0 - wc[e] * xl;
    }
    d[0] = x0;
    d[(len - 1) * st] = xl;
}

/* The chunked solver (KEDR_TRIDIAG_CHUNKED) on one system of n >= 2 unknowns at [i] of a, b,
 * c, d, as the block that holds it in shared memory runs it (cpu: thread 0 of 1). The system is
 * cut into chunks of len rows (len odd and at least 3, so that the chunks' first rows fall in
 * distinct shared-memory banks; the last chunk takes the remaining 2 .. len rows); each thread
 * r of the q that share the system reduces chunks r, r + q, ... to their two interface rows by
 * prim_tridiag_part_reduce, in place (w's two columns overwrite a and c, which the chunk reads
 * row by row before it writes them). The interface system of 2 rows a chunk (in ia .. id, iz
 * for periodic systems: 2 * chunks rows each) is cyclic when the system is: it is bordered as
 * PRIM_TRIDIAG_THOMAS borders, its leading rows solved by cyclic reduction over the q threads;
 * then each chunk is completed from its first and last unknowns. a, b, c lose their values; d
 * receives x. A non-periodic system's a_0 and c_{n-1} are zeroed first. Every thread of the
 * block calls this with the same n and len (the barriers). Stability: that of the part
 * elimination and of CR, which keep the dominance of a row dominant system. */
PRIM_TRIDIAG_HD void PRIM_NAME(prim_tridiag_chunked)(PRIM_T *a, PRIM_T *b, PRIM_T *c, PRIM_T *d,
                                                    size_t n, size_t len, int periodic,
                                                    PRIM_T *ia, PRIM_T *ib, PRIM_T *ic,
                                                    PRIM_T *id, PRIM_T *iz, size_t r, size_t q)
{
    size_t chunks = (n + len - 1) / len, m2 = 2 * chunks, mm = periodic ? m2 - 1 : m2;
    if (!periodic && r == 0)
        a[0] = 0, c[n - 1] = 0;
    PRIM_TRIDIAG_SYNC();
    for (size_t p = r; p < chunks; p += q) {
        size_t lo = p * len, l = p + 1 == chunks ? n - lo : len;
        PRIM_T row[6];
        PRIM_NAME(prim_tridiag_part_reduce)(a + lo, b + lo, c + lo, d + lo, 1, a + lo, c + lo,
                                            1, l, row);
        for (size_t j = 0; j < 2; j++) {
            ia[2 * p + j] = row[3 * j], ib[2 * p + j] = 1, ic[2 * p + j] = row[3 * j + 1];
            id[2 * p + j] = row[3 * j + 2];
            if (periodic)
                iz[2 * p + j] = 0;
        }
    }
    PRIM_TRIDIAG_SYNC();
    if (r == 0) { /* periodic: z's right side -a_0 e_0 - c_{mm-1} e_{mm-1} */
        if (periodic) {
            iz[0] = -ia[0];
            iz[mm - 1] -= ic[mm - 1];
        }
        ia[0] = 0;
        ic[mm - 1] = 0;
    }
    PRIM_TRIDIAG_SYNC();
    PRIM_NAME(prim_tridiag_reduce)(ia, ib, ic, id, periodic ? iz : NULL, NULL, NULL, NULL, NULL,
                                   NULL, mm, KEDR_TRIDIAG_CR, r, q);
    if (periodic && r == 0) {
        size_t l = m2 - 1;
        id[l] = (id[l] - ia[l] * id[mm - 1] - ic[l] * id[0]) /
                (ib[l] + ia[l] * iz[mm - 1] + ic[l] * iz[0]);
    }
    PRIM_TRIDIAG_SYNC();
    if (periodic)
        for (size_t i = r; i < mm; i += q)
            id[i] += id[m2 - 1] * iz[i];
    PRIM_TRIDIAG_SYNC();
    for (size_t p = r; p < chunks; p += q) {
        size_t lo = p * len, l = p + 1 == chunks ? n - lo : len;
        PRIM_NAME(prim_tridiag_part_complete)(a + lo, c + lo, 1, d + lo, 1, l, id[2 * p],
                                              id[2 * p + 1]);
    }
    PRIM_TRIDIAG_SYNC();
}
