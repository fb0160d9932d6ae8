/* kedr dsmc: direct simulation Monte Carlo (Bird 1994) of rarefied gas flows, 2D planar or 3D.
 *
 * Each step: generation (Maxwellian inflow with the exact one-sided flux), move (ballistic, with
 * specular walls, outflow removal and diffuse reflection on bodies), indexing (particles grouped
 * by cell with kedr_counting_sort, which also drops those that left), collisions (Bird's NTC
 * scheme or the majorant frequency scheme, VHS/VSS molecules, Larsen-Borgnakke rotational
 * exchange, cell by cell) and sampling of time-averaged cell fields.
 * Particles live in the context's memory as structure-of-arrays. Random numbers come from
 * Philox keyed by (seed, particle / cell / face id, step, purpose), so a run is reproducible from
 * its seed on either back end. The planar flow has unit depth (1 m) in z; a 3D case (dims = 3)
 * has a uniform nx x ny x nz grid, a z position per particle and 3D bodies (sphere, box, cone);
 * an axisymmetric case (2D, axisymmetric = 1) takes x as the axis and y as the radius, its cells
 * are rings, its bodies bodies of revolution, and with radial weighting a particle stands for a
 * number of molecules proportional to its cell's radius. */
#ifndef KEDR_DSMC_H
#define KEDR_DSMC_H

#include "kedr/comm.h"
#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KEDR_DSMC_MAX_SPECIES 8
#define KEDR_DSMC_MAX_SEGMENTS 32
#define KEDR_DSMC_MAX_BODIES 4
#define KEDR_DSMC_MAX_SUBCELLS 16 /* along each axis of a cell */
#define KEDR_DSMC_MAX_REACTIONS 24

typedef struct {
    char name[32];
    double mass;      /* kg */
    double d_ref;     /* VHS diameter at t_ref, m */
    double omega;     /* viscosity-temperature exponent; 0.5 = hard sphere */
    double t_ref;     /* K */
    double alpha;     /* VSS scattering parameter; 1 = isotropic */
    double d_ref_vss; /* VSS diameter at t_ref, m */
    int rot_dof;      /* rotational degrees of freedom: 0, 2 (linear) or 3 */
    double z_rot;     /* Larsen-Borgnakke: each molecule of a collision relaxes with 1 / z_rot */
    /* Vibration (a simple harmonic oscillator with quantised levels; docs/dsmc.md): theta_v the
     * characteristic vibrational temperature, K (0: the species does not vibrate). Each molecule
     * of a collision relaxes with 1 / Z_vib: z_vib when > 0, else Millikan-White in Bird's form
     * (Bird 1994 eq. 6.53) Z_vib = (zv_c1 / T^omega) exp(zv_c2 T^(-1/3)), T the translational
     * temperature of the collision's cell at the start of its collisions in the step. */
    double theta_v, z_vib, zv_c1, zv_c2;
} kedr_dsmc_species;

/* Boundary condition of a side of the domain. Inflow sides also remove particles that leave.
 * Periodic sides come in pairs (x_min with x_max, y_min with y_max, z_min with z_max). AXIS is
 * the y_min side of an axisymmetric case with y_min = 0 (and only that side): molecules pass
 * near the axis and come back out, nothing crosses it. */
typedef enum {
    KEDR_DSMC_OUTFLOW = 0,
    KEDR_DSMC_INFLOW,
    KEDR_DSMC_SPECULAR,
    KEDR_DSMC_PERIODIC,
    KEDR_DSMC_AXIS
} kedr_dsmc_boundary;
/* Sides, in the order of kedr_dsmc_case.side. */
enum { KEDR_DSMC_XMIN = 0, KEDR_DSMC_XMAX, KEDR_DSMC_YMIN, KEDR_DSMC_YMAX, KEDR_DSMC_ZMIN,
       KEDR_DSMC_ZMAX };
typedef enum { KEDR_DSMC_VHS = 0, KEDR_DSMC_VSS } kedr_dsmc_model;
/* How the grid's cells are split between ranks ([run] split, docs/dsmc.md "Several ranks"):
 * recursive coordinate bisection into boxes (cut along x, y and z; the default), or columns
 * along x only (slabs). */
typedef enum { KEDR_DSMC_SPLIT_RCB = 0, KEDR_DSMC_SPLIT_X } kedr_dsmc_split;
/* How the VTK XML files (.vti, .vtp) hold their data: as text, or as appended binary blocks,
 * compressed with zlib where kedr has it (BINARY, kedr_dsmc_vtk_compressed) or not (RAW). */
typedef enum {
    KEDR_DSMC_VTK_ASCII = 0,
    KEDR_DSMC_VTK_BINARY,
    KEDR_DSMC_VTK_RAW
} kedr_dsmc_vtk_format;
/* Collision scheme: Bird's no-time-counter, or the majorant frequency scheme of Ivanov &
 * Rogasinsky (1988). */
typedef enum { KEDR_DSMC_NTC = 0, KEDR_DSMC_MFS } kedr_dsmc_scheme;
/* Collision partner of a candidate's first molecule: any other molecule of the cell at random,
 * its nearest neighbour in the cell (a "virtual sub-cell", which lowers the mean collision
 * separation without sub-cell indexing), or any other molecule of its sub-cell (the cell cut
 * into `subcells` parts along each axis; the whole cell when the sub-cell holds no other). */
