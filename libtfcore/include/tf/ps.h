/*
 * ps.h - parameter servers: tf-ps tasks hold the model's parameters,
 * split across them by bytes, and apply the optimizer to gradients the
 * trainers push (between-graph replication, as TensorFlow 0.8 trains).
 *
 * The model's parameters are one flat float vector of n values; ps k of P
 * holds [k * n / P, (k + 1) * n / P).  The chief sends each ps its range,
 * the optimizer's slots for it, the step and the optimizer (plugin name
 * and settings) once (INIT); every trainer then pushes its gradient of
 * each range and gets the range's new values back in the reply.  The
 * messages are tfkit.ps.Request and Reply (libtfcore/proto/ps.proto) over
 * nng request/reply; each push carries (worker, step, sequence), so a
 * resent push is answered and never applied twice.
 *
 * Synchronous (sync): a step applies the mean of the first
 * replicas_to_aggregate gradients computed on it, summed in trainer
 * order (a run is bit-for-bit repeatable for a seed and trainer count);
 * gradients of a step that already has its share are dropped and
 * counted (backup workers).  When fewer arrive within peer_timeout
 * seconds, the step proceeds with those it has, said in a note.
 * Asynchronous: each gradient is applied as it comes, unless it was
 * computed on values more than staleness steps old (rejected, counted).
 */
#ifndef TF_PS_H
#define TF_PS_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"
#include "tf/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol version a Request and Reply carry. */
#define TF_PS_PROTOCOL 1

struct tf_ps_config {
	const char *listen; /* an nng URL: "tcp://0.0.0.0:2222" */
	const char *token;  /* required in every request, or NULL */
	size_t index;       /* this ps of count */
	size_t count;
	size_t trainers;     /* trainers that will report done */
	double idle_timeout; /* seconds without a request: exit (0: never) */
	size_t max_message;  /* the receive limit in bytes (0: 1 GiB) */
	/* A ps that (re)starts where the chief checkpoints takes its shard
	 * from the latest checkpoint there, so the trainers go on: with
	 * these settings of the run (the same command line's). */
	const char *checkpoint_dir; /* or NULL */
	/* TLS (tls+tcp): this ps's certificate and key, PEM, one file */
	const char *tls_cert_key; /* or NULL: plain tcp */
	int sync;
	unsigned replicas_to_aggregate, staleness;
	double peer_timeout;
	/* listen's host may be a name: every address it resolves to is
	 * listened on.  listen_v6: a host name whose IPv6 addresses are
	 * listened on as well (beside an IPv4 wildcard listen), or NULL. */
	const char *listen_v6;
	/* Seconds to wait for the first trainer, and for another after the
	 * last one has gone (0: 600 and 120 s), then exit saying so. */
	double startup_timeout;
};

/* What a ps says while it runs (one line each), and whether to stop
 * (a signal). */
struct tf_ps_sink {
	void *ctx;
	void (*note)(void *ctx, const char *msg);
	int (*stop)(void *ctx);
};

/*
 * Serve until the chief says the run is over (after its last
 * checkpoint), every trainer has reported done and the chief is silent
 * for 5 s, idle_timeout passes without a request, or stop() says so.
 * TF_EIO when the address cannot be listened on.  The optimizer comes
 * from reg, by the name the chief sends.
 */
TF_API int tf_ps_run(const struct tf_registry *reg,
                     const struct tf_ps_config *cfg,
                     const struct tf_ps_sink *sink);

/*
 * A ps without a socket: the same shard, optimizer and steps as
 * tf_ps_run(), with request messages handed in as bytes on one of nctx
 * contexts (tests, fuzzing, other transports).  NULL when out of memory.
 * tf_ps_request() answers at once or holds the request (a sync push
 * waiting for its step's other gradients, a snapshot for its step); a
 * held context is answered by a later request on another and takes no
 * new request until then (TF_EINVAL).  tf_ps_reply() gives a context's
 * answer (TF_EOF: none yet), valid until its next request.
 */
struct tf_ps;
TF_API struct tf_ps *tf_ps_new(const struct tf_registry *reg,
                               const struct tf_ps_config *cfg,
                               const struct tf_ps_sink *sink, size_t nctx);
TF_API void tf_ps_free(struct tf_ps *ps);
TF_API int tf_ps_request(struct tf_ps *ps, size_t ctx, const void *msg,
                         size_t n);
TF_API int tf_ps_reply(struct tf_ps *ps, size_t ctx, const uint8_t **reply,
                       size_t *n);

/*
 * A trainer's (or an operator's) connection to every ps of a cluster:
 * one nng request socket each, dialled in the background (a ps that is
 * not up yet, or restarts, is reconnected to).  Training uses it through
 * the trainer; tf-ps --status asks each ps for its counters.
 */
struct tf_ps_client;
TF_API struct tf_ps_client *tf_ps_client_new(void);
TF_API void tf_ps_client_free(struct tf_ps_client *cl);
/* Speak TLS to the ps tasks, verifying their certificates against the
 * CAs of this PEM file (before connecting). */
TF_API int tf_ps_client_set_tls(struct tf_ps_client *cl, const char *ca_file);
/* addrs: "host:port" or nng URLs; timeout: seconds a reply may take. */
TF_API int tf_ps_client_connect(struct tf_ps_client *cl,
                                const char *const *addrs, size_t n,
                                const char *token, double timeout);
/*
 * Each ps's counters as JSON, one object a line: step, workers seen and
 * done, and per worker the gradients sent, applied and dropped (stale,
 * backup, invalid), the bytes each way and its exchanges' mean time.  The
 * caller frees *json. TF_EIO when a ps does not answer.
 */
TF_API int tf_ps_client_status(struct tf_ps_client *cl, char **json);

#ifdef __cplusplus
}
#endif
#endif
