/* The ADI solver over several ranks: the halo planes, and the partitioned X sweep (each rank's
 * part of every x line reduced to two interface rows, the interface systems solved by the rank
 * owning their lines, the parts completed). Every message goes through kedr/comm.h. */
#include "adi/adi_internal.h"
#include "core/internal.h"
#include "kedr/prim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Message tags between ranks. */
enum { TAG_TO_LO, TAG_TO_HI, TAG_IFACE, TAG_X };

/* KEDR_ADI_XPROF=1: the parts of the halo exchanges and of the X sweep's interface systems timed
 * on each rank (the device synchronised where its work ends a part) and printed to stderr when
 * the solver is destroyed; for finding where the time goes, not for production runs. */
enum {
    XP_HALO_PACK, XP_HALO_WAIT, XP_HALO_MSG, XP_HALO_UNPACK, XP_IF_DOWN, XP_IF_WAIT, XP_IF_PACK,
    XP_IF_MSG1, XP_IF_SOLVE, XP_IF_MSG2, XP_IF_UNPACK, XP_IF_UP, XP_N
};
static const char *const xprof_names[XP_N] = {
    "halo: pack", "halo: wait for ranks", "halo: messages", "halo: unpack",
    "iface: download", "iface: wait for ranks", "iface: rows out", "iface: messages",
    "iface: solve", "iface: messages back", "iface: unknowns in place", "iface: upload"};
static double xprof[XP_N], xprof_t;
static long xprof_halos, xprof_ifaces;
static int xprof_on = -1;

static void xprof_start(void)
{
    if (xprof_on < 0) {
        const char *e = getenv("KEDR_ADI_XPROF");
        xprof_on = e && e[0] == '1';
    }
    if (xprof_on)
        xprof_t = kedr_wall_seconds();
}

static void xprof_mark(kedr_adi *s, int part, int sync)
{
    if (!xprof_on)
        return;
    if (sync)
        kedr_ctx_sync(s->ctx);
    double now = kedr_wall_seconds();
    xprof[part] += now - xprof_t;
    xprof_t = now;
}

static kedr_status do_halo(kedr_adi *s, const adi_params *p, void *const *f, int nf, int pack,
                           int lo, int hi)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(s->ctx))
        return adi_cuda_halo(s, p, f, nf, pack, lo, hi);
#endif
    return adi_cpu_halo(s, p, f, nf, pack, lo, hi);
}

/* The halo planes of the first nf fields of st (in layout p) from the neighbouring ranks: each
 * rank sends its first own plane down and its last up, through the comm layer's registered
 * buffer parts.halo (GPU to GPU where it can). */
kedr_status adi_exchange_halos(kedr_adi *s, const adi_params *p, const adi_state *st,
                                  int first, int nf)
{
    if (s->nranks == 1)
        return KEDR_OK;
    KEDR_TRY(kedr_ctx_sync(s->ctx)); /* the time from here is the exchange's */
    double t0 = kedr_wall_seconds();
    xprof_start();
    int lo = s->rank > 0, hi = s->rank < s->nranks - 1;
    size_t bytes = (size_t)nf * s->plane * (size_t)s->real_size, side = 4 * s->plane *
                                                                      (size_t)s->real_size;
    void *const *f = st->f + first;
    kedr_status r = do_halo(s, p, f, nf, 1, lo, hi);
    xprof_mark(s, XP_HALO_PACK, 1);
    /* a failure here is every rank's, not a partner left waiting for its planes */
    KEDR_TRY(kedr_comm_agree(s->comm, r));
    xprof_mark(s, XP_HALO_WAIT, 0);
    /* units of halo: [send lo, send hi, recv lo, recv hi]; a rank's low plane goes to the
     * receive-high unit of the rank below */
    kedr_comm_dev_msg snd[2], rcv[2];
    int n = 0;
    if (lo) {
        snd[n] = (kedr_comm_dev_msg){s->rank - 1, TAG_TO_LO, 0, 3 * side, bytes};
        rcv[n++] = (kedr_comm_dev_msg){s->rank - 1, TAG_TO_HI, 0, 2 * side, bytes};
    }
    if (hi) {
        snd[n] = (kedr_comm_dev_msg){s->rank + 1, TAG_TO_HI, side, 2 * side, bytes};
        rcv[n++] = (kedr_comm_dev_msg){s->rank + 1, TAG_TO_LO, 0, 3 * side, bytes};
    }
    KEDR_TRY(kedr_comm_dev_sendrecv(s->parts.halo_dev, n, snd, n, rcv));
    xprof_mark(s, XP_HALO_MSG, 0);
    KEDR_TRY(do_halo(s, p, f, nf, 0, lo, hi));
    KEDR_TRY(kedr_ctx_sync(s->ctx));
    xprof_mark(s, XP_HALO_UNPACK, 0);
    xprof_halos++;
    s->halo_seconds += kedr_wall_seconds() - t0;
    return KEDR_OK;
}

