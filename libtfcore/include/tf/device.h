/*
 * device.h - where tensors live and the kernels ops call.
 *
 * An op never touches a loop of numbers itself: it calls these functions
 * with the device its tensors live on, and the device runs its own
 * implementation (kernels/cpu/ through CBLAS; kernels/cuda/ when built
 * with CUDA).  So an op plugin has no #ifdef and runs wherever its tensors
 * are.  All matrices are row-major.  Kernels named *_grad accumulate into
 * their output (dx += ...), so gradients from several consumers add up.
 */
#ifndef TF_DEVICE_H
#define TF_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_device;

enum tf_device_kind { TF_DEVICE_CPU = 0, TF_DEVICE_CUDA = 1 };

/* The CPU device (always there). */
TF_API struct tf_device *tf_device_cpu(void);
TF_API int tf_device_kind(const struct tf_device *d);
TF_API const char *tf_device_name(const struct tf_device *d);

/*
 * A device by name: "cpu", "cuda" (GPU 0) or "cuda:N".  math is how the
 * GPU multiplies matrices: "fp32" (the default, NULL: results as on the
 * CPU within rounding) or "tf32" (tensor cores, faster, about 1e-3
 * relative); the CPU takes only fp32.  The CUDA device is a module,
 * tfkit/cuda.so beside libtfcore, loaded on first use: a program that
 * never asks for a GPU never loads the CUDA libraries.
 * TF_EINVAL for a name or math that is not one of these, TF_EUNAVAIL
 * (with why in msg: this build has no CUDA, the CUDA libraries do not
 * load, no GPU, no GPU N) when the device cannot be had.  One GPU a
 * process: asking again for the same one returns it.  *out is never
 * freed by the caller.
 */
TF_API int tf_device_open(const char *name, const char *math,
                          struct tf_device **out, char *msg, size_t msglen);
/* Kernels the device lacked, run on the CPU instead: "" when none, else
 * their names, ", "-separated (each named once). */
TF_API const char *tf_device_fallbacks(const struct tf_device *d);

/*
 * Tensor memory on a device: params, gradients, optimizer slots and a
 * step's values.  The CUDA device's is device memory (cudaMalloc), out of
 * the host's reach: the host reads it with tf_device_download() and
 * writes it with tf_device_upload(), never through the pointer.  On the
 * CPU it is ordinary memory.  tf_device_alloc() returns n zeroed floats,
 * or NULL.
 */
TF_API float *tf_device_alloc(struct tf_device *d, size_t n);
TF_API void tf_device_free(struct tf_device *d, float *p);
/*
 * Wait for the work queued on the device; TF_OK, or TF_EINTERNAL with a
 * failed kernel's message in msg.  A no-op on the CPU.  Graphs sync at
 * the end of each forward and backward pass, optimizers after each
 * step, so host code between those sees finished values.
 */
TF_API int tf_device_sync(struct tf_device *d, char *msg, size_t msglen);
/* Host memory to device memory (n bytes), queued in order with the
 * kernels: a batch's rows on their way to a GPU. */
TF_API void tf_device_upload(struct tf_device *d, void *dst, const void *src,
                             size_t n);
/* The same on a copy stream, so it overlaps the kernels queued, in lane
 * 0 or 1 (one for each of two batches in turn); kernels queued after
 * tf_device_await_uploads(lane) see that lane's uploads done. */
TF_API void tf_device_upload_ahead(struct tf_device *d, void *dst,
                                   const void *src, size_t n, int lane);
TF_API void tf_device_await_uploads(struct tf_device *d, int lane);
/* Device memory to host memory (n bytes), once the queued work is done:
 * the few values the host reads each step (predictions, a loss's
 * scale), without moving the device's pages. */
TF_API void tf_device_download(struct tf_device *d, void *dst, const void *src,
                               size_t n);
/* Keep host memory that is uploaded again and again (the reader's
 * batches) page-locked, so copies of it do not stage; 0 or -1 (not
 * worth failing over: copies still work). */
TF_API int tf_device_pin(struct tf_device *d, void *p, size_t n);
TF_API void tf_device_unpin(struct tf_device *d, void *p);

