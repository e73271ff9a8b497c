/*
 * ps.c - a parameter server (tf/ps.h): one shard of the model's
 * parameters and its optimizer, served over nng request/reply with a
 * pool of contexts, so a synchronous step can hold each trainer's push
 * until the step has its gradients.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/supplemental/tls/tls.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "pool.h"
#include "ps.pb-c.h"
#include "tf/checkpoint.h"
#include "tf/optim.h"
#include "tf/ps.h"

/* After every trainer said done, how long to wait for the chief's
 * FINISH (its last checkpoint) before exiting anyway. */
#define DONE_GRACE 5.0
/* How long ps 0 holds a TAKE it has no chunk for before answering WAIT
 * (the trainer then says it is idle, and asks again at once): a chunk
 * coming free, or the run's end, answers it at once instead.  Short: a
 * trainer whose reader waits here may have no batch left, and a sync
 * step waits for it until it says it is idle (the end of each run). */
#define TAKE_HOLD 0.01

struct ps;

/* One context: receives a request, answers it (now, or when the step
 * it waits for is reached), receives again. */
struct slot {
	struct ps *ps;
	nng_ctx ctx;
	nng_aio *aio;
	int sending;
	int parked;    /* PARK_* */
	uint64_t want; /* PARK_SNAPSHOT: the step; PARK_TAKE: the take */
	uint32_t wk;   /* PARK_SNAPSHOT, PARK_TAKE: the trainer */
	double until;  /* PARK_TAKE: when to answer WAIT */
	/* the ranges of the shard the reply's values hold (pairs; none:
	 * all), as the request asked */
	uint64_t *ranges;
	size_t nranges, cap;
	int some; /* only those ranges */
	/* without a socket (tf_ps_new): the last reply, kept */
	uint8_t *reply;
	size_t reply_len, reply_cap;
	int answered;
};

enum { PARK_NONE, PARK_PUSH, PARK_SNAPSHOT, PARK_TAKE };

struct worker {
	uint64_t seq, sent, applied, stale, backup, invalid;
	uint64_t bytes_in, bytes_out, examples;
	uint64_t alive; /* ALIVEs: waiting on another ps, or aside */
	int seen, done;
	int lost;    /* silent past the peer timeout: counted as done */
	double last; /* its last request */
	uint64_t epoch, done_rows; /* its input position, from its pushes */
	double ms;                 /* its rounds' time, as it reports it */
	uint64_t nms;
	/* The trainer process (its session; the ones it replaced, refused)
	 * and, with a pool, its last TAKE and the chunk it got, when its
	 * process first asked, and (sync) the rows of its held push. */
	uint64_t session, retired[4];
	uint64_t take;
	struct tfi_chunk taken;
	int took;
	double since;
	uint64_t *spans;
	size_t nspans, capspans;
};

struct ps {
	pthread_mutex_t mu;
	const struct tf_registry *reg;
	const struct tf_ps_config *cfg;
	const struct tf_ps_sink *sink;
	nng_socket sock;
	struct slot *slots;
	size_t nslots;
	int closing;
	/* the shard */
	int init;
	uint64_t n, lo, hi, step;
	uint64_t model; /* what the parameters stand for (INIT's; 0: unsaid) */
	float *params;
	struct tf_optim *o;
	struct tf_hparams *h;
	char optimizer[64];
	/* how steps are taken */
	int sync;
	uint32_t k, trainers, staleness;
	double peer_timeout;
	/* sync: the step's gradients, one buffer per trainer */
	float *agg, *mean;
	/* a row-sparse reply's values, gathered (kept between replies) */
	uint8_t *vals;
	size_t capvals;
	unsigned char *have;
	uint32_t nhave;
	float lr;
	double first; /* when its first gradient came */
	struct worker *w;
	uint32_t done;
	/* the trainers gone on without (w[k].lost): how many, and the first
	 * 64 as every reply names them (kept by set_lost()) */
	uint32_t nlost, lost_ids[64];
	size_t nlost_ids;
	double all_done_at, last_request, init_at, started_at;
	uint64_t requests; /* every request, of any trainer */
	int finish;
	/* Chunks handed out (--chunk-size): ps 0 holds the pool; every ps
	 * knows the run has one (a trainer gone on without is then told
	 * so when it comes back, never taken back). */
	struct tfi_pool *pool;
	int chunked;
	unsigned char *gone;
};

