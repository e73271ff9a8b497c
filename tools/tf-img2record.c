/*
 * tf-img2record - images (JPEG, PNG) to TFRecord files of
 * tf.train.Example in the layout of TensorFlow's Inception data
 * (build_image_data.py), with a schema sidecar naming the classes.
 *
 * The images come from a folder with one subfolder per class, from a
 * .tar or .zip archive of such a tree, or from a list of "PATH CLASS"
 * lines.  Every image is decoded once to be checked and measured; the
 * records hold its bytes as they were.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tf/tf.h"
#include "tool.h"

/* The bytes of one image file read at the most. */
#define MAX_IMAGE_BYTES ((size_t)256 << 20)

static void
usage(void)
{
	printf("Usage: %s [OPTION]... SOURCE...\n"
	       "Convert images (JPEG, PNG) to TFRecord files of "
	       "tf.train.Example as TensorFlow's\n"
	       "Inception data writes them.  A SOURCE is a folder with one "
	       "subfolder per class,\n"
	       "or a .tar, .tar.gz or .zip archive of such a tree; with "
	       "--list, the images are\n"
	       "the lines of a file instead.  Classes are numbered from 1 "
	       "(0 is left for a\n"
	       "background class), in the order of --labels or of their "
	       "names.\n\n"
	       "Input:\n"
	       "      --labels=FILE          the class names, one a line, "
	       "in label order\n"
	       "      --list=FILE            images as lines \"PATH CLASS\" "
	       "(- for standard input)\n"
	       "      --skip-bad             skip damaged images and "
	       "other files, and count them\n"
	       "Output:\n"
	       "  -n, --shards=N             write N files "
	       "OUTPUT-00000-of-0000N (needs -o)\n"
	       "  -o, --output=FILE          write FILE (default: standard "
	       "output)\n"
	       "      --no-schema            write no schema file\n"
	       "      --schema=FILE          schema file (default: "
	       "OUTPUT.schema.json)\n"
	       "      --seed=N               the shuffle's seed (default "
	       "0)\n"
	       "      --shuffle              write the images in a random "
	       "order (default: by\n"
	       "                             class, then name)\n"
	       "Other:\n"
	       "  -q, --quiet                no summary line (on a terminal)\n"
	       "  -h, --help                 show this help and exit\n"
	       "  -V, --version              show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 64 usage, 65 a damaged image or a "
	       "file that is not\none, 66 a source that cannot be read, 70 "
	       "out of memory, 73 output cannot be\ncreated, 74 I/O error.\n"
	       "See tf-img2record(1).\n",
	       tool_name);
}

enum {
	OPT_LABELS = 256,
	OPT_LIST,
	OPT_SKIP_BAD,
	OPT_NO_SCHEMA,
	OPT_SCHEMA,
	OPT_SEED,
	OPT_SHUFFLE
};

static const struct option options[] = {
    {"labels", required_argument, NULL, OPT_LABELS},
    {"list", required_argument, NULL, OPT_LIST},
    {"skip-bad", no_argument, NULL, OPT_SKIP_BAD},
    {"shards", required_argument, NULL, 'n'},
    {"output", required_argument, NULL, 'o'},
    {"no-schema", no_argument, NULL, OPT_NO_SCHEMA},
    {"schema", required_argument, NULL, OPT_SCHEMA},
    {"seed", required_argument, NULL, OPT_SEED},
    {"shuffle", no_argument, NULL, OPT_SHUFFLE},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* One image to write: where it is, its class and, for an archive's
 * member when shuffling, its bytes. */
struct item {
	char *path;    /* a file, or an archive's member ("ARCHIVE:MEMBER") */
	int source;    /* index of its SOURCE operand; -1 a file */
	char *cls;     /* its class name */
	int64_t label; /* 1..K */
	uint8_t *data; /* read ahead (archives), or NULL */
	size_t len;
};

static struct item *items;
static size_t nitems, items_cap;
static char **classes; /* in label order */
static size_t nclasses;
static int fixed_classes; /* --labels: no others */

static void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	return p;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);
	if (p == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	return p;
}

