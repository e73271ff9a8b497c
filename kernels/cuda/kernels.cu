/*
 * kernels.cu - the kernel table on NVIDIA GPUs (cuda.h): cuBLAS for the
 * matrix products, a kernel for every other slot, each the formula of its
 * CPU twin in kernels/cpu/.  Elementwise kernels run a grid-stride loop;
 * a sum along a row or a column is one thread's, in the CPU's order, so
 * the two agree within the rounding of exp/log/tanh (different libm);
 * but a column longer than BIAS_GRAD_DIRECT rows (a convolution's:
 * batch x height x width) is summed by chunks, a thread a chunk, then
 * the chunks' sums in order (bias gradients: as the CPU too; batch
 * norm: in double, within its rounding).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda.h"
#include "tf/device.h" /* struct tf_conv */

/* The combiners of tf/device.h (TF_COMBINE_*). */
enum { COMBINE_SUM = 0, COMBINE_MEAN = 1, COMBINE_CONCAT = 2 };

struct tfk_cuda {
	int device;
	cudaStream_t stream;
	cudaStream_t copy;   /* uploads ahead (made on first use) */
	cudaEvent_t copied[2]; /* ... the last one into each lane */
	int copy_ready;
	cublasHandle_t blas;
	double *scratch; /* the losses' terms, one a row or an element */
	size_t scratch_n;
	double *sum; /* their mean, on the device */
	char name[256];
	char error[256]; /* the first failure, for tfk_cuda_sync() */
};

static void
failed(struct tfk_cuda *cx, const char *what, const char *why)
{
	if (cx->error[0] == '\0') {
		snprintf(cx->error, sizeof cx->error, "%s: %s", what, why);
	}
}

/* After a launch: a failure is kept for tfk_cuda_sync(). */
static void
check(struct tfk_cuda *cx, const char *what)
{
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		failed(cx, what, cudaGetErrorString(e));
	}
}

static const int THREADS = 256;

static unsigned
blocks(size_t n)
{
	size_t b = (n + THREADS - 1) / THREADS;
	return (unsigned)(b < 1 ? 1 : b > 8192 ? 8192 : b);
}

#define GRID_STRIDE(i, n)                                                      \
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);  \
	     i += (size_t)gridDim.x * blockDim.x)

/* ---- the context ---------------------------------------------------------
 */

extern "C" int
tfk_cuda_devices(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError(); /* clear it */
		return 0;
	}
	return n;
}

extern "C" struct tfk_cuda *
tfk_cuda_open(int device, int math, char *err, size_t errlen)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0) {
		snprintf(err, errlen, "no CUDA GPU: %s",
		         e != cudaSuccess ? cudaGetErrorString(e)
		                          : "the driver sees none");
		cudaGetLastError();
		return NULL;
	}
	if (device < 0 || device >= n) {
		snprintf(err, errlen, "no CUDA GPU %d (%d present: 0 to %d)",
		         device, n, n - 1);
		return NULL;
	}
	struct tfk_cuda *cx = (struct tfk_cuda *)calloc(1, sizeof *cx);
	if (cx == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cx->device = device;
	cudaDeviceProp p;
	if ((e = cudaSetDevice(device)) != cudaSuccess ||
	    (e = cudaGetDeviceProperties(&p, device)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&cx->stream,
	                                   cudaStreamNonBlocking)) !=
	        cudaSuccess ||
	    (e = cudaMalloc((void **)&cx->sum, sizeof(double))) !=
	        cudaSuccess) {
		snprintf(err, errlen, "CUDA GPU %d: %s", device,
		         cudaGetErrorString(e));
		tfk_cuda_close(cx);
		return NULL;
	}
	snprintf(cx->name, sizeof cx->name, "%s", p.name);
	cublasStatus_t s = cublasCreate(&cx->blas);
	if (s == CUBLAS_STATUS_SUCCESS) {
		s = cublasSetStream(cx->blas, cx->stream);
	}
	if (s == CUBLAS_STATUS_SUCCESS) {
		s = cublasSetMathMode(cx->blas, math == TFK_MATH_TF32
		                                    ? CUBLAS_TF32_TENSOR_OP_MATH
		                                    : CUBLAS_PEDANTIC_MATH);
	}
	if (s != CUBLAS_STATUS_SUCCESS) {
		snprintf(err, errlen, "cuBLAS on GPU %d: %s", device,
		         cublasGetStatusString(s));
		tfk_cuda_close(cx);
		return NULL;
	}
	return cx;
}

extern "C" void
tfk_cuda_close(struct tfk_cuda *cx)
{
	if (cx == NULL) {
		return;
	}
	if (cx->blas != NULL) {
		cublasDestroy(cx->blas);
	}
	if (cx->stream != NULL) {
		cudaStreamSynchronize(cx->stream);
		cudaStreamDestroy(cx->stream);
	}
	if (cx->copy_ready) {
		cudaStreamSynchronize(cx->copy);
		cudaEventDestroy(cx->copied[0]);
		cudaEventDestroy(cx->copied[1]);
		cudaStreamDestroy(cx->copy);
	}
	cudaFree(cx->scratch);
	cudaFree(cx->sum);
	free(cx);
}

extern "C" const char *
tfk_cuda_name(const struct tfk_cuda *cx)
{
	return cx->name;
}

extern "C" int
tfk_cuda_sync(struct tfk_cuda *cx, char *err, size_t errlen)
{
	cudaError_t e = cudaStreamSynchronize(cx->stream);
	if (e != cudaSuccess) {
		failed(cx, "stream", cudaGetErrorString(e));
	}
	if (cx->error[0] != '\0') {
		snprintf(err, errlen, "%s", cx->error);
		return -1;
	}
	return 0;
}

/* Room for n doubles of terms (or the chunk sums of a long column);
 * NULL (the failure kept) when out of device memory. */
static double *
scratch(struct tfk_cuda *cx, size_t n)
{
	if (n > cx->scratch_n) {
		cudaStreamSynchronize(cx->stream);
		cudaFree(cx->scratch);
		cx->scratch = NULL;
		cx->scratch_n = 0;
		cudaError_t e = cudaMalloc((void **)&cx->scratch,
		                           (n < 1024 ? 1024 : n) * sizeof(double));
		if (e != cudaSuccess) {
			failed(cx, "loss", cudaGetErrorString(e));
			return NULL;
		}
		cx->scratch_n = n < 1024 ? 1024 : n;
	}
	return cx->scratch;
}

/* One thread adds the n terms in order (the CPU's order) and divides. */
__global__ void
k_mean(const double *t, size_t n, double *out)
{
	double s = 0;
	for (size_t i = 0; i < n; i++) {
		s += t[i];
	}
	*out = s / (double)n;
}

/* The mean of n terms at t, waited for. */
static double
mean_of(struct tfk_cuda *cx, const double *t, size_t n, const char *what)
{
	k_mean<<<1, 1, 0, cx->stream>>>(t, n, cx->sum);
	check(cx, what);
	double v = NAN;
	cudaError_t e = cudaMemcpyAsync(&v, cx->sum, sizeof v,
	                                cudaMemcpyDeviceToHost, cx->stream);
	if (e == cudaSuccess) {
		e = cudaStreamSynchronize(cx->stream);
	}
	if (e != cudaSuccess) {
		failed(cx, what, cudaGetErrorString(e));
		return NAN;
	}
	return v;
}

/* ---- matrix products and biases ---------------------------------------- */

/*
 * C (m x n) = alpha op(A) op(B) + beta C, row-major, as gemm_cpu: in
 * cuBLAS's column-major terms C^T = op(B)^T op(A)^T, the same leading
 * dimensions as CBLAS's row-major call.
 */
extern "C" void
gemm_cuda(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
          const float *a, const float *b, float beta, float *c,
          struct tfk_cuda *cx)
{
	if (m == 0 || n == 0) {
		return;
	}
	int64_t lda = ta ? m : k, ldb = tb ? k : n;
	cublasStatus_t s = cublasSgemm(
	    cx->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
	    ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha, b,
	    (int)(ldb > 0 ? ldb : 1), a, (int)(lda > 0 ? lda : 1), &beta, c,
	    (int)n);
	if (s != CUBLAS_STATUS_SUCCESS) {
		failed(cx, "gemm", cublasGetStatusString(s));
	}
}

__global__ void
k_add_bias(float *y, const float *b, size_t n, int64_t cols)
{
	GRID_STRIDE(i, n) { y[i] += b[i % (size_t)cols]; }
}

extern "C" void
add_bias_cuda(float *y, const float *b, int64_t rows, int64_t cols,
              struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * cols);
	if (n == 0) {
		return;
	}
	k_add_bias<<<blocks(n), THREADS, 0, cx->stream>>>(y, b, n, cols);
	check(cx, "add_bias");
}

