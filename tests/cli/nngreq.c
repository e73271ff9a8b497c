/*
 * nngreq - one request to tf-serve's nng endpoint, for the tests:
 *	nngreq URL 'METHOD PATH' [BODY]
 * prints the reply ("STATUS\n" then the body) and exits 0, or 1 when no
 * reply came within 5 seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

int
main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: nngreq URL 'METHOD PATH' [BODY]\n");
		return 2;
	}
	nng_socket s;
	int rv = nng_req0_open(&s);
	if (rv == 0) {
		rv = nng_setopt_ms(s, NNG_OPT_RECVTIMEO, 5000);
	}
	if (rv == 0) {
		rv = nng_dial(s, argv[1], NULL, 0);
	}
	const char *body = argc == 4 ? argv[3] : "";
	size_t n = strlen(argv[2]) + 1 + strlen(body);
	char *msg = malloc(n + 1);
	if (rv != 0 || msg == NULL) {
		fprintf(stderr, "nngreq: %s\n", rv ? nng_strerror(rv) : "oom");
		return 1;
	}
	snprintf(msg, n + 1, "%s\n%s", argv[2], body);
	char *reply = NULL;
	size_t len = 0;
	if ((rv = nng_send(s, msg, n, 0)) != 0 ||
	    (rv = nng_recv(s, &reply, &len, NNG_FLAG_ALLOC)) != 0) {
		fprintf(stderr, "nngreq: %s\n", nng_strerror(rv));
		return 1;
	}
	fwrite(reply, 1, len, stdout);
	putchar('\n');
	nng_free(reply, len);
	free(msg);
	nng_close(s);
	return 0;
}
