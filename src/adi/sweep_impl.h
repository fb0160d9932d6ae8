/* The physics of one sweep, for both back ends and both precisions: included by sweep_cpu.c and
 * sweep.cu once per type, with REAL (float or double), ADI_FN(name) (a name for this type) and
 * ADI_HD (the qualifiers: static inline, or __host__ __device__ on the GPU) defined.
 *
 * A line along axis d is walked once per field: each fluid node's row is built from the fields
 * (the advecting velocity, the explicit source, the ghosts at a segment's ends), eliminated at
 * once (Thomas: c' into the scratch, d' into the output), and at the end of a segment the back
 * substitution runs over it. No coefficient arrays are stored. */

/* Ghost g's value of variable v in this precision. */
#ifndef ADI_GHOST_VALUE
#define ADI_GHOST_VALUE(g, v) (sizeof(REAL) == 4 ? (REAL)(g)->value_f[v] : (REAL)(g)->value[v])
#endif

typedef struct {
    REAL *out[4];
    const REAL *old[4];
    const REAL *coef[4];
} ADI_FN(arrays);

/* The value of field f at the neighbour idx + step of the fluid node idx: the neighbour's own
 * value when it is an unknown, else its ghost rule for variable var (Dirichlet, or the node's
 * own value: zero gradient). */
ADI_HD REAL ADI_FN(nb)(const adi_params *p, const unsigned char *mask, const REAL *f,
                       int64_t idx, int64_t step, int var)
{
    /* Both values are loaded whatever the mask says (every neighbour of a fluid node lies in the
     * arrays), so that on the GPU the three loads are in flight at once instead of the field's
     * waiting for the mask's. */
    unsigned char t = mask[idx + step];
    REAL other = f[idx + step], own = f[idx];
    /* the ghost's value is read whatever its flag says: a select, not a branch, so that the
     * loads of the nodes after this one may be issued before it */
    REAL value = ADI_GHOST_VALUE(&p->ghost[t], var);
    REAL ghost = p->ghost[t].dirichlet[var] ? value : own;
    return t == ADI_FLUID ? other : ghost;
}

/* Central derivative of field var of f along axis e at the fluid node idx; r2h = 1 / (2 h),
 * passed in so that a sweep computes it once (not once a node: a division in double
 * precision). */
ADI_HD REAL ADI_FN(deriv_h)(const adi_params *p, const unsigned char *mask, const REAL *f,
                            int64_t idx, int e, int var, REAL r2h)
{
    int64_t s = p->s[e];
    return (ADI_FN(nb)(p, mask, f, idx, s, var) - ADI_FN(nb)(p, mask, f, idx, -s, var)) * r2h;
}

ADI_HD REAL ADI_FN(deriv)(const adi_params *p, const unsigned char *mask, const REAL *f,
                          int64_t idx, int e, int var)
{
    return ADI_FN(deriv_h)(p, mask, f, idx, e, var, (REAL)(0.5 / p->h));
}

/* u[d] for d = 0, 1, 2 without indexing by a variable (which would put the array of pointers
 * in a GPU thread's local memory). */
ADI_HD const REAL *ADI_FN(pick)(const REAL *const *u, int d)
{
    return d == 0 ? u[0] : d == 1 ? u[1] : u[2];
}

/* The book's Phi_d (eq. 12.5) at idx from the velocities u[0..2]:
 * 2 (du_d/dx_d)^2 + sum_{c != d} (du_c/dx_d)^2 + sum_{e != d} du_d/dx_e du_e/dx_d. */
ADI_HD REAL ADI_FN(phi)(const adi_params *p, const unsigned char *mask, const REAL *const *u,
                        int64_t idx, int d, REAL r2h)
{
    const REAL *ud = ADI_FN(pick)(u, d);
    REAL dd = ADI_FN(deriv_h)(p, mask, ud, idx, d, d, r2h);
    REAL phi = 2 * dd * dd;
    for (int c = 0; c < 3; c++) {
        if (c == d)
            continue;
        REAL cd = ADI_FN(deriv_h)(p, mask, u[c], idx, d, c, r2h);
        phi += cd * cd + ADI_FN(deriv_h)(p, mask, ud, idx, c, d, r2h) * cd;
    }
    return phi;
}

/* One line's elimination in progress: where its segment started, the last c' of the velocity
 * and temperature rows, and the last d' of each field. Zero it before a line. */
typedef struct {
    int start;
    REAL cu, ct, dp[4];
} ADI_FN(line_state);

/* The constants of a sweep's rows. */
typedef struct {
    int64_t sd;
    REAL rh, r2h, rdt, ku, kt;
    REAL force, diss; /* the force along d, the dissipation's factor */
    const REAL *adv;
} ADI_FN(row_consts);

ADI_HD void ADI_FN(row_consts_init)(const adi_params *p, int d, const ADI_FN(arrays) *a,
                                    ADI_FN(row_consts) *k)
{
    REAL rh2 = (REAL)(1 / (p->h * p->h));
    k->sd = p->s[d];
    k->rh = (REAL)(1 / p->h);
    k->r2h = (REAL)(0.5 / p->h);
    k->rdt = (REAL)(1 / p->dt);
    k->ku = (REAL)p->kappa_u * rh2;
    k->kt = (REAL)p->kappa_t * rh2;
    k->force = (REAL)p->force[d];
    k->diss = (REAL)p->dissipation;
    k->adv = ADI_FN(pick)(a->coef, d);
}

