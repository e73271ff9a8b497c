/*
 * metrics.c - streaming evaluation metrics.  The AUC is exact for up to
 * 4,194,304 scores (all kept and ranked), not TensorFlow's 200
 * thresholds; past that many, the scores kept and every one after are
 * counted instead in buckets of 2^-14 of a score's size (2,080,770 of
 * them across [0, 1], 32 MiB), scores sharing a bucket ranked as ties:
 * memory stays bounded however long the epoch (or a stream) runs, and
 * the AUC moves by at most half the share of positive-negative pairs
 * whose scores share a bucket (a pair the exact AUC counts 0 or 1
 * counts a half).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/dataset.h"
#include "tf/metrics.h"

struct scored {
	float score;
	float label;
};

/* Scores kept one by one, for the exact AUC (32 MiB of them). */
#define EXACT_SCORES ((size_t)1 << 22)
/* Past that, a bucket for each 2^9 keys of [0, 1] (score_key()): the
 * keys of 0 and of what is below it (bucket 0) to those of 1 (BUCKETS -
 * 2), and one for what is above 1 (a NaN). */
#define KEY_ZERO  0x80000000u
#define KEY_ONE   0xbf800000u
#define KEY_SHIFT 9
#define BUCKETS   ((size_t)((KEY_ONE - KEY_ZERO) >> KEY_SHIFT) + 2)
struct bucket {
	uint64_t pos, neg;
};

struct tf_metrics {
	struct tfi_handle err;
	int task;
	int64_t classes;
	uint64_t n, correct;
	double loss_sum;
	double se, ae, ysum, y2sum; /* regression */
	uint64_t *confusion;        /* classes x classes */
	struct scored *s;           /* binary: every score, */
	size_t ns, cap;
	struct bucket *b; /* ... or, past EXACT_SCORES of them, counted */
	char **names;     /* the classes as the data spells them, or NULL */
};

struct tf_metrics *
tf_metrics_new(int task, int64_t classes)
{
	struct tf_metrics *m = calloc(1, sizeof *m);
	if (m == NULL) {
		return NULL;
	}
	m->task = task;
	m->classes = task == TF_TASK_BINARY ? 2 : classes < 1 ? 1 : classes;
	if (task != TF_TASK_REGRESSION) {
		m->confusion = calloc((size_t)(m->classes * m->classes),
		                      sizeof *m->confusion);
		if (m->confusion == NULL) {
			free(m);
			return NULL;
		}
	}
	return m;
}

/* n class names (NULL: none) */
static void
free_names(char **names, int64_t n)
{
	for (int64_t k = 0; names != NULL && k < n; k++) {
		free(names[k]);
	}
	free(names);
}

void
tf_metrics_free(struct tf_metrics *m)
{
	if (m != NULL) {
		free_names(m->names, m->classes);
		free(m->confusion);
		free(m->s);
		free(m->b);
		free(m);
	}
}

void
tf_metrics_reset(struct tf_metrics *m)
{
	m->n = m->correct = 0;
	m->loss_sum = m->se = m->ae = m->ysum = m->y2sum = 0;
	m->ns = 0;
	free(m->b); /* exact again */
	m->b = NULL;
	if (m->confusion != NULL) {
		memset(m->confusion, 0,
		       (size_t)(m->classes * m->classes) *
		           sizeof *m->confusion);
	}
}

/* The mean loss of rows from predictions alone (a model without a loss
 * node): cross-entropy of probabilities clamped to [1e-7, 1 - 1e-7], as
 * Keras computes it, or the squared error. */
static double
prediction_loss(const struct tf_metrics *m, const float *pred,
                const float *label, size_t rows)
{
	const double eps = 1e-7;
	double sum = 0;
	for (size_t r = 0; r < rows; r++) {
		double y = label[r], p;
		if (m->task == TF_TASK_REGRESSION) {
			sum += (pred[r] - y) * (pred[r] - y);
			continue;
		}
		if (m->task == TF_TASK_BINARY) {
			p = y > 0.5 ? pred[r] : 1.0 - pred[r];
		} else {
			int64_t t = (int64_t)y;
			p = t >= 0 && t < m->classes
			        ? pred[r * (size_t)m->classes + (size_t)t]
			        : 0.0;
		}
		p = p < eps ? eps : p > 1 - eps ? 1 - eps : p;
		sum -= log(p);
	}
	return rows ? sum / (double)rows : 0.0;
}