static void note(struct ps *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_lost(struct ps *ps, uint32_t k, int on);
static void lose_refused(struct ps *ps, uint32_t k);
static void note_pool(struct ps *ps);
static void answer_takes(struct ps *ps, double t);
static void drop_takes(struct ps *ps, const struct slot *s, uint32_t wk,
                       int status, const char *msg);
static uint64_t give_back(struct ps *ps, uint32_t wk, char *what, size_t len);

static void
note(struct ps *ps, const char *fmt, ...)
{
	if (ps->sink == NULL || ps->sink->note == NULL) {
		return;
	}
	char msg[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ps->sink->note(ps->sink->ctx, msg);
}

/* memcpy(), for n that may be 0 with NULL pointers (an empty shard, an
 * empty bytes field). */
static void
copy_bytes(void *dst, const void *src, size_t n)
{
	if (n > 0) {
		memcpy(dst, src, n);
	}
}

static uint64_t
width(const struct ps *ps)
{
	return ps->hi - ps->lo;
}

/* ---- replies -------------------------------------------------------------
 */

/* Answer on slot s (the mutex held). */
static void
send_reply(struct ps *ps, struct slot *s, Tfkit__Ps__Reply *r, uint32_t wk)
{
	r->version = TF_PS_PROTOCOL;
	/* Every reply names the trainers gone on without, so the chief can
	 * say so (the first 64). */
	r->lost = ps->lost_ids;
	r->n_lost = ps->nlost_ids;
	size_t len = tfkit__ps__reply__get_packed_size(r);
	if (s->aio == NULL) { /* no socket: kept for tf_ps_reply() */
		if (len > s->reply_cap) {
			uint8_t *b = realloc(s->reply, len);
			if (b == NULL) {
				note(ps, "out of memory for a reply: dropped");
				return;
			}
			s->reply = b;
			s->reply_cap = len;
		}
		tfkit__ps__reply__pack(r, s->reply);
		s->reply_len = len;
		s->answered = 1;
		if (wk < ps->trainers) {
			ps->w[wk].bytes_out += len;
		}
		s->parked = PARK_NONE;
		return;
	}
	nng_msg *m;
	if (nng_msg_alloc(&m, len) != 0) {
		note(ps, "out of memory for a reply: dropped");
		nng_ctx_recv(s->ctx, s->aio);
		return;
	}
	tfkit__ps__reply__pack(r, nng_msg_body(m));
	if (wk < ps->trainers) {
		ps->w[wk].bytes_out += len;
	}
	s->parked = PARK_NONE;
	s->sending = 1;
	nng_aio_set_msg(s->aio, m);
	nng_ctx_send(s->ctx, s->aio);
}

static void
reply_status(struct ps *ps, struct slot *s, int status, const char *msg,
             uint32_t wk)
{
	Tfkit__Ps__Reply r = TFKIT__PS__REPLY__INIT;
	r.status = status;
	r.message = (char *)(msg ? msg : "");
	r.step = ps->step;
	r.lo = ps->lo;
	r.hi = ps->hi;
	r.workers_done = ps->done;
	send_reply(ps, s, &r, wk);
}

/* The shard's values (and slots) with a status. */
static void
reply_values(struct ps *ps, struct slot *s, int status, int slots, uint32_t wk)
{
	Tfkit__Ps__Reply r = TFKIT__PS__REPLY__INIT;
	r.status = status;
	r.message = "";
	r.step = ps->step;
	r.lo = ps->lo;
	r.hi = ps->hi;
	r.workers_done = ps->done;
	r.values.data = (uint8_t *)ps->params;
	r.values.len = width(ps) * sizeof(float);
	if (!slots && s->some) { /* only the ranges asked for */
		size_t total = 0;
		for (size_t i = 0; i < s->nranges; i += 2) {
			total += s->ranges[i + 1] * sizeof(float);
		}
		if (total > ps->capvals) {
			uint8_t *p = realloc(ps->vals, total);
			if (p == NULL) {
				reply_status(ps, s,
				             TFKIT__PS__REPLY__STATUS__ERROR,
				             "out of memory", wk);
				return;
			}
			ps->vals = p;
			ps->capvals = total;
		}
		size_t at = 0;
		for (size_t i = 0; i < s->nranges; i += 2) {
			copy_bytes(ps->vals + at, ps->params + s->ranges[i],
			           s->ranges[i + 1] * sizeof(float));
			at += s->ranges[i + 1] * sizeof(float);
		}
		r.values.data = ps->vals;
		r.values.len = at;
	}
	unsigned ns = slots ? tf_optim_nslots(ps->o) : 0;
	uint8_t *buf = NULL;
	uint64_t *pos =
	    slots ? calloc(2 * (size_t)ps->trainers + 1, sizeof *pos) : NULL;
	for (uint32_t t = 0; pos != NULL && t < ps->trainers; t++) {
		pos[2 * t] = ps->w[t].epoch;
		pos[2 * t + 1] = ps->w[t].done_rows;
	}
	if (pos != NULL) {
		r.positions = pos;
		r.n_positions = 2 * (size_t)ps->trainers;
	}
	/* a snapshot: the pool as it stands at the step (a checkpoint's) */
	char *pool = slots && ps->pool ? tfi_pool_json(ps->pool) : NULL;
	r.pool = pool ? pool : "";
	if (ns > 0) {
		size_t one = width(ps) * sizeof(float);
		buf = malloc(ns * one);
		if (buf == NULL) {
			free(pos);
			free(pool);
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR,
			             "out of memory", wk);
			return;
		}
		for (unsigned i = 0; i < ns; i++) {
			copy_bytes(buf + i * one, tf_optim_slot(ps->o, i), one);
		}
		r.slots.data = buf;
		r.slots.len = ns * one;
	}
	send_reply(ps, s, &r, wk);
	free(buf);
	free(pos);
	free(pool);
}

/*
 * Ranges of the shard from a request (pairs: start, length), checked:
 * ascending, apart, inside the shard.  Kept in the slot for the reply
 * (want) or added up into *total (blocks).  -1 when they are not.
 */
static int
take_ranges(struct ps *ps, const uint64_t *v, size_t n, uint64_t *total)
{
	uint64_t wd = width(ps), end = 0;
	*total = 0;
	if (n % 2 != 0) {
		return -1;
	}
	for (size_t i = 0; i < n; i += 2) {
		if (v[i] < end || v[i + 1] == 0 || v[i] > wd ||
		    v[i + 1] > wd - v[i]) {
			return -1;
		}
		end = v[i] + v[i + 1];
		*total += v[i + 1];
	}
	return 0;
}

static int
keep_want(struct ps *ps, struct slot *s, const Tfkit__Ps__Request *q)
{
	uint64_t total;
	s->nranges = 0;
	s->some = q->sparse;
	if (take_ranges(ps, q->want, q->n_want, &total) != 0) {
		return -1;
	}
	if (q->n_want > s->cap) {
		uint64_t *p = realloc(s->ranges, q->n_want * sizeof *p);
		if (p == NULL) {
			return -1;
		}
		s->ranges = p;
		s->cap = q->n_want;
	}
	if (q->n_want > 0) {
		memcpy(s->ranges, q->want, q->n_want * sizeof *s->ranges);
	}
	s->nranges = q->n_want;
	return 0;
}

/* A push's gradient as the shard's dense vector in out: its values, or
 * its blocks scattered over zeros. */
static void
dense_gradient(struct ps *ps, const Tfkit__Ps__Request *q, float *out)
{
	/* values.data need not be aligned: copied, never cast */
	if (!q->sparse) {
		copy_bytes(out, q->values.data, width(ps) * sizeof(float));
		return;
	}
	memset(out, 0, width(ps) * sizeof(float));
	size_t at = 0;
	for (size_t i = 0; i < q->n_blocks; i += 2) {
		copy_bytes(out + q->blocks[i], q->values.data + at,
		           q->blocks[i + 1] * sizeof(float));
		at += q->blocks[i + 1] * sizeof(float);
	}
}

/* Gradients a sync step waits for: its share, or every live trainer. */
static uint32_t
needed(const struct ps *ps)
{
	uint32_t live = ps->trainers - ps->done;
	return ps->k < live ? ps->k : live;
}

/* Whether a snapshot of step want, asked by trainer wk (which sends no
 * gradient while it waits), is answered now: the shard is at the step,
 * or the other live trainers' gradients cannot make a step.  A ps
 * started again from a checkpoint behind the step a trainer last saw
 * answers at the step it is at, not never. */
static int
snapshot_due(const struct ps *ps, uint64_t want, uint32_t wk)
{
	if (want <= ps->step) {
		return 1;
	}
	uint32_t others = ps->trainers - ps->done - !ps->w[wk].done;
	return others == 0 || (ps->sync && others < needed(ps));
}

/* Every snapshot waiting for this step, or for one this shard cannot
 * come to while its trainer waits. */
static void
answer_snapshots(struct ps *ps)
{
	for (size_t i = 0; i < ps->nslots; i++) {
		struct slot *s = &ps->slots[i];
		if (s->parked == PARK_SNAPSHOT &&
		    snapshot_due(ps, s->want, s->wk)) {
			reply_values(ps, s, TFKIT__PS__REPLY__STATUS__OK, 1,
			             UINT32_MAX);
		}
	}
}

/* ---- steps ------------------------------------------------------------- */

static void
apply(struct ps *ps, const float *g, float lr)
{
	tf_optim_step(ps->o, ps->params, g, lr);
	ps->step++;
}

/* Sync: the step's gradients so far, their mean applied in trainer
 * order, and every held push answered. */
static void
complete_step(struct ps *ps)
{
	uint64_t wd = width(ps);
	memset(ps->mean, 0, wd * sizeof *ps->mean);
	for (uint32_t t = 0; t < ps->trainers; t++) {
		if (!ps->have[t]) {
			continue;
		}
		const float *g = ps->agg + (size_t)t * wd;
		for (uint64_t i = 0; i < wd; i++) {
			ps->mean[i] += g[i];
		}
		ps->w[t].applied++;
		if (ps->pool != NULL) {
			tfi_pool_applied(ps->pool, t, ps->w[t].spans,
			                 ps->w[t].nspans);
		}
		ps->w[t].nspans = 0;
	}
	float inv = 1.0f / (float)ps->nhave;
	for (uint64_t i = 0; i < wd; i++) {
		ps->mean[i] *= inv;
	}
	apply(ps, ps->mean, ps->lr);
	memset(ps->have, 0, ps->trainers);
	ps->nhave = 0;
	for (size_t i = 0; i < ps->nslots; i++) {
		struct slot *s = &ps->slots[i];
		if (s->parked == PARK_PUSH) {
			reply_values(ps, s, TFKIT__PS__REPLY__STATUS__OK, 0,
			             UINT32_MAX);
		}
	}
	answer_snapshots(ps);
	if (ps->pool != NULL) {
		answer_takes(ps, 0); /* the run may be over */
	}
}

/* ---- requests ------------------------------------------------------------
 */

/* The shard and its optimizer, freed (a refused INIT, the end). */
static void
shard_free(struct ps *ps)
{
	free(ps->params);
	free(ps->agg);
	free(ps->mean);
	free(ps->have);
	for (uint32_t t = 0; ps->w != NULL && t < ps->trainers; t++) {
		free(ps->w[t].spans);
	}
	free(ps->w);
	free(ps->gone);
	tfi_pool_free(ps->pool);
	ps->pool = NULL;
	ps->gone = NULL;
	ps->chunked = 0;
	tf_optim_free(ps->o);
	tf_hparams_free(ps->h);
	ps->params = ps->agg = ps->mean = NULL;
	ps->have = NULL;
	ps->w = NULL;
	ps->nlost = 0;
	ps->nlost_ids = 0;
	ps->o = NULL;
	ps->h = NULL;
	ps->trainers = 0;
}

static int
init_shard(struct ps *ps, const Tfkit__Ps__Request *q, char *err, size_t errlen)
{
	uint64_t n = q->n, P = ps->cfg->count, k = ps->cfg->index;
	uint64_t lo = k * n / P, hi = (k + 1) * n / P, wd = hi - lo;
	const struct tf_optimizer *opt =
	    tf_registry_optimizer(ps->reg, q->optimizer);
	if (opt == NULL) {
		snprintf(err, errlen, "unknown optimizer '%s' on this ps",
		         q->optimizer);
		return -1;
	}
	if (q->values.len != wd * sizeof(float) || q->total_replicas < 1 ||
	    q->total_replicas > 65536) {
		snprintf(err, errlen,
		         "INIT of %zu bytes for a shard of %llu values",
		         q->values.len, (unsigned long long)wd);
		return -1;
	}
	/* A refused INIT leaves nothing allocated: the next one starts
	 * clean (shard_free). */
	ps->h = tf_hparams_new();
	ps->o = tf_optim_new();
	ps->params = malloc((wd ? wd : 1) * sizeof *ps->params);
	ps->trainers = q->total_replicas;
	/* a gradient buffer a trainer only when steps are synchronous */
	ps->agg = malloc((q->sync ? (size_t)ps->trainers : 1) * (wd ? wd : 1) *
	                 sizeof(float));
	ps->mean = malloc((wd ? wd : 1) * sizeof(float));
	ps->have = calloc(ps->trainers, 1);
	ps->w = calloc(ps->trainers, sizeof *ps->w);
	ps->gone = calloc(ps->trainers, 1);
	if (!ps->h || !ps->o || !ps->params || !ps->agg || !ps->mean ||
	    !ps->have || !ps->w || !ps->gone) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	char *hp = strdup(q->hparams ? q->hparams : "");
	for (char *t = hp ? strtok(hp, ",") : NULL; t; t = strtok(NULL, ",")) {
		if (tf_hparams_parse(ps->h, t) != TF_OK) {
			snprintf(err, errlen, "%s", tf_errmsg(ps->h));
			free(hp);
			goto fail;
		}
	}
	free(hp);
	if (tf_optim_init(ps->o, opt, ps->h, wd) != TF_OK) {
		snprintf(err, errlen, "%s", tf_errmsg(ps->o));
		goto fail;
	}
	unsigned ns = tf_optim_nslots(ps->o);
	if (q->slots.len != 0 && q->slots.len != ns * wd * sizeof(float)) {
		snprintf(err, errlen, "INIT with %zu bytes of slots, not %zu",
		         q->slots.len, (size_t)(ns * wd * sizeof(float)));
		goto fail;
	}
	char why[200];
	if (q->pool != NULL && q->pool[0] != '\0' &&
	    (ps->pool = tfi_pool_parse(q->pool, ps->trainers, why,
	                               sizeof why)) == NULL) {
		snprintf(err, errlen, "INIT with a pool of chunks: %s", why);
		goto fail;
	}
	ps->chunked = ps->pool != NULL || q->take != 0;
	copy_bytes(ps->params, q->values.data, wd * sizeof(float));
	for (unsigned i = 0; i < ns && q->slots.len > 0; i++) {
		copy_bytes(tf_optim_slot(ps->o, i),
		           q->slots.data + (size_t)i * wd * sizeof(float),
		           wd * sizeof(float));
	}
	tf_optim_set_steps(ps->o, q->step);
	snprintf(ps->optimizer, sizeof ps->optimizer, "%s", q->optimizer);
	ps->n = n;
	ps->model = q->model;
	ps->lo = lo;
	ps->hi = hi;
	ps->step = q->step;
	ps->sync = q->sync;
	ps->k =
	    q->replicas_to_aggregate ? q->replicas_to_aggregate : ps->trainers;
	ps->staleness = q->staleness;
	ps->peer_timeout = q->peer_timeout > 0 ? q->peer_timeout : 60;
	ps->init = 1;
	ps->init_at = tfi_now();
	/* No request is larger than an INIT of this shard with its slots
	 * (a sparse push's block list is at most as long): anything larger
	 * is refused by nng from now on, never buffered. */
	if (nng_socket_id(ps->sock) > 0) {
		size_t most = (size_t)(ns + 1) * wd * sizeof(float) + 20 * wd +
		              ((size_t)1 << 20);
		if (ps->cfg->max_message == 0 || most < ps->cfg->max_message) {
			nng_socket_set_size(ps->sock, NNG_OPT_RECVMAXSZ, most);
		}
	}
	note(ps,
	     "ps %zu: values %llu to %llu of %llu at step %llu, %s, %s (%u "
	     "of %u trainers a step)",
	     ps->cfg->index, (unsigned long long)lo, (unsigned long long)hi,
	     (unsigned long long)n, (unsigned long long)q->step, q->optimizer,
	     ps->sync ? "sync" : "async", ps->sync ? ps->k : 1, ps->trainers);
	note_pool(ps);
	return 0;
fail:
	shard_free(ps);
	return -1;
}

/* A sync push's rows by chunk, kept until its step is taken. */
static int
keep_spans(struct worker *w, const Tfkit__Ps__Request *q)
{
	if (q->n_chunks > w->capspans) {
		uint64_t *p = realloc(w->spans, q->n_chunks * sizeof *p);
		if (p == NULL) {
			return -1;
		}
		w->spans = p;
		w->capspans = q->n_chunks;
	}
	copy_bytes(w->spans, q->chunks, q->n_chunks * sizeof *q->chunks);
	w->nspans = q->n_chunks;
	return 0;
}

static void
push(struct ps *ps, struct slot *s, const Tfkit__Ps__Request *q)
{
	uint32_t wk = q->worker;
	struct worker *w = &ps->w[wk];
	uint64_t wd = width(ps);
	if (q->seq != 0 && q->seq == w->seq) {
		/* A resend of the last push: never applied twice. */
		if (ps->sync && ps->have[wk]) {
			s->parked = PARK_PUSH;
		} else {
			reply_values(ps, s, TFKIT__PS__REPLY__STATUS__OK, 0,
			             wk);
		}
		return;
	}
	w->seq = q->seq;
	w->sent++;
	if (w->done && !w->lost) { /* it waited for a chunk, and has one */
		w->done = 0;
		ps->done--;
	}
	w->examples += q->examples;
	w->epoch = q->epoch;
	w->done_rows = q->done;
	if (q->last_ms > 0 && isfinite(q->last_ms)) {
		w->ms += q->last_ms;
		w->nms++;
	}
	uint64_t sent = wd;
	if (q->sparse && take_ranges(ps, q->blocks, q->n_blocks, &sent) != 0) {
		sent = UINT64_MAX; /* refused below */
	}
	if (q->values.len != sent * sizeof(float) ||
	    !isfinite(q->learning_rate)) {
		w->invalid++;
		char msg[160];
		snprintf(msg, sizeof msg,
		         "a gradient of %zu bytes computed at step %llu: this "
		         "shard has %llu values and is at step %llu",
		         q->values.len, (unsigned long long)q->step,
		         (unsigned long long)wd, (unsigned long long)ps->step);
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR, msg, wk);
		return;
	}
	/* Values newer than this shard's: it was restored from the last
	 * checkpoint after a restart; the gradient is of now. */
	uint64_t t = q->step > ps->step ? ps->step : q->step;
	if (!ps->sync) {
		if (ps->step - t > ps->staleness) {
			w->stale++;
			reply_values(ps, s, TFKIT__PS__REPLY__STATUS__STALE, 0,
			             wk);
			return;
		}
		dense_gradient(ps, q, ps->mean);
		apply(ps, ps->mean, q->learning_rate);
		w->applied++;
		reply_values(ps, s, TFKIT__PS__REPLY__STATUS__OK, 0, wk);
		answer_snapshots(ps);
		if (ps->pool != NULL) {
			tfi_pool_applied(ps->pool, wk, q->chunks, q->n_chunks);
			answer_takes(ps, 0);
		}
		return;
	}
	if (t < ps->step || ps->have[wk]) {
		w->backup++; /* the step had its share */
		reply_values(ps, s, TFKIT__PS__REPLY__STATUS__DROPPED, 0, wk);
		return;
	}
	if (keep_spans(w, q) != 0) {
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR,
		             "out of memory", wk);
		return;
	}
	dense_gradient(ps, q, ps->agg + (size_t)wk * wd);
	if (ps->nhave == 0) {
		ps->first = tfi_now();
		ps->lr = q->learning_rate;
	}
	ps->have[wk] = 1;
	ps->nhave++;
	s->parked = PARK_PUSH;
	if (ps->nhave >= needed(ps)) {
		complete_step(ps);
	}
}

