/*
 * dataset_private.h - what dataset.c and the fast reader (fastread.c)
 * share: the dataset's insides (what a row holds is its columns',
 * columns_private.h), and the byte layout of a Features entry
 * as tf-csv2record writes it (csv.c), which the fast reader's templates
 * are made of.  Not installed; nothing outside libtfcore includes it.
 */
#ifndef TF_DATASET_PRIVATE_H
#define TF_DATASET_PRIVATE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "pool.h"
#include "tf/dataset.h"
#include "tf/rng.h"
#include "tf/schema.h"

#include "columns_private.h"

#define KEYLEN 128
/* the shuffle buffer's picks asked for ahead (dataset.c's ask_picks()) */
#define PICKS_AHEAD 4

struct tf_dataset {
	struct tfi_handle err;
	struct tf_columns *cols; /* what a row holds (columns.c) */
	int own_cols;            /* ... made by tf_dataset_new(), freed here */
	size_t *by_name;         /* indexes of cols->in[] sorted by name */
	int label_optional;
	char *key;            /* feature carried as text, or NULL */
	char (*kbuf)[KEYLEN]; /* keys of the shuffle buffer's rows */
	char (*keys)[KEYLEN]; /* keys of the last batch */
	size_t keys_cap;
	/* Standard input, read through its own reader (pre) once: its
	 * records (8-byte length, bytes) are kept in replay while they fit
	 * STDIN_KEEP bytes, so a later epoch (or the dataset after schema
	 * inference read the first records) reads them again. */
	struct tf_reader *pre;
	char *pre_path; /* its name: "-", or a pipe's (read_once()) */
	struct tfi_buf replay;
	size_t replay_pos;
	uint64_t stdin_rec;   /* records of standard input given this epoch */
	int on_pre;           /* the current file is standard input */
	int pre_eof;          /* standard input is at its end */
	int stdin_kept;       /* every record read from it is in replay */
	int allow_missing;    /* a record may lack features: their mean */
	int strict_ids;       /* an id outside an id vocabulary: an error */
	int follow;           /* a stream: ms to wait for records (0: no) */
	struct tf_image *img; /* image rows: the decoder */
	int flip, shift;      /* ... and their augmentation */
	/* A trainer's share of a distributed run: the records whose place
	 * in the epoch (over all files, in order) is shard mod shards. */
	uint64_t shard, shards, seen;
	/* Chunks handed out (tfi_dataset_set_chunks()): where the next
	 * comes from, the one read (its records not read yet), one of the
	 * next epoch held while a batch ends, the last read's rows by chunk
	 * ((epoch, chunk, rows) triples) */
	tfi_chunk_fn chunk_next;
	void *chunk_ctx;
	struct tfi_chunk chunk, held;
	int in_chunk, has_held;
	uint64_t chunk_left;
	uint64_t *spans;
	size_t nspans, capspans;
	/* reading */
	char **files;
	size_t nfiles;
	uint64_t epochs;
	size_t shuffle;
	uint64_t seed;
	uint64_t epoch, done;
	uint64_t rows_epoch; /* the epoch of the rows the last read gave */
	size_t file;
	int reading; /* a file is open */
	int at_end;
	struct tf_reader *r;
	struct tf_example *ex;
	struct tf_rng rng;
	/* the shuffle buffer's next picks, asked for ahead (ask_picks()):
	 * a copy of rng run on, and the state before each pick made */
	struct tf_rng picks_rng, picks_at[PICKS_AHEAD];
	unsigned picks_head; /* the next pick's */
	int picks_on;        /* whether they have started */
	float *buf;    /* shuffle buffer: shuffle rows of width + 1 floats */
	int64_t *ibuf; /* and their nids ids each */
	size_t nbuf;
	size_t prefaulted; /* bytes of buf made present (prefault()) */
	int stdin_used;
	/* fast_record(): whether it may be used, the label's and each
	 * input's name length, the record that last saw each input and the
	 * input guessed at each entry's place (-1 the label) */
	int fast, fast_bag; /* (fast_bag: tfi_ds_fast_bag()) */
	size_t ylen, *fnlen;
	uint32_t *fseen, fgen;
	int64_t *fslot;
	/* ... and the bytes of each input's entry before its floats, as
	 * tf-csv2record writes it (packed floats), and of the label's
	 * before its value (one int64 under 128; one float) */
	uint8_t *ftpl;
	size_t *ftoff, *ftlen;
	size_t *itoff; /* ... of one int64 of 1, then 2 varint bytes */
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
	/* A record of an id vocabulary's ids read by tfi_ds_fast_bag(): its
	 * row holds the ids themselves, their table slots asked for, and
	 * they are looked up (tfi_ds_settle()) before the next record is
	 * read or a row is taken, the memory's wait behind that record's
	 * reading.  pend_ids NULL: none. */
	int64_t *pend_ids;
	float *pend_row;
	int64_t pend_n;
	size_t pend_file;
	uint64_t pend_rec;
	int no_fast;         /* tests: never */
	uint64_t fast_hits;  /* tests: records it read */
	uint64_t truncated;  /* sequences cut to the columns' steps */
	uint64_t whole_hits; /* ... of them through whole_record() */
};

/* Whether a label is one of the model's classes (any value is, for a
 * regression or when labels are not read for training). */
static inline int
is_class(const struct tf_dataset *ds, float v)
{
	return ds->cols->task == TF_TASK_REGRESSION || ds->label_optional ||
	       (v >= 0 && v < (float)ds->cols->classes && v == floorf(v));
}

/* fastread.c: the templates of the inputs' and label's entries (again
 * after the inputs change), and one record read through them into row
 * and *label: 1 when it was read, 0 when the record is laid out
 * otherwise (decode() reads it then; nothing is written but row). */
int tfi_ds_templates(struct tf_dataset *ds);
int tfi_ds_fast_record(struct tf_dataset *ds, const uint8_t *d, size_t n,
                       float *row, float *label);
/* ... and a sparse record of the bag layout into row, ids and *label (a
 * model of the bag alone): 1 read, 0 to decode(). */
int tfi_ds_fast_bag(struct tf_dataset *ds, const uint8_t *d, size_t n,
                    float *row, int64_t *ids, float *label);
/* The ids of the record tfi_ds_fast_bag() left to look up, their rows
 * (dataset.c's bag_row(), as decode() reads them: an unknown one dropped
 * with its value when evaluating, a data error naming the record when
 * training); TF_OK when there is none. */
int tfi_ds_settle(struct tf_dataset *ds);
/* The index in its file of the record read last (standard input's: as
 * given). */
uint64_t tfi_ds_record(const struct tf_dataset *ds);

/* A Features map entry for a key of klen bytes holding payload bytes of
 * one kind (TF_COL_FLOAT, TF_COL_INT64 or TF_COL_BYTES): its whole size,
 * and the sizes of the entry, the Feature and the list inside it. */
size_t tfi_entry_bytes(size_t klen, int kind, size_t payload, size_t *es,
                       size_t *fs, size_t *ls);
/* The entry's bytes up to its payload at p; returns the payload start. */
uint8_t *tfi_entry_head(uint8_t *p, const char *key, size_t klen, int kind,
                        size_t payload);

#endif