/* The lines whose interface systems rank q solves: [first, first + count). */
static void line_block(const kedr_adi *s, int q, size_t *first, size_t *count)
{
    size_t a = s->plane * (size_t)q / (size_t)s->nranks;
    size_t b = s->plane * (size_t)(q + 1) / (size_t)s->nranks;
    *first = a;
    *count = b - a;
}

/* Field v's interface systems of this rank's mn lines, rows r = 2 p + j from rank p's message
 * in rcv (units u, rows j, lines: 2 ADI_IF_SENT mn values a rank), by Thomas in double
 * precision (b = 1; the first row's a and the last row's c couple to nothing), the unknowns to
 * xs (to rank p: fields v, rows j, lines: 8 mn values a rank). Lines in blocks, row by row
 * within a block, so that the loads are contiguous; cp and dp hold 2 R mn doubles. */
#define ADI_IFACE_THOMAS(NAME, T)                                                               \
    static void NAME(const char *rcv, char *xs, double *cp, size_t mn, size_t P, int v)        \
    {                                                                                          \
        enum { BLOCK = 256 };                                                                  \
        size_t R = 2 * P, ua = v == 3 ? ADI_IF_AT : ADI_IF_AU;                                 \
        size_t uc = v == 3 ? ADI_IF_CT : ADI_IF_CU, ud = ADI_IF_D0 + (size_t)v;                \
        double *dp = cp + R * mn;                                                              \
        const T *in = (const T *)rcv;                                                          \
        T *out = (T *)xs;                                                                      \
        int64_t lines = (int64_t)mn;                                                           \
        _Pragma("omp parallel for schedule(static) if (lines * (int64_t)R >= 65536)")          \
        for (int64_t e0 = 0; e0 < lines; e0 += BLOCK) {                                        \
            size_t e1 = (size_t)e0 + BLOCK < mn ? (size_t)e0 + BLOCK : mn;                     \
            for (size_t r = 0; r < R; r++) {                                                   \
                const T *m = in + 2 * ADI_IF_SENT * mn * (r / 2);                              \
                const T *A = m + (2 * ua + r % 2) * mn, *C = m + (2 * uc + r % 2) * mn;        \
                const T *D = m + (2 * ud + r % 2) * mn;                                        \
                double *c = cp + r * mn, *d = dp + r * mn;                                     \
                double last = r == R - 1 ? 0 : 1;                                              \
                if (r == 0)                                                                    \
                    for (size_t e = (size_t)e0; e < e1; e++) {                                 \
                        c[e] = last * (double)C[e];                                            \
                        d[e] = (double)D[e];                                                   \
                    }                                                                          \
                else                                                                           \
                    for (size_t e = (size_t)e0; e < e1; e++) {                                 \
                        double a = (double)A[e], piv = 1 / (1 - a * c[e - mn]);                \
                        c[e] = last * (double)C[e] * piv;                                      \
                        d[e] = ((double)D[e] - a * d[e - mn]) * piv;                           \
                    }                                                                          \
            }                                                                                  \
            for (size_t r = R; r-- > 0;) {                                                     \
                double *c = cp + r * mn, *d = dp + r * mn;                                     \
                T *x = out + 8 * mn * (r / 2) + (2 * (size_t)v + r % 2) * mn;                  \
                if (r < R - 1) /* d of row r becomes x_r */                                    \
                    for (size_t e = (size_t)e0; e < e1; e++)                                   \
                        d[e] -= c[e] * d[e + mn];                                              \
                for (size_t e = (size_t)e0; e < e1; e++)                                       \
                    x[e] = (T)d[e];                                                            \
            }                                                                                  \
        }                                                                                      \
    }

