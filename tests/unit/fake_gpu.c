/*
 * fake_gpu.c - a stand-in for the CUDA module (tfk_module, as
 * kernels/cuda/module.c is) that runs the CPU kernels, for testing on a
 * machine without a GPU everything libtfcore does for a device that is
 * not the CPU: loading the module, uploads instead of reading batches in
 * place, uploads ahead, downloads, device updates, fallbacks.  Results
 * must equal the CPU device's bit for bit.
 *
 * It also keeps libtfcore to a GPU's rules.  Its memory is page-aligned
 * mappings that the host cannot touch (PROT_NONE): only its kernels,
 * uploads and downloads open a region while they work, as device memory
 * (cudaMalloc) is out of the host's reach, so any other host access
 * faults here, and the fault is named with a backtrace.  A kernel given
 * memory that is not the device's aborts, naming it.
 *	TFKIT_CUDA_MODULE=build/tests/fake-gpu.so tf-train --device cuda ...
 * FAKE_GPU_NO=SLOT leaves a kernel slot empty (the fallback path).
 */
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels/kernels.h"
#include "tf/device.h"

struct region {
	char *p;
	size_t len;
	int busy; /* closed to the host (always, but inside the module) */
};

static struct region *regions;
static size_t nregions, capregions;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static struct region *
find(const void *p)
{
	for (size_t i = 0; i < nregions; i++) {
		if ((const char *)p >= regions[i].p &&
		    (const char *)p < regions[i].p + regions[i].len) {
			return &regions[i];
		}
	}
	return NULL;
}

static void
set(struct region *r, int busy)
{
	if (r->busy != busy) {
		mprotect(r->p, r->len,
		         busy ? PROT_NONE : PROT_READ | PROT_WRITE);
		r->busy = busy;
	}
}

/* Before a kernel: its memory must be the device's; the CPU kernel then
 * needs to reach it. */
static void
launch(const char *what, const void *const *args, int n)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n; i++) {
		if (args[i] == NULL) {
			continue;
		}
		struct region *r = find(args[i]);
		if (r == NULL) {
			fprintf(stderr,
			        "fake GPU: kernel %s: argument %d (%p) is not "
			        "device memory\n",
			        what, i, args[i]);
			abort();
		}
		set(r, 0);
	}
}

/* After it: out of the host's reach again. */
static void
queued(const void *const *args, int n)
{
	for (int i = 0; i < n; i++) {
		struct region *r = args[i] ? find(args[i]) : NULL;
		if (r != NULL) {
			set(r, 1);
		}
	}
	pthread_mutex_unlock(&mu);
}

/* A sync orders the queue; it opens nothing to the host. */
static void
sync_locked(void)
{
}

static void
sync_all(void)
{
	pthread_mutex_lock(&mu);
	sync_locked();
	pthread_mutex_unlock(&mu);
}

static void
k_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
       const float *a, const float *b, float beta, float *c)
{
	const void *args_[] = {(const void *)(a), (const void *)(b),
	                       (const void *)(c)};
	launch("gemm", args_, 3);
	gemm_cpu(ta, tb, m, n, k, alpha, a, b, beta, c);
	queued(args_, 3);
}

static void
k_add_bias(float *y, const float *b, int64_t rows, int64_t cols)
{
	const void *args_[] = {(const void *)(y), (const void *)(b)};
	launch("add_bias", args_, 2);
	add_bias_cpu(y, b, rows, cols);
	queued(args_, 2);
}

static void
k_bias_grad(const float *dy, float *db, int64_t rows, int64_t cols)
{
	const void *args_[] = {(const void *)(dy), (const void *)(db)};
	launch("bias_grad", args_, 2);
	bias_grad_cpu(dy, db, rows, cols);
	queued(args_, 2);
}

static void
k_copy(const float *x, float *y, size_t n)
{
	const void *args_[] = {(const void *)(x), (const void *)(y)};
	launch("copy", args_, 2);
	copy_cpu(x, y, n);
	queued(args_, 2);
}

static void
k_zero(float *y, size_t n)
{
	const void *args_[] = {(const void *)(y)};
	launch("zero", args_, 1);
	zero_cpu(y, n);
	queued(args_, 1);
}

static void
k_add(const float *x, float *y, size_t n)
{
	const void *args_[] = {(const void *)(x), (const void *)(y)};
	launch("add", args_, 2);
	add_cpu(x, y, n);
	queued(args_, 2);
}

static void
k_relu(const float *x, float *y, size_t n)
{
	const void *args_[] = {(const void *)(x), (const void *)(y)};
	launch("relu", args_, 2);
	relu_forward_cpu(x, y, n);
	queued(args_, 2);
}

