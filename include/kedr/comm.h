/* kedr comm: the MPI layer every module shares. One rank per GPU (or per cpu process with its
 * threads), across the GPUs of a host and across hosts. Modules say what to send and to whom;
 * this layer owns MPI. A build without MPI (or a program not started by mpirun) runs one rank,
 * and every call below then does what a single rank would. Buffers are host memory, but for
 * kedr_comm_dev_* (a context's memory: GPU to GPU between the ranks of a host). */
#ifndef KEDR_COMM_H
#define KEDR_COMM_H

#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kedr_comm kedr_comm;

/* Joins the job: initializes MPI when it is built in and not yet initialized (argc/argv may be
 * NULL), and learns this rank, the number of ranks and the ranks sharing this host. Call once
 * per program, before any other kedr_comm function; kedr_comm_finalize ends MPI if
 * kedr_comm_init started it. */
kedr_status kedr_comm_init(int *argc, char ***argv, kedr_comm **comm);
void kedr_comm_finalize(kedr_comm *comm);

int kedr_comm_rank(const kedr_comm *comm);
int kedr_comm_size(const kedr_comm *comm);
/* This rank's place among the ranks of its host, and their number. */
int kedr_comm_local_rank(const kedr_comm *comm);
int kedr_comm_local_size(const kedr_comm *comm);
/* 1 when rank runs on this rank's host (this rank itself included). */
int kedr_comm_same_host(const kedr_comm *comm, int rank);
/* 1 when MPI is built in and the job has more than one rank or was started by mpirun. */
int kedr_comm_is_parallel(const kedr_comm *comm);
/* 1 when the MPI library takes GPU memory in its calls (CUDA-aware); kedr stages through host
 * memory otherwise. Debian's OpenMPI 4.1 is built without it. */
int kedr_comm_gpu_aware(const kedr_comm *comm);

/* The GPU a rank uses when the host has ndevices: ranks of a host take them in turn (local
 * rank modulo ndevices), so that 4 ranks on a host of 4 GPUs use one each. */
int kedr_comm_device(const kedr_comm *comm, int ndevices);

kedr_status kedr_comm_barrier(kedr_comm *comm);
/* In place over every rank: data[i] = op over ranks of data[i]. */
kedr_status kedr_comm_allreduce(kedr_comm *comm, kedr_dtype type, kedr_op op, void *data,
                                size_t n);
kedr_status kedr_comm_bcast(kedr_comm *comm, void *data, size_t bytes, int root);

/* Errors agree: every rank passes its own status and gets back the first failure of any rank
 * (lowest rank first), with that rank's message in kedr_last_error() prefixed "rank R: ". A
 * module calls it where one rank's failure must stop all (out of memory, a bad checkpoint), so
 * that no rank waits forever for a partner that has given up. */
kedr_status kedr_comm_agree(kedr_comm *comm, kedr_status local);

/* Gathers each rank's bytes on root, in rank order: on root, counts[r] receives the byte count
 * of rank r and *recv a malloc'ed buffer of their sum (free() it); elsewhere both are untouched.
 * counts has kedr_comm_size entries on root and may be NULL on other ranks. */
kedr_status kedr_comm_gatherv(kedr_comm *comm, const void *send, size_t bytes, int root,
                              size_t *counts, void **recv);

/* Neighbour messages: each rank sends nsend messages (to distinct ranks, possibly none), and
 * receives whatever the others send it, without knowing in advance who will. The received
 * messages come back in rank order of their senders, packed in one malloc'ed buffer *recv (free
 * it) with their sources, sizes and offsets in *msgs (malloc'ed too; *nrecv entries). */
typedef struct {
    int rank;         /* the destination (send) or the source (received) */
    const void *data; /* send: the bytes; received: where they start in *recv */
    size_t bytes;
} kedr_comm_msg;
kedr_status kedr_comm_exchange(kedr_comm *comm, int nsend, const kedr_comm_msg *send, int *nrecv,
                               kedr_comm_msg **msgs, void **recv);