/* What ps 0 hands out, said once it has its pool. */
static void
note_pool(struct ps *ps)
{
	char *j = ps->pool ? tfi_pool_status(ps->pool) : NULL;
	json_t *o = j ? json_loads(j, 0, NULL) : NULL;
	if (o != NULL) {
		json_int_t e = json_integer_value(json_object_get(o, "epoch"));
		json_int_t n = json_integer_value(json_object_get(o, "epochs"));
		note(
		    ps,
		    "ps %zu: hands out %lld chunks of up to %lld records "
		    "(%lld records an epoch), %s epoch %lld%s%lld",
		    ps->cfg->index,
		    (long long)json_integer_value(json_object_get(o, "chunks")),
		    (long long)json_integer_value(
		        json_object_get(o, "chunk_size")),
		    (long long)json_integer_value(
		        json_object_get(o, "records")),
		    e > 0 ? "from" : "starting at", (long long)e,
		    n > 0 ? " of " : "", (long long)n);
	}
	json_decref(o);
	free(j);
}

/* The trainers training (not done, not lost), and in sync mode the
 * gradients a step now takes, for the notes. */
static void
trainers_text(const struct ps *ps, char *out, size_t len)
{
	uint32_t alive = ps->trainers - ps->nlost;
	int n =
	    snprintf(out, len, "%u of %u trainers remain", alive, ps->trainers);
	if (ps->sync && alive > 0 && n > 0 && (size_t)n < len) {
		uint32_t k = ps->k < alive ? ps->k : alive;
		snprintf(out + n, len - (size_t)n,
		         "; a sync step takes %u gradient%s", k,
		         k == 1 ? "" : "s");
	}
}

