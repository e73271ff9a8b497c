/* Fuzz target: tf-ps request messages, a sequence of them on one ps
 * without a socket (tf_ps_new).  The first byte picks the ps (sync or
 * async, a token or none, which shard of one or two, one to four
 * trainers); then each request is [context][length, 2 bytes LE][bytes].
 * Every answer must be a Reply of this protocol, and a shard's step
 * never goes back from one request to the next. */
#include <string.h>

#include "fuzz.h"
#include "ps.pb-c.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	uint8_t k = data[0];
	struct tf_ps_config cfg = {0};
	cfg.listen = "inproc://fuzz";
	cfg.token = (k & 2) ? "secret" : NULL;
	cfg.count = 1 + ((k >> 2) & 1);
	cfg.index = cfg.count > 1 ? (k >> 3) & 1 : 0;
	cfg.trainers = 1 + ((k >> 4) & 3);
	cfg.sync = k & 1;
	cfg.peer_timeout = 60;
	enum { NCTX = 4 };
	struct tf_ps *ps = tf_ps_new(fuzz_registry(), &cfg, NULL, NCTX);
	if (ps == NULL) {
		return 0;
	}
	uint64_t step = 0;
	int init = 0;
	int fresh[NCTX] = {0}; /* a context asked and not yet checked */
	size_t at = 1;
	while (size - at >= 3) {
		size_t ctx = data[at] % NCTX;
		size_t len = data[at + 1] | (size_t)data[at + 2] << 8;
		at += 3;
		if (len > size - at) {
			len = size - at;
		}
		int rc = tf_ps_request(ps, ctx, data + at, len);
		at += len;
		if (rc == TF_OK) {
			fresh[ctx] = 1;
		} else if (rc != TF_EINVAL) {
			abort();
		}
		/* This context's answer and any a held one got meanwhile;
		 * none older than the step before this request (one request
		 * can answer at two steps: a DONE, then the step it let
		 * complete). */
		uint64_t before = step;
		for (size_t c = 0; c < NCTX; c++) {
			const uint8_t *r;
			size_t n;
			if (!fresh[c] || tf_ps_reply(ps, c, &r, &n) != TF_OK) {
				continue;
			}
			fresh[c] = 0;
			Tfkit__Ps__Reply *m =
			    tfkit__ps__reply__unpack(NULL, n, r);
			if (m == NULL || m->version != TF_PS_PROTOCOL ||
			    m->hi < m->lo) {
				abort();
			}
			if (m->hi > m->lo || m->values.len > 0) {
				if (init && m->step < before) {
					abort(); /* the step went back */
				}
				step = init && step > m->step ? step : m->step;
				init = 1;
			}
			tfkit__ps__reply__free_unpacked(m, NULL);
		}
	}
	tf_ps_free(ps);
	return 0;
}
