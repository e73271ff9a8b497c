/*
 * psreq - requests to a tf-ps, one per argument group, for the tests of
 * its protocol (libtfcore/proto/ps.proto):
 *	psreq URL 'KIND key=value ...' ['KIND ...']...
 * KIND is pull, init, push, snapshot, done, status, finish, take or
 * alive, or "raw"
 * with hex=BYTES (sent as they are).  Keys: version (default 1), token,
 * worker, step, seq, n, values (comma floats), optimizer, hparams, sync,
 * k, total, staleness, lr, and for a row-sparse request blocks and want
 * (comma start,length pairs; either sets sparse); size=N pads a raw request
 * to N bytes (0xff), repeat=N sends a request N times and prints the last
 * reply, timeout=MS waits MS for replies from then on (default 5000).  Prints
 *one line per reply: STATUS STEP MESSAGE-OR-STATUS-JSON VALUES...; exits 1 when
 *a reply does not come within 5 seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "ps.pb-c.h"

static const char *const kinds[] = {"pull",     "init", "push",
                                    "snapshot", "done", "status",
                                    "finish",   "take", "alive"};

static float values[4096];
static uint64_t blocks[512], want[512];

/* Comma numbers of v into out (at most 512); their count. */
static size_t
numbers(char *v, uint64_t *out)
{
	size_t n = 0;
	for (char *f = strtok(v, ","); f && n < 512; f = strtok(NULL, ",")) {
		out[n++] = strtoull(f, NULL, 10);
	}
	return n;
}

