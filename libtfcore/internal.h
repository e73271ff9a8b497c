/*
 * internal.h - declarations shared inside libtfcore only.
 *
 * Every handle begins with a struct tfi_handle so that tf_errmsg() works on
 * any of them.  The first error set on a handle wins; later ones are dropped
 * so the message names the cause rather than a consequence.
 */
#ifndef TF_INTERNAL_H
#define TF_INTERNAL_H

#ifndef TF_BUILDING_LIBRARY
#error "internal.h is for the libtfcore build only"
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tf/batch.h"
#include "tf/error.h"
#include "tf/tensor.h"

#define TFI_MSG_MAX 512

struct tfi_handle {
	int code;
	char msg[TFI_MSG_MAX];
};

/* Record an error on h (first one wins).  Returns code. */
/* The node a task's predictions are read from: "prob", or "logits" for
 * a regression. (spec.c) */
const char *tfi_prediction_node(int task);
/* Seconds on the monotonic clock, for timeouts and rates. (error.c) */
double tfi_now(void);
int tfi_set_error(void *h, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tfi_set_errorv(void *h, int code, const char *fmt, va_list ap);
/* Same, appending ": strerror(err)". */
int tfi_set_errno(void *h, int code, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A growable byte buffer. */
struct tfi_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};
int tfi_buf_reserve(struct tfi_buf *b, size_t extra);
int tfi_buf_append(struct tfi_buf *b, const void *p, size_t n);
/* n floats appended as little-endian bytes (tfi_put_le_floats()). */
int tfi_buf_put_le_floats(struct tfi_buf *b, const float *v, size_t n);
void tfi_buf_free(struct tfi_buf *b);

/* Base64 (error.c): n bytes as 4 * ceil(n / 3) characters of the
 * standard alphabet, padded, at dst; and text (standard or URL-safe,
 * padding optional) back into bytes appended to b: 0, 1 when s is not
 * base64, -1 when out of memory. */
void tfi_base64_encode(char *dst, const uint8_t *s, size_t n);
int tfi_base64_decode(struct tfi_buf *b, const char *s, size_t n);

/* JSON text into a buffer kept NUL-terminated. */
int tfi_json_put(struct tfi_buf *b, const char *p, size_t n);
int tfi_json_string(struct tfi_buf *b, const uint8_t *s, size_t n);
int tfi_utf8_valid(const uint8_t *s, size_t n);
struct tf_example;
int tfi_example_json(struct tf_example *ex, struct tfi_buf *out);

/* Write the header and footer of a record whose n data bytes are already
 * at rec + 12 (record.c). */
void tfi_record_frame_inplace(uint8_t *rec, size_t n);

/* Quote-free CSV text to libcsv-style callbacks (csv.c). */
void tfi_csv_split_plain(const char *p, size_t n, char delim,
                         void (*field)(void *, size_t, void *),
                         void (*row)(int, void *), void *data);

/* Float values as runs, checkpoints' blocks and exports' tables
 * (checkpoint.c; tfrecord(5), Checkpoints): put appends the count and the
 * runs; read checks them (a count above max is refused) and decodes into
 * dst when not NULL, -1 when they are not whole. */
int tfi_runs_put(struct tfi_buf *b, const float *v, size_t n);
int tfi_runs_read(const uint8_t *p, size_t len, uint64_t max, uint64_t *n,
                  float *dst);

/* Protobuf varint helpers (FORMATS.md section 0). */
static inline size_t
tfi_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *
tfi_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* A varint at *p (before end), *p moved past it; 0 when malformed (cut
 * short, or more than 10 bytes).  A tenth byte's bits past 64 are
 * dropped. */
static inline __attribute__((always_inline)) int
tfi_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 1;
		}
	}
	return 0;
}

static inline void
tfi_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void
tfi_put_le64(uint8_t *p, uint64_t v)
{
	tfi_put_le32(p, (uint32_t)v);
	tfi_put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t
tfi_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t
tfi_get_le64(const uint8_t *p)
{
	return (uint64_t)tfi_get_le32(p) | (uint64_t)tfi_get_le32(p + 4) << 32;
}

/* n floats as little-endian bytes (the records', checkpoints' and
 * exports' order) from p on; returns the byte after them. */
static inline uint8_t *
tfi_put_le_floats(uint8_t *p, const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		tfi_put_le32(p + 4 * i, u);
	}
	return p + 4 * n;
}

/* n floats from their little-endian bytes at p. */
static inline void
tfi_get_le_floats(float *v, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u = tfi_get_le32(p + 4 * i);
		memcpy(&v[i], &u, 4);
	}
}

/* Read every record with the general Example parser (tests of the
 * packed layout's fast path, dataset.c). */
