/*
 * pool.c - the chunks of a distributed run's epochs, handed out on
 * request and marked done as their gradients are applied (pool.h).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "pool.h"
#include "tf/record.h"
#include "tf/rng.h"

/* Epochs open at once (a trainer this far ahead of the slowest epoch
 * waits); a chunk count the handing out stays quick with. */
#define MAX_OPEN   64
#define MAX_CHUNKS (1u << 24)

struct at {
	uint64_t file, off, rec, count;
};

/* An epoch some chunk of which has been taken and which is not done. */
struct ep {
	uint64_t epoch;
	uint32_t *order;   /* position -> chunk */
	uint64_t *applied; /* each chunk's records applied */
	int32_t *holder;   /* each chunk's trainer, -1 none */
	uint64_t left;     /* chunks not done */
	uint64_t trained;  /* records applied */
};

struct acct {
	uint64_t chunks, handed, applied, returned;
};

struct tfi_pool {
	uint64_t chunk_size, records, epochs, seed;
	int shuffle;
	size_t nfiles, nchunks;
	uint64_t *fbytes;
	struct at *at;
	uint32_t trainers;
	uint64_t base; /* the lowest epoch not done */
	struct ep open[MAX_OPEN];
	size_t nopen; /* by epoch */
	/* the epochs done: (epoch, records trained) pairs */
	uint64_t *done;
	size_t ndone, capdone;
	struct acct *w;
	uint64_t excess; /* rows applied past a chunk's end (never, if
	                    every record is trained once) */
};

/* ---- the plan ------------------------------------------------------------ */

static int
plan_file(json_t *chunks, const char *path, size_t f, uint64_t size,
          uint64_t *records, char *err, size_t errlen)
{
	struct tf_reader *r = tf_reader_new();
	if (r == NULL || tf_reader_open(r, path, TF_COMPRESS_AUTO) != TF_OK) {
		snprintf(err, errlen, "%s",
		         r ? tf_errmsg(r) : tf_strerror(TF_ENOMEM));
		tf_reader_free(r);
		return -1;
	}
	const uint8_t *d;
	size_t n;
	uint64_t i = 0, first = 0, off = 0;
	int rc;
	json_t *last = NULL;
	while ((rc = tf_reader_next(r, &d, &n)) == TF_OK) {
		if (i % size == 0) {
			if (last != NULL) { /* the one before: full */
				json_array_set_new(
				    last, 3, json_integer((json_int_t)size));
			}
			first = i;
			off = tf_reader_offset(r);
			last = json_pack("[I,I,I,I]", (json_int_t)f,
			                 (json_int_t)off, (json_int_t)first,
			                 (json_int_t)0);
			json_array_append_new(chunks, last);
		}
		i++;
	}
	if (last != NULL) {
		json_array_set_new(last, 3,
		                   json_integer((json_int_t)(i - first)));
	}
	if (rc != TF_EOF) {
		snprintf(err, errlen, "%s", tf_errmsg(r));
		tf_reader_free(r);
		return -1;
	}
	tf_reader_free(r);
	*records += i;
	return 0;
}

