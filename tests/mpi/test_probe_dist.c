/* The distributed transpose (kedr_probe_dist_transpose) on any number of ranks (ctest runs it on 1
 * to 4 under mpirun, and alone), every back end: each method that the machine supports transposes
 * matrices of awkward sides correctly (the function checks every element on every rank and says
 * which is wrong); the others say why they cannot run; a side that the ranks do not divide is
 * refused. */
#include "kedr/probe.h"

#include "test_util.h"

static kedr_comm *comm;
static int rank, size;

static void check_backend(kedr_backend b)
{
    kedr_ctx *ctx = tu_ctx(b);
    int gpu = b == KEDR_BACKEND_CUDA;
    const size_t sides[] = {1, 7, 33, 130};
    for (int m = 0; m < KEDR_PROBE_DIST_COUNT; m++) {
        int supported = m == KEDR_PROBE_DIST_STAGED ||
                        (m == KEDR_PROBE_DIST_GPU_AWARE && gpu && kedr_comm_gpu_aware(comm)) ||
                        (m == KEDR_PROBE_DIST_PEER && gpu &&
                         kedr_comm_local_size(comm) == size);
        for (size_t k = 0; k < sizeof sides / sizeof *sides; k++) {
            size_t n = sides[k] * (size_t)size;
            double sec = -1;
            kedr_status s = kedr_probe_dist_transpose(ctx, comm, (kedr_probe_dist_method)m, n, 3,
                                                      &sec);
            if (supported)
                TU_CHECK(s == KEDR_OK && sec >= 0, "%s, %s, side %zu over %d ranks: %s",
                         kedr_backend_name(b), kedr_probe_dist_name((kedr_probe_dist_method)m), n,
                         size, s == KEDR_OK ? "no time" : kedr_last_error());
            else
                TU_CHECK(s == KEDR_ERR_UNSUPPORTED, "%s, %s: unsupported here, got %s",
                         kedr_backend_name(b), kedr_probe_dist_name((kedr_probe_dist_method)m),
                         kedr_status_name(s));
        }
    }
    double sec;
    TU_CHECK(kedr_probe_dist_transpose(ctx, comm, KEDR_PROBE_DIST_STAGED, 0, 3, &sec) ==
                 KEDR_ERR_INVALID, "a side of 0 is refused");
    if (size > 1)
        TU_CHECK(kedr_probe_dist_transpose(ctx, comm, KEDR_PROBE_DIST_STAGED,
                                           (size_t)size * 5 + 1, 3, &sec) == KEDR_ERR_INVALID &&
                     strstr(kedr_last_error(), "multiple of the rank count"),
                 "a side the ranks do not divide is refused");
    kedr_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    TU_OK(kedr_comm_init(&argc, &argv, &comm));
    rank = kedr_comm_rank(comm);
    size = kedr_comm_size(comm);
    kedr_backend list[2];
    int nb = tu_backends(list);
    for (int i = 0; i < nb; i++)
        check_backend(list[i]);
    int failed = tu_failed;
    TU_OK(kedr_comm_allreduce(comm, KEDR_I32, KEDR_OP_MAX, &failed, 1));
    int rc = tu_finish("test_probe_dist");
    kedr_comm_finalize(comm);
    return rc ? rc : failed != 0;
}
