/*
 * plugin.c - finding, checking and registering op and optimizer plugins.
 *
 * Shared objects are opened with dlopen(RTLD_NOW | RTLD_LOCAL) and never
 * closed (an op's code may still be running).  A plugin whose descriptor
 * has another ABI version, or is smaller than the first ABI's descriptor,
 * is refused with a message naming the file and both versions.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tf/plugin.h"

#ifndef TF_PLUGINDIR
#define TF_PLUGINDIR "/usr/local/lib/tfkit/plugins"
#endif

/* The descriptor as the first ABI defined it: the least we accept. */
#define MIN_DESCRIPTOR_SIZE                                                    \
	(offsetof(struct tf_plugin, probe) + sizeof(int (*)(void)))
/* A descriptor that has optimizer_keys (appended later). */
#define KEYS_DESCRIPTOR_SIZE                                                   \
	(offsetof(struct tf_plugin, optimizer_keys) +                          \
	 sizeof(const char *const *const *))

/* ... and one that has optimizer_updates. */
#define UPDATES_DESCRIPTOR_SIZE                                                \
	(offsetof(struct tf_plugin, optimizer_updates) + sizeof(tf_update_fn *))

struct entry {
	int is_op;
	const struct tf_op *op;
	const struct tf_optimizer *opt;
	const char *const *keys; /* the optimizer's settings, or NULL */
	tf_update_fn update;     /* its update on a device, or NULL */
	const struct tf_plugin *plugin;
	char *path;
};

struct tf_registry {
	struct tfi_handle err;
	char **dirs; /* from tf_registry_add_dir */
	size_t ndirs;
	struct entry *e;
	size_t n, cap;
	struct tfi_buf search;
};

struct tf_registry *
tf_registry_new(void)
{
	return calloc(1, sizeof(struct tf_registry));
}

void
tf_registry_free(struct tf_registry *r)
{
	if (r == NULL) {
		return;
	}
	for (size_t i = 0; i < r->ndirs; i++) {
		free(r->dirs[i]);
	}
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].path);
	}
	free(r->dirs);
	free(r->e);
	tfi_buf_free(&r->search);
	free(r);
}

int
tf_registry_add_dir(struct tf_registry *r, const char *dir)
{
	char **d = realloc(r->dirs, (r->ndirs + 1) * sizeof *d);
	if (d == NULL) {
		return tfi_set_error(r, TF_ENOMEM, "out of memory");
	}
	r->dirs = d;
	if ((d[r->ndirs] = strdup(dir)) == NULL) {
		return tfi_set_error(r, TF_ENOMEM, "out of memory");
	}
	r->ndirs++;
	return TF_OK;
}

static int
known(const struct tf_registry *r, int is_op, const char *name)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct entry *e = &r->e[i];
		if (e->is_op == is_op &&
		    strcmp(is_op ? e->op->name : e->opt->name, name) == 0) {
			return 1;
		}
	}
	return 0;
}

static int
push(struct tf_registry *r, int is_op, const void *d, const struct tf_plugin *p,
     const char *origin)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 32;
		struct entry *e = realloc(r->e, cap * sizeof *e);
		if (e == NULL) {
			return tfi_set_error(r, TF_ENOMEM, "out of memory");
		}
		r->e = e;
		r->cap = cap;
	}
	struct entry *e = &r->e[r->n];
	memset(e, 0, sizeof *e);
	e->is_op = is_op;
	if (is_op) {
		e->op = d;
	} else {
		e->opt = d;
	}
	e->plugin = p;
	if ((e->path = strdup(origin)) == NULL) {
		return tfi_set_error(r, TF_ENOMEM, "out of memory");
	}
	r->n++;
	return TF_OK;
}

