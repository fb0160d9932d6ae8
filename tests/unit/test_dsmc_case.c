/* DSMC case files and species files: the shipped files load with the documented values, and
 * every kind of bad input is refused with FILE:LINE, the key and the reason. Host only. */
#include "test_util.h"

#include <unistd.h>

static char root[1024]; /* the source tree, from this file's path */

static void find_root(void)
{
    snprintf(root, sizeof root, "%s", __FILE__);
    char *p = strstr(root, "tests/unit/test_dsmc_case.c");
    if (p)
        *p = 0;
    else
        snprintf(root, sizeof root, "./");
}

static void test_shipped(void)
{
    char path[1200];
    kedr_dsmc_case c;
    snprintf(path, sizeof path, "%scases/dsmc/seed-test1.ini", root);
    TU_OK(kedr_dsmc_case_load(path, &c));
    TU_CHECK(c.nx == 200 && c.ny == 100 && c.hi[0] == 2 && c.hi[1] == 1, "seed-test1 grid/domain");
    TU_CHECK(c.nspecies == 1 && strcmp(c.species[0].name, "N2") == 0, "seed-test1 gas");
    TU_CHECK(fabs(c.number_density * c.species[0].mass - 1e-7) < 1e-19, "density %g",
             c.number_density * c.species[0].mass);
    TU_CHECK(c.nsegments == 1 && c.segment[0][0] == 1.0 && c.segment[0][3] == 0.6, "plate");
    TU_CHECK(c.velocity[0] == 7500 && c.temperature == 300 && c.wall_temperature == 300, "flow");
    TU_CHECK(c.dt == 1e-6 && c.side[0] == KEDR_DSMC_INFLOW && c.side[1] == KEDR_DSMC_OUTFLOW, "bc");
    TU_CHECK(strcmp(c.name, "seed-test1") == 0, "name '%s'", c.name);
    /* particles_per_cell = 5 sets the weight. */
    double v = 0.01 * 0.01;
    TU_CHECK(fabs(c.weight - c.number_density * v / 5) < 1e-9 * c.weight, "weight %g", c.weight);

    snprintf(path, sizeof path, "%scases/dsmc/quick.ini", root);
    TU_OK(kedr_dsmc_case_load(path, &c));
    TU_CHECK(c.nspecies == 1 && strcmp(c.species[0].name, "Ar") == 0, "quick gas");

    /* Every species and the air mixture of the shipped file. */
    snprintf(path, sizeof path, "%scases/dsmc/species.ini", root);
    static const char *const gases[] = {"N2", "O2", "Ar", "He", "NO", "O", "N"};
    for (int i = 0; i < 7; i++) {
        kedr_dsmc_case s;
        memset(&s, 0, sizeof s);
        TU_OK(kedr_dsmc_species_load(path, gases[i], &s));
        TU_CHECK(s.nspecies == 1 && s.species[0].mass > 1e-27 && s.species[0].d_ref > 1e-10,
                 "species %s", gases[i]);
    }
    kedr_dsmc_case air;
    memset(&air, 0, sizeof air);
    TU_OK(kedr_dsmc_species_load(path, "air", &air));
    double sum = 0;
    for (int i = 0; i < air.nspecies; i++)
        sum += air.fraction[i];
    TU_CHECK(air.nspecies == 3 && fabs(sum - 1) < 1e-12 && strcmp(air.species[1].name, "O2") == 0,
             "air: %d species, fractions sum %g", air.nspecies, sum);
    TU_CHECK(kedr_dsmc_species_load(path, "Xe", &air) == KEDR_ERR_PARSE, "Xe accepted");
    TU_CHECK(strstr(kedr_last_error(), "no species or mixture 'Xe'") != NULL, "%s",
             kedr_last_error());
}

/* A valid case with one line replaced; load must fail with a message holding frag. */
static const char *base_case = /* test_axisymmetric swaps it */
    "[domain]\nx_min = 0\nx_max = 2\ny_min = 0\ny_max = 1\n"         /* lines 1-5 */
    "[grid]\nnx = 20\nny = 10\n"                                      /* 6-8 */
    "[species]\nfile = SPECIES\ngas = N2\n"                           /* 9-11 */
    "[freestream]\nnumber_density = 1e20\ntemperature = 300\nvelocity_x = 1000\n" /* 12-15 */
    "[body]\ntype = plate\npoints = 1 0.4 1 0.6\n"                    /* 16-18 */
    "[wall]\ntemperature = 300\n"                                     /* 19-20 */
    "[run]\ndt = 1e-6\nsteps = 10\n";                                 /* 21-23 */

static kedr_dsmc_case loaded; /* what the last load_variant read */

static kedr_status load_variant(const char *from, const char *to, const char *extra)
{
    char text[4096], species[1200];
    snprintf(species, sizeof species, "%scases/dsmc/species.ini", root);
    snprintf(text, sizeof text, "%s", base_case);
    char *at = strstr(text, "SPECIES");
    char tail[4096];
    snprintf(tail, sizeof tail, "%s", at + 7);
    snprintf(at, sizeof text - (size_t)(at - text), "%s%s", species, tail);
    if (from) {
        char *p = strstr(text, from);
        if (!p) {
            fprintf(stderr, "test bug: '%s' not in the base case\n", from);
            exit(1);
        }
        snprintf(tail, sizeof tail, "%s", p + strlen(from));
        snprintf(p, sizeof text - (size_t)(p - text), "%s%s", to, tail);
    }
    if (extra) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "%s", extra);
    }
    char path[] = "/tmp/kedr_test_case_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        fprintf(stderr, "cannot write a temporary case\n");
        exit(1);
    }
    close(fd);
    kedr_status s = kedr_dsmc_case_load(path, &loaded);
    unlink(path);
    return s;
}

static void expect_error(const char *from, const char *to, const char *extra, const char *frag)
{
    kedr_status s = load_variant(from, to, extra);
    TU_CHECK(s == KEDR_ERR_PARSE, "'%s' -> '%s': status %s", from ? from : "", to ? to : "",
             kedr_status_name(s));
    TU_CHECK(strstr(kedr_last_error(), frag) != NULL, "message '%s' lacks '%s'", kedr_last_error(),
             frag);
}

