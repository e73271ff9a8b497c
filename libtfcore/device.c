/*
 * device.c - devices and the kernel dispatch of tf/device.h.
 *
 * A device is a kernel table (kernels/kernels.h) and the memory its
 * kernels work on.  Each tf_* kernel call goes through the table of the
 * device named in the call, so ops never look at the device kind.  The
 * CPU device is built in; the CUDA device is a module, tfkit/cuda.so
 * beside libtfcore (kernels/cuda/module.c), loaded with dlopen the first
 * time a GPU is asked for, so neither libtfcore nor a program that runs
 * on the CPU needs the CUDA libraries.  A slot the module leaves NULL
 * runs the CPU kernel over host copies of its arguments' memory (device
 * memory is out of the host's reach), and is named in
 * tf_device_fallbacks().
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "kernels/kernels.h"
#include "tf/device.h"

#ifndef TF_CUDA_BUILT
#define TF_CUDA_BUILT 0
#endif

struct tf_device {
	int kind;
	const char *name;
	const struct tf_kernels *k;
	const struct tfk_module *m; /* CUDA: the module; CPU: NULL */
	int gpu, tf32;
	char label[160];
	char fallbacks[512]; /* slots run on the CPU, ", "-separated */
	char failed[200];    /* a fallback that could not run: the next sync */
};

const struct tf_kernels tfi_cpu_kernels = {
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	.slot = twin##_cpu,
#include "kernels/slots.h"
#undef TF_KERNEL
    .update = update_cpu,
};

static struct tf_device cpu = {
    TF_DEVICE_CPU, "cpu", &tfi_cpu_kernels, NULL, -1, 0, "cpu", "", ""};
static struct tf_device cuda;
static pthread_mutex_t cuda_mu = PTHREAD_MUTEX_INITIALIZER;

void
tf_set_threads(int n)
{
	threads_cpu(n < 1 ? 1 : n);
}

struct tf_device *
tf_device_cpu(void)
{
	return &cpu;
}

int
tf_device_kind(const struct tf_device *d)
{
	return d->kind;
}

const char *
tf_device_name(const struct tf_device *d)
{
	return d->label;
}

const char *
tf_device_fallbacks(const struct tf_device *d)
{
	return d->fallbacks;
}

/* "fp32" (or NULL) 0, "tf32" 1, else -1. */
static int
parse_math(const char *math)
{
	if (math == NULL || strcmp(math, "fp32") == 0) {
		return 0;
	}
	return strcmp(math, "tf32") == 0 ? 1 : -1;
}

/* Where the module is: TFKIT_CUDA_MODULE, else tfkit/cuda.so in the
 * directory libtfcore was loaded from, else the installed one. */
static void
module_path(char *path, size_t len)
{
	const char *env = getenv("TFKIT_CUDA_MODULE");
	Dl_info info;
	if (env != NULL && env[0] != '\0') {
		snprintf(path, len, "%s", env);
		return;
	}
	/* A program linked with the static library finds itself here,
	 * not libtfcore.so: the installed module then. */
	if (dladdr((void *)module_path, &info) != 0 && info.dli_fname != NULL &&
	    strchr(info.dli_fname, '/')) {
		const char *slash = strrchr(info.dli_fname, '/');
		snprintf(path, len, "%.*s/tfkit/cuda.so",
		         (int)(slash - info.dli_fname), info.dli_fname);
		if (access(path, F_OK) == 0) {
			return;
		}
	}
	snprintf(path, len, "%s", TF_CUDA_MODULE);
}

