/*
 * Images (image.c): PNG decoding of grey, colour and alpha images made
 * here byte by byte (zlib for the data), the pixel limit, damage, and the
 * floats a model reads: resizing, grey and colour, flip, shift, scales.
 */
#include <zlib.h>

#include "test.h"

/* A PNG of w x h pixels of channels 1 (grey), 2 (grey + alpha), 3 (RGB)
 * or 4 (RGBA), 8 bits, filter 0 rows; its length into *n. */
static uint8_t *
make_png(const uint8_t *px, int w, int h, int channels, size_t *n)
{
	static const int colour_type[] = {0, 0, 4, 2, 6};
	size_t raw_n = (size_t)h * (size_t)(1 + w * channels);
	uint8_t *raw = malloc(raw_n);
	for (int y = 0; y < h; y++) {
		uint8_t *r = raw + (size_t)y * (size_t)(1 + w * channels);
		r[0] = 0;
		memcpy(r + 1, px + (size_t)y * (size_t)(w * channels),
		       (size_t)(w * channels));
	}
	uLongf zn = compressBound((uLong)raw_n);
	uint8_t *z = malloc(zn);
	compress(z, &zn, raw, (uLong)raw_n);
	uint8_t *out = malloc(64 + zn);
	size_t k = 0;
	memcpy(out, "\x89PNG\r\n\x1a\n", 8);
	k = 8;
	/* a chunk: length, type, data, CRC of type and data */
	const struct {
		const char *type;
		const uint8_t *data;
		size_t len;
	} chunks[3] = {
	    {"IHDR",
	     (const uint8_t[]){0, 0, 0, (uint8_t)w, 0, 0, 0, (uint8_t)h, 8,
	                       (uint8_t)colour_type[channels], 0, 0, 0},
	     13},
	    {"IDAT", z, zn},
	    {"IEND", NULL, 0}};
	for (int c = 0; c < 3; c++) {
		size_t len = chunks[c].len;
		out[k++] = (uint8_t)(len >> 24);
		out[k++] = (uint8_t)(len >> 16);
		out[k++] = (uint8_t)(len >> 8);
		out[k++] = (uint8_t)len;
		memcpy(out + k, chunks[c].type, 4);
		if (len > 0) {
			memcpy(out + k + 4, chunks[c].data, len);
		}
		uLong crc = crc32(0, out + k, (uInt)(4 + len));
		k += 4 + len;
		out[k++] = (uint8_t)(crc >> 24);
		out[k++] = (uint8_t)(crc >> 16);
		out[k++] = (uint8_t)(crc >> 8);
		out[k++] = (uint8_t)crc;
	}
	free(raw);
	free(z);
	*n = k;
	return out;
}

TEST(png_grey_colour_alpha)
{
	struct tf_image *im = tf_image_new();
	REQUIRE(im != NULL);
	const uint8_t grey[6] = {0, 50, 100, 150, 200, 250};
	size_t n;
	uint8_t *png = make_png(grey, 3, 2, 1, &n);
	CHECK_EQ_INT(tf_image_sniff(png, n), TF_IMAGE_PNG);
	int fmt, h, w, c;
	CHECK_STATUS(tf_image_probe(im, png, n, &fmt, &h, &w, &c), TF_OK, im);
	CHECK(fmt == TF_IMAGE_PNG && h == 2 && w == 3 && c == 1);
	CHECK_STATUS(tf_image_decode(im, png, n), TF_OK, im);
	CHECK_MEM(tf_image_pixels(im), grey, 6);
	free(png);
	/* RGBA: the alpha dropped, the colours kept as they are */
	const uint8_t rgba[8] = {10, 20, 30, 0, 40, 50, 60, 255};
	png = make_png(rgba, 2, 1, 4, &n);
	CHECK_STATUS(tf_image_decode(im, png, n), TF_OK, im);
	tf_image_size(im, &h, &w, &c);
	CHECK(h == 1 && w == 2 && c == 3);
	const uint8_t rgb[6] = {10, 20, 30, 40, 50, 60};
	CHECK_MEM(tf_image_pixels(im), rgb, 6);
	free(png);
	/* grey + alpha: one channel */
	const uint8_t ga[4] = {7, 0, 9, 128};
	png = make_png(ga, 2, 1, 2, &n);
	CHECK_STATUS(tf_image_decode(im, png, n), TF_OK, im);
	tf_image_size(im, &h, &w, &c);
	CHECK(c == 1 && tf_image_pixels(im)[0] == 7 &&
	      tf_image_pixels(im)[1] == 9);
	free(png);
	tf_image_free(im);
}