/* Threads the CPU kernels may use (matrix products); default 1.  OpenBLAS
 * starts its own workers when it loads, and idle they spin for a while:
 * tf_set_threads(1) stops them, so a program that runs threads of its own
 * calls it first (the commands do, in tool_start()). */
TF_API void tf_set_threads(int n);

/* C = alpha * op(A) * op(B) + beta * C; op(A) is m x k, op(B) k x n. */
TF_API void tf_gemm(struct tf_device *d, int trans_a, int trans_b, int64_t m,
                    int64_t n, int64_t k, float alpha, const float *a,
                    const float *b, float beta, float *c);

/*
 * The same products by one B again and again (a recurrent layer's
 * kernel, step after step), B packed once as the device's products read
 * it: tf_gemm_pack_floats() says how many floats op(B) (k x n) takes
 * packed (0: the device packs nothing ahead, as a GPU); tf_gemm_pack()
 * packs op(B) into p; tf_gemm_packed() is tf_gemm(), reading B from p
 * (b as packed, both unchanged since; p NULL: from b).  The floats are
 * tf_gemm()'s.
 */
TF_API size_t tf_gemm_pack_floats(struct tf_device *d, int64_t n, int64_t k);
TF_API void tf_gemm_pack(struct tf_device *d, int trans_b, int64_t n, int64_t k,
                         const float *b, float *p);
TF_API void tf_gemm_packed(struct tf_device *d, int trans_a, int trans_b,
                           int64_t m, int64_t n, int64_t k, float alpha,
                           const float *a, const float *b, const float *p,
                           float beta, float *c);

/* y[r][c] += b[c] for every row. */
TF_API void tf_add_bias(struct tf_device *d, float *y, const float *b,
                        int64_t rows, int64_t cols);
/* db[c] += sum over rows of dy[r][c]. */
TF_API void tf_bias_grad(struct tf_device *d, const float *dy, float *db,
                         int64_t rows, int64_t cols);
/* y = x (n floats). */
TF_API void tf_copy(struct tf_device *d, const float *x, float *y, size_t n);
/* y = 0 (n floats). */
TF_API void tf_zero(struct tf_device *d, float *y, size_t n);
/* y[i] = v. */
TF_API void tf_fill(struct tf_device *d, float *y, size_t n, float v);
/* y += x (n floats). */
TF_API void tf_add(struct tf_device *d, const float *x, float *y, size_t n);

/* Activations: y = f(x); dx += f'(x) * dy, from the saved output y. */
TF_API void tf_relu(struct tf_device *d, const float *x, float *y, size_t n);
TF_API void tf_relu_grad(struct tf_device *d, const float *y, const float *dy,
                         float *dx, size_t n);
TF_API void tf_sigmoid(struct tf_device *d, const float *x, float *y, size_t n);
TF_API void tf_sigmoid_grad(struct tf_device *d, const float *y,
                            const float *dy, float *dx, size_t n);
TF_API void tf_tanh(struct tf_device *d, const float *x, float *y, size_t n);
TF_API void tf_tanh_grad(struct tf_device *d, const float *y, const float *dy,
                         float *dx, size_t n);
/* Row-wise softmax of a rows x cols matrix; its gradient. */
TF_API void tf_softmax(struct tf_device *d, const float *x, float *y,
                       int64_t rows, int64_t cols);
TF_API void tf_softmax_grad(struct tf_device *d, const float *y,
                            const float *dy, float *dx, int64_t rows,
                            int64_t cols);

/*
 * Dropout: y = x * mask / keep, where mask[i] is 1 with probability keep,
 * decided by a hash of (seed, i) so every device draws the same mask;
 * mask (n floats) records 1/keep or 0 for the backward pass:
 * dx += dy * mask.
 */
TF_API void tf_dropout(struct tf_device *d, const float *x, float *y,
                       float *mask, size_t n, float keep, uint64_t seed);
TF_API void tf_dropout_grad(struct tf_device *d, const float *mask,
                            const float *dy, float *dx, size_t n);

