/*
 * image.h - encoded images (JPEG through libjpeg-turbo, PNG through
 * libpng) decoded into 8-bit pixels, and pixels into the floats a model
 * reads: resized, grey or RGB, scaled, optionally flipped and shifted.
 *
 * A struct tf_image is a decoder: it keeps its pixel buffer between
 * images, so decoding a stream of images allocates once per largest
 * image.  An image larger than the decoder's pixel limit (width x
 * height) is refused before any of its pixels are allocated.
 */
#ifndef TF_IMAGE_H
#define TF_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_image;

/* The formats an image may be in. */
enum { TF_IMAGE_UNKNOWN = 0, TF_IMAGE_JPEG = 1, TF_IMAGE_PNG = 2 };

/* How pixel values 0..255 become a model's inputs: v / 255 (unit,
 * [0, 1]), v / 127.5 - 1 (symmetric, [-1, 1], Inception's), or each
 * channel of each image to mean 0 and deviation 1 (standardize,
 * TensorFlow's per_image_standardization). */
enum {
	TF_IMAGE_SCALE_UNIT = 0,
	TF_IMAGE_SCALE_SYMMETRIC = 1,
	TF_IMAGE_SCALE_STANDARDIZE = 2
};

/* Pixels decoded from one image, at the most (2^26, 8192 x 8192, unless set).
 */
#define TF_IMAGE_MAX_PIXELS ((uint64_t)1 << 26)

TF_API struct tf_image *tf_image_new(void);
TF_API void tf_image_free(struct tf_image *im);
TF_API void tf_image_set_max_pixels(struct tf_image *im, uint64_t n);

/* The format of n bytes, from their signature. */
TF_API int tf_image_sniff(const void *data, size_t n);
/* "JPEG", "PNG" or "unknown". */
TF_API const char *tf_image_format_name(int format);
/* A scale by its name ("unit", "symmetric", "standardize"), or -1. */
TF_API int tf_image_scale_parse(const char *name);
TF_API const char *tf_image_scale_name(int scale);

/*
 * Read an image's format, size and channels (1 grey, 3 colour: an alpha
 * channel is not counted, it is dropped when decoding) from its header,
 * without decoding its pixels.  TF_EFORMAT, with a message, when the
 * bytes are not a JPEG or PNG image this library decodes.
 */
TF_API int tf_image_probe(struct tf_image *im, const void *data, size_t n,
                          int *format, int *height, int *width, int *channels);

/*
 * Decode an image into the decoder's pixels: height x width x channels
 * bytes, rows top to bottom, channels interleaved.  A damaged image (a
 * bad header, truncated or corrupt data, a CMYK JPEG) is TF_EFORMAT; one
 * over the pixel limit TF_ETOOBIG.
 */
TF_API int tf_image_decode(struct tf_image *im, const void *data, size_t n);
TF_API void tf_image_size(const struct tf_image *im, int *height, int *width,
                          int *channels);
TF_API const uint8_t *tf_image_pixels(const struct tf_image *im);

/* Where a decoded image's pixels go when turned into floats. */
struct tf_image_view {
	int height, width, channels; /* the model's input (channels 1 or 3) */
	int scale;                   /* TF_IMAGE_SCALE_* */
	int flip;                    /* mirrored left to right */
	int dy, dx; /* shifted by this many pixels (zeros come in) */
};

/*
 * The decoded image as v->height x v->width x v->channels floats into
 * out: resized bilinearly (pixel centres aligned, as TensorFlow 2's
 * resize), colour made grey (ITU-R 601 weights, as rgb_to_grayscale) or
 * grey repeated, mirrored and shifted, scaled.
 */
TF_API void tf_image_floats(const struct tf_image *im,
                            const struct tf_image_view *v, float *out);

#ifdef __cplusplus
}
#endif
#endif