typedef enum {
    KEDR_DSMC_PARTNER_RANDOM = 0,
    KEDR_DSMC_PARTNER_NEAREST,
    KEDR_DSMC_PARTNER_SUBCELL
} kedr_dsmc_partner;

/* Gas-surface interaction of body walls: diffuse (full accommodation at the wall temperature),
 * specular, or Maxwell's model (a fraction `accommodation` diffuse, the rest specular). */
typedef enum { KEDR_DSMC_WALL_DIFFUSE = 0, KEDR_DSMC_WALL_SPECULAR, KEDR_DSMC_WALL_MAXWELL } kedr_dsmc_wall;

/* A body. 2D: a plate is one two-sided segment; polygon, box and wedge are closed polygons of
 * segments [first, first + count) of kedr_dsmc_case.segment; a circle (a cylinder in the planar
 * flow) is exact geometry, not a polygon. 3D (exact geometry, at rest): a sphere (center,
 * radius), an axis-aligned cuboid (center, size) and a cone with its axis along +x (apex,
 * half_angle, length; closed by its base disc of radius length tan(half_angle)); and (3D) a
 * closed triangulated surface read from an STL file (file, then scale, rotate and translate).
 * 2D and axisymmetric: a closed outline of any number of segments read from a file (type
 * outline: file, scale, rotate[2] degrees about z, translate[0] and [1]; docs/dsmc.md).
 * Bodies must not overlap, and closed bodies must lie strictly inside the domain. */
typedef enum {
    KEDR_DSMC_BODY_PLATE = 0,
    KEDR_DSMC_BODY_POLYGON,
    KEDR_DSMC_BODY_CIRCLE,
    KEDR_DSMC_BODY_BOX,
    KEDR_DSMC_BODY_WEDGE,
    KEDR_DSMC_BODY_SPHERE,
    KEDR_DSMC_BODY_CUBOID,
    KEDR_DSMC_BODY_CONE,
    KEDR_DSMC_BODY_STL,
    KEDR_DSMC_BODY_OUTLINE
} kedr_dsmc_body_type;

typedef struct {
    kedr_dsmc_body_type type;
    int first, count;   /* its segments (2D polygons and plates) */
    double center[3];   /* circle, sphere, cuboid; the apex of a cone */
    double radius;      /* circle, sphere */
    double velocity[2]; /* m/s: the body moves rigidly (walls tangent to it: Couette flow; 2D) */
    double size[3];     /* cuboid: edge lengths along x, y, z */
    double half_angle;  /* cone: degrees, in (0, 90) */
    double length;      /* cone: apex to base along +x */
    double temperature; /* K: its wall temperature; 0: the case's wall_temperature */
    /* 1: its walls follow wall_model and accommodation below; 0: the case's [wall] ones */
    int own_wall;
    kedr_dsmc_wall wall_model;
    double accommodation;
    /* stl: the STL file (ASCII or binary; the case reader makes it relative to the case file's
     * directory), and its placement: each vertex x becomes R (scale x) + translate, R the
     * rotation by rotate[0] degrees about x, then rotate[1] about y, then rotate[2] about z.
     * scale > 0 (the case reader's default is 1). */
    /* outline (2D): the same keys, the outline file's points x becoming R (scale x) + translate
     * with R the rotation by rotate[2] degrees about z (rotate[0], [1] and translate[2] are 0) */
    char file[512];
    double scale;
    double rotate[3];
    double translate[3];
} kedr_dsmc_body;

/* [downstream]: a second gas state for some inflow sides, for a stationary normal shock held
 * between the freestream entering at one side and this state entering at the other. With
 * KEDR_DSMC_RANKINE_HUGONIOT the loader computes the state from the freestream
 * (kedr_dsmc_rankine_hugoniot); a case built in code fills in the values itself. */
typedef enum {
    KEDR_DSMC_DOWNSTREAM_NONE = 0,
    KEDR_DSMC_DOWNSTREAM_EXPLICIT,
    KEDR_DSMC_RANKINE_HUGONIOT
} kedr_dsmc_downstream_mode;

typedef struct {
    kedr_dsmc_downstream_mode mode;
    unsigned sides;          /* bit s (KEDR_DSMC_XMIN...): inflow side s takes this state */
    double number_density;   /* m^-3 */
    double temperature;      /* K */
    double velocity[3];      /* m/s */
    /* The initial fill (with fill set) puts this state in the cells whose centre lies between
     * shock_position and the one downstream side, along that side's axis (m). */
    int has_shock_position;
    double shock_position;
} kedr_dsmc_downstream;

/* Columns of the stats file ([output] stats_columns, docs/dsmc.md): counts of the last step
 * (collisions, candidates, generated), totals, the last step's mcs/mfp, seconds per stage
 * over the run so far (t_*) and the wall time since the run (or restart) began. */