struct tf_dataset;
/*
 * A dataset's position for a checkpoint that resumes by seeking (rather
 * than replaying the epoch): where each row in the shuffle buffer came
 * from, and where the reader is.  A reader thread runs ahead of
 * training, so each batch carries its mark (the position after it) and a
 * log of the rows it took from the buffer; the state at a batch is the
 * live buffer with the later batches' logs undone.
 */
struct tfi_ds_pos {
	uint64_t off, rec; /* the record's byte offset and number in file */
	uint32_t file;     /* index in the dataset's files */
	uint32_t slot;     /* logs: the buffer slot it was taken from */
	int refilled;      /* logs: a new record took the slot */
};
struct tfi_ds_mark {
	uint64_t s[4];              /* the shuffle's generator */
	uint64_t epoch, done, seen; /* position; records seen (shards) */
	uint64_t off, count;        /* the reader: next record, its number */
	size_t file, nbuf;
	int reading, at_end, seekable;
};
/* Log each row a read takes into log (at most cap; NULL: stop). */
void tfi_dataset_log(struct tf_dataset *ds, struct tfi_ds_pos *log, size_t cap);
/* Read chunks handed out (a distributed run's pool, pool.h) instead of
 * the epochs: next() gives the next (TF_OK), or none now (TF_EAGAIN:
 * the read returns the rows it has), or the end (TF_EOF), or an error
 * with its message.  A chunk's records go through the shuffle buffer
 * alone, in an order drawn from the seed, its epoch and its number; a
 * batch does not cross epochs.  The rows of the last read by chunk:
 * (epoch, chunk, rows) triples. (dataset.c) */
struct tfi_chunk;
typedef int (*tfi_chunk_fn)(void *ctx, struct tfi_chunk *c, char *msg,
                            size_t len);
void tfi_dataset_set_chunks(struct tf_dataset *ds, tfi_chunk_fn next,
                            void *ctx);
const uint64_t *tfi_dataset_spans(const struct tf_dataset *ds, size_t *n);
/* Whether path is a pipe or FIFO, a socket or a character device: an
 * input that can be read once only (its stat in *st when st is not
 * NULL). */
struct stat;
int tfi_is_pipe(const char *path, struct stat *st);
/* The input read once (tf_dataset_stdin_once()), named for a message:
 * "standard input" or the pipe's path. */
const char *tfi_dataset_once_name(const struct tf_dataset *ds);
size_t tfi_dataset_logged(const struct tf_dataset *ds);
/* The epoch of the rows the last read gave: a batch ending an epoch is
 * read with the next epoch begun (tf_dataset_epoch() is the position
 * after it), its rows are of the one before. */
uint64_t tfi_dataset_rows_epoch(const struct tf_dataset *ds);
void tfi_dataset_mark(const struct tf_dataset *ds, struct tfi_ds_mark *m);
/* The state at mark m (a JSON object's text in *json, malloc'd; NULL
 * when the inputs cannot seek), from the live buffer and the logs of the
 * n batches read after m, in order.  The reader must be between
 * batches. */
int tfi_dataset_state(struct tf_dataset *ds, const struct tfi_ds_mark *m,
                      const struct tfi_ds_pos *const *logs, const size_t *nlogs,
                      const uint64_t *epochs, size_t n, char **json);
/* Resume at a state tfi_dataset_state() gave, by seeking: TF_OK, or an
 * error (the caller then replays with tf_dataset_seek()). */
int tfi_dataset_restore(struct tf_dataset *ds, uint64_t epoch, uint64_t done,
                        const char *json);

/* Reads after a seek ask for the record and this many bytes more, not
 * the usual megabyte (random access to records: a dataset's restore). */
struct tf_reader;
void tfi_reader_set_readahead(struct tf_reader *r, size_t bytes);
/* A generator's state as 64 hex digits (checkpoints), and back (-1:
 * not that). */
void tfi_rng_text(const uint64_t s[4], char out[65]);
int tfi_rng_parse(const char *text, uint64_t s[4]);
void tfi_dataset_no_fast(struct tf_dataset *ds);
struct tf_request;
void tfi_request_no_quick(struct tf_request *q, int on);
uint64_t tfi_request_quick_hits(const struct tf_request *q);

uint64_t tfi_dataset_fast_hits(const struct tf_dataset *ds);
/* Of those, the records read through the whole-record template. */
uint64_t tfi_dataset_whole_hits(const struct tf_dataset *ds);

/*
 * An output being published (file.c): tfi_out_open() makes PATH.tmp.XXXXXX
 * (tmp set) or, for a device, FIFO or socket, opens PATH itself (tmp
 * NULL); tfi_out_commit() fsyncs when asked, closes, renames over PATH
 * and fsyncs the directory; tfi_out_abort() closes and removes the
 * temporary.  -1 with errno on failure; commit and abort free o.
 */