static void
add_item(const char *path, int source, const char *cls)
{
	if (nitems == items_cap) {
		items_cap = items_cap ? 2 * items_cap : 1024;
		items = realloc(items, items_cap * sizeof *items);
		if (items == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
	}
	items[nitems++] =
	    (struct item){xstrdup(path), source, xstrdup(cls), 0, NULL, 0};
}

static int
by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's entries, sorted by name, hidden ones left out. */
static char **
list_dir(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		die(EX_NOINPUT, "%s: %s", dir, strerror(errno));
	}
	char **names = NULL;
	size_t k = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.') {
			continue;
		}
		if (k == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof *names);
			if (names == NULL) {
				die(EX_SOFTWARE, "out of memory");
			}
		}
		names[k++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (k > 0) {
		qsort(names, k, sizeof *names, by_string);
	}
	*n = k;
	return names;
}

/* dir/name (the caller frees it), and what stat(2) says of it. */
static char *
child(const char *dir, const char *name, struct stat *st)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(len);
	snprintf(p, len, "%s/%s", dir, name);
	if (stat(p, st) != 0) {
		die(EX_NOINPUT, "%s: %s", p, strerror(errno));
	}
	return p;
}

/* Every file under dir (its subfolders too, in name order) as an image
 * of class cls. */
static void
walk(const char *dir, const char *cls, int depth)
{
	if (depth > 64) {
		die(EX_DATAERR, "%s: folders nested too deep", dir);
	}
	size_t n;
	char **names = list_dir(dir, &n);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		char *p = child(dir, names[i], &st);
		if (S_ISDIR(st.st_mode)) {
			walk(p, cls, depth + 1);
		} else {
			add_item(p, -1, cls);
		}
		free(p);
		free(names[i]);
	}
	free(names);
}

/* A folder of class folders; files beside them are not images of any
 * class: an error. */
static void
add_folder(const char *root)
{
	size_t n;
	char **names = list_dir(root, &n);
	size_t before = nitems;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		char *p = child(root, names[i], &st);
		if (!S_ISDIR(st.st_mode)) {
			die(EX_DATAERR,
			    "%s: a file beside the class folders (each class "
			    "is a subfolder of %s)",
			    p, root);
		}
		walk(p, names[i], 0);
		free(p);
		free(names[i]);
	}
	free(names);
	if (nitems == before) {
		die(EX_DATAERR,
		    "%s: no images (each class is a subfolder "
		    "holding its images)",
		    root);
	}
}

/* A member's class: the first folder of its path after the folders
 * every member shares (an archive of "flowers/daisy/1.jpg" has the
 * class "daisy"). */
static char *
member_class(const char *member, size_t skip)
{
	const char *p = member;
	for (size_t i = 0; i < skip; i++) {
		p = strchr(p, '/') + 1;
	}
	const char *slash = strchr(p, '/');
	return slash ? strndup(p, (size_t)(slash - p)) : NULL;
}

static int
hidden_member(const char *m)
{
	if (strncmp(m, "__MACOSX/", 9) == 0) {
		return 1;
	}
	for (const char *p = m; *p; p++) {
		if (*p == '.' && (p == m || p[-1] == '/')) {
			return 1;
		}
	}
	return 0;
}

static size_t
depth_of(const char *m)
{
	size_t d = 0;
	for (; *m; m++) {
		d += *m == '/';
	}
	return d;
}

/* An archive's members, in archive order: their names first (the
 * classes are the folders under the shared ones). */