typedef enum {
    KEDR_DSMC_STAT_STEP = 0,
    KEDR_DSMC_STAT_TIME,
    KEDR_DSMC_STAT_PARTICLES,
    KEDR_DSMC_STAT_COLLISIONS,
    KEDR_DSMC_STAT_CANDIDATES,
    KEDR_DSMC_STAT_GENERATED,
    KEDR_DSMC_STAT_TOTAL_COLLISIONS,
    KEDR_DSMC_STAT_TOTAL_GENERATED,
    KEDR_DSMC_STAT_MCS_MFP,
    KEDR_DSMC_STAT_SAMPLES,
    KEDR_DSMC_STAT_T_GENERATION,
    KEDR_DSMC_STAT_T_MOVE,
    KEDR_DSMC_STAT_T_INDEXING,
    KEDR_DSMC_STAT_T_COLLISIONS,
    KEDR_DSMC_STAT_T_SAMPLING,
    KEDR_DSMC_STAT_WALL,
    KEDR_DSMC_STAT_T_VIB, /* "T_vib": the vibrational temperature of the molecules now */
    KEDR_DSMC_STAT_REACTIONS, /* "reactions": the reactions of the last step */
    KEDR_DSMC_NSTATS
} kedr_dsmc_stat;
/* A column's name in stats_columns and in the file's header ("step", "t_move", ...). */
const char *kedr_dsmc_stat_name(kedr_dsmc_stat s);

/* A gas-phase reaction of the total collision energy (TCE) model (docs/dsmc.md, "Chemistry"):
 * reactants[0] + reactants[1] -> products, species given as indices into the case's species.
 * Exchange (nproducts 2): products[0] takes the place of reactants[0], products[1] of
 * reactants[1]. Dissociation (nproducts 3): reactants[0] breaks into products[0] and
 * products[1]; the third body reactants[1] comes out unchanged as products[2]. The rate
 * coefficient k(T) = a T^eta exp(-ea / k T) counts reactions per unit volume and time as
 * k n0 n1 for unlike reactants and k n0^2 for like ones. */
typedef struct {
    char name[48];       /* the reaction file's section */
    int nproducts;       /* 2: exchange, 3: dissociation */
    int reactants[2], products[3];
    double a;            /* m^3/s (K^-eta) */
    double eta;
    double ea;           /* activation energy, J */
} kedr_dsmc_reaction;

/* kedr_dsmc_case.write_csv / write_vti: the bodies' surface files only, not the cells'. */
#define KEDR_DSMC_WRITE_SURFACE 2

/* A case: what a case file says (see docs/dsmc.md for every key). */
typedef struct {
    char name[128];                  /* the case file's base name, for output files (a longer
                                      * name is an error, never cut short) */
    int dims;                        /* [domain] dimensions: 3, or 2 (0 counts as 2) */
    /* [domain] axisymmetric (2D only): x is the axis of symmetry, y >= 0 the radius; cells are
     * rings of volume pi (r_hi^2 - r_lo^2) dx, inflow faces rings and cylinders, a circle body a
     * sphere (its centre on the axis), a polygon a body of revolution. */
    int axisymmetric;
    /* [run] radial_weighting (axisymmetric only): a particle in a cell whose centre is at radius
     * r stands for weight r / r_out molecules, r_out the centre radius of the outermost row of
     * cells; particles are cloned or removed at random as they move between rows. */
    int radial_weighting;
    double lo[3], hi[3];             /* [domain] m (z only in 3D) */
    int nx, ny, nz;                  /* [grid] (nz only in 3D) */
    kedr_dsmc_boundary side[6];      /* [domain] x_min x_max y_min y_max z_min z_max */
    int nspecies;                    /* [species] */
    kedr_dsmc_species species[KEDR_DSMC_MAX_SPECIES];
    double fraction[KEDR_DSMC_MAX_SPECIES]; /* mole fractions, summing to 1 */
    kedr_dsmc_model model;
    kedr_dsmc_scheme scheme;         /* [collisions] */
    kedr_dsmc_partner partner;       /* [collisions] */
    int subcells;                    /* sub-cells along each axis of a cell (partner = subcell;
                                      * 0: 2) */
    double number_density;           /* [freestream] m^-3 */
    double temperature;              /* K */
    double velocity[3];              /* m/s */
    /* [freestream] T_vib, K: the vibrational temperature of the freestream (inflow and fill);
     * 0: the freestream temperature. The downstream state's molecules vibrate at its own T. */
    double temperature_vib;
    int fill;                        /* start with the domain filled with freestream gas */
    int nsegments;                   /* [body]: straight wall segments x0 y0 x1 y1 */
    double segment[KEDR_DSMC_MAX_SEGMENTS][4];
    /* [body], [body2] ... [body4]. A case built in code with nbodies = 0 and nsegments > 0 has
     * its segments taken as one open (two-sided) body, as plates are. */
    int nbodies;
    kedr_dsmc_body body[KEDR_DSMC_MAX_BODIES];
    double wall_temperature;         /* [wall] K, of the bodies without their own */
    kedr_dsmc_wall wall_model;       /* [wall] model */
    double accommodation;            /* [wall] Maxwell model: diffuse fraction in [0, 1] */
    double reference_length;         /* [surface] m; 0: each body's frontal height (2D) */
    double reference_area;           /* [surface] m^2; 0: each body's frontal area (3D, axisymmetric) */
    double element_size;             /* [surface] m; 0: the smaller cell side */
    double dt;                       /* [run] s */
    int64_t steps;
    uint64_t seed;
    double weight;                   /* real molecules per simulated particle (radial weighting:
                                      * in the outermost row of cells) */
    int64_t sample_start;            /* [sample] first sampled step */
    int64_t sample_every;
    /* [sample] start = auto: sampling starts once the flow is steady (docs/dsmc.md, "Steady
     * state"): over the last 4 windows of steady_window steps, the window means of the particle
     * count and of the total energy change from window to window, and along a least-squares
     * line, by no more than 3 standard errors plus steady_tolerance (relative) of the mean. The
     * loader's steady_window is kedr_dsmc_steady_window unless [sample] steady_window says. */
    int sample_auto;
    int64_t steady_window;
    double steady_tolerance;
    int64_t stats_every;             /* [output] statistics line every N steps (0: none) */
    /* [output] stats_file: a row of the stats_columns every stats_every steps, CSV (JSON lines
     * when the path ends in .jsonl); a relative path lies in out_dir. Empty: none. */
    char stats_file[512];
    int nstats_columns;
    kedr_dsmc_stat stats_columns[KEDR_DSMC_NSTATS];
    char out_dir[512];               /* [output] dir (longer is an error, never cut short) */
    /* [output] csv, vti: 0 none, 1 the cells' and the bodies' files, KEDR_DSMC_WRITE_SURFACE
     * the bodies' only (NAME-surface.csv, NAME-surface.vtp) */
    int write_csv, write_vti;
    /* [output] vtk: text unless the case file says binary or raw (a zeroed case: text) */
    kedr_dsmc_vtk_format vtk_format;
    /* Output extras, checkpoints and limits (docs/dsmc.md). */
    int write_png;                   /* [output] png: temperature, density and Mach maps */
    int64_t checkpoint_every;        /* [output] checkpoint every N steps (0: only at the end) */
    /* [output] window: every N steps from the start of sampling, the fields of those N steps
     * alone to DIR/NAME-wSTEP.vti, listed in the series DIR/NAME.pvd (0: none) */
    int64_t window;
    int checkpoint;                  /* [output] checkpoint: write one at the end */
    size_t max_particles;            /* [run] max_particles: refuse to grow past (0: no limit) */
    /* Over several ranks: every balance_every steps (0: never; case files default to 100) the
     * grid is split again by the particles its cells hold, when the busiest rank's share
     * exceeds the mean by more than balance_tolerance (case files: 0.05). */
    int64_t balance_every;           /* [run] balance_every */
    double balance_tolerance;        /* [run] balance_tolerance */
    kedr_dsmc_split split;           /* [run] split: rcb (a zeroed case) or x */
    int dt_auto;                     /* [run] dt = auto: dt was chosen by kedr_dsmc_auto_dt */
    kedr_dsmc_downstream downstream; /* [downstream] (mode NONE: every inflow is freestream) */
    /* [species] reactions: the gas-phase reactions (0: the gas does not react) and each
     * species' energy of formation at 0 K, J (its heat of formation per molecule; only
     * differences between reactants and products matter). */
    int nreactions;
    kedr_dsmc_reaction reaction[KEDR_DSMC_MAX_REACTIONS];
    double formation[KEDR_DSMC_MAX_SPECIES];
} kedr_dsmc_case;

