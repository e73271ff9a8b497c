/*
 * dataset_private.h - what dataset.c and the fast reader (fastread.c)
 * share: the dataset's insides, and the byte layout of a Features entry
 * as tf-csv2record writes it (csv.c), which the fast reader's templates
 * are made of.  Not installed; nothing outside libtfcore includes it.
 */
#ifndef TF_DATASET_PRIVATE_H
#define TF_DATASET_PRIVATE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "tf/dataset.h"
#include "tf/rng.h"
#include "tf/schema.h"

struct input {
	char *name;
	int64_t width;
	int64_t col;    /* first column in the row */
	float *mean;    /* per column, or NULL */
	float *inv_std; /* per column, or NULL */
};

#define KEYLEN 128

/* A bytes feature: one id column of a row.  With a vocabulary, a value
 * is its place in it; without one (too many values), a hash bucket. */
struct cat {
	char *name;
	char **vocab; /* sorted, as the schema lists it */
	size_t *vlen;
	int64_t n;      /* vocabulary size; id n is out of vocabulary */
	int64_t hashed; /* no vocabulary: this many hash buckets */
	int64_t offset; /* its first id in the shared id space */
	int64_t col;    /* its column: width + its place among the ids */
};

/* A row column by name, for lookups. */
struct colref {
	const char *name;
	int64_t col;
};

/* A cross of two categorical columns, hashed into buckets. */
struct cross {
	size_t a, b; /* indexes into cats */
	int64_t col;
};

enum { LMAP_NONE, LMAP_INTS, LMAP_VOCAB };

struct tf_dataset {
	struct tfi_handle err;
	struct input *in;
	size_t nin;
	size_t *by_name; /* indexes of in[] sorted by name */
	int64_t width;
	char *label;
	int task;
	int64_t classes;
	int normalize;
	int label_optional;
	int sparse; /* libsvm layout: ids/values scattered into a row */
	/* The label's classes when they are not 0..K-1 as they stand:
	 * the schema's int64 values (sorted: value i is class i, so 1..K
	 * or -1/+1 get no phantom class) or its string vocabulary. */
	int lmap; /* LMAP_* */
	const int64_t *lvals;
	size_t nlvals;
	const struct tfi_vocab *lvocab;
	char *key;            /* feature carried as text, or NULL */
	char (*kbuf)[KEYLEN]; /* keys of the shuffle buffer's rows */
	char (*keys)[KEYLEN]; /* keys of the last batch */
	size_t keys_cap;
	struct tf_schema *schema; /* parsed once (schema.c) */
	/* Standard input, read through its own reader (pre) once: its
	 * records (8-byte length, bytes) are kept in replay while they fit
	 * STDIN_KEEP bytes, so a later epoch (or the dataset after schema
	 * inference read the first records) reads them again. */
	struct tf_reader *pre;
	struct tfi_buf replay;
	size_t replay_pos;
	uint64_t stdin_rec;     /* records of standard input given this epoch */
	int on_pre;             /* the current file is standard input */
	int pre_eof;            /* standard input is at its end */
	int stdin_kept;         /* every record read from it is in replay */
	char *select, *exclude; /* --features, --exclude: comma lists */
	int allow_missing;      /* a record may lack features: their mean */
	/* A trainer's share of a distributed run: the records whose place
	 * in the epoch (over all files, in order) is shard mod shards. */
	uint64_t shard, shards, seen;
	/* reading */
	char **files;
	size_t nfiles;
	uint64_t epochs;
	size_t shuffle;
	uint64_t seed;
	uint64_t epoch, done;
	size_t file;
	int reading; /* a file is open */
	int at_end;
	struct tf_reader *r;
	struct tf_example *ex;
	struct tf_rng rng;
	float *buf;    /* shuffle buffer: shuffle rows of width + 1 floats */
	int64_t *ibuf; /* and their nids ids each */
	size_t nbuf;
	int stdin_used;
	/* per row column, from the schema (not for libsvm rows) */
	char **colname;
	unsigned char *colint;
	struct colref *colorder; /* the columns sorted by name */
	/* categorical columns and their crosses: a row's ids, numbered as
	 * columns after the floats */
	struct cat *cats;
	size_t ncat;
	struct cross *crosses;
	size_t ncross;
	int64_t nids; /* ncat + ncross */
	int64_t
	    cat_ids; /* ids of all vocabularies, out-of-vocabulary included */
	int64_t buckets; /* hash buckets of the crosses */
	/* fast_record(): whether it may be used, the label's and each
	 * input's name length, the record that last saw each input and the
	 * input guessed at each entry's place (-1 the label) */
	int fast;
	size_t ylen, *fnlen;
	uint32_t *fseen, fgen;
	int64_t *fslot;
	/* ... and the bytes of each input's entry before its floats, as
	 * tf-csv2record writes it (packed floats), and of the label's
	 * before its value (one int64 under 128; one float) */
	uint8_t *ftpl;
	size_t *ftoff, *ftlen;
	size_t ytoff[2], ytlen[2];
	/* ... and the whole of the last record it read entry by entry
	 * through those templates (whole_record()): its bytes, a mask of
	 * those that make its structure (0 over the values), where each
	 * float of a row and the label's value are in it; a row's means
	 * and inverse deviations side by side (0 and 1 where none) */
	uint8_t *rtpl, *rmask;
	size_t rlen, rcap;     /* rlen 0: none yet */
	uint32_t *roff, *rcol; /* each float of a row: where, which column */
	int rseq; /* the row's floats one run in the record, in row order */
	size_t ryoff;
	int rykind; /* the label: 0 one int64 byte, 1 a float, -1 none */
	float *rmu, *ris;
	/* For checkpoints that seek (tfi_dataset_state): each buffered
	 * row's record, the log of rows taken, whether every input read so
	 * far is a plain file (not standard input, not compressed). */
	struct tfi_ds_pos *spos;
	struct tfi_ds_pos *log;
	size_t nlog, log_cap;
	int unseekable;
	int no_fast;         /* tests: never */
	uint64_t fast_hits;  /* tests: records it read */
	uint64_t whole_hits; /* ... of them through whole_record() */
};

/* Whether a label is one of the model's classes (any value is, for a
 * regression or when labels are not read for training). */
static inline int
is_class(const struct tf_dataset *ds, float v)
{
	return ds->task == TF_TASK_REGRESSION || ds->label_optional ||
	       (v >= 0 && v < (float)ds->classes && v == floorf(v));
}

/* fastread.c: the templates of the inputs' and label's entries (again
 * after the inputs change), and one record read through them into row
 * and *label: 1 when it was read, 0 when the record is laid out
 * otherwise (decode() reads it then; nothing is written but row). */
int tfi_ds_templates(struct tf_dataset *ds);
int tfi_ds_fast_record(struct tf_dataset *ds, const uint8_t *d, size_t n,
                       float *row, float *label);

/* A Features map entry for a key of klen bytes holding payload bytes of
 * one kind (TF_COL_FLOAT, TF_COL_INT64 or TF_COL_BYTES): its whole size,
 * and the sizes of the entry, the Feature and the list inside it. */
size_t tfi_entry_bytes(size_t klen, int kind, size_t payload, size_t *es,
                       size_t *fs, size_t *ls);
/* The entry's bytes up to its payload at p; returns the payload start. */
uint8_t *tfi_entry_head(uint8_t *p, const char *key, size_t klen, int kind,
                        size_t payload);

#endif