/*
 * Batch normalisation over the rows of a rows x cols matrix, per column.
 * Training: normalise with the batch mean and (biased) variance, keep
 * xhat and 1/std for the backward pass, and move the running averages:
 * avg = momentum avg + (1 - momentum) batch.  Inference: normalise with
 * the running averages.  Backward adds into dx, dgamma and dbeta.
 */
TF_API void tf_batchnorm_train(struct tf_device *d, const float *x, float *y,
                               float *xhat, float *inv_std, const float *gamma,
                               const float *beta, float *mean_avg,
                               float *var_avg, int64_t rows, int64_t cols,
                               float eps, float momentum);
TF_API void tf_batchnorm_infer(struct tf_device *d, const float *x, float *y,
                               const float *gamma, const float *beta,
                               const float *mean_avg, const float *var_avg,
                               int64_t rows, int64_t cols, float eps);
TF_API void tf_batchnorm_grad(struct tf_device *d, const float *dy,
                              const float *xhat, const float *inv_std,
                              const float *gamma, float *dx, float *dgamma,
                              float *dbeta, int64_t rows, int64_t cols);

/*
 * Losses, averaged over the rows.  Each returns the mean loss and, when
 * dlogits is not NULL, adds scale * d(mean loss)/d(logits) into it.
 *   softmax_xent: labels are class indices (floats holding integers);
 *                 a label outside 0..cols-1 gives NaN.
 *   sigmoid_xent: logits and labels rows x 1, labels 0 or 1.
 *   mse:          (pred - target)^2 over rows x cols, mean over rows
 *                 and columns.
 */
TF_API double tf_softmax_xent(struct tf_device *d, const float *logits,
                              const float *labels, float *dlogits, float scale,
                              int64_t rows, int64_t cols);
TF_API double tf_sigmoid_xent(struct tf_device *d, const float *logits,
                              const float *labels, float *dlogits, float scale,
                              int64_t rows);
TF_API double tf_mse(struct tf_device *d, const float *pred,
                     const float *target, float *dpred, float scale,
                     int64_t rows, int64_t cols);

/*
 * Column blocks: y[r][c] = x[r][c] (copy) or += (add) for rows x cols,
 * rows xstride and ystride floats apart.
 */
TF_API void tf_copy_cols(struct tf_device *d, const float *x, int64_t xstride,
                         float *y, int64_t ystride, int64_t rows, int64_t cols);
TF_API void tf_add_cols(struct tf_device *d, const float *x, int64_t xstride,
                        float *y, int64_t ystride, int64_t rows, int64_t cols);

/*
 * Embedding lookups.  ids is rows x width int64, rows stride apart (an
 * id outside 0..vocab-1, such as -1, is no id), table vocab x dim.
 * Combiners: sum of the row's vectors, their mean (over the ids present;
 * zeros when none), or concat (width x dim values a row, zeros for a
 * missing id).  scatter adds the gradient of y into dtable.
 */
enum tf_combiner {
	TF_COMBINE_SUM = 0,
	TF_COMBINE_MEAN = 1,
	TF_COMBINE_CONCAT = 2
};
TF_API void tf_gather(struct tf_device *d, const float *table, int64_t vocab,
                      int64_t dim, const int64_t *ids, int64_t stride,
                      int64_t rows, int64_t width, int combiner, float *y);
TF_API void tf_scatter(struct tf_device *d, const float *dy, int64_t vocab,
                       int64_t dim, const int64_t *ids, int64_t stride,
                       int64_t rows, int64_t width, int combiner,
                       float *dtable);
/*
 * Weighted lookups, TensorFlow's embedding_lookup_sparse: w holds a
 * weight for each id (rows wstride apart); sum gives the weighted sum of
 * a row's vectors, mean that over the sum of its ids' weights (zeros
 * when that is 0); concat is not one of them.  scatter_weighted adds the
 * gradient of y into dtable (the weights get none: they are data).
 */
TF_API void tf_gather_weighted(struct tf_device *d, const float *table,
                               int64_t vocab, int64_t dim, const int64_t *ids,
                               int64_t stride, const float *w, int64_t wstride,
                               int64_t rows, int64_t width, int combiner,
                               float *y);