/* The rows of the fluid node idx along d, for the four fields: A, B, C of the velocity rows
 * ([0]; u, v and w have the same rows: the same viscosity and the same ghost kinds, as
 * adi_params_init gives them one Dirichlet flag) and of the temperature rows ([1]), and the
 * right sides D. A neighbour that is not an unknown (a segment's end) is folded in by its
 * ghost rule, and the row's coupling to it is 0; *lo and *hi are the neighbours' codes. */
typedef struct {
    REAL A[2], B[2], C[2], D[4];
} ADI_FN(rows);

/* diss: whether the dissipation term is added (node_rows: when it is not zero; the register
 * sweep always adds it, so that no branch stands between a chunk's loads). */
ADI_HD void ADI_FN(node_rows_d)(const adi_params *p, const ADI_FN(row_consts) *k,
                                const unsigned char *mask, int d, int64_t idx,
                                const ADI_FN(arrays) *a, ADI_FN(rows) *r, unsigned char *lo_code,
                                unsigned char *hi_code, int diss)
{
    const int64_t sd = k->sd;
    const REAL rh = k->rh, r2h = k->r2h, rdt = k->rdt, ku = k->ku, kt = k->kt;
    REAL adv = k->adv[idx];
    /* Advection (the same in every row), then diffusion. */
    /* central, or upwind (by the sign of adv); selects, not branches (as the ghosts below) */
    int central = p->central != 0, up = adv > 0;
    REAL Aa = central ? -adv * r2h : up ? -adv * rh : (REAL)0;
    REAL Ba = central ? (REAL)0 : up ? adv * rh : -adv * rh;
    REAL Ca = central ? adv * r2h : up ? (REAL)0 : adv * rh;
    REAL Au = Aa - ku, Cu = Ca - ku, Bu = rdt + 2 * ku + Ba;
    REAL At = Aa - kt, Ct = Ca - kt, Bt = rdt + 2 * kt + Ba;
    /* The explicit sources: the pressure (T) gradient and the force of component d, the
     * dissipation Phi_d of T; added with constant indices, so that D stays in registers. */
    REAL src = k->force - ADI_FN(deriv_h)(p, mask, a->coef[3], idx, d, 3, r2h);
    REAL *D = r->D;
    for (int v = 0; v < 3; v++)
        D[v] = a->old[v][idx] * rdt + (v == d ? src : (REAL)0);
    D[3] = a->old[3][idx] * rdt;
    if (diss)
        D[3] += k->diss * ADI_FN(phi)(p, mask, a->coef, idx, d, r2h);
    unsigned char lo = mask[idx - sd], hi = mask[idx + sd];
    /* A segment's end: at the low end (lo not an unknown) the low ghost, Dirichlet (folded into
     * D) or extrapolated (into B); the same at the high end. Written with selects, every ghost
     * value read, so that no branch stands between this node's loads and the next one's. */
    {
        const adi_ghost *g = &p->ghost[lo];
        unsigned char f0 = g->dirichlet[0], f3 = g->dirichlet[3];
        int end = lo != ADI_FLUID, du = end & (f0 != 0), dt = end & (f3 != 0);
        for (int v = 0; v < 3; v++) {
            REAL gv = ADI_GHOST_VALUE(g, v);
            D[v] = du ? D[v] - Au * gv : D[v];
        }
        REAL gt = ADI_GHOST_VALUE(g, 3);
        D[3] = dt ? D[3] - At * gt : D[3];
        Bu = end & !du ? Bu + Au : Bu;
        Bt = end & !dt ? Bt + At : Bt;
        Au = end ? (REAL)0 : Au;
        At = end ? (REAL)0 : At;
    }
    {
        const adi_ghost *g = &p->ghost[hi];
        unsigned char f0 = g->dirichlet[0], f3 = g->dirichlet[3];
        int end = hi != ADI_FLUID, du = end & (f0 != 0), dt = end & (f3 != 0);
        for (int v = 0; v < 3; v++) {
            REAL gv = ADI_GHOST_VALUE(g, v);
            D[v] = du ? D[v] - Cu * gv : D[v];
        }
        REAL gt = ADI_GHOST_VALUE(g, 3);
        D[3] = dt ? D[3] - Ct * gt : D[3];
        Bu = end & !du ? Bu + Cu : Bu;
        Bt = end & !dt ? Bt + Ct : Bt;
        Cu = end ? (REAL)0 : Cu;
        Ct = end ? (REAL)0 : Ct;
    }
    r->A[0] = Au;
    r->B[0] = Bu;
    r->C[0] = Cu;
    r->A[1] = At;
    r->B[1] = Bt;
    r->C[1] = Ct;
    *lo_code = lo;
    *hi_code = hi;
}

ADI_HD void ADI_FN(node_rows)(const adi_params *p, const ADI_FN(row_consts) *k,
                              const unsigned char *mask, int d, int64_t idx,
                              const ADI_FN(arrays) *a, ADI_FN(rows) *r, unsigned char *lo_code,
                              unsigned char *hi_code)
{
    ADI_FN(node_rows_d)(p, k, mask, d, idx, a, r, lo_code, hi_code, p->dissipation != 0);
}