struct tfi_out {
	int fd;
	char *tmp; /* NULL when writing PATH directly */
	char *path;
};
int tfi_out_open(struct tfi_out *o, const char *path);
int tfi_out_write(struct tfi_out *o, const void *data, size_t n);
int tfi_out_commit(struct tfi_out *o, int sync);
void tfi_out_abort(struct tfi_out *o);
/* fsync a directory, so the renames in it are durable. */
void tfi_sync_dir(const char *dir);

/*
 * A schema parsed (schema.c): what tf/schema.h's handle holds, read by
 * the dataset and filled by the CSV converter.
 */
enum {
	TFI_LAYOUT_COLUMNS,
	TFI_LAYOUT_PACKED,
	TFI_LAYOUT_LIBSVM,
	TFI_LAYOUT_IMAGE
};

/* A bytes feature with a different value in each of this many records
 * or more is no category (an identifier, free text). */
#define UNIQUE_MIN 20

struct tfi_schema_col {
	char *name;
	int type;       /* TF_COL_INT64, TF_COL_FLOAT, TF_COL_BYTES */
	int64_t column; /* its column in the source, -1 unknown */
	uint64_t present, missing;
	uint64_t nonfinite; /* of present: NaN or infinite, not in the stats */
	int binary;    /* bytes: a value that is not text (NUL, not UTF-8) */
	int unique;    /* bytes: no value seen twice, in UNIQUE_MIN or more
	                  records (counted up to the vocabulary's limit) */
	int has_stats; /* min, max, mean, std are known (finite values) */
	double min, max, mean, std;
	int64_t packed_index; /* its place in the packed list, or -1 */
	/* a sequence (a list of steps, its length varying by record): the
	 * most steps a row keeps, and the values of a step (float: numbers;
	 * int64 and bytes: a token each step); 0 for one value */
	int64_t max_length, step_width;
	int64_t hash_buckets; /* tokens without a vocabulary */
};

struct tfi_vocab {
	char *name;    /* the bytes feature */
	int over;      /* too many values: none listed (hashed instead) */
	char **values; /* sorted */
	size_t n;
};

struct tf_schema {
	struct tfi_handle err;
	char *text; /* as parsed or last written */
	int layout;
	uint64_t rows, skipped;
	char **sources;
	size_t nsources;
	int has_label;
	struct tfi_schema_col label;
	int classes_over; /* an int64 label with too many values */
	int64_t *classes; /* sorted; NULL for a float label */
	size_t nclasses;
	char **class_names; /* a name for each of classes, or NULL */
	size_t nclass_names;
	struct tfi_schema_col *features; /* row order */
	size_t nfeatures;
	/* libsvm: the largest id (2^63-1 stands for any of 2^64), the most
	 * ids a row; a model's copy, the buckets its ids are hashed into
	 * (0: none, ids index its table), and the out-of-vocabulary buckets
	 * after its ids' rows (0: none) */
	uint64_t max_index, max_ids, id_buckets, oov_buckets;
	int sparse_bag; /* a model's copy: its rows hold a bag of ids */
	/* the distinct ids of the data (increasing) when they make an id
	 * vocabulary (tfi_id_vocab_wanted(): tf-csv2record's, the survey's):
	 * a model's table has a row for each, the i-th id's row i (NULL:
	 * none) */
	uint64_t *id_vocab;
	size_t id_count;
	char *packed_name; /* packed */
	size_t packed_size;
	char **packed_columns;
	size_t npacked;
	struct tfi_vocab *vocabs;
	size_t nvocabs;
	/* image: the feature of encoded images and what a row makes of
	 * them (height and width 0: the images differ in size) */
	char *image_feature;
	int64_t image_height, image_width, image_channels;
	int image_scale; /* TF_IMAGE_SCALE_* */
};

/* FNV-1a (64 bits) of n bytes, going on from h: TFI_FNV1A_BASIS to
 * start (a categorical column's hashed ids, tf-csv2record's distinct
 * values and --hash-features' ids). */
#define TFI_FNV1A_BASIS UINT64_C(0xcbf29ce484222325)
static inline uint64_t
tfi_fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *s = p;
	for (size_t i = 0; i < n; i++) {
		h = (h ^ s[i]) * UINT64_C(0x100000001b3);
	}
	return h;
}

/* splitmix64's finaliser: every bit of x moves every bit of the result
 * (the generator's seeding, sparse ids' buckets, hashed features). */
static inline uint64_t
tfi_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A set of 64-bit ids, each numbered (0, 1, ...) in the order added
 * (idset.c): open addressing, at most two thirds full; a slot three
 * words, the id's low and high halves and its number + 1 (0: empty).
 * tfi_idset_add(): 1 when id is new, 0 when it was there, -1 when out of
 * memory; tfi_idset_reserve() makes room for n (0, or -1). */