int
tf_registry_add(struct tf_registry *r, const struct tf_plugin *p,
                const char *origin)
{
	if (p->abi != TF_PLUGIN_ABI || p->size < MIN_DESCRIPTOR_SIZE) {
		return tfi_set_error(r, TF_EFORMAT,
		                     "%s: plugin ABI %u (descriptor of %u "
		                     "bytes), but this libtfcore %s speaks ABI "
		                     "%d",
		                     origin, p->abi, p->size, tf_version(),
		                     TF_PLUGIN_ABI);
	}
	if (p->name == NULL) {
		return tfi_set_error(r, TF_EFORMAT, "%s: plugin has no name",
		                     origin);
	}
	if (p->probe != NULL && p->probe() == 0) {
		return TF_OK; /* not usable on this machine */
	}
	for (const struct tf_op *o = p->ops; o && o->name; o++) {
		if (o->build == NULL || o->forward == NULL ||
		    o->backward == NULL) {
			return tfi_set_error(r, TF_EFORMAT,
			                     "%s: op '%s' lacks a function",
			                     origin, o->name);
		}
		if (!known(r, 1, o->name) && push(r, 1, o, p, origin)) {
			return TF_ENOMEM;
		}
	}
	/* Only a descriptor that long has the keys; an older one's memory
	 * ends before them. */
	const char *const *const *keys =
	    p->size >= KEYS_DESCRIPTOR_SIZE ? p->optimizer_keys : NULL;
	const tf_update_fn *updates =
	    p->size >= UPDATES_DESCRIPTOR_SIZE ? p->optimizer_updates : NULL;
	for (const struct tf_optimizer *o = p->optimizers; o && o->name; o++) {
		if (o->apply == NULL) {
			return tfi_set_error(r, TF_EFORMAT,
			                     "%s: optimizer '%s' has no apply",
			                     origin, o->name);
		}
		if (known(r, 0, o->name)) {
			continue;
		}
		if (push(r, 0, o, p, origin)) {
			return TF_ENOMEM;
		}
		r->e[r->n - 1].keys = keys ? keys[o - p->optimizers] : NULL;
		r->e[r->n - 1].update =
		    updates ? updates[o - p->optimizers] : NULL;
	}
	return TF_OK;
}

int
tf_registry_load_file(struct tf_registry *r, const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		return tfi_set_error(r, TF_EFORMAT, "%s: %s", path, dlerror());
	}
	tf_plugin_entry_fn entry;
	*(void **)&entry = dlsym(h, TF_PLUGIN_ENTRY);
	if (entry == NULL) {
		return tfi_set_error(r, TF_EFORMAT,
		                     "%s: not a tfkit plugin (no %s symbol)",
		                     path, TF_PLUGIN_ENTRY);
	}
	const struct tf_plugin *p = entry();
	if (p == NULL) {
		return tfi_set_error(r, TF_EFORMAT, "%s: %s returned NULL",
		                     path, TF_PLUGIN_ENTRY);
	}
	return tf_registry_add(r, p, path);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.so of a directory, in name order; a missing one is fine. */
static int
load_dir(struct tf_registry *r, const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		return TF_OK;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = TF_OK;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 4 || strcmp(de->d_name + len - 3, ".so") != 0) {
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			char **nn = realloc(names, cap * sizeof *nn);
			if (nn == NULL) {
				rc = TF_ENOMEM;
				break;
			}
			names = nn;
		}
		if ((names[n] = strdup(de->d_name)) == NULL) {
			rc = TF_ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (rc == TF_OK) {
			rc = tf_registry_load_file(r, path);
		}
		free(names[i]);
	}
	free(names);
	if (rc == TF_ENOMEM) {
		return tfi_set_error(r, TF_ENOMEM, "out of memory");
	}
	return rc;
}

static int
search_add(struct tf_registry *r, const char *dir)
{
	if (dir[0] == '\0' || strcmp(dir, ".") == 0) {
		return TF_OK; /* never the current directory */
	}
	return tfi_json_put(&r->search, dir, strlen(dir)) ||
	               tfi_json_put(&r->search, "\n", 1)
	           ? tfi_set_error(r, TF_ENOMEM, "out of memory")
	           : TF_OK;
}

