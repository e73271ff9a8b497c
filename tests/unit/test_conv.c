/* Convolution by im2col: the patches against a direct reading of the
 * image, a convolution (im2col, then one matrix product) against the
 * textbook loops, with strides and padding; and the same slot through
 * the fake GPU (tests/unit/fake_gpu.c), its own kernel and, with
 * FAKE_GPU_NO=im2col, the CPU's over host copies. */
#include <limits.h>
#include <unistd.h>

#include "test.h"

static float
noise(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* A geometry: output size from the input, kernel, stride, padding. */
static struct tf_conv
geometry(int64_t h, int64_t w, int64_t c, int64_t k, int64_t s, int64_t p)
{
	struct tf_conv g = {h, w, c, k, k, s, s, p, p, 0, 0};
	g.oh = (h + 2 * p - k) / s + 1;
	g.ow = (w + 2 * p - k) / s + 1;
	return g;
}

TEST(patches_read_the_image)
{
	const struct tf_conv gs[] = {
	    geometry(5, 4, 2, 3, 1, 1), geometry(7, 7, 3, 3, 2, 0),
	    geometry(6, 5, 1, 5, 1, 2), geometry(4, 4, 4, 1, 1, 0)};
	for (size_t t = 0; t < sizeof gs / sizeof gs[0]; t++) {
		const struct tf_conv *g = &gs[t];
		const int64_t rows = 3, patch = g->kh * g->kw * g->c;
		size_t n = (size_t)(rows * g->h * g->w * g->c);
		size_t m = (size_t)(rows * g->oh * g->ow * patch);
		float *x = malloc(n * sizeof *x),
		      *col = malloc(m * sizeof *col);
		REQUIRE(x != NULL && col != NULL);
		unsigned s = 7 + (unsigned)t;
		for (size_t i = 0; i < n; i++) {
			x[i] = noise(&s);
		}
		tf_im2col(tf_device_cpu(), x, rows, g, col);
		size_t bad = 0;
		for (int64_t r = 0; r < rows; r++)
			for (int64_t oy = 0; oy < g->oh; oy++)
				for (int64_t ox = 0; ox < g->ow; ox++)
					for (int64_t ky = 0; ky < g->kh; ky++)
						for (int64_t kx = 0; kx < g->kw;
						     kx++)
							for (int64_t ch = 0;
							     ch < g->c; ch++) {
								int64_t iy =
								    oy * g->sh -
								    g->ph + ky;
								int64_t ix =
								    ox * g->sw -
								    g->pw + kx;
								float want =
								    iy < 0 ||
								            iy >=
								                g->h ||
								            ix <
								                0 ||
								            ix >=
								                g->w
								        ? 0
								        : x[((r * g->h +
								              iy) *
								                 g->w +
								             ix) *
								                g->c +
								            ch];
								size_t at =
								    (size_t)((((r * g->oh +
								                oy) *
								                   g->ow +
								               ox) *
								              patch) +
								             (ky *
								                  g->kw +
								              kx) *
								                 g->c +
								             ch);
								bad +=
								    col[at] !=
								    want;
							}
		CHECK_EQ_INT(bad, 0);
		free(x);
		free(col);
	}
}

TEST(convolution_by_matrix_product)
{
	/* 2 images of 6x5x3, 4 filters of 3x3, stride 2, padding 1 */
	struct tf_conv g = geometry(6, 5, 3, 3, 2, 1);
	const int64_t rows = 2, f = 4, patch = g.kh * g.kw * g.c;
	size_t n = (size_t)(rows * g.h * g.w * g.c);
	size_t pix = (size_t)(rows * g.oh * g.ow);
	float *x = malloc(n * sizeof *x),
	      *k = malloc((size_t)(patch * f) * sizeof *k);
	float *col = malloc(pix * (size_t)patch * sizeof *col);
	float *y = malloc(pix * (size_t)f * sizeof *y);
	REQUIRE(x && k && col && y);
	unsigned s = 3;
	for (size_t i = 0; i < n; i++) {
		x[i] = noise(&s);
	}
	for (int64_t i = 0; i < patch * f; i++) {
		k[i] = noise(&s);
	}
	struct tf_device *cpu = tf_device_cpu();
	tf_im2col(cpu, x, rows, &g, col);
	tf_gemm(cpu, 0, 0, (int64_t)pix, f, patch, 1.0f, col, k, 0.0f, y);
	double worst = 0;
	for (int64_t r = 0; r < rows; r++)
		for (int64_t oy = 0; oy < g.oh; oy++)
			for (int64_t ox = 0; ox < g.ow; ox++)
				for (int64_t o = 0; o < f; o++) {
					double sum = 0;
					for (int64_t ky = 0; ky < g.kh; ky++)
						for (int64_t kx = 0; kx < g.kw;
						     kx++)
							for (int64_t ch = 0;
							     ch < g.c; ch++) {
								int64_t
								    iy =
								        oy *
								            g.sh -
								        g.ph +
								        ky,
								    ix =
								        ox *
								            g.sw -
								        g.pw +
								        kx;
								if (iy < 0 ||
								    iy >= g.h ||
								    ix < 0 ||
								    ix >= g.w) {
									continue;
								}
								sum +=
								    (double)x
								        [((r * g.h +
								           iy) *
								              g.w +
								          ix) *
								             g.c +
								         ch] *
								    k[((ky *
								            g.kw +
								        kx) *
								           g.c +
								       ch) *
								          f +
								      o];
							}
					double got =
					    y[((r * g.oh + oy) * g.ow + ox) *
					          f +
					      o];
					worst = fmax(worst, fabs(got - sum));
				}
	CHECK(worst < 1e-4);
	free(x), free(k), free(col), free(y);
}

/* The same patches off the fake GPU, with its kernel and without. */
static void
through_the_fake_gpu(const char *without)
{
	char exe[PATH_MAX], mod[PATH_MAX + 32], msg[300];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	REQUIRE(len > 0);
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(mod, sizeof mod, "%s/fake-gpu.so", exe);
	if (access(mod, R_OK) != 0) {
		printf("# no %s: skipped\n", mod);
		return;
	}
	setenv("TFKIT_CUDA_MODULE", mod, 1);
	if (without != NULL) {
		setenv("FAKE_GPU_NO", without, 1);
	}
	struct tf_device *d;
	int rc = tf_device_open("cuda", NULL, &d, msg, sizeof msg);
	if (rc != TF_OK) {
		FAILF("%s", msg);
		return;
	}
	struct tf_conv g = geometry(7, 6, 3, 3, 2, 1);
	const int64_t rows = 4;
	size_t n = (size_t)(rows * g.h * g.w * g.c);
	size_t m = (size_t)(rows * g.oh * g.ow * g.kh * g.kw * g.c);
	float *x = malloc(n * sizeof *x), *want = malloc(m * sizeof *want);
	float *got = malloc(m * sizeof *got);
	float *dx = tf_device_alloc(d, n), *dcol = tf_device_alloc(d, m);
	REQUIRE(x && want && got && dx && dcol);
	unsigned s = 11;
	for (size_t i = 0; i < n; i++) {
		x[i] = noise(&s);
	}
	tf_im2col(tf_device_cpu(), x, rows, &g, want);
	tf_device_upload(d, dx, x, n * sizeof *x);
	tf_im2col(d, dx, rows, &g, dcol);
	tf_device_download(d, got, dcol, m * sizeof *got);
	CHECK(tf_device_sync(d, msg, sizeof msg) == TF_OK);
	CHECK(memcmp(want, got, m * sizeof *got) == 0);
	if (without != NULL) {
		CHECK(strstr(tf_device_fallbacks(d), without) != NULL);
	} else {
		CHECK(tf_device_fallbacks(d)[0] == '\0');
	}
	tf_device_free(d, dx);
	tf_device_free(d, dcol);
	free(x), free(want), free(got);
}

TEST(im2col_on_the_fake_gpu)
{
	through_the_fake_gpu(NULL);
}

/* Without the device's kernel: the CPU's over host copies (in a child:
 * the fake GPU's table is set when it opens). */
TEST(im2col_fallback_on_the_fake_gpu)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 64];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	REQUIRE(len > 0);
	exe[len] = '\0';
	snprintf(cmd, sizeof cmd, "'%s' --without-im2col", exe);
	CHECK_EQ_INT(system(cmd), 0);
}

int
main(int argc, char **argv)
{
	/* The fake GPU is one a process and keeps its table: the fallback
	 * case runs in a child of its own. */
	if (argc > 1 && strcmp(argv[1], "--without-im2col") == 0) {
		through_the_fake_gpu("im2col");
		return t_cur_failed ? 1 : 0;
	}
	RUN(patches_read_the_image);
	RUN(convolution_by_matrix_product);
	RUN(im2col_on_the_fake_gpu);
	RUN(im2col_fallback_on_the_fake_gpu);
	DONE();
}