int
main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: psreq URL 'KIND key=value ...'...\n");
		return 2;
	}
	nng_socket s;
	int rv = nng_req0_open(&s);
	rv = rv ? rv : nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 5000);
	rv = rv ? rv : nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, 5000);
	rv = rv ? rv : nng_socket_set_ms(s, NNG_OPT_RECONNMINT, 20);
	rv = rv ? rv : nng_dial(s, argv[1], NULL, NNG_FLAG_NONBLOCK);
	if (rv != 0) {
		fprintf(stderr, "psreq: %s: %s\n", argv[1], nng_strerror(rv));
		return 1;
	}
	for (int a = 2; a < argc; a++) {
		Tfkit__Ps__Request q = TFKIT__PS__REQUEST__INIT;
		q.version = 1;
		q.token = "";
		q.optimizer = "";
		q.hparams = "";
		char *line = strdup(argv[a]), *save = NULL;
		char *kind = strtok_r(line, " ", &save);
		uint8_t raw[4096];
		size_t nraw = 0, nv = 0, size = 0, repeat = 1;
		int is_raw = strcmp(kind, "raw") == 0;
		for (int k = 0; k < (int)(sizeof kinds / sizeof *kinds); k++) {
			if (strcmp(kind, kinds[k]) == 0) {
				q.kind = k;
			}
		}
		for (char *kv = strtok_r(NULL, " ", &save); kv;
		     kv = strtok_r(NULL, " ", &save)) {
			char *v = strchr(kv, '=');
			if (v == NULL) {
				continue;
			}
			*v++ = '\0';
			if (strcmp(kv, "version") == 0) {
				q.version = (uint32_t)atoi(v);
			} else if (strcmp(kv, "token") == 0) {
				q.token = v;
			} else if (strcmp(kv, "worker") == 0) {
				q.worker = (uint32_t)atoi(v);
			} else if (strcmp(kv, "step") == 0) {
				q.step = strtoull(v, NULL, 10);
			} else if (strcmp(kv, "seq") == 0) {
				q.seq = strtoull(v, NULL, 10);
			} else if (strcmp(kv, "n") == 0) {
				q.n = strtoull(v, NULL, 10);
			} else if (strcmp(kv, "optimizer") == 0) {
				q.optimizer = v;
			} else if (strcmp(kv, "hparams") == 0) {
				q.hparams = v;
			} else if (strcmp(kv, "sync") == 0) {
				q.sync = atoi(v);
			} else if (strcmp(kv, "k") == 0) {
				q.replicas_to_aggregate = (uint32_t)atoi(v);
			} else if (strcmp(kv, "total") == 0) {
				q.total_replicas = (uint32_t)atoi(v);
			} else if (strcmp(kv, "staleness") == 0) {
				q.staleness = (uint32_t)atoi(v);
			} else if (strcmp(kv, "lr") == 0) {
				q.learning_rate = strtof(v, NULL);
			} else if (strcmp(kv, "blocks") == 0) {
				q.sparse = 1;
				q.n_blocks = numbers(v, blocks);
				q.blocks = blocks;
			} else if (strcmp(kv, "want") == 0) {
				q.sparse = 1;
				q.n_want = numbers(v, want);
				q.want = want;
			} else if (strcmp(kv, "values") == 0) {
				for (char *f = strtok(v, ","); f && nv < 4096;
				     f = strtok(NULL, ",")) {
					values[nv++] = strtof(f, NULL);
				}
				q.values.data = (uint8_t *)values;
				q.values.len = nv * sizeof(float);
			} else if (strcmp(kv, "size") == 0) {
				size = strtoull(v, NULL, 10);
			} else if (strcmp(kv, "timeout") == 0) {
				nng_socket_set_ms(s, NNG_OPT_RECVTIMEO,
				                  atoi(v));
			} else if (strcmp(kv, "repeat") == 0) {
				repeat = strtoull(v, NULL, 10);
			} else if (strcmp(kv, "hex") == 0) {
				for (; v[0] && v[1] && nraw < sizeof raw;
				     v += 2) {
					unsigned b;
					sscanf(v, "%2x", &b);
					raw[nraw++] = (uint8_t)b;
				}
			}
		}
		size_t len =
		    is_raw ? nraw : tfkit__ps__request__get_packed_size(&q);
		if (is_raw && size > len) {
			len = size;
		}
		uint8_t *buf = malloc(len + 1);
		if (is_raw) {
			memset(buf, 0xff, len);
			memcpy(buf, raw, nraw);
		} else {
			tfkit__ps__request__pack(&q, buf);
		}
		uint8_t *reply = NULL;
		size_t rlen = 0;
		for (size_t k = 0; k < repeat; k++) {
			if (reply != NULL) {
				nng_free(reply, rlen);
				reply = NULL;
			}
			if ((rv = nng_send(s, buf, len, 0)) != 0 ||
			    (rv = nng_recv(s, &reply, &rlen, NNG_FLAG_ALLOC)) !=
			        0) {
				fprintf(stderr, "psreq: %s\n",
				        nng_strerror(rv));
				/* no nng_close(): with a large message
				 * on its way to a peer that dropped it,
				 * nng 1.5.2 can wait in it for ever */
				free(buf);
				free(line);
				return 1;
			}
		}
		Tfkit__Ps__Reply *r =
		    tfkit__ps__reply__unpack(NULL, rlen, reply);
		if (r == NULL) {
			fprintf(stderr, "psreq: a malformed reply\n");
			nng_free(reply, rlen);
			free(buf);
			free(line);
			return 1;
		}
		static const char *const st[] = {"OK", "NOT_READY", "STALE",
		                                 "DROPPED", "ERROR"};
		printf("%s %llu %s", r->status < 5 ? st[r->status] : "?",
		       (unsigned long long)r->step,
		       *r->status_json ? r->status_json
		       : *r->message   ? r->message
		                       : "-");
		const float *f = (const float *)r->values.data;
		for (size_t i = 0; i < r->values.len / sizeof(float); i++) {
			printf(" %g", f[i]);
		}
		printf("\n");
		tfkit__ps__reply__free_unpacked(r, NULL);
		nng_free(reply, rlen);
		free(buf);
		free(line);
	}
	nng_close(s);
	return 0;
}