struct tfi_idset {
	uint32_t *slot;
	uint64_t cap; /* slots, at most 2^32 */
	size_t n;
};
int tfi_idset_add(struct tfi_idset *s, uint64_t id);
int tfi_idset_reserve(struct tfi_idset *s, size_t n);
/* The ids, each at its number in out. */
void tfi_idset_ids(const struct tfi_idset *s, uint64_t *out);
void tfi_idset_free(struct tfi_idset *s);
/* id's home slot: its hash scaled to the slots. */
static inline uint64_t
tfi_idset_home(const struct tfi_idset *s, uint64_t id)
{
	return (tfi_mix64(id) >> 32) * s->cap >> 32;
}
/* The slot holding id, or the empty one where it would go (s has
 * slots). */
static inline uint32_t *
tfi_idset_probe(const struct tfi_idset *s, uint64_t id)
{
	for (uint64_t h = tfi_idset_home(s, id);;
	     h = h + 1 == s->cap ? 0 : h + 1) {
		uint32_t *e = &s->slot[3 * h];
		if (e[2] == 0 ||
		    (e[0] == (uint32_t)id && e[1] == (uint32_t)(id >> 32))) {
			return e;
		}
	}
}
/* id's number, or -1 when it is not in the set. */
static inline int64_t
tfi_idset_row(const struct tfi_idset *s, uint64_t id)
{
	return s->slot != NULL ? (int64_t)tfi_idset_probe(s, id)[2] - 1 : -1;
}
/* The most ids an id vocabulary holds (the schema's, tf-csv2record's). */
#define TFI_ID_VOCAB_MAX ((size_t)1 << 22)
/* Whether n distinct ids whose largest is max_index (2^63-1: any) make
 * an id vocabulary: sparse in their space, a quarter of it at most (the
 * lookup's memory is a table row's), the space past a dense row's
 * (TF_DENSE_IDS_MAX), and at most TFI_ID_VOCAB_MAX of them. */
int tfi_id_vocab_wanted(uint64_t max_index, size_t n);
/* An id vocabulary as the schema's text: the n ids (increasing) as
 * varints of their differences, in base64, appended to b; and that text
 * back into *ids (malloc'd), which must hold count of them: TF_EFORMAT
 * with *why saying what is wrong. */
int tfi_id_vocab_put(struct tfi_buf *b, const uint64_t *ids, size_t n);
int tfi_id_vocab_get(const char *s, size_t len, size_t count, uint64_t **ids,
                     const char **why);

/* Empty a schema for filling (schema.c). */
void tfi_schema_clear(struct tf_schema *s);
/* The vocabulary of a bytes feature, or NULL. */
const struct tfi_vocab *tfi_schema_vocab(const struct tf_schema *s,
                                         const char *name);

/*
 * The evaluation loop (model.c): every batch of ds through g, the
 * prediction node's values and the loss into mt (reset first); errors
 * are set on errh.
 */
struct tf_graph;
int tfi_graph_share_params(struct tf_graph *t, struct tf_graph *g);
/* The width of the graph's input x: 0 without one (a model of ids). */
int64_t tfi_graph_x_width(const struct tf_graph *g);

/* Work a device lacked a kernel for ran on the host: name it once in
 * tf_device_fallbacks() (device.c). */
struct tf_device;
void tfi_device_fallback(struct tf_device *d, const char *what);
/* A step's memory (the graph's arena, batches uploaded ahead): n floats,
 * 64-byte aligned, not zeroed; freed with tf_device_free().  Its pages
 * are not made present here: a graph that uses a few KiB of a 4 MiB
 * arena block (a server's, for one instance) keeps only those resident,
 * and a model reloaded every few seconds leaves no resident block
 * behind in the allocator.  The user makes present what it will write
 * (tfi_device_populate()). */
float *tfi_device_alloc_step(struct tf_device *d, size_t n);
/* A host table of bytes zeroed (device.c; free() frees it): from 2 MiB
 * up on transparent huge pages where the kernel lends them, so that a
 * table read at random rows reaches them through the TLB (the CPU's
 * parameters and slots, an id vocabulary's set); NULL when out of
 * memory. */
void *tfi_table_alloc(size_t bytes);
/* tfi_populate() of [p + from, p + to) bytes where d's memory is the
 * host's; nothing on a device with its own memory. */
void tfi_device_populate(struct tf_device *d, void *p, size_t from, size_t to);
/* The pages of host memory [a + from, a + to) made present and writable
 * at once (madvise MADV_POPULATE_WRITE where the kernel has it): one
 * system call instead of a page fault each 4 KiB, several times dearer
 * in a virtual machine.  Values are unchanged; advice only. */
void tfi_populate(void *a, size_t from, size_t to);
struct tf_batch;
struct tf_metrics;
int tfi_evaluate(struct tf_graph *g, const char *prediction,
                 struct tf_dataset *ds, struct tf_batch *b,
                 struct tf_metrics *mt, void *errh);

/* An optimizer's settings as "key=value,..." (optim.c; the ps tasks are
 * sent them so); the caller frees it. */
struct tf_hparams;
char *tfi_hparams_text(const struct tf_hparams *h);