static void test_errors(void)
{
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_CHECK(loaded.scheme == KEDR_DSMC_NTC && loaded.species[0].rot_dof == 2 &&
                 loaded.species[0].z_rot == 5, "defaults: scheme %d, N2 rot_dof %d Z_rot %g",
             loaded.scheme, loaded.species[0].rot_dof, loaded.species[0].z_rot);
    TU_OK(load_variant(NULL, NULL, "[collisions]\nscheme = mfs\n"));
    TU_CHECK(loaded.scheme == KEDR_DSMC_MFS, "scheme = mfs read as %d", loaded.scheme);
    expect_error(NULL, NULL, "[collisions]\nscheme = mf\n", ":25: [collisions] scheme");
    TU_OK(load_variant(NULL, NULL, "[collisions]\npartner = subcell\nsubcells = 3\n"));
    TU_CHECK(loaded.partner == KEDR_DSMC_PARTNER_SUBCELL && loaded.subcells == 3,
             "partner = subcell, subcells = 3 read as %d, %d", loaded.partner, loaded.subcells);
    TU_OK(load_variant(NULL, NULL, "[collisions]\npartner = subcell\n"));
    TU_CHECK(loaded.subcells == 2, "subcells default %d, expected 2", loaded.subcells);
    expect_error(NULL, NULL, "[collisions]\npartner = subcell\nsubcells = 0\n",
                 ":26: [collisions] subcells = 0: expected an integer from 1");
    expect_error(NULL, NULL, "[collisions]\nsubcells = 40\n", "[collisions] subcells = 40");
    expect_error(NULL, NULL, "[collisions]\nschema = ntc\n", "did you mean 'scheme'?");
    expect_error("nx = 20", "nxx = 20", NULL, "[grid] unknown key 'nxx' (did you mean 'nx'?)");
    expect_error("ny = 10", "ny = 10\nnz = 3", NULL, ":9: [grid] nz: only for 3D cases");
    expect_error("ny = 10", "ny = 10\nnzz = 3", NULL, ":9: [grid] unknown key 'nzz'");
    expect_error("temperature = 300\nvelocity_x", "temprature = 300\nvelocity_x", NULL,
                 "'temprature' (did you mean 'temperature'?)");
    expect_error("velocity_x = 1000", "velocity_x = 1000\nvelocty_y = 3", NULL,
                 ":16: [freestream] unknown key 'velocty_y' (did you mean 'velocity_y'?)");
    expect_error("nx = 20", "nx = 0", NULL, ":7: [grid] nx = 0: expected an integer from 1");
    expect_error("number_density = 1e20", "number_density = -1e20", NULL,
                 ":13: [freestream] number_density = -1e20: expected a number in [0, 1e+30]");
    expect_error("number_density = 1e20", "number_density = 1e20\ndensity = 1e-7", NULL,
                 "give exactly one of number_density");
    expect_error("points = 1 0.4 1 0.6", "points = 1 0.4 3 0.6", NULL,
                 ":18: [body] points: point (3, 0.6) is outside the domain");
    expect_error("points = 1 0.4 1 0.6", "points = 1 0.4 1", NULL, "a plate needs 4 numbers");
    expect_error("type = plate", "type = polygon", NULL, "a polygon needs at least 3 points");
    expect_error("type = plate", "type = plat", NULL, "did you mean 'plate'?");
    expect_error("gas = N2", "gas = Xe", NULL, ":11: [species] gas: ");
    expect_error("x_max = 2", "x_max = -1", NULL, ":3: [domain] x_max: -1: expected more than x_min");
    expect_error(NULL, NULL, "[sampel]\nstart = 3\n", ":24: unknown section [sampel] (did you mean [sample]?)");
    expect_error("[wall]\ntemperature = 300\n", "", NULL, "[wall] with the required key 'temperature'");
    expect_error(NULL, NULL, "weight = 1e12\nparticles_per_cell = 3\n", "not both");
    TU_CHECK(kedr_dsmc_case_load("/nonexistent/case.ini", NULL) == KEDR_ERR_INVALID, "NULL c");
    kedr_dsmc_case c;
    TU_CHECK(kedr_dsmc_case_load("/nonexistent/case.ini", &c) == KEDR_ERR_IO, "missing file");
}

/* [run] dt = auto from the mean collision time (Bird 1994 eq. 4.64) and the cell transit time;
 * particles_per_cell and weight set the weight; the output and limit keys. */
