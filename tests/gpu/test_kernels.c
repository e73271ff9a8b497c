/*
 * test_kernels.c - every CUDA kernel (kernels/cuda) against its CPU twin
 * (kernels/cpu) on the same random inputs, forward and backward, within
 * a stated tolerance; the dropout mask must be the same bit for bit.
 * Built against the kernels alone: the CPU kernels (and their BLAS), the
 * CUDA runtime and cuBLAS.  TAP; skips when no GPU is present.
 *	build/tests/gpu/test_kernels      (make check-gpu)
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda.h"
#include "kernels/kernels.h"
#include "tf/device.h"

#include "tap.h"

static struct tfk_cuda *cx;
static unsigned long long rng = 88172645463325252ull;

static float
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((double)(rng >> 11) * 0x1.0p-53 * 4.0 - 2.0);
}

static float *
host(size_t n)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	for (size_t i = 0; i < n; i++) {
		p[i] = rnd();
	}
	return p;
}

static void *
up(const void *h, size_t bytes)
{
	void *d = NULL;
	if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess ||
	    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
		fprintf(stderr, "test_kernels: cannot copy to the GPU\n");
		exit(1);
	}
	return d;
}

static float *
upf(const float *h, size_t n)
{
	return up(h, n * sizeof *h);
}

/* The device's n floats at d, brought back (and d freed). */
static float *
down(float *d, size_t n)
{
	char err[256];
	if (tfk_cuda_sync(cx, err, sizeof err) != 0) {
		printf("# CUDA: %s\n", err);
		cur_failed++;
	}
	float *h = malloc((n ? n : 1) * sizeof *h);
	cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost);
	cudaFree(d);
	return h;
}

/* cpu and gpu agree: |a - b| <= atol + rtol |a| for each value. */
static void
same(const char *what, const float *cpu, const float *gpu, size_t n,
     double rtol, double atol)
{
	for (size_t i = 0; i < n; i++) {
		double a = cpu[i], b = gpu[i];
		if (isnan(a) && isnan(b)) {
			continue;
		}
		if (!(fabs(a - b) <= atol + rtol * fabs(a))) {
			printf("# %s[%zu]: cpu %.9g, gpu %.9g\n", what, i, a,
			       b);
			cur_failed++;
			return;
		}
	}
}

static void
same_d(const char *what, double cpu, double gpu, double rtol)
{
	if (!(fabs(cpu - gpu) <= 1e-12 + rtol * fabs(cpu))) {
		printf("# %s: cpu %.17g, gpu %.17g\n", what, cpu, gpu);
		cur_failed++;
	}
}

/* exp, tanh and log are the GPU's libm, a few ulps from glibc's; nvcc
 * fuses a * b + c where the CPU build rounds twice: results agree to a
 * few ulps, except where only additions or copies are involved, which
 * must agree exactly */
static const double ULPS = 2e-6;

static void
gemm_all_transposes(void)
{
	const int64_t m = 37, n = 29, k = 53;
	for (int ta = 0; ta < 2; ta++) {
		for (int tb = 0; tb < 2; tb++) {
			float *a = host((size_t)(m * k)),
			      *b = host((size_t)(k * n));
			float *c = host((size_t)(m * n));
			float *da = upf(a, (size_t)(m * k)),
			      *db = upf(b, (size_t)(k * n));
			float *dc = upf(c, (size_t)(m * n));
			gemm_cpu(ta, tb, m, n, k, 0.7f, a, b, 0.3f, c);
			gemm_cuda(ta, tb, m, n, k, 0.7f, da, db, 0.3f, dc, cx);
			float *g = down(dc, (size_t)(m * n));
			char what[32];
			snprintf(what, sizeof what, "gemm(%d,%d)", ta, tb);
			/* sums of 53 products in another order */
			same(what, c, g, (size_t)(m * n), 1e-5, 1e-4);
			free(a), free(b), free(c), free(g);
			cudaFree(da), cudaFree(db);
		}
	}
}

static void
bias_add_and_gradient(void)
{
	const int64_t rows = 300, cols = 17;
	size_t n = (size_t)(rows * cols);
	float *y = host(n), *b = host((size_t)cols), *db = host((size_t)cols);
	float *dy = upf(y, n), *dbv = upf(b, (size_t)cols);
	float *ddb = upf(db, (size_t)cols);
	add_bias_cpu(y, b, rows, cols);
	add_bias_cuda(dy, dbv, rows, cols, cx);
	float *gy = down(dy, n);
	same("add_bias", y, gy, n, 0, 0);
	float *g = host(n), *dg = upf(g, n);
	bias_grad_cpu(g, db, rows, cols);
	bias_grad_cuda(dg, ddb, rows, cols, cx);
	float *gdb = down(ddb, (size_t)cols);
	same("bias_grad", db, gdb, (size_t)cols, 0, 0); /* the same order */
	free(y), free(b), free(db), free(gy), free(g), free(gdb);
	cudaFree(dbv), cudaFree(dg);
	/* a convolution's rows (batch x height x width): by chunks, still
	 * the CPU's floats */
	const int64_t lrows = 20000, lcols = 35;
	size_t ln = (size_t)(lrows * lcols);
	float *lg = host(ln), *ldb = host((size_t)lcols);
	float *dlg = upf(lg, ln), *dldb = upf(ldb, (size_t)lcols);
	bias_grad_cpu(lg, ldb, lrows, lcols);
	bias_grad_cuda(dlg, dldb, lrows, lcols, cx);
	float *gl = down(dldb, (size_t)lcols);
	same("bias_grad (20000 rows)", ldb, gl, (size_t)lcols, 0, 0);
	free(lg), free(ldb), free(gl);
	cudaFree(dlg);
}

