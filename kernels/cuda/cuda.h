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

#include "kernels/kernels.h" /* the slots' list and its macros */

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

/* Each slot's launcher (kernels/slots.h): its CPU twin's arguments,
 * then the context. */
#define TF_KERNEL(slot, twin, api, ret, params, args, ptrs, staged)            \
	ret twin##_cuda TF_PARAMS_CX params;
#include "kernels/slots.h"
#undef TF_KERNEL

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