int
tfi_pool_plan(const char *const *files, size_t n, uint64_t chunk_size,
              uint64_t first, uint64_t epochs, uint64_t seed, int shuffle,
              char **json, char *err, size_t errlen)
{
	json_t *sizes = json_array(), *chunks = json_array();
	uint64_t records = 0;
	int rc = 0;
	for (size_t f = 0; f < n && rc == 0; f++) {
		struct stat st;
		if (strcmp(files[f], "-") == 0) {
			snprintf(err, errlen,
			         "standard input cannot be cut into chunks "
			         "(--chunk-size): give files");
			rc = -1;
		} else if (stat(files[f], &st) != 0 || !S_ISREG(st.st_mode)) {
			snprintf(
			    err, errlen,
			    "%s: not a regular file: it cannot be cut into "
			    "chunks (--chunk-size)",
			    files[f]);
			rc = -1;
		} else {
			json_array_append_new(
			    sizes, json_integer((json_int_t)st.st_size));
			rc = plan_file(chunks, files[f], f, chunk_size,
			               &records, err, errlen);
		}
	}
	json_t *flat = json_array();
	for (size_t i = 0; rc == 0 && i < json_array_size(chunks); i++) {
		json_array_extend(flat, json_array_get(chunks, i));
	}
	json_t *o = NULL;
	if (rc == 0) {
		o = json_pack("{s:I,s:I,s:I,s:I,s:b,s:o,s:o,s:I,s:[],s:[]}",
		              "chunk_size", (json_int_t)chunk_size, "records",
		              (json_int_t)records, "epochs", (json_int_t)epochs,
		              "seed", (json_int_t)(seed & INT64_MAX), "shuffle",
		              shuffle, "files", sizes, "chunks", flat, "epoch",
		              (json_int_t)first, "open", "trained");
		sizes = flat = NULL;
	}
	json_decref(sizes);
	json_decref(flat);
	json_decref(chunks);
	if (rc == 0 && records == 0) {
		snprintf(err, errlen,
		         "no records in the inputs: nothing to "
		         "cut into chunks");
		rc = -1;
	}
	*json = rc == 0 && o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (rc == 0 && *json == NULL) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	return rc;
}

/* ---- a pool ---------------------------------------------------------------
 */

static void
epoch_free(struct ep *x)
{
	free(x->order);
	free(x->applied);
	free(x->holder);
	memset(x, 0, sizeof *x);
}

void
tfi_pool_free(struct tfi_pool *p)
{
	if (p == NULL) {
		return;
	}
	for (size_t i = 0; i < p->nopen; i++) {
		epoch_free(&p->open[i]);
	}
	free(p->fbytes);
	free(p->at);
	free(p->done);
	free(p->w);
	free(p);
}

/* Epoch e made ready in *x: its order drawn, nothing applied. */
static int
epoch_init(const struct tfi_pool *p, struct ep *x, uint64_t e)
{
	size_t n = p->nchunks;
	x->epoch = e;
	x->order = malloc(n * sizeof *x->order);
	x->applied = calloc(n, sizeof *x->applied);
	x->holder = malloc(n * sizeof *x->holder);
	if (x->order == NULL || x->applied == NULL || x->holder == NULL) {
		epoch_free(x);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		x->order[i] = (uint32_t)i;
		x->holder[i] = -1;
	}
	if (p->shuffle) {
		struct tf_rng r;
		tf_rng_seed(&r, (p->seed ^ 0x5ca1ab1e0ddba11ull) +
		                    e * 0x9e3779b97f4a7c15ull);
		for (size_t i = n; i > 1; i--) {
			size_t j = (size_t)tf_rng_below(&r, i);
			uint32_t t = x->order[i - 1];
			x->order[i - 1] = x->order[j];
			x->order[j] = t;
		}
	}
	x->left = n;
	x->trained = 0;
	return 0;
}

/* Epoch e's state, opened when create is set (NULL: not open, done, or
 * out of memory / too many open). */
static struct ep *
epoch_at(struct tfi_pool *p, uint64_t e, int create)
{
	size_t i = 0;
	while (i < p->nopen && p->open[i].epoch < e) {
		i++;
	}
	if (i < p->nopen && p->open[i].epoch == e) {
		return &p->open[i];
	}
	if (!create || e < p->base || p->nopen == MAX_OPEN ||
	    (p->epochs != 0 && e >= p->epochs)) {
		return NULL;
	}
	struct ep x;
	if (epoch_init(p, &x, e) != 0) {
		return NULL;
	}
	memmove(&p->open[i + 1], &p->open[i], (p->nopen - i) * sizeof *p->open);
	p->open[i] = x;
	p->nopen++;
	return &p->open[i];
}

static int
note_done(struct tfi_pool *p, uint64_t e, uint64_t trained)
{
	if (p->ndone + 2 > p->capdone) {
		size_t cap = p->capdone ? p->capdone * 2 : 16;
		uint64_t *d = realloc(p->done, cap * sizeof *d);
		if (d == NULL) {
			return -1;
		}
		p->done = d;
		p->capdone = cap;
	}
	p->done[p->ndone++] = e;
	p->done[p->ndone++] = trained;
	return 0;
}