/* A thread a column, adding the rows in order into db[c] (as the CPU,
 * up to BIAS_GRAD_DIRECT rows). */
__global__ void
k_bias_grad(const float *dy, float *db, int64_t rows, int64_t cols)
{
	GRID_STRIDE(c, (size_t)cols)
	{
		float acc = db[c];
		for (int64_t r = 0; r < rows; r++) {
			acc += dy[r * cols + (int64_t)c];
		}
		db[c] = acc;
	}
}

/* More rows (a convolution's): a thread a chunk of BIAS_GRAD_CHUNK rows
 * of a column, summed from 0 in order into part[chunk][c] (the threads
 * of a warp read neighbouring columns of a row) ... */
__global__ void
k_bias_grad_chunks(const float *dy, float *part, int64_t rows, int64_t cols,
                   int64_t chunks)
{
	GRID_STRIDE(i, (size_t)(chunks * cols))
	{
		int64_t k = (int64_t)i / cols, c = (int64_t)i % cols;
		int64_t r0 = k * BIAS_GRAD_CHUNK;
		int64_t r1 =
		    r0 + BIAS_GRAD_CHUNK < rows ? r0 + BIAS_GRAD_CHUNK : rows;
		float s = 0.0f;
		for (int64_t r = r0; r < r1; r++) {
			s += dy[r * cols + c];
		}
		part[i] = s;
	}
}

/* ... then a thread a column adds the chunks' sums in order into db[c]:
 * the CPU's floats (bias_grad_cpu). */
__global__ void
k_bias_grad_sum(const float *part, float *db, int64_t cols, int64_t chunks)
{
	GRID_STRIDE(c, (size_t)cols)
	{
		float acc = db[c];
		for (int64_t k = 0; k < chunks; k++) {
			acc += part[k * cols + (int64_t)c];
		}
		db[c] = acc;
	}
}

extern "C" void
bias_grad_cuda(const float *dy, float *db, int64_t rows, int64_t cols,
               struct tfk_cuda *cx)
{
	if (cols == 0) {
		return;
	}
	if (rows <= BIAS_GRAD_DIRECT) {
		k_bias_grad<<<blocks((size_t)cols), THREADS, 0, cx->stream>>>(
		    dy, db, rows, cols);
		check(cx, "bias_grad");
		return;
	}
	int64_t chunks = (rows + BIAS_GRAD_CHUNK - 1) / BIAS_GRAD_CHUNK;
	size_t n = (size_t)(chunks * cols);
	/* the chunks' sums in the losses' scratch (doubles: half as many) */
	float *part = (float *)scratch(cx, (n + 1) / 2);
	if (part == NULL) {
		return;
	}
	k_bias_grad_chunks<<<blocks(n), THREADS, 0, cx->stream>>>(
	    dy, part, rows, cols, chunks);
	k_bias_grad_sum<<<blocks((size_t)cols), THREADS, 0, cx->stream>>>(
	    part, db, cols, chunks);
	check(cx, "bias_grad");
}

/* x and y do not overlap (the graph never copies a buffer onto itself
 * in part). */
extern "C" void
copy_cuda(const float *x, float *y, size_t n, struct tfk_cuda *cx)
{
	if (n == 0 || x == y) {
		return;
	}
	cudaError_t e = cudaMemcpyAsync(y, x, n * sizeof *y,
	                                cudaMemcpyDeviceToDevice, cx->stream);
	if (e != cudaSuccess) {
		failed(cx, "copy", cudaGetErrorString(e));
	}
}

extern "C" void
zero_cuda(float *y, size_t n, struct tfk_cuda *cx)
{
	if (n == 0) {
		return;
	}
	cudaError_t e = cudaMemsetAsync(y, 0, n * sizeof *y, cx->stream);
	if (e != cudaSuccess) {
		failed(cx, "zero", cudaGetErrorString(e));
	}
}

__global__ void
k_fill(float *y, size_t n, float v)
{
	GRID_STRIDE(i, n)
	{
		y[i] = v;
	}
}

extern "C" void
fill_cuda(float *y, size_t n, float v, struct tfk_cuda *cx)
{
	if (n == 0) {
		return;
	}
	k_fill<<<blocks(n), THREADS, 0, cx->stream>>>(y, n, v);
	check(cx, "fill");
}

__global__ void
k_add(const float *x, float *y, size_t n)
{
	GRID_STRIDE(i, n) { y[i] += x[i]; }
}

extern "C" void
add_cuda(const float *x, float *y, size_t n, struct tfk_cuda *cx)
{
	if (n == 0) {
		return;
	}
	k_add<<<blocks(n), THREADS, 0, cx->stream>>>(x, y, n);
	check(cx, "add");
}

/* ---- activations ------------------------------------------------------- */

__global__ void
k_relu(const float *x, float *y, size_t n)
{
	GRID_STRIDE(i, n) { y[i] = x[i] > 0.0f ? x[i] : 0.0f; }
}

__global__ void
k_relu_grad(const float *y, const float *dy, float *dx, size_t n)
{
	GRID_STRIDE(i, n) { dx[i] += (float)(y[i] > 0.0f) * dy[i]; }
}

__global__ void
k_sigmoid(const float *x, float *y, size_t n)
{
	GRID_STRIDE(i, n) { y[i] = 1.0f / (1.0f + expf(-x[i])); }
}

__global__ void
k_sigmoid_grad(const float *y, const float *dy, float *dx, size_t n)
{
	GRID_STRIDE(i, n) { dx[i] += dy[i] * y[i] * (1.0f - y[i]); }
}

__global__ void
k_tanh(const float *x, float *y, size_t n)
{
	GRID_STRIDE(i, n) { y[i] = tanhf(x[i]); }
}

__global__ void
k_tanh_grad(const float *y, const float *dy, float *dx, size_t n)
{
	GRID_STRIDE(i, n) { dx[i] += dy[i] * (1.0f - y[i] * y[i]); }
}