/* Reads a case file (and the species file it names, relative to the case file). Every error is
 * KEDR_ERR_PARSE (or KEDR_ERR_IO) with FILE:LINE, the key and what was expected. A name or path
 * that does not fit its field (the case name, [output] dir, a species name) is such an error. */
kedr_status kedr_dsmc_case_load(const char *path, kedr_dsmc_case *c);
/* Checks a case built in code (the loader calls it too); KEDR_ERR_INVALID names the field. */
kedr_status kedr_dsmc_case_check(const kedr_dsmc_case *c);

/* The default steady_window of [sample] start = auto: the steps a molecule at the freestream
 * speed plus the most probable thermal speed (of the lightest species) takes to cross the
 * domain's longest side, at least 50 (and at most 10^6): the test's 4 windows then span a few
 * flow-through times. c needs its domain, gas, freestream and dt. */
int64_t kedr_dsmc_steady_window(const kedr_dsmc_case *c);

/* The most collision candidates a cell tries in one step (its random stream's counter); a cell
 * that would need more has its collisions cut short. */
#define KEDR_DSMC_MAX_CANDIDATES 16777215u

/* The work a case asks for, estimated from its keys before anything is allocated, for a program
 * to refuse what would not finish (kedr dsmc does, unless --force). The domain is taken as full
 * of its densest gas state (the freestream or [downstream]), bodies not cut out: a case that
 * starts empty fills up to about this. */
typedef struct {
    double cells;
    double particles;      /* simulated particles */
    double inflow;         /* particles entering per step */
    /* NTC collision candidates per step, summed over cells: 1/2 N^2 W (sigma g)max dt / V a cell
     * (N its particles, W their weight, V its volume), with the (sigma g)max cells start from;
     * candidates_run the same with each cell's at most KEDR_DSMC_MAX_CANDIDATES, what a step
     * runs; cells_capped the cells that reach that bound. (MFS takes as many on average.) */
    double candidates, candidates_run, cells_capped;
    double collisions;     /* expected collisions per step (the VHS mean collision rate) */
    double steps;          /* [run] steps */
    double bytes_cpu, bytes_cuda; /* memory of those particles and of the cells, per back end */
} kedr_dsmc_work;
/* Fills *w for case c, after kedr_dsmc_case_check (whose errors it returns). */
kedr_status kedr_dsmc_estimate(const kedr_dsmc_case *c, kedr_dsmc_work *w);
/* Reads one species or mixture from a species file into c (species, fractions, nspecies). */
kedr_status kedr_dsmc_species_load(const char *path, const char *gas, kedr_dsmc_case *c);
/* Reads a reaction file (docs/dsmc.md, "Chemistry") for the species already in c: its
 * [formation] energies and one section per reaction into c->reaction, c->nreactions. Every
 * error is KEDR_ERR_PARSE (or KEDR_ERR_IO) naming the file, line, section and key: an unknown
 * species, atoms that do not balance, a value out of range. */
