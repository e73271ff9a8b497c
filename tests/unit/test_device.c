/* The CPU kernel table is complete, and a few kernels against plain
 * reference loops. */
#include "kernels/kernels.h"
#include "test.h"

TEST(cpu_table_is_complete)
{
	/* struct tf_kernels holds only function pointers. */
	void (*const *slot)(void) = (void (*const *)(void)) & tfi_cpu_kernels;
	size_t n = sizeof tfi_cpu_kernels / sizeof *slot;
	for (size_t i = 0; i < n; i++) {
		if (slot[i] == NULL) {
			FAILF("kernel slot %zu of %zu is empty", i, n);
		}
	}
}

TEST(gemm_against_loops)
{
	struct tf_device *d = tf_device_cpu();
	float a[6 * 4], b[4 * 5], c[6 * 5], at[4 * 6], bt[5 * 4];
	for (int i = 0; i < 24; i++) {
		a[i] = (float)(i % 7) - 3;
	}
	for (int i = 0; i < 20; i++) {
		b[i] = (float)(i % 5) * 0.5f - 1;
	}
	for (int i = 0; i < 6; i++) {
		for (int k = 0; k < 4; k++) {
			at[k * 6 + i] = a[i * 4 + k];
		}
	}
	for (int k = 0; k < 4; k++) {
		for (int j = 0; j < 5; j++) {
			bt[j * 4 + k] = b[k * 5 + j];
		}
	}
	for (int ta = 0; ta < 2; ta++) {
		for (int tb = 0; tb < 2; tb++) {
			for (int i = 0; i < 30; i++) {
				c[i] = 1.0f;
			}
			tf_gemm(d, ta, tb, 6, 5, 4, 2.0f, ta ? at : a,
			        tb ? bt : b, 0.5f, c);
			for (int i = 0; i < 6; i++) {
				for (int j = 0; j < 5; j++) {
					float s = 0;
					for (int k = 0; k < 4; k++) {
						s +=
						    a[i * 4 + k] * b[k * 5 + j];
					}
					if (fabsf(c[i * 5 + j] -
					          (2 * s + 0.5f)) > 1e-4f) {
						FAILF("ta=%d tb=%d c[%d][%d]",
						      ta, tb, i, j);
					}
				}
			}
		}
	}
}

/* Names and maths: the CPU always; a GPU where there is one, else a
 * clear TF_EUNAVAIL saying why (no CUDA in this build, no module, no
 * driver or no GPU). */
TEST(devices_by_name)
{
	struct tf_device *d = (struct tf_device *)1;
	char msg[400];
	CHECK(tf_device_open("cpu", NULL, &d, msg, sizeof msg) == TF_OK);
	CHECK(d == tf_device_cpu());
	CHECK(tf_device_open("cpu", "fp32", &d, msg, sizeof msg) == TF_OK);
	CHECK(tf_device_open("cpu", "tf32", &d, msg, sizeof msg) == TF_EINVAL);
	CHECK(d == NULL);
	CHECK_CONTAINS(msg, "tf32 is a GPU math");
	const char *bad[] = {"tpu",   "cuda:",      "cuda:x", "cuda:-1",
	                     "cuda0", "cuda:99999", "CPU",    ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (tf_device_open(bad[i], NULL, &d, msg, sizeof msg) !=
		    TF_EINVAL) {
			FAILF("'%s' was taken for a device", bad[i]);
		}
	}
	CHECK(tf_device_open("cuda", "fp16", &d, msg, sizeof msg) == TF_EINVAL);
	CHECK_CONTAINS(msg, "'fp16' is not a GPU math");
	int rc = tf_device_open("cuda:0", NULL, &d, msg, sizeof msg);
	if (rc == TF_OK) {
		CHECK(tf_device_kind(d) == TF_DEVICE_CUDA);
		CHECK_CONTAINS(tf_device_name(d), "cuda:0 (");
	} else {
		CHECK(rc == TF_EUNAVAIL);
		CHECK(d == NULL && strlen(msg) > 10);
	}
}