/* Node m of the line base + m s_d, m = 1 .. n_d - 2 in order (the line's ends lie on the box's
 * faces and are never unknowns): the four fields' rows, eliminated side by side, so that each
 * node's mask and advecting velocity are read once and the four chains of dependent steps
 * overlap; at a segment's end, its back substitution. One pivot and one c' serve the three
 * velocity components, one the temperature. cp[(2 m) * cps] and cp[(2 m + 1) * cps] are this
 * line's scratch. */
ADI_HD void ADI_FN(sweep_node)(const adi_params *p, const ADI_FN(row_consts) *k,
                               const unsigned char *mask, int d, int64_t base, int m,
                               const ADI_FN(arrays) *a, REAL *cp, int64_t cps,
                               ADI_FN(line_state) *ls)
{
    const int64_t sd = k->sd;
    int64_t idx = base + m * sd;
    if (mask[idx] != ADI_FLUID)
        return;
    ADI_FN(rows) r;
    unsigned char lo, hi;
    ADI_FN(node_rows)(p, k, mask, d, idx, a, &r, &lo, &hi);
    if (lo != ADI_FLUID)
        ls->start = m;
    REAL ru = 1 / (r.B[0] - r.A[0] * ls->cu), rt = 1 / (r.B[1] - r.A[1] * ls->ct);
    REAL cu = ls->cu = r.C[0] * ru, ct = ls->ct = r.C[1] * rt;
    REAL *dp = ls->dp;
    for (int v = 0; v < 3; v++)
        dp[v] = (r.D[v] - r.A[0] * dp[v]) * ru;
    dp[3] = (r.D[3] - r.A[1] * dp[3]) * rt;
    cp[(2 * m) * cps] = cu;
    cp[(2 * m + 1) * cps] = ct;
    for (int v = 0; v < 4; v++)
        a->out[v][idx] = dp[v];
    if (hi != ADI_FLUID) { /* the segment ends: back substitution */
        REAL x[4] = {dp[0], dp[1], dp[2], dp[3]};
        for (int q = m - 1; q >= ls->start; q--) {
            int64_t iq = base + q * sd;
            REAL c1 = cp[(2 * q) * cps], c2 = cp[(2 * q + 1) * cps];
            for (int v = 0; v < 3; v++) {
                x[v] = a->out[v][iq] - c1 * x[v];
                a->out[v][iq] = x[v];
            }
            x[3] = a->out[3][iq] - c2 * x[3];
            a->out[3][iq] = x[3];
        }
    }
}

/* The rows of any node along x: a fluid node's (node_rows), or x = 0 for any other node (solid
 * and boundary nodes hold 0 in every state). */
ADI_HD void ADI_FN(any_rows)(const adi_params *p, const ADI_FN(row_consts) *k,
                             const unsigned char *mask, int64_t idx, const ADI_FN(arrays) *a,
                             ADI_FN(rows) *r)
{
    if (mask[idx] == ADI_FLUID) {
        unsigned char lo, hi;
        ADI_FN(node_rows)(p, k, mask, 0, idx, a, r, &lo, &hi);
        return;
    }
    for (int m = 0; m < 2; m++) {
        r->A[m] = r->C[m] = 0;
        r->B[m] = 1;
    }
    for (int v = 0; v < 4; v++)
        r->D[v] = 0;
}

/* The partitioned X sweep through kedr_tridiag_part_reduce: node idx's rows into the six arrays
 * abc (a, b, c of the velocity, then of the temperature, n elements each, row e), field v's
 * right side into dw[v ds + e]. */
ADI_HD void ADI_FN(part_node)(const adi_params *p, const ADI_FN(row_consts) *k,
                              const unsigned char *mask, int64_t idx, const ADI_FN(arrays) *a,
                              REAL *abc, int64_t n, int64_t e, REAL *dw, int64_t ds)
{
    ADI_FN(rows) r;
    ADI_FN(any_rows)(p, k, mask, idx, a, &r);
    for (int m = 0; m < 2; m++) {
        abc[(3 * m) * n + e] = r.A[m];
        abc[(3 * m + 1) * n + e] = r.B[m];
        abc[(3 * m + 2) * n + e] = r.C[m];
    }
    for (int v = 0; v < 4; v++)
        dw[v * ds + e] = r.D[v];
}

/* The partitioned X sweep, fused: one line's part (its rows i = 0 .. n-1 at nodes
 * base + i plane, this rank's planes) reduced to two interface rows a field, the rows built on
 * the fly as in sweep_node. Rows 1 .. n-1 are eliminated downwards with x_0 as a parameter:
 * x_i + c'_i x_{i+1} = d'_i + s'_i x_0 (s'_0 = 1); the last is the interface row
 * x_{n-1} - s'_{n-1} x_0 + c'_{n-1} x_n = d'_{n-1}. Then upwards, with x_{n-1} as a parameter:
 * x_i = Y_i + S_i x_0 + R_i x_{n-1} (i = n-2 .. 1), which row 0 turns into the interface row
 * x_0 + a_0 / B x_{-1} + c_0 R_1 / B x_{n-1} = (d_0 - c_0 Y_1) / B, B = b_0 + c_0 S_1: the rows
 * of kedr_tridiag_part_reduce. Y goes to out, R and S of the velocity and the temperature to
 * w (4 arrays of ws elements, node idx at idx - plane), the interface rows to ifc (units of
 * 2 plane: ADI_IF_*, row j of line t at j plane + t). part_finish completes the part. */
