/*
 * image.c - JPEG and PNG images into pixels, pixels into a model's
 * floats (tf/image.h).
 *
 * JPEG goes through libjpeg's API (libjpeg-turbo on Debian), its errors
 * caught with setjmp in the one function that calls it; PNG through
 * libpng's simplified API, which reports errors in its control struct.
 * Both read from memory: an image is always one feature's bytes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "internal.h"
#include "tf/image.h"

struct tf_image {
	struct tfi_handle err;
	uint64_t max_pixels;
	uint8_t *px;
	size_t cap;
	int height, width, channels;
};

struct tf_image *
tf_image_new(void)
{
	struct tf_image *im = calloc(1, sizeof *im);
	if (im != NULL) {
		im->max_pixels = TF_IMAGE_MAX_PIXELS;
	}
	return im;
}

void
tf_image_free(struct tf_image *im)
{
	if (im != NULL) {
		free(im->px);
		free(im);
	}
}

void
tf_image_set_max_pixels(struct tf_image *im, uint64_t n)
{
	im->max_pixels = n;
}

int
tf_image_sniff(const void *data, size_t n)
{
	const uint8_t *p = data;
	if (n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF) {
		return TF_IMAGE_JPEG;
	}
	if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) {
		return TF_IMAGE_PNG;
	}
	return TF_IMAGE_UNKNOWN;
}

const char *
tf_image_format_name(int format)
{
	return format == TF_IMAGE_JPEG  ? "JPEG"
	       : format == TF_IMAGE_PNG ? "PNG"
	                                : "unknown";
}

static const char *const scale_names[] = {"unit", "symmetric", "standardize"};

int
tf_image_scale_parse(const char *name)
{
	for (int i = 0; i < 3; i++) {
		if (strcmp(name, scale_names[i]) == 0) {
			return i;
		}
	}
	return -1;
}

const char *
tf_image_scale_name(int scale)
{
	return scale >= 0 && scale < 3 ? scale_names[scale] : "unit";
}

/* ---- JPEG ---------------------------------------------------------------- */

/* libjpeg's error manager, with where to jump on an error and the
 * message of the first error or damaging warning. */
struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX];
	int damaged; /* a warning that data is missing (truncated) */
};

static void
jerr_exit(j_common_ptr c)
{
	struct jerr *e = (struct jerr *)c->err;
	c->err->format_message(c, e->msg);
	longjmp(e->jump, 1);
}

/* Warnings (level -1): data ending early leaves grey rows behind, which
 * is damage; libjpeg's other warnings (extra bytes between markers, an
 * unusual but readable stream) are not. */
static void
jerr_emit(j_common_ptr c, int level)
{
	struct jerr *e = (struct jerr *)c->err;
	if (level == -1 && !e->damaged &&
	    (c->err->msg_code == JWRN_JPEG_EOF ||
	     c->err->msg_code == JWRN_HIT_MARKER ||
	     c->err->msg_code == JWRN_MUST_RESYNC)) {
		e->damaged = 1;
		c->err->format_message(c, e->msg);
	}
}

static int
grow(struct tf_image *im, size_t n)
{
	if (n <= im->cap) {
		return 0;
	}
	uint8_t *p = realloc(im->px, n);
	if (p == NULL) {
		return -1;
	}
	im->px = p;
	im->cap = n;
	return 0;
}