TF_API void tf_scatter_weighted(struct tf_device *d, const float *dy,
                                int64_t vocab, int64_t dim, const int64_t *ids,
                                int64_t stride, const float *w, int64_t wstride,
                                int64_t rows, int64_t width, int combiner,
                                float *dtable);

/*
 * Convolution by matrix product: im2col lays each output pixel's patch
 * out as a row, so a convolution is one tf_gemm() of those rows by the
 * kernel (kh*kw*c x filters).  x holds rows images of h x w x c (NHWC);
 * col gets rows*oh*ow rows of kh*kw*c values, in (ky, kx, channel)
 * order, zero where the patch reaches into the padding.  Output pixel
 * (oy, ox) reads input (oy*sh - ph + ky, ox*sw - pw + kx).
 */
struct tf_conv {
	int64_t h, w, c; /* an input image */
	int64_t kh, kw;  /* the kernel */
	int64_t sh, sw;  /* strides */
	int64_t ph, pw;  /* padding before (top, left) */
	int64_t oh, ow;  /* the output image */
};
/*
 * The geometry of a k x k window moved by stride over an h x w x c
 * image, padded as TensorFlow's: same gives ceil(in / stride) outputs,
 * the padding split with the odd one after (ph, pw before it); valid
 * only whole windows.  0, or -1 when a valid window does not fit.  One
 * formula for the ops and for the exports that restate their padding.
 */
TF_API int tf_conv_geometry(int64_t h, int64_t w, int64_t c, int64_t k,
                            int64_t stride, int same, struct tf_conv *g);
TF_API void tf_im2col(struct tf_device *d, const float *x, int64_t rows,
                      const struct tf_conv *g, float *col);
/* Convolution's way back: dx += each col row's values at the input
 * places im2col read them from (padding's are dropped). */
TF_API void tf_col2im(struct tf_device *d, const float *col, int64_t rows,
                      const struct tf_conv *g, float *dx);
/*
 * Pooling over windows of kh x kw, moved by (sh, sw), of rows images of
 * h x w x c, channel by channel, into rows images of oh x ow x c: the
 * largest value (max) or the mean (else) of the window's places inside
 * the image (the padding counts for neither, as TensorFlow's SAME).
 * tf_pool_grad() adds the gradient dy of y into dx: to the window's
 * first largest value of x for max, spread evenly over its places for
 * the mean.
 */
TF_API void tf_pool(struct tf_device *d, const float *x, int64_t rows,
                    const struct tf_conv *g, int max, float *y);
TF_API void tf_pool_grad(struct tf_device *d, const float *x, const float *dy,
                         int64_t rows, const struct tf_conv *g, int max,
                         float *dx);

/*
 * Recurrent cells, one step of rows sequences (kernels/cpu/rnn.c gives
 * the gate layouts, Keras'; the matrix products are the caller's).
 * tf_lstm_cell(): from the preactivations g (rows x 4 units: i, f, c,
 * o) and the previous cell state, the activated gates act, the cell
 * state c and the output h.  tf_lstm_cell_grad(): from the gradient dh
 * reaching h and dc reaching c (in: from the next step; out: reaching
 * c_prev), the preactivations' gradient dg.  tf_gru_cell() (reset
 * after): from gx = x Wx + bx and gh = h_prev Wh + bh (rows x 3 units:
 * z, r, n), act and h; tf_gru_cell_grad() writes their gradients and
 * dh_prev = dh * z, h_prev's share that skips Wh.
 *
 * The GRU with the reset before (reset_after=0) in two halves around
 * each product: tf_gru_gates() from gx and gzr = h_prev Wh_zr (rows x 2
 * units: z, r) writes act's z and r and rh = r * h_prev; tf_gru_new()
 * from gx and gn = rh Wh_n (rows x units) act's n and h.  Back:
 * tf_gru_new_grad() from dh writes dgx's z and n blocks, dzr's z, dn
 * and dh_prev = dh * z; tf_gru_gates_grad() from drh (dn Wh_n^T) writes
 * dgx's and dzr's r and adds drh * r to dh_prev.
 */
TF_API void tf_lstm_cell(struct tf_device *d, const float *g,
                         const float *c_prev, float *act, float *c, float *h,
                         int64_t rows, int64_t units);