static void
add_archive(const char *path, int source)
{
	struct tf_input *in = tf_input_new();
	if (in == NULL || tf_input_add_member_glob(in, "*") != TF_OK) {
		die(EX_SOFTWARE, "out of memory");
	}
	if (tf_input_open(in, path) != TF_OK) {
		die_status(tf_errcode(in), tf_errmsg(in));
	}
	char **members = NULL;
	size_t n = 0, cap = 0, plen = strlen(path) + 1;
	const char *name;
	int rc;
	while ((rc = tf_input_next(in, &name)) == TF_OK) {
		if (strlen(name) <= plen || name[plen - 1] != ':') {
			die(EX_DATAERR,
			    "%s: not an archive (a SOURCE is a folder or a "
			    ".tar or .zip of one)",
			    path);
		}
		const char *m = name + plen;
		if (hidden_member(m)) {
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			members = realloc(members, cap * sizeof *members);
			if (members == NULL) {
				die(EX_SOFTWARE, "out of memory");
			}
		}
		members[n++] = xstrdup(m);
	}
	if (rc != TF_EOF) {
		die_status(tf_errcode(in), tf_errmsg(in));
	}
	tf_input_free(in);
	if (n == 0) {
		die(EX_DATAERR, "%s: no images in the archive", path);
	}
	/* The folders all members share: as many as the shallowest member
	 * has above its class folder, when they agree. */
	size_t skip = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		size_t d = depth_of(members[i]);
		if (d == 0) {
			die(EX_DATAERR,
			    "%s: %s is not in a class folder (each class is "
			    "a folder holding its images)",
			    path, members[i]);
		}
		skip = d - 1 < skip ? d - 1 : skip;
	}
	while (skip > 0) {
		const char *first = members[0];
		size_t plen2 = 0;
		for (size_t k = 0; k < skip; k++) {
			plen2 =
			    (size_t)(strchr(first + plen2, '/') - first) + 1;
		}
		int shared = 1;
		for (size_t i = 1; i < n && shared; i++) {
			shared = strncmp(members[i], first, plen2) == 0;
		}
		if (shared) {
			break;
		}
		skip--;
	}
	for (size_t i = 0; i < n; i++) {
		char *cls = member_class(members[i], skip);
		if (cls == NULL) {
			die(EX_DATAERR,
			    "%s: %s is not in a class folder (each class is "
			    "a folder holding its images)",
			    path, members[i]);
		}
		size_t len = strlen(path) + strlen(members[i]) + 2;
		char *p = xmalloc(len);
		snprintf(p, len, "%s:%s", path, members[i]);
		add_item(p, source, cls);
		free(p);
		free(cls);
		free(members[i]);
	}
	free(members);
}

/* --list: "PATH CLASS" lines (the class after the last blank, so paths
 * may hold spaces; # starts a comment line). */
static void
add_list(const char *list)
{
	FILE *f = strcmp(list, "-") == 0 ? stdin : fopen(list, "r");
	if (f == NULL) {
		die(EX_NOINPUT, "%s: %s", list, strerror(errno));
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long lineno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 &&
		       (line[len - 1] == '\n' || line[len - 1] == '\r' ||
		        line[len - 1] == ' ' || line[len - 1] == '\t')) {
			line[--len] = '\0';
		}
		if (len == 0 || line[0] == '#') {
			continue;
		}
		if (memchr(line, '\0', (size_t)len) != NULL) {
			die(EX_DATAERR, "%s: line %lu: a NUL byte", list,
			    lineno);
		}
		char *sp = strrchr(line, ' '), *tab = strrchr(line, '\t');
		sp = tab > sp ? tab : sp;
		if (sp == NULL || sp == line) {
			die(EX_DATAERR,
			    "%s: line %lu: not \"PATH CLASS\" (a path, a "
			    "blank, a class name)",
			    list, lineno);
		}
		char *end = sp;
		while (end > line && (end[-1] == ' ' || end[-1] == '\t')) {
			end--;
		}
		*end = '\0';
		add_item(line, -1, sp + 1);
	}
	if (ferror(f)) {
		die(EX_IOERR, "%s: read failed", list);
	}
	free(line);
	if (f != stdin) {
		fclose(f);
	}
	if (nitems == 0) {
		die(EX_DATAERR, "%s: no images listed", list);
	}
}