/* A float's bits as an unsigned key in the float's order. */
static inline uint32_t
score_key(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u & 0x80000000u ? ~u : u | 0x80000000u;
}

/* A score's bucket. */
static inline size_t
bucket_of(float f)
{
	uint32_t k = score_key(f);
	if (k <= KEY_ZERO) {
		return 0;
	}
	size_t i = (k - KEY_ZERO) >> KEY_SHIFT;
	return i < BUCKETS - 1 ? i : BUCKETS - 1;
}

/* The scores kept, counted in buckets from now on: -1 out of memory. */
static int
to_buckets(struct tf_metrics *m)
{
	m->b = calloc(BUCKETS, sizeof *m->b);
	if (m->b == NULL) {
		return -1;
	}
	for (size_t i = 0; i < m->ns; i++) {
		struct bucket *c = &m->b[bucket_of(m->s[i].score)];
		if (m->s[i].label > 0.5f) {
			c->pos++;
		} else {
			c->neg++;
		}
	}
	free(m->s);
	m->s = NULL;
	m->ns = m->cap = 0;
	return 0;
}

int
tf_metrics_add(struct tf_metrics *m, const float *pred, const float *label,
               size_t rows, double loss)
{
	if (m == NULL) {
		return TF_OK; /* not measured (a step worked out again) */
	}
	if (m->task == TF_TASK_BINARY && m->b == NULL &&
	    m->ns + rows > EXACT_SCORES && to_buckets(m) != 0) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	if (m->task == TF_TASK_BINARY && m->b == NULL &&
	    m->cap - m->ns < rows) {
		size_t cap = m->cap ? m->cap : 4096;
		while (cap - m->ns < rows) {
			cap *= 2;
		}
		struct scored *s = realloc(m->s, cap * sizeof *s);
		if (s == NULL) {
			return tfi_set_error(m, TF_ENOMEM, "out of memory");
		}
		m->s = s;
		m->cap = cap;
	}
	for (size_t r = 0; r < rows; r++) {
		float y = label[r];
		if (m->task == TF_TASK_REGRESSION) {
			double d = (double)pred[r] - y;
			m->se += d * d;
			m->ae += fabs(d);
			m->ysum += y;
			m->y2sum += (double)y * y;
			continue;
		}
		int64_t k;
		if (m->task == TF_TASK_BINARY) {
			k = pred[r] >= 0.5f;
			if (m->b == NULL) {
				m->s[m->ns++] = (struct scored){pred[r], y};
			} else if (y > 0.5f) {
				m->b[bucket_of(pred[r])].pos++;
			} else {
				m->b[bucket_of(pred[r])].neg++;
			}
		} else {
			const float *p = pred + r * (size_t)m->classes;
			k = 0;
			for (int64_t c = 1; c < m->classes; c++) {
				k = p[c] > p[k] ? c : k;
			}
		}
		int64_t t = (int64_t)y;
		if (t >= 0 && t < m->classes) {
			m->confusion[t * m->classes + k]++;
		}
		m->correct += t == k;
	}
	m->n += rows;
	if (isnan(loss)) {
		loss = prediction_loss(m, pred, label, rows);
	}
	m->loss_sum += loss * (double)rows;
	return TF_OK;
}

uint64_t
tf_metrics_count(const struct tf_metrics *m)
{
	return m->n;
}

double
tf_metrics_loss(const struct tf_metrics *m)
{
	return m->n ? m->loss_sum / (double)m->n : NAN;
}

double
tf_metrics_accuracy(const struct tf_metrics *m)
{
	if (m->task == TF_TASK_REGRESSION || m->n == 0) {
		return NAN;
	}
	return (double)m->correct / (double)m->n;
}

static int
by_score(const void *a, const void *b)
{
	float x = ((const struct scored *)a)->score;
	float y = ((const struct scored *)b)->score;
	return x < y ? -1 : x > y;
}

/* Sort by score: a radix sort (three passes of 11 bits), the scores of
 * a whole epoch taking milliseconds rather than qsort's tenth of a
 * second; qsort when there is no memory for the second array. */
