/*
 * device.c - devices and the kernel dispatch of tf/device.h.
 *
 * A device is a kernel table (kernels/kernels.h).  Each tf_* kernel call
 * goes through the table of the device named in the call, so ops never
 * look at the device kind.
 */
#include "tf/device.h"
#include "internal.h"
#include "kernels/kernels.h"

struct tf_device {
	int kind;
	const char *name;
	const struct tf_kernels *k;
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
};

static struct tf_device cpu = {TF_DEVICE_CPU, "cpu", &tfi_cpu_kernels};

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
	return d->name;
}

void
tf_gemm(struct tf_device *d, int ta, int tb, int64_t m, int64_t n, int64_t k,
        float alpha, const float *a, const float *b, float beta, float *c)
{
	d->k->gemm(ta, tb, m, n, k, alpha, a, b, beta, c);
}

void
tf_add_bias(struct tf_device *d, float *y, const float *b, int64_t rows,
            int64_t cols)
{
	d->k->add_bias(y, b, rows, cols);
}

void
tf_bias_grad(struct tf_device *d, const float *dy, float *db, int64_t rows,
             int64_t cols)
{
	d->k->bias_grad(dy, db, rows, cols);
}

void
tf_copy(struct tf_device *d, const float *x, float *y, size_t n)
{
	d->k->copy(x, y, n);
}

void
tf_zero(struct tf_device *d, float *y, size_t n)
{
	d->k->zero(y, n);
}

void
tf_add(struct tf_device *d, const float *x, float *y, size_t n)
{
	d->k->add(x, y, n);
}

void
tf_relu(struct tf_device *d, const float *x, float *y, size_t n)
{
	d->k->relu(x, y, n);
}

void
tf_relu_grad(struct tf_device *d, const float *y, const float *dy, float *dx,
             size_t n)
{
	d->k->relu_grad(y, dy, dx, n);
}

void
tf_sigmoid(struct tf_device *d, const float *x, float *y, size_t n)
{
	d->k->sigmoid(x, y, n);
}

void
tf_sigmoid_grad(struct tf_device *d, const float *y, const float *dy, float *dx,
                size_t n)
{
	d->k->sigmoid_grad(y, dy, dx, n);
}

void
tf_tanh(struct tf_device *d, const float *x, float *y, size_t n)
{
	d->k->tanh(x, y, n);
}

void
tf_tanh_grad(struct tf_device *d, const float *y, const float *dy, float *dx,
             size_t n)
{
	d->k->tanh_grad(y, dy, dx, n);
}

void
tf_softmax(struct tf_device *d, const float *x, float *y, int64_t rows,
           int64_t cols)
{
	d->k->softmax(x, y, rows, cols);
}

void
tf_softmax_grad(struct tf_device *d, const float *y, const float *dy, float *dx,
                int64_t rows, int64_t cols)
{
	d->k->softmax_grad(y, dy, dx, rows, cols);
}

void
tf_dropout(struct tf_device *d, const float *x, float *y, float *mask, size_t n,
           float keep, uint64_t seed)
{
	d->k->dropout(x, y, mask, n, keep, seed);
}

void
tf_dropout_grad(struct tf_device *d, const float *mask, const float *dy,
                float *dx, size_t n)
{
	d->k->dropout_grad(mask, dy, dx, n);
}

void
tf_batchnorm_train(struct tf_device *d, const float *x, float *y, float *xhat,
                   float *inv_std, const float *gamma, const float *beta,
                   float *mean_avg, float *var_avg, int64_t rows, int64_t cols,
                   float eps, float momentum)
{
	d->k->bn_train(x, y, xhat, inv_std, gamma, beta, mean_avg, var_avg,
	               rows, cols, eps, momentum);
}

void
tf_batchnorm_infer(struct tf_device *d, const float *x, float *y,
                   const float *gamma, const float *beta, const float *mean_avg,
                   const float *var_avg, int64_t rows, int64_t cols, float eps)
{
	d->k->bn_infer(x, y, gamma, beta, mean_avg, var_avg, rows, cols, eps);
}

void
tf_batchnorm_grad(struct tf_device *d, const float *dy, const float *xhat,
                  const float *inv_std, const float *gamma, float *dx,
                  float *dgamma, float *dbeta, int64_t rows, int64_t cols)
{
	d->k->bn_grad(dy, xhat, inv_std, gamma, dx, dgamma, dbeta, rows, cols);
}

double
tf_softmax_xent(struct tf_device *d, const float *logits, const float *labels,
                float *dlogits, float scale, int64_t rows, int64_t cols)
{
	return d->k->softmax_xent(logits, labels, dlogits, scale, rows, cols);
}

double
tf_sigmoid_xent(struct tf_device *d, const float *logits, const float *labels,
                float *dlogits, float scale, int64_t rows)
{
	return d->k->sigmoid_xent(logits, labels, dlogits, scale, rows);
}

double
tf_mse(struct tf_device *d, const float *pred, const float *target,
       float *dpred, float scale, int64_t rows, int64_t cols)
{
	return d->k->mse(pred, target, dpred, scale, rows, cols);
}

void
tf_copy_cols(struct tf_device *d, const float *x, int64_t xstride, float *y,
             int64_t ystride, int64_t rows, int64_t cols)
{
	d->k->copy_cols(x, xstride, y, ystride, rows, cols);
}

void
tf_add_cols(struct tf_device *d, const float *x, int64_t xstride, float *y,
            int64_t ystride, int64_t rows, int64_t cols)
{
	d->k->add_cols(x, xstride, y, ystride, rows, cols);
}

void
tf_gather(struct tf_device *d, const float *table, int64_t vocab, int64_t dim,
          const int64_t *ids, int64_t stride, int64_t rows, int64_t width,
          int combiner, float *y)
{
	d->k->gather(table, vocab, dim, ids, stride, rows, width, combiner, y);
}

void
tf_scatter(struct tf_device *d, const float *dy, int64_t vocab, int64_t dim,
           const int64_t *ids, int64_t stride, int64_t rows, int64_t width,
           int combiner, float *dtable)
{
	d->k->scatter(dy, vocab, dim, ids, stride, rows, width, combiner,
	              dtable);
}