/* Whole numbers sort as numbers (a list's classes 0..10), other names
 * byte by byte. */
static int
whole(const char *s)
{
	if (*s == '-') {
		s++;
	}
	if (*s == '\0' || strlen(s) > 18) {
		return 0;
	}
	for (; *s; s++) {
		if (*s < '0' || *s > '9') {
			return 0;
		}
	}
	return 1;
}

static int all_whole;

static int
by_class_name(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	if (all_whole) {
		long long u = atoll(x), v = atoll(y);
		return u < v ? -1 : u > v;
	}
	return strcmp(x, y);
}

static void
read_labels(const char *path)
{
	size_t n = 0;
	char *text = tf_file_read(path, &n);
	if (text == NULL) {
		die(EX_NOINPUT, "%s: %s", path, strerror(errno));
	}
	if (memchr(text, '\0', n) != NULL) {
		die(EX_DATAERR, "%s: a NUL byte", path);
	}
	for (char *line = strtok(text, "\r\n"); line != NULL;
	     line = strtok(NULL, "\r\n")) {
		if (*line == '\0') {
			continue;
		}
		for (size_t i = 0; i < nclasses; i++) {
			if (strcmp(classes[i], line) == 0) {
				die(EX_DATAERR, "%s: class '%s' listed twice",
				    path, line);
			}
		}
		classes = realloc(classes, (nclasses + 1) * sizeof *classes);
		if (classes == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		classes[nclasses++] = xstrdup(line);
	}
	free(text);
	if (nclasses == 0) {
		die(EX_DATAERR, "%s: no class names", path);
	}
	fixed_classes = 1;
}

/* Each image's label: its class's place in --labels, else among the
 * sorted class names, from 1. */
static void
number_classes(void)
{
	if (!fixed_classes) {
		char **names = xmalloc(nitems * sizeof *names);
		all_whole = 1;
		for (size_t i = 0; i < nitems; i++) {
			names[i] = items[i].cls;
			all_whole = all_whole && whole(names[i]);
		}
		qsort(names, nitems, sizeof *names, by_class_name);
		classes = xmalloc(nitems * sizeof *classes);
		for (size_t i = 0; i < nitems; i++) {
			if (i == 0 || strcmp(names[i], names[i - 1]) != 0) {
				classes[nclasses++] = names[i];
			}
		}
		free(names);
	}
	for (size_t i = 0; i < nitems; i++) {
		size_t k = 0;
		while (k < nclasses && strcmp(classes[k], items[i].cls) != 0) {
			k++;
		}
		if (k == nclasses) {
			die(EX_DATAERR, "%s: class '%s' is not in --labels",
			    items[i].path, items[i].cls);
		}
		items[i].label = (int64_t)k + 1;
	}
}

/* A file's or archive member's bytes, read whole (up to
 * MAX_IMAGE_BYTES). */
static uint8_t *
read_stream(struct tf_input *in, const char *name, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = xmalloc(cap);
	for (;;) {
		if (n == cap) {
			if (cap >= MAX_IMAGE_BYTES) {
				die(EX_DATAERR,
				    "%s: over %zu MiB, too large for an image",
				    name, MAX_IMAGE_BYTES >> 20);
			}
			cap *= 2;
			buf = realloc(buf, cap);
			if (buf == NULL) {
				die(EX_SOFTWARE, "out of memory");
			}
		}
		size_t got;
		if (tf_input_read(in, buf + n, cap - n, &got) != TF_OK) {
			die_status(tf_errcode(in), tf_errmsg(in));
		}
		if (got == 0) {
			break;
		}
		n += got;
	}
	*len = n;
	return buf;
}

static uint8_t *
read_file(const char *path, size_t *len)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		die(EX_NOINPUT, "%s: %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode)) {
		die(EX_NOINPUT, "%s: not a regular file", path);
	}
	/* Read as it is: an image is never unpacked. */
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		die(EX_NOINPUT, "%s: %s", path, strerror(errno));
	}
	if ((uint64_t)st.st_size > MAX_IMAGE_BYTES) {
		die(EX_DATAERR, "%s: over %zu MiB, too large for an image",
		    path, MAX_IMAGE_BYTES >> 20);
	}
	uint8_t *buf = xmalloc((size_t)st.st_size);
	size_t n = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		die(EX_IOERR, "%s: read failed", path);
	}
	fclose(f);
	*len = n;
	return buf;
}