ADI_HD void ADI_FN(part_line)(const adi_params *p, const ADI_FN(row_consts) *k,
                              const unsigned char *mask, int64_t t, int n, int64_t plane,
                              const ADI_FN(arrays) *a, REAL *w, int64_t ws, REAL *ifc)
{
    int64_t base = plane + t;
    ADI_FN(rows) r0, r;
    ADI_FN(any_rows)(p, k, mask, base, a, &r0);
    REAL c1 = 0, c2 = 0, s1 = 1, s2 = 1, dp[4] = {0, 0, 0, 0};
    for (int i = 1; i < n; i++) {
        int64_t idx = base + i * plane, e = idx - plane;
        ADI_FN(any_rows)(p, k, mask, idx, a, &r);
        REAL ru = 1 / (r.B[0] - r.A[0] * c1), rt = 1 / (r.B[1] - r.A[1] * c2);
        c1 = r.C[0] * ru;
        c2 = r.C[1] * rt;
        s1 = -r.A[0] * s1 * ru;
        s2 = -r.A[1] * s2 * rt;
        for (int v = 0; v < 3; v++)
            dp[v] = (r.D[v] - r.A[0] * dp[v]) * ru;
        dp[3] = (r.D[3] - r.A[1] * dp[3]) * rt;
        w[e] = c1;
        w[ws + e] = c2;
        w[2 * ws + e] = s1;
        w[3 * ws + e] = s2;
        for (int v = 0; v < 4; v++)
            a->out[v][idx] = dp[v];
    }
    int64_t unit = 2 * plane, last = plane + t;
    ifc[ADI_IF_AU * unit + last] = -s1;
    ifc[ADI_IF_CU * unit + last] = c1;
    ifc[ADI_IF_AT * unit + last] = -s2;
    ifc[ADI_IF_CT * unit + last] = c2;
    for (int v = 0; v < 4; v++)
        ifc[(ADI_IF_D0 + v) * unit + last] = dp[v];
    REAL y[4] = {0, 0, 0, 0}, S1 = 0, S2 = 0, R1 = 1, R2 = 1;
    for (int i = n - 2; i >= 1; i--) {
        int64_t idx = base + i * plane, e = idx - plane;
        REAL cu = w[e], ct = w[ws + e];
        S1 = w[2 * ws + e] - cu * S1;
        S2 = w[3 * ws + e] - ct * S2;
        R1 = -cu * R1;
        R2 = -ct * R2;
        for (int v = 0; v < 3; v++)
            y[v] = a->out[v][idx] - cu * y[v];
        y[3] = a->out[3][idx] - ct * y[3];
        w[e] = R1;
        w[ws + e] = R2;
        w[2 * ws + e] = S1;
        w[3 * ws + e] = S2;
        for (int v = 0; v < 4; v++)
            a->out[v][idx] = y[v];
    }
    REAL ru = 1 / (r0.B[0] + r0.C[0] * S1), rt = 1 / (r0.B[1] + r0.C[1] * S2);
    ifc[ADI_IF_AU * unit + t] = r0.A[0] * ru;
    ifc[ADI_IF_CU * unit + t] = r0.C[0] * R1 * ru;
    ifc[ADI_IF_AT * unit + t] = r0.A[1] * rt;
    ifc[ADI_IF_CT * unit + t] = r0.C[1] * R2 * rt;
    for (int v = 0; v < 3; v++)
        ifc[(ADI_IF_D0 + v) * unit + t] = (r0.D[v] - r0.C[0] * y[v]) * ru;
    ifc[(ADI_IF_D0 + 3) * unit + t] = (r0.D[3] - r0.C[1] * y[3]) * rt;
}

/* Completes node e of the own planes (row i = e / plane of line e % plane, of n rows) from the
 * interface unknowns x (field v's row j of line t at (2 v + j) plane + t). */
ADI_HD void ADI_FN(part_finish)(const ADI_FN(arrays) *a, const REAL *w, int64_t ws,
                                const REAL *x, int64_t e, int n, int64_t plane)
{
    int64_t i = e / plane, t = e % plane, idx = e + plane;
    for (int v = 0; v < 4; v++) {
        REAL x0 = x[(2 * v) * plane + t], xl = x[(2 * v + 1) * plane + t];
        REAL y;
        if (i == 0)
            y = x0;
        else if (i == n - 1)
            y = xl;
        else
            y = a->out[v][idx] + w[(v == 3 ? 3 : 2) * ws + e] * x0 +
                w[(v == 3 ? 1 : 0) * ws + e] * xl;
        a->out[v][idx] = y;
    }
}