static int
open_cuda(int gpu, int tf32, char *msg, size_t msglen)
{
	const char *env = getenv("TFKIT_CUDA_MODULE");
	if (!TF_CUDA_BUILT && (env == NULL || env[0] == '\0')) {
		snprintf(msg, msglen,
		         "this tfkit was built without CUDA (no nvcc and "
		         "CUDA libraries when it was built, or CUDA=0)");
		return TF_EUNAVAIL;
	}
	char path[PATH_MAX];
	module_path(path, sizeof path);
	void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (so == NULL) {
		const char *why = dlerror();
		snprintf(msg, msglen, "cannot load the CUDA module: %s",
		         why ? why : path);
		return TF_EUNAVAIL;
	}
	const struct tfk_module *(*entry)(void);
	*(void **)&entry = dlsym(so, "tfk_module");
	const struct tfk_module *m = entry ? entry() : NULL;
	if (m == NULL || m->abi != TFK_MODULE_ABI) {
		snprintf(msg, msglen,
		         "%s: not a tfkit CUDA module of this "
		         "version",
		         path);
		dlclose(so);
		return TF_EUNAVAIL;
	}
	/* Loaded, it stays: the CUDA runtime it brought may have started
	 * threads and keeps its memory until the process ends, found or
	 * not a GPU. */
	char why[256] = "";
	if (m->open(gpu, tf32, why, sizeof why) != 0) {
		snprintf(msg, msglen, "%s", why);
		return TF_EUNAVAIL;
	}
	/* The module stays loaded for the life of the process. */
	cuda = (struct tf_device){TF_DEVICE_CUDA, "cuda", m->kernels, m, gpu,
	                          tf32,           "",     "",         ""};
	snprintf(cuda.label, sizeof cuda.label, "cuda:%d (%s)", gpu, m->name());
	return TF_OK;
}

int
tf_device_open(const char *name, const char *math, struct tf_device **out,
               char *msg, size_t msglen)
{
	int tf32 = parse_math(math);
	*out = NULL;
	if (tf32 < 0) {
		snprintf(msg, msglen, "'%s' is not a GPU math (fp32 or tf32)",
		         math);
		return TF_EINVAL;
	}
	if (strcmp(name, "cpu") == 0) {
		if (tf32) {
			snprintf(msg, msglen,
			         "tf32 is a GPU math: the CPU "
			         "multiplies in fp32");
			return TF_EINVAL;
		}
		*out = &cpu;
		return TF_OK;
	}
	long gpu = 0;
	if (strncmp(name, "cuda", 4) != 0 ||
	    (name[4] != '\0' && name[4] != ':')) {
		snprintf(msg, msglen,
		         "'%s' is not a device (cpu, cuda or cuda:N)", name);
		return TF_EINVAL;
	}
	if (name[4] == ':') {
		char *end;
		errno = 0;
		gpu = strtol(name + 5, &end, 10);
		if (name[5] < '0' || name[5] > '9' || *end != '\0' ||
		    errno != 0 || gpu > 4095) {
			snprintf(msg, msglen, "'%s': a GPU is cuda:N, N from 0",
			         name);
			return TF_EINVAL;
		}
	}
	pthread_mutex_lock(&cuda_mu);
	int rc = TF_OK;
	if (cuda.m == NULL) {
		rc = open_cuda((int)gpu, tf32, msg, msglen);
	} else if (cuda.gpu != gpu || cuda.tf32 != tf32) {
		snprintf(msg, msglen,
		         "one GPU a process: cuda:%d (%s math) is in use",
		         cuda.gpu, cuda.tf32 ? "tf32" : "fp32");
		rc = TF_EINVAL;
	}
	pthread_mutex_unlock(&cuda_mu);
	if (rc == TF_OK) {
		*out = &cuda;
	}
	return rc;
}

/* From this size up, a host table (parameters, their gradients, an
 * optimizer's slots) lies on transparent huge pages where the kernel
 * lends them (madvise MADV_HUGEPAGE): an embedding of a million rows
 * read and updated at random rows reaches each through the TLB, not a
 * page walk each (the dnn of bench/sparse: a 64 MB table, its
 * gradient and its slot). */
#define HUGE_TABLE ((size_t)2 << 20)
#define HUGE_PAGE  ((size_t)2 << 20)

void *
tfi_table_alloc(size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (bytes < SIZE_MAX - HUGE_PAGE && bytes >= HUGE_TABLE) {
		size_t whole = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		void *p = aligned_alloc(HUGE_PAGE, whole);
		if (p != NULL) {
			/* advice only: without it the pages are 4 KiB */
			(void)madvise(p, whole, MADV_HUGEPAGE);
			memset(p, 0, whole);
			return p;
		}
	}
#endif
	return calloc(bytes ? bytes : 1, 1); /* zero pages, untouched */
}

