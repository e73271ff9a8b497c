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

/* The table's kernels: each slot of kernels/slots.h runs its CPU twin
 * on its device-memory arguments, opened to the host for the while (a
 * loss, which returns its mean, waits for its queue as the GPU's does).
 * update has a wrapper of its own below. */
#define FAKE_UNPAREN(...) __VA_ARGS__
#define FAKE_RUN_void(slot, twin, args, ptrs)                                  \
	const void *args_[] = {FAKE_UNPAREN ptrs};                             \
	int n_ = (int)(sizeof args_ / sizeof args_[0]);                        \
	launch(#slot, args_, n_);                                              \
	twin##_cpu args;                                                       \
	queued(args_, n_);
#define FAKE_RUN_double(slot, twin, args, ptrs)                                \
	const void *args_[] = {FAKE_UNPAREN ptrs};                             \
	int n_ = (int)(sizeof args_ / sizeof args_[0]);                        \
	launch(#slot, args_, n_);                                              \
	double v = twin##_cpu args;                                            \
	queued(args_, n_);                                                     \
	sync_all();                                                            \
	return v;
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	static ret k_##slot params                                             \
	{                                                                      \
		FAKE_RUN_##ret(slot, twin, args, ptrs)                         \
	}
#include "kernels/slots.h"
#undef TF_KERNEL

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

static struct tf_kernels table = {
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	.slot = k_##slot,
#include "kernels/slots.h"
#undef TF_KERNEL
    .update = k_update,
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
	/* FAKE_GPU_NO=SLOT: a device without that kernel */
	const char *no = getenv("FAKE_GPU_NO");
	if (no != NULL && strcmp(no, "update") == 0) {
		table.update = NULL;
	}
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	if (no != NULL && strcmp(no, #slot) == 0) {                            \
		table.slot = NULL;                                             \
	}
#include "kernels/slots.h"
#undef TF_KERNEL
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
