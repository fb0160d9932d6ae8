/* The immersed boundary against the Schäfer & Turek (1996) benchmark 2D-1 ("Benchmark computations
 * of laminar flow around a cylinder", Notes on Numerical Fluid Mechanics 52, 547-566): a
 * cylinder of diameter D = 0.1 centred at (0.2, 0.2) in a 2.2 x 0.41 channel, a parabolic inflow
 * of mean U = 0.2 (peak 0.3), nu = 1e-3: Re = U D / nu = 20, steady. Published: cD in
 * [5.57, 5.59], cL in [0.0104, 0.0110], both over rho U^2 D / 2.
 *
 * Here on a coarse grid, h = D / 10 (220 x 41 cells), to t = 5 (steady to 1e-4): the diffuse
 * interface of the immersed boundary (a delta 4 cells wide) makes the cylinder act slightly
 * larger, and the drag converges to the interval from above at first order in h (docs/
 * validation.md: cD 6.229 at D / 10, 5.869 at D / 20). The test asks cD in [5.57, 5.59 x 1.13]
 * (the D / 10 overestimate, 11.4%, with a margin), a steady drag (change below 1e-3 over the
 * last second), a small lift (|cL| < 0.05; the published 0.0107 is a small difference of large
 * pressure forces that this grid does not resolve), and the force system solved to its
 * tolerance every step.
 *
 * The full run to t = 5 is made on the cpu. Every other back end runs the first 1.5 s (240
 * steps) with the pressure by PCG with the approximate inverse (an iterative solver against the
 * direct one; 41 cells across do not coarsen for multigrid); its cD and cL must agree with the
 * cpu's FFT run of the same 1.5 s within 1e-6 of cD (the pressure solves' tolerance, 1e-8, sets the
 * difference: the cpu's own PCG run, 22 s on 2 cores and so not made here, agrees within
 * 6.5e-9). */
#include "kedr/flow.h"
#include "test_util.h"

static kedr_flow_case cylinder_case(int fft)
{
    kedr_flow_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "cylinder_2d1");
    c.dims = 2;
    c.n[0] = 220;
    c.n[1] = 41;
    c.n[2] = 1;
    c.length[0] = 2.2;
    c.length[1] = 0.41;
    c.length[2] = 1;
    c.nu = 1e-3;
    c.rho = 1;
    c.bc[0].kind = KEDR_FLOW_BC_INFLOW;
    c.bc[0].velocity[0] = 0.2;
    c.bc[0].parabolic = 1;
    c.bc[1].kind = KEDR_FLOW_BC_OUTFLOW;
    c.bc[2].kind = c.bc[3].kind = KEDR_FLOW_BC_WALL;
    c.bc[4].kind = c.bc[5].kind = KEDR_FLOW_BC_PERIODIC;
    c.cfl = 0.5;
    c.end_time = 5;
    c.steps = 1000000;
    kedr_flow_poisson_defaults(&c.poisson);
    if (fft) {
        c.poisson.method = KEDR_FLOW_METHOD_FFT;
    } else {
        c.poisson.precond = KEDR_FLOW_PC_AINV;
        c.poisson.max_iter = 2000;
    }
    c.nbodies = 1;
    kedr_flow_body *body = &c.body[0];
    strcpy(body->name, "cylinder");
    body->shape = KEDR_FLOW_BODY_CIRCLE;
    body->center[0] = 0.2;
    body->center[1] = 0.2;
    body->diameter = 0.1;
    body->volume = M_PI * 0.05 * 0.05;
    body->spacing = 1;
    body->ref_velocity = 0.2;
    body->ref_length = 0.1;
    c.delta = KEDR_FLOW_DELTA_PESKIN4;
    c.ibm_tol = 1e-8;
    c.ibm_max_iter = 500;
    return c;
}

/* Runs the case to its end time; the body's state and the run's statistics. */
static int run(kedr_ctx *ctx, kedr_flow_case *c, kedr_flow_body_state *bs, kedr_flow_stats *st,
               double *cd_at4)
{
    kedr_flow *f = NULL;
    kedr_status s = kedr_flow_create(ctx, c, &f);
    if (s == KEDR_ERR_UNSUPPORTED && c->poisson.method == KEDR_FLOW_METHOD_FFT) {
        printf("no FFT solver in this build: PCG with multigrid instead\n");
        c->poisson.method = KEDR_FLOW_METHOD_PCG;
        s = kedr_flow_create(ctx, c, &f);
    }
    TU_OK(s);
    if (!f)
        return 0;
    do {
        TU_OK(kedr_flow_step(f));
        kedr_flow_get_stats(f, st);
        if (cd_at4 && st->time <= 4 + 1e-12 && kedr_flow_body_get(f, 0, bs) == KEDR_OK)
            *cd_at4 = bs->cd;
    } while (st->time < c->end_time - 1e-12 && kedr_flow_failure(f) == 0);
    TU_OK(kedr_flow_body_get(f, 0, bs));
    kedr_flow_destroy(f);
    return 1;
}