static void
sort_scores(struct scored *s, size_t n)
{
	struct scored *tmp = n > 64 ? malloc(n * sizeof *tmp) : NULL;
	if (tmp == NULL) {
		qsort(s, n, sizeof *s, by_score);
		return;
	}
	struct scored *from = s, *to = tmp;
	for (int shift = 0; shift < 33; shift += 11) {
		size_t count[2048] = {0};
		for (size_t i = 0; i < n; i++) {
			count[(score_key(from[i].score) >> shift) & 2047]++;
		}
		size_t at = 0;
		for (size_t d = 0; d < 2048; d++) {
			size_t c = count[d];
			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++) {
			to[count[(score_key(from[i].score) >> shift) &
			         2047]++] = from[i];
		}
		struct scored *t = from;
		from = to;
		to = t;
	}
	if (from != s) {
		memcpy(s, from, n * sizeof *s);
	}
	free(tmp);
}

/* Mann-Whitney: (sum of positive ranks - P(P+1)/2) / (P N). */
double
tf_metrics_auc(struct tf_metrics *m)
{
	if (m->task != TF_TASK_BINARY || (m->ns == 0 && m->b == NULL)) {
		return NAN;
	}
	if (m->b != NULL) { /* the same sums over the buckets */
		double at = 0, rank_sum = 0, pos = 0;
		for (size_t i = 0; i < BUCKETS; i++) {
			double c = (double)(m->b[i].pos + m->b[i].neg);
			rank_sum += (double)m->b[i].pos * (at + (c + 1) / 2.0);
			pos += (double)m->b[i].pos;
			at += c;
		}
		double neg = at - pos;
		return pos == 0 || neg == 0
		           ? NAN
		           : (rank_sum - pos * (pos + 1) / 2.0) / (pos * neg);
	}
	/* Exact AUC as the Mann-Whitney statistic: rank every score (tied
	 * scores share their average rank), sum the positives' ranks, and
	 * subtract the sum a ranking with every positive last would give. */
	sort_scores(m->s, m->ns);
	double rank_sum = 0, pos = 0;
	size_t i = 0;
	while (i < m->ns) {
		size_t j = i;
		while (j < m->ns && m->s[j].score == m->s[i].score) {
			j++;
		}
		double avg = (double)(i + 1 + j) / 2.0; /* ranks i+1..j */
		for (size_t k = i; k < j; k++) {
			if (m->s[k].label > 0.5f) {
				rank_sum += avg;
				pos++;
			}
		}
		i = j;
	}
	double neg = (double)m->ns - pos;
	if (pos == 0 || neg == 0) {
		return NAN; /* one class only: no pair to order */
	}
	return (rank_sum - pos * (pos + 1) / 2.0) / (pos * neg);
}

static int
put_num(struct tfi_buf *b, const char *key, double v)
{
	char t[96];
	int n = isfinite(v) ? snprintf(t, sizeof t, ",\"%s\":%.9g", key, v)
	                    : snprintf(t, sizeof t, ",\"%s\":null", key);
	return tfi_json_put(b, t, (size_t)n);
}