static void test_time_step_and_weight(void)
{
    TU_OK(load_variant("dt = 1e-6", "dt = auto", NULL));
    kedr_dsmc_case c = loaded;
    const kedr_dsmc_species *n2 = &c.species[0];
    double n = 1e20, t = 300, kb = 1.380649e-23;
    double nu = 4 * n2->d_ref * n2->d_ref * n * sqrt(M_PI * kb * n2->t_ref / n2->mass) *
                pow(t / n2->t_ref, 1 - n2->omega);
    double transit = 0.1 / (1000 + 3 * sqrt(2 * kb * t / n2->mass));
    double want = fmin(0.2 / nu, 0.5 * transit);
    TU_CHECK(c.dt_auto && fabs(c.dt - want) < 1e-12 * want, "dt = auto: %g, expected %g", c.dt,
             want);
    double tc = 0, tt = 0;
    kedr_dsmc_time_scales(&c, &tc, &tt);
    TU_CHECK(fabs(tc * nu - 1) < 1e-12 && fabs(tt / transit - 1) < 1e-12, "scales %g %g", tc, tt);
    TU_CHECK(kedr_dsmc_auto_dt(&c) == c.dt, "kedr_dsmc_auto_dt");
    c.number_density = 0; /* no collisions: only the transit time limits dt */
    kedr_dsmc_time_scales(&c, &tc, &tt);
    TU_CHECK(isinf(tc) && kedr_dsmc_auto_dt(&c) == 0.5 * tt, "empty gas: %g", tc);
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_CHECK(!loaded.dt_auto && loaded.dt == 1e-6, "given dt");
    expect_error("dt = 1e-6", "dt = automatic", NULL, "[run] dt");
    expect_error("dt = 1e-6", "dt = 0", NULL, "[run] dt");

    /* The default 20 particles per cell, a given number, and a given weight. */
    TU_OK(load_variant(NULL, NULL, NULL));
    double volume = 0.1 * 0.1;
    TU_CHECK(fabs(loaded.weight - n * volume / 20) < 1e-9 * loaded.weight, "default %g",
             loaded.weight);
    TU_OK(load_variant(NULL, NULL, "particles_per_cell = 3\n"));
    TU_CHECK(fabs(loaded.weight - n * volume / 3) < 1e-9 * loaded.weight, "ppc 3: %g",
             loaded.weight);
    TU_OK(load_variant(NULL, NULL, "weight = 1e12\n"));
    TU_CHECK(loaded.weight == 1e12, "weight %g", loaded.weight);
    expect_error(NULL, NULL, "particles_per_cell = 0\n", "particles_per_cell");

    /* Output and limit keys, with their defaults. */
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_CHECK(!loaded.write_png && loaded.checkpoint && loaded.checkpoint_every == 0 &&
                 loaded.max_particles == 0, "defaults");
    TU_OK(load_variant(NULL, NULL, "max_particles = 5000\n[output]\npng = yes\n"
                       "checkpoint_every = 7\ncheckpoint = no\n"));
    TU_CHECK(loaded.max_particles == 5000 && loaded.write_png &&
                 loaded.checkpoint_every == 7 && !loaded.checkpoint, "output keys");
    expect_error(NULL, NULL, "max_particles = -3\n", "[run] max_particles");
    expect_error(NULL, NULL, "[output]\npng = maybe\n", "[output] png");
    expect_error(NULL, NULL, "[output]\ncheckpoint_evry = 3\n", "did you mean 'checkpoint_every'");
    /* [output] vtk: text by default, binary (compressed where kedr has zlib) or raw binary */
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_CHECK(loaded.vtk_format == KEDR_DSMC_VTK_BINARY, "vtk default %d", loaded.vtk_format);
    TU_OK(load_variant(NULL, NULL, "[output]\nvtk = binary\n"));
    TU_CHECK(loaded.vtk_format == KEDR_DSMC_VTK_BINARY, "vtk = binary: %d", loaded.vtk_format);
    TU_OK(load_variant(NULL, NULL, "[output]\nvtk = raw\n"));
    TU_CHECK(loaded.vtk_format == KEDR_DSMC_VTK_RAW, "vtk = raw: %d", loaded.vtk_format);
    expect_error(NULL, NULL, "[output]\nvtk = gzip\n", ":25: [output] vtk");
    /* [output] stats_file and stats_columns */
    TU_OK(load_variant(NULL, NULL, "[output]\nstats_file = s.csv\n"));
    TU_CHECK(strcmp(loaded.stats_file, "s.csv") == 0 && loaded.nstats_columns == 8 &&
                 loaded.stats_columns[0] == KEDR_DSMC_STAT_STEP &&
                 loaded.stats_columns[7] == KEDR_DSMC_STAT_WALL, "stats_file defaults");
    TU_OK(load_variant(NULL, NULL, "[output]\nstats_file = s.jsonl\n"
                       "stats_columns = wall, t_collisions,samples  particles\n"));
    TU_CHECK(loaded.nstats_columns == 4 && loaded.stats_columns[0] == KEDR_DSMC_STAT_WALL &&
                 loaded.stats_columns[1] == KEDR_DSMC_STAT_T_COLLISIONS &&
                 loaded.stats_columns[2] == KEDR_DSMC_STAT_SAMPLES &&
                 loaded.stats_columns[3] == KEDR_DSMC_STAT_PARTICLES, "stats_columns %d",
             loaded.nstats_columns);
    for (int k = 0; k < KEDR_DSMC_NSTATS; k++) {
        char extra[128];
        snprintf(extra, sizeof extra, "[output]\nstats_file = s.csv\nstats_columns = %s\n",
                 kedr_dsmc_stat_name((kedr_dsmc_stat)k));
        TU_CHECK(load_variant(NULL, NULL, extra) == KEDR_OK && loaded.nstats_columns == 1 &&
                     loaded.stats_columns[0] == (kedr_dsmc_stat)k, "column %s", extra);
    }
    expect_error(NULL, NULL, "[output]\nstats_file = s.csv\nstats_columns = step,partcles\n",
                 ":26: [output] stats_columns: unknown column 'partcles' (did you mean "
                 "'particles'?); the columns are: step, time, particles, collisions");
    expect_error(NULL, NULL, "[output]\nstats_file = s.csv\nstats_columns = step,time,step\n",
                 ":26: [output] stats_columns: column 'step' given twice");
    expect_error(NULL, NULL, "[output]\nstats_file = s.csv\nstats_columns = ,\n",
                 "[output] stats_columns: no column given");
    expect_error(NULL, NULL, "[output]\nstats_columns = step\n",
                 ":25: [output] stats_columns: applies to a stats_file only");
    expect_error(NULL, NULL, "[output]\nstats_every = 0\nstats_file = s.csv\n",
                 ":26: [output] stats_file: needs stats_every > 0");

    /* [sample] start = auto and its steady-state test. */
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_CHECK(!loaded.sample_auto && loaded.sample_start == -1, "start not given");
    TU_OK(load_variant(NULL, NULL, "[sample]\nstart = auto\n"));
    /* the flow-through time: 2 m at 1000 m/s plus N2's most probable speed at 300 K, dt 1e-6 */
    double cm = sqrt(2 * KEDR_BOLTZMANN * 300 / loaded.species[0].mass);
    int64_t window = (int64_t)ceil(2.0 / (1000 + cm) / 1e-6);
    TU_CHECK(loaded.sample_auto && loaded.steady_window == window && window > 1000 &&
                 loaded.steady_tolerance == 0.005, "start = auto, defaults: window %lld (%lld)",
             (long long)loaded.steady_window, (long long)window);
    TU_OK(load_variant(NULL, NULL, "[sample]\nstart = auto\nsteady_window = auto\n"));
    TU_CHECK(loaded.steady_window == window, "steady_window = auto");
    TU_OK(load_variant("dt = 1e-6", "dt = 1e-3", "[sample]\nstart = auto\n"));
    TU_CHECK(loaded.steady_window == 50, "at least 50 steps: %lld",
             (long long)loaded.steady_window);
    TU_OK(load_variant(NULL, NULL, "[sample]\nstart = auto\nsteady_window = 20\n"
                       "steady_tolerance = 0.01\n"));
    TU_CHECK(loaded.steady_window == 20 && loaded.steady_tolerance == 0.01, "steady keys");
    TU_OK(load_variant(NULL, NULL, "[sample]\nstart = 7\n"));
    TU_CHECK(!loaded.sample_auto && loaded.sample_start == 7, "start = 7");
    expect_error(NULL, NULL, "[sample]\nstart = later\n", "[sample] start");
    expect_error(NULL, NULL, "[sample]\nstart = 5\nsteady_window = 20\n",
                 "steady_window: applies to start = auto only");
    expect_error(NULL, NULL, "[sample]\nstart = auto\nsteady_window = 1\n",
                 "[sample] steady_window");
    expect_error(NULL, NULL, "[sample]\nstart = auto\nsteady_tolerance = 2\n",
                 "[sample] steady_tolerance");
}

