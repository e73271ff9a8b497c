/*
 * cuda.h - the kernel table on NVIDIA GPUs (kernels/cuda/kernels.cu):
 * the CUDA runtime, cuBLAS for the matrix products, a kernel for each of
 * the rest.  Each launcher has its CPU twin's name (relu_forward_cpu ->
 * relu_forward_cuda) and arguments, all pointers on the device, plus the
 * context it runs in: a stream and a cuBLAS handle.  Work is queued on
 * the stream; the losses, which return their mean, wait for it.
 *
 * Results match the CPU kernels within rounding: the same formulas, sums
 * of a row or a column in one thread in the same order (double where the
 * CPU sums in double), the dropout mask from the same counter-based hash
 * (a seed gives the same mask on both).  Two differ in order only:
 * scatter adds with atomics, and the matrix products are cuBLAS's (in
 * FP32, or TF32 tensor cores when asked).
 *
 * Internal to tfkit; C linkage, so C code (libtfcore, tests/gpu) calls it
 * with the CUDA runtime and cuBLAS as its only dependencies.
 */
#ifndef TF_KERNELS_CUDA_H
#define TF_KERNELS_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tfk_cuda;

/* How cuBLAS multiplies: FP32 throughout (the default: results as on the
 * CPU within rounding) or TF32 tensor cores (faster, ~1e-3 relative). */
enum { TFK_MATH_FP32 = 0, TFK_MATH_TF32 = 1 };

/*
 * A context on GPU device (0, 1, ...): its stream and cuBLAS handle.
 * NULL with a message in err when there is no such GPU or CUDA cannot
 * start (no driver, no device).
 */
struct tfk_cuda *tfk_cuda_open(int device, int math, char *err, size_t errlen);
void tfk_cuda_close(struct tfk_cuda *cx);
/* GPUs present (0 when none or no driver). */
int tfk_cuda_devices(void);
/* The device's name ("NVIDIA H200"). */
const char *tfk_cuda_name(const struct tfk_cuda *cx);
/* Wait for everything queued; 0, or -1 with the error's text in err. */
int tfk_cuda_sync(struct tfk_cuda *cx, char *err, size_t errlen);

void gemm_cuda(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, const float *b, float beta, float *c,
               struct tfk_cuda *cx);
void add_bias_cuda(float *y, const float *b, int64_t rows, int64_t cols,
                   struct tfk_cuda *cx);
void bias_grad_cuda(const float *dy, float *db, int64_t rows, int64_t cols,
                    struct tfk_cuda *cx);
void copy_cuda(const float *x, float *y, size_t n, struct tfk_cuda *cx);
void zero_cuda(float *y, size_t n, struct tfk_cuda *cx);
void fill_cuda(float *y, size_t n, float v, struct tfk_cuda *cx);
void add_cuda(const float *x, float *y, size_t n, struct tfk_cuda *cx);
void relu_forward_cuda(const float *x, float *y, size_t n, struct tfk_cuda *cx);
void relu_backward_cuda(const float *y, const float *dy, float *dx, size_t n,
                        struct tfk_cuda *cx);
void sigmoid_forward_cuda(const float *x, float *y, size_t n,
                          struct tfk_cuda *cx);
void sigmoid_backward_cuda(const float *y, const float *dy, float *dx, size_t n,
                           struct tfk_cuda *cx);
void tanh_forward_cuda(const float *x, float *y, size_t n, struct tfk_cuda *cx);
void tanh_backward_cuda(const float *y, const float *dy, float *dx, size_t n,
                        struct tfk_cuda *cx);
void softmax_forward_cuda(const float *x, float *y, int64_t rows, int64_t cols,
                          struct tfk_cuda *cx);
void softmax_backward_cuda(const float *y, const float *dy, float *dx,
                           int64_t rows, int64_t cols, struct tfk_cuda *cx);
void dropout_forward_cuda(const float *x, float *y, float *mask, size_t n,
                          float keep, uint64_t seed, struct tfk_cuda *cx);
