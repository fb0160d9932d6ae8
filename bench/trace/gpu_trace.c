/* A GPU timeline of any CUDA program, for hosts without a system profiler: every kernel,
 * copy and memset the GPU ran (start and end in ns, stream, name) and the CUDA runtime calls
 * that can wait for the device, written as CSV. Loaded by the CUDA driver at start-up:
 *
 *   CUDA_INJECTION64_PATH=build/libkedr_gpu_trace.so KEDR_TRACE_DIR=/tmp/tr build/kedr flow ...
 *
 * One file a process: DIR/trace-rR-PID.csv (R: the MPI rank from OMPI_COMM_WORLD_RANK or
 * PMI_RANK, else 0). Lines "kind,start_ns,end_ns,stream,what": kind K (kernel; what = its
 * name), C (copy; what = kind:bytes), S (memset; bytes), A (runtime call; what = its name;
 * stream = the calling thread). bench/trace-summary.py reads them. */
#include <cupti.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_BYTES (8u << 20)

/* The records' layouts of this CUPTI (the fields read here are in every version). */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 trace_kernel;
typedef CUpti_ActivityMemcpy6 trace_memcpy;
#else
typedef CUpti_ActivityKernel9 trace_kernel;
typedef CUpti_ActivityMemcpy5 trace_memcpy;
#endif
typedef CUpti_ActivityMemset4 trace_memset;

static FILE *out;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUF_BYTES);
    *size = *buffer ? BUF_BYTES : 0;
    *max_records = 0;
}

/* Only the runtime calls that may wait for the device, or start its work. */
static int api_wanted(const char *name)
{
    return strstr(name, "Synchronize") || strstr(name, "Launch") ||
           (strstr(name, "Memcpy") && !strstr(name, "Async")) || strstr(name, "Query");
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *rec = NULL;
    while (out && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const trace_kernel *k = (const trace_kernel *)rec;
            fprintf(out, "K,%llu,%llu,%u,%s\n", (unsigned long long)k->start,
                    (unsigned long long)k->end, k->streamId, k->name ? k->name : "?");
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const trace_memcpy *m = (const trace_memcpy *)rec;
            fprintf(out, "C,%llu,%llu,%u,%u:%llu\n", (unsigned long long)m->start,
                    (unsigned long long)m->end, m->streamId, (unsigned)m->copyKind,
                    (unsigned long long)m->bytes);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const trace_memset *m = (const trace_memset *)rec;
            fprintf(out, "S,%llu,%llu,%u,%llu\n", (unsigned long long)m->start,
                    (unsigned long long)m->end, m->streamId, (unsigned long long)m->bytes);
            break;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME: {
            const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
            const char *name = NULL;
            if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name) ==
                    CUPTI_SUCCESS && name && api_wanted(name))
                fprintf(out, "A,%llu,%llu,%u,%s\n", (unsigned long long)a->start,
                        (unsigned long long)a->end, a->threadId, name);
            break;
        }
        default:
            break;
        }
    }
    free(buffer);
}

static void flush_all(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (out)
        fflush(out);
}

/* Records are flushed before a context goes (the program may destroy it before exit). */
static void CUPTIAPI on_resource(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                 const void *info)
{
    (void)data;
    (void)info;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        flush_all();
}

static void at_exit(void)
{
    flush_all();
    if (out)
        fclose(out);
    out = NULL;
}

#define TRY(call)                                                                              \
    do {                                                                                       \
        CUptiResult r_ = (call);                                                               \
        if (r_ != CUPTI_SUCCESS) {                                                             \
            const char *e_ = "?";                                                              \
            cuptiGetResultString(r_, &e_);                                                     \
            fprintf(stderr, "gpu_trace: %s: %s (not tracing)\n", #call, e_);                   \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

/* Called by the CUDA driver when CUDA_INJECTION64_PATH names this library. */
int InitializeInjection(void)
{
    const char *dir = getenv("KEDR_TRACE_DIR");
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    char path[4096];
    snprintf(path, sizeof path, "%s/trace-r%s-%ld.csv", dir && *dir ? dir : ".",
             rank ? rank : "0", (long)getpid());
    out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "gpu_trace: cannot write %s\n", path);
        return 1;
    }
    CUpti_SubscriberHandle sub;
    TRY(cuptiSubscribe(&sub, on_resource, NULL));
    TRY(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
    TRY(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    atexit(at_exit);
    return 1;
}