static void
copy_zero_add(void)
{
	size_t n = 1000;
	float *x = host(n), *y = host(n);
	float *dx = upf(x, n), *dy = upf(y, n);
	add_cpu(x, y, n);
	add_cuda(dx, dy, n, cx);
	float *g = down(dy, n);
	same("add", y, g, n, 0, 0);
	float *dz = upf(y, n);
	copy_cuda(dx, dz, n, cx);
	float *gc = down(dz, n);
	same("copy", x, gc, n, 0, 0);
	float *d0 = upf(y, n);
	zero_cuda(d0, n, cx);
	float *g0 = down(d0, n);
	zero_cpu(y, n);
	same("zero", y, g0, n, 0, 0);
	float *df = upf(x, n);
	fill_cuda(df, n, -2.5f, cx);
	float *gf = down(df, n);
	fill_cpu(y, n, -2.5f);
	same("fill", y, gf, n, 0, 0);
	/* device memory (cudaMalloc), uploads and downloads in order with
	 * kernels */
	float *m = tfk_cuda_alloc(cx, n, 1), back[1000];
	tfk_cuda_upload(cx, m, x, n * sizeof *x);
	add_cuda(dx, m, n, cx);
	tfk_cuda_download(cx, back, m, sizeof back);
	for (size_t i = 0; i < n; i++) {
		y[i] = x[i] + x[i];
	}
	same("upload, add, download", y, back, n, 0, 0);
	tfk_cuda_free(cx, m);
	free(x), free(y), free(g), free(gc), free(g0), free(gf);
	cudaFree(dx);
}

static void
activations_and_gradients(void)
{
	size_t n = 4099;
	void (*fw_cpu[3])(const float *, float *, size_t) = {
	    relu_forward_cpu, sigmoid_forward_cpu, tanh_forward_cpu};
	void (*bw_cpu[3])(const float *, const float *, float *, size_t) = {
	    relu_backward_cpu, sigmoid_backward_cpu, tanh_backward_cpu};
	void (*fw_gpu[3])(const float *, float *, size_t, struct tfk_cuda *) = {
	    relu_forward_cuda, sigmoid_forward_cuda, tanh_forward_cuda};
	void (*bw_gpu[3])(const float *, const float *, float *, size_t,
	                  struct tfk_cuda *) = {
	    relu_backward_cuda, sigmoid_backward_cuda, tanh_backward_cuda};
	const char *names[3] = {"relu", "sigmoid", "tanh"};
	for (int f = 0; f < 3; f++) {
		float *x = host(n), *y = host(n), *dy = host(n), *dx = host(n);
		float *gx = upf(x, n), *gy = upf(y, n), *gdy = upf(dy, n);
		float *gdx = upf(dx, n);
		fw_cpu[f](x, y, n);
		fw_gpu[f](gx, gy, n, cx);
		float *hy = down(gy, n);
		same(names[f], y, hy, n, ULPS, 1e-7);
		/* the gradient from the same y on both sides */
		float *ty = upf(y, n);
		bw_cpu[f](y, dy, dx, n);
		bw_gpu[f](ty, gdy, gdx, n, cx);
		float *hdx = down(gdx, n);
		same(names[f], dx, hdx, n, 1e-6, 1e-7);
		free(x), free(y), free(dy), free(dx), free(hy), free(hdx);
		cudaFree(gx), cudaFree(gdy), cudaFree(ty);
	}
}

static void
softmax_and_gradient(void)
{
	const int64_t rows = 65, cols = 10;
	size_t n = (size_t)(rows * cols);
	float *x = host(n), *y = host(n), *dy = host(n), *dx = host(n);
	float *gx = upf(x, n), *gy = upf(y, n);
	softmax_forward_cpu(x, y, rows, cols);
	softmax_forward_cuda(gx, gy, rows, cols, cx);
	float *hy = down(gy, n);
	same("softmax", y, hy, n, ULPS, 1e-8);
	float *ty = upf(y, n), *gdy = upf(dy, n), *gdx = upf(dx, n);
	softmax_backward_cpu(y, dy, dx, rows, cols);
	softmax_backward_cuda(ty, gdy, gdx, rows, cols, cx);
	float *hdx = down(gdx, n);
	same("softmax_grad", dx, hdx, n, 1e-6, 1e-7);
	free(x), free(y), free(dy), free(dx), free(hy), free(hdx);
	cudaFree(gx), cudaFree(ty), cudaFree(gdy);
}