/*
 * The trainer process behind a request (its session): a new one (the
 * trainer started again) takes the place of the one before, whose
 * chunks go back to the pool; a process replaced, or one gone on
 * without in a run that hands out chunks, is told so (LOST) and its
 * request not taken.  1 when the request was answered here.
 */
static int
check_session(struct ps *ps, struct slot *s, uint32_t wk,
              const Tfkit__Ps__Request *q)
{
	struct worker *w = &ps->w[wk];
	if (q->session == 0) {
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		if (w->retired[i] == q->session) {
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__LOST,
			             "another process has taken this "
			             "trainer's place (the same task index)",
			             wk);
			return 1;
		}
	}
	if (w->session != 0 && w->session != q->session) {
		memmove(w->retired + 1, w->retired, 3 * sizeof *w->retired);
		w->retired[0] = w->session;
		/* a TAKE the process before left held gets no chunk */
		drop_takes(ps, s, wk, TFKIT__PS__REPLY__STATUS__LOST,
		           "another process has taken this trainer's place "
		           "(the same task index)");
		char what[800], alive[120];
		uint64_t back = give_back(ps, wk, what, sizeof what);
		if (w->lost) {
			set_lost(ps, wk, 0);
		}
		if (w->done) {
			w->done = 0;
			ps->done--;
		}
		trainers_text(ps, alive, sizeof alive);
		note(ps,
		     "ps %zu: step %llu: trainer %u started again (a new "
		     "process): %s%s%s",
		     ps->cfg->index, (unsigned long long)ps->step, wk, alive,
		     back ? "; the chunks the one before held go back to the "
		            "pool: "
		          : "",
		     what);
		w->session = q->session;
		w->took = 0;
		w->since = tfi_now();
		return 0;
	}
	if (w->session == 0) { /* its first request: one that joins late
		                * (lost before it started) is welcome */
		w->session = q->session;
		w->since = tfi_now();
		return 0;
	}
	if (w->lost && ps->chunked) {
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__LOST,
		             "the ps tasks went on without this trainer "
		             "(silent longer than --peer-timeout) and its "
		             "chunks went back to the pool: start it again to "
		             "rejoin",
		             wk);
		return 1;
	}
	return 0;
}

/* The TAKE held on slot s (s->want, of trainer s->wk) answered if it
 * can be: its chunk (the one it got before, when it asks again with the
 * same number), END, or an error; 1 then, 0 when there is no chunk for
 * it yet. */
static int
try_take(struct ps *ps, struct slot *s)
{
	uint32_t wk = s->wk;
	struct worker *w = &ps->w[wk];
	if (!(w->took && s->want == w->take)) {
		for (uint32_t k = 0; k < ps->trainers; k++) {
			ps->gone[k] = (unsigned char)ps->w[k].lost;
		}
		int r =
		    tfi_pool_take(ps->pool, wk, ps->gone, !ps->sync, &w->taken);
		if (r == TFI_TAKE_WAIT) {
			return 0;
		}
		if (r != TFI_TAKE_CHUNK) {
			reply_status(
			    ps, s,
			    r == TFI_TAKE_END ? TFKIT__PS__REPLY__STATUS__END
			                      : TFKIT__PS__REPLY__STATUS__ERROR,
			    r == TFI_TAKE_NOMEM ? "out of memory" : "", wk);
			return 1;
		}
		if (w->took == 0) {
			note(ps,
			     "ps %zu: trainer %u took its first chunk (chunk "
			     "%llu of epoch %llu) %.2f s after its first "
			     "request",
			     ps->cfg->index, wk,
			     (unsigned long long)w->taken.index,
			     (unsigned long long)w->taken.epoch,
			     tfi_now() - w->since);
		}
		w->took++;
		w->take = s->want;
	}
	const struct tfi_chunk *c = &w->taken;
	uint64_t v[8] = {c->epoch, c->index, c->file, c->off,
	                 c->rec,   c->count, c->skip, c->bytes};
	Tfkit__Ps__Reply r = TFKIT__PS__REPLY__INIT;
	r.message = "";
	r.step = ps->step;
	r.lo = ps->lo;
	r.hi = ps->hi;
	r.workers_done = ps->done;
	r.chunk = v;
	r.n_chunk = 8;
	send_reply(ps, s, &r, wk);
	return 1;
}

/* The held TAKEs answered that can be now; those held until t or
 * longer (t 0: none) answered WAIT. */
static void
answer_takes(struct ps *ps, double t)
{
	for (size_t i = 0; i < ps->nslots; i++) {
		struct slot *s = &ps->slots[i];
		if (s->parked == PARK_TAKE && !try_take(ps, s) && t > 0 &&
		    t >= s->until) {
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__WAIT, "",
			             s->wk);
		}
	}
}

/* Trainer wk's held TAKEs (but the one on slot s) answered with status
 * and no chunk. */
static void
drop_takes(struct ps *ps, const struct slot *s, uint32_t wk, int status,
           const char *msg)
{
	for (size_t i = 0; i < ps->nslots; i++) {
		struct slot *o = &ps->slots[i];
		if (o != s && o->parked == PARK_TAKE && o->wk == wk) {
			reply_status(ps, o, status, msg, wk);
		}
	}
}

/* TAKE: the trainer's next chunk, or END; with none for it yet, held up
 * to TAKE_HOLD for one to come free, then WAIT (at once without a
 * socket: no clock ticks there). */