/* Bodies, walls, surface and periodic keys. */
static void test_bodies(void)
{
    const char *plate = "type = plate\npoints = 1 0.4 1 0.6";
    TU_OK(load_variant(plate, "type = circle\ncenter = 1 0.5\nradius = 0.1", NULL));
    kedr_dsmc_case *c = &loaded;
    TU_CHECK(c->nbodies == 1 && c->body[0].type == KEDR_DSMC_BODY_CIRCLE &&
             c->body[0].radius == 0.1 && c->nsegments == 0, "circle");
    TU_OK(load_variant(plate, "type = box\ncenter = 1 0.5\nsize = 0.4 0.2", NULL));
    TU_CHECK(c->nbodies == 1 && c->body[0].type == KEDR_DSMC_BODY_BOX && c->nsegments == 4 &&
             c->segment[0][0] == 0.8 && c->segment[2][1] == 0.6, "box");
    TU_OK(load_variant(plate, "type = wedge\napex = 0.5 0.5\nhalf_angle = 45\nlength = 0.2",
                       NULL));
    TU_CHECK(c->nbodies == 1 && c->nsegments == 3 && fabs(c->segment[1][3] - 0.7) < 1e-12,
             "wedge");
    TU_OK(load_variant("[wall]\ntemperature = 300\n",
                       "[body2]\ntype = circle\ncenter = 1.5 0.5\nradius = 0.1\n"
                       "[body3]\ntype = polygon\npoints = 0.2 0.2 0.4 0.2 0.3 0.4\n"
                       "[wall]\ntemperature = 400\nmodel = maxwell\naccommodation = 0.8\n"
                       "[surface]\nreference_length = 0.5\nelement_size = 0.01\n", NULL));
    TU_CHECK(c->nbodies == 3 && c->nsegments == 4 && c->body[2].first == 1 &&
             c->body[2].count == 3 && c->wall_model == KEDR_DSMC_WALL_MAXWELL &&
             c->accommodation == 0.8 && c->reference_length == 0.5 && c->element_size == 0.01,
             "three bodies, maxwell walls");
    TU_OK(load_variant("y_max = 1\n", "y_max = 1\nboundary_y_min = periodic\n"
                       "boundary_y_max = periodic\n", NULL));
    TU_CHECK(c->side[KEDR_DSMC_YMIN] == KEDR_DSMC_PERIODIC, "periodic");

    /* [body] temperature overrides [wall] temperature for that body; [wall] temperature is
     * only required while some body has none of its own. */
    TU_OK(load_variant(plate, "type = plate\npoints = 1 0.4 1 0.6\ntemperature = 250", NULL));
    TU_CHECK(c->body[0].temperature == 250 && c->wall_temperature == 300, "body temperature");
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_CHECK(c->body[0].temperature == 0, "no body temperature: %g", c->body[0].temperature);
    const char *plate_wall = "type = plate\npoints = 1 0.4 1 0.6\n[wall]\ntemperature = 300\n";
    TU_OK(load_variant(plate_wall, "type = plate\npoints = 1 0.4 1 0.6\ntemperature = 250\n"
                       "[body2]\ntype = circle\ncenter = 1.5 0.5\nradius = 0.1\n"
                       "temperature = 350\n", NULL));
    TU_CHECK(c->nbodies == 2 && c->body[0].temperature == 250 && c->body[1].temperature == 350,
             "two bodies with their own temperatures, no [wall]");
    expect_error(plate_wall, "type = plate\npoints = 1 0.4 1 0.6\ntemperature = 250\n"
                 "[body2]\ntype = circle\ncenter = 1.5 0.5\nradius = 0.1\n", NULL,
                 "[wall] with the required key 'temperature'");
    expect_error(plate, "type = plate\npoints = 1 0.4 1 0.6\ntemperature = 0", NULL,
                 ":19: [body] temperature = 0: expected");
    expect_error(plate, "type = plate\npoints = 1 0.4 1 0.6\ntemperature = -20", NULL,
                 ":19: [body] temperature = -20: expected");
    expect_error(plate, "type = plate\npoints = 1 0.4 1 0.6\ntemperature = warm", NULL,
                 ":19: [body] temperature");
    expect_error(plate, "type = plate\npoints = 1 0.4 1 0.6\ntemprature = 250", NULL,
                 ":19: [body] unknown key 'temprature' (did you mean 'temperature'?)");

    /* [body] wall and accommodation override [wall] model and accommodation for that body. */
    TU_OK(load_variant(plate, "type = plate\npoints = 1 0.4 1 0.6\nwall = maxwell\n"
                       "accommodation = 0.3", NULL));
    TU_CHECK(c->body[0].own_wall && c->body[0].wall_model == KEDR_DSMC_WALL_MAXWELL &&
             c->body[0].accommodation == 0.3 && c->wall_model == KEDR_DSMC_WALL_DIFFUSE,
             "body wall maxwell");
    TU_OK(load_variant(plate, "type = plate\npoints = 1 0.4 1 0.6\nwall = specular", NULL));
    TU_CHECK(c->body[0].own_wall && c->body[0].wall_model == KEDR_DSMC_WALL_SPECULAR,
             "body wall specular");
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_CHECK(!c->body[0].own_wall, "no body wall");
    expect_error(plate, "type = plate\npoints = 1 0.4 1 0.6\naccommodation = 0.5", NULL,
                 ":19: [body] accommodation: only a body with wall = maxwell has one");
    expect_error(plate, "type = plate\npoints = 1 0.4 1 0.6\nwall = maxwell\naccommodation = 2",
                 NULL, ":20: [body] accommodation = 2");
    expect_error(plate, "type = plate\npoints = 1 0.4 1 0.6\nwall = difuse", NULL,
                 ":19: [body] wall");

    expect_error(plate, "type = circle\ncenter = 1 0.5\nradius = 0", NULL,
                 ":19: [body] radius: 0: expected > 0");
    expect_error(plate, "type = circle\ncenter = 1.95 0.5\nradius = 0.1", NULL,
                 ":18: [body] center: circle at (1.95, 0.5) of radius 0.1 is not inside");
    expect_error(plate, "type = circle\ncenter = 1 0.5\npoints = 1 2 3 4", NULL,
                 ":19: [body] points: not a key of a body of type circle");
    expect_error(plate, "type = polygon\npoints = 0.5 0.2 1.5 0.8 1.5 0.2 0.5 0.8", NULL,
                 ":18: [body] points: the polygon intersects itself");
    expect_error(plate, "type = box\ncenter = 0.1 0.5\nsize = 0.4 0.2", NULL,
                 "closed bodies must not touch its sides");
    expect_error(plate, "type = wedge\napex = 0.5 0.5\nhalf_angle = 90\nlength = 0.2", NULL,
                 ":19: [body] half_angle");
    expect_error("[wall]", "[body2]\ntype = circle\ncenter = 1.1 0.5\nradius = 0.2\n[wall]",
                 NULL, ":21: [body2] center: bodies 1 and 2 overlap");
    expect_error("temperature = 300\n[run]", "temperature = 300\naccommodation = 0.5\n[run]",
                 NULL, "[wall] accommodation: only the maxwell model has one");
    expect_error("temperature = 300\n[run]", "temperature = 300\nmodel = maxwell\n"
                 "accommodation = 1.5\n[run]", NULL, "[wall] accommodation = 1.5");
    expect_error("y_max = 1\n", "y_max = 1\nboundary_y_min = periodic\n", NULL,
                 ":6: [domain] boundary_y_min: periodic sides come in pairs");

    /* kedr_dsmc_case_check on cases built in code. */
    TU_OK(load_variant(NULL, NULL, NULL));
    kedr_dsmc_case d = loaded;
    d.nbodies = 2;
    d.body[1].type = KEDR_DSMC_BODY_CIRCLE;
    d.body[1].center[0] = 1.0;
    d.body[1].center[1] = 0.5;
    d.body[1].radius = 0.05;
    TU_CHECK(kedr_dsmc_case_check(&d) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "overlap"), "overlap in code: %s", kedr_last_error());
    d.body[1].center[0] = 1.5;
    d.body[1].radius = 0;
    TU_CHECK(kedr_dsmc_case_check(&d) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "radius 0"), "zero radius in code: %s", kedr_last_error());
    d.body[1].radius = 0.1;
    TU_OK(kedr_dsmc_case_check(&d));
    d.body[1].temperature = -1;
    TU_CHECK(kedr_dsmc_case_check(&d) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "body 2: temperature -1"), "negative body temperature in "
             "code: %s", kedr_last_error());
    d.body[1].temperature = NAN;
    TU_CHECK(kedr_dsmc_case_check(&d) == KEDR_ERR_INVALID, "NaN body temperature in code");
    d.body[1].temperature = 400;
    d.wall_temperature = 0; /* body 1 still takes it */
    TU_CHECK(kedr_dsmc_case_check(&d) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "wall temperature 0"), "no wall temperature in code: %s",
             kedr_last_error());
    d.body[0].temperature = 250;
    TU_OK(kedr_dsmc_case_check(&d));
    d.body[1].own_wall = 1;
    d.body[1].wall_model = KEDR_DSMC_WALL_MAXWELL;
    d.body[1].accommodation = 1.5;
    TU_CHECK(kedr_dsmc_case_check(&d) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "body 2: wall model 2, accommodation 1.5"),
             "body accommodation in code: %s", kedr_last_error());
    d.body[1].accommodation = 0.5;
    TU_OK(kedr_dsmc_case_check(&d));
    d.side[KEDR_DSMC_XMIN] = KEDR_DSMC_PERIODIC;
    TU_CHECK(kedr_dsmc_case_check(&d) == KEDR_ERR_INVALID, "unpaired periodic side in code");
}

/* A 3D case: the base case with [domain] dimensions = 3, z bounds and sides, nz = 5, the given
 * [body] lines and extra lines at the end. Line numbers: [body] type is line 22. */