static void
losses_and_gradients(void)
{
	const int64_t rows = 257, cols = 5;
	size_t n = (size_t)(rows * cols);
	float *logits = host(n), *d = host(n), *labels = host((size_t)rows);
	for (int64_t r = 0; r < rows; r++) {
		labels[r] = (float)(r % cols);
	}
	float *gl = upf(logits, n), *gd = upf(d, n);
	float *glab = upf(labels, (size_t)rows);
	double lc = softmax_xent_cpu(logits, labels, d, 0.5f, rows, cols);
	double lg = softmax_xent_cuda(gl, glab, gd, 0.5f, rows, cols, cx);
	same_d("softmax_xent", lc, lg, 1e-12);
	float *hd = down(gd, n);
	same("softmax_xent dlogits", d, hd, n, 1e-6, 1e-8);
	/* a label that is no class: NaN on both */
	labels[3] = 1.5f;
	float *glab2 = upf(labels, (size_t)rows);
	lg = softmax_xent_cuda(gl, glab2, NULL, 1, rows, cols, cx);
	if (!isnan(lg)) {
		printf("# softmax_xent of a bad label: %g, not NaN\n", lg);
		cur_failed++;
	}
	/* sigmoid cross-entropy: labels 0 or 1, a column of logits */
	for (int64_t r = 0; r < rows; r++) {
		labels[r] = (float)(r % 2);
	}
	float *d1 = host((size_t)rows), *gd1 = upf(d1, (size_t)rows);
	float *glab3 = upf(labels, (size_t)rows);
	lc = sigmoid_xent_cpu(logits, labels, d1, 1.0f, rows);
	lg = sigmoid_xent_cuda(gl, glab3, gd1, 1.0f, rows, cx);
	same_d("sigmoid_xent", lc, lg, 1e-6);
	float *hd1 = down(gd1, (size_t)rows);
	same("sigmoid_xent dlogits", d1, hd1, (size_t)rows, 1e-5, 1e-8);
	/* mean squared error */
	float *t = host(n), *gt = upf(t, n), *d2 = host(n), *gd2 = upf(d2, n);
	lc = mse_cpu(logits, t, d2, 1.0f, rows, cols);
	lg = mse_cuda(gl, gt, gd2, 1.0f, rows, cols, cx);
	same_d("mse", lc, lg, 1e-12);
	float *hd2 = down(gd2, n);
	same("mse dpred", d2, hd2, n, 1e-6, 1e-8);
	free(logits), free(d), free(labels), free(hd), free(d1), free(hd1);
	free(t), free(d2), free(hd2);
	cudaFree(gl), cudaFree(glab), cudaFree(glab2), cudaFree(glab3);
	cudaFree(gt);
}

static void
dropout_same_mask(void)
{
	size_t n = 10007;
	float *x = host(n), *y = host(n), *mask = host(n);
	float *gx = upf(x, n), *gy = upf(y, n), *gm = upf(mask, n);
	dropout_forward_cpu(x, y, mask, n, 0.8f, 1234567);
	dropout_forward_cuda(gx, gy, gm, n, 0.8f, 1234567, cx);
	float *hy = down(gy, n), *hm = down(gm, n);
	same("dropout mask", mask, hm, n, 0, 0); /* bit for bit */
	same("dropout", y, hy, n, 0, 0);
	float *dy = host(n), *dx = host(n);
	float *tm = upf(mask, n), *gdy = upf(dy, n), *gdx = upf(dx, n);
	dropout_backward_cpu(mask, dy, dx, n);
	dropout_backward_cuda(tm, gdy, gdx, n, cx);
	float *hdx = down(gdx, n);
	same("dropout_grad", dx, hdx, n, 0, 0);
	free(x), free(y), free(mask), free(hy), free(hm), free(dy), free(dx);
	free(hdx);
	cudaFree(gx), cudaFree(tm), cudaFree(gdy);
}

static void
bn_case(int64_t rows, int64_t cols)
{
	size_t n = (size_t)(rows * cols), c = (size_t)cols;
	float *x = host(n), *y = host(n), *xhat = host(n), *is = host(c);
	float *gamma = host(c), *beta = host(c), *ma = host(c), *va = host(c);
	for (size_t i = 0; i < c; i++) {
		va[i] = fabsf(va[i]) + 0.1f;
	}
	float *gx = upf(x, n), *gy = upf(y, n), *gxh = upf(xhat, n);
	float *gis = upf(is, c), *gg = upf(gamma, c), *gb = upf(beta, c);
	float *gma = upf(ma, c), *gva = upf(va, c);
	batchnorm_train_cpu(x, y, xhat, is, gamma, beta, ma, va, rows, cols,
	                    1e-3f, 0.99f);
	batchnorm_train_cuda(gx, gy, gxh, gis, gg, gb, gma, gva, rows, cols,
	                     1e-3f, 0.99f, cx);
	float *hy = down(gy, n), *hxh = down(gxh, n), *his = down(gis, c);
	float *hma = down(gma, c), *hva = down(gva, c);
	same("bn y", y, hy, n, 1e-6, 1e-6);
	same("bn xhat", xhat, hxh, n, 1e-6, 1e-6);
	same("bn inv_std", is, his, c, 1e-6, 0);
	same("bn mean_avg", ma, hma, c, 1e-6, 1e-7);
	same("bn var_avg", va, hva, c, 1e-6, 1e-7);
	float *tx = upf(x, n), *ty = upf(y, n);
	float *tma = upf(ma, c), *tva = upf(va, c);
	batchnorm_infer_cpu(x, y, gamma, beta, ma, va, rows, cols, 1e-3f);
	batchnorm_infer_cuda(tx, ty, gg, gb, tma, tva, rows, cols, 1e-3f, cx);
	float *hi = down(ty, n);
	same("bn infer", y, hi, n, 1e-6, 1e-6);
	float *dy = host(n), *dx = host(n), *dgam = host(c), *dbet = host(c);
	float *gdy = upf(dy, n), *gdx = upf(dx, n), *gdg = upf(dgam, c);
	float *gdb = upf(dbet, c), *txh = upf(xhat, n), *tis = upf(is, c);
	batchnorm_backward_cpu(dy, xhat, is, gamma, dx, dgam, dbet, rows, cols);
	batchnorm_backward_cuda(gdy, txh, tis, gg, gdx, gdg, gdb, rows, cols,
	                        cx);
	float *hdx = down(gdx, n), *hdg = down(gdg, c), *hdb = down(gdb, c);
	same("bn dx", dx, hdx, n, 1e-6, 1e-6);
	same("bn dgamma", dgam, hdg, c, 1e-6, 1e-7);
	same("bn dbeta", dbet, hdb, c, 1e-6, 1e-7);
	free(x), free(y), free(xhat), free(is), free(gamma), free(beta);
	free(ma), free(va), free(hy), free(hxh), free(his), free(hma);
	free(hva), free(hi), free(dy), free(dx), free(dgam), free(dbet);
	free(hdx), free(hdg), free(hdb);
	cudaFree(gx), cudaFree(gg), cudaFree(gb), cudaFree(tx), cudaFree(tma);
	cudaFree(tva), cudaFree(gdy), cudaFree(txh), cudaFree(tis);
}