/* The four fields on one line (the GPU's unit of work). */
ADI_HD void ADI_FN(sweep_line)(const adi_params *p, const unsigned char *mask, int d, int64_t base,
                               const ADI_FN(arrays) *a, REAL *cp, int64_t cps)
{
    ADI_FN(row_consts) k;
    ADI_FN(row_consts_init)(p, d, a, &k);
    ADI_FN(line_state) ls = {0, 0, 0, {0, 0, 0, 0}};
    for (int m = 1; m < p->n[d] - 1; m++)
        ADI_FN(sweep_node)(p, &k, mask, d, base, m, a, cp, cps, &ls);
}

/* The on-chip sweep (KEDR_ADI_SWEEP=chip): a line's interior nodes m = 1 .. n_d - 2 are cut into
 * P chunks of at most L nodes, chunk k holding m = 1 + k L .. (its last node b_k). The whole
 * interior is one tridiagonal system: a fluid node's rows as in sweep_node (a segment's end
 * couples to nothing), any other node the row x = 0. Each chunk is eliminated downwards on its
 * own, with the last unknown of the chunk before, z_{k-1} = x_{b_{k-1}}, as a parameter:
 *   x_i + c'_i x_{i+1} = d'_i + s'_i z_{k-1}                                   (chip_forward)
 * and its per-node c', s' (velocity and temperature) and d' (four fields), 8 values a node, stay
 * in the store st (quantity q of chunk node j at st[(8 j + q) ss]; on the GPU, shared memory).
 * Upwards from x_b = z_k, each x_i = Y_i + S_i z_{k-1} + R_i z_k; only the first node's Y, S, R
 * are kept (chip_head). Row b_k of chunk k with chunk k+1's head gives the interface system
 *   -s'_b z_{k-1} + (1 + c'_b S') z_k + c'_b R' z_{k+1} = d'_b - c'_b Y'       (chip_row)
 * of P unknowns a line and field (the velocity's three fields share one matrix), solved by
 * Thomas (chip_iface); then each chunk substitutes back from z_{k-1} and z_k (chip_back). So a
 * sweep reads its inputs once and writes the result once; nothing goes through global scratch.
 * The interface system is the Schur complement of a diagonally dominant system, diagonally
 * dominant itself (Wang 1981; the SPIKE family). */

/* Downward elimination of chunk nodes m0 .. m0 + len - 1 of the line at base; returns the
 * chunk's fluid flags (bit j: node m0 + j is fluid). */
ADI_HD unsigned ADI_FN(chip_forward)(const adi_params *p, const ADI_FN(row_consts) *k,
                                     const unsigned char *mask, int d, int64_t base, int m0,
                                     int len, const ADI_FN(arrays) *a, REAL *st, int64_t ss)
{
    REAL cu = 0, ct = 0, su = 1, sv = 1, dp[4] = {0, 0, 0, 0};
    unsigned fluid = 0;
    for (int j = 0; j < len; j++) {
        int64_t idx = base + (int64_t)(m0 + j) * k->sd;
        ADI_FN(rows) r;
        if (mask[idx] == ADI_FLUID) {
            unsigned char lo, hi;
            ADI_FN(node_rows)(p, k, mask, d, idx, a, &r, &lo, &hi);
            fluid |= 1u << j;
        } else {
            r.A[0] = r.A[1] = r.C[0] = r.C[1] = 0;
            r.B[0] = r.B[1] = 1;
            r.D[0] = r.D[1] = r.D[2] = r.D[3] = 0;
        }
        /* s' starts at -A_a / B_a: the same formula with s'_{a-1} = 1 and c'_{a-1} = 0 */
        REAL ru = 1 / (r.B[0] - r.A[0] * cu), rt = 1 / (r.B[1] - r.A[1] * ct);
        cu = r.C[0] * ru;
        ct = r.C[1] * rt;
        su = -r.A[0] * su * ru;
        sv = -r.A[1] * sv * rt;
        for (int v = 0; v < 3; v++)
            dp[v] = (r.D[v] - r.A[0] * dp[v]) * ru;
        dp[3] = (r.D[3] - r.A[1] * dp[3]) * rt;
        REAL *q = st + (int64_t)(ADI_CHIP_Q * j) * ss;
        q[0] = cu;
        q[ss] = ct;
        q[2 * ss] = su;
        q[3 * ss] = sv;
        for (int v = 0; v < 4; v++)
            q[(4 + v) * ss] = dp[v];
    }
    return fluid;
}

/* The first node's Y (4), S (2) and R (2) of a chunk of len nodes, into h[q hs], q = 0 .. 7. */
ADI_HD void ADI_FN(chip_head)(const REAL *st, int64_t ss, int len, REAL *h, int64_t hs)
{
    REAL Y[4] = {0, 0, 0, 0}, S[2] = {0, 0}, R[2] = {1, 1};
    for (int j = len - 2; j >= 0; j--) {
        const REAL *q = st + (int64_t)(ADI_CHIP_Q * j) * ss;
        REAL c[2] = {q[0], q[ss]};
        for (int m = 0; m < 2; m++) {
            S[m] = q[(2 + m) * ss] - c[m] * S[m];
            R[m] = -c[m] * R[m];
        }
        for (int v = 0; v < 3; v++)
            Y[v] = q[(4 + v) * ss] - c[0] * Y[v];
        Y[3] = q[7 * ss] - c[1] * Y[3];
    }
    for (int v = 0; v < 4; v++)
        h[v * hs] = Y[v];
    h[4 * hs] = S[0];
    h[5 * hs] = S[1];
    h[6 * hs] = R[0];
    h[7 * hs] = R[1];
}

