/*
 * test_plugin.c - the registry: descriptors of each ABI size, what an
 * optimizer says it takes, refusals.
 */
#include <stddef.h>

#include "test.h"

static void
apply(void *st, float *w, const float *g, float *const *slots, size_t n,
      uint64_t step, float lr)
{
	(void)st;
	(void)slots;
	(void)step;
	for (size_t i = 0; i < n; i++) {
		w[i] -= lr * g[i];
	}
}

static const struct tf_optimizer opts[] = {
    {"one", "takes rate", 0, NULL, NULL, NULL, apply},
    {"two", "does not say", 0, NULL, NULL, NULL, apply},
    {0},
};
static const char *const one_keys[] = {"rate", "decay", NULL};
static const char *const *const keys[] = {one_keys, NULL};

TEST(optimizer_keys_are_read_from_a_descriptor_that_has_them)
{
	static const struct tf_plugin p = {
	    TF_PLUGIN_ABI, sizeof(struct tf_plugin),
	    "keys",        "1",
	    NULL,          opts,
	    NULL,          keys,
	    NULL};
	struct tf_registry *r = tf_registry_new();
	CHECK_STATUS(tf_registry_add(r, &p, "/x/keys.so"), TF_OK, r);
	const char *const *k = tf_registry_optimizer_keys(r, "one");
	REQUIRE(k != NULL);
	CHECK(strcmp(k[0], "rate") == 0 && strcmp(k[1], "decay") == 0);
	CHECK(k[2] == NULL);
	CHECK(tf_registry_optimizer_keys(r, "two") == NULL);
	CHECK(tf_registry_optimizer_keys(r, "three") == NULL);
	tf_registry_free(r);
}

TEST(a_first_abi_descriptor_loads_and_its_keys_are_never_read)
{
	/* Built before optimizer_keys was appended: its size ends before
	 * the field, whose memory here holds garbage. */
	static const struct tf_plugin p = {
	    TF_PLUGIN_ABI, (uint32_t)offsetof(struct tf_plugin, optimizer_keys),
	    "old",         "1",
	    NULL,          opts,
	    NULL,          (const char *const *const *)(uintptr_t)0x1,
	    NULL};
	struct tf_registry *r = tf_registry_new();
	CHECK_STATUS(tf_registry_add(r, &p, "/x/old.so"), TF_OK, r);
	CHECK(tf_registry_optimizer(r, "one") != NULL);
	CHECK(tf_registry_optimizer_keys(r, "one") == NULL);
	tf_registry_free(r);
}

static int
sgd_update(const void *state, uint64_t step, float lr, struct tf_update *u)
{
	(void)state;
	(void)step;
	*u = (struct tf_update){.kind = TF_UPDATE_SGD, .lr = lr};
	return 0;
}
static const tf_update_fn updates[] = {sgd_update, NULL};

TEST(device_updates_are_read_only_from_a_descriptor_that_has_them)
{
	static const struct tf_plugin p = {
	    TF_PLUGIN_ABI, sizeof(struct tf_plugin),
	    "upd",         "1",
	    NULL,          opts,
	    NULL,          keys,
	    updates};
	struct tf_registry *r = tf_registry_new();
	CHECK_STATUS(tf_registry_add(r, &p, "/x/upd.so"), TF_OK, r);
	CHECK(tf_registry_optimizer_update(r, "one") == sgd_update);
	CHECK(tf_registry_optimizer_update(r, "two") == NULL);
	CHECK(tf_registry_optimizer_update(r, "nosuch") == NULL);
	tf_registry_free(r);
	/* Built when optimizer_keys was the last field: whatever follows
	 * it is never read. */
	static const struct tf_plugin old = {
	    TF_PLUGIN_ABI,
	    (uint32_t)(offsetof(struct tf_plugin, optimizer_keys) +
	               sizeof(void *)),
	    "oldkeys",
	    "1",
	    NULL,
	    opts,
	    NULL,
	    keys,
	    (const tf_update_fn *)(uintptr_t)0x1};
	r = tf_registry_new();
	CHECK_STATUS(tf_registry_add(r, &old, "/x/oldkeys.so"), TF_OK, r);
	CHECK(tf_registry_optimizer_keys(r, "one") != NULL);
	CHECK(tf_registry_optimizer_update(r, "one") == NULL);
	tf_registry_free(r);
}