/* The epochs at the front that are done, closed: base moves on. */
static void
close_done(struct tfi_pool *p)
{
	while (p->nopen > 0 && p->open[0].epoch == p->base &&
	       p->open[0].left == 0) {
		note_done(p, p->base, p->open[0].trained);
		epoch_free(&p->open[0]);
		memmove(&p->open[0], &p->open[1],
		        (p->nopen - 1) * sizeof *p->open);
		p->nopen--;
		memset(&p->open[p->nopen], 0, sizeof *p->open);
		p->base++;
	}
}

/* Array a's i-th member as a non-negative integer, or -1. */
static int
at_u64(json_t *a, size_t i, uint64_t *v)
{
	json_t *j = json_array_get(a, i);
	if (!json_is_integer(j) || json_integer_value(j) < 0) {
		return -1;
	}
	*v = (uint64_t)json_integer_value(j);
	return 0;
}

static const char *
parse_plan(struct tfi_pool *p, json_t *o)
{
	json_t *files = json_object_get(o, "files");
	json_t *ch = json_object_get(o, "chunks");
	if (tfi_json_u64(o, "chunk_size", &p->chunk_size) ||
	    tfi_json_u64(o, "records", &p->records) ||
	    tfi_json_u64(o, "epochs", &p->epochs) ||
	    tfi_json_u64(o, "seed", &p->seed) ||
	    !json_is_boolean(json_object_get(o, "shuffle")) ||
	    !json_is_array(files) || !json_is_array(ch) ||
	    json_array_size(ch) % 4 != 0 || p->chunk_size == 0) {
		return "not a pool of chunks";
	}
	p->shuffle = json_is_true(json_object_get(o, "shuffle"));
	p->nfiles = json_array_size(files);
	p->nchunks = json_array_size(ch) / 4;
	if (p->nchunks == 0 || p->nchunks > MAX_CHUNKS) {
		return "a pool of no chunks, or of more than 2^24";
	}
	p->fbytes = calloc(p->nfiles ? p->nfiles : 1, sizeof *p->fbytes);
	p->at = calloc(p->nchunks, sizeof *p->at);
	if (p->fbytes == NULL || p->at == NULL) {
		return "out of memory";
	}
	for (size_t f = 0; f < p->nfiles; f++) {
		if (at_u64(files, f, &p->fbytes[f])) {
			return "a file size that is not one";
		}
	}
	uint64_t sum = 0;
	for (size_t i = 0; i < p->nchunks; i++) {
		struct at *a = &p->at[i];
		if (at_u64(ch, 4 * i, &a->file) ||
		    at_u64(ch, 4 * i + 1, &a->off) ||
		    at_u64(ch, 4 * i + 2, &a->rec) ||
		    at_u64(ch, 4 * i + 3, &a->count) || a->file >= p->nfiles ||
		    a->count == 0 || a->count > p->chunk_size ||
		    a->off >= p->fbytes[a->file]) {
			return "a chunk outside its file, or of no records";
		}
		sum += a->count;
	}
	return sum == p->records ? NULL : "chunks that do not add up";
}

