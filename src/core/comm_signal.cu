/* kedr_comm_dev_signal's kernel: one thread stores the value into the partners' words (after a
 * system-wide fence, so that the writes of the work before it reach the partners first), then
 * polls this rank's words until each holds at least the value. */
#include "internal.h"

#include <stdio.h>

/* A partner that never signals: the kernel stops with an error after this many nanoseconds. */
#define SIGNAL_WAIT_NS 60000000000ull

static __device__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void comm_signal_kernel(kedr_signal_set set, unsigned long long value)
{
    __threadfence_system();
    for (int i = 0; i < set.nsig; i++)
        *(volatile unsigned long long *)set.sig[i] = value;
    unsigned long long t0 = now_ns();
    for (int j = 0; j < set.nwait; j++) {
        while (*(volatile const unsigned long long *)set.wait[j] < value) {
            if (now_ns() - t0 > SIGNAL_WAIT_NS) {
                printf("kedr_comm_dev_signal: waited more than %llu s for signal %llu (word %d "
                       "holds %llu): a partner never signalled\n", SIGNAL_WAIT_NS / 1000000000ull,
                       value, j, *(volatile const unsigned long long *)set.wait[j]);
                __trap();
            }
            __nanosleep(64);
        }
    }
    __threadfence_system(); /* the partners' writes before their signals, seen by what follows */
}

extern "C" kedr_status kedr_comm_signal_cuda(kedr_ctx *ctx, const kedr_signal_set *set,
                                             uint64_t value)
{
    comm_signal_kernel<<<1, 1, 0, KEDR_STREAM(ctx)>>>(*set, (unsigned long long)value);
    KEDR_CUDA_LAUNCHED("comm_signal_kernel");
    return KEDR_OK;
}