float *
tf_device_alloc(struct tf_device *d, size_t n)
{
	if (d->m != NULL) {
		return d->m->alloc(n, 1);
	}
	return n < SIZE_MAX / sizeof(float) ? tfi_table_alloc(n * sizeof(float))
	                                    : NULL;
}

void
tfi_populate(void *a, size_t from, size_t to)
{
#ifdef MADV_POPULATE_WRITE
	static size_t page;
	if (page == 0) {
		long v = sysconf(_SC_PAGESIZE);
		page = v > 0 ? (size_t)v : 4096;
	}
	uintptr_t s = ((uintptr_t)a + from) & ~(uintptr_t)(page - 1);
	uintptr_t e = ((uintptr_t)a + to + page - 1) & ~(uintptr_t)(page - 1);
	/* advice only: where the kernel has none, the pages fault in */
	(void)madvise((void *)s, (size_t)(e - s), MADV_POPULATE_WRITE);
#else
	(void)a, (void)from, (void)to;
#endif
}

float *
tfi_device_alloc_step(struct tf_device *d, size_t n)
{
	if (d->m != NULL) {
		return d->m->alloc(n, 0);
	}
	size_t bytes = ((n * sizeof(float)) + 63) & ~(size_t)63;
	return aligned_alloc(64, bytes ? bytes : 64);
}

void
tfi_device_populate(struct tf_device *d, void *p, size_t from, size_t to)
{
	if (d->m == NULL && p != NULL && to > from) {
		tfi_populate(p, from, to);
	}
}

void
tf_device_free(struct tf_device *d, float *p)
{
	if (p == NULL) {
		return;
	}
	if (d->m != NULL) {
		d->m->release(p);
	} else {
		free(p);
	}
}

int
tf_device_sync(struct tf_device *d, char *msg, size_t msglen)
{
	if (d->m == NULL) {
		return TF_OK;
	}
	char why[256] = "";
	if (d->m->sync(why, sizeof why) != 0) {
		snprintf(msg, msglen, "%s: %s", d->label, why);
		return TF_EINTERNAL;
	}
	if (d->failed[0] != '\0') {
		snprintf(msg, msglen, "%s: %s", d->label, d->failed);
		return TF_ENOMEM;
	}
	return TF_OK;
}

void
tf_device_upload(struct tf_device *d, void *dst, const void *src, size_t n)
{
	if (d->m != NULL) {
		d->m->upload(dst, src, n);
	} else if (n > 0 && dst != src) {
		memcpy(dst, src, n);
	}
}

void
tf_device_upload_ahead(struct tf_device *d, void *dst, const void *src,
                       size_t n, int lane)
{
	if (d->m != NULL) {
		d->m->upload_ahead(dst, src, n, lane);
	} else if (n > 0 && dst != src) {
		memcpy(dst, src, n);
	}
}

void
tf_device_await_uploads(struct tf_device *d, int lane)
{
	if (d->m != NULL) {
		d->m->await_uploads(lane);
	}
}

float *
tfi_device_mirror(struct tf_device *dev, float **host, const float *d, size_t n,
                  int fetch)
{
	if (*host == NULL && (*host = calloc(n + 1, sizeof(float))) == NULL) {
		return NULL;
	}
	if (fetch) {
		tf_device_download(dev, *host, d, n * sizeof(float));
	}
	return *host;
}

void
tf_device_download(struct tf_device *d, void *dst, const void *src, size_t n)
{
	if (d->m != NULL) {
		d->m->download(dst, src, n);
	} else if (n > 0 && dst != src) {
		memcpy(dst, src, n);
	}
}

int
tf_device_pin(struct tf_device *d, void *p, size_t n)
{
	return d->m != NULL ? d->m->pin(p, n) : 0;
}

void
tf_device_unpin(struct tf_device *d, void *p)
{
	if (d->m != NULL) {
		d->m->unpin(p);
	}
}