kedr_status kedr_dsmc_reactions_load(const char *path, kedr_dsmc_case *c);

typedef struct kedr_dsmc kedr_dsmc;

/* Stages of a step, also the rows of the timing table. The exchange (over several ranks: the
 * particles that entered another rank's box of cells sent there) runs with the move, whenever the
 * move does; its bit in a mask changes nothing, and on one rank its row stays 0. */
typedef enum {
    KEDR_DSMC_GENERATE = 0,
    KEDR_DSMC_MOVE,
    KEDR_DSMC_EXCHANGE,
    KEDR_DSMC_INDEX,
    KEDR_DSMC_COLLIDE,
    KEDR_DSMC_SAMPLE,
    KEDR_DSMC_NSTAGES
} kedr_dsmc_stage;
#define KEDR_DSMC_STAGE_BIT(s) (1u << (s))
#define KEDR_DSMC_ALL_STAGES ((1u << KEDR_DSMC_NSTAGES) - 1)
const char *kedr_dsmc_stage_name(kedr_dsmc_stage s);

/* A simulator for a case on a context; with c->fill the domain starts filled with freestream
 * gas, else empty. The case is copied. */
kedr_status kedr_dsmc_create(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_dsmc **sim);
/* kedr_dsmc_create over the ranks of comm (include/kedr/comm.h), one simulator a rank: the
 * grid's cells are split into a box a rank (c->split: recursive coordinate bisection, or
 * columns along x), each rank fills and feeds only its own, and after each move the particles
 * that entered another rank's box are sent there (the exchange stage). Statistics, fields and surfaces are then sums over the ranks, and
 * kedr_dsmc_step, kedr_dsmc_get_stats, kedr_dsmc_get_fields and kedr_dsmc_get_surface are
 * collective: every rank calls them, in the same order. comm NULL or one rank: kedr_dsmc_create.
 * Fails, naming the rank count and the grid, when some rank would have no cell (more ranks
 * than cells, a grid too small for the bisection, or more ranks than columns with split x);
 * warns (rank 0) when a box is thinner than a fast molecule moves in a step. */
kedr_status kedr_dsmc_create_on(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_comm *comm,
                                kedr_dsmc **sim);
void kedr_dsmc_destroy(kedr_dsmc *sim);
/* One time step: every stage. */
kedr_status kedr_dsmc_step(kedr_dsmc *sim);
/* One step running only the stages in mask (KEDR_DSMC_STAGE_BIT): for tests and benchmarks,
 * e.g. INDEX|COLLIDE in a box to test collisions alone. The step counter advances. */
kedr_status kedr_dsmc_step_stages(kedr_dsmc *sim, unsigned mask);

typedef struct {
    int64_t step;            /* steps done */
    double time;             /* simulated time, s */
    size_t particles;        /* particles in the domain */
    uint64_t collisions;     /* collisions in the last step */
    uint64_t candidates;     /* candidate pairs in the last step */
    uint64_t generated;      /* particles created by inflow in the last step */
    uint64_t total_collisions, total_generated;
    int64_t samples;         /* samples accumulated in the cell fields */
    int64_t sample_start;    /* the first sampled step (start = auto: INT64_MAX until steady) */
    /* Mean separation of the collided pairs over the local mean free path: in the last step,
     * and over all steps (0 before any collision). */
    double mcs_mfp, total_mcs_mfp;
    double stage_seconds[KEDR_DSMC_NSTAGES]; /* wall time per stage, all steps */
    /* A vibrating gas: the vibrational temperature of the molecules now (docs/dsmc.md: the
     * temperature at which a harmonic oscillator of their mean quantum holds their mean
     * vibrational energy) and that energy over the vibrating molecules, J; 0 otherwise. */
    double temperature_vib, vib_energy;
    /* A reacting gas: the reactions of the last step, in all and per reaction of the case
     * (reaction[r]), and the dissociations not made in the last step for want of room for
     * their new atoms (docs/dsmc.md; the next step makes more room); 0 otherwise. */
    uint64_t reactions, reactions_lost;
    uint64_t reaction[KEDR_DSMC_MAX_REACTIONS];
} kedr_dsmc_stats;

kedr_status kedr_dsmc_get_stats(const kedr_dsmc *sim, kedr_dsmc_stats *stats);

/* Replaces the particles with n given in host memory: positions [m] (in the domain), velocities
 * [m/s], rotational energies [J] (>= 0, stored in single precision; NULL: all zero; molecules
 * of species without rotational degrees of freedom must have 0) and species (NULL: all 0).
 * A 3D case needs the z positions: kedr_dsmc_set_particles3. */