ADI_IFACE_THOMAS(iface_thomas_f32, float)
ADI_IFACE_THOMAS(iface_thomas_f64, double)

/* The interface systems: every rank's interface rows of the lines of rank q go to q, which
 * solves the systems of 2 nranks rows of its lines (Thomas, in double precision) and sends each
 * rank the unknowns of its rows back; those of every line end in parts.h_x. */
static kedr_status interface_solve(kedr_adi *s)
{
    adi_parts *pt = &s->parts;
    int P = s->nranks, rs = s->real_size;
    size_t plane = s->plane, me0, mn;
    line_block(s, s->rank, &me0, &mn);
    char *snd = pt->h_send, *rcv = pt->h_recv;
    const char *ifc = pt->h_iface;
    kedr_comm_halo *msg = pt->msg;
    /* Out: to q, units u, rows j, q's lines; in: from p, the same for this rank's lines. */
    for (int q = 0; q < P; q++) {
        size_t q0, qn;
        line_block(s, q, &q0, &qn);
        char *o = snd + 2 * ADI_IF_SENT * q0 * rs;
        for (int u = 0; u < ADI_IF_SENT; u++)
            for (int j = 0; j < 2; j++, o += qn * rs)
                memcpy(o, ifc + ((size_t)(2 * u + j) * plane + q0) * rs, qn * rs);
        msg[q] = (kedr_comm_halo){q, TAG_IFACE, snd + 2 * ADI_IF_SENT * q0 * rs,
                                  2 * ADI_IF_SENT * qn * rs};
        msg[P + q] = (kedr_comm_halo){q, TAG_IFACE, rcv + 2 * ADI_IF_SENT * mn * q * rs,
                                      2 * ADI_IF_SENT * mn * rs};
    }
    xprof_mark(s, XP_IF_PACK, 0);
    kedr_status st = kedr_comm_sendrecv(s->comm, P, msg, P, msg + P);
    xprof_mark(s, XP_IF_MSG1, 0);
    char *xs = snd; /* the unknowns out: to p, fields v, rows j, this rank's lines */
    for (int v = 0; st == KEDR_OK && v < 4; v++) {
        if (rs == 4)
            iface_thomas_f32(rcv, xs, pt->h_sys, mn, (size_t)P, v);
        else
            iface_thomas_f64(rcv, xs, pt->h_sys, mn, (size_t)P, v);
    }
    xprof_mark(s, XP_IF_SOLVE, 0);
    for (int q = 0; q < P; q++) {
        size_t q0, qn;
        line_block(s, q, &q0, &qn);
        msg[q] = (kedr_comm_halo){q, TAG_X, xs + 8 * mn * q * rs, 8 * mn * rs};
        msg[P + q] = (kedr_comm_halo){q, TAG_X, rcv + 8 * q0 * rs, 8 * qn * rs};
    }
    if (st == KEDR_OK)
        st = kedr_comm_sendrecv(s->comm, P, msg, P, msg + P);
    xprof_mark(s, XP_IF_MSG2, 0);
    for (int q = 0; st == KEDR_OK && q < P; q++) {
        size_t q0, qn;
        line_block(s, q, &q0, &qn);
        for (int k = 0; k < 8; k++) /* k = 2 v + j */
            memcpy((char *)pt->h_x + ((size_t)k * plane + q0) * rs,
                   rcv + (8 * q0 + (size_t)k * qn) * rs, qn * rs);
    }
    return st;
}

