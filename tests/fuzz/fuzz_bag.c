/* Fuzz target: a sparse record of the bag layout (tf-csv2record -f
 * libsvm's ids, label and values) read by the dataset's fast reader
 * (fastread.c's tfi_ds_fast_bag()) and by the general parser must give
 * the same ids, values and label, or the same error.  The first byte
 * picks the table: ids below 1000 as they are, hashed into 1024 or 1000
 * buckets, or the rows of an id vocabulary (3, 70, 999 and 1000000; the
 * others add nothing, as when evaluating); its bit 2, 5 out-of-
 * vocabulary buckets after the rows of a table unhashed (the ids it has
 * no row for hashed into them); the rest is the record, framed as a
 * TFRecord. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* (the library's own: the general parser alone) */
void tfi_dataset_no_fast(struct tf_dataset *ds);

static const char *schema =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"libsvm\","
    "\"label\":{\"name\":\"label\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":[],\"sparse\":{\"ids\":\"ids\",\"values\":\"values\","
    "\"max_index\":999,\"max_ids\":4}}";
/* (bit 3 of the first byte: a numeric feature beside the ids, read by
 * the general parser alone) */
static const char *mixed_schema =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"libsvm\","
    "\"label\":{\"name\":\"label\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":[{\"name\":\"age\",\"type\":\"float\",\"mean\":2,"
    "\"std\":4}],\"sparse\":{\"ids\":\"ids\",\"values\":\"values\","
    "\"max_index\":999,\"max_ids\":4}}";
static const char *vocab_schema =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"libsvm\","
    "\"label\":{\"name\":\"label\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":[],\"sparse\":{\"ids\":\"ids\",\"values\":\"values\","
    "\"max_index\":1000000,\"max_ids\":4,\"id_count\":4,"
    "\"id_vocab\":\"A0OhB9n8PA==\"}}";

struct got {
	int rc;
	size_t rows;
	float x[10], y[2]; /* rows of 4 values (and one number, mixed) */
	int64_t ids[8];
	char msg[512];
};

static void
read_bag(const char *path, int64_t buckets, int64_t oov, int mixed, int fast,
         struct got *g)
{
	memset(g, 0, sizeof *g);
	struct tf_dataset *ds = tf_dataset_new();
	if (ds == NULL) {
		abort();
	}
	struct tf_columns *cols = tf_dataset_columns(ds);
	if (tf_columns_set_sparse(cols, 1, buckets > 0 ? buckets : 0) !=
	        TF_OK ||
	    tf_columns_set_oov(cols, oov) != TF_OK ||
	    tf_columns_parse_schema(cols,
	                            buckets < 0 ? vocab_schema
	                            : mixed     ? mixed_schema
	                                        : schema,
	                            "schema") != TF_OK) {
		abort();
	}
	if (!fast) {
		tfi_dataset_no_fast(ds);
	}
	const char *files[] = {path};
	int rc = tf_dataset_open(ds, files, 1, 1, 1, 0);
	size_t n;
	while (rc == TF_OK && g->rows < 2 &&
	       (rc = tf_dataset_next(ds, g->x + g->rows * (size_t)(4 + mixed),
	                             g->ids + g->rows * 4, g->y + g->rows, 1,
	                             &n)) == TF_OK) {
		g->rows += n;
	}
	g->rc = rc;
	snprintf(g->msg, sizeof g->msg, "%s", tf_errmsg(ds));
	tf_dataset_free(ds);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096) {
		return 0;
	}
	/* (-1: the id vocabulary) */
	int64_t buckets = data[0] % 4 == 0   ? 0
	                  : data[0] % 4 == 1 ? 1024
	                  : data[0] % 4 == 2 ? 1000
	                                     : -1;
	int64_t oov = buckets <= 0 && (data[0] & 4) != 0 ? 5 : 0;
	size_t n = size - 1;
	uint8_t *rec = malloc(n + 16);
	if (rec == NULL) {
		abort();
	}
	uint64_t len = n;
	uint32_t c;
	memcpy(rec, &len, 8); /* (little-endian, as the format is) */
	c = tf_crc32c_mask(tf_crc32c(rec, 8));
	memcpy(rec + 8, &c, 4);
	memcpy(rec + 12, data + 1, n);
	c = tf_crc32c_mask(tf_crc32c(data + 1, n));
	memcpy(rec + 12 + n, &c, 4);
	const char *path = fuzz_file(rec, n + 16);
	free(rec);
	static struct got a, b;
	int mixed = (data[0] & 8) != 0;
	read_bag(path, buckets, oov, mixed, 1, &a);
	read_bag(path, buckets, oov, mixed, 0, &b);
	if (a.rc != b.rc || a.rows != b.rows || strcmp(a.msg, b.msg) != 0 ||
	    memcmp(a.x, b.x, a.rows * (size_t)(4 + mixed) * sizeof(float)) !=
	        0 ||
	    memcmp(a.ids, b.ids, a.rows * 4 * sizeof(int64_t)) != 0 ||
	    (a.rows > 0 && memcmp(a.y, b.y, a.rows * sizeof(float)) != 0)) {
		abort();
	}
	return 0;
}
