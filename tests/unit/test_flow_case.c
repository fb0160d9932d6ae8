/* Flow case files (kedr_flow_case_parse): a full case read back key by key, and bad inputs,
 * each refused with a message naming the file, the line and the key. */
#include "kedr/flow.h"
#include "test_util.h"

static const char *good =
    "[domain]\n"
    "dimensions = 3\n"
    "length = 4 1 2\n"
    "boundary_x_min = inflow\n"
    "boundary_x_max = outflow\n"
    "boundary_y_min = wall\n"
    "boundary_y_max = wall\n"
    "boundary_z_min = periodic\n"
    "boundary_z_max = periodic\n"
    "[boundary]\n"
    "x_min_velocity = 2 0 0\n"
    "x_min_profile = parabolic\n"
    "y_max_velocity = 0.5 0 0.25\n"
    "[grid]\n"
    "nx = 40\n"
    "ny = 10\n"
    "nz = 20\n"
    "[fluid]\n"
    "nu = 0.01\n"
    "density = 1000\n"
    "[time]\n"
    "cfl = 0.4\n"
    "end_time = 3\n"
    "[pressure]\n"
    "preconditioner = ssor\n"
    "steps = 2\n"
    "tol = 1e-9\n"
    "max_iter = 300\n"
    "[output]\n"
    "dir = somewhere\n"
    "stats_every = 7\n"
    "png = no\n";

/* text with line `line` (1-based) replaced by `with` */
static char *edit(const char *text, int line, const char *with)
{
    char *out = tu_host_alloc(strlen(text) + strlen(with) + 2);
    const char *p = text;
    char *o = out;
    for (int l = 1; *p; l++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p + 1) : strlen(p);
        if (l == line) {
            o += sprintf(o, "%s\n", with);
        } else {
            memcpy(o, p, len);
            o += len;
        }
        p += len;
    }
    *o = 0;
    return out;
}

static void bad(int line, const char *with, const char *want)
{
    char *t = edit(good, line, with);
    kedr_flow_case c;
    kedr_status s = kedr_flow_case_parse(t, "case.ini", &c);
    TU_CHECK(s != KEDR_OK && strstr(kedr_last_error(), want) &&
                 strstr(kedr_last_error(), "case.ini:"),
             "line %d '%s': %s (wanted '%s')", line, with,
             s == KEDR_OK ? "accepted" : kedr_last_error(), want);
    free(t);
}

int main(void)
{
    kedr_flow_case c;
    TU_OK(kedr_flow_case_parse(good, "dir/case.ini", &c));
    TU_CHECK(c.dims == 3 && c.n[0] == 40 && c.n[1] == 10 && c.n[2] == 20, "grid");
    TU_CHECK(c.length[0] == 4 && c.length[2] == 2 && c.nu == 0.01 && c.rho == 1000, "sizes");
    TU_CHECK(c.bc[0].kind == KEDR_FLOW_BC_INFLOW && c.bc[0].parabolic && c.bc[0].velocity[0] == 2,
             "inflow");
    TU_CHECK(c.bc[1].kind == KEDR_FLOW_BC_OUTFLOW && c.bc[3].kind == KEDR_FLOW_BC_WALL &&
                 c.bc[3].velocity[2] == 0.25 && c.bc[4].kind == KEDR_FLOW_BC_PERIODIC,
             "walls");
    TU_CHECK(c.dt == 0 && c.cfl == 0.4 && c.end_time == 3, "time");
    TU_CHECK(c.poisson.precond == KEDR_FLOW_PC_SSOR && c.poisson.steps == 2 &&
                 c.poisson.tol == 1e-9 && c.poisson.max_iter == 300, "pressure");
    TU_CHECK(strcmp(c.out_dir, "somewhere") == 0 && c.stats_every == 7 && !c.write_png &&
                 c.write_vti && strcmp(c.name, "case") == 0, "output");

    bad(2, "dimensions = 4", "[domain] dimensions");
    bad(3, "length = 4 1", "expected 3");
    bad(4, "boundary_x_min = wal", "boundary_x_min");
    bad(9, "boundary_z_max = wall", "periodic on one end");
    bad(11, "x_min_velocity = -2 0 0", "must point into the box");
    bad(12, "x_min_profile = cubic", "x_min_profile");
    bad(13, "y_max_velocity = 0.5 0.1 0", "moves along itself only");
    bad(15, "nx = 0", "[grid] nx");
    bad(17, "nzz = 20", "nz");
    bad(19, "nu = 0", "[fluid] nu");
    bad(22, "cfl = 2", "[time] cfl");
    bad(22, "dt = soon", "[time] dt");
    bad(23, "end_tim = 3", "end_tim");
    bad(25, "preconditioner = ilu", "[pressure] preconditioner");
    bad(26, "steps = 9", "[pressure] steps");
    bad(32, "png = maybe", "[output] png");
    bad(4, "boundary_x_min = wall", "a profile belongs to an inflow");
    bad(4, "boundary_x_min = slip", "a velocity belongs to a wall (its motion) or an inflow");
    /* a 2D case with a z key, and an inflow with no outflow */
    char *t2 = edit(good, 2, "dimensions = 2"), *t = edit(t2, 3, "length = 4 1");
    free(t2);
    kedr_flow_case d;
    TU_CHECK(kedr_flow_case_parse(t, "two.ini", &d) != KEDR_OK &&
                 strstr(kedr_last_error(), "only for 3D"), "2D with z keys: %s",
             kedr_last_error());
    free(t);
    t = edit(good, 5, "boundary_x_max = wall");
    TU_CHECK(kedr_flow_case_parse(t, "in.ini", &d) != KEDR_OK &&
                 strstr(kedr_last_error(), "an inflow without an outflow"), "no outflow: %s",
             kedr_last_error());
    free(t);
    /* red-black on an odd periodic axis */
    t = edit(good, 17, "nz = 21");
    TU_CHECK(kedr_flow_case_parse(t, "odd.ini", &d) != KEDR_OK &&
                 strstr(kedr_last_error(), "even number of cells"), "odd periodic: %s",
             kedr_last_error());
    free(t);
    return tu_finish("test_flow_case");
}