/* x_interface = gather: this rank's interface rows (slot rank of parts.gather) to every rank
 * and every rank's to this one, in one round of messages; then every line's interface systems
 * solved here (on the GPU for cuda; on the host by the owner's Thomas for all lines at once),
 * keeping the unknowns of this rank's rows in parts.x. */
static kedr_status interface_gather(kedr_adi *s)
{
    adi_parts *pt = &s->parts;
    int P = s->nranks, me = s->rank;
    size_t slot = ADI_IF_SENT * 2 * s->plane * (size_t)s->real_size, mine = (size_t)me * slot;
    char *g = pt->gather;
    KEDR_TRY(kedr_copy(s->ctx, g + mine, pt->iface, slot));
    xprof_mark(s, XP_IF_PACK, 0);
    kedr_comm_dev_msg *msg = pt->dmsg;
    int n = 0;
    for (int q = 0; q < P; q++)
        if (q != me) {
            msg[n] = (kedr_comm_dev_msg){q, TAG_IFACE, mine, mine, slot};
            msg[P + n++] = (kedr_comm_dev_msg){q, TAG_IFACE, 0, (size_t)q * slot, slot};
        }
    KEDR_TRY(kedr_comm_dev_sendrecv(pt->gather_dev, n, msg, n, msg + P));
    xprof_mark(s, XP_IF_MSG1, 0);
    KEDR_TRY(adi_iface_solve(s));
    xprof_mark(s, XP_IF_SOLVE, 1);
    return KEDR_OK;
}

kedr_status adi_iface_solve(kedr_adi *s)
{
#ifdef KEDR_HAVE_CUDA
    if (KEDR_IS_CUDA(s->ctx))
        return adi_cuda_iface_solve(s);
#endif
    /* the owner's Thomas over all lines: the unknowns of every rank's rows, in the layout of
     * parts.x for each rank, then this rank's */
    adi_parts *pt = &s->parts;
    size_t rs = (size_t)s->real_size, plane = s->plane, P = (size_t)s->nranks;
    char *xs = pt->h_send;
    for (int v = 0; v < 4; v++) {
        if (rs == 4)
            iface_thomas_f32(pt->gather, xs, pt->h_sys, plane, P, v);
        else
            iface_thomas_f64(pt->gather, xs, pt->h_sys, plane, P, v);
    }
    return kedr_copy(s->ctx, pt->x, xs + 8 * plane * (size_t)s->rank * rs, 8 * plane * rs);
}

/* The X sweep by the partitioned solver: every line's rows over this rank's planes (a
 * non-fluid node's row: x = 0) reduced to two interface rows a line and field, the interface
 * systems solved across the ranks, the parts completed. Fused (part_line: the rows built and
 * eliminated in one pass down and one up, as the Thomas sweep builds them) or through
 * kedr_tridiag_part_reduce / _complete on stored rows (x_sweep = prim; 5.5 times the memory
 * and more passes over it). */