int
tf_metrics_json(struct tf_metrics *m, int confusion, char **out)
{
	struct tfi_buf b = {0};
	char t[64];
	int n = snprintf(t, sizeof t, "\"examples\":%llu",
	                 (unsigned long long)m->n);
	int rc = tfi_json_put(&b, t, (size_t)n) ||
	         put_num(&b, "loss", tf_metrics_loss(m));
	if (m->task == TF_TASK_REGRESSION) {
		double dn = (double)(m->n ? m->n : 1);
		double var = m->y2sum / dn - (m->ysum / dn) * (m->ysum / dn);
		rc = rc || put_num(&b, "mse", m->se / dn) ||
		     put_num(&b, "rmse", sqrt(m->se / dn)) ||
		     put_num(&b, "mae", m->ae / dn) ||
		     put_num(&b, "r2", var > 0 ? 1 - (m->se / dn) / var : NAN);
	} else {
		rc = rc || put_num(&b, "accuracy", tf_metrics_accuracy(m));
		if (m->task == TF_TASK_BINARY) {
			rc = rc || put_num(&b, "auc", tf_metrics_auc(m));
		}
		if (confusion && !rc) {
			rc = tfi_json_put(&b, ",\"confusion\":[", 14);
			for (int64_t i = 0; i < m->classes && !rc; i++) {
				rc =
				    tfi_json_put(&b, i ? ",[" : "[", i ? 2 : 1);
				for (int64_t j = 0; j < m->classes && !rc;
				     j++) {
					n = snprintf(
					    t, sizeof t, "%s%llu", j ? "," : "",
					    (unsigned long long)
					        m->confusion[i * m->classes +
					                     j]);
					rc = tfi_json_put(&b, t, (size_t)n);
				}
				rc = rc || tfi_json_put(&b, "]", 1);
			}
			rc = rc || tfi_json_put(&b, "]", 1);
		}
	}
	if (rc) {
		tfi_buf_free(&b);
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	*out = (char *)b.data;
	return TF_OK;
}

/* A class name's bytes in the table (a longer one is cut there). */
#define CLASS_COL 24

int
tf_metrics_name_classes(struct tf_metrics *m, const char *const *names)
{
	if (m->confusion == NULL) {
		return TF_OK; /* (regression: no classes) */
	}
	char **n = calloc((size_t)m->classes, sizeof *n);
	int ok = n != NULL;
	for (int64_t k = 0; ok && k < m->classes; k++) {
		ok = (n[k] = strndup(names[k], CLASS_COL)) != NULL;
	}
	if (!ok) {
		free_names(n, m->classes);
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	free_names(m->names, m->classes);
	m->names = n;
	return TF_OK;
}

/* Class k's name in a table: the data's (tf_metrics_name_classes()), or
 * its number. */
static const char *
class_label(const struct tf_metrics *m, int64_t k, char *buf, size_t size)
{
	if (m->names == NULL) {
		snprintf(buf, size, "%lld", (long long)k);
		return buf;
	}
	return m->names[k];
}

int
tf_metrics_text(struct tf_metrics *m, char **out)
{
	struct tfi_buf b = {0};
	char t[160];
	int n;
#define LINE(...)                                                              \
	do {                                                                   \
		n = snprintf(t, sizeof t, __VA_ARGS__);                        \
		if (tfi_json_put(&b, t, (size_t)n) != TF_OK) {                 \
			tfi_buf_free(&b);                                      \
			return tfi_set_error(m, TF_ENOMEM, "out of memory");   \
		}                                                              \
	} while (0)
	LINE("%-10s %llu\n", "examples", (unsigned long long)m->n);
	LINE("%-10s %.6f\n", "loss", tf_metrics_loss(m));
	if (m->task == TF_TASK_REGRESSION) {
		double dn = (double)(m->n ? m->n : 1);
		LINE("%-10s %.6f\n%-10s %.6f\n", "rmse", sqrt(m->se / dn),
		     "mae", m->ae / dn);
	} else {
		LINE("%-10s %.6f\n", "accuracy", tf_metrics_accuracy(m));
		if (m->task == TF_TASK_BINARY) {
			LINE("%-10s %.6f\n", "auc", tf_metrics_auc(m));
		}
		/* a column as wide as the widest class name or count */
		char name[32];
		int w = 7;
		for (int64_t i = 0; i < m->classes; i++) {
			int len =
			    (int)strlen(class_label(m, i, name, sizeof name));
			w = len > w ? len : w;
			for (int64_t j = 0; j < m->classes; j++) {
				len = snprintf(
				    name, sizeof name, "%llu",
				    (unsigned long long)
				        m->confusion[i * m->classes + j]);
				w = len > w ? len : w;
			}
		}
		LINE("confusion (rows: true class, columns: predicted)\n");
		LINE("%*s |", w, "");
		for (int64_t j = 0; j < m->classes; j++) {
			LINE(" %*s", w, class_label(m, j, name, sizeof name));
		}
		LINE("\n");
		for (int64_t i = 0; i < m->classes; i++) {
			LINE("%*s |", w, class_label(m, i, name, sizeof name));
			for (int64_t j = 0; j < m->classes; j++) {
				LINE(" %*llu", w,
				     (unsigned long long)
				         m->confusion[i * m->classes + j]);
			}
			LINE("\n");
		}
	}
#undef LINE
	*out = (char *)b.data;
	return TF_OK;
}