/* Chunk k's interface row (row[q rs], q < ADI_CHIP_ROW) from its store (last node len - 1) and
 * the head of chunk k + 1 (NULL for the last chunk: the line's last node couples to nothing). */
ADI_HD void ADI_FN(chip_row)(const REAL *st, int64_t ss, int len, const REAL *next,
                             int64_t ns, REAL *row, int64_t rs)
{
    const REAL *q = st + (int64_t)(ADI_CHIP_Q * (len - 1)) * ss;
    for (int m = 0; m < 2; m++) {
        REAL c = next ? q[m * ss] : (REAL)0;
        row[m * rs] = -q[(2 + m) * ss];
        row[(2 + m) * rs] = next ? 1 + c * next[(4 + m) * ns] : (REAL)1;
        row[(4 + m) * rs] = next ? c * next[(6 + m) * ns] : (REAL)0;
    }
    for (int v = 0; v < 4; v++) {
        REAL c = next ? q[(v == 3 ? 1 : 0) * ss] : (REAL)0;
        row[(6 + v) * rs] = q[(4 + v) * ss] - (next ? c * next[v * ns] : (REAL)0);
    }
}

/* The interface system of one line: P rows, row k at rows + k kstep (value q at q rs), solved
 * in place by Thomas: afterwards rhs (q = 6 + v) holds z_k of field v. */
ADI_HD void ADI_FN(chip_iface)(REAL *rows, int64_t kstep, int64_t rs, int P)
{
    REAL cc[2] = {0, 0}, dd[4] = {0, 0, 0, 0};
    for (int k = 0; k < P; k++) {
        REAL *w = rows + k * kstep;
        REAL rp[2];
        for (int m = 0; m < 2; m++) {
            REAL lo = w[m * rs];
            rp[m] = 1 / (w[(2 + m) * rs] - lo * cc[m]);
            cc[m] = w[(4 + m) * rs] * rp[m];
            w[(4 + m) * rs] = cc[m];
        }
        for (int v = 0; v < 4; v++) {
            int m = v == 3 ? 1 : 0;
            dd[v] = (w[(6 + v) * rs] - w[m * rs] * dd[v]) * rp[m];
            w[(6 + v) * rs] = dd[v];
        }
    }
    for (int k = P - 2; k >= 0; k--) {
        REAL *w = rows + k * kstep, *u = rows + (k + 1) * kstep;
        for (int v = 0; v < 4; v++)
            w[(6 + v) * rs] -= w[(4 + (v == 3 ? 1 : 0)) * rs] * u[(6 + v) * rs];
    }
}

/* Back substitution of a chunk from z_{k-1} (zp) and z_k (zk), each 4 fields; the fluid nodes'
 * results to the output (other nodes keep theirs, as in sweep_node). */
ADI_HD void ADI_FN(chip_back)(const ADI_FN(arrays) *a, int64_t base, int64_t sd, int m0,
                              int len, const REAL *st, int64_t ss, unsigned fluid,
                              const REAL zp[4], const REAL zk[4])
{
    REAL x[4] = {zk[0], zk[1], zk[2], zk[3]};
    for (int j = len - 1; j >= 0; j--) {
        if (j < len - 1) {
            const REAL *q = st + (int64_t)(ADI_CHIP_Q * j) * ss;
            REAL c[2] = {q[0], q[ss]}, s[2] = {q[2 * ss], q[3 * ss]};
            for (int v = 0; v < 3; v++)
                x[v] = q[(4 + v) * ss] + s[0] * zp[v] - c[0] * x[v];
            x[3] = q[7 * ss] + s[1] * zp[3] - c[1] * x[3];
        }
        if (fluid >> j & 1u) {
            int64_t idx = base + (int64_t)(m0 + j) * sd;
            for (int v = 0; v < 4; v++)
                a->out[v][idx] = x[v];
        }
    }
}

/* One whole line by the on-chip scheme, its chunks one after another (the cpu's unit of work,
 * the same arithmetic as a GPU block's threads): st holds 8 (n_d - 2) values, heads 8 P, rows
 * ADI_CHIP_ROW P and fl P words, P = ceil((n_d - 2) / len). */
ADI_HD void ADI_FN(chip_line)(const adi_params *p, const ADI_FN(row_consts) *k,
                              const unsigned char *mask, int d, int64_t base, int len,
                              const ADI_FN(arrays) *a, REAL *st, REAL *heads, REAL *rows,
                              unsigned *fl)
{
    int ni = p->n[d] - 2, P = (ni + len - 1) / len;
    for (int c = 0; c < P; c++) {
        int m0 = 1 + c * len, l = ni - c * len < len ? ni - c * len : len;
        REAL *sc = st + (int64_t)ADI_CHIP_Q * len * c;
        fl[c] = ADI_FN(chip_forward)(p, k, mask, d, base, m0, l, a, sc, 1);
        ADI_FN(chip_head)(sc, 1, l, heads + 8 * c, 1);
    }
    for (int c = 0; c < P; c++) {
        int l = ni - c * len < len ? ni - c * len : len;
        ADI_FN(chip_row)(st + (int64_t)ADI_CHIP_Q * len * c, 1, l,
                         c + 1 < P ? heads + 8 * (c + 1) : NULL, 1, rows + ADI_CHIP_ROW * c, 1);
    }
    ADI_FN(chip_iface)(rows, ADI_CHIP_ROW, 1, P);
    const REAL zero[4] = {0, 0, 0, 0};
    for (int c = 0; c < P; c++) {
        int m0 = 1 + c * len, l = ni - c * len < len ? ni - c * len : len;
        ADI_FN(chip_back)(a, base, k->sd, m0, l, st + (int64_t)ADI_CHIP_Q * len * c, 1, fl[c],
                          c ? rows + ADI_CHIP_ROW * (c - 1) + 6 : zero,
                          rows + ADI_CHIP_ROW * c + 6);
    }
}

