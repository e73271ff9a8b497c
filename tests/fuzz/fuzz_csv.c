/* Fuzz target: CSV and libsvm conversion from memory.  The first byte
 * picks options (format, header, packing, skipping, empty policy,
 * integers as floats, the first column a sequence); the records produced
 * must all be valid Examples. */
#include <stdint.h>
#include <stdlib.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tf_example *ex;

static int
check(void *ctx, const uint8_t *b, size_t n, const size_t *ends, size_t count)
{
	(void)ctx;
	size_t start = 0;
	for (size_t i = 0; i < count; i++) {
		size_t len = ends[i] - start;
		if (len < 16 || len > n ||
		    tf_example_parse(ex, b + start + 12, len - 16) != TF_OK) {
			abort();
		}
		start = ends[i];
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	if (ex == NULL) {
		ex = tf_example_new();
	}
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	uint8_t k = data[0];
	o.format = (k & 1) ? TF_FORMAT_LIBSVM : TF_FORMAT_CSV;
	o.no_header = (k >> 1) & 1;
	o.pack = (k >> 2) & 1 ? "features" : NULL;
	o.skip_bad = (k >> 3) & 1;
	o.empty = (k >> 4) % 3;
	o.numeric_as_float = (k >> 6) & 1;
	/* One thread: the chunks are parsed on this thread, through the
	 * workers' code, with no thread started for each input. */
	o.threads = 1;
	o.infer_rows = (k >> 7) ? 2 : 1000;
	/* without a header the first column is col1: a sequence, its steps
	 * split by spaces (and by ';' with integers as floats) */
	if (o.no_header && o.format == TF_FORMAT_CSV && !o.pack && o.skip_bad) {
		o.sequence = "col1";
		o.seq_delimiter = o.numeric_as_float ? ';' : ' ';
	}
	/* with a header, CSV and no packing: the features hashed (into 64
	 * buckets when skipping bad rows) */
	if (!o.no_header && o.format == TF_FORMAT_CSV && !o.pack &&
	    o.numeric_as_float) {
		o.hash_features = 1;
		o.hash_buckets = o.skip_bad ? 64 : 0;
	}
	struct tf_csv *c = tf_csv_new();
	struct tf_input *in = tf_input_new();
	struct tf_csv_sink sink = {NULL, check, NULL};
	if (c && in && tf_csv_set_options(c, &o) == TF_OK &&
	    tf_input_open_mem(in, data + 1, size - 1, "fuzz.csv") == TF_OK) {
		if (tf_csv_convert(c, in, &sink) == TF_OK) {
			char *json = NULL;
			tf_csv_schema_json(c, &json);
			free(json);
		}
	}
	tf_input_free(in);
	tf_csv_free(c);
	return 0;
}