static const char *
parse_state(struct tfi_pool *p, json_t *o)
{
	json_t *open = json_object_get(o, "open");
	json_t *tr = json_object_get(o, "trained");
	if (tfi_json_u64(o, "epoch", &p->base) || !json_is_array(open) ||
	    !json_is_array(tr) || json_array_size(tr) % 2 != 0 ||
	    json_array_size(open) > MAX_OPEN ||
	    (p->epochs != 0 && p->base > p->epochs)) {
		return "not a pool's state";
	}
	for (size_t i = 0; i + 1 < json_array_size(tr); i += 2) {
		uint64_t e, v;
		if (at_u64(tr, i, &e) || at_u64(tr, i + 1, &v) ||
		    note_done(p, e, v) != 0) {
			return "not a pool's epochs trained";
		}
	}
	for (size_t i = 0; i < json_array_size(open); i++) {
		json_t *x = json_array_get(open, i);
		json_t *ap = json_array_get(x, 2);
		uint64_t e, trained;
		if (at_u64(x, 0, &e) || at_u64(x, 1, &trained) ||
		    json_array_size(ap) != p->nchunks || e < p->base ||
		    (p->nopen > 0 && p->open[p->nopen - 1].epoch >= e) ||
		    (p->epochs != 0 && e >= p->epochs)) {
			return "not a pool's open epoch";
		}
		struct ep *ep = epoch_at(p, e, 1);
		if (ep == NULL) {
			return "out of memory";
		}
		ep->trained = trained;
		for (size_t c = 0; c < p->nchunks; c++) {
			if (at_u64(ap, c, &ep->applied[c]) ||
			    ep->applied[c] > p->at[c].count) {
				return "a chunk applied past its end";
			}
			ep->left -= ep->applied[c] == p->at[c].count;
		}
	}
	close_done(p);
	return NULL;
}

struct tfi_pool *
tfi_pool_parse(const char *json, uint32_t trainers, char *err, size_t errlen)
{
	json_error_t je;
	json_t *o = json_loads(json, 0, &je);
	struct tfi_pool *p = calloc(1, sizeof *p);
	const char *why = o == NULL   ? "not JSON"
	                  : p == NULL ? "out of memory"
	                  : trainers == 0 || trainers > 65536
	                      ? "a pool for no trainers"
	                      : NULL;
	if (why == NULL) {
		p->trainers = trainers;
		p->w = calloc(trainers, sizeof *p->w);
		why = p->w == NULL ? "out of memory" : parse_plan(p, o);
	}
	why = why ? why : parse_state(p, o);
	json_decref(o);
	if (why != NULL) {
		snprintf(err, errlen, "%s", why);
		tfi_pool_free(p);
		return NULL;
	}
	return p;
}

int
tfi_pool_same_plan(const struct tfi_pool *a, const struct tfi_pool *b)
{
	return a->chunk_size == b->chunk_size && a->records == b->records &&
	       a->nchunks == b->nchunks && a->nfiles == b->nfiles &&
	       a->epochs == b->epochs && a->seed == b->seed &&
	       a->shuffle == b->shuffle &&
	       memcmp(a->fbytes, b->fbytes, a->nfiles * sizeof *a->fbytes) ==
	           0 &&
	       memcmp(a->at, b->at, a->nchunks * sizeof *a->at) == 0;
}

uint64_t
tfi_pool_chunk_size(const struct tfi_pool *p)
{
	return p->chunk_size;
}

/* ---- handing out --------------------------------------------------------- */

static int
pending(const struct tfi_pool *p, const struct ep *x, uint32_t c)
{
	return x->holder[c] < 0 && x->applied[c] < p->at[c].count;
}

static void
hand(struct tfi_pool *p, struct ep *x, uint32_t w, uint32_t c,
     struct tfi_chunk *out)
{
	const struct at *a = &p->at[c];
	x->holder[c] = (int32_t)w;
	p->w[w].chunks++;
	p->w[w].handed += a->count - x->applied[c];
	*out = (struct tfi_chunk){
	    x->epoch, c,        a->file,       a->off,
	    a->rec,   a->count, x->applied[c], p->fbytes[a->file]};
}

/* The trainer whose chunk position pos of epoch e is: the positions
 * dealt round the trainers in turn, the deal going on from one epoch to
 * the next (epoch e's first position goes to the trainer after the one
 * that had epoch e-1's last), so over a run no trainer has more than
 * one chunk more than another, however the chunks divide. */
static uint32_t
owner(const struct tfi_pool *p, uint64_t e, size_t pos)
{
	uint64_t N = p->trainers;
	return (uint32_t)(((e % N) * (p->nchunks % N) + pos % N) % N);
}