static kedr_status load_3d(const char *body, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[domain]\ndimensions = 3\nx_min = 0\nx_max = 2\ny_min = 0\ny_max = 1\n" /* 1-6 */
             "z_min = 0\nz_max = 1\nboundary_z_min = specular\n"                   /* 7-9 */
             "boundary_z_max = outflow\n[grid]\nnx = 20\nny = 10\nnz = 5\n"        /* 10-14 */
             "[species]\nfile = SPECIES\ngas = N2\n"                                 /* 15-17 */
             "[freestream]\nnumber_density = 1e20\ntemperature = 300\n"             /* 18-20 */
             "[body]\n%s\n[wall]\ntemperature = 300\n[run]\ndt = 1e-6\nsteps = 10\n%s",
             body, extra ? extra : "");
    char species[1200], tail[2048];
    snprintf(species, sizeof species, "%scases/dsmc/species.ini", root);
    char *at = strstr(text, "SPECIES");
    snprintf(tail, sizeof tail, "%s", at + 7);
    snprintf(at, sizeof text - (size_t)(at - text), "%s%s", species, tail);
    char path[] = "/tmp/kedr_test_case_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        fprintf(stderr, "cannot write a temporary case\n");
        exit(1);
    }
    close(fd);
    kedr_status s = kedr_dsmc_case_load(path, &loaded);
    unlink(path);
    return s;
}

static void expect_3d_error(const char *body, const char *extra, const char *frag)
{
    kedr_status s = load_3d(body, extra);
    TU_CHECK(s == KEDR_ERR_PARSE, "3D '%s': status %s", body, kedr_status_name(s));
    TU_CHECK(strstr(kedr_last_error(), frag) != NULL, "message '%s' lacks '%s'", kedr_last_error(),
             frag);
}

static void test_3d(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%scases/dsmc/sphere-3d.ini", root);
    kedr_dsmc_case c;
    TU_OK(kedr_dsmc_case_load(path, &c));
    TU_CHECK(c.dims == 3 && c.nz > 1 && c.nbodies == 1 && c.body[0].type == KEDR_DSMC_BODY_SPHERE,
             "sphere-3d: dims %d, nz %d, %d bodies", c.dims, c.nz, c.nbodies);

    const char *sphere = "type = sphere\ncenter = 1 0.5 0.5\nradius = 0.2";
    TU_OK(load_3d(sphere, "[surface]\nreference_area = 0.5\n"));
    kedr_dsmc_case *d = &loaded;
    TU_CHECK(d->dims == 3 && d->nz == 5 && d->lo[2] == 0 && d->hi[2] == 1 &&
             d->side[KEDR_DSMC_ZMIN] == KEDR_DSMC_SPECULAR &&
             d->side[KEDR_DSMC_ZMAX] == KEDR_DSMC_OUTFLOW && d->body[0].center[2] == 0.5 &&
             d->body[0].radius == 0.2 && d->reference_area == 0.5, "3D sphere case");
    /* particles_per_cell = 20 (the default) over cells of 0.1 x 0.1 x 0.2 m */
    TU_CHECK(fabs(d->weight - 1e20 * 0.002 / 20) < 1e-9 * d->weight, "3D weight %g", d->weight);
    TU_OK(load_3d("type = box\ncenter = 1 0.5 0.5\nsize = 0.2 0.3 0.4", NULL));
    TU_CHECK(d->body[0].type == KEDR_DSMC_BODY_CUBOID && d->body[0].size[2] == 0.4, "cuboid");
    TU_OK(load_3d("type = cone\napex = 0.5 0.5 0.5\nhalf_angle = 20\nlength = 0.5\n"
                  "temperature = 800\nwall = maxwell\naccommodation = 0.5", NULL));
    TU_CHECK(d->body[0].temperature == 800 && d->body[0].own_wall &&
             d->body[0].wall_model == KEDR_DSMC_WALL_MAXWELL && d->body[0].accommodation == 0.5,
             "3D body's own wall");
    TU_CHECK(d->body[0].type == KEDR_DSMC_BODY_CONE && d->body[0].length == 0.5 &&
             d->body[0].half_angle == 20, "cone");

    expect_3d_error("type = sphere\ncenter = 1 0.5\nradius = 0.2",
                    NULL, ":23: [body] center: expected 3 numbers: x y z");
    expect_3d_error("type = sphere\ncenter = 1 0.5 0.9\nradius = 0.2", NULL,
                    ":23: [body] center: extends over z from 0.7 to 1.1: not strictly inside");
    expect_3d_error("type = circle\ncenter = 1 0.5\nradius = 0.2", NULL,
                    ":22: [body] type: circle: not a 3D body");
    expect_3d_error("type = cone\napex = 0.5 0.5 0.5\nhalf_angle = 95\nlength = 0.5", NULL,
                    ":24: [body] half_angle");
    expect_3d_error("type = box\ncenter = 1 0.5 0.5\nsize = 0.2 0.3", NULL,
                    ":24: [body] size: expected 3 numbers > 0");
    expect_3d_error(sphere, "[body2]\ntype = sphere\ncenter = 1.3 0.5 0.5\nradius = 0.2\n",
                    "[body2] center: the bounding boxes of bodies 1 and 2 meet");
    expect_3d_error(sphere, "[surface]\nreference_length = 0.5\n",
                    "[surface] reference_length: 3D cases take reference_area");
    /* z keys in a 2D case, and a sphere there */
    expect_error("y_max = 1\n", "y_max = 1\nz_min = 0\n", NULL,
                 ":6: [domain] z_min: only for 3D cases");
    expect_error("type = plate\npoints = 1 0.4 1 0.6",
                 "type = sphere\ncenter = 1 0.5 0.5\nradius = 0.1", NULL,
                 ":17: [body] type: sphere: a 3D body");
    expect_error("y_max = 1\n", "y_max = 1\ndimensions = 4\n", NULL,
                 ":6: [domain] dimensions");
    /* [downstream] in 3D: the z sides are side names, velocity_z a key */
    TU_OK(load_3d(sphere, "[downstream]\nstate = explicit\nsides = y_max\nnumber_density = 2e20\n"
                          "temperature = 400\nvelocity_z = -50\n"));
    TU_CHECK(loaded.downstream.sides == 1u << KEDR_DSMC_YMAX &&
             loaded.downstream.velocity[2] == -50, "3D downstream");
    expect_3d_error(sphere, "[downstream]\nstate = explicit\nsides = z_max\nnumber_density = 2e20\n"
                            "temperature = 400\n", "[downstream] sides: z_max is outflow in [domain]");
    expect_error(NULL, NULL, "[downstream]\nstate = explicit\nnumber_density = 2e20\n"
                 "temperature = 400\nvelocity_z = 3\n", "[downstream] velocity_z: only for 3D cases");
    /* z sides: pairs and the z extent */
    TU_CHECK(load_3d(sphere, NULL) == KEDR_OK, "base 3D case");
    kedr_dsmc_case e = loaded;
    e.side[KEDR_DSMC_ZMAX] = KEDR_DSMC_PERIODIC;
    TU_CHECK(kedr_dsmc_case_check(&e) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "z_min and z_max"), "unpaired z: %s", kedr_last_error());
    e = loaded;
    e.hi[2] = e.lo[2];
    TU_CHECK(kedr_dsmc_case_check(&e) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "z extent"), "empty z: %s", kedr_last_error());
}

/* [downstream]: the Rankine-Hugoniot state (gamma 5/3 for argon, 7/5 for N2) and an explicit
 * one, and every kind of bad input. */
