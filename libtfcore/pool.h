/*
 * pool.h - the chunks of a distributed run's epochs, handed out to the
 * trainers on request (pool.c; ps 0 holds the pool, ps.c; the chief
 * plans it, train.c).  Not installed.
 *
 * Each input file is cut into chunks of at most chunk_size records
 * (file, byte offset, first record, records).  An epoch hands out every
 * chunk once, in an order drawn from the seed and the epoch; a chunk is
 * done when gradients of all its records have been applied.  The
 * records of a chunk are trained in one order (the trainer's shuffle of
 * it, drawn from the seed, epoch and chunk), so a chunk given back part
 * way (its trainer lost, the run stopped) is taken up again after the
 * records it has applied: skip.
 *
 * Position p of an epoch's order belongs to trainer p mod trainers: a
 * trainer takes its own chunks first, so a sync run with a fixed set of
 * trainers reads what it read before.  The chunks of a trainer gone on
 * without (and in async mode any pending chunk) go to whoever asks.
 */
#ifndef TF_POOL_H
#define TF_POOL_H

#include <stddef.h>
#include <stdint.h>

struct tfi_pool;

/* A chunk handed out: records of input file `file` from byte `off`
 * (its record number rec), `count` of them, the first `skip` (in the
 * chunk's order) trained already; the file's size, checked by the
 * trainer against its own. */
struct tfi_chunk {
	uint64_t epoch, index, file, off, rec, count, skip, bytes;
};

/* The chief: the plan of files[0..n) cut into chunks of chunk_size
 * records, for the epochs from first up to epochs (0: no end), as the
 * pool's JSON text (malloc'd) in *json.  -1 with a message naming the
 * file when one cannot be read, or is standard input. */
int tfi_pool_plan(const char *const *files, size_t n, uint64_t chunk_size,
                  uint64_t first, uint64_t epochs, uint64_t seed, int shuffle,
                  char **json, char *err, size_t errlen);

/* A pool from its JSON (a plan, or a checkpoint's state), for trainers
 * trainers; NULL with a message when it is not one. */
struct tfi_pool *tfi_pool_parse(const char *json, uint32_t trainers, char *err,
                                size_t errlen);
void tfi_pool_free(struct tfi_pool *p);
/* Whether two pools cut the same inputs the same way. */
int tfi_pool_same_plan(const struct tfi_pool *a, const struct tfi_pool *b);
uint64_t tfi_pool_chunk_size(const struct tfi_pool *p);

enum { TFI_TAKE_CHUNK, TFI_TAKE_WAIT, TFI_TAKE_END, TFI_TAKE_NOMEM };
/* Trainer w's next chunk into *c: the first pending one of its own in
 * the earliest open epoch (an epoch's positions dealt round the trainers
 * in turn, the deal going on from epoch to epoch), else one whose owner
 * is gone.  gone[k]: trainer k is gone on without (its chunks go to
 * anyone); any: every pending chunk may be taken (async). */
int tfi_pool_take(struct tfi_pool *p, uint32_t w, const unsigned char *gone,
                  int any, struct tfi_chunk *c);
/* Gradients of trainer w's rows applied: n (epoch, chunk, rows)
 * triples. */
void tfi_pool_applied(struct tfi_pool *p, uint32_t w, const uint64_t *spans,
                      size_t n);
/* Trainer w's chunks back to the pool; returns the records of them not
 * trained, and says which in what (may be NULL). */
uint64_t tfi_pool_give_back(struct tfi_pool *p, uint32_t w, char *what,
                            size_t len);
/* Whether trainer w holds a chunk. */
int tfi_pool_holds(const struct tfi_pool *p, uint32_t w);
/* Every chunk of every epoch trained (never, without an end). */
int tfi_pool_complete(const struct tfi_pool *p);
/* The pool's state (plan, epochs done, each open epoch's chunks) as
 * JSON: a checkpoint's, and what tfi_pool_parse() reads. */
char *tfi_pool_json(const struct tfi_pool *p);
/* The accounting as a JSON object's text: records handed out, applied
 * and given back per trainer, each epoch's records trained, the chunks
 * in flight. */
char *tfi_pool_status(const struct tfi_pool *p);

#endif