/* A dense layer's batch, and a convolution's rows (batch x height x
 * width: summed by chunks, a thread a chunk). */
static void
batchnorm_train_infer_gradient(void)
{
	bn_case(128, 33);
	bn_case(20000, 9);
}

static void
column_blocks(void)
{
	const int64_t rows = 50, cols = 7, xs = 12, ys = 20;
	float *x = host((size_t)(rows * xs)), *y = host((size_t)(rows * ys));
	float *gx = upf(x, (size_t)(rows * xs)),
	      *gy = upf(y, (size_t)(rows * ys));
	copy_cols_cpu(x + 3, xs, y + 5, ys, rows, cols);
	copy_cols_cuda(gx + 3, xs, gy + 5, ys, rows, cols, cx);
	float *h = down(gy, (size_t)(rows * ys));
	same("copy_cols", y, h, (size_t)(rows * ys), 0, 0);
	float *gy2 = upf(y, (size_t)(rows * ys));
	add_cols_cpu(x + 1, xs, y + 2, ys, rows, cols);
	add_cols_cuda(gx + 1, xs, gy2 + 2, ys, rows, cols, cx);
	float *h2 = down(gy2, (size_t)(rows * ys));
	same("add_cols", y, h2, (size_t)(rows * ys), 0, 0);
	free(x), free(y), free(h), free(h2);
	cudaFree(gx);
}

static void
embedding_gather_scatter(void)
{
	const int64_t vocab = 40, dim = 6, rows = 90, width = 4, stride = 5;
	int64_t ids[90 * 5];
	for (int64_t i = 0; i < rows * stride; i++) {
		/* some ids missing (-1) or out of the vocabulary */
		ids[i] =
		    (int64_t)(rng = rng * 6364136223846793005ull + 1) % 47 - 3;
	}
	float *table = host((size_t)(vocab * dim));
	float *gt = upf(table, (size_t)(vocab * dim));
	int64_t *gids = up(ids, sizeof ids);
	for (int comb = 0; comb < 3; comb++) {
		int64_t out = comb == 2 ? width * dim : dim;
		size_t ny = (size_t)(rows * out);
		float *y = host(ny), *gy = upf(y, ny);
		gather_cpu(table, vocab, dim, ids, stride, rows, width, comb,
		           y);
		gather_cuda(gt, vocab, dim, gids, stride, rows, width, comb, gy,
		            cx);
		float *h = down(gy, ny);
		same("gather", y, h, ny, 1e-6, 1e-7);
		float *dy = host(ny), *gdy = upf(dy, ny);
		float *dt = host((size_t)(vocab * dim));
		float *gdt = upf(dt, (size_t)(vocab * dim));
		scatter_cpu(dy, vocab, dim, ids, stride, rows, width, comb, dt);
		scatter_cuda(gdy, vocab, dim, gids, stride, rows, width, comb,
		             gdt, cx);
		float *hdt = down(gdt, (size_t)(vocab * dim));
		/* atomics: the same sums in another order */
		same("scatter", dt, hdt, (size_t)(vocab * dim), 1e-5, 1e-5);
		free(y), free(h), free(dy), free(dt), free(hdt);
		cudaFree(gdy);
	}
	/* weighted (sum, mean): weights of either sign, some rows' summing
	 * to nothing */
	float *w = host((size_t)(rows * stride));
	for (int64_t i = 0; i < rows * stride; i++) {
		w[i] = i % 7 == 0 ? 0.0f : w[i] - 0.5f;
	}
	float *gw = upf(w, (size_t)(rows * stride));
	for (int comb = 0; comb < 2; comb++) {
		size_t ny = (size_t)(rows * dim);
		float *y = host(ny), *gy = upf(y, ny);
		gather_w_cpu(table, vocab, dim, ids, stride, w, stride, rows,
		             width, comb, y);
		gather_w_cuda(gt, vocab, dim, gids, stride, gw, stride, rows,
		              width, comb, gy, cx);
		float *h = down(gy, ny);
		same("gather_w", y, h, ny, 1e-5, 1e-6);
		float *dy = host(ny), *gdy = upf(dy, ny);
		float *dt = host((size_t)(vocab * dim));
		float *gdt = upf(dt, (size_t)(vocab * dim));
		scatter_w_cpu(dy, vocab, dim, ids, stride, w, stride, rows,
		              width, comb, dt);
		scatter_w_cuda(gdy, vocab, dim, gids, stride, gw, stride, rows,
		               width, comb, gdt, cx);
		float *hdt = down(gdt, (size_t)(vocab * dim));
		same("scatter_w", dt, hdt, (size_t)(vocab * dim), 1e-4, 1e-5);
		free(y), free(h), free(dy), free(dt), free(hdt);
		cudaFree(gdy);
	}
	free(w);
	cudaFree(gw);
	free(table);
	cudaFree(gt), cudaFree(gids);
}