kedr_status adi_part_sweep(kedr_adi *s, const adi_state *out, const adi_state *old,
                           const adi_state *coef)
{
    adi_parts *pt = &s->parts;
    kedr_dtype t = s->real_size == 4 ? KEDR_F32 : KEDR_F64;
    size_t rs = (size_t)s->real_size, plane = s->plane, own = (size_t)(s->hi - s->lo);
    size_t n = own * plane, unit = 2 * plane * rs;
    int cuda = KEDR_IS_CUDA(s->ctx), fused = s->partitioned == 1;
    kedr_tridiag_part part = {own, plane, KEDR_TRIDIAG_INTERLEAVED, 0};
    char *abc = pt->abc, *ifc = pt->iface;
    kedr_status st = KEDR_OK;
#ifdef KEDR_HAVE_CUDA
    if (cuda)
        st = fused ? adi_cuda_part_lines(s, out, old, coef) : adi_cuda_part_rows(s, out, old, coef);
#endif
    if (!cuda)
        st = fused ? adi_cpu_part_lines(s, out, old, coef) : adi_cpu_part_rows(s, out, old, coef);
    char *dw = pt->dw; /* field v: d at 4 n v, w at 4 n v + 2 n */
    for (int v = 0; st == KEDR_OK && !fused && v < 4; v++) {
        char *a = abc + (v == 3 ? 3 : 0) * n * rs;
        /* u's rows give the velocity's interface a and c; v's and w's are the same */
        int ua = v == 0 ? ADI_IF_AU : v == 3 ? ADI_IF_AT : ADI_IF_AJ;
        int uc = v == 0 ? ADI_IF_CU : v == 3 ? ADI_IF_CT : ADI_IF_CJ;
        kedr_tridiag_iface fi = {ifc + ua * unit, ifc + ADI_IF_B * unit, ifc + uc * unit,
                                 ifc + (ADI_IF_D0 + v) * unit};
        st = kedr_tridiag_part_reduce(s->ctx, t, &part, a, a + n * rs, a + 2 * n * rs,
                                      dw + 4 * n * v * rs, dw + (4 * n * v + 2 * n) * rs, &fi);
    }
    if (st == KEDR_OK)
        st = kedr_ctx_sync(s->ctx); /* the time from here is the interface systems' */
    double t0 = kedr_wall_seconds();
    xprof_start();
    if (pt->gathered) {
        /* a failure here is every rank's, not a partner left waiting for its rows */
        KEDR_TRY(kedr_comm_agree(s->comm, st));
        xprof_mark(s, XP_IF_WAIT, 0);
        KEDR_TRY(interface_gather(s));
        KEDR_TRY(kedr_ctx_sync(s->ctx)); /* the solve's time is the interface systems' */
    } else {
        if (st == KEDR_OK)
            st = kedr_download(s->ctx, pt->h_iface, ifc, ADI_IF_SENT * unit);
        xprof_mark(s, XP_IF_DOWN, 0);
        KEDR_TRY(kedr_comm_agree(s->comm, st));
        xprof_mark(s, XP_IF_WAIT, 0);
        KEDR_TRY(interface_solve(s));
        xprof_mark(s, XP_IF_UNPACK, 0);
        KEDR_TRY(kedr_upload(s->ctx, pt->x, pt->h_x, 4 * unit));
        KEDR_TRY(kedr_ctx_sync(s->ctx));
        xprof_mark(s, XP_IF_UP, 0);
    }
    xprof_ifaces++;
    s->iface_seconds += kedr_wall_seconds() - t0;
    if (fused) {
#ifdef KEDR_HAVE_CUDA
        if (cuda)
            return adi_cuda_part_finish(s, out);
#endif
        return adi_cpu_part_finish(s, out);
    }
    for (int v = 0; v < 4; v++) {
        char *d = dw + 4 * n * v * rs;
        KEDR_TRY(kedr_tridiag_part_complete(s->ctx, t, &part, d + 2 * n * rs,
                                            (char *)pt->x + v * unit, d));
        KEDR_TRY(kedr_copy(s->ctx, (char *)out->f[v] + plane * rs, d, n * rs));
    }
    return KEDR_OK;
}

static kedr_status host_alloc(void **p, size_t bytes)
{
    if (!(*p = malloc(bytes ? bytes : 1)))
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_adi_create: out of host memory (%zu bytes)",
                         bytes);
    return KEDR_OK;
}