int
tfi_pool_take(struct tfi_pool *p, uint32_t w, const unsigned char *gone,
              int any, struct tfi_chunk *c)
{
	if (w >= p->trainers) {
		return TFI_TAKE_WAIT;
	}
	size_t n = p->nchunks, N = p->trainers;
	for (uint64_t e = p->base; p->epochs == 0 || e < p->epochs; e++) {
		struct ep *x = epoch_at(p, e, 1);
		if (x == NULL) {
			/* as far ahead as the pool goes (or no memory) */
			return p->nopen == MAX_OPEN ? TFI_TAKE_WAIT
			                            : TFI_TAKE_NOMEM;
		}
		size_t first = (w + N - owner(p, e, 0)) % N;
		for (size_t pos = first; pos < n; pos += N) {
			if (pending(p, x, x->order[pos])) {
				hand(p, x, w, x->order[pos], c);
				return TFI_TAKE_CHUNK;
			}
		}
		for (size_t pos = 0; pos < n; pos++) {
			if (pending(p, x, x->order[pos]) &&
			    (any || gone[owner(p, e, pos)])) {
				hand(p, x, w, x->order[pos], c);
				return TFI_TAKE_CHUNK;
			}
		}
	}
	return tfi_pool_complete(p) ? TFI_TAKE_END : TFI_TAKE_WAIT;
}

void
tfi_pool_applied(struct tfi_pool *p, uint32_t w, const uint64_t *spans,
                 size_t n)
{
	for (size_t i = 0; i + 3 <= n; i += 3) {
		struct ep *x = epoch_at(p, spans[i], 0);
		uint64_t c = spans[i + 1], rows = spans[i + 2];
		if (x == NULL || c >= p->nchunks) {
			p->excess += rows; /* an epoch done already */
			continue;
		}
		uint64_t room = p->at[c].count - x->applied[c];
		if (rows > room) {
			p->excess += rows - room;
			rows = room;
		}
		x->applied[c] += rows;
		x->trained += rows;
		if (w < p->trainers) {
			p->w[w].applied += rows;
		}
		if (rows > 0 && x->applied[c] == p->at[c].count) {
			x->holder[c] = -1;
			x->left--;
		}
	}
	close_done(p);
}

uint64_t
tfi_pool_give_back(struct tfi_pool *p, uint32_t w, char *what, size_t len)
{
	uint64_t records = 0;
	size_t at = 0, said = 0;
	if (what != NULL && len > 0) {
		what[0] = '\0';
	}
	for (size_t i = 0; i < p->nopen; i++) {
		struct ep *x = &p->open[i];
		for (size_t c = 0; c < p->nchunks; c++) {
			if (x->holder[c] != (int32_t)w) {
				continue;
			}
			x->holder[c] = -1;
			records += p->at[c].count - x->applied[c];
			if (what != NULL && at < len && said++ < 8) {
				at += (size_t)snprintf(
				    what + at, len - at,
				    "%schunk %zu of epoch %llu (%llu of %llu "
				    "records trained)",
				    at ? ", " : "", c,
				    (unsigned long long)x->epoch,
				    (unsigned long long)x->applied[c],
				    (unsigned long long)p->at[c].count);
			}
		}
	}
	if (w < p->trainers) {
		p->w[w].returned += records;
	}
	return records;
}

int
tfi_pool_holds(const struct tfi_pool *p, uint32_t w)
{
	for (size_t i = 0; i < p->nopen; i++) {
		for (size_t c = 0; c < p->nchunks; c++) {
			if (p->open[i].holder[c] == (int32_t)w) {
				return 1;
			}
		}
	}
	return 0;
}

int
tfi_pool_complete(const struct tfi_pool *p)
{
	return p->epochs != 0 && p->base >= p->epochs;
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *
plan_json(const struct tfi_pool *p)
{
	json_t *files = json_array(), *ch = json_array();
	for (size_t f = 0; f < p->nfiles; f++) {
		json_array_append_new(files,
		                      json_integer((json_int_t)p->fbytes[f]));
	}
	for (size_t i = 0; i < p->nchunks; i++) {
		const struct at *a = &p->at[i];
		json_array_append_new(ch, json_integer((json_int_t)a->file));
		json_array_append_new(ch, json_integer((json_int_t)a->off));
		json_array_append_new(ch, json_integer((json_int_t)a->rec));
		json_array_append_new(ch, json_integer((json_int_t)a->count));
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:b,s:o,s:o}", "chunk_size",
	                 (json_int_t)p->chunk_size, "records",
	                 (json_int_t)p->records, "epochs",
	                 (json_int_t)p->epochs, "seed", (json_int_t)p->seed,
	                 "shuffle", p->shuffle, "files", files, "chunks", ch);
}