static void
take(struct ps *ps, struct slot *s, uint32_t wk, const Tfkit__Ps__Request *q)
{
	if (ps->pool == NULL) {
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR,
		             "this ps hands out no chunks (the chief gives ps "
		             "0 the pool, with --chunk-size)",
		             wk);
		return;
	}
	/* one held for the same trainer: it asked again, having given up
	 * on that one */
	drop_takes(ps, s, wk, TFKIT__PS__REPLY__STATUS__WAIT, "");
	s->want = q->take;
	s->wk = wk;
	s->until = tfi_now() + TAKE_HOLD;
	if (!try_take(ps, s)) {
		if (s->aio != NULL) {
			s->parked = PARK_TAKE;
		} else {
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__WAIT, "",
			             wk);
		}
	}
}

/* Trainer wk's chunks back to ps 0's pool (none elsewhere), which in
 * what (for the caller's note); held TAKEs may now have one.  The
 * records given back. */
static uint64_t
give_back(struct ps *ps, uint32_t wk, char *what, size_t len)
{
	what[0] = '\0';
	if (ps->pool == NULL) {
		return 0;
	}
	uint64_t back = tfi_pool_give_back(ps->pool, wk, what, len);
	if (back > 0) {
		answer_takes(ps, 0);
	}
	return back;
}

/* The counters as one JSON object (the caller frees it). */
static char *
status_json(const struct ps *ps)
{
	json_t *o = json_pack(
	    "{s:I,s:b,s:I,s:I,s:I,s:s,s:I}", "ps", (json_int_t)ps->cfg->index,
	    "initialized", ps->init, "step", (json_int_t)ps->step, "lo",
	    (json_int_t)ps->lo, "hi", (json_int_t)ps->hi, "mode",
	    !ps->init  ? ""
	    : ps->sync ? "sync"
	               : "async",
	    "workers_done", (json_int_t)ps->done);
	json_t *a = json_array();
	json_int_t seen = 0;
	for (uint32_t t = 0; ps->init && t < ps->trainers; t++) {
		const struct worker *w = &ps->w[t];
		seen += w->seen;
		json_array_append_new(
		    a,
		    json_pack(
		        "{s:I,s:I,s:I,s:{s:I,s:I,s:I},s:I,s:I,s:b,s:b}",
		        "worker", (json_int_t)t, "sent", (json_int_t)w->sent,
		        "applied", (json_int_t)w->applied, "dropped", "stale",
		        (json_int_t)w->stale, "backup", (json_int_t)w->backup,
		        "invalid", (json_int_t)w->invalid, "bytes_in",
		        (json_int_t)w->bytes_in, "bytes_out",
		        (json_int_t)w->bytes_out, "done", w->done, "lost",
		        w->lost));
		json_object_set_new(
		    json_array_get(a, t), "exchange_ms",
		    json_real(w->nms ? w->ms / (double)w->nms : 0.0));
		json_object_set_new(json_array_get(a, t), "keepalives",
		                    json_integer((json_int_t)w->alive));
	}
	json_object_set_new(o, "workers_seen", json_integer(seen));
	json_object_set_new(o, "workers", a);
	char *pj = ps->pool ? tfi_pool_status(ps->pool) : NULL;
	if (pj != NULL) {
		json_object_set_new(o, "pool", json_loads(pj, 0, NULL));
		free(pj);
	}
	char *j = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return j;
}

/* A chief's INIT to a ps that has its shard already (restored from a
 * checkpoint, or the chief restarted): its pool, where this ps has
 * none. */
static void
take_pool(struct ps *ps, const Tfkit__Ps__Request *q)
{
	char why[200];
	ps->chunked |= q->take != 0 || (q->pool != NULL && q->pool[0]);
	if (ps->pool != NULL || q->pool == NULL || q->pool[0] == '\0') {
		return;
	}
	ps->pool = tfi_pool_parse(q->pool, ps->trainers, why, sizeof why);
	if (ps->pool == NULL) {
		note(ps, "ps %zu: the chief's pool of chunks refused: %s",
		     ps->cfg->index, why);
	} else {
		note_pool(ps);
	}
}

static void
handle(struct ps *ps, struct slot *s, const uint8_t *d, size_t len)
{
	Tfkit__Ps__Request *q = tfkit__ps__request__unpack(NULL, len, d);
	ps->last_request = tfi_now();
	ps->requests++;
	s->nranges = 0; /* replies hold the whole shard unless asked */
	s->some = 0;
	if (q == NULL) {
		note(ps, "a malformed request of %zu bytes: refused", len);
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR,
		             "malformed request", UINT32_MAX);
		return;
	}
	char err[512];
	uint32_t wk = q->worker;
	if (q->version != TF_PS_PROTOCOL) {
		snprintf(err, sizeof err,
		         "protocol version %u; this ps speaks %d", q->version,
		         TF_PS_PROTOCOL);
		note(ps, "a request of %s: refused", err);
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR, err,
		             UINT32_MAX);
	} else if (ps->cfg->token != NULL &&
	           strcmp(q->token, ps->cfg->token) != 0) {
		note(ps, "a request with a wrong token (worker %u): refused",
		     wk);
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR,
		             "wrong token", UINT32_MAX);
	} else if (q->kind == TFKIT__PS__REQUEST__KIND__STATUS) {
		char *j = status_json(ps);
		Tfkit__Ps__Reply r = TFKIT__PS__REPLY__INIT;
		r.message = "";
		r.status_json = j ? j : "{}";
		r.step = ps->step;
		r.workers_done = ps->done;
		send_reply(ps, s, &r, UINT32_MAX);
		free(j);
	} else if (q->kind == TFKIT__PS__REQUEST__KIND__INIT) {
		if (ps->init) { /* a chief that restarted: go on */
			take_pool(ps, q);
			reply_values(ps, s, TFKIT__PS__REPLY__STATUS__OK, 0,
			             UINT32_MAX);
		} else if (init_shard(ps, q, err, sizeof err) != 0) {
			note(ps, "INIT refused: %s", err);
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR,
			             err, UINT32_MAX);
		} else {
			reply_values(ps, s, TFKIT__PS__REPLY__STATUS__OK, 0,
			             UINT32_MAX);
		}
	} else if (!ps->init) {
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__NOT_READY,
		             "not initialised yet", UINT32_MAX);
	} else if (wk >= ps->trainers || q->n != ps->n) {
		snprintf(err, sizeof err,
		         "trainer %u of a model of %llu values: this ps serves "
		         "%u trainers and %llu values",
		         wk, (unsigned long long)q->n, ps->trainers,
		         (unsigned long long)ps->n);
		note(ps, "a request refused: %s", err);
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR, err,
		             UINT32_MAX);
		lose_refused(ps, wk);
	} else if (q->model != 0 && ps->model != 0 && q->model != ps->model) {
		snprintf(
		    err, sizeof err,
		    "trainer %u's model is not the chief's: its parameters "
		    "stand for other rows (its data's schema has other "
		    "inputs, another id vocabulary, or other vocabularies "
		    "or classes); convert all the data in one "
		    "tf-csv2record run (-n N for a file a trainer), or give "
		    "each trainer the same --schema",
		    wk);
		note(ps, "a request refused: %s", err);
		reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR, err,
		             UINT32_MAX);
		lose_refused(ps, wk);
	} else if (check_session(ps, s, wk, q)) {
		/* refused: a process replaced or gone on without */
	} else {
		struct worker *w = &ps->w[wk];
		w->bytes_in += len;
		int first = !w->seen;
		w->seen = 1;
		w->last = ps->last_request;
		if (w->lost) { /* back (restarted): it trains again */
			char alive[120];
			set_lost(ps, wk, 0);
			w->done = 0;
			ps->done--;
			trainers_text(ps, alive, sizeof alive);
			note(ps, "ps %zu: step %llu: trainer %u %s: %s",
			     ps->cfg->index, (unsigned long long)ps->step, wk,
			     first ? "joined" : "is back", alive);
		}
		if ((q->kind == TFKIT__PS__REQUEST__KIND__PULL ||
		     q->kind == TFKIT__PS__REQUEST__KIND__PUSH) &&
		    keep_want(ps, s, q) != 0) {
			w->invalid++;
			note(ps,
			     "a request for ranges outside the shard "
			     "(worker %u): refused",
			     wk);
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR,
			             "ranges outside the shard", wk);
			tfkit__ps__request__free_unpacked(q, NULL);
			return;
		}
		switch (q->kind) {
		case TFKIT__PS__REQUEST__KIND__PULL:
			reply_values(ps, s, TFKIT__PS__REPLY__STATUS__OK, 0,
			             wk);
			break;
		case TFKIT__PS__REQUEST__KIND__PUSH:
			push(ps, s, q);
			break;
		case TFKIT__PS__REQUEST__KIND__SNAPSHOT:
			s->want = q->step;
			s->wk = wk;
			if (snapshot_due(ps, q->step, wk)) {
				reply_values(
				    ps, s, TFKIT__PS__REPLY__STATUS__OK, 1, wk);
			} else {
				s->parked = PARK_SNAPSHOT;
			}
			break;
		case TFKIT__PS__REQUEST__KIND__TAKE:
			take(ps, s, wk, q);
			break;
		case TFKIT__PS__REQUEST__KIND__DONE:
			/* one idle (waiting for a chunk) may still train the
			 * chunks it read ahead: they stay its own (lost, if
			 * it goes silent holding them) */
			if (q->take == 0) {
				char what[800];
				uint64_t back =
				    give_back(ps, wk, what, sizeof what);
				if (back > 0) {
					note(ps,
					     "ps %zu: trainer %u is done and "
					     "gives back %llu records "
					     "untrained: %s",
					     ps->cfg->index, wk,
					     (unsigned long long)back, what);
				}
			}
			if (!w->done) {
				w->done = 1;
				ps->done++;
				if (ps->done == ps->trainers) {
					ps->all_done_at = tfi_now();
				}
				answer_snapshots(ps); /* one fewer to step */
			}
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__OK, "",
			             wk);
			if (ps->sync && ps->nhave > 0 &&
			    ps->nhave >= needed(ps)) {
				complete_step(ps);
			}
			break;
		case TFKIT__PS__REQUEST__KIND__ALIVE:
			/* its round waits on another ps (a sync step there
			 * waiting for a silent trainer, a ps paused): heard
			 * from, so not lost here meanwhile */
			w->alive++;
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__OK, "",
			             wk);
			break;
		case TFKIT__PS__REQUEST__KIND__FINISH:
			ps->finish = 1;
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__OK, "",
			             wk);
			break;
		default:
			reply_status(ps, s, TFKIT__PS__REPLY__STATUS__ERROR,
			             "unknown request", wk);
		}
	}
	tfkit__ps__request__free_unpacked(q, NULL);
}

