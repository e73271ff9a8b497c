/*
 * module.c - the CUDA device as libtfcore loads it (tfkit/cuda.so): the
 * kernel table of kernels/kernels.h over the launchers of cuda.h, and the
 * device's memory.  One GPU a process, so its context is this file's and
 * the table's slots need none.  Built only when nvcc and the CUDA
 * libraries are found; linked with them, so libtfcore is not.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cuda/cuda.h"
#include "kernels/kernels.h"
#include "tf/device.h"

static struct tfk_cuda *cx;

static void
k_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
       const float *a, const float *b, float beta, float *c)
{
	gemm_cuda(ta, tb, m, n, k, alpha, a, b, beta, c, cx);
}

static void
k_add_bias(float *y, const float *b, int64_t rows, int64_t cols)
{
	add_bias_cuda(y, b, rows, cols, cx);
}

static void
k_bias_grad(const float *dy, float *db, int64_t rows, int64_t cols)
{
	bias_grad_cuda(dy, db, rows, cols, cx);
}

static void
k_copy(const float *x, float *y, size_t n)
{
	copy_cuda(x, y, n, cx);
}

static void
k_zero(float *y, size_t n)
{
	zero_cuda(y, n, cx);
}

static void
k_add(const float *x, float *y, size_t n)
{
	add_cuda(x, y, n, cx);
}

static void
k_relu(const float *x, float *y, size_t n)
{
	relu_forward_cuda(x, y, n, cx);
}

static void
k_relu_grad(const float *y, const float *dy, float *dx, size_t n)
{
	relu_backward_cuda(y, dy, dx, n, cx);
}

static void
k_sigmoid(const float *x, float *y, size_t n)
{
	sigmoid_forward_cuda(x, y, n, cx);
}

static void
k_sigmoid_grad(const float *y, const float *dy, float *dx, size_t n)
{
	sigmoid_backward_cuda(y, dy, dx, n, cx);
}

static void
k_tanh(const float *x, float *y, size_t n)
{
	tanh_forward_cuda(x, y, n, cx);
}

static void
k_tanh_grad(const float *y, const float *dy, float *dx, size_t n)
{
	tanh_backward_cuda(y, dy, dx, n, cx);
}

static void
k_softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
	softmax_forward_cuda(x, y, rows, cols, cx);
}

static void
k_softmax_grad(const float *y, const float *dy, float *dx, int64_t rows,
               int64_t cols)
{
	softmax_backward_cuda(y, dy, dx, rows, cols, cx);
}

static void
k_dropout(const float *x, float *y, float *mask, size_t n, float keep,
          uint64_t seed)
{
	dropout_forward_cuda(x, y, mask, n, keep, seed, cx);
}

static void
k_dropout_grad(const float *mask, const float *dy, float *dx, size_t n)
{
	dropout_backward_cuda(mask, dy, dx, n, cx);
}

static void
k_bn_train(const float *x, float *y, float *xhat, float *inv_std,
           const float *gamma, const float *beta, float *mean_avg,
           float *var_avg, int64_t rows, int64_t cols, float eps,
           float momentum)
{
	batchnorm_train_cuda(x, y, xhat, inv_std, gamma, beta, mean_avg,
	                     var_avg, rows, cols, eps, momentum, cx);
}

static void
k_bn_infer(const float *x, float *y, const float *gamma, const float *beta,
           const float *mean_avg, const float *var_avg, int64_t rows,
           int64_t cols, float eps)
{
	batchnorm_infer_cuda(x, y, gamma, beta, mean_avg, var_avg, rows, cols,
	                     eps, cx);
}

static void
k_bn_grad(const float *dy, const float *xhat, const float *inv_std,
          const float *gamma, float *dx, float *dgamma, float *dbeta,
          int64_t rows, int64_t cols)
{
	batchnorm_backward_cuda(dy, xhat, inv_std, gamma, dx, dgamma, dbeta,
	                        rows, cols, cx);
}

static double
k_softmax_xent(const float *logits, const float *labels, float *dlogits,
               float scale, int64_t rows, int64_t cols)
{
	return softmax_xent_cuda(logits, labels, dlogits, scale, rows, cols,
	                         cx);
}

static double
k_sigmoid_xent(const float *logits, const float *labels, float *dlogits,
               float scale, int64_t rows)
{
	return sigmoid_xent_cuda(logits, labels, dlogits, scale, rows, cx);
}

static double
k_mse(const float *pred, const float *target, float *dpred, float scale,
      int64_t rows, int64_t cols)
{
	return mse_cuda(pred, target, dpred, scale, rows, cols, cx);
}

static void
k_copy_cols(const float *x, int64_t xstride, float *y, int64_t ystride,
            int64_t rows, int64_t cols)
{
	copy_cols_cuda(x, xstride, y, ystride, rows, cols, cx);
}

static void
k_add_cols(const float *x, int64_t xstride, float *y, int64_t ystride,
           int64_t rows, int64_t cols)
{
	add_cols_cuda(x, xstride, y, ystride, rows, cols, cx);
}

static void
k_gather(const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
         int64_t stride, int64_t rows, int64_t width, int combiner, float *y)
{
	gather_cuda(table, vocab, dim, ids, stride, rows, width, combiner, y,
	            cx);
}

static void
k_scatter(const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
          int64_t stride, int64_t rows, int64_t width, int combiner,
          float *dtable)
{
	scatter_cuda(dy, vocab, dim, ids, stride, rows, width, combiner, dtable,
	             cx);
}

static void
k_update(const struct tf_update *u, float *w, const float *g,
         float *const *slots, size_t n)
{
	update_cuda(u->kind, u->flag, u->lr, u->f0, u->f1, u->f2, u->d0, w, g,
	            slots, n, cx);
}

static void
k_fill(float *y, size_t n, float v)
{
	fill_cuda(y, n, v, cx);
}

static const struct tf_kernels table = {
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

static int
m_open(int gpu, int tf32, char *err, size_t errlen)
{
	cx = tfk_cuda_open(gpu, tf32 ? TFK_MATH_TF32 : TFK_MATH_FP32, err,
	                   errlen);
	return cx != NULL ? 0 : -1;
}

static const char *
m_name(void)
{
	return tfk_cuda_name(cx);
}

/* The allocations made, for extent(): a few dozen at most (a model's
 * blocks, its optimizer's slots, step arenas, staged batches). */