#define UNARY(name, kernel)                                                    \
	extern "C" void name(const float *x, float *y, size_t n,                 \
	                     struct tfk_cuda *cx)                                \
	{                                                                        \
		if (n > 0) {                                                     \
			kernel<<<blocks(n), THREADS, 0, cx->stream>>>(x, y, n);  \
			check(cx, #name);                                        \
		}                                                                \
	}
#define GRADIENT(name, kernel)                                                 \
	extern "C" void name(const float *y, const float *dy, float *dx,         \
	                     size_t n, struct tfk_cuda *cx)                      \
	{                                                                        \
		if (n > 0) {                                                     \
			kernel<<<blocks(n), THREADS, 0, cx->stream>>>(y, dy, dx, \
			                                              n);        \
			check(cx, #name);                                        \
		}                                                                \
	}

UNARY(relu_forward_cuda, k_relu)
GRADIENT(relu_backward_cuda, k_relu_grad)
UNARY(sigmoid_forward_cuda, k_sigmoid)
GRADIENT(sigmoid_backward_cuda, k_sigmoid_grad)
UNARY(tanh_forward_cuda, k_tanh)
GRADIENT(tanh_backward_cuda, k_tanh_grad)

/* ---- softmax and the losses -------------------------------------------- */

/* A thread a row: the row maximum out, the sum in double (the CPU's). */
__global__ void
k_softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
	GRID_STRIDE(r, (size_t)rows)
	{
		const float *xr = x + (int64_t)r * cols;
		float *yr = y + (int64_t)r * cols;
		float mx = xr[0];
		for (int64_t c = 1; c < cols; c++) {
			mx = xr[c] > mx ? xr[c] : mx;
		}
		double sum = 0;
		for (int64_t c = 0; c < cols; c++) {
			yr[c] = expf(xr[c] - mx);
			sum += yr[c];
		}
		float inv = (float)(1.0 / sum);
		for (int64_t c = 0; c < cols; c++) {
			yr[c] *= inv;
		}
	}
}

extern "C" void
softmax_forward_cuda(const float *x, float *y, int64_t rows, int64_t cols,
                     struct tfk_cuda *cx)
{
	if (cols < 1 || rows < 1) {
		return;
	}
	k_softmax<<<blocks((size_t)rows), THREADS, 0, cx->stream>>>(x, y, rows,
	                                                             cols);
	check(cx, "softmax");
}

__global__ void
k_softmax_grad(const float *y, const float *dy, float *dx, int64_t rows,
               int64_t cols)
{
	GRID_STRIDE(r, (size_t)rows)
	{
		const float *yr = y + (int64_t)r * cols;
		const float *gr = dy + (int64_t)r * cols;
		float *dr = dx + (int64_t)r * cols;
		double dot = 0;
		for (int64_t c = 0; c < cols; c++) {
			dot += (double)yr[c] * gr[c];
		}
		for (int64_t c = 0; c < cols; c++) {
			dr[c] += yr[c] * (gr[c] - (float)dot);
		}
	}
}

extern "C" void
softmax_backward_cuda(const float *y, const float *dy, float *dx, int64_t rows,
                      int64_t cols, struct tfk_cuda *cx)
{
	if (cols < 1 || rows < 1) {
		return;
	}
	k_softmax_grad<<<blocks((size_t)rows), THREADS, 0, cx->stream>>>(
	    y, dy, dx, rows, cols);
	check(cx, "softmax_grad");
}

/* A row's term (log-sum-exp less the label's logit) and its gradient; a
 * label that is not a class index makes the term NaN (the CPU returns
 * NaN there too). */
__global__ void
k_softmax_xent(const float *logits, const float *labels, float *dlogits,
               float scale, int64_t rows, int64_t cols, double *t)
{
	GRID_STRIDE(r, (size_t)rows)
	{
		const float *xr = logits + (int64_t)r * cols;
		float mx = xr[0];
		for (int64_t c = 1; c < cols; c++) {
			mx = xr[c] > mx ? xr[c] : mx;
		}
		double sum = exp((double)(xr[0] - mx));
		for (int64_t c = 1; c < cols; c++) {
			sum += exp((double)(xr[c] - mx));
		}
		double lse = log(sum) + mx;
		float lf = labels[r];
		int64_t k = (int64_t)lf;
		if (!(lf >= 0) || (float)k != lf || k >= cols) {
			t[r] = NAN;
			continue;
		}
		t[r] = lse - xr[k];
		if (dlogits != NULL) {
			float *dr = dlogits + (int64_t)r * cols;
			float s = scale / (float)rows;
			for (int64_t c = 0; c < cols; c++) {
				float p = (float)exp((double)xr[c] - lse);
				dr[c] += s * (p - (c == k ? 1.0f : 0.0f));
			}
		}
	}
}

extern "C" double
softmax_xent_cuda(const float *logits, const float *labels, float *dlogits,
                  float scale, int64_t rows, int64_t cols, struct tfk_cuda *cx)
{
	if (cols < 1 || rows < 1) {
		return NAN;
	}
	double *t = scratch(cx, (size_t)rows);
	if (t == NULL) {
		return NAN;
	}
	k_softmax_xent<<<blocks((size_t)rows), THREADS, 0, cx->stream>>>(
	    logits, labels, dlogits, scale, rows, cols, t);
	check(cx, "softmax_xent");
	return mean_of(cx, t, (size_t)rows, "softmax_xent");
}

/* max(x, 0) - x z + log(1 + exp(-|x|)), one exponential for the loss
 * and the sigmoid (sigmoid_xent_cpu). */
__global__ void
k_sigmoid_xent(const float *logits, const float *labels, float *dlogits,
               float s, int64_t rows, double *t)
{
	GRID_STRIDE(r, (size_t)rows)
	{
		float x = logits[r], z = labels[r];
		float e = expf(-fabsf(x));
		t[r] = (double)((x > 0 ? x : 0) - x * z) + (double)log1pf(e);
		if (dlogits != NULL) {
			float p = x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
			dlogits[r] += s * (p - z);
		}
	}
}

extern "C" double
sigmoid_xent_cuda(const float *logits, const float *labels, float *dlogits,
                  float scale, int64_t rows, struct tfk_cuda *cx)
{
	if (rows < 1) {
		return NAN;
	}
	double *t = scratch(cx, (size_t)rows);
	if (t == NULL) {
		return NAN;
	}
	k_sigmoid_xent<<<blocks((size_t)rows), THREADS, 0, cx->stream>>>(
	    logits, labels, dlogits, scale / (float)rows, rows, t);
	check(cx, "sigmoid_xent");
	return mean_of(cx, t, (size_t)rows, "sigmoid_xent");
}

__global__ void
k_mse(const float *pred, const float *target, float *dpred, float s, size_t n,
      double *t)
{
	GRID_STRIDE(i, n)
	{
		float d = pred[i] - target[i];
		t[i] = (double)d * d;
		if (dpred != NULL) {
			dpred[i] += s * d;
		}
	}
}

extern "C" double
mse_cuda(const float *pred, const float *target, float *dpred, float scale,
         int64_t rows, int64_t cols, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * cols);
	if (n == 0) {
		return NAN;
	}
	double *t = scratch(cx, n);
	if (t == NULL) {
		return NAN;
	}
	k_mse<<<blocks(n), THREADS, 0, cx->stream>>>(
	    pred, target, dpred, 2.0f * scale / (float)n, n, t);
	check(cx, "mse");
	return mean_of(cx, t, n, "mse");
}

/* ---- dropout and batch normalisation ----------------------------------- */

/* splitmix64's finaliser: normalize.c's mix(), so a seed draws the same
 * mask here as on the CPU. */
__device__ static uint64_t
mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

__global__ void
k_dropout(const float *x, float *y, float *mask, size_t n, float keep,
          float scale, uint64_t seed)
{
	GRID_STRIDE(i, n)
	{
		double u = (double)(mix(seed + 0x9e3779b97f4a7c15ull * (i + 1)) >>
		                    11) *
		           (1.0 / 9007199254740992.0); /* 2^-53 */
		mask[i] = u < keep ? scale : 0.0f;
		y[i] = x[i] * mask[i];
	}
}

extern "C" void
dropout_forward_cuda(const float *x, float *y, float *mask, size_t n,
                     float keep, uint64_t seed, struct tfk_cuda *cx)
{
	if (n == 0) {
		return;
	}
	k_dropout<<<blocks(n), THREADS, 0, cx->stream>>>(x, y, mask, n, keep,
	                                                  1.0f / keep, seed);
	check(cx, "dropout");
}

/* The product rounded on its own (__fmul_rn: not fused into the add),
 * as the CPU computes it, so the gradient is the CPU's bit for bit. */
__global__ void
k_dropout_grad(const float *mask, const float *dy, float *dx, size_t n)
{
	GRID_STRIDE(i, n) { dx[i] += __fmul_rn(dy[i], mask[i]); }
}

extern "C" void
dropout_backward_cuda(const float *mask, const float *dy, float *dx, size_t n,
                      struct tfk_cuda *cx)
{
	if (n == 0) {
		return;
	}
	k_dropout_grad<<<blocks(n), THREADS, 0, cx->stream>>>(mask, dy, dx, n);
	check(cx, "dropout_grad");
}

/* A thread a column: its mean and variance in double, as the CPU. */
__global__ void
k_bn_train(const float *x, float *y, float *xhat, float *inv_std,
           const float *gamma, const float *beta, float *mean_avg,
           float *var_avg, int64_t rows, int64_t cols, float eps,
           float momentum)
{
	GRID_STRIDE(cc, (size_t)cols)
	{
		int64_t c = (int64_t)cc;
		double sum = 0, sq = 0;
		for (int64_t r = 0; r < rows; r++) {
			double v = x[r * cols + c];
			sum += v;
			sq += v * v;
		}
		double mean = sum / (double)rows;
		double var = sq / (double)rows - mean * mean;
		var = var > 0 ? var : 0;
		float is = (float)(1.0 / sqrt(var + eps));
		inv_std[c] = is;
		for (int64_t r = 0; r < rows; r++) {
			float h = (x[r * cols + c] - (float)mean) * is;
			xhat[r * cols + c] = h;
			y[r * cols + c] = gamma[c] * h + beta[c];
		}
		mean_avg[c] =
		    momentum * mean_avg[c] + (1 - momentum) * (float)mean;
		var_avg[c] = momentum * var_avg[c] + (1 - momentum) * (float)var;
	}
}

/*
 * Batch norm over a convolution's rows (more than BIAS_GRAD_DIRECT:
 * batch x height x width) in three kernels, each with work for every
 * core: a thread a chunk of BIAS_GRAD_CHUNK rows of a column sums it (in
 * double: two sums a chunk); a thread a column adds the chunks' sums in
 * order (its statistics); a thread an element applies them.  The sums
 * differ from the CPU's in order, so the two agree within double
 * rounding, not bit for bit.
 */
__global__ void
k_col_sums2(const float *a, const float *b, double *part, int64_t rows,
            int64_t cols, int64_t chunks)
{
	GRID_STRIDE(i, (size_t)(chunks * cols))
	{
		int64_t k = (int64_t)i / cols, c = (int64_t)i % cols;
		int64_t r0 = k * BIAS_GRAD_CHUNK;
		int64_t r1 =
		    r0 + BIAS_GRAD_CHUNK < rows ? r0 + BIAS_GRAD_CHUNK : rows;
		double s = 0, t = 0;
		for (int64_t r = r0; r < r1; r++) {
			double v = a[r * cols + c];
			s += v;
			/* b NULL: the sum of squares; else of a b */
			t += b == NULL ? v * v : v * b[r * cols + c];
		}
		part[2 * i] = s;
		part[2 * i + 1] = t;
	}
}