TEST(limits_and_damage)
{
	struct tf_image *im = tf_image_new();
	uint8_t px[16 * 16] = {0};
	size_t n;
	uint8_t *png = make_png(px, 16, 16, 1, &n);
	tf_image_set_max_pixels(im, 255);
	CHECK_STATUS(tf_image_decode(im, png, n), TF_ETOOBIG, im);
	CHECK_CONTAINS(tf_errmsg(im), "a PNG of 16x16 pixels (at most 255");
	tf_image_set_max_pixels(im, 256);
	CHECK_STATUS(tf_image_decode(im, png, n), TF_OK, im);
	/* cut short, and a flipped byte in the data (its CRC then fails) */
	CHECK_STATUS(tf_image_decode(im, png, n - 20), TF_EFORMAT, im);
	CHECK_CONTAINS(tf_errmsg(im), "damaged PNG");
	png[40] ^= 1;
	CHECK_STATUS(tf_image_decode(im, png, n), TF_EFORMAT, im);
	free(png);
	CHECK_STATUS(tf_image_decode(im, "GIF89a", 6), TF_EFORMAT, im);
	CHECK_CONTAINS(tf_errmsg(im), "not a JPEG or PNG image");
	CHECK_STATUS(tf_image_decode(im, "", 0), TF_EFORMAT, im);
	CHECK_CONTAINS(tf_errmsg(im), "empty");
	/* a JPEG's signature and no more */
	CHECK_STATUS(tf_image_decode(im, "\xff\xd8\xff\xe0", 4), TF_EFORMAT,
	             im);
	CHECK_CONTAINS(tf_errmsg(im), "damaged JPEG");
	tf_image_free(im);
}

TEST(floats)
{
	struct tf_image *im = tf_image_new();
	/* 2x2 grey: 0 255 / 51 102 */
	const uint8_t px[4] = {0, 255, 51, 102};
	size_t n;
	uint8_t *png = make_png(px, 2, 2, 1, &n);
	REQUIRE(tf_image_decode(im, png, n) == TF_OK);
	free(png);
	float out[4 * 4 * 3];
	/* the same size: the pixels / 255 */
	struct tf_image_view v = {2, 2, 1, TF_IMAGE_SCALE_UNIT, 0, 0, 0};
	tf_image_floats(im, &v, out);
	CHECK(out[0] == 0.0f && fabsf(out[1] - 1) < 1e-6f &&
	      fabsf(out[2] - 0.2f) < 1e-6f && fabsf(out[3] - 0.4f) < 1e-6f);
	/* doubled: half-pixel centres, as TensorFlow 2's bilinear resize:
	 * row 0 samples source x at 0 (clamped), 0.25, 0.75, 1 */
	v.height = v.width = 4;
	tf_image_floats(im, &v, out);
	const float row0[4] = {0, 0.25f, 0.75f, 1};
	for (int x = 0; x < 4; x++) {
		CHECK(fabsf(out[x] - row0[x]) < 1e-6f);
	}
	/* row 1 samples y 0.25: a quarter of the way to 0.2 / 0.4 */
	CHECK(fabsf(out[4] - 0.05f) < 1e-6f);
	/* mirrored */
	v = (struct tf_image_view){2, 2, 1, TF_IMAGE_SCALE_UNIT, 1, 0, 0};
	tf_image_floats(im, &v, out);
	CHECK(fabsf(out[0] - 1) < 1e-6f && out[1] == 0.0f);
	/* shifted one pixel right and down: zeros come in */
	v = (struct tf_image_view){2, 2, 1, TF_IMAGE_SCALE_UNIT, 0, -1, -1};
	tf_image_floats(im, &v, out);
	CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0 && out[3] == 0.0f);
	v.dy = v.dx = 1; /* left and up: the last pixel first */
	tf_image_floats(im, &v, out);
	CHECK(fabsf(out[0] - 0.4f) < 1e-6f && out[1] == 0 && out[3] == 0);
	/* grey as RGB: repeated; symmetric scale */
	v = (struct tf_image_view){2, 2, 3, TF_IMAGE_SCALE_SYMMETRIC, 0, 0, 0};
	tf_image_floats(im, &v, out);
	CHECK(out[0] == -1.0f && out[1] == -1.0f && out[2] == -1.0f);
	CHECK(fabsf(out[3] - 1) < 1e-6f && fabsf(out[5] - 1) < 1e-6f);
	/* standardised: mean 0, deviation 1 */
	v = (struct tf_image_view){2, 2, 1, TF_IMAGE_SCALE_STANDARDIZE,
	                           0, 0, 0};
	tf_image_floats(im, &v, out);
	double s = 0, ss = 0;
	for (int i = 0; i < 4; i++) {
		s += out[i];
		ss += out[i] * out[i];
	}
	CHECK(fabs(s) < 1e-5 && fabs(ss / 4 - 1) < 1e-5);
	/* colour to grey: 0.2989 R + 0.587 G + 0.114 B */
	const uint8_t rgb[3] = {255, 0, 0};
	png = make_png(rgb, 1, 1, 3, &n);
	REQUIRE(tf_image_decode(im, png, n) == TF_OK);
	free(png);
	v = (struct tf_image_view){1, 1, 1, TF_IMAGE_SCALE_UNIT, 0, 0, 0};
	tf_image_floats(im, &v, out);
	CHECK(fabsf(out[0] - 0.2989f) < 1e-5f);
	CHECK_EQ_INT(tf_image_scale_parse("standardize"),
	             TF_IMAGE_SCALE_STANDARDIZE);
	CHECK_EQ_INT(tf_image_scale_parse("loud"), -1);
	tf_image_free(im);
}

int
main(void)
{
	RUN(png_grey_colour_alpha);
	RUN(limits_and_damage);
	RUN(floats);
	DONE();
}