struct out {
	struct tf_writer **w;
	int n;
	uint64_t next;
	struct tf_example *ex;
	struct tf_survey *sv;
	struct tf_image *im;
	uint64_t written, skipped;
	int skip_bad;
	unsigned char *used; /* classes with an image written */
};

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	const char *c = strrchr(p, ':');
	s = c > s ? c : s;
	return s ? s + 1 : p;
}

static int
add_bytes(struct tf_example *ex, const char *name, const void *p, size_t n)
{
	struct tf_bytes b = {p, n};
	return tf_example_add_bytes(ex, name, &b, 1);
}

/* One image checked (decoded whole) and written as an Example. */
static void
write_image(struct out *o, const struct item *it, const uint8_t *data,
            size_t len)
{
	int h, w, c;
	int rc = tf_image_decode(o->im, data, len);
	if (rc != TF_OK) {
		if (!o->skip_bad) {
			die(rc == TF_ENOMEM ? EX_SOFTWARE : EX_DATAERR,
			    "%s: %s%s", it->path, tf_errmsg(o->im),
			    rc == TF_ENOMEM ? "" : " (--skip-bad skips it)");
		}
		warnx_("skipped %s: %s", it->path, tf_errmsg(o->im));
		o->skipped++;
		return;
	}
	tf_image_size(o->im, &h, &w, &c);
	int fmt = tf_image_sniff(data, len);
	const char *fname = tf_image_format_name(fmt);
	const char *space = c == 1 ? "Grayscale" : "RGB";
	const char *file = base_name(it->path);
	int64_t h64 = h, w64 = w, c64 = c;
	struct tf_example *ex = o->ex;
	tf_example_clear(ex);
	int bad =
	    add_bytes(ex, "image/encoded", data, len) ||
	    add_bytes(ex, "image/format", fname, strlen(fname)) ||
	    tf_example_add_int64s(ex, "image/class/label", &it->label, 1) ||
	    add_bytes(ex, "image/class/text", it->cls, strlen(it->cls)) ||
	    tf_example_add_int64s(ex, "image/height", &h64, 1) ||
	    tf_example_add_int64s(ex, "image/width", &w64, 1) ||
	    tf_example_add_int64s(ex, "image/channels", &c64, 1) ||
	    add_bytes(ex, "image/colorspace", space, strlen(space)) ||
	    add_bytes(ex, "image/filename", file, strlen(file));
	if (bad) {
		die(EX_SOFTWARE, "out of memory");
	}
	const uint8_t *bytes;
	size_t n;
	if (tf_example_serialize(ex, &bytes, &n) != TF_OK ||
	    tf_survey_add(o->sv, ex) != TF_OK) {
		die(EX_SOFTWARE, "out of memory");
	}
	struct tf_writer *wr = o->w[o->next++ % (uint64_t)o->n];
	if (tf_writer_write(wr, bytes, n) != TF_OK) {
		die_status(tf_errcode(wr), tf_errmsg(wr));
	}
	o->used[it->label - 1] = 1;
	o->written++;
}

/* A source's archive members, read in archive order: written at once,
 * or kept (shuffling) to be written in the items' order. */