static void
slot_done(void *arg)
{
	struct slot *s = arg;
	struct ps *ps = s->ps;
	int rv = nng_aio_result(s->aio);
	pthread_mutex_lock(&ps->mu);
	if (ps->closing || rv == NNG_ECLOSED) {
		if (rv != 0 && s->sending) {
			nng_msg_free(nng_aio_get_msg(s->aio));
		}
		s->sending = 0;
		pthread_mutex_unlock(&ps->mu);
		return;
	}
	if (s->sending) {
		s->sending = 0;
		if (rv != 0) {
			nng_msg_free(nng_aio_get_msg(s->aio));
		}
		nng_ctx_recv(s->ctx, s->aio);
	} else if (rv != 0) {
		nng_ctx_recv(s->ctx, s->aio);
	} else {
		nng_msg *m = nng_aio_get_msg(s->aio);
		handle(ps, s, nng_msg_body(m), nng_msg_len(m));
		nng_msg_free(m);
	}
	pthread_mutex_unlock(&ps->mu);
}

/* Trainer k lost (on) or back: its flag, the count and the list the
 * replies carry, rebuilt on each change (rare; replies only read it). */
static void
set_lost(struct ps *ps, uint32_t k, int on)
{
	ps->nlost += on ? 1 : -1;
	ps->w[k].lost = on;
	ps->nlost_ids = 0;
	for (uint32_t j = 0; j < ps->trainers && ps->nlost_ids < 64; j++) {
		if (ps->w[j].lost) {
			ps->lost_ids[ps->nlost_ids++] = j;
		}
	}
}

/* Trainer k taken for gone at time t, why (a note's words): the run goes
 * on without it, the records it held back to the pool. */
static void
lose(struct ps *ps, uint32_t k, double t, const char *why)
{
	struct worker *w = &ps->w[k];
	set_lost(ps, k, 1);
	if (!w->done) {
		w->done = 1;
		ps->done++;
	}
	char what[800], alive[120], tail[900] = "";
	uint64_t back = give_back(ps, k, what, sizeof what);
	if (back > 0) {
		snprintf(tail, sizeof tail,
		         "; %llu records it held untrained go back to the "
		         "pool: %s",
		         (unsigned long long)back, what);
	}
	trainers_text(ps, alive, sizeof alive);
	note(ps, "ps %zu: step %llu: trainer %u %s: going on without it (%s)%s",
	     ps->cfg->index, (unsigned long long)ps->step, k, why, alive, tail);
	if (ps->done == ps->trainers) {
		ps->all_done_at = t;
	}
}

/* After trainers were lost: a sync step they held up completes. */
static void
after_lost(struct ps *ps)
{
	if (ps->sync && ps->nhave > 0 && ps->nhave >= needed(ps)) {
		complete_step(ps); /* the snapshots answered there too */
	} else {
		answer_snapshots(ps);
	}
}

/* A trainer that has been silent for the peer timeout (not one held in
 * a sync step here; one held by another ps says ALIVE) is taken for
 * gone: the run goes on without it.  Returns whether one was. */
static int
lose_silent(struct ps *ps, double t)
{
	int any = 0;
	for (uint32_t k = 0; k < ps->trainers; k++) {
		struct worker *w = &ps->w[k];
		double since = w->seen ? w->last : ps->init_at;
		/* one waiting for a chunk (done meanwhile) that got one and
		 * went silent: its chunk goes back too */
		if (w->lost || ps->have[k] || t - since <= ps->peer_timeout ||
		    (w->done &&
		     !(ps->pool != NULL && tfi_pool_holds(ps->pool, k)))) {
			continue;
		}
		char why[120];
		snprintf(why, sizeof why, "%s for %g s (--peer-timeout)",
		         w->seen ? "silent" : "not heard from since the start",
		         ps->peer_timeout);
		lose(ps, k, t, why);
		any = 1;
	}
	if (any) {
		after_lost(ps);
	}
	return any;
}

/* A trainer refused for good (a model of another size or of other rows:
 * it stops, exit 64) is gone now, not after the peer timeout: the
 * chief's steps do not wait for it.  Not the chief, whose own refusal
 * ends the run. */
static void
lose_refused(struct ps *ps, uint32_t k)
{
	if (k == 0 || k >= ps->trainers || ps->w[k].lost || ps->w[k].seen) {
		return;
	}
	lose(ps, k, ps->last_request, "refused (above)");
	after_lost(ps);
}

/* When the chief (trainer 0) was last heard from, or all were done. */
static double
chief_heard(const struct ps *ps)
{
	double t = ps->all_done_at;
	return ps->trainers > 0 && ps->w[0].seen && ps->w[0].last > t
	           ? ps->w[0].last
	           : t;
}

/* How long a chief silent after every trainer is done is waited for:
 * longer than it waits for another ps that does not answer. */
static double
done_grace(const struct ps *ps)
{
	return ps->peer_timeout + 10 > DONE_GRACE ? ps->peer_timeout + 10
	                                          : DONE_GRACE;
}

