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
 * runs the CPU kernel on the device's (managed) memory after a sync, and
 * is named in tf_device_fallbacks().
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
};

const struct tf_kernels tfi_cpu_kernels = {
    .gemm = gemm_cpu,
    .add_bias = add_bias_cpu,
    .bias_grad = bias_grad_cpu,
    .copy = copy_cpu,
    .zero = zero_cpu,
    .add = add_cpu,
    .relu = relu_forward_cpu,
    .relu_grad = relu_backward_cpu,
    .sigmoid = sigmoid_forward_cpu,
    .sigmoid_grad = sigmoid_backward_cpu,
    .tanh = tanh_forward_cpu,
    .tanh_grad = tanh_backward_cpu,
    .softmax = softmax_forward_cpu,
    .softmax_grad = softmax_backward_cpu,
    .dropout = dropout_forward_cpu,
    .dropout_grad = dropout_backward_cpu,
    .bn_train = batchnorm_train_cpu,
    .bn_infer = batchnorm_infer_cpu,
    .bn_grad = batchnorm_backward_cpu,
    .softmax_xent = softmax_xent_cpu,
    .sigmoid_xent = sigmoid_xent_cpu,
    .mse = mse_cpu,
    .copy_cols = copy_cols_cpu,
    .add_cols = add_cols_cpu,
    .gather = gather_cpu,
    .scatter = scatter_cpu,
    .update = update_cpu,
    .fill = fill_cpu,
};

static struct tf_device cpu = {
    TF_DEVICE_CPU, "cpu", &tfi_cpu_kernels, NULL, -1, 0, "cpu", ""};
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
	                          tf32,           "",     ""};
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