/* Header only (pixels NULL) or the whole image into im's pixels. */
static int
jpeg_read(struct tf_image *im, const uint8_t *data, size_t n, int pixels)
{
	struct jpeg_decompress_struct ci;
	struct jerr e;
	memset(&e, 0, sizeof e);
	ci.err = jpeg_std_error(&e.pub);
	e.pub.error_exit = jerr_exit;
	e.pub.emit_message = jerr_emit;
	if (setjmp(e.jump)) {
		jpeg_destroy_decompress(&ci);
		return tfi_set_error(im, TF_EFORMAT, "damaged JPEG: %s", e.msg);
	}
	jpeg_create_decompress(&ci);
	jpeg_mem_src(&ci, data, (unsigned long)n);
	jpeg_read_header(&ci, TRUE);
	int c = ci.jpeg_color_space == JCS_GRAYSCALE ? 1 : 3;
	if (ci.jpeg_color_space == JCS_CMYK ||
	    ci.jpeg_color_space == JCS_YCCK) {
		jpeg_destroy_decompress(&ci);
		return tfi_set_error(im, TF_EFORMAT,
		                     "a CMYK JPEG (only grey and colour ones "
		                     "are read)");
	}
	im->height = (int)ci.image_height;
	im->width = (int)ci.image_width;
	im->channels = c;
	uint64_t npx = (uint64_t)ci.image_height * ci.image_width;
	if (!pixels) {
		jpeg_destroy_decompress(&ci);
		return TF_OK;
	}
	if (npx > im->max_pixels) {
		jpeg_destroy_decompress(&ci);
		return tfi_set_error(im, TF_ETOOBIG,
		                     "a JPEG of %dx%d pixels (at most %llu "
		                     "are decoded)",
		                     im->width, im->height,
		                     (unsigned long long)im->max_pixels);
	}
	ci.out_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
	if (grow(im, (size_t)npx * (size_t)c) != 0) {
		jpeg_destroy_decompress(&ci);
		return tfi_set_error(im, TF_ENOMEM, "out of memory");
	}
	jpeg_start_decompress(&ci);
	size_t stride = (size_t)ci.output_width * (size_t)c;
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW row = im->px + (size_t)ci.output_scanline * stride;
		jpeg_read_scanlines(&ci, &row, 1);
	}
	jpeg_finish_decompress(&ci);
	jpeg_destroy_decompress(&ci);
	if (e.damaged) {
		return tfi_set_error(im, TF_EFORMAT, "damaged JPEG: %s", e.msg);
	}
	return TF_OK;
}

/* ---- PNG ----------------------------------------------------------------- */

static int
png_read(struct tf_image *im, const uint8_t *data, size_t n, int pixels)
{
	png_image pi;
	memset(&pi, 0, sizeof pi);
	pi.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&pi, data, n)) {
		int rc = tfi_set_error(im, TF_EFORMAT, "damaged PNG: %s",
		                       pi.message);
		png_image_free(&pi);
		return rc;
	}
	int colour = (pi.format & PNG_FORMAT_FLAG_COLOR) != 0;
	int alpha = (pi.format & PNG_FORMAT_FLAG_ALPHA) != 0;
	im->height = (int)pi.height;
	im->width = (int)pi.width;
	im->channels = colour ? 3 : 1;
	uint64_t npx = (uint64_t)pi.height * pi.width;
	if (!pixels) {
		png_image_free(&pi);
		return TF_OK;
	}
	if (npx > im->max_pixels) {
		png_image_free(&pi);
		return tfi_set_error(im, TF_ETOOBIG,
		                     "a PNG of %dx%d pixels (at most %llu are "
		                     "decoded)",
		                     im->width, im->height,
		                     (unsigned long long)im->max_pixels);
	}
	/* Read with the alpha channel, then drop it (as TensorFlow's
	 * decode_png with 1 or 3 channels): no compositing, no gamma. */
	pi.format = colour ? (alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB)
	                   : (alpha ? PNG_FORMAT_GA : PNG_FORMAT_GRAY);
	int inc = im->channels + alpha;
	if (grow(im, (size_t)npx * (size_t)inc) != 0) {
		png_image_free(&pi);
		return tfi_set_error(im, TF_ENOMEM, "out of memory");
	}
	if (!png_image_finish_read(&pi, NULL, im->px, 0, NULL)) {
		int rc = tfi_set_error(im, TF_EFORMAT, "damaged PNG: %s",
		                       pi.message);
		png_image_free(&pi);
		return rc;
	}
	if (alpha) {
		size_t c = (size_t)im->channels;
		for (size_t i = 0; i < npx; i++) {
			memmove(im->px + i * c, im->px + i * (c + 1), c);
		}
	}
	return TF_OK;
}

static int
read_image(struct tf_image *im, const void *data, size_t n, int pixels,
           int *format)
{
	im->err.code = 0;
	im->err.msg[0] = '\0';
	int f = tf_image_sniff(data, n);
	if (format != NULL) {
		*format = f;
	}
	if (f == TF_IMAGE_JPEG) {
		return jpeg_read(im, data, n, pixels);
	}
	if (f == TF_IMAGE_PNG) {
		return png_read(im, data, n, pixels);
	}
	return tfi_set_error(im, TF_EFORMAT,
	                     n == 0 ? "empty, not an image"
	                            : "not a JPEG or PNG image");
}

int
tf_image_probe(struct tf_image *im, const void *data, size_t n, int *format,
               int *height, int *width, int *channels)
{
	int rc = read_image(im, data, n, 0, format);
	if (rc == TF_OK) {
		*height = im->height;
		*width = im->width;
		*channels = im->channels;
	}
	return rc;
}