void dropout_backward_cuda(const float *mask, const float *dy, float *dx,
                           size_t n, struct tfk_cuda *cx);
void batchnorm_train_cuda(const float *x, float *y, float *xhat, float *inv_std,
                          const float *gamma, const float *beta,
                          float *mean_avg, float *var_avg, int64_t rows,
                          int64_t cols, float eps, float momentum,
                          struct tfk_cuda *cx);
void batchnorm_infer_cuda(const float *x, float *y, const float *gamma,
                          const float *beta, const float *mean_avg,
                          const float *var_avg, int64_t rows, int64_t cols,
                          float eps, struct tfk_cuda *cx);
void batchnorm_backward_cuda(const float *dy, const float *xhat,
                             const float *inv_std, const float *gamma,
                             float *dx, float *dgamma, float *dbeta,
                             int64_t rows, int64_t cols, struct tfk_cuda *cx);
double softmax_xent_cuda(const float *logits, const float *labels,
                         float *dlogits, float scale, int64_t rows,
                         int64_t cols, struct tfk_cuda *cx);
double sigmoid_xent_cuda(const float *logits, const float *labels,
                         float *dlogits, float scale, int64_t rows,
                         struct tfk_cuda *cx);
double mse_cuda(const float *pred, const float *target, float *dpred,
                float scale, int64_t rows, int64_t cols, struct tfk_cuda *cx);
void copy_cols_cuda(const float *x, int64_t xstride, float *y, int64_t ystride,
                    int64_t rows, int64_t cols, struct tfk_cuda *cx);
void add_cols_cuda(const float *x, int64_t xstride, float *y, int64_t ystride,
                   int64_t rows, int64_t cols, struct tfk_cuda *cx);
void gather_cuda(const float *table, int64_t vocab, int64_t dim,
                 const int64_t *ids, int64_t stride, int64_t rows,
                 int64_t width, int combiner, float *y, struct tfk_cuda *cx);
void scatter_cuda(const float *dy, int64_t vocab, int64_t dim,
                  const int64_t *ids, int64_t stride, int64_t rows,
                  int64_t width, int combiner, float *dtable,
                  struct tfk_cuda *cx);

/* An optimizer's update of n parameters (tf_update() in tf/device.h:
 * kind and the numbers of its struct tf_update; slots as many as the
 * kind has). */
void update_cuda(int kind, int flag, float lr, float f0, float f1, float f2,
                 double d0, float *w, const float *g, float *const *slots,
                 size_t n, struct tfk_cuda *cx);

/* n floats of device memory (cudaMalloc: the host reaches it only by
 * upload and download), zeroed in the stream when asked, or NULL. */
float *tfk_cuda_alloc(struct tfk_cuda *cx, size_t n, int zero);
void tfk_cuda_free(struct tfk_cuda *cx, float *p);
/* n bytes from host (or device) memory, queued on the stream. */
void tfk_cuda_upload(struct tfk_cuda *cx, void *dst, const void *src, size_t n);
/* The same on the context's copy stream, overlapping the kernels, in
 * lane 0 or 1 (a batch's buffers); the kernels queued after
 * tfk_cuda_await_uploads(lane) wait for the lane's last upload only. */
void tfk_cuda_upload_ahead(struct tfk_cuda *cx, void *dst, const void *src,
                           size_t n, int lane);
void tfk_cuda_await_uploads(struct tfk_cuda *cx, int lane);
/* n bytes to host memory, in order with the stream, waited for (a
 * failure is kept for tfk_cuda_sync()). */
void tfk_cuda_download(struct tfk_cuda *cx, void *dst, const void *src,
                       size_t n);
/* Page-lock host memory for faster uploads: 0, or -1 when refused. */
int tfk_cuda_pin(struct tfk_cuda *cx, void *p, size_t n);
void tfk_cuda_unpin(struct tfk_cuda *cx, void *p);

#ifdef __cplusplus
}
#endif
#endif