float *
tf_device_alloc(struct tf_device *d, size_t n)
{
	if (d->m != NULL) {
		return d->m->alloc(n, 1);
	}
	return calloc(n ? n : 1, sizeof(float)); /* zero pages, untouched */
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

static void
fallback(struct tf_device *d, const char *slot)
{
	char why[256];
	if (d->m != NULL) {
		d->m->sync(why, sizeof why);
	}
	tfi_device_fallback(d, slot);
}

#define RUN(d, slot, ...)                                                      \
	((d)->k->slot != NULL                                                  \
	     ? (d)->k->slot(__VA_ARGS__)                                       \
	     : (fallback((d), #slot), tfi_cpu_kernels.slot(__VA_ARGS__)))

void
tf_gemm(struct tf_device *d, int ta, int tb, int64_t m, int64_t n, int64_t k,
        float alpha, const float *a, const float *b, float beta, float *c)
{
	RUN(d, gemm, ta, tb, m, n, k, alpha, a, b, beta, c);
}

void
tf_add_bias(struct tf_device *d, float *y, const float *b, int64_t rows,
            int64_t cols)
{
	RUN(d, add_bias, y, b, rows, cols);
}

void
tf_bias_grad(struct tf_device *d, const float *dy, float *db, int64_t rows,
             int64_t cols)
{
	RUN(d, bias_grad, dy, db, rows, cols);
}

void
tf_copy(struct tf_device *d, const float *x, float *y, size_t n)
{
	RUN(d, copy, x, y, n);
}

void
tf_zero(struct tf_device *d, float *y, size_t n)
{
	RUN(d, zero, y, n);
}

void
tf_add(struct tf_device *d, const float *x, float *y, size_t n)
{
	RUN(d, add, x, y, n);
}

void
tf_relu(struct tf_device *d, const float *x, float *y, size_t n)
{
	RUN(d, relu, x, y, n);
}

void
tf_relu_grad(struct tf_device *d, const float *y, const float *dy, float *dx,
             size_t n)
{
	RUN(d, relu_grad, y, dy, dx, n);
}

void
tf_sigmoid(struct tf_device *d, const float *x, float *y, size_t n)
{
	RUN(d, sigmoid, x, y, n);
}

void
tf_sigmoid_grad(struct tf_device *d, const float *y, const float *dy, float *dx,
                size_t n)
{
	RUN(d, sigmoid_grad, y, dy, dx, n);
}

void
tf_tanh(struct tf_device *d, const float *x, float *y, size_t n)
{
	RUN(d, tanh, x, y, n);
}

void
tf_tanh_grad(struct tf_device *d, const float *y, const float *dy, float *dx,
             size_t n)
{
	RUN(d, tanh_grad, y, dy, dx, n);
}

void
tf_softmax(struct tf_device *d, const float *x, float *y, int64_t rows,
           int64_t cols)
{
	RUN(d, softmax, x, y, rows, cols);
}

void
tf_softmax_grad(struct tf_device *d, const float *y, const float *dy, float *dx,
                int64_t rows, int64_t cols)
{
	RUN(d, softmax_grad, y, dy, dx, rows, cols);
}

void
tf_dropout(struct tf_device *d, const float *x, float *y, float *mask, size_t n,
           float keep, uint64_t seed)
{
	RUN(d, dropout, x, y, mask, n, keep, seed);
}

void
tf_dropout_grad(struct tf_device *d, const float *mask, const float *dy,
                float *dx, size_t n)
{
	RUN(d, dropout_grad, mask, dy, dx, n);
}

void
tf_batchnorm_train(struct tf_device *d, const float *x, float *y, float *xhat,
                   float *inv_std, const float *gamma, const float *beta,
                   float *mean_avg, float *var_avg, int64_t rows, int64_t cols,
                   float eps, float momentum)
{
	RUN(d, bn_train, x, y, xhat, inv_std, gamma, beta, mean_avg, var_avg,
	    rows, cols, eps, momentum);
}

void
tf_batchnorm_infer(struct tf_device *d, const float *x, float *y,
                   const float *gamma, const float *beta, const float *mean_avg,
                   const float *var_avg, int64_t rows, int64_t cols, float eps)
{
	RUN(d, bn_infer, x, y, gamma, beta, mean_avg, var_avg, rows, cols, eps);
}

void
tf_batchnorm_grad(struct tf_device *d, const float *dy, const float *xhat,
                  const float *inv_std, const float *gamma, float *dx,
                  float *dgamma, float *dbeta, int64_t rows, int64_t cols)
{
	RUN(d, bn_grad, dy, xhat, inv_std, gamma, dx, dgamma, dbeta, rows,
	    cols);
}

double
tf_softmax_xent(struct tf_device *d, const float *logits, const float *labels,
                float *dlogits, float scale, int64_t rows, int64_t cols)
{
	return RUN(d, softmax_xent, logits, labels, dlogits, scale, rows, cols);
}

double
tf_sigmoid_xent(struct tf_device *d, const float *logits, const float *labels,
                float *dlogits, float scale, int64_t rows)
{
	return RUN(d, sigmoid_xent, logits, labels, dlogits, scale, rows);
}

double
tf_mse(struct tf_device *d, const float *pred, const float *target,
       float *dpred, float scale, int64_t rows, int64_t cols)
{
	return RUN(d, mse, pred, target, dpred, scale, rows, cols);
}

void
tf_copy_cols(struct tf_device *d, const float *x, int64_t xstride, float *y,
             int64_t ystride, int64_t rows, int64_t cols)
{
	RUN(d, copy_cols, x, xstride, y, ystride, rows, cols);
}

void
tf_add_cols(struct tf_device *d, const float *x, int64_t xstride, float *y,
            int64_t ystride, int64_t rows, int64_t cols)
{
	RUN(d, add_cols, x, xstride, y, ystride, rows, cols);
}

void
tf_gather(struct tf_device *d, const float *table, int64_t vocab, int64_t dim,
          const int64_t *ids, int64_t stride, int64_t rows, int64_t width,
          int combiner, float *y)
{
	RUN(d, gather, table, vocab, dim, ids, stride, rows, width, combiner,
	    y);
}

void
tf_scatter(struct tf_device *d, const float *dy, int64_t vocab, int64_t dim,
           const int64_t *ids, int64_t stride, int64_t rows, int64_t width,
           int combiner, float *dtable)
{
	RUN(d, scatter, dy, vocab, dim, ids, stride, rows, width, combiner,
	    dtable);
}

void
tf_fill(struct tf_device *d, float *y, size_t n, float v)
{
	RUN(d, fill, y, n, v);
}

void
tf_update(struct tf_device *d, const struct tf_update *u, float *w,
          const float *g, float *const *slots, size_t n)
{
	RUN(d, update, u, w, g, slots, n);
}