static void test_downstream(void)
{
    const char *bc = "y_max = 1\n";
    const char *shock_bc = "y_max = 1\nboundary_x_max = inflow\n";
    TU_OK(load_variant(bc, shock_bc, "[downstream]\nstate = rankine-hugoniot\n"));
    kedr_dsmc_downstream *d = &loaded.downstream;
    /* N2 at 300 K, 1000 m/s: M = 1000 / sqrt(1.4 k T / m) */
    double kb = 1.380649e-23, m = loaded.species[0].mass, g = 1.4;
    double mach = 1000 / sqrt(g * kb * 300 / m), m2 = mach * mach;
    double rn = (g + 1) * m2 / ((g - 1) * m2 + 2), rp = (2 * g * m2 - (g - 1)) / (g + 1);
    TU_CHECK(d->mode == KEDR_DSMC_RANKINE_HUGONIOT && d->sides == 1u << KEDR_DSMC_XMAX &&
             fabs(d->number_density / (1e20 * rn) - 1) < 1e-12 &&
             fabs(d->temperature / (300 * rp / rn) - 1) < 1e-12 &&
             fabs(d->velocity[0] * rn / 1000 - 1) < 1e-12 && d->velocity[1] == 0 &&
             !d->has_shock_position, "N2 Rankine-Hugoniot: n %g T %g u %g", d->number_density,
             d->temperature, d->velocity[0]);
    /* Mass, momentum and energy fluxes are continuous across the shock. */
    double n1 = 1e20, t1 = 300, u1 = 1000, n2 = d->number_density, t2 = d->temperature;
    double u2 = d->velocity[0], cp = g / (g - 1) * kb / m;
    TU_CHECK(fabs(n2 * u2 / (n1 * u1) - 1) < 1e-12, "mass flux");
    double mom2 = n2 * m * u2 * u2 + n2 * kb * t2, mom1 = n1 * m * u1 * u1 + n1 * kb * t1;
    TU_CHECK(fabs(mom2 / mom1 - 1) < 1e-12, "momentum flux");
    TU_CHECK(fabs((cp * t2 + u2 * u2 / 2) / (cp * t1 + u1 * u1 / 2) - 1) < 1e-12, "energy flux");

    /* The shipped argon case: gamma 5/3, Mach 8. */
    char path[1200];
    kedr_dsmc_case c;
    snprintf(path, sizeof path, "%scases/dsmc/shock-ar-m8.ini", root);
    TU_OK(kedr_dsmc_case_load(path, &c));
    TU_CHECK(fabs(c.downstream.number_density / c.number_density - 3.8209) < 1e-4 &&
             fabs(c.downstream.temperature / c.temperature - 20.872) < 1e-3 &&
             c.downstream.has_shock_position && c.downstream.shock_position == 0,
             "argon Mach 8: n2/n1 %g, T2/T1 %g", c.downstream.number_density / c.number_density,
             c.downstream.temperature / c.temperature);
    /* dt = auto takes the hot downstream state's transit time. */
    double tc, tt;
    kedr_dsmc_downstream keep = c.downstream;
    kedr_dsmc_time_scales(&c, &tc, &tt);
    c.downstream.mode = KEDR_DSMC_DOWNSTREAM_NONE;
    double tc1, tt1;
    kedr_dsmc_time_scales(&c, &tc1, &tt1);
    TU_CHECK(tt < tt1 && tc < tc1, "downstream time scales %g %g vs freestream %g %g", tc, tt, tc1,
             tt1);
    c.downstream = keep;
    TU_OK(kedr_dsmc_case_check(&c));
    c.downstream.temperature = -1;
    TU_CHECK(kedr_dsmc_case_check(&c) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "downstream n ="), "T < 0 in code: %s", kedr_last_error());
    c.downstream = keep;
    c.side[KEDR_DSMC_XMAX] = KEDR_DSMC_OUTFLOW;
    TU_CHECK(kedr_dsmc_case_check(&c) == KEDR_ERR_INVALID &&
             strstr(kedr_last_error(), "x_max is not an inflow"), "outflow side in code: %s",
             kedr_last_error());
    double rn2, rt2, ru2[3];
    c.velocity[0] = 100;
    TU_CHECK(kedr_dsmc_rankine_hugoniot(&c, KEDR_DSMC_XMAX, &rn2, &rt2, ru2) == KEDR_ERR_INVALID,
             "subsonic Rankine-Hugoniot");
    c.velocity[0] = -3000; /* flowing towards x_min: the shock faces x_min */
    TU_OK(kedr_dsmc_rankine_hugoniot(&c, KEDR_DSMC_XMIN, &rn2, &rt2, ru2));
    TU_CHECK(ru2[0] < 0 && rn2 > c.number_density, "shock facing x_min: u2 %g", ru2[0]);

    /* Explicit state, several sides, density instead of number density. */
    TU_OK(load_variant(bc, "y_max = 1\nboundary_x_max = inflow\nboundary_y_max = inflow\n",
                       "[downstream]\nstate = explicit\nsides = x_max, y_max\n"
                       "density = 1e-5\ntemperature = 500\nvelocity_x = 10\n"));
    TU_CHECK(d->mode == KEDR_DSMC_DOWNSTREAM_EXPLICIT &&
             d->sides == (1u << KEDR_DSMC_XMAX | 1u << KEDR_DSMC_YMAX) &&
             fabs(d->number_density * m / 1e-5 - 1) < 1e-12 && d->temperature == 500 &&
             d->velocity[0] == 10, "explicit state");

    expect_error(bc, shock_bc, "[downstream]\nstate = rankine\n",
                 "[downstream] state = rankine: expected one of");
    expect_error(NULL, NULL, "[downstream]\nstate = rankine-hugoniot\n",
                 ":24: [downstream] sides: x_max is outflow in [domain]");
    expect_error(bc, shock_bc, "[downstream]\nstate = rankine-hugoniot\nsides = x_max y_min\n",
                 "needs exactly one side");
    expect_error(bc, shock_bc, "[downstream]\nstate = rankine-hugoniot\nsides = z_max\n",
                 "[downstream] sides: 'z_max': expected side names");
    expect_error(bc, shock_bc, "[downstream]\nstate = rankine-hugoniot\nsides = x_max,x_max\n",
                 "x_max appears twice");
    expect_error(bc, shock_bc, "[downstream]\nstate = rankine-hugoniot\ntemperature = 400\n",
                 "[downstream] temperature: state = rankine-hugoniot computes it");
    expect_error(bc, shock_bc, "[downstream]\nstate = rankine-hugoniot\nsides = x_min\n",
                 "Mach number towards x_min is -");
    expect_error(bc, shock_bc, "[downstream]\nstate = explicit\nnumber_density = 1e21\n",
                 "[downstream] lacks the required key 'temperature'");
    expect_error(bc, shock_bc, "[downstream]\nstate = explicit\ntemperature = 400\n",
                 "give exactly one of number_density");
    expect_error(bc, shock_bc, "[downstream]\nstate = explicit\nnumber_density = -1\n"
                 "temperature = 400\n", "[downstream] number_density = -1");
    expect_error(bc, shock_bc, "[downstream]\nstate = rankine-hugoniot\nshock_position = 3\n",
                 "[downstream] shock_position = 3: expected a number in [0, 2]");
    expect_error("velocity_x = 1000", "velocity_x = 1000\nfill = no",
                 "[downstream]\nstate = explicit\nsides = y_max\nnumber_density = 1e20\n"
                 "temperature = 400\nshock_position = 0.5\n",
                 "[downstream] shock_position: places the initial fill");
    expect_error(bc, shock_bc, "[downstream]\nstate = rankine-hugoniot\nshock_positon = 1\n",
                 "did you mean 'shock_position'?");
    expect_error(bc, "y_max = 1\nboundary_x_max = inflow\nboundary_y_max = inflow\n",
                 "[downstream]\nstate = explicit\nsides = x_max y_max\nnumber_density = 1e20\n"
                 "temperature = 400\nshock_position = 1\n", "needs exactly one downstream side");
}