/* A host buffer that goes to and from the back end every sweep: page-locked on cuda. */
static kedr_status staged_alloc(kedr_adi *s, void **p, size_t bytes)
{
#ifdef KEDR_HAVE_CUDA
    if (s->parts.pinned)
        return adi_cuda_host_alloc(p, bytes);
#endif
    (void)s;
    return host_alloc(p, bytes);
}

/* Whether every pair of ranks exchanges GPU to GPU through buffer dev (the same answer on
 * every rank). */
static kedr_status all_direct(kedr_adi *s, const kedr_comm_dev *dev, int *yes)
{
    int32_t all = 1;
    for (int q = 0; q < s->nranks; q++)
        all &= kedr_comm_dev_direct(dev, q);
    KEDR_TRY(kedr_comm_allreduce(s->comm, KEDR_I32, KEDR_OP_MIN, &all, 1));
    *yes = all;
    return KEDR_OK;
}

/* The buffers of the halos and of the partitioned X sweep, as s needs them (this rank's). */
kedr_status adi_parts_allocate(kedr_adi *s)
{
    size_t rs = (size_t)s->real_size;
    adi_parts *pt = &s->parts;
    size_t plane = s->plane, P = (size_t)s->nranks;
    pt->pinned = KEDR_IS_CUDA(s->ctx);
    if (s->nranks > 1)
        KEDR_TRY(kedr_alloc(s->ctx, &pt->halo, 16 * plane * rs));
    if (s->partitioned) {
        size_t n = (size_t)(s->hi - s->lo) * plane;
        if (s->partitioned == 1) {
            KEDR_TRY(kedr_alloc(s->ctx, &pt->rs, 4 * n * rs));
        } else {
            KEDR_TRY(kedr_alloc(s->ctx, &pt->abc, 6 * n * rs));
            KEDR_TRY(kedr_alloc(s->ctx, &pt->dw, 16 * n * rs));
        }
        KEDR_TRY(kedr_alloc(s->ctx, &pt->iface, ADI_IF_UNITS * 2 * plane * rs));
        KEDR_TRY(kedr_alloc(s->ctx, &pt->x, 8 * plane * rs));
        KEDR_TRY(staged_alloc(s, &pt->h_iface, ADI_IF_SENT * 2 * plane * rs));
        KEDR_TRY(host_alloc(&pt->h_send, 2 * ADI_IF_SENT * (plane + P) * rs));
        KEDR_TRY(host_alloc(&pt->h_recv, 2 * ADI_IF_SENT * (plane + P) * rs));
        KEDR_TRY(host_alloc((void **)&pt->h_sys, 4 * (plane + P) * sizeof(double)));
        KEDR_TRY(host_alloc((void **)&pt->msg, 2 * P * sizeof *pt->msg));
        KEDR_TRY(host_alloc((void **)&pt->dmsg, 2 * P * sizeof *pt->dmsg));
        KEDR_TRY(staged_alloc(s, &pt->h_x, 8 * plane * rs));
    }
    return KEDR_OK;
}

/* Collective, once every rank has its buffers: the halos registered with the comm layer, the
 * way of the interface systems chosen (the same on every rank) and, gathered, their buffer
 * allocated and registered. */
