#include <kedr/kedr.h>
#include <stdio.h>

/* The mean of n uniform random numbers, drawn and summed where the context lives. */
static kedr_status mean_uniform(kedr_ctx *ctx, size_t n, float *mean)
{
    float *x, sum;                      /* x in the context's memory: the GPU's with cuda */
    KEDR_TRY(kedr_alloc(ctx, (void **)&x, n * sizeof *x));
    kedr_status s = kedr_rng_uniform(ctx, KEDR_F32, (kedr_rng_stream){.seed = 1}, x, n);
    if (s == KEDR_OK)
        s = kedr_reduce(ctx, KEDR_F32, KEDR_OP_SUM, x, n, &sum);   /* result to the host */
    kedr_free(ctx, x);
    if (s == KEDR_OK)
        *mean = sum / n;
    return s;
}

int main(void)
{
    kedr_ctx *ctx;
    float mean;
    size_t n = 1000000;
    /* AUTO: the cuda back end when a GPU is present, else the cpu. */
    if (kedr_ctx_create(&ctx, KEDR_BACKEND_AUTO, 0) != KEDR_OK) {
        fprintf(stderr, "kedr: %s\n", kedr_last_error());
        return 1;
    }
    kedr_status s = mean_uniform(ctx, n, &mean);
    if (s == KEDR_OK)
        printf("mean of %zu uniform numbers on %s: %.4f\n", n,
               kedr_backend_name(kedr_ctx_backend(ctx)), mean);
    else
        fprintf(stderr, "kedr: %s\n", kedr_last_error());
    kedr_ctx_destroy(ctx);
    return s == KEDR_OK ? 0 : 1;
}