/* Every optimizer's fused update, ten steps on the same block: w and
 * every slot as on the CPU (positive accumulators where the optimizer
 * takes a square root or a power of them). */
static void
optimizer_updates(void)
{
	const size_t n = 4099;
	const struct tf_update kinds[] = {
	    {TF_UPDATE_SGD, 0, 0.1f, 0, 0, 0, 0},
	    {TF_UPDATE_MOMENTUM, 0, 0.05f, 0.9f, 0, 0, 0},
	    {TF_UPDATE_MOMENTUM, 1, 0.05f, 0.9f, 0, 0, 0},
	    {TF_UPDATE_ADAGRAD, 0, 0.1f, 0, 0, 0, 0},
	    {TF_UPDATE_RMSPROP, 0, 0.01f, 0.9f, 0.5f, 1e-10f, 0},
	    {TF_UPDATE_RMSPROP, 1, 0.01f, 0.9f, 0.0f, 1e-10f, 0},
	    {TF_UPDATE_ADADELTA, 0, 1.0f, 0.95f, 1e-8f, 0, 0},
	    {TF_UPDATE_ADAM, 0, 0.001f, 0.9f, 0.999f, 1e-8f, 0},
	    {TF_UPDATE_ADAM, 1, 0.001f, 0.9f, 0.999f, 1e-8f, 0},
	    {TF_UPDATE_FTRL, 0, 0.1f, 0.01f, 0.001f, 0, -0.5},
	};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		const struct tf_update *u = &kinds[k];
		float *w = host(n), *s[3], *ds[3];
		float *dw = upf(w, n);
		for (int j = 0; j < 3; j++) {
			s[j] = host(n);
			for (size_t i = 0; i < n; i++) {
				/* accumulators start positive, as their
				 * optimizers' do */
				s[j][i] =
				    j == 0 || u->kind == TF_UPDATE_ADADELTA
				        ? fabsf(s[j][i]) + 0.1f
				        : s[j][i];
				/* centred rmsprop's mean gradient, whose
				 * square its mean square exceeds (as in
				 * training): else ms - mg^2 cancels to
				 * rounding, and the GPU's fused
				 * multiply-adds round differently */
				if (j == 2 && u->kind == TF_UPDATE_RMSPROP) {
					s[j][i] *= 0.1f;
				}
			}
			ds[j] = upf(s[j], n);
		}
		for (int step = 0; step < 10; step++) {
			float *g = host(n);
			for (size_t i = step % 3; i < n; i += 3) {
				g[i] = 0.0f; /* rows a batch did not touch */
			}
			float *dg = upf(g, n);
			update_cpu(u, w, g, s, n);
			update_cuda(u->kind, u->flag, u->lr, u->f0, u->f1,
			            u->f2, u->d0, dw, dg, ds, n, cx);
			free(down(dg, 0));
			free(g);
		}
		char what[48];
		snprintf(what, sizeof what, "update kind %d flag %d w", u->kind,
		         u->flag);
		float *hw = down(dw, n);
		/* fused multiply-adds on the GPU: a few ulps a step */
		same(what, w, hw, n, 1e-4, 1e-5);
		for (int j = 0; j < 3; j++) {
			float *hs = down(ds[j], n);
			snprintf(what, sizeof what, "update kind %d slot %d",
			         u->kind, j);
			same(what, s[j], hs, n, 1e-4, 1e-5);
			free(hs), free(s[j]);
		}
		free(w), free(hw);
	}
}

static void
gemm_tf32_when_asked(void)
{
	char err[256];
	struct tfk_cuda *t = tfk_cuda_open(0, TFK_MATH_TF32, err, sizeof err);
	if (t == NULL) {
		printf("# %s\n", err);
		cur_failed++;
		return;
	}
	const int64_t m = 256, n = 256, k = 256;
	float *a = host((size_t)(m * k)), *b = host((size_t)(k * n));
	float *c = host((size_t)(m * n));
	float *da = upf(a, (size_t)(m * k)), *db = upf(b, (size_t)(k * n));
	float *dc = upf(c, (size_t)(m * n));
	gemm_cpu(0, 0, m, n, k, 1.0f, a, b, 0.0f, c);
	gemm_cuda(0, 0, m, n, k, 1.0f, da, db, 0.0f, dc, t);
	struct tfk_cuda *keep = cx;
	cx = t;
	float *g = down(dc, (size_t)(m * n));
	cx = keep;
	/* TF32: 10 bits of mantissa in the products */
	same("gemm tf32", c, g, (size_t)(m * n), 1e-2, 5e-2);
	free(a), free(b), free(c), free(g);
	cudaFree(da), cudaFree(db);
	tfk_cuda_close(t);
}