/* The column's two sums from its chunks' (in order). */
__device__ void
col_sums(const double *part, int64_t c, int64_t cols, int64_t chunks, double *s,
         double *t)
{
	*s = 0, *t = 0;
	for (int64_t k = 0; k < chunks; k++) {
		*s += part[2 * (k * cols + c)];
		*t += part[2 * (k * cols + c) + 1];
	}
}

__global__ void
k_bn_stats(const double *part, float *mean, float *inv_std, float *mean_avg,
           float *var_avg, int64_t rows, int64_t cols, int64_t chunks,
           float eps, float momentum)
{
	GRID_STRIDE(cc, (size_t)cols)
	{
		int64_t c = (int64_t)cc;
		double sum, sq;
		col_sums(part, c, cols, chunks, &sum, &sq);
		double m = sum / (double)rows;
		double var = sq / (double)rows - m * m;
		var = var > 0 ? var : 0;
		mean[c] = (float)m;
		inv_std[c] = (float)(1.0 / sqrt(var + eps));
		mean_avg[c] =
		    momentum * mean_avg[c] + (1 - momentum) * (float)m;
		var_avg[c] =
		    momentum * var_avg[c] + (1 - momentum) * (float)var;
	}
}

__global__ void
k_bn_apply(const float *x, float *y, float *xhat, const float *mean,
           const float *inv_std, const float *gamma, const float *beta,
           size_t n, int64_t cols)
{
	GRID_STRIDE(i, n)
	{
		size_t c = i % (size_t)cols;
		float h = (x[i] - mean[c]) * inv_std[c];
		xhat[i] = h;
		y[i] = gamma[c] * h + beta[c];
	}
}

/* Room for a batch norm's chunk sums (2 doubles a chunk and column) and
 * 3 floats a column after them; NULL when out of device memory. */
static double *
bn_scratch(struct tfk_cuda *cx, int64_t rows, int64_t cols, int64_t *chunks,
           float **per_col)
{
	*chunks = (rows + BIAS_GRAD_CHUNK - 1) / BIAS_GRAD_CHUNK;
	size_t sums = 2 * (size_t)(*chunks * cols);
	double *part = scratch(cx, sums + (3 * (size_t)cols + 1) / 2);
	*per_col = part ? (float *)(part + sums) : NULL;
	return part;
}

extern "C" void
batchnorm_train_cuda(const float *x, float *y, float *xhat, float *inv_std,
                     const float *gamma, const float *beta, float *mean_avg,
                     float *var_avg, int64_t rows, int64_t cols, float eps,
                     float momentum, struct tfk_cuda *cx)
{
	if (cols == 0) {
		return;
	}
	if (rows <= BIAS_GRAD_DIRECT) {
		k_bn_train<<<blocks((size_t)cols), THREADS, 0, cx->stream>>>(
		    x, y, xhat, inv_std, gamma, beta, mean_avg, var_avg, rows,
		    cols, eps, momentum);
		check(cx, "bn_train");
		return;
	}
	int64_t chunks;
	float *mean;
	double *part = bn_scratch(cx, rows, cols, &chunks, &mean);
	if (part == NULL) {
		return;
	}
	size_t n = (size_t)(rows * cols);
	k_col_sums2<<<blocks((size_t)(chunks * cols)), THREADS, 0,
	              cx->stream>>>(x, NULL, part, rows, cols, chunks);
	k_bn_stats<<<blocks((size_t)cols), THREADS, 0, cx->stream>>>(
	    part, mean, inv_std, mean_avg, var_avg, rows, cols, chunks, eps,
	    momentum);
	k_bn_apply<<<blocks(n), THREADS, 0, cx->stream>>>(
	    x, y, xhat, mean, inv_std, gamma, beta, n, cols);
	check(cx, "bn_train");
}

__global__ void
k_bn_infer(const float *x, float *y, const float *gamma, const float *beta,
           const float *mean_avg, const float *var_avg, size_t n,
           int64_t cols, float eps)
{
	GRID_STRIDE(i, n)
	{
		size_t c = i % (size_t)cols;
		float a = gamma[c] / sqrtf(var_avg[c] + eps);
		float b = beta[c] - a * mean_avg[c];
		y[i] = a * x[i] + b;
	}
}

extern "C" void
batchnorm_infer_cuda(const float *x, float *y, const float *gamma,
                     const float *beta, const float *mean_avg,
                     const float *var_avg, int64_t rows, int64_t cols,
                     float eps, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * cols);
	if (n == 0) {
		return;
	}
	k_bn_infer<<<blocks(n), THREADS, 0, cx->stream>>>(
	    x, y, gamma, beta, mean_avg, var_avg, n, cols, eps);
	check(cx, "bn_infer");
}

__global__ void
k_bn_grad(const float *dy, const float *xhat, const float *inv_std,
          const float *gamma, float *dx, float *dgamma, float *dbeta,
          int64_t rows, int64_t cols)
{
	GRID_STRIDE(cc, (size_t)cols)
	{
		int64_t c = (int64_t)cc;
		double sdy = 0, sdyx = 0;
		for (int64_t r = 0; r < rows; r++) {
			sdy += dy[r * cols + c];
			sdyx += (double)dy[r * cols + c] * xhat[r * cols + c];
		}
		dgamma[c] += (float)sdyx;
		dbeta[c] += (float)sdy;
		if (dx == NULL) {
			continue;
		}
		float k = gamma[c] * inv_std[c];
		float m1 = (float)(sdy / (double)rows);
		float m2 = (float)(sdyx / (double)rows);
		for (int64_t r = 0; r < rows; r++) {
			dx[r * cols + c] += k * (dy[r * cols + c] - m1 -
			                         xhat[r * cols + c] * m2);
		}
	}
}

/* A column's dgamma and dbeta from its chunks' sums, and the three
 * factors of its dx (k, m1, m2: k_bn_grad's) in coef. */
__global__ void
k_bn_grad_stats(const double *part, const float *inv_std, const float *gamma,
                float *dgamma, float *dbeta, float *coef, int64_t rows,
                int64_t cols, int64_t chunks)
{
	GRID_STRIDE(cc, (size_t)cols)
	{
		int64_t c = (int64_t)cc;
		double sdy, sdyx;
		col_sums(part, c, cols, chunks, &sdy, &sdyx);
		dgamma[c] += (float)sdyx;
		dbeta[c] += (float)sdy;
		coef[3 * c] = gamma[c] * inv_std[c];
		coef[3 * c + 1] = (float)(sdy / (double)rows);
		coef[3 * c + 2] = (float)(sdyx / (double)rows);
	}
}

__global__ void
k_bn_grad_apply(const float *dy, const float *xhat, const float *coef,
                float *dx, size_t n, int64_t cols)
{
	GRID_STRIDE(i, n)
	{
		const float *f = coef + 3 * (i % (size_t)cols);
		dx[i] += f[0] * (dy[i] - f[1] - xhat[i] * f[2]);
	}
}

extern "C" void
batchnorm_backward_cuda(const float *dy, const float *xhat,
                        const float *inv_std, const float *gamma, float *dx,
                        float *dgamma, float *dbeta, int64_t rows, int64_t cols,
                        struct tfk_cuda *cx)
{
	if (cols == 0) {
		return;
	}
	if (rows <= BIAS_GRAD_DIRECT) {
		k_bn_grad<<<blocks((size_t)cols), THREADS, 0, cx->stream>>>(
		    dy, xhat, inv_std, gamma, dx, dgamma, dbeta, rows, cols);
		check(cx, "bn_grad");
		return;
	}
	int64_t chunks;
	float *coef;
	double *part = bn_scratch(cx, rows, cols, &chunks, &coef);
	if (part == NULL) {
		return;
	}
	size_t n = (size_t)(rows * cols);
	k_col_sums2<<<blocks((size_t)(chunks * cols)), THREADS, 0,
	              cx->stream>>>(dy, xhat, part, rows, cols, chunks);
	k_bn_grad_stats<<<blocks((size_t)cols), THREADS, 0, cx->stream>>>(
	    part, inv_std, gamma, dgamma, dbeta, coef, rows, cols, chunks);
	if (dx != NULL) {
		k_bn_grad_apply<<<blocks(n), THREADS, 0, cx->stream>>>(
		    dy, xhat, coef, dx, n, cols);
	}
	check(cx, "bn_grad");
}

/* ---- column blocks and embeddings -------------------------------------- */