static void
k_relu_grad(const float *y, const float *dy, float *dx, size_t n)
{
	const void *args_[] = {(const void *)(y), (const void *)(dy),
	                       (const void *)(dx)};
	launch("relu_grad", args_, 3);
	relu_backward_cpu(y, dy, dx, n);
	queued(args_, 3);
}

static void
k_sigmoid(const float *x, float *y, size_t n)
{
	const void *args_[] = {(const void *)(x), (const void *)(y)};
	launch("sigmoid", args_, 2);
	sigmoid_forward_cpu(x, y, n);
	queued(args_, 2);
}

static void
k_sigmoid_grad(const float *y, const float *dy, float *dx, size_t n)
{
	const void *args_[] = {(const void *)(y), (const void *)(dy),
	                       (const void *)(dx)};
	launch("sigmoid_grad", args_, 3);
	sigmoid_backward_cpu(y, dy, dx, n);
	queued(args_, 3);
}

static void
k_tanh(const float *x, float *y, size_t n)
{
	const void *args_[] = {(const void *)(x), (const void *)(y)};
	launch("tanh", args_, 2);
	tanh_forward_cpu(x, y, n);
	queued(args_, 2);
}

static void
k_tanh_grad(const float *y, const float *dy, float *dx, size_t n)
{
	const void *args_[] = {(const void *)(y), (const void *)(dy),
	                       (const void *)(dx)};
	launch("tanh_grad", args_, 3);
	tanh_backward_cpu(y, dy, dx, n);
	queued(args_, 3);
}

static void
k_softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
	const void *args_[] = {(const void *)(x), (const void *)(y)};
	launch("softmax", args_, 2);
	softmax_forward_cpu(x, y, rows, cols);
	queued(args_, 2);
}

static void
k_softmax_grad(const float *y, const float *dy, float *dx, int64_t rows,
               int64_t cols)
{
	const void *args_[] = {(const void *)(y), (const void *)(dy),
	                       (const void *)(dx)};
	launch("softmax_grad", args_, 3);
	softmax_backward_cpu(y, dy, dx, rows, cols);
	queued(args_, 3);
}

static void
k_dropout(const float *x, float *y, float *mask, size_t n, float keep,
          uint64_t seed)
{
	const void *args_[] = {(const void *)(x), (const void *)(y),
	                       (const void *)(mask)};
	launch("dropout", args_, 3);
	dropout_forward_cpu(x, y, mask, n, keep, seed);
	queued(args_, 3);
}

static void
k_dropout_grad(const float *mask, const float *dy, float *dx, size_t n)
{
	const void *args_[] = {(const void *)(mask), (const void *)(dy),
	                       (const void *)(dx)};
	launch("dropout_grad", args_, 3);
	dropout_backward_cpu(mask, dy, dx, n);
	queued(args_, 3);
}

static void
k_bn_train(const float *x, float *y, float *xhat, float *inv_std,
           const float *gamma, const float *beta, float *mean_avg,
           float *var_avg, int64_t rows, int64_t cols, float eps,
           float momentum)
{
	const void *args_[] = {
	    (const void *)(x),        (const void *)(y),
	    (const void *)(xhat),     (const void *)(inv_std),
	    (const void *)(gamma),    (const void *)(beta),
	    (const void *)(mean_avg), (const void *)(var_avg)};
	launch("bn_train", args_, 8);
	batchnorm_train_cpu(x, y, xhat, inv_std, gamma, beta, mean_avg, var_avg,
	                    rows, cols, eps, momentum);
	queued(args_, 8);
}

static void
k_bn_infer(const float *x, float *y, const float *gamma, const float *beta,
           const float *mean_avg, const float *var_avg, int64_t rows,
           int64_t cols, float eps)
{
	const void *args_[] = {
	    (const void *)(x),        (const void *)(y),
	    (const void *)(gamma),    (const void *)(beta),
	    (const void *)(mean_avg), (const void *)(var_avg)};
	launch("bn_infer", args_, 6);
	batchnorm_infer_cpu(x, y, gamma, beta, mean_avg, var_avg, rows, cols,
	                    eps);
	queued(args_, 6);
}

static void
k_bn_grad(const float *dy, const float *xhat, const float *inv_std,
          const float *gamma, float *dx, float *dgamma, float *dbeta,
          int64_t rows, int64_t cols)
{
	const void *args_[] = {(const void *)(dy),      (const void *)(xhat),
	                       (const void *)(inv_std), (const void *)(gamma),
	                       (const void *)(dx),      (const void *)(dgamma),
	                       (const void *)(dbeta)};
	launch("bn_grad", args_, 7);
	batchnorm_backward_cpu(dy, xhat, inv_std, gamma, dx, dgamma, dbeta,
	                       rows, cols);
	queued(args_, 7);
}