/* The same in two collective halves, for a caller that keeps its own receive buffer (pinned
 * memory reused from step to step, say): _sizes learns who sends how much (*msgs malloc'ed, their
 * data NULL; *total the bytes to receive); _data then moves the messages into recv (at least
 * *total bytes), in the order of msgs, and points each msgs[k].data at its bytes. Every rank that
 * called _sizes must call _data with the same sends (agree on failures in between). */
kedr_status kedr_comm_exchange_sizes(kedr_comm *comm, int nsend, const kedr_comm_msg *send,
                                     int *nrecv, kedr_comm_msg **msgs, size_t *total);
kedr_status kedr_comm_exchange_data(kedr_comm *comm, int nsend, const kedr_comm_msg *send,
                                    int nrecv, kedr_comm_msg *msgs, void *recv);

/* Known partners (halos): every send and every receive is posted at once and all complete
 * together. A send to rank R with tag T is received by R's receive from this rank with tag T;
 * both sides know the size (a halo's size is), and a receive of another size is an error. Tags
 * tell apart messages between the same two ranks (a periodic direction on two ranks has the
 * same neighbour both ways: give each direction its own tag); 0 <= tag < KEDR_COMM_MAX_TAG.
 * Messages to this rank itself are copies. */
#define KEDR_COMM_MAX_TAG 1024
typedef struct {
    int rank;
    int tag;
    void *data; /* send: read only */
    size_t bytes;
} kedr_comm_halo;
kedr_status kedr_comm_sendrecv(kedr_comm *comm, int nsend, const kedr_comm_halo *send, int nrecv,
                               const kedr_comm_halo *recv);

/* Buffers of a context's memory (GPU memory on cuda) between ranks. Each rank registers one
 * buffer once (kedr_comm_dev_register, collective: every rank calls it, each with its own
 * buffer and size); kedr_comm_dev_sendrecv then copies bytes of this rank's buffer into other
 * ranks' registered buffers. Between two ranks of one host whose GPUs reach each other by peer
 * access, or that share one GPU, the bytes go GPU to GPU: registration exchanges the buffers'
 * CUDA IPC handles, each rank maps its partners' buffers, and a transfer is one device copy into
 * the partner's buffer, ordered by two zero-byte messages (the receiver is ready, the copy has
 * landed). Otherwise (another host, no peer access, the cpu back end, or KEDR_COMM_IPC=0 in the
 * environment) the bytes go through host memory and MPI as in kedr_comm_sendrecv (on cuda
 * through a page-locked copy of the buffer, made at registration). The buffer must be a whole
 * allocation of kedr_alloc (CUDA IPC maps whole allocations) and outlive the registration. */
typedef struct kedr_comm_dev kedr_comm_dev;
kedr_status kedr_comm_dev_register(kedr_comm *comm, kedr_ctx *ctx, void *data, size_t bytes,
                                   kedr_comm_dev **dev);
/* The same with flags (0: as kedr_comm_dev_register; every rank must pass the same flags).
 * KEDR_COMM_DEV_ORDERED: transfers between direct (GPU-to-GPU) partners are ordered on the
 * ranks' streams by CUDA IPC events instead of stream synchronisations: kedr_comm_dev_sendrecv
 * then returns once its transfers are queued, and what it promises holds for the work queued
 * on the context's stream after it (its kernels, copies, kedr_download, kedr_ctx_sync), not for
 * the host or other streams: the host reads the buffer only after kedr_ctx_sync or through
 * kedr_download. Partners that are not direct, the cpu back end, KEDR_COMM_IPC_EVENTS=0 in
 * the environment (on any rank), and a GPU or driver that cannot share events between processes
 * (the registration then falls back, kedr_comm_dev_ordered returns 0) keep the synchronised
 * transfers. */
