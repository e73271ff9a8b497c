/*
 * mkimages - the command tests' image maker: share/data/digits.csv's
 * 8x8 digits (values 0..16) as 28x28 image files in class folders,
 *
 *     mkimages CSV DIR png|jpg
 *
 * writing DIR/train/CLASS/rowNNNN.EXT and DIR/test/CLASS/rowNNNN.EXT
 * (data row i is a test row iff i % 5 == 4).  PNG files are grey; JPEG
 * files are colour (the digit in a tint that differs by row), so a
 * reader's conversion of colour to grey is exercised too.  Written
 * through libpng and libjpeg, independently of tfkit's reader.
 *
 *     mkimages --pixels CSV DIR H W C png|jpg
 *
 * writes each row of a CSV of H*W*C pixels (0..255, H, W, C order) and a
 * label, after a header (bench/gen-images.py's), as DIR/LABEL/rowNNNNNN.EXT
 * as it is (C 1: grey, 3: colour; JPEG at quality 90): bench/cnn's
 * images.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jpeglib.h>
#include <png.h>

#define SIDE 28

static void
fail(const char *what)
{
	fprintf(stderr, "mkimages: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
mkdirs(const char *dir, const char *sub, const char *cls, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", dir, sub);
	if (mkdir(out, 0755) != 0 && errno != EEXIST) {
		fail(out);
	}
	snprintf(out, n, "%s/%s/%s", dir, sub, cls);
	if (mkdir(out, 0755) != 0 && errno != EEXIST) {
		fail(out);
	}
}

/* 8x8 values 0..16 to SIDE x SIDE bytes, bilinear with pixel centres
 * aligned. */
static void
upscale(const double *v, unsigned char *out)
{
	for (int y = 0; y < SIDE; y++) {
		double sy = (y + 0.5) * 8.0 / SIDE - 0.5;
		sy = sy < 0 ? 0 : sy;
		int y0 = (int)sy, y1 = y0 + 1 < 8 ? y0 + 1 : y0;
		double wy = sy - y0;
		for (int x = 0; x < SIDE; x++) {
			double sx = (x + 0.5) * 8.0 / SIDE - 0.5;
			sx = sx < 0 ? 0 : sx;
			int x0 = (int)sx, x1 = x0 + 1 < 8 ? x0 + 1 : x0;
			double wx = sx - x0;
			double t =
			    v[y0 * 8 + x0] * (1 - wx) + v[y0 * 8 + x1] * wx;
			double b =
			    v[y1 * 8 + x0] * (1 - wx) + v[y1 * 8 + x1] * wx;
			double p = (t * (1 - wy) + b * wy) * 255.0 / 16.0;
			out[y * SIDE + x] = (unsigned char)(p + 0.5);
		}
	}
}

/* h x w pixels of c channels (1 grey, 3 RGB) as a PNG. */
static void
write_png(const char *path, const unsigned char *px, int h, int w, int c)
{
	png_image im;
	memset(&im, 0, sizeof im);
	im.version = PNG_IMAGE_VERSION;
	im.width = (png_uint_32)w;
	im.height = (png_uint_32)h;
	im.format = c == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
	if (!png_image_write_to_file(&im, path, 0, px, 0, NULL)) {
		fprintf(stderr, "mkimages: %s: %s\n", path, im.message);
		exit(1);
	}
}

/* h x w pixels of c channels as a JPEG of quality q. */
static void
write_jpeg_q(const char *path, const unsigned char *px, int h, int w, int c,
             int q)
{
	FILE *f = fopen(path, "wb");
	if (f == NULL) {
		fail(path);
	}
	struct jpeg_compress_struct ci;
	struct jpeg_error_mgr err;
	ci.err = jpeg_std_error(&err);
	jpeg_create_compress(&ci);
	jpeg_stdio_dest(&ci, f);
	ci.image_width = (JDIMENSION)w;
	ci.image_height = (JDIMENSION)h;
	ci.input_components = c;
	ci.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(&ci);
	jpeg_set_quality(&ci, q, TRUE);
	jpeg_start_compress(&ci, TRUE);
	while (ci.next_scanline < ci.image_height) {
		JSAMPROW r = (JSAMPROW)px +
		             (size_t)ci.next_scanline * (size_t)w * (size_t)c;
		jpeg_write_scanlines(&ci, &r, 1);
	}
	jpeg_finish_compress(&ci);
	jpeg_destroy_compress(&ci);
	if (fclose(f) != 0) {
		fail(path);
	}
}