int main(void)
{
    kedr_backend bk[2];
    int nb = tu_backends(bk);
    kedr_flow_body_state ref;
    int have_ref = 0;
    for (int ib = 0; ib < nb; ib++) {
        if (!kedr_flow_backend_available(bk[ib])) {
            printf("flow: no %s back end in this build; skipped\n", kedr_backend_name(bk[ib]));
            continue;
        }
        kedr_ctx *ctx = tu_ctx(bk[ib]);
        kedr_flow_body_state bs;
        kedr_flow_stats st;
        if (bk[ib] == KEDR_BACKEND_CPU) { /* the benchmark: to t = 5 */
            kedr_flow_case c = cylinder_case(1);
            double cd_before = NAN;
            if (run(ctx, &c, &bs, &st, &cd_before)) {
                double change = fabs(bs.cd - cd_before) / bs.cd;
                printf("t = %.3f in %lld steps: cD %.4f (published [5.57, 5.59]), cL %.4f "
                       "(published [0.0104, 0.0110]); cD changed by %.1e over the last second; "
                       "force solve %d iterations (residual %.1e); %.2f s, of which %.2f s in "
                       "the immersed boundary\n", st.time, (long long)st.step, bs.cd, bs.cl,
                       change, st.ibm_iterations, st.ibm_residual, st.seconds_step,
                       st.seconds_ibm);
                TU_CHECK(bs.cd >= 5.57 && bs.cd <= 5.59 * 1.13, "cD %.4f outside [5.57, %.4f]",
                         bs.cd, 5.59 * 1.13);
                TU_CHECK(fabs(bs.cl) < 0.05, "cL %.4f: expected |cL| < 0.05", bs.cl);
                TU_CHECK(change < 1e-3, "cD still changes (%.3g over the last second)", change);
                TU_CHECK(st.ibm_residual <= c.ibm_tol && st.divergence < 1e-9,
                         "force solve residual %.3g, divergence %.3g", st.ibm_residual,
                         st.divergence);
                TU_CHECK(bs.force[0] > 0 && bs.points == 32, "drag %.3g, %d points",
                         bs.force[0], bs.points);
            }
        }
        if (bk[ib] == KEDR_BACKEND_CPU) {
            kedr_ctx_destroy(ctx);
            continue;
        }
        if (!have_ref) { /* the cpu's FFT run of the first 1.5 s */
            kedr_ctx *cpu = tu_ctx(KEDR_BACKEND_CPU);
            kedr_flow_case c = cylinder_case(1);
            c.end_time = 1.5;
            have_ref = run(cpu, &c, &ref, &st, NULL);
            kedr_ctx_destroy(cpu);
        }
        kedr_flow_case c = cylinder_case(0);
        c.end_time = 1.5;
        if (have_ref && run(ctx, &c, &bs, &st, NULL)) {
            double dd = fabs(bs.cd - ref.cd) / fabs(ref.cd);
            double dl = fabs(bs.cl - ref.cl) / fabs(ref.cd);
            printf("%s, PCG + AINV to t = 1.5 (%lld steps, %.1f pressure iterations a step, "
                   "%.2f s): cD %.6f cL %.6f against the cpu's FFT run %.6f %.6f (%.1e, %.1e)\n",
                   kedr_backend_name(bk[ib]), (long long)st.step,
                   (double)st.poisson_iterations / (double)st.step, st.seconds_step, bs.cd,
                   bs.cl, ref.cd, ref.cl, dd, dl);
            TU_CHECK(dd < 1e-6 && dl < 1e-6, "%s: cD %.8g, cL %.8g against %.8g, %.8g",
                     kedr_backend_name(bk[ib]), bs.cd, bs.cl, ref.cd, ref.cl);
        }
        kedr_ctx_destroy(ctx);
    }
    return tu_finish("test_flow_cylinder");
}