extern "C" void
copy_cols_cuda(const float *x, int64_t xstride, float *y, int64_t ystride,
               int64_t rows, int64_t cols, struct tfk_cuda *cx)
{
	if (rows == 0 || cols == 0) {
		return;
	}
	cudaError_t e = cudaMemcpy2DAsync(
	    y, (size_t)ystride * sizeof *y, x, (size_t)xstride * sizeof *x,
	    (size_t)cols * sizeof *x, (size_t)rows, cudaMemcpyDeviceToDevice,
	    cx->stream);
	if (e != cudaSuccess) {
		failed(cx, "copy_cols", cudaGetErrorString(e));
	}
}

__global__ void
k_add_cols(const float *x, int64_t xstride, float *y, int64_t ystride,
           int64_t rows, int64_t cols)
{
	GRID_STRIDE(i, (size_t)(rows * cols))
	{
		int64_t r = (int64_t)i / cols, c = (int64_t)i % cols;
		y[r * ystride + c] += x[r * xstride + c];
	}
}

extern "C" void
add_cols_cuda(const float *x, int64_t xstride, float *y, int64_t ystride,
              int64_t rows, int64_t cols, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * cols);
	if (n == 0) {
		return;
	}
	k_add_cols<<<blocks(n), THREADS, 0, cx->stream>>>(x, xstride, y,
	                                                   ystride, rows, cols);
	check(cx, "add_cols");
}

/* The id at ids[i] as an index, or -1 when it is none (embedding.c). */
__device__ static int64_t
id_at(const int64_t *ids, int64_t i, int64_t vocab)
{
	int64_t v = ids[i];
	return v >= 0 && v < vocab ? v : -1;
}

/* A thread an output value: a row's ids added in order (the CPU's). */
__global__ void
k_gather(const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
         int64_t stride, int64_t rows, int64_t width, int combiner, float *y)
{
	int64_t out = combiner == COMBINE_CONCAT ? width * dim : dim;
	GRID_STRIDE(i, (size_t)(rows * out))
	{
		int64_t r = (int64_t)i / out, j = (int64_t)i % out;
		const int64_t *row = ids + r * stride;
		float acc = 0.0f;
		if (combiner == COMBINE_CONCAT) {
			int64_t id = id_at(row, j / dim, vocab);
			acc = id >= 0 ? table[id * dim + j % dim] : 0.0f;
		} else {
			int64_t n = 0;
			for (int64_t k = 0; k < width; k++) {
				int64_t id = id_at(row, k, vocab);
				if (id >= 0) {
					acc += table[id * dim + j];
					n++;
				}
			}
			if (combiner == COMBINE_MEAN && n > 1) {
				acc /= (float)n;
			}
		}
		y[i] = acc;
	}
}

extern "C" void
gather_cuda(const float *table, int64_t vocab, int64_t dim,
            const int64_t *ids, int64_t stride, int64_t rows, int64_t width,
            int combiner, float *y, struct tfk_cuda *cx)
{
	int64_t out = combiner == COMBINE_CONCAT ? width * dim : dim;
	size_t n = (size_t)(rows * out);
	if (n == 0) {
		return;
	}
	k_gather<<<blocks(n), THREADS, 0, cx->stream>>>(
	    table, vocab, dim, ids, stride, rows, width, combiner, y);
	check(cx, "gather");
}

/* A thread a (row, id, value): added with atomics, so rows sharing an
 * id add in any order. */
__global__ void
k_scatter(const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
          int64_t stride, int64_t rows, int64_t width, int combiner,
          float *dtable)
{
	int64_t out = combiner == COMBINE_CONCAT ? width * dim : dim;
	GRID_STRIDE(i, (size_t)(rows * width * dim))
	{
		int64_t r = (int64_t)i / (width * dim);
		int64_t k = (int64_t)i / dim % width, j = (int64_t)i % dim;
		const int64_t *row = ids + r * stride;
		int64_t id = id_at(row, k, vocab);
		if (id < 0) {
			continue;
		}
		float s = 1.0f;
		if (combiner == COMBINE_MEAN) {
			int64_t n = 0;
			for (int64_t q = 0; q < width; q++) {
				n += id_at(row, q, vocab) >= 0;
			}
			s = n > 1 ? 1.0f / (float)n : 1.0f;
		}
		const float *g = dy + r * out;
		float v = combiner == COMBINE_CONCAT ? g[k * dim + j] : g[j];
		atomicAdd(&dtable[id * dim + j], s * v);
	}
}

extern "C" void
scatter_cuda(const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
             int64_t stride, int64_t rows, int64_t width, int combiner,
             float *dtable, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * width * dim);
	if (n == 0) {
		return;
	}
	k_scatter<<<blocks(n), THREADS, 0, cx->stream>>>(
	    dy, vocab, dim, ids, stride, rows, width, combiner, dtable);
	check(cx, "scatter");
}

/* Weighted lookups (gather_w_cpu's): a thread an output value. */
__device__ static float
weight_sum(const int64_t *row, const float *w, int64_t width, int64_t vocab)
{
	float s = 0.0f;
	for (int64_t k = 0; k < width; k++) {
		s += id_at(row, k, vocab) >= 0 ? w[k] : 0.0f;
	}
	return s;
}

__global__ void
k_gather_w(const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
           int64_t stride, const float *w, int64_t wstride, int64_t rows,
           int64_t width, int combiner, float *y)
{
	GRID_STRIDE(i, (size_t)(rows * dim))
	{
		int64_t r = (int64_t)i / dim, j = (int64_t)i % dim;
		const int64_t *row = ids + r * stride;
		const float *wr = w + r * wstride;
		float acc = 0.0f;
		for (int64_t k = 0; k < width; k++) {
			int64_t id = id_at(row, k, vocab);
			if (id >= 0) {
				acc += wr[k] * table[id * dim + j];
			}
		}
		if (combiner == COMBINE_MEAN) {
			float s = weight_sum(row, wr, width, vocab);
			acc = s != 0.0f ? acc / s : acc;
		}
		y[i] = acc;
	}
}

extern "C" void
gather_w_cuda(const float *table, int64_t vocab, int64_t dim,
              const int64_t *ids, int64_t stride, const float *w,
              int64_t wstride, int64_t rows, int64_t width, int combiner,
              float *y, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * dim);
	if (n == 0) {
		return;
	}
	k_gather_w<<<blocks(n), THREADS, 0, cx->stream>>>(
	    table, vocab, dim, ids, stride, w, wstride, rows, width, combiner,
	    y);
	check(cx, "gather_w");
}

/* A thread a (row, id, value), added with atomics. */
__global__ void
k_scatter_w(const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
            int64_t stride, const float *w, int64_t wstride, int64_t rows,
            int64_t width, int combiner, float *dtable)
{
	GRID_STRIDE(i, (size_t)(rows * width * dim))
	{
		int64_t r = (int64_t)i / (width * dim);
		int64_t k = (int64_t)i / dim % width, j = (int64_t)i % dim;
		const int64_t *row = ids + r * stride;
		const float *wr = w + r * wstride;
		int64_t id = id_at(row, k, vocab);
		if (id < 0) {
			continue;
		}
		float c = wr[k];
		if (combiner == COMBINE_MEAN) {
			float s = weight_sum(row, wr, width, vocab);
			c = s != 0.0f ? c / s : 0.0f;
		}
		atomicAdd(&dtable[id * dim + j], c * dy[r * dim + j]);
	}
}

extern "C" void
scatter_w_cuda(const float *dy, int64_t vocab, int64_t dim,
               const int64_t *ids, int64_t stride, const float *w,
               int64_t wstride, int64_t rows, int64_t width, int combiner,
               float *dtable, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * width * dim);
	if (n == 0) {
		return;
	}
	k_scatter_w<<<blocks(n), THREADS, 0, cx->stream>>>(
	    dy, vocab, dim, ids, stride, w, wstride, rows, width, combiner,
	    dtable);
	check(cx, "scatter_w");
}

/* ---- optimizer updates ---------------------------------------------- */

/* The kinds of tf/device.h (TF_UPDATE_*). */
enum {
	UPDATE_SGD = 0,
	UPDATE_MOMENTUM = 1,
	UPDATE_ADAGRAD = 2,
	UPDATE_RMSPROP = 3,
	UPDATE_ADADELTA = 4,
	UPDATE_ADAM = 5,
	UPDATE_FTRL = 6
};

/* One kernel a parameter block a step: each element's update reads and
 * writes only its own w, slots and g, in kernels/cpu/update.c's formulas
 * (the kind is uniform across the grid, so the switch does not diverge). */