struct allocation {
	char *p;
	size_t bytes;
};
static struct allocation *allocs;
static size_t nallocs, capallocs;
static pthread_mutex_t allocs_mu = PTHREAD_MUTEX_INITIALIZER;

static float *
m_alloc(size_t n, int zero)
{
	float *p = tfk_cuda_alloc(cx, n, zero);
	if (p == NULL) {
		return NULL;
	}
	pthread_mutex_lock(&allocs_mu);
	if (nallocs == capallocs) {
		size_t cap = capallocs ? capallocs * 2 : 64;
		struct allocation *a = realloc(allocs, cap * sizeof *a);
		if (a == NULL) {
			pthread_mutex_unlock(&allocs_mu);
			tfk_cuda_free(cx, p);
			return NULL;
		}
		allocs = a;
		capallocs = cap;
	}
	allocs[nallocs++] =
	    (struct allocation){(char *)p, (n < 16 ? 16 : n) * sizeof(float)};
	pthread_mutex_unlock(&allocs_mu);
	return p;
}

static void
m_release(float *p)
{
	pthread_mutex_lock(&allocs_mu);
	for (size_t i = 0; i < nallocs; i++) {
		if (allocs[i].p == (char *)p) {
			allocs[i] = allocs[--nallocs];
			break;
		}
	}
	pthread_mutex_unlock(&allocs_mu);
	tfk_cuda_free(cx, p);
}

static int
m_extent(const void *p, void **base, size_t *bytes)
{
	int found = -1;
	pthread_mutex_lock(&allocs_mu);
	for (size_t i = 0; i < nallocs && found != 0; i++) {
		if ((const char *)p >= allocs[i].p &&
		    (const char *)p < allocs[i].p + allocs[i].bytes) {
			*base = allocs[i].p;
			*bytes = allocs[i].bytes;
			found = 0;
		}
	}
	pthread_mutex_unlock(&allocs_mu);
	return found;
}

static int
m_sync(char *err, size_t errlen)
{
	return tfk_cuda_sync(cx, err, errlen);
}

static void
m_upload(void *dst, const void *src, size_t n)
{
	tfk_cuda_upload(cx, dst, src, n);
}

static void
m_upload_ahead(void *dst, const void *src, size_t n, int lane)
{
	tfk_cuda_upload_ahead(cx, dst, src, n, lane);
}

static void
m_await_uploads(int lane)
{
	tfk_cuda_await_uploads(cx, lane);
}

static void
m_download(void *dst, const void *src, size_t n)
{
	tfk_cuda_download(cx, dst, src, n);
}

static int
m_pin(void *p, size_t n)
{
	return tfk_cuda_pin(cx, p, n);
}

static void
m_unpin(void *p)
{
	tfk_cuda_unpin(cx, p);
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