static void
read_archive(struct out *o, const char *path, int source, int keep)
{
	struct tf_input *in = tf_input_new();
	if (in == NULL || tf_input_add_member_glob(in, "*") != TF_OK) {
		die(EX_SOFTWARE, "out of memory");
	}
	if (tf_input_open(in, path) != TF_OK) {
		die_status(tf_errcode(in), tf_errmsg(in));
	}
	/* the source's items are in archive order, one run of them
	 * (before any shuffle) */
	size_t k = 0;
	while (k < nitems && items[k].source != source) {
		k++;
	}
	const char *name;
	int rc;
	while ((rc = tf_input_next(in, &name)) == TF_OK) {
		if (k == nitems || items[k].source != source ||
		    strcmp(items[k].path, name) != 0) {
			continue; /* hidden members */
		}
		size_t len;
		uint8_t *data = read_stream(in, name, &len);
		if (keep) {
			items[k].data = data;
			items[k].len = len;
		} else {
			write_image(o, &items[k], data, len);
			free(data);
		}
		k++;
	}
	if (rc != TF_EOF) {
		die_status(tf_errcode(in), tf_errmsg(in));
	}
	tf_input_free(in);
}

/* The schema's classes (the labels written, sorted) named after their
 * classes. */
static void
name_classes(struct tf_schema *s, const struct out *o)
{
	size_t n = 0;
	const char **names = xmalloc(nclasses * sizeof *names);
	for (size_t k = 0; k < nclasses; k++) {
		if (o->used[k]) {
			names[n++] = classes[k];
		}
	}
	if (tf_schema_set_class_names(s, names, n) != TF_OK ||
	    tf_schema_write(s, NULL) != TF_OK) {
		die_status(tf_errcode(s), tf_errmsg(s));
	}
	free(names);
}