__global__ void
k_update(int kind, int flag, float lr, float f0, float f1, float f2, double d0,
         float *w, const float *g, float *s0, float *s1, float *s2, size_t n)
{
	GRID_STRIDE(i, n)
	{
		float gi = g[i];
		switch (kind) {
		case UPDATE_SGD:
			w[i] -= lr * gi;
			break;
		case UPDATE_MOMENTUM: {
			float a = f0 * s0[i] + gi;
			s0[i] = a;
			w[i] -= flag ? lr * (gi + f0 * a) : lr * a;
			break;
		}
		case UPDATE_ADAGRAD: {
			float acc = s0[i] + gi * gi;
			s0[i] = acc;
			w[i] -= lr * gi / sqrtf(acc);
			break;
		}
		case UPDATE_RMSPROP: {
			float ms = f0 * s0[i] + (1 - f0) * gi * gi;
			s0[i] = ms;
			float den = ms;
			if (flag) {
				float mg = f0 * s2[i] + (1 - f0) * gi;
				s2[i] = mg;
				den -= mg * mg;
			}
			float mom = f1 * s1[i] + lr * gi / sqrtf(den + f2);
			s1[i] = mom;
			w[i] -= mom;
			break;
		}
		case UPDATE_ADADELTA: {
			float acc = f0 * s0[i] + (1 - f0) * gi * gi;
			s0[i] = acc;
			float u = sqrtf(s1[i] + f1) / sqrtf(acc + f1) * gi;
			s1[i] = f0 * s1[i] + (1 - f0) * u * u;
			w[i] -= lr * u;
			break;
		}
		case UPDATE_ADAM: {
			if (flag && gi == 0.0f) {
				break; /* lazy: an untouched row stays */
			}
			float m = f0 * s0[i] + (1 - f0) * gi;
			float v = f1 * s1[i] + (1 - f1) * gi * gi;
			s0[i] = m;
			s1[i] = v;
			w[i] -= lr * m / (sqrtf(v) + f2);
			break;
		}
		case UPDATE_FTRL: {
			double a0 = s0[i], a1 = a0 + (double)gi * gi;
			double p0 = pow(a0, -d0), p1 = pow(a1, -d0);
			float lin = s1[i] + (gi - (float)((p1 - p0) / lr * w[i]));
			s1[i] = lin;
			double quad = p1 / lr + 2.0 * (double)f1;
			double l = lin;
			w[i] = fabs(l) > (double)f0
			           ? (float)(((l > 0 ? 1 : -1) * (double)f0 - l) /
			                     quad)
			           : 0.0f;
			s0[i] = (float)a1;
			break;
		}
		default:
			break;
		}
	}
}

extern "C" void
update_cuda(int kind, int flag, float lr, float f0, float f1, float f2,
            double d0, float *w, const float *g, float *const *slots, size_t n,
            struct tfk_cuda *cx)
{
	if (n == 0) {
		return;
	}
	float *s0 = slots ? slots[0] : NULL;
	float *s1 = s0 && (kind == UPDATE_RMSPROP || kind == UPDATE_ADADELTA ||
	                   kind == UPDATE_ADAM || kind == UPDATE_FTRL)
	                ? slots[1]
	                : NULL;
	float *s2 = kind == UPDATE_RMSPROP && slots ? slots[2] : NULL;
	k_update<<<blocks(n), THREADS, 0, cx->stream>>>(
	    kind, flag, lr, f0, f1, f2, d0, w, g, s0, s1, s2, n);
	check(cx, "update");
}

/* ---- convolution ------------------------------------------------------ */

/* A thread a value of col: its row (r, oy, ox), its place (ky, kx, ch)
 * in the patch; the input's value there or 0 (padding), as the CPU's. */
__global__ void
k_im2col(const float *x, size_t n, struct tf_conv g, float *col)
{
	int64_t patch = g.kh * g.kw * g.c;
	GRID_STRIDE(i, n)
	{
		int64_t p = (int64_t)(i % (size_t)patch), row = (int64_t)(i / (size_t)patch);
		int64_t ch = p % g.c, kx = (p / g.c) % g.kw, ky = p / (g.c * g.kw);
		int64_t ox = row % g.ow, oy = (row / g.ow) % g.oh;
		int64_t r = row / (g.ow * g.oh);
		int64_t iy = oy * g.sh - g.ph + ky, ix = ox * g.sw - g.pw + kx;
		col[i] = iy < 0 || iy >= g.h || ix < 0 || ix >= g.w
		             ? 0.0f
		             : x[((r * g.h + iy) * g.w + ix) * g.c + ch];
	}
}

extern "C" void
im2col_cuda(const float *x, int64_t rows, const struct tf_conv *g, float *col,
            struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * g->oh * g->ow * g->kh * g->kw * g->c);
	if (n == 0) {
		return;
	}
	k_im2col<<<blocks(n), THREADS, 0, cx->stream>>>(x, n, *g, col);
	check(cx, "im2col");
}

/* A thread a value of dx: the sum of the col values im2col copied from
 * its place (a gather, so no two threads write one place). */
__global__ void
k_col2im(const float *col, size_t n, struct tf_conv g, float *dx)
{
	int64_t patch = g.kh * g.kw * g.c;
	GRID_STRIDE(i, n)
	{
		int64_t ch = (int64_t)(i % (size_t)g.c);
		int64_t ix = (int64_t)(i / (size_t)g.c) % g.w;
		int64_t iy = (int64_t)(i / (size_t)(g.c * g.w)) % g.h;
		int64_t r = (int64_t)(i / (size_t)(g.c * g.w * g.h));
		float s = 0.0f;
		for (int64_t ky = 0; ky < g.kh; ky++) {
			int64_t ty = iy + g.ph - ky;
			if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) {
				continue;
			}
			for (int64_t kx = 0; kx < g.kw; kx++) {
				int64_t tx = ix + g.pw - kx;
				if (tx < 0 || tx % g.sw != 0 ||
				    tx / g.sw >= g.ow) {
					continue;
				}
				int64_t row =
				    (r * g.oh + ty / g.sh) * g.ow + tx / g.sw;
				s += col[row * patch + (ky * g.kw + kx) * g.c +
				         ch];
			}
		}
		dx[i] += s;
	}
}

extern "C" void
col2im_cuda(const float *col, int64_t rows, const struct tf_conv *g, float *dx,
            struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * g->h * g->w * g->c);
	if (n == 0) {
		return;
	}
	k_col2im<<<blocks(n), THREADS, 0, cx->stream>>>(col, n, *g, dx);
	check(cx, "col2im");
}

/* The window of output pixel (oy, ox) inside the image, as the CPU's. */
__device__ void
pool_window(const struct tf_conv &g, int64_t oy, int64_t ox, int64_t *y0,
            int64_t *y1, int64_t *x0, int64_t *x1)
{
	*y0 = oy * g.sh - g.ph;
	*x0 = ox * g.sw - g.pw;
	*y1 = *y0 + g.kh < g.h ? *y0 + g.kh : g.h;
	*x1 = *x0 + g.kw < g.w ? *x0 + g.kw : g.w;
	*y0 = *y0 > 0 ? *y0 : 0;
	*x0 = *x0 > 0 ? *x0 : 0;
}

/* A thread a value of y: its window's largest value or mean. */
__global__ void
k_pool(const float *x, size_t n, struct tf_conv g, int max, float *y)
{
	GRID_STRIDE(i, n)
	{
		int64_t ch = (int64_t)(i % (size_t)g.c);
		int64_t ox = (int64_t)(i / (size_t)g.c) % g.ow;
		int64_t oy = (int64_t)(i / (size_t)(g.c * g.ow)) % g.oh;
		int64_t r = (int64_t)(i / (size_t)(g.c * g.ow * g.oh));
		int64_t y0, y1, x0, x1;
		pool_window(g, oy, ox, &y0, &y1, &x0, &x1);
		const float *img = x + r * g.h * g.w * g.c;
		float v = max ? -INFINITY : 0.0f;
		for (int64_t iy = y0; iy < y1; iy++) {
			for (int64_t ix = x0; ix < x1; ix++) {
				float u = img[(iy * g.w + ix) * g.c + ch];
				v = max ? (u > v ? u : v) : v + u;
			}
		}
		y[i] = max ? v : v / (float)((y1 - y0) * (x1 - x0));
	}
}

extern "C" void
pool_cuda(const float *x, int64_t rows, const struct tf_conv *g, int max,
          float *y, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * g->oh * g->ow * g->c);
	if (n == 0) {
		return;
	}
	k_pool<<<blocks(n), THREADS, 0, cx->stream>>>(x, n, *g, max, y);
	check(cx, "pool");
}

/* A thread a value of dx: the gradients of the outputs whose window
 * holds its place (a gather): all of one whose first largest value it
 * is (max), an equal share of each (mean). */