static double
k_softmax_xent(const float *logits, const float *labels, float *dlogits,
               float scale, int64_t rows, int64_t cols)
{
	const void *args_[] = {(const void *)(logits), (const void *)(labels),
	                       (const void *)(dlogits)};
	launch("softmax_xent", args_, 3);
	double v = softmax_xent_cpu(logits, labels, dlogits, scale, rows, cols);
	queued(args_, 3);
	sync_all();
	return v;
}

static double
k_sigmoid_xent(const float *logits, const float *labels, float *dlogits,
               float scale, int64_t rows)
{
	const void *args_[] = {(const void *)(logits), (const void *)(labels),
	                       (const void *)(dlogits)};
	launch("sigmoid_xent", args_, 3);
	double v = sigmoid_xent_cpu(logits, labels, dlogits, scale, rows);
	queued(args_, 3);
	sync_all();
	return v;
}

static double
k_mse(const float *pred, const float *target, float *dpred, float scale,
      int64_t rows, int64_t cols)
{
	const void *args_[] = {(const void *)(pred), (const void *)(target),
	                       (const void *)(dpred)};
	launch("mse", args_, 3);
	double v = mse_cpu(pred, target, dpred, scale, rows, cols);
	queued(args_, 3);
	sync_all();
	return v;
}

static void
k_copy_cols(const float *x, int64_t xstride, float *y, int64_t ystride,
            int64_t rows, int64_t cols)
{
	const void *args_[] = {(const void *)(x), (const void *)(y)};
	launch("copy_cols", args_, 2);
	copy_cols_cpu(x, xstride, y, ystride, rows, cols);
	queued(args_, 2);
}

static void
k_add_cols(const float *x, int64_t xstride, float *y, int64_t ystride,
           int64_t rows, int64_t cols)
{
	const void *args_[] = {(const void *)(x), (const void *)(y)};
	launch("add_cols", args_, 2);
	add_cols_cpu(x, xstride, y, ystride, rows, cols);
	queued(args_, 2);
}

static void
k_gather(const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
         int64_t stride, int64_t rows, int64_t width, int combiner, float *y)
{
	const void *args_[] = {(const void *)(table), (const void *)(ids),
	                       (const void *)(y)};
	launch("gather", args_, 3);
	gather_cpu(table, vocab, dim, ids, stride, rows, width, combiner, y);
	queued(args_, 3);
}

static void
k_scatter(const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
          int64_t stride, int64_t rows, int64_t width, int combiner,
          float *dtable)
{
	const void *args_[] = {(const void *)(dy), (const void *)(ids),
	                       (const void *)(dtable)};
	launch("scatter", args_, 3);
	scatter_cpu(dy, vocab, dim, ids, stride, rows, width, combiner, dtable);
	queued(args_, 3);
}

static void
k_update(const struct tf_update *u, float *w, const float *g,
         float *const *slots, size_t n)
{
	unsigned ns =
	    u->kind == TF_UPDATE_SGD       ? 0
	    : u->kind == TF_UPDATE_RMSPROP ? 3
	    : (u->kind == TF_UPDATE_MOMENTUM || u->kind == TF_UPDATE_ADAGRAD)
	        ? 1
	        : 2;
	const void *args_[] = {w, g, ns > 0 ? slots[0] : NULL,
	                       ns > 1 ? slots[1] : NULL,
	                       ns > 2 ? slots[2] : NULL};
	launch("update", args_, 5);
	update_cpu(u, w, g, slots, n);
	queued(args_, 5);
}

static void
k_fill(float *y, size_t n, float v)
{
	const void *args_[] = {(const void *)(y)};
	launch("fill", args_, 1);
	fill_cpu(y, n, v);
	queued(args_, 1);
}

static struct tf_kernels table = {
    .gemm = k_gemm,
    .add_bias = k_add_bias,
    .bias_grad = k_bias_grad,
    .copy = k_copy,
    .zero = k_zero,
    .add = k_add,
    .relu = k_relu,
    .relu_grad = k_relu_grad,
    .sigmoid = k_sigmoid,
    .sigmoid_grad = k_sigmoid_grad,
    .tanh = k_tanh,
    .tanh_grad = k_tanh_grad,
    .softmax = k_softmax,
    .softmax_grad = k_softmax_grad,
    .dropout = k_dropout,
    .dropout_grad = k_dropout_grad,
    .bn_train = k_bn_train,
    .bn_infer = k_bn_infer,
    .bn_grad = k_bn_grad,
    .softmax_xent = k_softmax_xent,
    .sigmoid_xent = k_sigmoid_xent,
    .mse = k_mse,
    .copy_cols = k_copy_cols,
    .add_cols = k_add_cols,
    .gather = k_gather,
    .scatter = k_scatter,
    .update = k_update,
    .fill = k_fill,
};