int
main(int argc, char **argv)
{
	tool_start("tf-img2record");
	const char *output = NULL, *schema = NULL, *list = NULL, *labels = NULL;
	int shards = 1, no_schema = 0, shuffle = 0, quiet = 0, c;
	uint64_t seed = 0;
	struct out o = {0};
	while ((c = getopt_long(argc, argv, "n:o:qhV", options, NULL)) != -1) {
		switch (c) {
		case OPT_LABELS:
			labels = optarg;
			break;
		case OPT_LIST:
			list = optarg;
			break;
		case OPT_SKIP_BAD:
			o.skip_bad = 1;
			break;
		case 'n':
			shards = (int)opt_int("--shards", optarg, 1, 99999);
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_NO_SCHEMA:
			no_schema = 1;
			break;
		case OPT_SCHEMA:
			schema = optarg;
			break;
		case OPT_SEED:
			seed =
			    (uint64_t)opt_int("--seed", optarg, 0, INT64_MAX);
			break;
		case OPT_SHUFFLE:
			shuffle = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage();
			return 0;
		case 'V':
			print_version();
			return 0;
		default:
			fprintf(stderr, "try '%s --help'\n", tool_name);
			return EX_USAGE;
		}
	}
	int nsrc = argc - optind;
	if (list == NULL && nsrc == 0) {
		usage_error("no SOURCE (a folder of class folders, or an "
		            "archive of one) and no --list");
	}
	if (list != NULL && nsrc > 0) {
		usage_error("--list takes no SOURCE operands");
	}
	if (shards > 1 && (output == NULL || strcmp(output, "-") == 0)) {
		usage_error("--shards needs --output");
	}
	check_binary_stdout(shards > 1 ? "x" : output);
	int kind = tf_path_kind(output);
	if (kind == TF_PATH_DIR) {
		die(EX_CANTCREAT, "%s: is a directory", output);
	}
	if (shards > 1 && kind == TF_PATH_SPECIAL) {
		usage_error("--shards needs an --output that names files, "
		            "not '%s'",
		            output);
	}
	if (labels != NULL) {
		read_labels(labels);
	}
	/* What to write: every image's path and class. */
	if (list != NULL) {
		add_list(list);
	}
	for (int i = 0; i < nsrc; i++) {
		const char *src = argv[optind + i];
		struct stat st;
		if (stat(src, &st) != 0) {
			die(EX_NOINPUT, "%s: %s", src, strerror(errno));
		}
		if (S_ISDIR(st.st_mode)) {
			add_folder(src);
		} else {
			add_archive(src, i);
		}
	}
	number_classes();
	if (shuffle) {
		/* Fisher-Yates with the seed: the same order every run. */
		struct tf_rng r;
		tf_rng_seed(&r, seed);
		for (size_t i = nitems; i > 1; i--) {
			size_t j = (size_t)tf_rng_below(&r, i);
			struct item t = items[i - 1];
			items[i - 1] = items[j];
			items[j] = t;
		}
	}
	o.n = shards;
	o.w = xmalloc((size_t)shards * sizeof *o.w);
	o.used = calloc(nclasses, 1);
	o.ex = tf_example_new();
	o.sv = tf_survey_new();
	o.im = tf_image_new();
	if (o.ex == NULL || o.sv == NULL || o.im == NULL || o.used == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	for (int i = 0; i < shards; i++) {
		char name[4096];
		if (shards > 1) {
			tf_shard_name(output, i, shards, name, sizeof name);
		} else {
			snprintf(name, sizeof name, "%s",
			         output ? output : "-");
		}
		o.w[i] = output_open(name, TF_COMPRESS_NONE);
	}
	/* Archives: read in their order (kept in memory to shuffle);
	 * files: read in the items' order. */
	for (int i = 0; i < nsrc; i++) {
		struct stat st;
		const char *src = argv[optind + i];
		if (stat(src, &st) == 0 && !S_ISDIR(st.st_mode)) {
			read_archive(&o, src, i, shuffle);
		}
	}
	for (size_t i = 0; i < nitems; i++) {
		if (items[i].source >= 0 && items[i].data == NULL) {
			continue; /* written from its archive */
		}
		size_t len = items[i].len;
		uint8_t *data = items[i].data ? items[i].data
		                              : read_file(items[i].path, &len);
		write_image(&o, &items[i], data, len);
		free(data);
		items[i].data = NULL;
	}
	if (o.written == 0) {
		die(EX_DATAERR, "no image could be read (%llu skipped)",
		    (unsigned long long)o.skipped);
	}
	/* The schema (from the records written: image layout, label
	 * image/class/label, the class names) before the records are
	 * renamed into place, as tf-csv2record's. */
	if (!no_schema && (schema != NULL || kind != TF_PATH_SPECIAL)) {
		char path[4096];
		if (schema == NULL) {
			snprintf(path, sizeof path, "%s.schema.json", output);
			schema = path;
		}
		struct tf_schema *s = tf_schema_new();
		char skipped[64];
		if (s == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		if (tf_survey_schema(o.sv, "image/class/label", s, skipped,
		                     sizeof skipped) != TF_OK) {
			die_status(tf_errcode(o.sv), tf_errmsg(o.sv));
		}
		name_classes(s, &o);
		side_output_write(schema, tf_schema_text(s));
		tf_schema_free(s);
	}
	for (int i = 0; i < shards; i++) {
		output_close(o.w[i]);
	}
	side_output_commit();
	if (!quiet) {
		char done[128];
		snprintf(done, sizeof done,
		         "%llu images of %zu classes converted",
		         (unsigned long long)o.written, nclasses);
		progress_summary(done);
	}
	if (o.skipped > 0) {
		warnx_("skipped %llu of %llu files: not images, or damaged",
		       (unsigned long long)o.skipped,
		       (unsigned long long)(o.skipped + o.written));
	}
	tf_image_free(o.im);
	tf_survey_free(o.sv);
	tf_example_free(o.ex);
	free(o.used);
	free(o.w);
	return 0;
}
