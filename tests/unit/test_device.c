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

int
main(void)
{
	RUN(cpu_table_is_complete);
	RUN(gemm_against_loops);
	DONE();
}