kedr_status kedr_dsmc_set_particles(kedr_dsmc *sim, size_t n, const double *x, const double *y,
                                    const double *vx, const double *vy, const double *vz,
                                    const float *erot, const uint8_t *species);
/* The same with z positions (required in 3D; must be NULL in 2D). */
kedr_status kedr_dsmc_set_particles3(kedr_dsmc *sim, size_t n, const double *x, const double *y,
                                     const double *z, const double *vx, const double *vy,
                                     const double *vz, const float *erot, const uint8_t *species);
/* Copies the particles to host arrays of capacity cap (any may be NULL); *n = the count. When
 * the count exceeds cap, nothing is copied and KEDR_ERR_INVALID says how many there are. */
kedr_status kedr_dsmc_get_particles(kedr_dsmc *sim, size_t cap, size_t *n, double *x, double *y,
                                    double *vx, double *vy, double *vz, float *erot,
                                    uint8_t *species);
/* The same with z positions (z must be NULL in 2D, where particles have none). */
kedr_status kedr_dsmc_get_particles3(kedr_dsmc *sim, size_t cap, size_t *n, double *x, double *y,
                                     double *z, double *vx, double *vy, double *vz, float *erot,
                                     uint8_t *species);

/* The vibrational levels of the particles (a gas with a vibrating species), in the order of
 * kedr_dsmc_get_particles, into level[cap]; *n = the count (KEDR_ERR_INVALID when it exceeds
 * cap). kedr_dsmc_set_vib_levels replaces them (n must be the particle count; a level above 0
 * for a species that does not vibrate is refused). */
kedr_status kedr_dsmc_get_vib_levels(kedr_dsmc *sim, size_t cap, size_t *n, uint8_t *level);
kedr_status kedr_dsmc_set_vib_levels(kedr_dsmc *sim, size_t n, const uint8_t *level);

/* Time-averaged cell fields (host arrays of nx * ny * nz, x fastest, then y, then z), valid
 * after samples > 0. nz is 1 in 2D. */
typedef struct {
    int nx, ny, nz;
    int64_t samples;
    double *number_density; /* m^-3 */
    double *density;        /* kg/m^3 */
    double *ux, *uy, *uz;   /* mass-averaged velocity, m/s */
    double *temperature;    /* translational, K */
    double *temperature_rot; /* rotational, 2 <e_rot> / (k <zeta>), K (0 for a monatomic gas) */
    double *temperature_overall; /* (3 T + zeta T_rot + zeta_v T_vib) / (3 + zeta + zeta_v),
                                  * zeta = <rot_dof>, zeta_v = 2 <e_vib> / (k T_vib), K */
    /* the vibrational temperature (docs/dsmc.md: the harmonic oscillator of the vibrating
     * molecules' mean quantum with their mean energy), K; NULL for a gas that does not vibrate */
    double *temperature_vib;
    double *pressure;       /* n k T (translational), Pa */
    double *mach;           /* |u| / sqrt(gamma k T_overall / m), gamma = (5 + zeta) / (3 + zeta) */
    double *particles;      /* mean particles per cell */
    /* the VHS mean free path (Bird 1994 eq. 4.65, mole-fraction average with the case's
     * fractions) at the cell's density and translational temperature, over the larger cell
     * side: above 1, better 3, for a well resolved flow */
    double *mfp_ratio;
    /* A mixture (the case's nspecies > 1): nspecies, each species' number density (m^-3; the
     * species' densities add up to number_density) and mole fraction (NaN in a cell that no
     * molecule entered). A simple gas: nspecies 0 and the arrays NULL. */
    int nspecies;
    double *species_density[KEDR_DSMC_MAX_SPECIES];
    double *mole_fraction[KEDR_DSMC_MAX_SPECIES];
} kedr_dsmc_fields;

kedr_status kedr_dsmc_get_fields(kedr_dsmc *sim, kedr_dsmc_fields *f);
/* Unsteady sampling: the fields of the samples taken since the last kedr_dsmc_mark_window (or
 * since sampling began), and the mark itself (the window's sums start there). f->samples counts
 * the window's samples. Both collective over ranks. The mark is kept in checkpoints. */
kedr_status kedr_dsmc_get_window_fields(kedr_dsmc *sim, kedr_dsmc_fields *f);
kedr_status kedr_dsmc_mark_window(kedr_dsmc *sim);
void kedr_dsmc_fields_free(kedr_dsmc_fields *f);
/* Clears the accumulated samples. */
kedr_status kedr_dsmc_reset_samples(kedr_dsmc *sim);

/* Output of cell fields: CSV with a header line (3D: with k and z columns), and VTK XML
 * ImageData (.vti, 3 dimensions in 3D; c->vtk_format: text, or appended binary data) with the
 * fields as cell data, readable by ParaView; a mixture adds n_NAME and x_NAME, each species'
 * number density and mole fraction (NAME from c->species). Cells without data (inside a body, or
 * no molecule entered while sampling: particles 0) are missing values: empty CSV fields, NaN in
 * VTK; particles_per_cell keeps its 0. Files are written to PATH.tmp and renamed over PATH, which
 * must be a regular file or new. */
kedr_status kedr_dsmc_write_csv(const kedr_dsmc_case *c, const kedr_dsmc_fields *f,
                                const char *path);
