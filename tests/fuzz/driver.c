/*
 * driver.c - runs a libFuzzer target on files without libFuzzer: each
 * argument is a file or a directory of files, fed once to
 * LLVMFuzzerTestOneInput.  `make check` uses it to replay the seed corpora
 * (under the sanitizers with SANITIZE=1); `make fuzz` builds the real
 * fuzzers with clang instead.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int runs = 0, errors = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			errors++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			errors += run_file(argv[i]);
			runs++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		while (d != NULL && (e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.') {
				continue;
			}
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i],
			         e->d_name);
			errors += run_file(path);
			runs++;
		}
		if (d != NULL) {
			closedir(d);
		}
	}
	printf("%d inputs, %d unreadable\n", runs, errors);
	return errors != 0 || runs == 0;
}