int
tf_image_decode(struct tf_image *im, const void *data, size_t n)
{
	int rc = read_image(im, data, n, 1, NULL);
	if (rc != TF_OK) {
		im->height = im->width = 0;
	}
	return rc;
}

void
tf_image_size(const struct tf_image *im, int *height, int *width, int *channels)
{
	*height = im->height;
	*width = im->width;
	*channels = im->channels;
}

const uint8_t *
tf_image_pixels(const struct tf_image *im)
{
	return im->px;
}

/* ---- pixels into floats -------------------------------------------------- */

/* One source axis sampled at an output position: the two pixels either
 * side and the weight of the second (half-pixel centres). */
struct tap {
	int a, b;
	float w;
};

static struct tap
tap_at(int out, int nout, int nin)
{
	float s = ((float)out + 0.5f) * (float)nin / (float)nout - 0.5f;
	if (s < 0) {
		s = 0;
	}
	int a = (int)s;
	if (a > nin - 1) {
		a = nin - 1;
	}
	struct tap t = {a, a + 1 < nin ? a + 1 : a, s - (float)a};
	return t;
}

void
tf_image_floats(const struct tf_image *im, const struct tf_image_view *v,
                float *out)
{
	int H = v->height, W = v->width, C = v->channels;
	int ic = im->channels;
	size_t stride = (size_t)im->width * (size_t)ic;
	for (int y = 0; y < H; y++) {
		int ry = y + v->dy; /* the row of the resized image */
		struct tap ty = tap_at(ry < 0 ? 0 : ry, H, im->height);
		for (int x = 0; x < W; x++) {
			float *o = out + ((size_t)y * (size_t)W + (size_t)x) *
			                     (size_t)C;
			int rx = x + v->dx;
			if (ry < 0 || ry >= H || rx < 0 || rx >= W) {
				for (int c = 0; c < C; c++) {
					o[c] = 0.0f;
				}
				continue;
			}
			if (v->flip) {
				rx = W - 1 - rx;
			}
			struct tap tx = tap_at(rx, W, im->width);
			const uint8_t *r0 = im->px + (size_t)ty.a * stride,
			              *r1 = im->px + (size_t)ty.b * stride;
			float px[3] = {0, 0, 0};
			for (int c = 0; c < ic; c++) {
				float top = r0[tx.a * ic + c] +
				            tx.w * (float)(r0[tx.b * ic + c] -
				                           r0[tx.a * ic + c]);
				float bot = r1[tx.a * ic + c] +
				            tx.w * (float)(r1[tx.b * ic + c] -
				                           r1[tx.a * ic + c]);
				px[c] = top + ty.w * (bot - top);
			}
			if (C == 1 && ic == 3) {
				o[0] = 0.2989f * px[0] + 0.587f * px[1] +
				       0.114f * px[2];
			} else {
				for (int c = 0; c < C; c++) {
					o[c] = px[ic == 1 ? 0 : c];
				}
			}
		}
	}
	size_t n = (size_t)H * (size_t)W;
	if (v->scale != TF_IMAGE_SCALE_STANDARDIZE) {
		float a = v->scale == TF_IMAGE_SCALE_SYMMETRIC ? 1.0f / 127.5f
		                                               : 1.0f / 255.0f;
		float b = v->scale == TF_IMAGE_SCALE_SYMMETRIC ? -1.0f : 0.0f;
		for (size_t i = 0; i < n * (size_t)C; i++) {
			out[i] = out[i] * a + b;
		}
		return;
	}
	/* Each channel to mean 0 and deviation 1; the deviation at least
	 * 1/sqrt(pixels), as per_image_standardization (a flat image
	 * stays finite). */
	for (int c = 0; c < C; c++) {
		double s = 0, ss = 0;
		for (size_t i = 0; i < n; i++) {
			double x = out[i * (size_t)C + (size_t)c];
			s += x;
			ss += x * x;
		}
		double mean = s / (double)n;
		double var = ss / (double)n - mean * mean;
		double sd = sqrt(var > 0 ? var : 0);
		double floor_sd = 1.0 / sqrt((double)n);
		float inv = (float)(1.0 / (sd > floor_sd ? sd : floor_sd));
		for (size_t i = 0; i < n; i++) {
			float *p = &out[i * (size_t)C + (size_t)c];
			*p = (float)((*p - mean) * inv);
		}
	}
}