int
tf_registry_load(struct tf_registry *r)
{
	r->search.len = 0;
	int rc = TF_OK;
	for (size_t i = 0; i < r->ndirs && rc == TF_OK; i++) {
		/* A directory the user named must be there: a run that
		 * needs its ops would otherwise fail later, or run without
		 * them. */
		struct stat st;
		int e = stat(r->dirs[i], &st) != 0 ? errno
		        : S_ISDIR(st.st_mode)      ? 0
		                                   : ENOTDIR;
		if (e != 0) {
			return tfi_set_error(r, TF_ENOENT,
			                     "plugin directory '%s': %s",
			                     r->dirs[i], strerror(e));
		}
		rc = search_add(r, r->dirs[i]);
	}
	const char *env = getenv("TF_PLUGIN_PATH");
	if (env != NULL && rc == TF_OK) {
		char *copy = strdup(env), *save = NULL;
		for (char *p = copy ? strtok_r(copy, ":", &save) : NULL;
		     p != NULL && rc == TF_OK; p = strtok_r(NULL, ":", &save)) {
			rc = search_add(r, p);
		}
		free(copy);
	}
	/* lib/tfkit/plugins beside the program: the build tree, and an
	 * installed tree wherever it was moved. */
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (k > 0 && rc == TF_OK) {
		exe[k] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			char dir[PATH_MAX + 32];
			snprintf(dir, sizeof dir, "%s/../lib/tfkit/plugins",
			         exe);
			rc = search_add(r, dir);
		}
	}
	if (rc == TF_OK) {
		rc = search_add(r, TF_PLUGINDIR);
	}
	char *list = r->search.data ? strdup((char *)r->search.data) : NULL;
	char *save = NULL;
	for (char *p = list ? strtok_r(list, "\n", &save) : NULL;
	     p != NULL && rc == TF_OK; p = strtok_r(NULL, "\n", &save)) {
		rc = load_dir(r, p);
	}
	free(list);
	return rc;
}

const struct tf_op *
tf_registry_op(const struct tf_registry *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->e[i].is_op && strcmp(r->e[i].op->name, name) == 0) {
			return r->e[i].op;
		}
	}
	return NULL;
}

/* The registry's entry of the optimizer named, or NULL. */
static const struct entry *
optimizer_entry(const struct tf_registry *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++) {
		if (!r->e[i].is_op && strcmp(r->e[i].opt->name, name) == 0) {
			return &r->e[i];
		}
	}
	return NULL;
}

const struct tf_optimizer *
tf_registry_optimizer(const struct tf_registry *r, const char *name)
{
	const struct entry *e = optimizer_entry(r, name);
	return e ? e->opt : NULL;
}

tf_update_fn
tf_registry_optimizer_update(const struct tf_registry *r, const char *name)
{
	const struct entry *e = optimizer_entry(r, name);
	return e ? e->update : NULL;
}

const char *const *
tf_registry_optimizer_keys(const struct tf_registry *r, const char *name)
{
	const struct entry *e = optimizer_entry(r, name);
	return e ? e->keys : NULL;
}

size_t
tf_registry_count(const struct tf_registry *r)
{
	return r->n;
}

int
tf_registry_info(const struct tf_registry *r, size_t i,
                 struct tf_plugin_info *info)
{
	if (i >= r->n) {
		return TF_EINVAL;
	}
	const struct entry *e = &r->e[i];
	info->kind = e->is_op ? "op" : "optimizer";
	info->name = e->is_op ? e->op->name : e->opt->name;
	info->description = e->is_op ? e->op->description : e->opt->description;
	if (info->description == NULL) {
		info->description = "";
	}
	info->plugin = e->plugin->name;
	info->version = e->plugin->version ? e->plugin->version : "";
	info->path = e->path;
	return TF_OK;
}

const char *
tf_registry_search_path(const struct tf_registry *r)
{
	return r->search.len ? (const char *)r->search.data : "";
}