__global__ void
k_pool_grad(const float *x, const float *dy, size_t n, struct tf_conv g,
            int max, float *dx)
{
	GRID_STRIDE(i, n)
	{
		int64_t ch = (int64_t)(i % (size_t)g.c);
		int64_t ix = (int64_t)(i / (size_t)g.c) % g.w;
		int64_t iy = (int64_t)(i / (size_t)(g.c * g.w)) % g.h;
		int64_t r = (int64_t)(i / (size_t)(g.c * g.w * g.h));
		const float *img = x + r * g.h * g.w * g.c;
		float s = 0.0f;
		/* the outputs whose window starts within a kernel before */
		int64_t oy0 = (iy + g.ph - g.kh + g.sh) / g.sh;
		int64_t ox0 = (ix + g.pw - g.kw + g.sw) / g.sw;
		oy0 = oy0 > 0 ? oy0 : 0;
		ox0 = ox0 > 0 ? ox0 : 0;
		for (int64_t oy = oy0; oy < g.oh && oy * g.sh - g.ph <= iy;
		     oy++) {
			for (int64_t ox = ox0;
			     ox < g.ow && ox * g.sw - g.pw <= ix; ox++) {
				int64_t y0, y1, x0, x1;
				pool_window(g, oy, ox, &y0, &y1, &x0, &x1);
				if (iy < y0 || iy >= y1 || ix < x0 ||
				    ix >= x1) {
					continue;
				}
				float d =
				    dy[((r * g.oh + oy) * g.ow + ox) * g.c +
				       ch];
				if (!max) {
					s += d / (float)((y1 - y0) * (x1 - x0));
					continue;
				}
				int64_t at = -1;
				float v = -INFINITY;
				for (int64_t yy = y0; yy < y1; yy++) {
					for (int64_t xx = x0; xx < x1; xx++) {
						float u =
						    img[(yy * g.w + xx) * g.c +
						        ch];
						if (at < 0 || u > v) {
							at = yy * g.w + xx;
							v = u;
						}
					}
				}
				if (at == iy * g.w + ix) {
					s += d;
				}
			}
		}
		dx[i] += s;
	}
}

extern "C" void
pool_grad_cuda(const float *x, const float *dy, int64_t rows,
               const struct tf_conv *g, int max, float *dx, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * g->h * g->w * g->c);
	if (n == 0) {
		return;
	}
	k_pool_grad<<<blocks(n), THREADS, 0, cx->stream>>>(x, dy, n, *g, max,
	                                                   dx);
	check(cx, "pool_grad");
}

/* ---- recurrent cells (kernels/cpu/rnn.c: the gate layouts) ------------ */

__device__ static inline float
d_sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* A thread a unit of a row. */
__global__ void
k_lstm_cell(const float *g, const float *c_prev, float *act, float *c,
            float *h, size_t n, int64_t units)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / units, u = (int64_t)k % units;
		const float *gr = g + r * 4 * units;
		float *ar = act + r * 4 * units;
		float i = d_sigm(gr[u]), f = d_sigm(gr[units + u]);
		float cand = tanhf(gr[2 * units + u]);
		float o = d_sigm(gr[3 * units + u]);
		float cc = f * c_prev[k] + i * cand;
		ar[u] = i;
		ar[units + u] = f;
		ar[2 * units + u] = cand;
		ar[3 * units + u] = o;
		c[k] = cc;
		h[k] = o * tanhf(cc);
	}
}

extern "C" void
lstm_cell_cuda(const float *g, const float *c_prev, float *act, float *c,
               float *h, int64_t rows, int64_t units, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * units);
	if (n > 0) {
		k_lstm_cell<<<blocks(n), THREADS, 0, cx->stream>>>(
		    g, c_prev, act, c, h, n, units);
		check(cx, "lstm_cell");
	}
}

__global__ void
k_lstm_cell_grad(const float *act, const float *c_prev, const float *c,
                 const float *dh, float *dc, float *dg, size_t n,
                 int64_t units)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / units, u = (int64_t)k % units;
		const float *ar = act + r * 4 * units;
		float *dr = dg + r * 4 * units;
		float i = ar[u], f = ar[units + u];
		float cand = ar[2 * units + u], o = ar[3 * units + u];
		float tc = tanhf(c[k]);
		float dct = dc[k] + dh[k] * o * (1.0f - tc * tc);
		dr[u] = dct * cand * i * (1.0f - i);
		dr[units + u] = dct * c_prev[k] * f * (1.0f - f);
		dr[2 * units + u] = dct * i * (1.0f - cand * cand);
		dr[3 * units + u] = dh[k] * tc * o * (1.0f - o);
		dc[k] = dct * f;
	}
}

extern "C" void
lstm_cell_grad_cuda(const float *act, const float *c_prev, const float *c,
                    const float *dh, float *dc, float *dg, int64_t rows,
                    int64_t units, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * units);
	if (n > 0) {
		k_lstm_cell_grad<<<blocks(n), THREADS, 0, cx->stream>>>(
		    act, c_prev, c, dh, dc, dg, n, units);
		check(cx, "lstm_cell_grad");
	}
}

__global__ void
k_gru_cell(const float *gx, const float *gh, const float *h_prev, float *act,
           float *h, size_t n, int64_t units)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / units, u = (int64_t)k % units;
		const float *xr = gx + r * 3 * units, *hr = gh + r * 3 * units;
		float *ar = act + r * 3 * units;
		float z = d_sigm(xr[u] + hr[u]);
		float rr = d_sigm(xr[units + u] + hr[units + u]);
		float nn = tanhf(xr[2 * units + u] + rr * hr[2 * units + u]);
		ar[u] = z;
		ar[units + u] = rr;
		ar[2 * units + u] = nn;
		h[k] = z * h_prev[k] + (1.0f - z) * nn;
	}
}

extern "C" void
gru_cell_cuda(const float *gx, const float *gh, const float *h_prev,
              float *act, float *h, int64_t rows, int64_t units,
              struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * units);
	if (n > 0) {
		k_gru_cell<<<blocks(n), THREADS, 0, cx->stream>>>(
		    gx, gh, h_prev, act, h, n, units);
		check(cx, "gru_cell");
	}
}

__global__ void
k_gru_cell_grad(const float *act, const float *gh, const float *h_prev,
                const float *dh, float *dgx, float *dgh, float *dh_prev,
                size_t n, int64_t units)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / units, u = (int64_t)k % units;
		const float *ar = act + r * 3 * units, *hr = gh + r * 3 * units;
		float *dx = dgx + r * 3 * units, *dhh = dgh + r * 3 * units;
		float z = ar[u], rr = ar[units + u], nn = ar[2 * units + u];
		float dz = dh[k] * (h_prev[k] - nn) * z * (1.0f - z);
		float dn = dh[k] * (1.0f - z) * (1.0f - nn * nn);
		float dr = dn * hr[2 * units + u] * rr * (1.0f - rr);
		dx[u] = dz;
		dx[units + u] = dr;
		dx[2 * units + u] = dn;
		dhh[u] = dz;
		dhh[units + u] = dr;
		dhh[2 * units + u] = dn * rr;
		dh_prev[k] = dh[k] * z;
	}
}

extern "C" void
gru_cell_grad_cuda(const float *act, const float *gh, const float *h_prev,
                   const float *dh, float *dgx, float *dgh, float *dh_prev,
                   int64_t rows, int64_t units, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * units);
	if (n > 0) {
		k_gru_cell_grad<<<blocks(n), THREADS, 0, cx->stream>>>(
		    act, gh, h_prev, dh, dgx, dgh, dh_prev, n, units);
		check(cx, "gru_cell_grad");
	}
}

/* The GRU with the reset before (kernels/cpu/rnn.c). */
__global__ void
k_gru_gates(const float *gx, const float *gzr, const float *h_prev,
            float *act, float *rh, size_t n, int64_t units)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / units, u = (int64_t)k % units;
		const float *xr = gx + r * 3 * units, *hr = gzr + r * 2 * units;
		float *ar = act + r * 3 * units;
		float z = d_sigm(xr[u] + hr[u]);
		float rr = d_sigm(xr[units + u] + hr[units + u]);
		ar[u] = z;
		ar[units + u] = rr;
		rh[k] = rr * h_prev[k];
	}
}

extern "C" void
gru_gates_cuda(const float *gx, const float *gzr, const float *h_prev,
               float *act, float *rh, int64_t rows, int64_t units,
               struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * units);
	if (n > 0) {
		k_gru_gates<<<blocks(n), THREADS, 0, cx->stream>>>(
		    gx, gzr, h_prev, act, rh, n, units);
		check(cx, "gru_gates");
	}
}

__global__ void
k_gru_new(const float *gx, const float *gn, const float *h_prev, float *act,
          float *h, size_t n, int64_t units)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / units, u = (int64_t)k % units;
		float *ar = act + r * 3 * units;
		float z = ar[u];
		float nn = tanhf(gx[r * 3 * units + 2 * units + u] + gn[k]);
		ar[2 * units + u] = nn;
		h[k] = z * h_prev[k] + (1.0f - z) * nn;
	}
}

