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
    /* x_{i-1} eliminated by row i-1: couples to x_first. The row before is carried in
     * registers (wap, wcp, dp), and the rows are read PRIM_TRIDIAG_AHEAD at a time before any
     * is written, so that their loads are in flight together (a row's results go where only
     * that row was read: wa and wc may be a and c) */
    PRIM_T wap = wa[wst], wcp = wc[wst], dp = d[st];
    size_t i = 2;
    for (; i + PRIM_TRIDIAG_AHEAD <= len; i += PRIM_TRIDIAG_AHEAD) {
        PRIM_T ra[PRIM_TRIDIAG_AHEAD], rb[PRIM_TRIDIAG_AHEAD], rc[PRIM_TRIDIAG_AHEAD],
            rd[PRIM_TRIDIAG_AHEAD];
        PRIM_TRIDIAG_UNROLL
        for (size_t u = 0; u < PRIM_TRIDIAG_AHEAD; u++) {
            size_t k = (i + u) * st;
            ra[u] = a[k], rb[u] = b[k], rc[u] = c[k], rd[u] = d[k];
        }
        PRIM_TRIDIAG_UNROLL
        for (size_t u = 0; u < PRIM_TRIDIAG_AHEAD; u++) {
            size_t k = (i + u) * st, e = (i + u) * wst;
            PRIM_T ai = ra[u], inv = (PRIM_T)1 / (rb[u] - ai * wcp);
            dp = (rd[u] - ai * dp) * inv;
            wap = -ai * wap * inv;
            wcp = rc[u] * inv;
            d[k] = dp, wa[e] = wap, wc[e] = wcp;
        }
    }
    for (; i < len; i++) {
        size_t k = i * st, e = i * wst;
        PRIM_T ai = a[k], inv = (PRIM_T)1 / (b[k] - ai * wcp);
        dp = (d[k] - ai * dp) * inv;
        wap = -ai * wap * inv;
        wcp = c[k] * inv;
        d[k] = dp, wa[e] = wap, wc[e] = wcp;
    }
    /* x_{i+1} eliminated by row i+1: couples to x_last; the row after in registers (dn, wan,
     * wcn), the rows read ahead as above, downwards */
    size_t l = (len - 1) * st, el = (len - 1) * wst;
    PRIM_T dn = d[l - st], wan = wa[el - wst], wcn = wc[el - wst];
    i = len - 2; /* rows i - 1 .. 1 are left */
    for (; i > PRIM_TRIDIAG_AHEAD; i -= PRIM_TRIDIAG_AHEAD) {
        PRIM_T rc[PRIM_TRIDIAG_AHEAD], rd[PRIM_TRIDIAG_AHEAD], ra[PRIM_TRIDIAG_AHEAD];
        PRIM_TRIDIAG_UNROLL
        for (size_t u = 0; u < PRIM_TRIDIAG_AHEAD; u++) {
            size_t k = (i - 1 - u) * st, e = (i - 1 - u) * wst;
            rc[u] = wc[e], rd[u] = d[k], ra[u] = wa[e];
        }
        PRIM_TRIDIAG_UNROLL
        for (size_t u = 0; u < PRIM_TRIDIAG_AHEAD; u++) {
            size_t k = (i - 1 - u) * st, e = (i - 1 - u) * wst;
            PRIM_T ci = rc[u];
            dn = rd[u] - ci * dn;
            wan = ra[u] - ci * wan;
            wcn = -ci * wcn;
            d[k] = dn, wa[e] = wan, wc[e] = wcn;
        }
    }
    for (; i-- > 1;) {
        size_t k = i * st, e = i * wst;
        PRIM_T ci = wc[e];
        dn = d[k] - ci * dn;
        wan = wa[e] - ci * wan;
        wcn = -ci * wcn;
        d[k] = dn, wa[e] = wan, wc[e] = wcn;
    }
    if (len > 2) { /* row 0: x_1 eliminated by row 1 */
        PRIM_T c0 = wc[0], inv = (PRIM_T)1 / (1 - c0 * wa[wst]);
        d[0] = (d[0] - c0 * d[st]) * inv;
        wa[0] *= inv;
        wc[0] = -c0 * wc[wst] * inv;
    }
    row[0] = wa[0], row[1] = wc[0], row[2] = d[0];
    row[3] = wa[el], row[4] = wc[el], row[5] = d[l];
}
/* The part's unknowns from its first and last, x0 and xl, after prim_tridiag_part_reduce. */
PRIM_TRIDIAG_HD void PRIM_NAME(prim_tridiag_part_complete)(const PRIM_T *wa, const PRIM_T *wc,
                                                          size_t wst, PRIM_T *d, size_t st,
                                                          size_t len, PRIM_T x0, PRIM_T xl)
{
    size_t i = 1;
    for (; i + PRIM_TRIDIAG_AHEAD < len; i += PRIM_TRIDIAG_AHEAD) { /* loads first, as above */
        PRIM_T ra[PRIM_TRIDIAG_AHEAD], rc[PRIM_TRIDIAG_AHEAD], rd[PRIM_TRIDIAG_AHEAD];
        PRIM_TRIDIAG_UNROLL
        for (size_t u = 0; u < PRIM_TRIDIAG_AHEAD; u++) {
            size_t k = (i + u) * st, e = (i + u) * wst;
            ra[u] = wa[e], rc[u] = wc[e], rd[u] = d[k];
        }
        PRIM_TRIDIAG_UNROLL
        for (size_t u = 0; u < PRIM_TRIDIAG_AHEAD; u++)
            d[(i + u) * st] = rd[u] - ra[u] * x0 - rc[u] * xl;
    }
    for (; i + 1 < len; i++) {
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

/* The streamed solver (KEDR_TRIDIAG_CHUNKED on contiguous systems longer than a block's shared
 * memory holds) cuts a system into segments (prim_tridiag_segment_start), each small enough
 * for one block, and reads every segment twice: step 1 reduces each segment on chip to its two
 * interface rows and keeps nothing else; step 2 solves the interface system of all segments
 * (2 rows a segment, cyclic when the system is); step 3 reads each segment again and solves it
 * from its first and last unknowns. */

/* Step 1 on one segment of m >= 2 rows at [i] of a, b, c, d (in place: they lose their
 * values), a[0] coupling the unknown before the segment and c[m-1] the one after it: its two
 * interface rows, as prim_tridiag_part_reduce gives them for a whole part ((a, c, d) of the
 * first row, then of the last, each with b = 1) into row[0..5] of every thread. Each thread r
 * of the q reduces chunks r, r + q, ... of len rows (the chunked solver's cut: at most q
 * chunks, the last of 2 .. len rows) to their interface rows, into ia .. id (2 q rows); that
 * interface system of the chunks is a part again, cut into parts of about
 * PRIM_TRIDIAG_CHUNK_ROWS rows and reduced the same way, level after level, its rows going
 * back and forth between ia .. id and ja .. jd (q / 2 + 2 rows each), until two rows are left.
 * Every thread of the block calls this with the same m and len (the barriers). */
PRIM_TRIDIAG_HD void PRIM_NAME(prim_tridiag_segment_reduce)(
    PRIM_T *a, PRIM_T *b, PRIM_T *c, PRIM_T *d, size_t m, size_t len, PRIM_T *ia, PRIM_T *ib,
    PRIM_T *ic, PRIM_T *id, PRIM_T *ja, PRIM_T *jb, PRIM_T *jc, PRIM_T *jd, PRIM_T row[6],
    size_t r, size_t q)
{
    PRIM_T *xa = a, *xb = b, *xc = c, *xd = d; /* the rows of this level */
    PRIM_T *ya = ia, *yb = ib, *yc = ic, *yd = id; /* their interface rows */
    size_t total = m, pl = len, parts = (m + len - 1) / len;
    for (;;) {
        for (size_t p = r; p < parts; p += q) {
            size_t lo = p * pl, l = p + 1 == parts ? total - lo : pl;
            PRIM_T w[6];
            PRIM_NAME(prim_tridiag_part_reduce)(xa + lo, xb + lo, xc + lo, xd + lo, 1, xa + lo,
                                                xc + lo, 1, l, w);
            for (size_t j = 0; j < 2; j++) {
                ya[2 * p + j] = w[3 * j], yb[2 * p + j] = 1, yc[2 * p + j] = w[3 * j + 1];
                yd[2 * p + j] = w[3 * j + 2];
            }
        }
        PRIM_TRIDIAG_SYNC(); /* this level's rows written before the next level reads them */
        total = 2 * parts;
        if (total == 2)
            break;
        xa = ya, xb = yb, xc = yc, xd = yd;
        int in_i = ya == ia;
        ya = in_i ? ja : ia, yb = in_i ? jb : ib, yc = in_i ? jc : ic, yd = in_i ? jd : id;
        parts = total / PRIM_TRIDIAG_CHUNK_ROWS;
        parts = parts ? parts : 1;
        pl = total / parts; /* the last part takes pl .. 2 pl - 1 rows */
    }
    row[0] = ya[0], row[1] = yc[0], row[2] = yd[0];
    row[3] = ya[1], row[4] = yc[1], row[5] = yd[1];
}

/* Step 3 on one segment of m >= 2 rows at [i] of a, b, c, d (in place), given its first and
 * last unknowns x0 and xl: rows 1 .. m-2, with the terms of x0 and xl moved to the right side,
 * are a system of their own, solved by the chunked solver over the q threads with chunks of
 * len rows (prim_tridiag_chunk_len(m - 2, q); unused when m <= 3; ia .. iz: 2 q rows each).
 * d receives x, all m rows. Every thread calls this with the same m and len. */
PRIM_TRIDIAG_HD void PRIM_NAME(prim_tridiag_segment_complete)(
    PRIM_T *a, PRIM_T *b, PRIM_T *c, PRIM_T *d, size_t m, size_t len, PRIM_T x0, PRIM_T xl,
    PRIM_T *ia, PRIM_T *ib, PRIM_T *ic, PRIM_T *id, PRIM_T *iz, size_t r, size_t q)
{
    if (r == 0) {
        if (m > 2) {
            d[1] -= a[1] * x0;
            d[m - 2] -= c[m - 2] * xl;
        }
        if (m == 3)
            d[1] /= b[1];
        d[0] = x0, d[m - 1] = xl;
    }
    PRIM_TRIDIAG_SYNC();
    if (m > 3)
        PRIM_NAME(prim_tridiag_chunked)(a + 1, b + 1, c + 1, d + 1, m - 2, len, 0, ia, ib, ic,
                                        id, iz, r, q);
}

/* The streamed solver on one contiguous system of n >= 2 unknowns at [i] of a, b, c, d (d
 * receives x; a, b, c are read only), segments of at most `rows` rows (rows >= 4), a segment
 * at a time through work rows, shared by the q threads that call this (thread r; every thread
 * with the same arguments): 4 rows elements for the segment, prim_tridiag_segment_iface(q)
 * for its interface rows, 12 segs for the interface system of all segments (segs =
 * prim_tridiag_segments(n, rows)), which thread 0 solves by Thomas. The steps of the GPU's
 * kernels, with the segments one after the other instead of one a block: the cpu's CHUNKED
 * runs this (q = 1), and a test runs it over several threads. A non-periodic system's a_0 and
 * c_{n-1} are ignored. */
PRIM_TRIDIAG_HD void PRIM_NAME(prim_tridiag_streamed)(const PRIM_T *a, const PRIM_T *b,
                                                     const PRIM_T *c, PRIM_T *d, size_t n,
                                                     size_t rows, int periodic, PRIM_T *work,
                                                     size_t r, size_t q)
{
    size_t segs = prim_tridiag_segments(n, rows), m2 = 2 * segs, h = q / 2 + 2;
    PRIM_T *sa = work, *sb = sa + rows, *sc = sb + rows, *sd = sc + rows;
    PRIM_T *ia = sd + rows, *ib = ia + 2 * q, *ic = ib + 2 * q, *id = ic + 2 * q;
    PRIM_T *iz = id + 2 * q, *ja = iz + 2 * q, *jb = ja + h, *jc = jb + h, *jd = jc + h;
    PRIM_T *ga = jd + h, *gb = ga + m2, *gc = gb + m2, *gd = gc + m2, *gp = gd + m2;
    PRIM_T *gz = gp + m2;
    for (size_t g = 0; g < segs; g++) { /* step 1 */
        size_t lo = prim_tridiag_segment_start(n, segs, g);
        size_t m = prim_tridiag_segment_start(n, segs, g + 1) - lo;
        for (size_t i = r; i < m; i += q)
            sa[i] = a[lo + i], sb[i] = b[lo + i], sc[i] = c[lo + i], sd[i] = d[lo + i];
        PRIM_TRIDIAG_SYNC();
        if (r == 0 && !periodic && g == 0)
            sa[0] = 0;
        if (r == 0 && !periodic && g + 1 == segs)
            sc[m - 1] = 0;
        PRIM_TRIDIAG_SYNC();
        PRIM_T row[6];
        PRIM_NAME(prim_tridiag_segment_reduce)(sa, sb, sc, sd, m, prim_tridiag_chunk_len(m, q),
                                               ia, ib, ic, id, ja, jb, jc, jd, row, r, q);
        if (r == 0)
            for (size_t j = 0; j < 2; j++) {
                ga[2 * g + j] = row[3 * j], gb[2 * g + j] = 1, gc[2 * g + j] = row[3 * j + 1];
                gd[2 * g + j] = row[3 * j + 2];
            }
        PRIM_TRIDIAG_SYNC(); /* every thread has read row before the next segment comes in */
    }
    if (r == 0) /* step 2 */
        PRIM_NAME(prim_tridiag_thomas)(ga, gb, gc, gd, gp, gz, m2, 1, periodic);
    PRIM_TRIDIAG_SYNC();
    for (size_t g = 0; g < segs; g++) { /* step 3 */
        size_t lo = prim_tridiag_segment_start(n, segs, g);
        size_t m = prim_tridiag_segment_start(n, segs, g + 1) - lo;
        for (size_t i = r; i < m; i += q)
            sa[i] = a[lo + i], sb[i] = b[lo + i], sc[i] = c[lo + i], sd[i] = d[lo + i];
        PRIM_TRIDIAG_SYNC();
        PRIM_NAME(prim_tridiag_segment_complete)(sa, sb, sc, sd, m,
                                                 m > 3 ? prim_tridiag_chunk_len(m - 2, q) : 3,
                                                 gd[2 * g], gd[2 * g + 1], ia, ib, ic, id, iz,
                                                 r, q);
        for (size_t i = r; i < m; i += q)
            d[lo + i] = sd[i];
        PRIM_TRIDIAG_SYNC(); /* the segment written out before the next comes in */
    }
}