/* The register sweep (KEDR_ADI_SWEEP=reg): the on-chip scheme above (chip_forward) with each
 * chunk's c', s', d' kept by its own thread (registers on the GPU: L, the chunk length, is a
 * compile-time constant there and these loops are unrolled), only the chunks' heads and
 * interface rows going through shared memory, and each line's interface system solved by
 * parallel cyclic reduction over its chunks (Hockney 1965; one step a power of two, every
 * chunk's row at once) instead of by one thread. Every chunk spans L nodes m0 .. m0 + L - 1:
 * the line's last chunk, when the line's length is not a multiple of L, is moved back to end
 * on the line's last interior node, and its first o nodes (the chunk before's last ones) are
 * skipped: they leave the elimination's state as it starts (c' = 0, s' = 1, d' = 0) and are not
 * written. So a chunk's node indices are m0 + j and its last node is j = L - 1 whatever the
 * chunk, no index is clamped and no load waits on a branch: the loads of neighbouring nodes
 * along the line are shared. A node that is not an unknown takes the row x = 0 by a select.
 * This needs L <= the line's interior nodes (adi_reg_len). The chunk's store is st[q L + j],
 * q = 0 .. 7 as in chip_forward (c'u, c't, s'u, s't, d'0..3); a row's 10 values as in chip_row
 * (lower[2], diagonal[2], upper[2], right sides[4]). */
#ifndef ADI_UNROLL
#define ADI_UNROLL
#endif

/* Chunk c's first node m0 and skipped nodes o of a line of ni interior nodes (L <= ni). */
ADI_HD void ADI_FN(reg_chunk)(int c, int L, int ni, int *m0, int *o)
{
    int end = (c + 1) * L < ni ? (c + 1) * L : ni; /* one past the chunk's last node, from 0 */
    *m0 = 1 + end - L;
    *o = c * L - (end - L);
}

/* Eliminates the chunk's nodes m0 + j, j = o .. L - 1, of the line at base; returns the fluid
 * flags (bit j: node m0 + j is an unknown of this chunk). */
ADI_HD unsigned ADI_FN(reg_forward)(const adi_params *p, const ADI_FN(row_consts) *k,
                                    const unsigned char *mask, int d, int64_t base, int m0,
                                    int o, int L, const ADI_FN(arrays) *a, REAL *st)
{
    REAL cu = 0, ct = 0, su = 1, sv = 1, dp[4] = {0, 0, 0, 0};
    unsigned fluid = 0;
    const int64_t first = base + (int64_t)m0 * k->sd; /* node j at first + j sd */
    ADI_UNROLL
    for (int j = 0; j < L; j++) {
        int64_t idx = first + (int64_t)j * k->sd;
        ADI_FN(rows) r;
        unsigned char lo, hi;
        ADI_FN(node_rows_d)(p, k, mask, d, idx, a, &r, &lo, &hi, 1);
        int in = j >= o, f = in & (mask[idx] == ADI_FLUID);
        for (int q = 0; q < 2; q++) {
            r.A[q] = f ? r.A[q] : (REAL)0;
            r.B[q] = f ? r.B[q] : (REAL)1;
            r.C[q] = f ? r.C[q] : (REAL)0;
        }
        for (int v = 0; v < 4; v++)
            r.D[v] = f ? r.D[v] : (REAL)0;
        REAL ru = 1 / (r.B[0] - r.A[0] * cu), rt = 1 / (r.B[1] - r.A[1] * ct);
        cu = r.C[0] * ru;
        ct = r.C[1] * rt;
        su = in ? -r.A[0] * su * ru : (REAL)1;
        sv = in ? -r.A[1] * sv * rt : (REAL)1;
        for (int v = 0; v < 3; v++)
            dp[v] = (r.D[v] - r.A[0] * dp[v]) * ru;
        dp[3] = (r.D[3] - r.A[1] * dp[3]) * rt;
        st[j] = cu;
        st[L + j] = ct;
        st[2 * L + j] = su;
        st[3 * L + j] = sv;
        for (int v = 0; v < 4; v++)
            st[(4 + v) * L + j] = dp[v];
        fluid |= (unsigned)f << j;
    }
    return fluid;
}