TEST(a_short_or_foreign_descriptor_is_refused)
{
	static const struct tf_plugin tiny = {
	    TF_PLUGIN_ABI, 8, "tiny", "1", NULL, NULL, NULL, NULL, NULL};
	struct tf_registry *r = tf_registry_new();
	CHECK_STATUS(tf_registry_add(r, &tiny, "/x/tiny.so"), TF_EFORMAT, r);
	CHECK_CONTAINS(tf_errmsg(r), "/x/tiny.so: plugin ABI 1");
	tf_registry_free(r);
	static const struct tf_optimizer noapply[] = {
	    {"bad", "", 0, NULL, NULL, NULL, NULL}, {0}};
	static const struct tf_plugin p = {
	    TF_PLUGIN_ABI, sizeof(struct tf_plugin),
	    "bad",         "1",
	    NULL,          noapply,
	    NULL,          NULL,
	    NULL};
	r = tf_registry_new();
	CHECK_STATUS(tf_registry_add(r, &p, "/x/bad.so"), TF_EFORMAT, r);
	CHECK_CONTAINS(tf_errmsg(r), "optimizer 'bad' has no apply");
	tf_registry_free(r);
	r = tf_registry_new();
	CHECK_STATUS(tf_registry_load_file(r, "/no/such/plugin.so"), TF_EFORMAT,
	             r);
	CHECK_CONTAINS(tf_errmsg(r), "/no/such/plugin.so");
	tf_registry_free(r);
}

TEST(hparams_are_checked_against_the_keys)
{
	struct tf_hparams *h = tf_hparams_new();
	CHECK_STATUS(tf_hparams_parse(h, "rate=0.5"), TF_OK, h);
	CHECK_STATUS(tf_hparams_check(h, "one", one_keys), TF_OK, h);
	CHECK_STATUS(tf_hparams_check(h, "two", NULL), TF_OK, h);
	CHECK_STATUS(tf_hparams_parse(h, "weight_decay=1"), TF_OK, h);
	CHECK_STATUS(tf_hparams_check(h, "one", one_keys), TF_EINVAL, h);
	CHECK_CONTAINS(tf_errmsg(h),
	               "--opt weight_decay: optimizer 'one' takes rate, decay");
	tf_errclear(h);
	static const char *const none[] = {NULL};
	CHECK_STATUS(tf_hparams_check(h, "sgd", none), TF_EINVAL, h);
	CHECK_CONTAINS(tf_errmsg(h), "optimizer 'sgd' takes no settings");
	/* Order and values kept; a copy is equal. */
	struct tf_hparams *c = tf_hparams_copy(h);
	double v;
	CHECK_EQ_INT(tf_hparams_count(c), 2);
	CHECK(strcmp(tf_hparams_get(c, 1, &v), "weight_decay") == 0 && v == 1);
	CHECK(tf_hparams_get(c, 2, &v) == NULL);
	CHECK_STATUS(tf_hparams_parse(h, "rate=x"), TF_EINVAL, h);
	tf_hparams_free(c);
	tf_hparams_free(h);
}

int
main(void)
{
	RUN(optimizer_keys_are_read_from_a_descriptor_that_has_them);
	RUN(a_first_abi_descriptor_loads_and_its_keys_are_never_read);
	RUN(device_updates_are_read_only_from_a_descriptor_that_has_them);
	RUN(a_short_or_foreign_descriptor_is_refused);
	RUN(hparams_are_checked_against_the_keys);
	DONE();
}