/* Class k's label as a JSON string (model.c, escaped when the model was
 * loaded), for response rows; "" for no such class. */
struct tf_model;
const char *tfi_model_label_json(const struct tf_model *m, int64_t k);

/*
 * A serving request (serving.c parses REST's JSON bodies into it,
 * serving_pb.c gRPC's protobuf messages): the rows asked about and the
 * predictions, for one model at a time.
 */
struct tf_request {
	struct tfi_handle err;
	int method;
	int columnar;        /* "inputs" rather than "instances" */
	struct tf_batch in;  /* the rows asked about, standardised */
	int64_t nout;        /* values a prediction */
	float *pred;         /* in.capacity x nout predictions */
	int allow_missing;   /* examples may lack features: their mean */
	int training;        /* :train's rows: an unknown id is refused */
	unsigned char *seen; /* the columns an example set */
	size_t nseen;
	struct tfi_buf out;
	void *pb;                /* the gRPC request decoded (serving_pb.c) */
	struct tfi_pbview *view; /* ... by the quick reader, into here */
	int no_quick;            /* tests: every body through jansson */
	int precondition;        /* the error: a signature not there */
	/* Frees pb and view: set by serving_pb.c, called by
	 * tf_request_free(). */
	void (*release_pb)(struct tf_request *q);
	uint64_t quick_hits;  /* tests: bodies the scan read */
	struct tf_image *img; /* image models: the decoder */
	struct tfi_buf raw;   /* ... and a b64 value decoded */
	struct tfi_buf train; /* a :train body's records (online.c) */
};
/* An encoded image into row r of an image model's request (its view:
 * tf_columns_image()); a damaged one is the client's mistake, named by
 * what. (serving.c; the gRPC reader's DT_STRING images too) */
struct tf_image_view;
int tfi_request_image(struct tf_request *q, const struct tf_image_view *v,
                      const void *data, size_t n, const char *what, size_t r);
/* A strict JSON scan of the usual bodies, without a tree (serving.c):
 * take the token c (after whitespace); a number as jansson reads it, as
 * a float (followed by a delimiter: , ] } or whitespace). */
struct tfi_scan {
	const char *p, *end;
};
void tfi_scan_ws(struct tfi_scan *s);
int tfi_scan_take(struct tfi_scan *s, char c);
int tfi_scan_number(struct tfi_scan *s, float *out);
/* The rows of a parsed list of instances, as :predict's "instances"
 * holds them, into q (not standardised): online.c's check of :train
 * rows. (serving.c) */
struct json_t;
/* A sparse id as a body gives it: a JSON integer, or the decimal digits
 * of a uint64 as a string (serving.c). */
int tfi_json_id(struct json_t *e, uint64_t *out);
/* A non-negative integer member of object o: 0, or -1 (dataset.c). */
int tfi_json_u64(struct json_t *o, const char *key, uint64_t *v);
int tfi_request_instances(struct tf_request *q, const struct tf_model *m,
                          struct json_t *inst, size_t max_rows);
/* Start q for model m and method (buffers of m's widths, no rows). */
void tfi_request_start(struct tf_request *q, const struct tf_model *m,
                       int method);
/* Room for rows rows and their predictions; the same, refusing more
 * than max_rows (0: no limit) "N what, more than the limit of M". */
int tfi_request_grow(struct tf_request *q, size_t rows);
int tfi_request_room(struct tf_request *q, size_t n, size_t max_rows,
                     const char *what);