/* The epochs done from pair from on: flat (a checkpoint's), or as
 * [epoch, records] pairs (the accounting's). */
static json_t *
trained_json(const struct tfi_pool *p, size_t from, int pairs)
{
	json_t *t = json_array();
	for (size_t i = 2 * from; i + 1 < p->ndone; i += 2) {
		if (pairs) {
			json_array_append_new(
			    t, json_pack("[I,I]", (json_int_t)p->done[i],
			                 (json_int_t)p->done[i + 1]));
		} else {
			json_array_append_new(
			    t, json_integer((json_int_t)p->done[i]));
			json_array_append_new(
			    t, json_integer((json_int_t)p->done[i + 1]));
		}
	}
	return t;
}

char *
tfi_pool_json(const struct tfi_pool *p)
{
	json_t *o = plan_json(p), *open = json_array();
	for (size_t i = 0; i < p->nopen; i++) {
		const struct ep *x = &p->open[i];
		json_t *ap = json_array();
		for (size_t c = 0; c < p->nchunks; c++) {
			json_array_append_new(
			    ap, json_integer((json_int_t)x->applied[c]));
		}
		json_array_append_new(open,
		                      json_pack("[I,I,o]", (json_int_t)x->epoch,
		                                (json_int_t)x->trained, ap));
	}
	json_object_set_new(o, "epoch", json_integer((json_int_t)p->base));
	json_object_set_new(o, "open", open);
	json_object_set_new(o, "trained", trained_json(p, 0, 0));
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

char *
tfi_pool_status(const struct tfi_pool *p)
{
	json_t *ws = json_array(), *fl = json_array();
	uint64_t pend = 0;
	for (uint32_t k = 0; k < p->trainers; k++) {
		const struct acct *a = &p->w[k];
		json_array_append_new(
		    ws,
		    json_pack("{s:I,s:I,s:I,s:I,s:I}", "worker", (json_int_t)k,
		              "chunks", (json_int_t)a->chunks, "handed_out",
		              (json_int_t)a->handed, "applied",
		              (json_int_t)a->applied, "returned",
		              (json_int_t)a->returned));
	}
	for (size_t i = 0; i < p->nopen; i++) {
		const struct ep *x = &p->open[i];
		for (size_t c = 0; c < p->nchunks; c++) {
			if (x->holder[c] >= 0 && json_array_size(fl) < 64) {
				json_array_append_new(
				    fl,
				    json_pack("{s:I,s:I,s:i,s:I,s:I}", "epoch",
				              (json_int_t)x->epoch, "chunk",
				              (json_int_t)c, "worker",
				              (int)x->holder[c], "trained",
				              (json_int_t)x->applied[c],
				              "records",
				              (json_int_t)p->at[c].count));
			}
			pend += pending(p, x, (uint32_t)c);
		}
	}
	/* the last 64 epochs done: the proof each trained its records */
	size_t from = p->ndone / 2 > 64 ? p->ndone / 2 - 64 : 0;
	json_t *o = json_pack(
	    "{s:I,s:I,s:I,s:I,s:I,s:b,s:o,s:I,s:o,s:o,s:I}", "chunk_size",
	    (json_int_t)p->chunk_size, "chunks", (json_int_t)p->nchunks,
	    "records", (json_int_t)p->records, "epochs", (json_int_t)p->epochs,
	    "epoch", (json_int_t)p->base, "complete", tfi_pool_complete(p),
	    "trained", trained_json(p, from, 1), "pending", (json_int_t)pend,
	    "in_flight", fl, "workers", ws, "excess", (json_int_t)p->excess);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}
