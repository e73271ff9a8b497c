/*
 * settings.h - a training run's settings, resolved in one place.
 *
 * Every setting tf-train takes is one entry of one table (settings.c)
 * holding its name (the long option), kind, default and range.  A value
 * comes from, in order of precedence: the command line, a --config file,
 * the latest checkpoint of --checkpoint-dir (a resumed run), the
 * default.  What a checkpoint fixes (the model, its optimizer, the
 * label and task) cannot be changed under it: a flag or config value
 * that differs is a usage error.  Settings that describe only this
 * invocation (where to write, what to validate on, threads) are never
 * taken from a checkpoint.
 *
 * tf_settings_json() is what the run uses and what its checkpoints
 * record: fed back as a --config file, it resolves to itself.
 */
#ifndef TF_SETTINGS_H
#define TF_SETTINGS_H

#include <stddef.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_settings;
struct tf_train_config;

/* Where a resolved value came from (tf_settings_source()). */
enum {
	TF_FROM_DEFAULT = 0,
	TF_FROM_CHECKPOINT = 1,
	TF_FROM_CONFIG = 2,
	TF_FROM_FLAG = 3
};

TF_API struct tf_settings *tf_settings_new(void);
TF_API void tf_settings_free(struct tf_settings *s);

/*
 * A command-line value of the setting called name (a long option without
 * its dashes; "true" for a flag that takes no value).  A repeatable
 * setting (opt, plugin-dir) adds to its list.  TF_EINVAL naming the
 * option for an unknown name or a bad value.
 */
TF_API int tf_settings_set(struct tf_settings *s, const char *name,
                           const char *value);
/*
 * Settings from a JSON object file: keys are setting names, values
 * strings or numbers (true or false for a flag; a list for opt and
 * plugin-dir).  TF_ENOENT when it cannot be opened, TF_EFORMAT naming
 * the file (and line) for anything else wrong in it.
 */
TF_API int tf_settings_load(struct tf_settings *s, const char *path);
/*
 * Resolve every setting: flags, config, the latest checkpoint of
 * checkpoint-dir (unless from-scratch), defaults.  TF_EINVAL for
 * settings that cannot run together or that change what the checkpoint
 * fixes; the checkpoint's own errors (TF_EFORMAT for a damaged one).
 */
TF_API int tf_settings_resolve(struct tf_settings *s);

/* A resolved value as text (NULL when unset), and where it came from. */
TF_API const char *tf_settings_get(const struct tf_settings *s,
                                   const char *name);
TF_API int tf_settings_source(const struct tf_settings *s, const char *name);
/* Item i of a list setting (NULL past its end). */
TF_API const char *tf_settings_item(const struct tf_settings *s,
                                    const char *name, size_t i);
/*
 * The resolved settings as a JSON object (pretty: indented), in the
 * table's order; the caller frees it.  NULL when out of memory.
 */
TF_API char *tf_settings_json(const struct tf_settings *s, int pretty);
/*
 * Fill a training config from the resolved settings.  Its strings, its
 * hparams and its settings (provenance) text point into s, which must
 * outlive the run.
 */
TF_API int tf_settings_config(struct tf_settings *s,
                              struct tf_train_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