kedr_status kedr_dsmc_write_vti(const kedr_dsmc_case *c, const kedr_dsmc_fields *f,
                                const char *path);
/* 1 when KEDR_DSMC_VTK_BINARY files are zlib-compressed (kedr was built with zlib), else 0. */
int kedr_dsmc_vtk_compressed(void);

/* The stats file's header (CSV: the column names; JSON lines: nothing) and one row, from the
 * statistics after a step and the wall seconds since the run began; jsonl selects JSON lines
 * ({"step": 100, "time": 0.0001, ...}). out is a FILE *. */
void kedr_dsmc_stats_header(void *out, const kedr_dsmc_case *c, int jsonl);
void kedr_dsmc_stats_row(void *out, const kedr_dsmc_case *c, const kedr_dsmc_stats *st,
                         double wall_seconds, int jsonl);

/* Each cell's gas volume (area x unit depth in 2D, m^3) with the bodies cut out, exact for
 * polygons and circles and 3D cuboids; spheres and cones: exact chords along x on a 64 x 64
 * sub-grid of the cell's y-z face (docs/dsmc.md states the accuracy). Host array of
 * ncells = nx ny (nz), x fastest. Cells entirely inside a body have 0. */
kedr_status kedr_dsmc_gas_volume(const kedr_dsmc *sim, double *volume);

/* Surface sampling. Each body's surface is split into elements of about [surface] element_size
 * (a plate has elements on both sides). During every step from [sample] start on, the move
 * records per element the momentum and energy that molecules bring and take away; from them:
 * pressure p, shear tau (force per area on the wall along t = (-ny, nx)), heat flux q into the
 * wall, Cp = (p - p_inf) / q_inf, Cf = tau / q_inf, Ch = q / (1/2 rho_inf U^3), with
 * q_inf = 1/2 rho_inf U^2 of the freestream. Forces are per unit span (1 m depth); drag is along
 * the freestream velocity (x when it is zero), lift along the drag direction turned by +90
 * degrees; Cd = D / (q_inf L), L the reference length. Coefficients are NaN when q_inf = 0. */
/* 3D: forces are total, not per span; each element has an area and four corners (an stl body:
 * one element per triangle, three corners); the shear is the tangential stress along the
 * freestream direction projected on the element's plane; lift is along z x (drag direction);
 * Cd = D / (q_inf A), A the reference area (default: the body's frontal area, pi r^2 for a
 * sphere, pi R^2 for a cone, the projected area of a cuboid, half the sum of |n.d| area over an
 * stl body's triangles). */
/* Axisymmetric cases: the elements are bands of the bodies of revolution (x, y of the element
 * in the meridional plane, length its area in m^2); forces are totals over the revolution, drag
 * along x, lift 0 (the radial forces cancel), Cd = D / (q_inf A) with A = [surface]
 * reference_area or the body's frontal area pi r_max^2. */
typedef struct {
    size_t nelem;
    int nbodies;
    int dims;                      /* 2 or 3 */
    int axisymmetric;
    int64_t steps;                 /* steps sampled */
    double *x, *y, *z;             /* element centres, m (z: 0 in 2D) */
    double *nx, *ny, *nz;          /* unit normal pointing into the gas (nz: 0 in 2D) */
    double *length;                /* element length, m (area per m of span); 3D: area, m^2 */
    double *corners;               /* 3D: 4 corners x y z per element (12 doubles; a triangle
                                    * of an stl body has NaN for its 4th); 2D: NULL */
    int *body;                     /* the element's body */
    double *hits;                  /* simulated molecules that hit, per sampled step */
    double *pressure, *shear, *heat_flux; /* Pa, Pa, W/m^2 */
    double *cp, *cf, *ch;
    double drag[KEDR_DSMC_MAX_BODIES], lift[KEDR_DSMC_MAX_BODIES]; /* N/m */
    double cd[KEDR_DSMC_MAX_BODIES], cl[KEDR_DSMC_MAX_BODIES];
    double reference_length[KEDR_DSMC_MAX_BODIES]; /* 2D: m; 3D, axisymmetric: the reference area, m^2 */
    double q_inf, p_inf;           /* freestream dynamic and static pressure, Pa */
    kedr_dsmc_vtk_format vtk_format; /* how kedr_dsmc_write_surface_vtp writes it: the case's */
} kedr_dsmc_surface;

kedr_status kedr_dsmc_get_surface(kedr_dsmc *sim, kedr_dsmc_surface *s);
void kedr_dsmc_surface_free(kedr_dsmc_surface *s);
/* NAME-surface.csv (one row per element) and VTK XML PolyData (.vtp, as s->vtk_format says): the
 * elements as lines (2D) or quadrilaterals (3D) with their coefficients as cell data. */
kedr_status kedr_dsmc_write_surface_csv(const kedr_dsmc_surface *s, const char *path);
kedr_status kedr_dsmc_write_surface_vtp(const kedr_dsmc_surface *s, const char *path);

/* Kinetic theory used by the tests and the statistics: the one-sided number flux [m^-2 s^-1]
 * of a Maxwellian gas (n, T, molecular mass m) drifting with normal velocity u_n into a surface,
 * n sqrt(kT / 2 pi m) [exp(-s^2) + sqrt(pi) s (1 + erf(s))], s = u_n / sqrt(2kT/m). */