kedr_status adi_parts_connect(kedr_adi *s)
{
    size_t rs = (size_t)s->real_size;
    adi_parts *pt = &s->parts;
    size_t plane = s->plane, P = (size_t)s->nranks;
    int cuda = KEDR_IS_CUDA(s->ctx);
    kedr_status st = KEDR_OK;
    if (P > 1)
        KEDR_TRY(kedr_comm_dev_register(s->comm, s->ctx, pt->halo, 16 * plane * rs,
                                        &pt->halo_dev));
    /* auto: gathered where every pair of ranks copies GPU to GPU (one round of device copies
     * and a solve on the GPU), else by the owners on the host */
    if (P > 1)
        KEDR_TRY(all_direct(s, pt->halo_dev, &pt->direct));
    pt->gathered = s->partitioned && P > 1 &&
                   (s->c.x_interface == 2 || (s->c.x_interface == 0 && pt->direct &&
                                              P <= ADI_GATHER_MAX_RANKS));
    if (P > 1 && s->rank == 0)
        kedr_log(KEDR_LOG_INFO, "adi over %zu ranks: messages %s; the X sweep's interface "
                 "systems %s", P, pt->direct ? "GPU to GPU (CUDA IPC)" : "through host memory",
                 !s->partitioned ? "not used"
                 : pt->gathered ? (cuda ? "gathered on every rank and solved on its GPU"
                                        : "gathered on every rank and solved there")
                                : "solved by their owners on the host");
    if (pt->gathered) {
        size_t slots = P * ADI_IF_SENT * 2 * plane * rs;
        if (cuda && P > ADI_GATHER_MAX_RANKS)
            return kedr_fail(KEDR_ERR_INVALID, "kedr_adi_create: x_interface = gather takes at "
                             "most %d ranks on cuda; this run has %zu: use owner",
                             ADI_GATHER_MAX_RANKS, P);
        st = kedr_alloc(s->ctx, &pt->gather, slots);
        if (st == KEDR_OK && !cuda) {
            /* the unknowns of every rank's rows, and the Thomas scratch of every line */
            free(pt->h_send);
            free(pt->h_sys);
            pt->h_send = NULL;
            pt->h_sys = NULL;
            st = host_alloc(&pt->h_send, 8 * P * plane * rs);
            if (st == KEDR_OK)
                st = host_alloc((void **)&pt->h_sys, 4 * P * plane * sizeof(double));
        }
        KEDR_TRY(kedr_comm_agree(s->comm, st));
        KEDR_TRY(kedr_comm_dev_register(s->comm, s->ctx, pt->gather, slots, &pt->gather_dev));
    }
    return KEDR_OK;
}

void adi_parts_free(kedr_adi *s)
{
    if (xprof_on == 1 && (xprof_halos || xprof_ifaces)) {
        fprintf(stderr, "rank %d: %ld halo exchanges (%s), %ld interface solves (%s), ms each:",
                s->rank, xprof_halos, s->parts.direct ? "GPU to GPU" : "through the host",
                xprof_ifaces, s->parts.gathered ? "gathered" : "by the owners");
        for (int k = 0; k < XP_N; k++)
            fprintf(stderr, " %s %.3f%s", xprof_names[k],
                    1e3 * xprof[k] / (double)(k < XP_IF_DOWN ? (xprof_halos ? xprof_halos : 1)
                                                             : (xprof_ifaces ? xprof_ifaces : 1)),
                    k + 1 < XP_N ? "," : "\n");
        memset(xprof, 0, sizeof xprof);
        xprof_halos = xprof_ifaces = 0;
    }
    adi_parts *pt = &s->parts;
    kedr_free(s->ctx, pt->rs);
    kedr_free(s->ctx, pt->abc);
    kedr_free(s->ctx, pt->dw);
    kedr_free(s->ctx, pt->iface);
    kedr_free(s->ctx, pt->x);
    kedr_comm_dev_release(pt->halo_dev);
    kedr_comm_dev_release(pt->gather_dev);
    kedr_free(s->ctx, pt->halo);
    kedr_free(s->ctx, pt->gather);
    void *staged[2] = {pt->h_iface, pt->h_x};
    for (int k = 0; k < 2; k++) {
#ifdef KEDR_HAVE_CUDA
        if (pt->pinned) {
            adi_cuda_host_free(staged[k]);
            continue;
        }
#endif
        free(staged[k]);
    }
    free(pt->h_send);
    free(pt->h_recv);
    free(pt->h_sys);
    free(pt->msg);
    free(pt->dmsg);
}