/* A ps started again where the chief checkpoints: its shard, slots,
 * step and optimizer from the latest checkpoint, as the chief's INIT
 * would give them.  0 when there is none. */
static int
restore_shard(struct ps *ps)
{
	char path[4096], err[256];
	const struct tf_ps_config *cfg = ps->cfg;
	if (cfg->checkpoint_dir == NULL ||
	    tf_ckpt_latest(cfg->checkpoint_dir, path, sizeof path) != TF_OK) {
		return 0;
	}
	struct tf_ckpt *ck = tf_ckpt_new();
	struct tf_ckpt_header h;
	tf_ckpt_header_init(&h);
	int rc = ck == NULL ? TF_ENOMEM : tf_ckpt_load(ck, path);
	rc = rc ? rc : tf_ckpt_get_header(ck, &h);
	size_t n = 0;
	if (rc == TF_OK && tf_ckpt_size(ck, "params", &n) != TF_OK) {
		rc = tfi_set_error(ck, TF_EFORMAT, "%s: no parameters", path);
	}
	char *hp = rc ? NULL : tfi_hparams_text(h.hparams);
	uint64_t P = cfg->count, k = cfg->index;
	uint64_t lo = k * n / P, hi = (k + 1) * n / P, wd = hi - lo;
	/* only this shard's values, decoded from the checkpoint's runs */
	float *params = rc ? NULL : malloc(wd * sizeof(float) + 1);
	float *slots = NULL;
	if (rc == TF_OK && (params == NULL || hp == NULL)) {
		rc = tfi_set_error(ck, TF_ENOMEM, "out of memory");
	}
	if (rc == TF_OK) {
		rc = tf_ckpt_read_part(ck, "params", lo, params, wd);
	}
	unsigned ns = 0;
	for (; rc == TF_OK; ns++) {
		char name[32];
		size_t got;
		snprintf(name, sizeof name, "slot%u", ns);
		if (tf_ckpt_size(ck, name, &got) != TF_OK || got != n) {
			break;
		}
		float *more =
		    realloc(slots, ((ns + 1) * wd + 1) * sizeof *more);
		if (more == NULL) {
			rc = tfi_set_error(ck, TF_ENOMEM, "out of memory");
			break;
		}
		slots = more;
		rc = tf_ckpt_read_part(ck, name, lo, slots + ns * wd, wd);
	}
	if (rc == TF_OK) {
		Tfkit__Ps__Request q = TFKIT__PS__REQUEST__INIT;
		q.n = n;
		if (h.schema != NULL &&
		    tfi_model_key(h.schema, &q.model) != TF_OK) {
			q.model = 0; /* (the trainers' checked against none) */
		}
		q.step = h.step;
		q.values.data = (uint8_t *)params;
		q.values.len = wd * sizeof(float);
		q.slots.data = (uint8_t *)slots;
		q.slots.len = ns * wd * sizeof(float);
		q.optimizer = h.optimizer;
		q.hparams = hp;
		q.sync = cfg->sync;
		q.replicas_to_aggregate = cfg->replicas_to_aggregate;
		q.total_replicas = (uint32_t)cfg->trainers;
		q.staleness = cfg->staleness;
		q.peer_timeout = cfg->peer_timeout;
		/* ps 0 holds the pool of chunks, as the checkpoint has it */
		q.pool = k == 0 && h.pool != NULL ? h.pool : "";
		q.take = h.pool != NULL;
		if (init_shard(ps, &q, err, sizeof err) != 0) {
			note(ps, "ps %zu: cannot take its shard from %s: %s",
			     cfg->index, path, err);
		} else {
			note(ps, "ps %zu: shard restored from %s", cfg->index,
			     path);
		}
	} else {
		note(ps, "ps %zu: cannot take its shard from %s: %s",
		     cfg->index, path,
		     ck ? tf_errmsg(ck) : tf_strerror(TF_ENOMEM));
	}
	free(slots);
	free(params);
	free(hp);
	tf_ckpt_header_release(&h);
	tf_ckpt_free(ck);
	return ps->init;
}

/* ---- the server ---------------------------------------------------------- */

/* Everything a ps holds (its sockets' aios stopped first). */
static void
ps_release(struct ps *ps)
{
	for (size_t i = 0; i < ps->nslots; i++) {
		if (ps->slots[i].aio != NULL) {
			nng_aio_free(ps->slots[i].aio);
		}
		free(ps->slots[i].ranges);
		free(ps->slots[i].reply);
	}
	free(ps->slots);
	free(ps->vals);
	shard_free(ps);
	pthread_mutex_destroy(&ps->mu);
}

/* Listen on one URL: plain tcp, or TLS with this ps's certificate
 * (tls+tcp://). */
static int
listen_url(struct ps *ps, const char *url)
{
	const struct tf_ps_config *cfg = ps->cfg;
	if (cfg->tls_cert_key == NULL) {
		return nng_listen(ps->sock, url, NULL, 0);
	}
	nng_listener l;
	nng_tls_config *tc = NULL;
	int rv = nng_listener_create(&l, ps->sock, url);
	if (rv == 0) {
		rv = nng_tls_config_alloc(&tc, NNG_TLS_MODE_SERVER);
	}
	if (rv == 0 && (rv = nng_tls_config_cert_key_file(tc, cfg->tls_cert_key,
	                                                  NULL)) != 0) {
		note(ps, "%s: not a PEM certificate and key: %s",
		     cfg->tls_cert_key, nng_strerror(rv));
	}
	if (rv == 0) {
		rv = nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, tc);
	}
	if (rv == 0) {
		rv = nng_listener_start(l, 0);
	}
	if (tc != NULL) {
		nng_tls_config_free(tc); /* the listener holds it */
	}
	return rv;
}

/* Listen on every address of the configured one (a host name's, and the
 * IPv6 ones of listen_v6): a trainer may reach any of them.  An address
 * the machine does not have (IPv6 turned off) is passed over; the port
 * taken on any, or none listened on, fails.  where: the URLs listened
 * on, for the log. */
static int
listen_on(struct ps *ps, char *where, size_t size)
{
	const struct tf_ps_config *cfg = ps->cfg;
	char urls[TFI_URLS_MAX][TFI_URL_MAX], err[300];
	int n = tfi_url_addresses(cfg->listen, urls, TFI_URLS_MAX, 0, err,
	                          sizeof err);
	if (n < 0) {
		note(ps, "cannot resolve %s: %s", cfg->listen, err);
		return NNG_EADDRINVAL;
	}
	if (cfg->listen_v6 != NULL) {
		int k = tfi_url_addresses(cfg->listen_v6, urls + n,
		                          TFI_URLS_MAX - n, 1, err, sizeof err);
		n += k > 0 ? k : 0;
	}
	int ok = 0;
	size_t len = 0;
	where[0] = '\0';
	for (int i = 0; i < n; i++) {
		int r = listen_url(ps, urls[i]);
		if (r == NNG_EADDRINVAL && (n > 1 || ok)) {
			continue; /* an address this machine lacks */
		}
		if (r != 0) {
			snprintf(where, size, "%s", urls[i]);
			return r;
		}
		ok++;
		len +=
		    (size_t)snprintf(where + len, len < size ? size - len : 0,
		                     "%s%s", len ? " " : "", urls[i]);
	}
	return ok ? 0 : NNG_EADDRINVAL;
}