#define KEDR_COMM_DEV_ORDERED 1u
kedr_status kedr_comm_dev_register_flags(kedr_comm *comm, kedr_ctx *ctx, void *data,
                                         size_t bytes, unsigned flags, kedr_comm_dev **dev);
/* 1 when KEDR_COMM_DEV_ORDERED is in force for the registration (asked, cuda, not turned off). */
int kedr_comm_dev_ordered(const kedr_comm_dev *dev);
/* Unmaps the partners' buffers and frees the registration (not the buffer). Not collective;
 * call it on every rank once no transfer is in flight. */
void kedr_comm_dev_release(kedr_comm_dev *dev);
/* 1 when transfers with rank go GPU to GPU (this rank itself: 1 on cuda). */
int kedr_comm_dev_direct(const kedr_comm_dev *dev, int rank);

/* One message of kedr_comm_dev_sendrecv, in bytes of the registered buffers. A send copies
 * bytes at offset from of this rank's buffer to offset to of rank's buffer; a receive names
 * what arrives from rank at offset to of this rank's buffer (from unused). A send to R with tag
 * T is matched by R's receive from this rank with tag T, with the same to and bytes; tags as in
 * kedr_comm_sendrecv (0 <= tag < KEDR_COMM_MAX_TAG, one message per tag between two ranks).
 * A message to this rank itself is a copy within its buffer. */
typedef struct {
    int rank, tag;
    size_t from, to, bytes;
} kedr_comm_dev_msg;
/* Every send and receive of this rank at once. The context's queued work is finished first (its
 * stream synchronized), so kernels may write the bytes to send just before the call; on return
 * this rank's sends have landed in the partners' buffers and its receives in its own, which its
 * kernels may then read (KEDR_COMM_DEV_ORDERED: no synchronisation; the same holds for the work
 * queued on the context's stream before and after the call). The received ranges must not overlap the sent ones, and nothing else
 * may touch them during the call. */
kedr_status kedr_comm_dev_sendrecv(kedr_comm_dev *dev, int nsend, const kedr_comm_dev_msg *send,
                                   int nrecv, const kedr_comm_dev_msg *recv);

/* Signals between the GPUs themselves, no host in between, for partners that are direct and on
 * another GPU of the host (peer access). kedr_comm_dev_peer: partner rank's registered buffer
 * as mapped here, for this rank's kernels to read and write (NULL where transfers with rank are
 * not direct, where rank is this rank, or shares its GPU: a kernel waiting on a GPU shared with
 * the partner that must signal it could hold that GPU). kedr_comm_dev_signal queues on the
 * context's stream one small kernel that, after the work queued before it, stores value into
 * the 64-bit word at byte offset sig_at[i] of rank sig_rank[i]'s buffer (i < nsig, each a rank
 * kedr_comm_dev_peer maps), then waits until every 64-bit word at byte offset wait_at[j] of this
 * rank's buffer (j < nwait) is at least value; the work queued after it starts only then. The
 * words must be 8-byte aligned, inside the buffers and written by nothing else, and value must
 * grow from call to call (words start at whatever the buffers hold: zero them first). Nothing
 * else orders a rank's writes into a partner's buffer with the partner's reads: a protocol on
 * top (double buffers, say) must. A wait longer than 60 s (a partner that never signals) ends
 * the kernel with an error, reported at the context's next synchronisation. At most
 * KEDR_COMM_SIGNALS_MOST of each. cuda only. */
#define KEDR_COMM_SIGNALS_MOST 8
void *kedr_comm_dev_peer(const kedr_comm_dev *dev, int rank);
kedr_status kedr_comm_dev_signal(kedr_comm_dev *dev, int nsig, const int *sig_rank,
                                 const size_t *sig_at, int nwait, const size_t *wait_at,
                                 uint64_t value);

#ifdef __cplusplus
}
#endif
#endif