/* The optimizers' fused updates against their formulas, by hand. */
TEST(updates_against_formulas)
{
	struct tf_device *d = tf_device_cpu();
	float w[3] = {1, -2, 0.5f}, g[3] = {0.5f, -1, 2};
	float m[3] = {0}, v[3] = {0}, *slots[3] = {m, v, NULL};
	struct tf_update u = {.kind = TF_UPDATE_ADAM,
	                      .lr = 0.1f,
	                      .f0 = 0.9f,
	                      .f1 = 0.999f,
	                      .f2 = 1e-8f};
	tf_update(d, &u, w, g, slots, 3);
	for (int i = 0; i < 3; i++) {
		float gi = (i == 0 ? 0.5f : i == 1 ? -1.0f : 2.0f);
		float mi = (1 - 0.9f) * gi, vi = (1 - 0.999f) * gi * gi;
		float want = (i == 0   ? 1
		              : i == 1 ? -2
		                       : 0.5f) -
		             0.1f * mi / (sqrtf(vi) + 1e-8f);
		if (fabsf(w[i] - want) > 1e-6f || m[i] != mi || v[i] != vi) {
			FAILF("adam %d: w %g (want %g), m %g, v %g", i, w[i],
			      want, m[i], v[i]);
		}
	}
	float a[2] = {1, 2}, w2[2] = {1, 1}, g2[2] = {1, -1};
	float *s2[1] = {a};
	u = (struct tf_update){
	    .kind = TF_UPDATE_MOMENTUM, .flag = 1, .lr = 0.5f, .f0 = 0.5f};
	tf_update(d, &u, w2, g2, s2, 2);
	/* a = 0.5 a + g: 1.5, 0; nesterov: w -= 0.5 (g + 0.5 a) */
	CHECK(a[0] == 1.5f && a[1] == 0.0f);
	CHECK(w2[0] == 1 - 0.5f * (1 + 0.75f) && w2[1] == 1 - 0.5f * -1);
	CHECK(tf_device_fallbacks(d)[0] == '\0');
}

/* An update over a block (the vector loop and its tail) gives each
 * value bit for bit what an update of that value alone gives (the
 * scalar code): every optimizer, FTRL with its usual power (square
 * roots) and another (pow). */
TEST(block_updates_equal_one_at_a_time)
{
	struct tf_device *d = tf_device_cpu();
	const struct tf_update us[] = {
	    {.kind = TF_UPDATE_SGD, .lr = 0.1f},
	    {.kind = TF_UPDATE_MOMENTUM, .flag = 1, .lr = 0.1f, .f0 = 0.9f},
	    {.kind = TF_UPDATE_ADAGRAD, .lr = 0.1f},
	    {.kind = TF_UPDATE_RMSPROP,
	     .flag = 1,
	     .lr = 0.01f,
	     .f0 = 0.9f,
	     .f1 = 0.5f,
	     .f2 = 1e-7f},
	    {.kind = TF_UPDATE_ADADELTA, .lr = 1, .f0 = 0.95f, .f1 = 1e-6f},
	    {.kind = TF_UPDATE_ADAM,
	     .lr = 0.01f,
	     .f0 = 0.9f,
	     .f1 = 0.999f,
	     .f2 = 1e-7f},
	    {.kind = TF_UPDATE_ADAM,
	     .flag = 1,
	     .lr = 0.01f,
	     .f0 = 0.9f,
	     .f1 = 0.999f,
	     .f2 = 1e-7f},
	    {.kind = TF_UPDATE_FTRL,
	     .lr = 0.5f,
	     .f0 = 0.01f,
	     .f1 = 0.1f,
	     .d0 = -0.5},
	    {.kind = TF_UPDATE_FTRL,
	     .lr = 0.5f,
	     .f0 = 0.0f,
	     .f1 = 0.0f,
	     .d0 = -0.25},
	};
	enum { N = 37 };
	for (size_t k = 0; k < sizeof us / sizeof us[0]; k++) {
		float w[2][N], g[N], s[2][3][N], *sa[3], *sb[3];
		for (int i = 0; i < N; i++) {
			w[0][i] = w[1][i] = 0.37f * (float)(i % 7) - 1;
			g[i] =
			    i % 5 == 3 ? 0.0f : 0.29f * (float)(i % 11) - 1.4f;
			for (int j = 0; j < 3; j++) {
				s[0][j][i] = s[1][j][i] =
				    0.013f * (float)((i * (j + 3)) % 17);
			}
		}
		for (int j = 0; j < 3; j++) {
			sa[j] = s[0][j];
		}
		for (int step = 0; step < 3; step++) {
			tf_update(d, &us[k], w[0], g, sa, N);
			for (int i = 0; i < N; i++) {
				for (int j = 0; j < 3; j++) {
					sb[j] = s[1][j] + i;
				}
				tf_update(d, &us[k], w[1] + i, g + i, sb, 1);
			}
		}
		if (memcmp(w[0], w[1], sizeof w[0]) != 0 ||
		    memcmp(s[0], s[1], sizeof s[0]) != 0) {
			FAILF("update kind %d (flag %d): a block differs from "
			      "one value at a time",
			      us[k].kind, us[k].flag);
		}
	}
}

int
main(void)
{
	RUN(cpu_table_is_complete);
	RUN(gemm_against_loops);
	RUN(devices_by_name);
	RUN(updates_against_formulas);
	RUN(block_updates_equal_one_at_a_time);
	DONE();
}