/* A fault on device memory: the host touched it (a real GPU's
 * cudaMalloc'd memory would be out of its reach): say where, and abort. */
static void
on_fault(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	const char *a = si->si_addr;
	for (size_t i = 0; i < nregions; i++) {
		if (a >= regions[i].p && a < regions[i].p + regions[i].len) {
			char msg[160];
			int k = snprintf(msg, sizeof msg,
			                 "fake GPU: the host touched device "
			                 "memory at %p (offset %td of a region "
			                 "of %zu bytes):\n",
			                 (const void *)a, a - regions[i].p,
			                 regions[i].len);
			write(2, msg, (size_t)k);
			void *frames[32];
			backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
			abort();
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int
m_open(int gpu, int tf32, char *err, size_t errlen)
{
	(void)tf32;
	if (gpu != 0) {
		snprintf(err, errlen, "no CUDA GPU %d (1 present: 0 to 0)",
		         gpu);
		return -1;
	}
	/* FAKE_GPU_NO=update: a device without that kernel */
	const char *no = getenv("FAKE_GPU_NO");
	if (no != NULL && strcmp(no, "update") == 0) {
		table.update = NULL;
	}
	if (no != NULL && strcmp(no, "gemm") == 0) {
		table.gemm = NULL;
	}
	struct sigaction sa = {.sa_sigaction = on_fault,
	                       .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	return 0;
}

static const char *
m_name(void)
{
	return "fake GPU";
}

static float *
m_alloc(size_t n, int zero)
{
	(void)zero; /* fresh mappings are zero pages anyway */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = ((n ? n : 1) * sizeof(float) + page - 1) / page * page;
	void *p =
	    mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		return NULL;
	}
	pthread_mutex_lock(&mu);
	if (nregions == capregions) {
		size_t cap = capregions ? capregions * 2 : 64;
		struct region *r = realloc(regions, cap * sizeof *r);
		if (r == NULL) {
			pthread_mutex_unlock(&mu);
			munmap(p, len);
			return NULL;
		}
		regions = r;
		capregions = cap;
	}
	regions[nregions++] = (struct region){p, len, 1};
	pthread_mutex_unlock(&mu);
	return p;
}

static void
m_release(float *p)
{
	pthread_mutex_lock(&mu);
	struct region *r = find(p);
	if (r != NULL) {
		munmap(r->p, r->len);
		*r = regions[--nregions];
	}
	pthread_mutex_unlock(&mu);
}

static int
m_sync(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	sync_all();
	return 0;
}

static void
m_upload(void *dst, const void *src, size_t n)
{
	const void *args_[] = {dst};
	launch("upload", args_, 1);
	memcpy(dst, src, n);
	queued(args_, 1);
}

static void
m_upload_ahead(void *dst, const void *src, size_t n, int lane)
{
	(void)lane;
	m_upload(dst, src, n);
}

static void
m_await_uploads(int lane)
{
	(void)lane;
}

static void
m_download(void *dst, const void *src, size_t n)
{
	const void *args_[] = {src};
	launch("download", args_, 1);
	memcpy(dst, src, n);
	queued(args_, 1);
}

static int
m_extent(const void *p, void **base, size_t *bytes)
{
	pthread_mutex_lock(&mu);
	struct region *r = find(p);
	if (r != NULL) {
		*base = r->p;
		*bytes = r->len;
	}
	pthread_mutex_unlock(&mu);
	return r != NULL ? 0 : -1;
}

static int
m_pin(void *p, size_t n)
{
	(void)p;
	(void)n;
	return 0;
}

static void
m_unpin(void *p)
{
	(void)p;
}

static const struct tfk_module module = {
    .abi = TFK_MODULE_ABI,
    .open = m_open,
    .name = m_name,
    .kernels = &table,
    .alloc = m_alloc,
    .release = m_release,
    .sync = m_sync,
    .upload = m_upload,
    .upload_ahead = m_upload_ahead,
    .await_uploads = m_await_uploads,
    .download = m_download,
    .extent = m_extent,
    .pin = m_pin,
    .unpin = m_unpin,
};

__attribute__((visibility("default"))) const struct tfk_module *
tfk_module(void)
{
	return &module;
}