/* A slot the device lacks: wait for its queued work, then the CPU
 * kernel on the same memory; named once in d->fallbacks. */
void
tfi_device_fallback(struct tf_device *d, const char *what)
{
	pthread_mutex_lock(&cuda_mu);
	if (strstr(d->fallbacks, what) == NULL) {
		size_t used = strlen(d->fallbacks);
		snprintf(d->fallbacks + used, sizeof d->fallbacks - used,
		         "%s%s", used ? ", " : "", what);
	}
	pthread_mutex_unlock(&cuda_mu);
}

/*
 * A slot the device lacks runs the CPU kernel over host copies of its
 * arguments: device memory (cudaMalloc) is out of the host's reach.  Each
 * argument's allocation is downloaded once (arguments often share one: a
 * step's tensors lie in one arena), the kernel runs on the copies, and
 * the allocations it writes go back up.  Memory that is not the
 * device's (a host buffer) is used as it is.  Named once in
 * d->fallbacks; slow, and said so (tf-train warns after its first step).
 */
#define STAGE_MAX 12

struct stage {
	struct tf_device *d;
	int n;
	struct {
		char *base, *host;
		size_t bytes;
		int out;
	} a[STAGE_MAX];
};

static void
fallback(struct tf_device *d, const char *slot, struct stage *s)
{
	char why[256];
	if (d->m != NULL) {
		d->m->sync(why, sizeof why);
	}
	tfi_device_fallback(d, slot);
	s->d = d;
	s->n = 0;
}

/* The host's copy of what p points into (out: written by the kernel). */
static void *
staged(struct stage *s, const void *p, int out)
{
	void *base;
	size_t bytes;
	if (p == NULL || s->d->m == NULL || s->d->m->extent == NULL ||
	    s->d->m->extent(p, &base, &bytes) != 0) {
		return (void *)p;
	}
	for (int i = 0; i < s->n; i++) {
		if (s->a[i].base == (char *)base) {
			s->a[i].out |= out;
			return s->a[i].host + ((const char *)p - (char *)base);
		}
	}
	char *host = s->n < STAGE_MAX ? malloc(bytes) : NULL;
	if (host == NULL) {
		snprintf(s->d->failed, sizeof s->d->failed,
		         "out of memory for a host copy of %zu bytes (a "
		         "kernel the device lacks)",
		         bytes);
		return NULL;
	}
	s->d->m->download(host, base, bytes);
	s->a[s->n].base = base;
	s->a[s->n].host = host;
	s->a[s->n].bytes = bytes;
	s->a[s->n].out = out;
	s->n++;
	return host + ((const char *)p - (char *)base);
}

/* The kernel's writes back to the device; the copies freed. */
static void
unstage(struct stage *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->a[i].out) {
			s->d->m->upload(s->a[i].base, s->a[i].host,
			                s->a[i].bytes);
		}
	}
	if (s->n > 0) {
		char why[256];
		s->d->m->sync(why,
		              sizeof why); /* the uploads read the copies */
	}
	for (int i = 0; i < s->n; i++) {
		free(s->a[i].host);
	}
	s->n = 0;
}

/* The optimizer slots an update kind reads (update_cpu()'s). */
static int
update_slots(int kind)
{
	switch (kind) {
	case TF_UPDATE_MOMENTUM:
	case TF_UPDATE_ADAGRAD:
		return 1;
	case TF_UPDATE_ADADELTA:
	case TF_UPDATE_ADAM:
	case TF_UPDATE_FTRL:
		return 2;
	case TF_UPDATE_RMSPROP:
		return 3;
	default:
		return 0;
	}
}

/* Whether every staged pointer could be had (else the kernel is not
 * run, and the next sync fails naming why). */
static int
stage_ok(const struct stage *s)
{
	return s->d->failed[0] == '\0';
}

/*
 * The dispatchers, one a slot of kernels/slots.h: the device's kernel, or
 * the CPU's over host copies (staged(): IN read, OUT written back, IDS
 * ids) when the device lacks it; a loss returns its mean either way.
 */
