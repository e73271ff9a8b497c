/*
 * records.h - what tf-records' files share (tools/records/): the parsed
 * options, the reading loop and outputs (main.c), and the subcommands:
 * cat, head, count, verify and index (look.c); schema, split and shuffle
 * (sets.c).
 */
#ifndef TF_RECORDS_H
#define TF_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "tf/tf.h"
#include "tool.h"

struct opts {
	int in_comp, out_comp;
	int csv, json, raw, skip, write;
	int bytes; /* cat, head: images as their bytes, not described */
	const char *label;
	long long n;
	int n_given;
	const char *output;
	uint64_t seed;
	int seed_given;
	long long shard_i, shard_n;
	size_t memory;
	char **files;
	int nfiles;
};

extern struct opts O;
extern int status; /* the exit status of "keep going" errors */
/* Live as long as the process (reachable for leak checkers when a
 * failure exits early). */
extern struct tf_reader *reader;
extern struct tf_example *ex;

typedef int (*record_fn)(const uint8_t *data, size_t n, void *ctx);

/* Open an input, or name it and note the failure (and go on): 0. */
int open_input(struct tf_reader *r, const char *path);
/* Every record of every input through fn; the records read. */
uint64_t each_record(record_fn fn, void *ctx);
/* Parse record index into ex, or exit 65 naming it. */
void parse_or_die(const uint8_t *d, size_t n, uint64_t index);
/* The output (-o, or standard output), and its publishing close. */
struct tf_writer *open_output(const char *path);
void close_output(struct tf_writer *w);
/* The inputs' schema beside out (rows: its count, or -1 unknown). */
void carry_schema(const char *out, long long rows);

void cmd_cat_all(void);
void cmd_head(void);
void cmd_count(void);
void cmd_verify(void);
void cmd_index(void);
void cmd_schema(void);
void cmd_split(void);
void cmd_shuffle(void);

#endif
