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

/* The table's wrappers: each slot of kernels/slots.h on this file's
 * context (update has one of its own below). */
#define TFK_CALL_void(x)   x;
#define TFK_CALL_double(x) return x;
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	static ret k_##slot params                                             \
	{                                                                      \
		TFK_CALL_##ret(twin##_cuda TF_ARGS_CX args)                    \
	}
#include "kernels/slots.h"
#undef TF_KERNEL

static void
k_update(const struct tf_update *u, float *w, const float *g,
         float *const *slots, size_t n)
{
	update_cuda(u->kind, u->flag, u->lr, u->f0, u->f1, u->f2, u->d0, w, g,
	            slots, n, cx);
}

static const struct tf_kernels table = {
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	.slot = k_##slot,
#include "kernels/slots.h"
#undef TF_KERNEL
    .update = k_update,
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