double kedr_dsmc_inflow_flux(double n, double temperature, double mass, double u_normal);

/* The state behind a stationary normal shock facing side `side` (the freestream enters at the
 * opposite side and flows towards this one): the Rankine-Hugoniot relations for a perfect gas
 * of gamma = (5 + zeta) / (3 + zeta), zeta the mole-averaged rotational degrees of freedom,
 * with M the freestream's Mach number along the side's normal:
 * n2/n1 = (gamma+1) M^2 / ((gamma-1) M^2 + 2), p2/p1 = (2 gamma M^2 - (gamma-1)) / (gamma+1),
 * T2/T1 = (p2/p1) / (n2/n1), u2 = u1 n1/n2 along the normal, the tangential velocity unchanged.
 * KEDR_ERR_INVALID when that Mach number is not above 1. */
kedr_status kedr_dsmc_rankine_hugoniot(const kedr_dsmc_case *c, int side, double *number_density,
                                       double *temperature, double velocity[3]);

/* Time-step limits of a case: the freestream mean collision time (VHS, Bird 1994 eq. 4.64 for
 * the collision rate) and the time a particle at the freestream speed plus three most probable
 * thermal speeds takes to cross the smaller cell side; with a [downstream] state, the smaller
 * of the two states' values. kedr_dsmc_auto_dt returns
 * min(0.2 * collision time, 0.5 * transit time). Both are +inf for an empty gas. */
void kedr_dsmc_time_scales(const kedr_dsmc_case *c, double *collision_time, double *transit_time);
double kedr_dsmc_auto_dt(const kedr_dsmc_case *c);

/* PNG maps of the cell fields (include/kedr/plot.h): DIR/NAME-temperature.png,
 * NAME-density.png and NAME-mach.png; cells inside bodies are grey, gas cells no molecule entered
 * while sampling white (no data, out of the colour range); in 3D the maps show the
 * x-y slice of cells k = nz / 2. KEDR_ERR_UNSUPPORTED when kedr has no PNG output. */
kedr_status kedr_dsmc_write_png(const kedr_dsmc_case *c, const kedr_dsmc_fields *f,
                                const char *dir);

/* Checkpoints (format in docs/dsmc.md): the whole state of a run (step, time, counters, random
 * stream position, every particle array, sample sums, per-cell (sigma g)max), written to
 * FILE.tmp, synced and renamed. A run restarted from a checkpoint continues bit for bit like the
 * uninterrupted run on the same back end; either back end reads a file written by the other. */
kedr_status kedr_dsmc_write_checkpoint(kedr_dsmc *sim, const char *path);
/* Replaces sim's state with the checkpoint's. The file must have been written for the same
 * case (same physics, grid and sampling: checked by a hash; steps and output keys may differ).
 * The file is untrusted: its size must match its header and every value its range (docs/dsmc.md).
 * KEDR_ERR_IO / KEDR_ERR_PARSE name the file and say what is wrong (truncated, corrupt, other
 * version, other case, a field out of range: its name, index and value); sim is unchanged then
 * (unless the file changed while it was read: sim is then emptied, and the message says so). */
kedr_status kedr_dsmc_read_checkpoint(kedr_dsmc *sim, const char *path);
/* kedr_dsmc_create without the initial fill, then kedr_dsmc_read_checkpoint. */
kedr_status kedr_dsmc_restart(kedr_ctx *ctx, const kedr_dsmc_case *c, const char *path,
                              kedr_dsmc **sim);
/* kedr_dsmc_restart over the ranks of comm (kedr_dsmc_create_on): each rank reads its own
 * checkpoint, written by the same rank of a run over as many ranks, and takes the file's
 * split; where c->split asks for the other kind, the grid is then split anew of c's kind and
 * the cells and particles handed over. Collective. */
kedr_status kedr_dsmc_restart_on(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_comm *comm,
                                 const char *path, kedr_dsmc **sim);
/* A restart from the checkpoints of a run over nfiles ranks (paths in rank order; one file for
 * a run on one rank), over the ranks of comm (NULL: one). As many ranks as files: each rank
 * reads its own, bit for bit (kedr_dsmc_restart_on). Otherwise the ranks gather them: rank r
 * reads files r, r + N, ..., their particles are sent to the ranks that own their cells now,
 * and the sample and surface sums, counters and (sigma g)max carry over (their totals over the
 * ranks are the run's); the run continues from the same state, though not bit for bit with the
 * run that wrote them (the particles are in another order). Collective. */
kedr_status kedr_dsmc_restart_files(kedr_ctx *ctx, const kedr_dsmc_case *c, kedr_comm *comm,
                                    int nfiles, const char *const *paths, kedr_dsmc **sim);
/* How many particles the simulator's arrays hold now (its capacity) and, from the memory free
 * on its context (and [run] max_particles), about how many would fit in all. */
kedr_status kedr_dsmc_capacity(const kedr_dsmc *sim, size_t *now, size_t *fit);
/* Context memory the simulator holds now, in bytes: the particle slots (their capacity, sort
 * buffers included), the per-cell arrays (the sample sums once sampling has begun), the
 * geometry's, and the context's scratch cache. */
kedr_status kedr_dsmc_memory(const kedr_dsmc *sim, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
