/* Private, included by dsmc_kernels.h only: the segments of the 2D and axisymmetric bodies of
 * type outline, as inline code both back ends compile (dsmc_params.lines holds them, binned by
 * lines.c). A move tests only the segments of the bins that the box of its path meets, so it
 * costs what the segments near the molecule cost, not the whole outline. */
#ifndef DSMC_LINES_H
#define DSMC_LINES_H

/* The outline segments as the code running reads them: on a GPU the device arrays, on the
 * host the host arrays. */
DSMC_HD const dsmc_lines *dsmc_lines_of(const dsmc_params *p)
{
#ifdef __CUDA_ARCH__
    return &p->lines;
#else
    return &p->lines_host;
#endif
}

/* The outline body (its index among them) that owns segment k. */
DSMC_HD int dsmc_line_slot(const dsmc_params *p, uint32_t k)
{
    int q = 0;
    while (q + 1 < p->nlbodies && k - p->lb_first[q] >= p->lb_count[q])
        q++;
    return q;
}

/* The bin column (d = 0) or row (d = 1) of coordinate v, as the binning takes a segment's box
 * (widened by `widen` bins, rounded down, clamped to the grid): the host's binning and the
 * inside test below compute it alike. */
DSMC_HD int dsmc_lines_bin(const dsmc_lines *L, int d, double v, double widen)
{
    double f = floor((v + widen * L->h[d] - L->o[d]) * L->inv[d]);
    return f < 0 ? 0 : f >= L->n[d] ? L->n[d] - 1 : (int)f;
}

/* The bins [r[0], r[2]] x [r[1], r[3]] that the box [x0, x1] x [y0, y1] meets; 0 when none. */
DSMC_HD int dsmc_lines_range(const dsmc_lines *L, double x0, double y0, double x1, double y1,
                             int r[4])
{
    const double lo[2] = {x0, y0}, hi[2] = {x1, y1};
    for (int d = 0; d < 2; d++) {
        double a = (lo[d] - L->o[d]) * L->inv[d], b = (hi[d] - L->o[d]) * L->inv[d];
        if (!(b >= 0 && a < L->n[d]))
            return 0;
        r[d] = a < 0 ? 0 : (int)a;
        r[2 + d] = b >= L->n[d] ? L->n[d] - 1 : (int)b;
    }
    return 1;
}

/* The margin of a path's box, in bins: far above the rounding of a crossing's position. */
#define DSMC_LINES_MARGIN 1e-7

/* The planar move's search: the first outline segment that the path (px, py) + (ux, uy) t,
 * 0 < t < *tev, meets, other than segment `skip` (the one just left). Wall index base + k for
 * segment k; a hit at the same time as an earlier segment's goes to the lower index, so the
 * result does not depend on the order the bins list them in (and is the one a loop over the
 * segments in order finds, as for the polygon bodies). The same arithmetic as dsmc_move_one's
 * polygon segments. */
DSMC_HD void dsmc_lines_hit(const dsmc_params *p, double px, double py, double ux, double uy,
                            int64_t skip, int base, double *tev, int *what)
{
    const dsmc_lines *L = dsmc_lines_of(p);
    double ex = px + ux * *tev, ey = py + uy * *tev;
    double mx = DSMC_LINES_MARGIN * L->h[0], my = DSMC_LINES_MARGIN * L->h[1];
    int r[4];
    if (!dsmc_lines_range(L, fmin(px, ex) - mx, fmin(py, ey) - my, fmax(px, ex) + mx,
                          fmax(py, ey) + my, r))
        return;
    for (int b = r[1]; b <= r[3]; b++)
        for (int a = r[0]; a <= r[2]; a++) {
            uint32_t c = (uint32_t)b * (uint32_t)L->n[0] + (uint32_t)a;
            for (uint32_t i = L->start[c]; i < L->start[c + 1]; i++) {
                uint32_t k = L->list[i];
                if ((int64_t)k == skip)
                    continue;
                const double *sg = L->seg + 4 * (size_t)k;
                double dx = sg[2] - sg[0], dy = sg[3] - sg[1];
                double den = ux * dy - uy * dx;
                if (den == 0)
                    continue;
                double qx = sg[0] - px, qy = sg[1] - py, nt = qx * dy - qy * dx;
                if (!(nt > 0 ? den > 0 : nt < 0 && den < 0))
                    continue; /* th <= 0: behind (the quotient's sign, without dividing) */
                double th = nt / den, s = (qx * uy - qy * ux) / den;
                if (th > 0 && s >= 0 && s <= 1 &&
                    (th < *tev || (th == *tev && *what >= base && (int)k < *what - base)))
                    *tev = th, *what = base + (int)k;
            }
        }
}