/* im2col over NHWC images, with stride and padding: the same values
 * (a copy: exact). */
static void
im2col_patches(void)
{
	struct tf_conv g = {7, 6, 3, 3, 3, 2, 1, 1, 1, 4, 6};
	const int64_t rows = 5;
	size_t n = (size_t)(rows * g.h * g.w * g.c);
	size_t m = (size_t)(rows * g.oh * g.ow * g.kh * g.kw * g.c);
	float *x = host(n), *col = host(m);
	float *dx = upf(x, n), *dcol = upf(col, m);
	im2col_cpu(x, rows, &g, col);
	im2col_cuda(dx, rows, &g, dcol, cx);
	float *gcol = down(dcol, m);
	same("im2col", col, gcol, m, 0, 0);
	free(x), free(col), free(gcol);
}

/* col2im, added into dx, over strided, padded and overlapping patches
 * (the sums in another order: close, not exact). */
static void
col2im_sums(void)
{
	struct tf_conv g = {7, 6, 3, 3, 3, 2, 1, 1, 1, 4, 6};
	const int64_t rows = 5;
	size_t n = (size_t)(rows * g.h * g.w * g.c);
	size_t m = (size_t)(rows * g.oh * g.ow * g.kh * g.kw * g.c);
	float *col = host(m), *dx = host(n);
	float *dcol = upf(col, m), *ddx = upf(dx, n);
	col2im_cpu(col, rows, &g, dx);
	col2im_cuda(dcol, rows, &g, ddx, cx);
	float *gdx = down(ddx, n);
	same("col2im", dx, gdx, n, 1e-5, 1e-6);
	free(col), free(dx), free(gdx);
	cudaFree(dcol);
}

/* Max and mean pooling and their gradients, added into dx: SAME-style
 * padding and overlapping windows (3x3, stride 2) and 2x2 tiles. */
static void
pooling_and_gradients(void)
{
	struct tf_conv gs[] = {{7, 6, 3, 3, 3, 2, 2, 1, 1, 4, 3},
	                       {8, 6, 2, 2, 2, 2, 2, 0, 0, 4, 3}};
	for (int k = 0; k < 2; k++) {
		const struct tf_conv g = gs[k];
		for (int max = 0; max < 2; max++) {
			const int64_t rows = 3;
			size_t n = (size_t)(rows * g.h * g.w * g.c);
			size_t m = (size_t)(rows * g.oh * g.ow * g.c);
			float *x = host(n), *y = host(m), *dy = host(m);
			float *dx = host(n);
			float *gx = upf(x, n), *gy = upf(y, m),
			      *gdy = upf(dy, m);
			float *gdx = upf(dx, n);
			pool_cpu(x, rows, &g, max, y);
			pool_cuda(gx, rows, &g, max, gy, cx);
			pool_grad_cpu(x, dy, rows, &g, max, dx);
			pool_grad_cuda(gx, gdy, rows, &g, max, gdx, cx);
			float *hy = down(gy, m), *hdx = down(gdx, n);
			same(max ? "max pool" : "mean pool", y, hy, m,
			     max ? 0 : 1e-6, max ? 0 : 1e-7);
			same(max ? "max pool grad" : "mean pool grad", dx, hdx,
			     n, 1e-5, 1e-6);
			free(x), free(y), free(dy), free(dx), free(hy),
			    free(hdx);
			cudaFree(gx), cudaFree(gdy);
		}
	}
}

/* The LSTM and GRU cells and their gradients on 5 rows of 7 units, the
 * carried gradients (dc in and out) included. */
