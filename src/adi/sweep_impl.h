/* The physics of one sweep, for both back ends and both precisions: included by sweep_cpu.c and
 * sweep.cu once per type, with REAL (float or double), ADI_FN(name) (a name for this type) and
 * ADI_HD (the qualifiers: static inline, or __host__ __device__ on the GPU) defined.
 *
 * A line along axis d is walked once per field: each fluid node's row is built from the fields
 * (the advecting velocity, the explicit source, the ghosts at a segment's ends), eliminated at
 * once (Thomas: c' into the scratch, d' into the output), and at the end of a segment the back
 * substitution runs over it. No coefficient arrays are stored. */

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
    unsigned char t = mask[idx + step];
    if (t == ADI_FLUID)
        return f[idx + step];
    return p->ghost[t].dirichlet[var] ? (REAL)p->ghost[t].value[var] : f[idx];
}

/* Central derivative of field var of f along axis e at the fluid node idx. */
ADI_HD REAL ADI_FN(deriv)(const adi_params *p, const unsigned char *mask, const REAL *f,
                          int64_t idx, int e, int var)
{
    int64_t s = p->s[e];
    return (ADI_FN(nb)(p, mask, f, idx, s, var) - ADI_FN(nb)(p, mask, f, idx, -s, var)) *
           (REAL)(0.5 / p->h);
}

/* The book's Phi_d (eq. 12.5) at idx from the velocities u[0..2]:
 * 2 (du_d/dx_d)^2 + sum_{c != d} (du_c/dx_d)^2 + sum_{e != d} du_d/dx_e du_e/dx_d. */
ADI_HD REAL ADI_FN(phi)(const adi_params *p, const unsigned char *mask, const REAL *const *u,
                        int64_t idx, int d)
{
    REAL dd = ADI_FN(deriv)(p, mask, u[d], idx, d, d);
    REAL phi = 2 * dd * dd;
    for (int c = 0; c < 3; c++) {
        if (c == d)
            continue;
        REAL cd = ADI_FN(deriv)(p, mask, u[c], idx, d, c);
        phi += cd * cd + ADI_FN(deriv)(p, mask, u[d], idx, c, d) * cd;
    }
    return phi;
}

/* The four fields on the line of nodes base + m s_d, m = 0 .. n_d - 1 (the ends lie on the
 * box's faces and are never unknowns). cp[m * cps] is this line's scratch. */
ADI_HD void ADI_FN(sweep_line)(const adi_params *p, const unsigned char *mask, int d, int64_t base,
                               const ADI_FN(arrays) *a, REAL *cp, int64_t cps)
{
    const int64_t sd = p->s[d];
    const int n = p->n[d];
    const REAL rh = (REAL)(1 / p->h), rh2 = (REAL)(1 / (p->h * p->h));
    const REAL r2h = (REAL)(0.5 / p->h), rdt = (REAL)(1 / p->dt);
    for (int var = 0; var < 4; var++) {
        const REAL kap = (REAL)(var < 3 ? p->kappa_u : p->kappa_t);
        const REAL *old = a->old[var];
        REAL *out = a->out[var];
        int start = 0;
        REAL cprev = 0, dprev = 0;
        for (int m = 1; m < n - 1; m++) {
            int64_t idx = base + m * sd;
            if (mask[idx] != ADI_FLUID)
                continue;
            REAL adv = a->coef[d][idx];
            REAL A = -kap * rh2, C = -kap * rh2, B = rdt + 2 * kap * rh2;
            if (p->central) {
                A -= adv * r2h;
                C += adv * r2h;
            } else if (adv > 0) {
                A -= adv * rh;
                B += adv * rh;
            } else {
                C += adv * rh;
                B -= adv * rh;
            }
            REAL D = old[idx] * rdt;
            if (var == d)
                D += (REAL)p->force[d] - ADI_FN(deriv)(p, mask, a->coef[3], idx, d, 3);
            else if (var == 3 && p->dissipation != 0)
                D += (REAL)p->dissipation * ADI_FN(phi)(p, mask, a->coef, idx, d);
            unsigned char lo = mask[idx - sd], hi = mask[idx + sd];
            if (lo != ADI_FLUID) { /* a segment starts: its low ghost */
                if (p->ghost[lo].dirichlet[var])
                    D -= A * (REAL)p->ghost[lo].value[var];
                else
                    B += A;
                A = 0;
                start = m;
            }
            if (hi != ADI_FLUID) {
                if (p->ghost[hi].dirichlet[var])
                    D -= C * (REAL)p->ghost[hi].value[var];
                else
                    B += C;
                C = 0;
            }
            REAL r = 1 / (B - A * cprev);
            cprev = C * r;
            dprev = (D - A * dprev) * r;
            cp[m * cps] = cprev;
            out[idx] = dprev;
            if (hi != ADI_FLUID) { /* the segment ends: back substitution */
                REAL x = dprev;
                for (int q = m - 1; q >= start; q--) {
                    int64_t iq = base + q * sd;
                    x = out[iq] - cp[q * cps] * x;
                    out[iq] = x;
                }
            }
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