TF_API void tf_lstm_cell_grad(struct tf_device *d, const float *act,
                              const float *c_prev, const float *c,
                              const float *dh, float *dc, float *dg,
                              int64_t rows, int64_t units);
TF_API void tf_gru_cell(struct tf_device *d, const float *gx, const float *gh,
                        const float *h_prev, float *act, float *h, int64_t rows,
                        int64_t units);
TF_API void tf_gru_cell_grad(struct tf_device *d, const float *act,
                             const float *gh, const float *h_prev,
                             const float *dh, float *dgx, float *dgh,
                             float *dh_prev, int64_t rows, int64_t units);
TF_API void tf_gru_gates(struct tf_device *d, const float *gx, const float *gzr,
                         const float *h_prev, float *act, float *rh,
                         int64_t rows, int64_t units);
TF_API void tf_gru_new(struct tf_device *d, const float *gx, const float *gn,
                       const float *h_prev, float *act, float *h, int64_t rows,
                       int64_t units);
TF_API void tf_gru_new_grad(struct tf_device *d, const float *act,
                            const float *h_prev, const float *dh, float *dgx,
                            float *dzr, float *dn, float *dh_prev, int64_t rows,
                            int64_t units);
TF_API void tf_gru_gates_grad(struct tf_device *d, const float *act,
                              const float *h_prev, const float *drh, float *dgx,
                              float *dzr, float *dh_prev, int64_t rows,
                              int64_t units);

/*
 * Sequences of varying length, each row's steps in len[r * lstride]
 * (int64, in the device's memory: a column of the rows' ids).
 * tf_mask_steps(): for the rows whose length is at most step, row r of
 * dst (cols values, rows dstride apart) becomes row r of src (sstride
 * apart), or zeros when zero is set; other rows are left alone.
 * tf_reverse_steps(): each row of x (steps x width values) into y with
 * its first len steps in reverse order and the rest as they are (as
 * tf.reverse_sequence); x and y do not overlap.
 */
TF_API void tf_mask_steps(struct tf_device *d, const int64_t *len,
                          int64_t lstride, int64_t step, const float *src,
                          int64_t sstride, float *dst, int64_t dstride,
                          int64_t rows, int64_t cols, int zero);
TF_API void tf_reverse_steps(struct tf_device *d, const int64_t *len,
                             int64_t lstride, const float *x, float *y,
                             int64_t rows, int64_t steps, int64_t width);

/*
 * Optimizer updates, one fused pass over a parameter block: w from its
 * gradient g and the optimizer's slots (tf-plugin(7)).  The formulas are
 * the optimizer plugins' (plugins/optimizers/); hp holds the update's
 * numbers, each kind naming which:
 *   SGD       w -= lr g
 *   MOMENTUM  a = m a + g; w -= lr a (nesterov: lr (g + m a));
 *             f0 = momentum, flag = nesterov
 *   ADAGRAD   acc += g^2; w -= lr g / sqrt(acc)
 *   RMSPROP   f0 = decay, f1 = momentum, f2 = epsilon, flag = centered
 *   ADADELTA  f0 = rho, f1 = epsilon
 *   ADAM      lr is lr_t; f0 = beta1, f1 = beta2, f2 = epsilon,
 *             flag = lazy (a value whose gradient is 0 is left as it is)
 *   FTRL      d0 = learning_rate_power, f0 = l1, f1 = l2
 */
enum tf_update_kind {
	TF_UPDATE_SGD = 0,
	TF_UPDATE_MOMENTUM = 1,
	TF_UPDATE_ADAGRAD = 2,
	TF_UPDATE_RMSPROP = 3,
	TF_UPDATE_ADADELTA = 4,
	TF_UPDATE_ADAM = 5,
	TF_UPDATE_FTRL = 6
};
struct tf_update {
	int kind;
	int flag;
	float lr;
	float f0, f1, f2;
	double d0;
};
TF_API void tf_update(struct tf_device *d, const struct tf_update *u, float *w,
                      const float *g, float *const *slots, size_t n);

#ifdef __cplusplus
}
#endif
#endif