static void
recurrent_cells(void)
{
	const int64_t rows = 5, units = 7;
	size_t n = (size_t)(rows * units), n3 = 3 * n, n4 = 4 * n;
	float *g = host(n4), *cp = host(n), *dh = host(n), *dc = host(n);
	float *act = host(n4), *c = host(n), *h = host(n), *dg = host(n4);
	float *gg = upf(g, n4), *gcp = upf(cp, n), *gdh = upf(dh, n),
	      *gdc = upf(dc, n), *gact = upf(act, n4), *gc = upf(c, n),
	      *gh = upf(h, n), *gdg = upf(dg, n4);
	lstm_cell_cpu(g, cp, act, c, h, rows, units);
	lstm_cell_cuda(gg, gcp, gact, gc, gh, rows, units, cx);
	lstm_cell_grad_cpu(act, cp, c, dh, dc, dg, rows, units);
	lstm_cell_grad_cuda(gact, gcp, gc, gdh, gdc, gdg, rows, units, cx);
	float *hact = down(gact, n4), *hc = down(gc, n), *hh = down(gh, n),
	      *hdc = down(gdc, n), *hdg = down(gdg, n4);
	same("lstm act", act, hact, n4, 1e-5, 1e-6);
	same("lstm c", c, hc, n, 1e-5, 1e-6);
	same("lstm h", h, hh, n, 1e-5, 1e-6);
	same("lstm dc", dc, hdc, n, 1e-5, 1e-6);
	same("lstm dg", dg, hdg, n4, 1e-5, 1e-6);
	free(hact), free(hc), free(hh), free(hdc), free(hdg);
	/* GRU: gx and gh of three blocks */
	float *gx = host(n3), *ghh = host(n3), *a3 = host(n3);
	float *dgx = host(n3), *dgh = host(n3), *dhp = host(n);
	float *ggx = upf(gx, n3), *gghh = upf(ghh, n3), *ga3 = upf(a3, n3),
	      *gdgx = upf(dgx, n3), *gdgh = upf(dgh, n3), *gdhp = upf(dhp, n),
	      *gh2 = upf(h, n);
	gru_cell_cpu(gx, ghh, cp, a3, h, rows, units);
	gru_cell_cuda(ggx, gghh, gcp, ga3, gh2, rows, units, cx);
	gru_cell_grad_cpu(a3, ghh, cp, dh, dgx, dgh, dhp, rows, units);
	gru_cell_grad_cuda(ga3, gghh, gcp, gdh, gdgx, gdgh, gdhp, rows, units,
	                   cx);
	float *h3 = down(ga3, n3), *h4 = down(gh2, n), *h5 = down(gdgx, n3),
	      *h6 = down(gdgh, n3), *h7 = down(gdhp, n);
	same("gru act", a3, h3, n3, 1e-5, 1e-6);
	same("gru h", h, h4, n, 1e-5, 1e-6);
	same("gru dgx", dgx, h5, n3, 1e-5, 1e-6);
	same("gru dgh", dgh, h6, n3, 1e-5, 1e-6);
	same("gru dh_prev", dhp, h7, n, 1e-5, 1e-6);
	free(h3), free(h4), free(h5), free(h6), free(h7);
	free(g), free(cp), free(dh), free(dc), free(act), free(c), free(h),
	    free(dg), free(gx), free(ghh), free(a3), free(dgx), free(dgh),
	    free(dhp);
	/* down() freed the rest */
	cudaFree(gg), cudaFree(gcp), cudaFree(gdh), cudaFree(ggx),
	    cudaFree(gghh);
}

/* The GRU with the reset before (reset_after=0): its two halves
 * forward and back on 5 rows of 7 units, dh_prev added to. */
static void
gru_reset_before(void)
{
	const int64_t rows = 5, units = 7;
	size_t n = (size_t)(rows * units), n2 = 2 * n, n3 = 3 * n;
	float *gx = host(n3), *gzr = host(n2), *gn = host(n), *hp = host(n);
	float *act = host(n3), *rh = host(n), *h = host(n), *dh = host(n);
	float *dgx = host(n3), *dzr = host(n2), *dn = host(n), *dhp = host(n),
	      *drh = host(n);
	float *ggx = upf(gx, n3), *ggzr = upf(gzr, n2), *ggn = upf(gn, n),
	      *ghp = upf(hp, n), *gact = upf(act, n3), *grh = upf(rh, n),
	      *gh = upf(h, n), *gdh = upf(dh, n), *gdgx = upf(dgx, n3),
	      *gdzr = upf(dzr, n2), *gdn = upf(dn, n), *gdhp = upf(dhp, n),
	      *gdrh = upf(drh, n);
	gru_gates_cpu(gx, gzr, hp, act, rh, rows, units);
	gru_gates_cuda(ggx, ggzr, ghp, gact, grh, rows, units, cx);
	gru_new_cpu(gx, gn, hp, act, h, rows, units);
	gru_new_cuda(ggx, ggn, ghp, gact, gh, rows, units, cx);
	gru_new_grad_cpu(act, hp, dh, dgx, dzr, dn, dhp, rows, units);
	gru_new_grad_cuda(gact, ghp, gdh, gdgx, gdzr, gdn, gdhp, rows, units,
	                  cx);
	gru_gates_grad_cpu(act, hp, drh, dgx, dzr, dhp, rows, units);
	gru_gates_grad_cuda(gact, ghp, gdrh, gdgx, gdzr, gdhp, rows, units, cx);
	float *h1 = down(gact, n3), *h2 = down(grh, n), *h3 = down(gh, n),
	      *h4 = down(gdgx, n3), *h5 = down(gdzr, n2), *h6 = down(gdn, n),
	      *h7 = down(gdhp, n);
	same("gru_gates/gru_new act", act, h1, n3, 1e-5, 1e-6);
	same("gru_gates rh", rh, h2, n, 1e-5, 1e-6);
	same("gru_new h", h, h3, n, 1e-5, 1e-6);
	same("gru (reset before) dgx", dgx, h4, n3, 1e-5, 1e-6);
	same("gru (reset before) dzr", dzr, h5, n2, 1e-5, 1e-6);
	same("gru_new_grad dn", dn, h6, n, 1e-5, 1e-6);
	same("gru (reset before) dh_prev", dhp, h7, n, 1e-5, 1e-6);
	free(h1), free(h2), free(h3), free(h4), free(h5), free(h6), free(h7);
	free(gx), free(gzr), free(gn), free(hp), free(act), free(rh), free(h),
	    free(dh), free(dgx), free(dzr), free(dn), free(dhp), free(drh);
	/* down() freed the rest */
	cudaFree(ggx), cudaFree(ggzr), cudaFree(ggn), cudaFree(ghp),
	    cudaFree(gdh), cudaFree(gdrh);
}

/* Varying lengths: rows past their length kept or zeroed, and each
 * row's steps reversed within its length (lengths 0, short, whole and
 * past the steps, read with a stride as from an ids tensor). */