/* [domain] axisymmetric, the axis side, [run] radial_weighting and what they refuse. */
static void test_axisymmetric(void)
{
    expect_error(NULL, NULL, "radial_weighting = no\n",
                 "[run] radial_weighting: only for axisymmetric cases");
    expect_error("x_min = 0\n", "boundary_y_max = axis\nx_min = 0\n", NULL,
                 "[domain] boundary_y_max: axis: only boundary_y_min of an axisymmetric case");
    expect_error("x_min = 0\n", "dimensions = 3\naxisymmetric = yes\nx_min = 0\n", NULL,
                 "[domain] axisymmetric: an axisymmetric case is 2D");
    const char *planar = base_case;
    base_case = "[domain]\naxisymmetric = yes\nx_min = 0\nx_max = 2\ny_min = 0\ny_max = 1\n"
                "[grid]\nnx = 20\nny = 10\n"
                "[species]\nfile = SPECIES\ngas = N2\n"
                "[freestream]\nnumber_density = 1e20\ntemperature = 300\nvelocity_x = 1000\n"
                "[body]\ntype = plate\npoints = 1 0.4 1 0.6\n"
                "[wall]\ntemperature = 300\n"
                "[run]\ndt = 1e-6\nsteps = 10\n";
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_CHECK(loaded.axisymmetric && loaded.radial_weighting &&
                 loaded.side[KEDR_DSMC_YMIN] == KEDR_DSMC_AXIS &&
                 loaded.side[KEDR_DSMC_YMAX] == KEDR_DSMC_INFLOW,
             "axisymmetric %d, radial weighting %d, y sides %d %d", loaded.axisymmetric,
             loaded.radial_weighting, loaded.side[KEDR_DSMC_YMIN], loaded.side[KEDR_DSMC_YMAX]);
    /* particles_per_cell (20) in the outermost ring: 2 pi r_c dx dy, r_c = 0.95 */
    double v = 2 * M_PI * 0.95 * 0.1 * 0.1;
    TU_CHECK(fabs(loaded.weight - 1e20 * v / 20) < 1e-9 * loaded.weight, "weight %g",
             loaded.weight);
    TU_OK(load_variant(NULL, NULL, "radial_weighting = no\n[surface]\nreference_area = 0.5\n"));
    TU_CHECK(!loaded.radial_weighting && loaded.reference_area == 0.5, "radial_weighting = no");
    TU_OK(load_variant("y_min = 0\n", "y_min = 0.1\nboundary_y_min = specular\n", NULL));
    TU_CHECK(loaded.side[KEDR_DSMC_YMIN] == KEDR_DSMC_SPECULAR, "an annulus' inner cylinder");
    TU_OK(load_variant("type = plate\npoints = 1 0.4 1 0.6", "type = circle\ncenter = 1 0\n"
                       "radius = 0.2", NULL));
    /* a wedge with its apex on the axis is a cone, a box centred on it a cylinder */
    TU_OK(load_variant("type = plate\npoints = 1 0.4 1 0.6", "type = wedge\napex = 0.5 0\n"
                       "half_angle = 20\nlength = 0.6", NULL));
    TU_CHECK(loaded.nsegments == 3 && loaded.segment[0][1] == 0 && loaded.segment[1][1] == 0 &&
                 fabs(loaded.segment[1][3] - 0.6 * tan(20 * M_PI / 180)) < 1e-15,
             "axisymmetric wedge: segments %d, y %g %g %g", loaded.nsegments,
             loaded.segment[0][1], loaded.segment[1][1], loaded.segment[1][3]);
    TU_OK(load_variant("type = plate\npoints = 1 0.4 1 0.6", "type = box\ncenter = 1 0\n"
                       "size = 0.4 0.6", NULL));
    TU_CHECK(loaded.nsegments == 4 && loaded.segment[0][1] == 0 && loaded.segment[1][3] == 0.3,
             "axisymmetric box: y %g to %g", loaded.segment[0][1], loaded.segment[1][3]);
    expect_error("y_min = 0\n", "y_min = 0\nboundary_y_min = inflow\n", NULL,
                 ":6: [domain] boundary_y_min: y_min = 0 in an axisymmetric case is the axis");
    expect_error("y_min = 0\n", "y_min = -0.5\n", NULL, "[domain] y_min: -0.5: y is the radius");
    expect_error("y_min = 0\n", "y_min = 0.1\nboundary_y_min = axis\n", NULL,
                 "boundary_y_min: axis: only boundary_y_min of an axisymmetric case with y_min = 0");
    expect_error("y_min = 0\n", "y_min = 0.1\nboundary_y_min = periodic\n"
                 "boundary_y_max = periodic\n", NULL, "periodic y sides in an axisymmetric case");
    expect_error("velocity_x = 1000", "velocity_x = 1000\nvelocity_y = 3", NULL,
                 ":17: [freestream] velocity_y: 3: an axisymmetric flow moves along the axis");
    expect_error(NULL, NULL, "[surface]\nreference_length = 1\n",
                 "[surface] reference_length: axisymmetric cases take reference_area");
    expect_error("type = plate\npoints = 1 0.4 1 0.6", "type = circle\ncenter = 1 0.5\n"
                 "radius = 0.2", NULL, "a circle is a sphere, centred on the axis");
    expect_error("type = plate\npoints = 1 0.4 1 0.6", "type = plate\npoints = 0.5 0 1.5 0",
                 NULL, "lies on the axis");
    base_case = planar;
}

/* Writes text to PATH; 0 when it cannot. */
static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int ok = f && fputs(text, f) >= 0;
    if (f)
        ok = fclose(f) == 0 && ok;
    return ok;
}

/* Names and paths longer than their fields are errors naming the key, never cut short. */
static void test_long_names(void)
{
    char text[8192], tail[64];
    /* [output] dir of 600 bytes */
    snprintf(text, sizeof text, "[output]\ndir = /tmp/");
    size_t len = strlen(text);
    memset(text + len, 'd', 600);
    text[len + 600] = 0;
    strcat(text, "\n");
    expect_error(NULL, NULL, text, "[output] dir: a path of 605 bytes: at most 511");
    /* a case file whose name is 200 bytes */
    char path[400], species[1200], dir[] = "/tmp/kedr_test_names_XXXXXX";
    TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/", dir);
    len = strlen(path);
    memset(path + len, 'n', 200);
    snprintf(path + len + 200, sizeof path - len - 200, ".ini");
    snprintf(species, sizeof species, "%scases/dsmc/species.ini", root);
    snprintf(text, sizeof text, "%s", base_case);
    char *at = strstr(text, "SPECIES");
    snprintf(tail, sizeof tail, "%s", at + 7);
    snprintf(at, sizeof text - (size_t)(at - text), "%s%s", species, tail);
    TU_CHECK(write_file(path, text), "cannot write %s", path);
    kedr_dsmc_case c;
    TU_CHECK(kedr_dsmc_case_load(path, &c) == KEDR_ERR_PARSE &&
                 strstr(kedr_last_error(), "the case name (the file name less its extension) has "
                        "200 bytes; output files take names of at most 127") != NULL,
             "long case name: %s", kedr_last_error());
    unlink(path);
    /* a species of a 40-byte name, in a species file beside the case */
    char gas[41];
    memset(gas, 'g', 40);
    gas[40] = 0;
    snprintf(path, sizeof path, "%s/long.ini", dir);
    snprintf(species, sizeof species, "%s/species.ini", dir);
    char stext[512];
    snprintf(stext, sizeof stext, "[%s]\nmass = 6.63e-26\nd_ref = 4.17e-10\nomega = 0.81\n"
             "T_ref = 273\n", gas);
    TU_CHECK(write_file(species, stext), "cannot write %s", species);
    snprintf(text, sizeof text, "%s", base_case);
    at = strstr(text, "SPECIES\ngas = N2");
    snprintf(at, sizeof text - (size_t)(at - text), "species.ini\ngas = %s%s", gas,
             strstr(base_case, "\n[freestream]"));
    TU_CHECK(write_file(path, text), "cannot write %s", path);
    TU_CHECK(kedr_dsmc_case_load(path, &c) == KEDR_ERR_PARSE &&
                 strstr(kedr_last_error(), "species name of 40 bytes: at most 31") != NULL,
             "long species name: %s", kedr_last_error());
    unlink(path);
    unlink(species);
    rmdir(dir);
}