int
tf_ps_run(const struct tf_registry *reg, const struct tf_ps_config *cfg,
          const struct tf_ps_sink *sink)
{
	struct ps ps = {0};
	ps.reg = reg;
	ps.cfg = cfg;
	ps.sink = sink;
	pthread_mutex_init(&ps.mu, NULL);
	int rv = nng_rep0_open(&ps.sock), rc = TF_OK;
	if (rv != 0) {
		note(&ps, "cannot open a socket: %s", nng_strerror(rv));
		pthread_mutex_destroy(&ps.mu);
		return TF_EIO;
	}
	nng_socket_set_size(ps.sock, NNG_OPT_RECVMAXSZ,
	                    cfg->max_message ? cfg->max_message : 1u << 30);
	char where[TFI_URLS_MAX * TFI_URL_MAX];
	if ((rv = listen_on(&ps, where, sizeof where)) != 0) {
		note(&ps, "cannot listen on %s: %s",
		     where[0] ? where : cfg->listen, nng_strerror(rv));
		nng_close(ps.sock);
		pthread_mutex_destroy(&ps.mu);
		return TF_EIO;
	}
	/* A context for each trainer's held push and held TAKE (and one
	 * it sent again), and some to spare. */
	ps.nslots = (cfg->trainers ? cfg->trainers : 1) * 3 + 8;
	ps.slots = calloc(ps.nslots, sizeof *ps.slots);
	if (ps.slots == NULL) {
		nng_close(ps.sock);
		pthread_mutex_destroy(&ps.mu);
		return TF_ENOMEM;
	}
	pthread_mutex_lock(&ps.mu);
	size_t started = 0;
	for (size_t i = 0; i < ps.nslots; i++) {
		struct slot *s = &ps.slots[i];
		s->ps = &ps;
		if (nng_aio_alloc(&s->aio, slot_done, s) != 0 ||
		    nng_ctx_open(&s->ctx, ps.sock) != 0) {
			rc = TF_ENOMEM;
			break;
		}
		started++;
		nng_ctx_recv(s->ctx, s->aio);
	}
	ps.last_request = ps.started_at = tfi_now();
	double startup = cfg->startup_timeout > 0 ? cfg->startup_timeout : 300;
	restore_shard(&ps);
	pthread_mutex_unlock(&ps.mu);
	note(&ps, "ps %zu of %zu listening on %s", cfg->index, cfg->count,
	     where);
	long tick = 20; /* ms; 2 while a TAKE is held (read under mu) */
	while (rc == TF_OK) {
		struct timespec ts = {0, tick * 1000 * 1000};
		nanosleep(&ts, NULL);
		if (sink != NULL && sink->stop != NULL &&
		    sink->stop(sink->ctx)) {
			note(&ps, "ps %zu: stopped at step %llu", cfg->index,
			     (unsigned long long)ps.step);
			break;
		}
		pthread_mutex_lock(&ps.mu);
		double t = tfi_now();
		int quit = 0;
		tick = 20;
		if (ps.pool != NULL) {
			answer_takes(&ps, t);
			for (size_t i = 0; i < ps.nslots; i++) {
				tick =
				    ps.slots[i].parked == PARK_TAKE ? 2 : tick;
			}
		}
		if (ps.finish) {
			note(&ps,
			     "ps %zu: the run is over at step %llu: exiting",
			     cfg->index, (unsigned long long)ps.step);
			quit = 1;
		} else if (ps.init && ps.done == ps.trainers &&
		           t - chief_heard(&ps) > done_grace(&ps)) {
			/* The chief snapshots and finishes right after its
			 * DONE; silent longer than a round trip takes it to
			 * give up on a ps, it has stopped. */
			uint32_t lost = ps.nlost;
			note(&ps,
			     "ps %zu: every trainer has reported done or been "
			     "lost (%u lost), and the chief has sent nothing "
			     "for %g s: it has stopped; exiting at step %llu "
			     "(the chief's last checkpoint holds the model)",
			     cfg->index, lost, done_grace(&ps),
			     (unsigned long long)ps.step);
			quit = 1;
		} else if (!ps.init &&
		           t - (ps.requests ? ps.last_request : ps.started_at) >
		               startup) {
			note(&ps,
			     "ps %zu: %s for %g s (--startup-timeout): exiting",
			     cfg->index,
			     ps.requests ? "the chief has not sent the model"
			                 : "no trainer has contacted this ps",
			     startup);
			rc = TF_EUNAVAIL;
			quit = 1;
		} else if (cfg->idle_timeout > 0 &&
		           t - ps.last_request > cfg->idle_timeout) {
			note(&ps,
			     "ps %zu: no request for %g s (--idle-timeout): "
			     "exiting at step %llu",
			     cfg->index, cfg->idle_timeout,
			     (unsigned long long)ps.step);
			quit = 1;
		} else if (ps.init && lose_silent(&ps, t)) {
			/* said in lose_silent() */
		} else if (ps.init && ps.sync && ps.nhave > 0 &&
		           t - ps.first > ps.peer_timeout) {
			char missing[256] = "";
			for (uint32_t k = 0; k < ps.trainers; k++) {
				size_t l = strlen(missing);
				if (!ps.have[k] && !ps.w[k].done &&
				    l + 16 < sizeof missing) {
					snprintf(missing + l,
					         sizeof missing - l, "%s%u",
					         l ? ", " : "", k);
				}
			}
			note(&ps,
			     "ps %zu: step %llu: %u of %u gradients after %g s "
			     "(--peer-timeout); going on without trainer %s",
			     cfg->index, (unsigned long long)ps.step, ps.nhave,
			     needed(&ps), ps.peer_timeout, missing);
			complete_step(&ps);
		}
		pthread_mutex_unlock(&ps.mu);
		if (quit) {
			/* The last replies (FINISH's) on their way out. */
			struct timespec g = {0, 100 * 1000 * 1000};
			nanosleep(&g, NULL);
			break;
		}
	}
	pthread_mutex_lock(&ps.mu);
	ps.closing = 1;
	char *counters = status_json(&ps);
	note(&ps, "ps %zu: counters %s", cfg->index, counters ? counters : "");
	free(counters);
	pthread_mutex_unlock(&ps.mu);
	/* Every context's operation stopped first (its callback, seeing
	 * closing, starts no other), then the socket: closed the other way
	 * round, nng 1.5.2 was seen to wait for ever in nng_close() when a
	 * trainer's request was on its way. */
	for (size_t i = 0; i < started; i++) {
		nng_aio_stop(ps.slots[i].aio);
	}
	nng_close(ps.sock);
	ps_release(&ps);
	return rc;
}

struct tf_ps {
	struct ps ps;
};

struct tf_ps *
tf_ps_new(const struct tf_registry *reg, const struct tf_ps_config *cfg,
          const struct tf_ps_sink *sink, size_t nctx)
{
	struct tf_ps *t = calloc(1, sizeof *t);
	if (t == NULL || nctx == 0) {
		free(t);
		return NULL;
	}
	struct ps *ps = &t->ps;
	ps->reg = reg;
	ps->cfg = cfg;
	ps->sink = sink;
	pthread_mutex_init(&ps->mu, NULL);
	ps->nslots = nctx;
	ps->slots = calloc(nctx, sizeof *ps->slots);
	if (ps->slots == NULL) {
		pthread_mutex_destroy(&ps->mu);
		free(t);
		return NULL;
	}
	for (size_t i = 0; i < nctx; i++) {
		ps->slots[i].ps = ps;
	}
	ps->last_request = tfi_now();
	restore_shard(ps);
	return t;
}

void
tf_ps_free(struct tf_ps *t)
{
	if (t != NULL) {
		ps_release(&t->ps);
		free(t);
	}
}

int
tf_ps_request(struct tf_ps *t, size_t i, const void *msg, size_t n)
{
	struct ps *ps = &t->ps;
	if (i >= ps->nslots) {
		return TF_EINVAL;
	}
	pthread_mutex_lock(&ps->mu);
	struct slot *s = &ps->slots[i];
	if (s->parked != PARK_NONE) {
		pthread_mutex_unlock(&ps->mu);
		return TF_EINVAL; /* still waiting for its answer */
	}
	s->answered = 0;
	handle(ps, s, msg, n);
	pthread_mutex_unlock(&ps->mu);
	return TF_OK;
}

int
tf_ps_reply(struct tf_ps *t, size_t i, const uint8_t **reply, size_t *n)
{
	struct ps *ps = &t->ps;
	if (i >= ps->nslots || !ps->slots[i].answered) {
		return TF_EOF;
	}
	*reply = ps->slots[i].reply;
	*n = ps->slots[i].reply_len;
	return TF_OK;
}