static void
sequence_masks(void)
{
	const int64_t rows = 5, steps = 6, width = 3, ls = 2;
	int64_t len[10] = {0, 9, 2, 9, 6, 9, 11, 9, 4, 9};
	size_t n = (size_t)(rows * steps * width);
	float *x = host(n), *y = host(n), *src = host(n);
	int64_t *glen = up(len, sizeof len);
	float *gx = upf(x, n), *gy = upf(y, n), *gs = upf(src, n);
	reverse_steps_cpu(len, ls, x, y, rows, steps, width);
	reverse_steps_cuda(glen, ls, gx, gy, rows, steps, width, cx);
	float *hy = down(gy, n);
	same("reverse_steps", y, hy, n, 0, 0);
	gy = upf(y, n);
	for (int64_t step = 0; step < steps; step++) {
		for (int zero = 0; zero < 2; zero++) {
			/* one step's columns of every row, strided */
			mask_steps_cpu(len, ls, step, src + step * width,
			               steps * width, y + step * width,
			               steps * width, rows, width, zero);
			mask_steps_cuda(glen, ls, step, gs + step * width,
			                steps * width, gy + step * width,
			                steps * width, rows, width, zero, cx);
		}
	}
	hy = down(gy, n);
	same("mask_steps", y, hy, n, 0, 0);
	free(hy), free(x), free(y), free(src);
	cudaFree(gx), cudaFree(gs), cudaFree(glen);
}

/* Which test compares each slot of kernels/slots.h with its CPU twin: a
 * slot added to the list without a TESTED_ line here does not compile. */
#define TESTED_gemm           gemm_all_transposes
#define TESTED_add_bias       bias_add_and_gradient
#define TESTED_bias_grad      bias_add_and_gradient
#define TESTED_copy           copy_zero_add
#define TESTED_zero           copy_zero_add
#define TESTED_add            copy_zero_add
#define TESTED_fill           copy_zero_add
#define TESTED_relu           activations_and_gradients
#define TESTED_relu_grad      activations_and_gradients
#define TESTED_sigmoid        activations_and_gradients
#define TESTED_sigmoid_grad   activations_and_gradients
#define TESTED_tanh           activations_and_gradients
#define TESTED_tanh_grad      activations_and_gradients
#define TESTED_softmax        softmax_and_gradient
#define TESTED_softmax_grad   softmax_and_gradient
#define TESTED_dropout        dropout_same_mask
#define TESTED_dropout_grad   dropout_same_mask
#define TESTED_bn_train       batchnorm_train_infer_gradient
#define TESTED_bn_infer       batchnorm_train_infer_gradient
#define TESTED_bn_grad        batchnorm_train_infer_gradient
#define TESTED_softmax_xent   losses_and_gradients
#define TESTED_sigmoid_xent   losses_and_gradients
#define TESTED_mse            losses_and_gradients
#define TESTED_copy_cols      column_blocks
#define TESTED_add_cols       column_blocks
#define TESTED_gather         embedding_gather_scatter
#define TESTED_scatter        embedding_gather_scatter
#define TESTED_gather_w       embedding_gather_scatter
#define TESTED_scatter_w      embedding_gather_scatter
#define TESTED_im2col         im2col_patches
#define TESTED_col2im         col2im_sums
#define TESTED_pool           pooling_and_gradients
#define TESTED_pool_grad      pooling_and_gradients
#define TESTED_lstm_cell      recurrent_cells
#define TESTED_lstm_cell_grad recurrent_cells
#define TESTED_gru_cell       recurrent_cells
#define TESTED_gru_cell_grad  recurrent_cells
#define TESTED_gru_gates      gru_reset_before
#define TESTED_gru_new        gru_reset_before
#define TESTED_gru_new_grad   gru_reset_before
#define TESTED_gru_gates_grad gru_reset_before
#define TESTED_mask_steps     sequence_masks
#define TESTED_reverse_steps  sequence_masks

#define STR_(x) #x
#define STR(x)  STR_(x)
static const struct {
	const char *slot, *name;
	void (*test)(void);
} tested[] = {
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	{#slot, STR(TESTED_##slot), TESTED_##slot},
#include "kernels/slots.h"
#undef TF_KERNEL
    {"update", "optimizer_updates", optimizer_updates},
    {"gemm (tf32)", "gemm_tf32_when_asked", gemm_tf32_when_asked},
};

int
main(void)
{
	if (tfk_cuda_devices() == 0) {
		printf("1..0 # SKIP no CUDA GPU here (the kernels are built; "
		       "run make check-gpu where one is)\n");
		return 0;
	}
	char err[256];
	cx = tfk_cuda_open(0, TFK_MATH_FP32, err, sizeof err);
	if (cx == NULL) {
		printf("1..0 # SKIP %s\n", err);
		return 0;
	}
	printf("# %s\n", tfk_cuda_name(cx));
	/* Each test once, in the table's order (a test covers several
	 * slots): none can be left out of the run. */
	size_t n = sizeof tested / sizeof tested[0];
	printf("# %zu kernel slots and the optimizer updates, each with its "
	       "test\n",
	       n - 2);
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && tested[j].test != tested[i].test) {
			j++;
		}
		if (j == i) {
			RUN_NAMED(tested[i].test, tested[i].name);
		}
	}
	printf("1..%d\n", ntests);
	tfk_cuda_close(cx);
	return nfailed ? 1 : 0;
}