#define IN(p)  ((const float *)staged(&s, (p), 0))
#define OUT(p) ((float *)staged(&s, (p), 1))
#define IDS(p) ((const int64_t *)staged(&s, (p), 0))
#define TF_DISPATCH_void(slot, args, staged)                                   \
	if (d->k->slot != NULL) {                                              \
		d->k->slot args;                                               \
		return;                                                        \
	}                                                                      \
	struct stage s;                                                        \
	fallback(d, #slot, &s);                                                \
	if (stage_ok(&s)) {                                                    \
		tfi_cpu_kernels.slot staged;                                   \
	}                                                                      \
	unstage(&s);
#define TF_DISPATCH_double(slot, args, staged)                                 \
	if (d->k->slot != NULL) {                                              \
		return d->k->slot args;                                        \
	}                                                                      \
	struct stage s;                                                        \
	fallback(d, #slot, &s);                                                \
	double v = 0;                                                          \
	if (stage_ok(&s)) {                                                    \
		v = tfi_cpu_kernels.slot staged;                               \
	}                                                                      \
	unstage(&s);                                                           \
	return v;
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	ret api TF_PARAMS_DEV params                                           \
	{                                                                      \
		TF_DISPATCH_##ret(slot, args, staged)                          \
	}
#include "kernels/slots.h"
#undef TF_KERNEL
#undef IN
#undef OUT
#undef IDS

/* B packed ahead: the CPU's products only (kernels/cpu/matmul.c). */
size_t
tf_gemm_pack_floats(struct tf_device *d, int64_t n, int64_t k)
{
	return d->kind == TF_DEVICE_CPU ? gemm_pack_floats_cpu(n, k) : 0;
}

void
tf_gemm_pack(struct tf_device *d, int trans_b, int64_t n, int64_t k,
             const float *b, float *p)
{
	if (d->kind == TF_DEVICE_CPU) {
		gemm_pack_cpu(trans_b, n, k, b, p);
	}
}

void
tf_gemm_packed(struct tf_device *d, int trans_a, int trans_b, int64_t m,
               int64_t n, int64_t k, float alpha, const float *a,
               const float *b, const float *p, float beta, float *c)
{
	if (p != NULL && d->kind == TF_DEVICE_CPU) {
		gemm_packed_cpu(trans_a, trans_b, m, n, k, alpha, a, b, p, beta,
		                c);
		return;
	}
	tf_gemm(d, trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

void
tf_update(struct tf_device *d, const struct tf_update *u, float *w,
          const float *g, float *const *slots, size_t n)
{
	if (d->k->update != NULL) {
		d->k->update(u, w, g, slots, n);
		return;
	}
	struct stage s;
	fallback(d, "update", &s);
	float *hs[3] = {NULL, NULL, NULL};
	for (int i = 0; slots != NULL && i < update_slots(u->kind); i++) {
		hs[i] = (float *)staged(&s, slots[i], 1);
	}
	if (stage_ok(&s)) {
		tfi_cpu_kernels.update(u, (float *)staged(&s, w, 1),
		                       (const float *)staged(&s, g, 0),
		                       slots != NULL ? hs : NULL, n);
	}
	unstage(&s);
}

int
tf_conv_geometry(int64_t h, int64_t w, int64_t c, int64_t k, int64_t stride,
                 int same, struct tf_conv *g)
{
	*g = (struct tf_conv){.h = h,
	                      .w = w,
	                      .c = c,
	                      .kh = k,
	                      .kw = k,
	                      .sh = stride,
	                      .sw = stride};
	if (same) {
		g->oh = (h + stride - 1) / stride;
		g->ow = (w + stride - 1) / stride;
		int64_t ph = (g->oh - 1) * stride + k - h;
		int64_t pw = (g->ow - 1) * stride + k - w;
		g->ph = ph > 0 ? ph / 2 : 0;
		g->pw = pw > 0 ? pw / 2 : 0;
		return 0;
	}
	if (k > h || k > w) {
		return -1;
	}
	g->oh = (h - k) / stride + 1;
	g->ow = (w - k) / stride + 1;
	return 0;
}
