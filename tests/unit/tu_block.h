/* Host threads standing in for the threads of a GPU block, for the tests of code written for a
 * block (the tridiagonal kernels' shared functions): define the code's barrier macro as
 * tu_block_sync() before including it, then tu_block_run(q, fn, job, name) runs fn on q threads,
 * thread r given (job, r) as a tu_block_thread. Include after test_util.h. */
#ifndef TU_BLOCK_H
#define TU_BLOCK_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define TU_BLOCK_MOST 512

typedef struct {
    void *job;
    size_t r; /* the thread's index in the block */
} tu_block_thread;

static pthread_barrier_t tu_block_barrier;
static void tu_block_sync(void) { pthread_barrier_wait(&tu_block_barrier); }

/* Runs fn on q <= TU_BLOCK_MOST threads meeting at tu_block_sync(), and waits for them. A thread
 * that cannot start would leave the others at the barrier forever: the test then stops. */
static void tu_block_run(size_t q, void *(*fn)(void *), void *job, const char *name)
{
    pthread_t th[TU_BLOCK_MOST];
    tu_block_thread t[TU_BLOCK_MOST];
    pthread_barrier_init(&tu_block_barrier, NULL, (unsigned)q);
    size_t started = 0;
    for (size_t r = 0; r < q && r < TU_BLOCK_MOST; r++) {
        t[r] = (tu_block_thread){job, r};
        if (pthread_create(&th[r], NULL, fn, &t[r]) != 0)
            break;
        started++;
    }
    TU_CHECK(started == q, "could not start %zu threads (started %zu)", q, started);
    if (started < q) {
        fprintf(stderr, "%s: thread start failed\n", name);
        exit(1);
    }
    for (size_t r = 0; r < q; r++)
        pthread_join(th[r], NULL);
    pthread_barrier_destroy(&tu_block_barrier);
}

#endif
