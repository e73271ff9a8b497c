/*
 * update.c - the optimizers' updates (tf_update() in tf/device.h), one
 * loop over a parameter block each, in the formulas and the float and
 * double arithmetic the optimizer plugins had, so moving them here left
 * every trained weight as it was.
 */
#include <math.h>

#include "kernels/kernels.h"
#include "tf/device.h"

static TF_VECTOR_CLONES void
sgd(float *restrict w, const float *restrict g, size_t n, float lr)
{
	for (size_t i = 0; i < n; i++) {
		w[i] -= lr * g[i];
	}
}

static TF_VECTOR_CLONES void
momentum(const struct tf_update *u, float *restrict w, const float *restrict g,
         float *restrict a, size_t n)
{
	float m = u->f0, lr = u->lr;
	for (size_t i = 0; i < n; i++) {
		a[i] = m * a[i] + g[i];
		w[i] -= u->flag ? lr * (g[i] + m * a[i]) : lr * a[i];
	}
}

static TF_VECTOR_CLONES void
adagrad(float *restrict w, const float *restrict g, float *restrict acc,
        size_t n, float lr)
{
	for (size_t i = 0; i < n; i++) {
		acc[i] += g[i] * g[i];
		w[i] -= lr * g[i] / sqrtf(acc[i]);
	}
}

static TF_VECTOR_CLONES void
rmsprop(const struct tf_update *u, float *restrict w, const float *restrict g,
        float *const *slots, size_t n)
{
	float *restrict ms = slots[0], *restrict mom = slots[1],
	                *restrict mg = slots[2];
	float d = u->f0, lr = u->lr;
	for (size_t i = 0; i < n; i++) {
		ms[i] = d * ms[i] + (1 - d) * g[i] * g[i];
		float den = ms[i];
		if (u->flag) {
			mg[i] = d * mg[i] + (1 - d) * g[i];
			den -= mg[i] * mg[i];
		}
		mom[i] = u->f1 * mom[i] + lr * g[i] / sqrtf(den + u->f2);
		w[i] -= mom[i];
	}
}

static TF_VECTOR_CLONES void
adadelta(const struct tf_update *u, float *restrict w, const float *restrict g,
         float *const *slots, size_t n)
{
	float *restrict acc = slots[0], *restrict accu = slots[1];
	float rho = u->f0, eps = u->f1;
	for (size_t i = 0; i < n; i++) {
		acc[i] = rho * acc[i] + (1 - rho) * g[i] * g[i];
		float v = sqrtf(accu[i] + eps) / sqrtf(acc[i] + eps) * g[i];
		accu[i] = rho * accu[i] + (1 - rho) * v * v;
		w[i] -= u->lr * v;
	}
}

static TF_VECTOR_CLONES void
adam(float *restrict w, const float *restrict g, float *restrict m,
     float *restrict v, size_t n, float lr_t, float b1, float b2, float eps)
{
	for (size_t i = 0; i < n; i++) {
		m[i] = b1 * m[i] + (1 - b1) * g[i];
		v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
		w[i] -= lr_t * m[i] / (sqrtf(v[i]) + eps);
	}
}

/* Lazy: a value whose gradient is zero (a table row no id of the batch
 * named) keeps its value and moments, as TensorFlow's LazyAdam leaves
 * the rows a batch did not touch. */
static void
lazy_adam(float *restrict w, const float *restrict g, float *restrict m,
          float *restrict v, size_t n, float lr_t, float b1, float b2,
          float eps)
{
	for (size_t i = 0; i < n; i++) {
		if (g[i] != 0.0f) {
			m[i] = b1 * m[i] + (1 - b1) * g[i];
			v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
			w[i] -= lr_t * m[i] / (sqrtf(v[i]) + eps);
		}
	}
}

/* FTRL-proximal with the usual power, -0.5: the powers are square roots,
 * a loop the vector units take (the same operations, element by
 * element, as the general one below). */
static TF_VECTOR_CLONES void
ftrl_sqrt(float *restrict w, const float *restrict g, float *restrict acc,
          float *restrict lin, size_t n, float lr, double l1, double l2)
{
	for (size_t i = 0; i < n; i++) {
		double a0 = acc[i], a1 = a0 + (double)g[i] * g[i];
		double p0 = sqrt(a0), p1 = sqrt(a1);
		lin[i] += g[i] - (float)((p1 - p0) / lr * w[i]);
		double quad = p1 / lr + 2.0 * l2;
		double l = lin[i];
		w[i] = fabs(l) > l1
		           ? (float)(((l > 0 ? 1 : -1) * l1 - l) / quad)
		           : 0.0f;
		acc[i] = (float)a1;
	}
}

static void
ftrl(const struct tf_update *u, float *restrict w, const float *restrict g,
     float *const *slots, size_t n)
{
	float *restrict acc = slots[0], *restrict lin = slots[1];
	double power = u->d0, l1 = u->f0, l2 = u->f1;
	float lr = u->lr;
	if (power == -0.5) {
		ftrl_sqrt(w, g, acc, lin, n, lr, l1, l2);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		double a0 = acc[i], a1 = a0 + (double)g[i] * g[i];
		double p0 = pow(a0, -power), p1 = pow(a1, -power);
		lin[i] += g[i] - (float)((p1 - p0) / lr * w[i]);
		double quad = p1 / lr + 2.0 * l2;
		double l = lin[i];
		w[i] = fabs(l) > l1
		           ? (float)(((l > 0 ? 1 : -1) * l1 - l) / quad)
		           : 0.0f;
		acc[i] = (float)a1;
	}
}

void
update_cpu(const struct tf_update *u, float *w, const float *g,
           float *const *slots, size_t n)
{
	switch (u->kind) {
	case TF_UPDATE_SGD:
		sgd(w, g, n, u->lr);
		break;
	case TF_UPDATE_MOMENTUM:
		momentum(u, w, g, slots[0], n);
		break;
	case TF_UPDATE_ADAGRAD:
		adagrad(w, g, slots[0], n, u->lr);
		break;
	case TF_UPDATE_RMSPROP:
		rmsprop(u, w, g, slots, n);
		break;
	case TF_UPDATE_ADADELTA:
		adadelta(u, w, g, slots, n);
		break;
	case TF_UPDATE_ADAM:
		(u->flag ? lazy_adam : adam)(w, g, slots[0], slots[1], n, u->lr,
		                             u->f0, u->f1, u->f2);
		break;
	case TF_UPDATE_FTRL:
		ftrl(u, w, g, slots, n);
		break;
	default:
		break;
	}
}