extern "C" void
gru_new_cuda(const float *gx, const float *gn, const float *h_prev,
             float *act, float *h, int64_t rows, int64_t units,
             struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * units);
	if (n > 0) {
		k_gru_new<<<blocks(n), THREADS, 0, cx->stream>>>(
		    gx, gn, h_prev, act, h, n, units);
		check(cx, "gru_new");
	}
}

__global__ void
k_gru_new_grad(const float *act, const float *h_prev, const float *dh,
               float *dgx, float *dzr, float *dn, float *dh_prev, size_t n,
               int64_t units)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / units, u = (int64_t)k % units;
		const float *ar = act + r * 3 * units;
		float *dx = dgx + r * 3 * units, *dg = dzr + r * 2 * units;
		float z = ar[u], nn = ar[2 * units + u];
		float dz = dh[k] * (h_prev[k] - nn) * z * (1.0f - z);
		float d = dh[k] * (1.0f - z) * (1.0f - nn * nn);
		dx[u] = dz;
		dx[2 * units + u] = d;
		dg[u] = dz;
		dn[k] = d;
		dh_prev[k] = dh[k] * z;
	}
}

extern "C" void
gru_new_grad_cuda(const float *act, const float *h_prev, const float *dh,
                  float *dgx, float *dzr, float *dn, float *dh_prev,
                  int64_t rows, int64_t units, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * units);
	if (n > 0) {
		k_gru_new_grad<<<blocks(n), THREADS, 0, cx->stream>>>(
		    act, h_prev, dh, dgx, dzr, dn, dh_prev, n, units);
		check(cx, "gru_new_grad");
	}
}

__global__ void
k_gru_gates_grad(const float *act, const float *h_prev, const float *drh,
                 float *dgx, float *dzr, float *dh_prev, size_t n,
                 int64_t units)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / units, u = (int64_t)k % units;
		float rr = act[r * 3 * units + units + u];
		float d = drh[k] * h_prev[k] * rr * (1.0f - rr);
		dgx[r * 3 * units + units + u] = d;
		dzr[r * 2 * units + units + u] = d;
		dh_prev[k] += drh[k] * rr;
	}
}

extern "C" void
gru_gates_grad_cuda(const float *act, const float *h_prev, const float *drh,
                    float *dgx, float *dzr, float *dh_prev, int64_t rows,
                    int64_t units, struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * units);
	if (n > 0) {
		k_gru_gates_grad<<<blocks(n), THREADS, 0, cx->stream>>>(
		    act, h_prev, drh, dgx, dzr, dh_prev, n, units);
		check(cx, "gru_gates_grad");
	}
}

/* ---- sequences of varying length -------------------------------------- */

__global__ void
k_mask_steps(const int64_t *len, int64_t lstride, int64_t step,
             const float *src, int64_t sstride, float *dst, int64_t dstride,
             size_t n, int64_t cols, int zero)
{
	GRID_STRIDE(k, n)
	{
		int64_t r = (int64_t)k / cols, c = (int64_t)k % cols;
		if (len[r * lstride] <= step) {
			dst[r * dstride + c] = zero ? 0.0f : src[r * sstride + c];
		}
	}
}

extern "C" void
mask_steps_cuda(const int64_t *len, int64_t lstride, int64_t step,
                const float *src, int64_t sstride, float *dst,
                int64_t dstride, int64_t rows, int64_t cols, int zero,
                struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * cols);
	if (n > 0) {
		k_mask_steps<<<blocks(n), THREADS, 0, cx->stream>>>(
		    len, lstride, step, src, sstride, dst, dstride, n, cols,
		    zero);
		check(cx, "mask_steps");
	}
}

__global__ void
k_reverse_steps(const int64_t *len, int64_t lstride, const float *x,
                float *y, size_t n, int64_t steps, int64_t width)
{
	GRID_STRIDE(k, n)
	{
		int64_t w = (int64_t)k % width, rs = (int64_t)k / width;
		int64_t r = rs / steps, s = rs % steps;
		int64_t l = len[r * lstride];
		l = l < 0 ? 0 : l > steps ? steps : l;
		int64_t from = s < l ? l - 1 - s : s;
		y[k] = x[(r * steps + from) * width + w];
	}
}

extern "C" void
reverse_steps_cuda(const int64_t *len, int64_t lstride, const float *x,
                   float *y, int64_t rows, int64_t steps, int64_t width,
                   struct tfk_cuda *cx)
{
	size_t n = (size_t)(rows * steps * width);
	if (n > 0) {
		k_reverse_steps<<<blocks(n), THREADS, 0, cx->stream>>>(
		    len, lstride, x, y, n, steps, width);
		check(cx, "reverse_steps");
	}
}

/* ---- memory ------------------------------------------------------------ */

extern "C" float *
tfk_cuda_alloc(struct tfk_cuda *cx, size_t n, int zero)
{
	void *p = NULL;
	size_t bytes = (n < 16 ? 16 : n) * sizeof(float);
	/* Device memory, never managed: the host reaches it only through
	 * uploads and downloads (managed memory can hang a GPU that is
	 * asked for more than it has). */
	cudaError_t e = cudaMalloc(&p, bytes);
	if (e != cudaSuccess) {
		cudaGetLastError();
		return NULL;
	}
	/* Blocks that start at zero are zeroed in the queue; a step's
	 * memory is left for its kernels to write first. */
	if (zero && (e = cudaMemsetAsync(p, 0, bytes, cx->stream)) !=
	                cudaSuccess) {
		cudaGetLastError();
		cudaFree(p);
		return NULL;
	}
	return (float *)p;
}

extern "C" void
tfk_cuda_free(struct tfk_cuda *cx, float *p)
{
	if (p != NULL) {
		cudaStreamSynchronize(cx->stream);
		cudaFree(p);
	}
}

extern "C" void
tfk_cuda_upload(struct tfk_cuda *cx, void *dst, const void *src, size_t n)
{
	if (n == 0) {
		return;
	}
	cudaError_t e =
	    cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, cx->stream);
	if (e != cudaSuccess) {
		failed(cx, "upload", cudaGetErrorString(e));
	}
}

extern "C" void
tfk_cuda_upload_ahead(struct tfk_cuda *cx, void *dst, const void *src, size_t n,
                      int lane)
{
	if (!cx->copy_ready) {
		if (cudaStreamCreateWithFlags(&cx->copy, cudaStreamNonBlocking) !=
		    cudaSuccess) {
			cudaGetLastError();
			tfk_cuda_upload(cx, dst, src, n); /* in order, then */
			return;
		}
		if (cudaEventCreateWithFlags(&cx->copied[0],
		                             cudaEventDisableTiming) !=
		        cudaSuccess ||
		    cudaEventCreateWithFlags(&cx->copied[1],
		                             cudaEventDisableTiming) !=
		        cudaSuccess) {
			cudaGetLastError();
			cudaStreamDestroy(cx->copy);
			tfk_cuda_upload(cx, dst, src, n);
			return;
		}
		cx->copy_ready = 1;
	}
	cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, cx->copy);
	if (e == cudaSuccess) {
		e = cudaEventRecord(cx->copied[lane & 1], cx->copy);
	}
	if (e != cudaSuccess) {
		failed(cx, "upload ahead", cudaGetErrorString(e));
	}
}

extern "C" void
tfk_cuda_await_uploads(struct tfk_cuda *cx, int lane)
{
	if (cx->copy_ready) {
		cudaError_t e =
		    cudaStreamWaitEvent(cx->stream, cx->copied[lane & 1], 0);
		if (e != cudaSuccess) {
			failed(cx, "await uploads", cudaGetErrorString(e));
		}
	}
}

extern "C" void
tfk_cuda_download(struct tfk_cuda *cx, void *dst, const void *src, size_t n)
{
	if (n == 0) {
		return;
	}
	cudaError_t e =
	    cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, cx->stream);
	if (e == cudaSuccess) {
		e = cudaStreamSynchronize(cx->stream);
	}
	if (e != cudaSuccess) {
		failed(cx, "download", cudaGetErrorString(e));
	}
}

extern "C" int
tfk_cuda_pin(struct tfk_cuda *cx, void *p, size_t n)
{
	(void)cx;
	if (cudaHostRegister(p, n, cudaHostRegisterDefault) != cudaSuccess) {
		cudaGetLastError();
		return -1;
	}
	return 0;
}

extern "C" void
tfk_cuda_unpin(struct tfk_cuda *cx, void *p)
{
	(void)cx;
	if (cudaHostUnregister(p) != cudaSuccess) {
		cudaGetLastError();
	}
}