/* The chunk's first node's (j = o) Y (4), S (2), R (2) into h[0..7], as chip_head. */
ADI_HD void ADI_FN(reg_head)(const REAL *st, int o, int L, REAL *h)
{
    REAL Y[4] = {0, 0, 0, 0}, S[2] = {0, 0}, R[2] = {1, 1};
    ADI_UNROLL
    for (int j = L - 2; j >= 0; j--) {
        int in = j >= o;
        for (int m = 0; m < 2; m++) {
            REAL c = st[m * L + j];
            S[m] = in ? st[(2 + m) * L + j] - c * S[m] : S[m];
            R[m] = in ? -c * R[m] : R[m];
        }
        for (int v = 0; v < 4; v++) {
            REAL c = st[(v == 3 ? 1 : 0) * L + j];
            Y[v] = in ? st[(4 + v) * L + j] - c * Y[v] : Y[v];
        }
    }
    for (int v = 0; v < 4; v++)
        h[v] = Y[v];
    h[4] = S[0];
    h[5] = S[1];
    h[6] = R[0];
    h[7] = R[1];
}

/* The chunk's interface row (row[0..9], as chip_row) from its last node L - 1 and the next
 * chunk's head (next, read when has_next). */
ADI_HD void ADI_FN(reg_row)(const REAL *st, int L, int has_next, const REAL *next, REAL *row)
{
    const int b = L - 1;
    for (int m = 0; m < 2; m++) {
        REAL c = has_next ? st[m * L + b] : (REAL)0;
        row[m] = -st[(2 + m) * L + b];
        row[2 + m] = has_next ? 1 + c * next[4 + m] : (REAL)1;
        row[4 + m] = has_next ? c * next[6 + m] : (REAL)0;
    }
    for (int v = 0; v < 4; v++) {
        REAL c = has_next ? st[(v == 3 ? 1 : 0) * L + b] : (REAL)0;
        row[6 + v] = st[(4 + v) * L + b] - (has_next ? c * next[v] : (REAL)0);
    }
}

/* The row x = 0 (in place of a neighbour beyond the line's first or last chunk). */
ADI_HD void ADI_FN(reg_unit_row)(REAL *row)
{
    for (int e = 0; e < 10; e++)
        row[e] = e == 2 || e == 3 ? (REAL)1 : (REAL)0;
}

/* One step of cyclic reduction: row (i) with its neighbours lo (i - s) and hi (i + s) eliminated
 * from it, so that it couples to rows i - 2s and i + 2s. */
ADI_HD void ADI_FN(reg_pcr)(REAL *row, const REAL *lo, const REAL *hi)
{
    REAL k1[2], k2[2];
    for (int m = 0; m < 2; m++) {
        k1[m] = row[m] / lo[2 + m];
        k2[m] = row[4 + m] / hi[2 + m];
        row[2 + m] -= lo[4 + m] * k1[m] + hi[m] * k2[m];
        row[m] = -lo[m] * k1[m];
        row[4 + m] = -hi[4 + m] * k2[m];
    }
    for (int v = 0; v < 4; v++) {
        int m = v == 3 ? 1 : 0;
        row[6 + v] -= lo[6 + v] * k1[m] + hi[6 + v] * k2[m];
    }
}

/* Back substitution of a chunk from z_{k-1} (zp) and z_k (zk); the unknowns' results to the
 * output, as chip_back. */
ADI_HD void ADI_FN(reg_back)(const ADI_FN(arrays) *a, int64_t base, int64_t sd, int m0, int o,
                             int L, const REAL *st, unsigned fluid, const REAL *zp,
                             const REAL *zk)
{
    REAL x[4] = {zk[0], zk[1], zk[2], zk[3]};
    ADI_UNROLL
    for (int j = L - 1; j >= 0; j--) {
        if (j < L - 1) {
            int in = j >= o;
            for (int v = 0; v < 4; v++) {
                int m = v == 3 ? 1 : 0;
                REAL y = st[(4 + v) * L + j] + st[(2 + m) * L + j] * zp[v] -
                         st[m * L + j] * x[v];
                x[v] = in ? y : x[v];
            }
        }
        if (fluid >> j & 1u) {
            int64_t idx = base + (int64_t)(m0 + j) * sd;
            for (int v = 0; v < 4; v++)
                a->out[v][idx] = x[v];
        }
    }
}

/* The measures of state g at the fluid node idx (prev: the previous global iterate, or NULL). */
ADI_HD void ADI_FN(measure_node)(const adi_params *p, const unsigned char *mask,
                                 const REAL *const *g, const REAL *const *prev, int64_t idx,
                                 double out[6])
{
    double div = 0, speed2 = 0, change = 0;
    int bad = 0;
    for (int e = 0; e < 3; e++) {
        div += (double)ADI_FN(deriv)(p, mask, g[e], idx, e, e);
        double v = (double)g[e][idx];
        speed2 += v * v;
        if (prev) {
            double dv = fabs(v - (double)prev[e][idx]);
            change = dv > change ? dv : change;
        }
    }
    for (int e = 0; e < 4; e++)
        bad |= !isfinite((double)g[e][idx]);
    out[0] = div * div;
    out[1] = fabs(div);
    out[2] = change;
    out[3] = speed2;
    out[4] = 0.5 * speed2 * p->h * p->h * p->h;
    out[5] = bad || !isfinite(div) ? 1.0 : 0.0;
}
