/*
 * kernels.h - the compute behind the device interface (tf/device.h).
 *
 * Each device fills a struct tf_kernels; libtfcore's device.c calls
 * through it.  The CPU table (kernels/cpu/) is always built.  A CUDA table
 * (kernels/cuda/, built when nvcc is present) mirrors it: its launchers take
 * the same arguments, plus a stream.  Internal to libtfcore.
 */
#ifndef TF_KERNELS_H
#define TF_KERNELS_H

#include <stddef.h>
#include <stdint.h>

struct tf_update; /* tf/device.h */
struct tf_conv;   /* tf/device.h */
struct tf_device;
struct tfk_cuda; /* kernels/cuda/cuda.h */

/* Parameter lists of the list's entries with a first argument added
 * (slots.h's readers: api(struct tf_device *d, ...), TWIN_cuda(..., cx)). */
#define TF_PARAMS_DEV(...) (struct tf_device * d, __VA_ARGS__)
#define TF_PARAMS_CX(...)  (__VA_ARGS__, struct tfk_cuda * cx)
#define TF_ARGS_CX(...)    (__VA_ARGS__, cx)

/* The kernel table, one slot a line of slots.h, and the optimizers'
 * update. */
struct tf_kernels {
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	ret(*slot) params;
#include "kernels/slots.h"
#undef TF_KERNEL
	/* An optimizer's update (tf_update() in tf/device.h). */
	void (*update)(const struct tf_update *u, float *w, const float *g,
	               float *const *slots, size_t n);
};

/*
 * Simple loops worth compiling for the vector units the CPU has: one
 * copy each for AVX-512, AVX2 and the baseline, picked at load time.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TF_VECTOR_CLONES                                                       \
	__attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TF_VECTOR_CLONES
#endif

extern const struct tf_kernels tfi_cpu_kernels;

/* CPU implementations (kernels/cpu/): each slot's twin, and the rest. */
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	ret twin##_cpu params;
#include "kernels/slots.h"
#undef TF_KERNEL
void threads_cpu(int n);

/* Small matrix products with AVX-512 (gemm_avx512.c): usable on this
 * CPU?  0 done, -1 not (out of memory). */
int gemm_avx512_usable(void);
int gemm_avx512(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                const float *a, const float *b, float beta, float *c);
/* A bias gradient's column sums (bias_grad, on every device): up to
 * BIAS_GRAD_DIRECT rows, each column's rows added in order into db;
 * more (a convolution's rows: batch x height x width), each chunk of
 * BIAS_GRAD_CHUNK rows summed from 0 in order, the chunks' sums then
 * added into db in order, so that a GPU sums the chunks at once and
 * gets the CPU's floats. */
#define BIAS_GRAD_DIRECT 4096
#define BIAS_GRAD_CHUNK  256
/* The rows of tile q of m rows cut into as few tiles of at most mr_max
 * rows as can be, of sizes that differ by one at most (32 rows are
 * 6, 6, 5, 5, 5, 5, not five of 6 and one of 2: a tile of fewer rows
 * has too few sums in flight to keep the FMA units busy); its first
 * row in *i0 (gemm_avx2.c, gemm_avx512.c). */
static inline int
gemm_tile_rows(int64_t m, int mr_max, int64_t q, int64_t *i0)
{
	int64_t nt = (m + mr_max - 1) / mr_max, base = m / nt, more = m % nt;
	*i0 = q * base + (q < more ? q : more);
	return (int)(base + (q < more));
}
/* This thread's scratch buffer number slot (0 to 3) of at least floats
 * floats (scratch.c; kept for the next call, freed with the thread; NULL:
 * no memory), and B^T of an n x k matrix into slot 0 (k x n). */
#define SCRATCH_SLOTS 4
float *scratch_cpu(int slot, size_t floats);
const float *transposed_cpu(const float *b, int64_t n, int64_t k);
/* C (m x n) = alpha T^T + beta C from T (n x m): the narrow weight
 * gradients both gemm_avx*.c compute as their transpose. */
void untransposed_cpu(const float *t, int64_t m, int64_t n, float alpha,
                      float beta, float *c);
/* The same with AVX2 and FMA (gemm_avx2.c), where AVX-512 is not:
 * each element's sum over k in order, whatever the rows. */
int gemm_avx2_usable(void);
int gemm_avx2(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
              const float *a, const float *b, float beta, float *c);
/* Its B packed once for many products (a recurrent layer's kernel): the
 * floats op(B) (k x n) takes packed, the packing, and the product over
 * it (0 done, -1 not: out of memory, or the narrow transposed product
 * gemm_avx2() computes another way); the floats gemm_avx2() gives. */
int64_t gemm_avx2_packed_floats(int64_t n, int64_t k);
void gemm_avx2_pack(int tb, int64_t n, int64_t k, const float *b, float *p);
int gemm_avx2_packed(int ta, int tb, int64_t m, int64_t n, int64_t k,
                     float alpha, const float *a, const float *p, float beta,
                     float *c);
/* The same for the CPU device (matmul.c): 0 floats where its products
 * are not gemm_avx2()'s (AVX-512, OpenBLAS), and then no packing;
 * gemm_packed_cpu() is gemm_cpu() reading B from p when p is not NULL. */
size_t gemm_pack_floats_cpu(int64_t n, int64_t k);
void gemm_pack_cpu(int tb, int64_t n, int64_t k, const float *b, float *p);
void gemm_packed_cpu(int ta, int tb, int64_t m, int64_t n, int64_t k,
                     float alpha, const float *a, const float *b,
                     const float *p, float beta, float *c);
void update_cpu(const struct tf_update *u, float *w, const float *g,
                float *const *slots, size_t n);

/*
 * The CUDA device's module, tfkit/cuda.so (kernels/cuda/module.c): what
 * libtfcore's device.c finds with dlsym("tfk_module").  One GPU a
 * process, so the table's kernels need no context argument.
 */
#define TFK_MODULE_ABI 2
struct tfk_module {
	uint32_t abi; /* TFK_MODULE_ABI */
	/* Start GPU gpu (tf32: tensor-core matrix products); 0, or -1
	 * with why in err, everything it opened closed again. */
	int (*open)(int gpu, int tf32, char *err, size_t errlen);
	const char *(*name)(void); /* "NVIDIA H200" */
	const struct tf_kernels *kernels;
	/* device memory (cudaMalloc: out of the host's reach; zeroed when
	 * zero is set), or NULL */
	float *(*alloc)(size_t n, int zero);
	void (*release)(float *p);
	/* Wait for the queue; 0, or -1 with the first failure in err. */
	int (*sync)(char *err, size_t errlen);
	void (*upload)(void *dst, const void *src, size_t n);
	/* on the copy stream, in lane 0 or 1; the compute stream waits
	 * for a lane's last one */
	void (*upload_ahead)(void *dst, const void *src, size_t n, int lane);
	void (*await_uploads)(int lane);
	/* ... and back, waiting for the queue first */
	void (*download)(void *dst, const void *src, size_t n);
	/* The allocation p lies in: its start and bytes; 0, or -1 when p
	 * is not the device's (a kernel the device lacks runs on the CPU
	 * over host copies of its arguments' allocations). */
	int (*extent)(const void *p, void **base, size_t *bytes);
	int (*pin)(void *p, size_t n);
	void (*unpin)(void *p);
};

#endif