static void
write_jpeg(const char *path, const unsigned char *px, int row)
{
	unsigned char rgb[SIDE * SIDE * 3];
	static const double tint[3][3] = {
	    {1, 0.6, 0.3}, {0.4, 1, 0.7}, {0.8, 0.8, 1}};
	for (int i = 0; i < SIDE * SIDE; i++) {
		for (int c = 0; c < 3; c++) {
			rgb[i * 3 + c] =
			    (unsigned char)(px[i] * tint[row % 3][c] + 0.5);
		}
	}
	write_jpeg_q(path, rgb, SIDE, SIDE, 3, 95);
}

/* --pixels: any size, grey or colour, the CSV's pixels as they are. */
static int
pixels(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr,
		        "usage: mkimages --pixels CSV DIR H W C png|jpg\n");
		return 64;
	}
	int h = atoi(argv[4]), w = atoi(argv[5]), c = atoi(argv[6]);
	int jpg = strcmp(argv[7], "jpg") == 0;
	if (h < 1 || w < 1 || h > 4096 || w > 4096 || (c != 1 && c != 3)) {
		fprintf(stderr, "mkimages: bad size\n");
		return 64;
	}
	FILE *f = fopen(argv[2], "r");
	if (f == NULL) {
		fail(argv[2]);
	}
	if (mkdir(argv[3], 0755) != 0 && errno != EEXIST) {
		fail(argv[3]);
	}
	size_t n = (size_t)h * (size_t)w * (size_t)c;
	unsigned char *px = malloc(n);
	char *line = NULL;
	size_t cap = 0;
	if (px == NULL || getline(&line, &cap, f) < 0) { /* the header */
		fail(argv[2]);
	}
	int row = 0;
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *end;
		for (size_t k = 0; k < n; k++) {
			long v = strtol(p, &end, 10);
			px[k] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
			p = *end == ',' ? end + 1 : end;
		}
		long label = strtol(p, &end, 10);
		char dir[4096], path[4200];
		snprintf(dir, sizeof dir, "%s/%ld", argv[3], label);
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			fail(dir);
		}
		snprintf(path, sizeof path, "%s/row%06d.%s", dir, row, argv[7]);
		if (jpg) {
			write_jpeg_q(path, px, h, w, c, 90);
		} else {
			write_png(path, px, h, w, c);
		}
		row++;
	}
	free(line);
	free(px);
	fclose(f);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--pixels") == 0) {
		return pixels(argc, argv);
	}
	if (argc != 4 ||
	    (strcmp(argv[3], "png") != 0 && strcmp(argv[3], "jpg") != 0)) {
		fprintf(stderr, "usage: mkimages CSV DIR png|jpg\n");
		return 64;
	}
	FILE *f = fopen(argv[1], "r");
	if (f == NULL) {
		fail(argv[1]);
	}
	if (mkdir(argv[2], 0755) != 0 && errno != EEXIST) {
		fail(argv[2]);
	}
	char line[4096];
	if (fgets(line, sizeof line, f) == NULL) { /* the header */
		fail(argv[1]);
	}
	int row = 0;
	while (fgets(line, sizeof line, f) != NULL) {
		double v[65];
		char *p = line;
		for (int k = 0; k < 65; k++) {
			char *end;
			v[k] = strtod(p, &end);
			if (end == p) {
				fprintf(stderr, "mkimages: %s: row %d: bad\n",
				        argv[1], row);
				return 1;
			}
			p = *end == ',' ? end + 1 : end;
		}
		unsigned char px[SIDE * SIDE];
		upscale(v, px);
		char cls[16], dir[4096], path[4200];
		snprintf(cls, sizeof cls, "%d", (int)v[64]);
		mkdirs(argv[2], row % 5 == 4 ? "test" : "train", cls, dir,
		       sizeof dir);
		snprintf(path, sizeof path, "%s/row%04d.%s", dir, row, argv[3]);
		if (strcmp(argv[3], "png") == 0) {
			write_png(path, px, SIDE, SIDE, 1);
		} else {
			write_jpeg(path, px, row);
		}
		row++;
	}
	fclose(f);
	return 0;
}