/* The most probable class of a row of n probabilities. */
int64_t tfi_serving_argmax(const float *p, int64_t n);
/* A client's mistake: TF_EINVAL with the message. */
int tfi_request_bad(struct tf_request *q, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* What to add to a JSON parser's error for a model of sparse ids: how
 * an id past 2^63-1 is sent, when the parser refused one ("too big
 * integer"); "" otherwise. */
const char *tfi_request_json_hint(const struct tf_model *m, const char *err);
/* q->seen for every column, cleared. */
int tfi_request_seen(struct tf_request *q);
/* The row column of a signature input named name, or -1; the number of
 * inputs (numeric and categorical columns, not the derived crosses). */
int64_t tfi_serving_column(const struct tf_model *m, const char *name);
int64_t tfi_serving_ninputs(const struct tf_model *m);

/*
 * The serving signature's inputs (columns.c): one a numeric or
 * categorical column, or one for a list of several columns (a packed
 * list such as tf-csv2record --pack-features writes, or the dense "x" of
 * libsvm rows), in column order.  Returns how many; the first cap fill
 * out.  tfi_columns_input() finds one by name (1) or not (0).
 */
struct tfi_input {
	const char *name;
	int64_t col, width;
	int categorical, is_int;
	int list;     /* a [-1, width] tensor (else [-1]) */
	int sequence; /* a sequence: [-1, -1] steps (of width / steps
	                 values), ragged, its length an id (columns.h) */
	int64_t steps;
	int sparse; /* a bag's ids or values: [-1, -1], up to width a row */
};
/* Row r of a request to a model of sparse ids (serving.c): n ids and nv
 * values (0: none, each 1) checked against the model's most, the row
 * emptied; then each id (its uint64 bits) and value in place k. */
struct tf_request;
struct tf_model;
int tfi_request_bag_row(struct tf_request *q, const struct tf_model *m,
                        const char *what, size_t r, size_t n, size_t nv);
int tfi_request_bag_id(struct tf_request *q, const struct tf_model *m,
                       const char *what, size_t r, size_t k, uint64_t id,
                       float value);
/* A model's sequence (serving.c): -1 none, or how its steps are given. */
enum { TFI_SEQ_NUMBERS, TFI_SEQ_STRINGS, TFI_SEQ_INTEGERS };
int tfi_request_seq_kind(const struct tf_model *m);
/* Row r's sequence (input in): len steps (cut to the model's), each a
 * token (tok[j] of tok_len[j] bytes; or itok[j]) or the step's numbers
 * (vals, width / steps a step), as REST's lists of steps. */
void tfi_request_seq_row(struct tf_request *q, const struct tf_model *m,
                         const struct tfi_input *in, size_t r, int64_t len,
                         const void *const *tok, const size_t *tok_len,
                         const int64_t *itok, const float *vals);
struct tf_columns;
size_t tfi_columns_inputs(const struct tf_columns *cols, struct tfi_input *out,
                          size_t cap);
int tfi_columns_input(const struct tf_columns *cols, const char *name,
                      struct tfi_input *in);

/* A damaged latest checkpoint of dir: code on h with why, and what the
 * user can do (checkpoint.c: the intact one before it, if any). */
int tfi_ckpt_damaged(void *h, int code, const char *dir, const char *why);

/* A setting's default text (settings.c), NULL when it has none. */
const char *tfi_settings_default(const char *name);

/*
 * A trainer's exchange with the ps tasks (exchange.c over tf/ps.h's
 * client): the chief's INIT of every shard (its values, slots, step and
 * optimizer; a ps that has its shard already answers with it, taken into
 * params and *step), a PULL of every shard (waiting up to wait seconds
 * for the chief's INIT), a PUSH of a gradient (with the trainer's input
 * position) and the new values back, a SNAPSHOT of values and slots at
 * one step for a checkpoint, with every trainer's position, DONE, a
 * wait for every trainer's DONE, FINISH, and the exchange's cost as
 * JSON members (the caller frees them).
 */
struct tf_ps_client;
struct tf_optim;
struct tfi_ps_mode {
	int sync;
	unsigned replicas_to_aggregate, total_replicas, staleness;
	double peer_timeout;
	const char *pool; /* chunks handed out: ps 0's pool (JSON), or NULL */
};
/* The trainer's rank and model size; every > 0: a round that waits on
 * one ps longer than that (a sync step there waiting for a silent
 * trainer, a ps paused) tells the ps tasks, each every seconds, that
 * this trainer is still here (ALIVE), so they do not go on without it. */
int tfi_ps_client_setup(struct tf_ps_client *cl, uint32_t rank,
                        uint64_t nparams, uint64_t model, double every);
/* What a model's parameters stand for, as a key the ps tasks compare
 * (model, in their protocol): from the model's copy of its schema, its
 * inputs in order (the features, a packed list's columns), the rows of
 * its tables (an id vocabulary's ids, hash and out-of-vocabulary
 * buckets, each string vocabulary's values) and its label's classes;
 * not the statistics.  Never 0.  TF_EFORMAT when schema is none. */
int tfi_model_key(const char *schema, uint64_t *key);
/* A bag's id vocabulary (its i-th id is row i of the table) and its
 * count, or NULL (0) when its table has none. */
const uint64_t *tfi_columns_id_vocab(const struct tf_columns *cols, size_t *n);
/* A local phase (on: validating, writing a checkpoint) begins or ends.
 * One that goes on past `every` tells the ps tasks this trainer is idle
 * (DONE, take set: a sync step stops waiting for it, its chunks stay its
 * own), then that it is still here; its next push takes it back. */
void tfi_ps_aside(struct tf_ps_client *cl, int on);
int tfi_ps_init(struct tf_ps_client *cl, float *params, struct tf_optim *o,
                uint64_t *step, const char *optimizer, const char *hparams,
                const struct tfi_ps_mode *mode);
int tfi_ps_pull(struct tf_ps_client *cl, float *params, uint64_t *step,
                double wait);
/* Ranges of the parameter vector: (start, length) pairs, ascending and
 * apart (a row-sparse push: the dense parameters and the rows of the
 * embedding tables a batch touches). */
struct tfi_ranges {
	uint64_t *v;
	size_t n, cap;
};
/* One range more at the end (joined to the last when they adjoin); -1
 * out of memory. */
int tfi_ranges_add(struct tfi_ranges *r, uint64_t start, uint64_t len);
/* grad: the ranges the gradient is sent for (the rest is zero), want:
 * those whose new values come back (NULL, NULL: all of both). */
int tfi_ps_push(struct tf_ps_client *cl, float *params, const float *grads,
                float lr, uint64_t rows, uint64_t epoch, uint64_t done,
                uint64_t *step, const struct tfi_ranges *grad,
                const struct tfi_ranges *want);
int tfi_ps_snapshot(struct tf_ps_client *cl, float *params, struct tf_optim *o,
                    uint64_t *step, uint64_t **positions, size_t *npositions);
/* Chunks handed out (pool.h): the next push carries its batch's rows by
 * chunk (n values, (epoch, chunk, rows) triples), and says after whether
 * ps 0 applied it (not stale, not dropped: its rows are trained).  The
 * pool as the last snapshot found it (malloc'd JSON, or NULL).  The
 * trainer's next chunk: TF_OK, TF_EAGAIN (none now: ask again), TF_EOF
 * (every chunk trained), or an error with its message in msg (*lost
 * set: ps 0 went on without this process); from one thread (the
 * reader's), over a connection of its own. */
struct tfi_chunk;
void tfi_ps_set_spans(struct tf_ps_client *cl, const uint64_t *spans, size_t n);
int tfi_ps_applied(const struct tf_ps_client *cl);
char *tfi_ps_snapshot_pool(const struct tf_ps_client *cl);
/* ps 0's accounting of the pool (its STATUS's "pool"), or NULL. */
char *tfi_ps_pool_status(struct tf_ps_client *cl);
int tfi_ps_take(struct tf_ps_client *cl, struct tfi_chunk *c, int *lost,
                char *msg, size_t len);
/* DONE: this trainer has finished (idle: it waits for a chunk, and
 * keeps the ones it holds). */
int tfi_ps_done(struct tf_ps_client *cl, int idle);
int tfi_ps_wait_done(struct tf_ps_client *cl, uint32_t trainers, double wait);
int tfi_ps_finish(struct tf_ps_client *cl);
char *tfi_ps_stats(struct tf_ps_client *cl);

/* A row's shape as a spec writes it, "28x28x1" or "30": 0, or -1 when it
 * is not 1 to TF_SHAPE_MAX dimensions of 1 or more whose product is at
 * most 2^24; written back the same; the values a row holds. (graph.c) */
int tfi_shape_parse(const char *s, size_t len, struct tf_shape *out);
/* Whether a --model name is a recurrent model: lstm, bidirectional_lstm
 * or gru (spec.c; the settings and the training run ask it too). */
int tfi_model_recurrent(const char *model);
int tfi_shape_format(const struct tf_shape *s, char *buf, size_t size);
int64_t tfi_shape_size(const struct tf_shape *s);
/* A graph's blocks as the host may read and write them: the block itself
 * on the CPU; on a device (whose memory is out of the host's reach) a
 * host copy, downloaded first when fetch is set.  tfi_graph_commit()
 * uploads the copy after the host wrote it (nothing on the CPU).
 * (graph.c) */
enum { TFI_PARAMS = 0, TFI_GRADS = 1, TFI_STATE = 2 };
float *tfi_graph_host(struct tf_graph *g, int which, int fetch);
int tfi_graph_commit(struct tf_graph *g, int which);
/* The same for an optimizer's slots: an array of tf_optim_nslots()
 * pointers. (optim.c) */
float *const *tfi_optim_host_slots(struct tf_optim *o, int fetch);
int tfi_optim_commit_slots(struct tf_optim *o);
/* Whether the optimizer's update leaves a value whose gradient is zero
 * as it was (sgd, adagrad, lazy_adam; FTRL while the learning rate holds
 * still and the tables started at zeros, but for the last bit of a value
 * dense FTRL recomputes), so
 * a step may update only the rows a batch touched and be the same. */
int tfi_optim_row_exact(const struct tf_optim *o, int lr_decays,
                        int tables_zero);
/* One step over ranges r of the parameters alone (a row-sparse step,
 * for an optimizer tfi_optim_row_exact() allows), the gradient of each
 * zeroed once used. */
struct tfi_ranges;
int tfi_optim_step_ranges(struct tf_optim *o, float *w, float *g, float lr,
                          const struct tfi_ranges *r);
/* A batch's rows (rowmap.c): a map of row offsets to their place in the
 * order met.  start: room for n of them, empty (-1 out of memory);
 * place: key's place, or next when it is new (*fresh then set). */
struct tfi_place {
	uint64_t key;
	uint32_t gen, j;
};
struct tfi_rowmap {
	struct tfi_place *p; /* a power of two of places */
	size_t cap;
	int bits;
	uint32_t gen; /* a place is taken when it holds gen */
};
int tfi_rowmap_start(struct tfi_rowmap *m, size_t n);
void tfi_rowmap_release(struct tfi_rowmap *m);
static inline uint32_t
tfi_rowmap_place(struct tfi_rowmap *m, uint64_t key, uint32_t next, int *fresh)
{
	size_t mask = m->cap - 1;
	size_t h =
	    (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - m->bits));
	for (;; h = (h + 1) & mask) {
		struct tfi_place *p = &m->p[h];
		if (p->gen != m->gen) {
			*p = (struct tfi_place){key, m->gen, next};
			*fresh = 1;
			return next;
		}
		if (p->key == key) {
			*fresh = 0;
			return p->j;
		}
	}
}
/* The update of o's next step at rate lr (the step counted), for a
 * caller that applies it itself (linear.c); TF_EINVAL as above. */
struct tf_update;
int tfi_optim_next_update(struct tf_optim *o, float lr, struct tf_update *u);
/* A sparse linear model's step without the graph's passes (linear.c).
 * Plan it for a graph of tf_model_spec_sparse()'s binary lr and an
 * optimizer of at most 2 slots (NULL: another, or no memory); whether
 * it takes a batch (its widths, labels 0 and 1).  A pass: forward,
 * loss, the batch's predictions into m, the gradient of the bias (in
 * the graph's) and of the rows the ids name (in a list of its own);
 * apply: o's update of them (its error on o's handle), the bias's
 * gradient zeroed again.  Between steps the table's weights and slots
 * live in its own rows: flush writes them into the graph's parameters
 * and o's slots, for anything that reads them (a checkpoint, an
 * evaluation); drop says the graph's and o's are the model now (a step
 * the graph took), read again at the next pass. */
struct tfi_linear;
struct tf_batch;
struct tf_metrics;
struct tfi_linear *tfi_linear_plan(struct tf_graph *g,
                                   const struct tf_optim *o);
int tfi_linear_takes(const struct tfi_linear *l, const struct tf_batch *b);
int tfi_linear_pass(struct tfi_linear *l, struct tf_graph *g,
                    struct tf_optim *o, const struct tf_batch *b,
                    struct tf_metrics *m, double *loss);
int tfi_linear_apply(struct tfi_linear *l, struct tf_graph *g,
                     struct tf_optim *o, float lr);
void tfi_linear_flush(struct tfi_linear *l, struct tf_graph *g,
                      struct tf_optim *o);
void tfi_linear_drop(struct tfi_linear *l);
void tfi_linear_free(struct tfi_linear *l);
/* Whether tf_graph_backward() zeroes the parameters' gradient first (the
 * default) or leaves that to the caller, who keeps it zero where a
 * row-sparse step does not look (zeroing what it used); the setting it
 * had. (graph.c) */
int tfi_graph_zero_grads(struct tf_graph *g, int on);
/* Both over this: a host copy of the n floats of device memory d in
 * *host, allocated the first time, downloaded when fetch; *host, or NULL
 * out of memory. (device.c) */
struct tf_device;
float *tfi_device_mirror(struct tf_device *dev, float **host, const float *d,
                         size_t n, int fetch);
/* Connected to every ps within wait seconds (waiting() told which is
 * awaited now and then), then each answering a STATUS; TF_EUNAVAIL
 * naming the ps that did not. */
int tfi_ps_ready(struct tf_ps_client *cl, double wait,
                 void (*waiting)(void *ctx, const char *msg), void *ctx);
/* The trainers the ps tasks have gone on without (bit k: trainer k, the
 * first 64), as ps 0 last said; 1 when that changed since last asked. */
int tfi_ps_lost(struct tf_ps_client *cl, uint64_t *lost);

/* scheme://HOST:PORT as one URL for each address HOST resolves to (IPv6
 * in brackets), in the resolver's order without repeats; an address
 * literal is itself.  v6_only: only the IPv6 ones (none is no error).
 * The count, or -1 with the reason in err.  (cluster.c) */
#define TFI_URL_MAX  320
#define TFI_URLS_MAX 8
int tfi_url_addresses(const char *url, char (*out)[TFI_URL_MAX], int max,
                      int v6_only, char *err, size_t errlen);

/*
 * The online-learning queue (online.c): a directory of segments of
 * TFRecords, DIR/NNNNNNNNNNNNNNNNNNNN.tfrecord (the segment's number, 20
 * decimal digits), appended in order.  A reader follows it as one stream
 * whose offsets are the segment's number << TFI_QUEUE_SHIFT plus the
 * offset in it (record.c).
 */
#define TFI_QUEUE_SHIFT       40
#define TFI_QUEUE_MAX_SEGMENT ((uint64_t)1 << 24)
void tfi_queue_path(char *buf, size_t size, const char *dir, uint64_t seg);
/* The lowest segment of dir numbered from or more: 0 and *seg, -1 when
 * there is none. */
int tfi_queue_find(const char *dir, uint64_t from, uint64_t *seg);

#endif
