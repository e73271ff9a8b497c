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

struct tf_kernels {
	void (*gemm)(int ta, int tb, int64_t m, int64_t n, int64_t k,
	             float alpha, const float *a, const float *b, float beta,
	             float *c);
	void (*add_bias)(float *y, const float *b, int64_t rows, int64_t cols);
	void (*bias_grad)(const float *dy, float *db, int64_t rows,
	                  int64_t cols);
	void (*copy)(const float *x, float *y, size_t n);
	void (*zero)(float *y, size_t n);
	void (*add)(const float *x, float *y, size_t n);
	void (*relu)(const float *x, float *y, size_t n);
	void (*relu_grad)(const float *y, const float *dy, float *dx, size_t n);
	void (*sigmoid)(const float *x, float *y, size_t n);
	void (*sigmoid_grad)(const float *y, const float *dy, float *dx,
	                     size_t n);
	void (*tanh)(const float *x, float *y, size_t n);
	void (*tanh_grad)(const float *y, const float *dy, float *dx, size_t n);
	void (*softmax)(const float *x, float *y, int64_t rows, int64_t cols);
	void (*softmax_grad)(const float *y, const float *dy, float *dx,
	                     int64_t rows, int64_t cols);
	void (*dropout)(const float *x, float *y, float *mask, size_t n,
	                float keep, uint64_t seed);
	void (*dropout_grad)(const float *mask, const float *dy, float *dx,
	                     size_t n);
	void (*bn_train)(const float *x, float *y, float *xhat, float *inv_std,
	                 const float *gamma, const float *beta, float *mean_avg,
	                 float *var_avg, int64_t rows, int64_t cols, float eps,
	                 float momentum);
	void (*bn_infer)(const float *x, float *y, const float *gamma,
	                 const float *beta, const float *mean_avg,
	                 const float *var_avg, int64_t rows, int64_t cols,
	                 float eps);
	void (*bn_grad)(const float *dy, const float *xhat,
	                const float *inv_std, const float *gamma, float *dx,
	                float *dgamma, float *dbeta, int64_t rows,
	                int64_t cols);
	double (*softmax_xent)(const float *logits, const float *labels,
	                       float *dlogits, float scale, int64_t rows,
	                       int64_t cols);
	double (*sigmoid_xent)(const float *logits, const float *labels,
	                       float *dlogits, float scale, int64_t rows);
	double (*mse)(const float *pred, const float *target, float *dpred,
	              float scale, int64_t rows, int64_t cols);
	void (*copy_cols)(const float *x, int64_t xstride, float *y,
	                  int64_t ystride, int64_t rows, int64_t cols);
	void (*add_cols)(const float *x, int64_t xstride, float *y,
	                 int64_t ystride, int64_t rows, int64_t cols);
	void (*gather)(const float *table, int64_t vocab, int64_t dim,
	               const int64_t *ids, int64_t stride, int64_t rows,
	               int64_t width, int combiner, float *y);
	void (*scatter)(const float *dy, int64_t vocab, int64_t dim,
	                const int64_t *ids, int64_t stride, int64_t rows,
	                int64_t width, int combiner, float *dtable);
	/* An optimizer's update (tf_update() in tf/device.h). */
	void (*update)(const struct tf_update *u, float *w, const float *g,
	               float *const *slots, size_t n);
	void (*fill)(float *y, size_t n, float v);
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

/* CPU implementations (kernels/cpu/). */
void threads_cpu(int n);
void gemm_cpu(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
              const float *a, const float *b, float beta, float *c);
void add_bias_cpu(float *restrict y, const float *restrict b, int64_t rows,
                  int64_t cols);
void bias_grad_cpu(const float *restrict dy, float *restrict db, int64_t rows,
                   int64_t cols);
void copy_cpu(const float *x, float *y, size_t n);
void zero_cpu(float *y, size_t n);
void fill_cpu(float *y, size_t n, float v);
void add_cpu(const float *x, float *y, size_t n);
void relu_forward_cpu(const float *restrict x, float *restrict y, size_t n);
void relu_backward_cpu(const float *restrict y, const float *restrict dy,
                       float *restrict dx, size_t n);
void sigmoid_forward_cpu(const float *x, float *y, size_t n);
void sigmoid_backward_cpu(const float *y, const float *dy, float *dx, size_t n);
void tanh_forward_cpu(const float *x, float *y, size_t n);
void tanh_backward_cpu(const float *y, const float *dy, float *dx, size_t n);
void softmax_forward_cpu(const float *x, float *y, int64_t rows, int64_t cols);
void softmax_backward_cpu(const float *y, const float *dy, float *dx,
                          int64_t rows, int64_t cols);
void dropout_forward_cpu(const float *x, float *y, float *mask, size_t n,
                         float keep, uint64_t seed);
void dropout_backward_cpu(const float *mask, const float *dy, float *dx,
                          size_t n);
void batchnorm_train_cpu(const float *x, float *y, float *xhat, float *inv_std,
                         const float *gamma, const float *beta, float *mean_avg,
                         float *var_avg, int64_t rows, int64_t cols, float eps,
                         float momentum);
void batchnorm_infer_cpu(const float *x, float *y, const float *gamma,
                         const float *beta, const float *mean_avg,
                         const float *var_avg, int64_t rows, int64_t cols,
                         float eps);
void batchnorm_backward_cpu(const float *dy, const float *xhat,
                            const float *inv_std, const float *gamma, float *dx,
                            float *dgamma, float *dbeta, int64_t rows,
                            int64_t cols);
double softmax_xent_cpu(const float *logits, const float *labels,
                        float *dlogits, float scale, int64_t rows,
                        int64_t cols);
double sigmoid_xent_cpu(const float *logits, const float *labels,
                        float *dlogits, float scale, int64_t rows);
double mse_cpu(const float *pred, const float *target, float *dpred,
               float scale, int64_t rows, int64_t cols);

/* Small matrix products with AVX-512 (gemm_avx512.c): usable on this
 * CPU?  0 done, -1 not (out of memory). */
int gemm_avx512_usable(void);
int gemm_avx512(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                const float *a, const float *b, float beta, float *c);
void copy_cols_cpu(const float *x, int64_t xstride, float *y, int64_t ystride,
                   int64_t rows, int64_t cols);
void add_cols_cpu(const float *x, int64_t xstride, float *y, int64_t ystride,
                  int64_t rows, int64_t cols);
void gather_cpu(const float *table, int64_t vocab, int64_t dim,
                const int64_t *ids, int64_t stride, int64_t rows, int64_t width,
                int combiner, float *y);
void scatter_cpu(const float *dy, int64_t vocab, int64_t dim,
                 const int64_t *ids, int64_t stride, int64_t rows,
                 int64_t width, int combiner, float *dtable);
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