/* kedr_dsmc_estimate against the sums done by hand for the base case, and the dense gas whose
 * cells would need more candidates than a cell tries. */
static void test_estimate(void)
{
    kedr_dsmc_work w;
    TU_OK(load_variant(NULL, NULL, NULL));
    TU_OK(kedr_dsmc_estimate(&loaded, &w));
    /* 200 cells of 0.1 x 0.1 x 1 m at 1e20 m^-3 and 20 particles a cell (the default) */
    TU_CHECK(fabs(w.particles - 4000) < 1e-9 * 4000 && w.cells == 200 && w.steps == 10,
             "particles %g, cells %g, steps %g", w.particles, w.cells, w.steps);
    /* N2 (one species, rotating): 40 + 4 bytes a particle, twice on the cpu, + 12 */
    TU_CHECK(fabs(w.bytes_cpu - (4000 * (2 * 44 + 12) + 200 * (12 + 64 + 8))) < 1e-6,
             "bytes_cpu %g", w.bytes_cpu);
    /* collisions 1/2 N dt / tau_c, tau_c from kedr_dsmc_time_scales */
    double tc, tt;
    kedr_dsmc_time_scales(&loaded, &tc, &tt);
    TU_CHECK(fabs(w.collisions - 0.5 * 4000 * 1e-6 / tc) < 1e-9 * w.collisions &&
                 w.candidates >= w.collisions && w.candidates == w.candidates_run &&
                 w.cells_capped == 0, "collisions %g, candidates %g", w.collisions, w.candidates);
    /* the inflow x_min face (1 m x 1 m deep), y_min and y_max (2 m each) at the Maxwellian flux */
    double m = loaded.species[0].mass;
    double flux = kedr_dsmc_inflow_flux(1e20, 300, m, 1000) +
                  4 * kedr_dsmc_inflow_flux(1e20, 300, m, 0);
    TU_CHECK(fabs(w.inflow - flux * 1e-6 / loaded.weight) < 1e-9 * w.inflow, "inflow %g",
             w.inflow);
    TU_OK(load_variant("number_density = 1e20", "number_density = 1e30", NULL));
    TU_OK(kedr_dsmc_estimate(&loaded, &w));
    TU_CHECK(w.cells_capped == 200 && w.candidates > 1e12 &&
                 w.candidates_run == 200 * (double)KEDR_DSMC_MAX_CANDIDATES,
             "dense: %g candidates, %g run, %g cells capped", w.candidates, w.candidates_run,
             w.cells_capped);
    TU_CHECK(kedr_dsmc_estimate(NULL, &w) == KEDR_ERR_INVALID, "NULL case");
    loaded.dt = -1;
    TU_CHECK(kedr_dsmc_estimate(&loaded, &w) == KEDR_ERR_INVALID, "unchecked case");
}

/* An argon flow in a box of inflow sides (cpu), from empty (fill = no, the gas flowing in) or
 * full of the freestream at rest; runs up to max_steps or the step when start = auto finds it
 * steady (returned; 0 if never) with *count_then the particles then, *count_end after max_steps. */
static int64_t steady_step(int fill, double speed, int64_t window, double tol, int64_t max_steps,
                           double *count_then, double *count_end)
{
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    c.dims = 2;
    c.hi[0] = 0.5;
    c.hi[1] = 0.25;
    c.nx = 20;
    c.ny = 10;
    c.side[KEDR_DSMC_XMIN] = c.side[KEDR_DSMC_YMIN] = c.side[KEDR_DSMC_YMAX] = KEDR_DSMC_INFLOW;
    c.side[KEDR_DSMC_XMAX] = speed > 0 ? KEDR_DSMC_OUTFLOW : KEDR_DSMC_INFLOW;
    c.nspecies = 1;
    c.species[0] = (kedr_dsmc_species){
        "Ar", 6.63e-26, 4.17e-10, 0.81, 273, 1, 4.17e-10, 0, 1, 0, 0, 0, 0};
    c.fraction[0] = 1;
    c.number_density = 1e20;
    c.temperature = 300;
    c.velocity[0] = speed;
    c.fill = fill;
    c.dt = 2e-6;
    c.steps = max_steps;
    c.seed = 7;
    c.weight = 1e20 * 0.025 * 0.025 / 10; /* 10 a cell */
    c.sample_auto = 1;
    c.sample_every = 1;
    c.steady_window = window;
    c.steady_tolerance = tol;
    kedr_ctx *ctx = NULL;
    kedr_dsmc *sim = NULL;
    kedr_dsmc_stats st = {0};
    int64_t found = 0;
    double late = 0;
    TU_OK(kedr_ctx_create(&ctx, KEDR_BACKEND_CPU, 0));
    TU_OK(kedr_dsmc_create(ctx, &c, &sim));
    for (int64_t k = 0; sim && k < max_steps; k++) {
        TU_OK(kedr_dsmc_step(sim));
        TU_OK(kedr_dsmc_get_stats(sim, &st));
        if (!found && st.sample_start != INT64_MAX) {
            found = st.step;
            *count_then = (double)st.particles;
        }
        if (k >= max_steps - 100)
            late += (double)st.particles / 100;
    }
    *count_end = late;
    kedr_dsmc_destroy(sim);
    kedr_ctx_destroy(ctx);
    return found;
}

/* [sample] start = auto: a box filling with a Mach 4.5 flow must not be found steady while its
 * particle count still rises, nor a box at rest filled with its gas miss being steady. The
 * tolerance 1 (any change allowed) makes the first check find the filling box steady half
 * full: what this test tells apart. */
static void test_steady(void)
{
    double then = 0, end = 0;
    int64_t at = steady_step(0, 1600, 20, 0.005, 1200, &then, &end);
    TU_CHECK(at > 80 && then > 0.97 * end, "filling box steady at step %lld with %g particles, "
             "%g at the end", (long long)at, then, end);
    printf("filling box: steady at step %lld with %.0f particles, %.0f at the end\n",
           (long long)at, then, end);
    at = steady_step(0, 1600, 20, 1.0, 200, &then, &end);
    TU_CHECK(at >= 80 && at <= 100 && then < 0.8 * end,
             "tolerance 1: steady at %lld with %g particles (end %g)", (long long)at, then, end);
    at = steady_step(1, 0, 20, 0.005, 200, &then, &end);
    printf("box at rest: steady at step %lld\n", (long long)at);
    TU_CHECK(at >= 80 && at <= 120, "box at rest: steady at step %lld", (long long)at);
}

int main(void)
{
    find_root();
    test_3d();
    test_shipped();
    test_errors();
    test_time_step_and_weight();
    test_bodies();
    test_downstream();
    test_axisymmetric();
    test_long_names();
    test_estimate();
    test_steady();
    return tu_finish("test_dsmc_case");
}