/* The axisymmetric move's search (dsmc_cone_hit_seg on the segments near the path): the
 * path's box in the meridional plane runs over x from px to px + vx t and over the radius from
 * its least value on the path to the larger of its ends. Ties as in dsmc_lines_hit. */
DSMC_HD double dsmc_cone_hit_seg(const double *s, double x, double r, double vx, double vr,
                                 double vt, double tmax);
DSMC_HD void dsmc_lines_hit_axi(const dsmc_params *p, double px, double pr, double ux,
                                double ur, double ut, int base, double *tev, int *what)
{
    const dsmc_lines *L = dsmc_lines_of(p);
    double t = *tev, a = ur * ur + ut * ut, ex = px + ux * t;
    double ye = pr + ur * t, ze = ut * t, re = sqrt(ye * ye + ze * ze), rmin = fmin(pr, re);
    if (a > 0 && ur < 0 && -pr * ur < a * t) /* the least radius lies within the step */
        rmin = pr * fabs(ut) / sqrt(a);
    double mx = DSMC_LINES_MARGIN * L->h[0], my = DSMC_LINES_MARGIN * L->h[1];
    int r[4];
    if (!dsmc_lines_range(L, fmin(px, ex) - mx, rmin - my, fmax(px, ex) + mx,
                          fmax(pr, re) + my, r))
        return;
    for (int b = r[1]; b <= r[3]; b++)
        for (int q = r[0]; q <= r[2]; q++) {
            uint32_t c = (uint32_t)b * (uint32_t)L->n[0] + (uint32_t)q;
            for (uint32_t i = L->start[c]; i < L->start[c + 1]; i++) {
                uint32_t k = L->list[i];
                if (L->elem[2 * (size_t)k + 1] == 0)
                    continue; /* a segment on the axis: no surface */
                int tie = *what >= base && (int)k < *what - base;
                double th = dsmc_cone_hit_seg(L->seg + 4 * (size_t)k, px, pr, ux, ur, ut,
                                              tie ? nextafter(*tev, HUGE_VAL) : *tev);
                if (th > 0 && (th < *tev || tie))
                    *tev = th, *what = base + (int)k;
            }
        }
}

/* Whether (x, y) lies inside an outline body. In a bin that no segment meets, its class
 * answers (when classed: lines.c classes them with this function before cls is set); else the
 * crossing number of the ray from the point along +x over the segments of the bins of its row
 * from the point's on, each segment counted in one bin only (the first of its own bins that
 * the ray reaches), with the polygon bodies' crossing rule (dsmc_inside_body). */
DSMC_HD int dsmc_inside_lines(const dsmc_params *p, double x, double y)
{
    const dsmc_lines *L = dsmc_lines_of(p);
    if (L->nseg == 0)
        return 0;
    double fa = (x - L->o[0]) * L->inv[0], fb = (y - L->o[1]) * L->inv[1];
    if (!(fa >= 0 && fa < L->n[0] && fb >= 0 && fb < L->n[1]))
        return 0;
    int a = (int)fa;
    uint32_t row = (uint32_t)fb * (uint32_t)L->n[0];
    if (L->cls && L->start[row + a] == L->start[row + a + 1])
        return L->cls[row + a];
    int in = 0;
    for (int q = a; q < L->n[0]; q++)
        for (uint32_t i = L->start[row + q]; i < L->start[row + q + 1]; i++) {
            const double *s = L->seg + 4 * (size_t)L->list[i];
            if ((s[1] > y) != (s[3] > y) && x < s[0] + (y - s[1]) * (s[2] - s[0]) / (s[3] - s[1])) {
                int first = dsmc_lines_bin(L, 0, fmin(s[0], s[2]), -1e-6);
                if ((first > a ? first : a) == q)
                    in = !in;
            }
        }
    return in;
}

#endif
