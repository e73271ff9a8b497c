/*
 * serving_pb.c - TensorFlow Serving's gRPC messages (protobuf-c): a
 * PredictRequest's tensors, or the Examples of a Classify or Regress
 * request, into a tf_request's rows; the responses, the signatures of
 * GetModelMetadata and the versions of GetModelStatus back, with TF
 * Serving's names, shapes and messages.  The transport is tf-serve's.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tensorflow_serving/apis/classification.pb-c.h"
#include "tensorflow_serving/apis/get_model_metadata.pb-c.h"
#include "tensorflow_serving/apis/get_model_status.pb-c.h"
#include "tensorflow_serving/apis/predict.pb-c.h"
#include "tensorflow_serving/apis/regression.pb-c.h"
#include "tf/dataset.h"
#include "tf/image.h"
#include "tf/serving.h"

static const ProtobufCMessageDescriptor *const request_desc[] = {
    [TF_METHOD_PREDICT] = &tensorflow__serving__predict_request__descriptor,
    [TF_METHOD_CLASSIFY] =
        &tensorflow__serving__classification_request__descriptor,
    [TF_METHOD_REGRESS] = &tensorflow__serving__regression_request__descriptor,
    [TF_METHOD_METADATA] =
        &tensorflow__serving__get_model_metadata_request__descriptor,
    [TF_METHOD_STATUS] =
        &tensorflow__serving__get_model_status_request__descriptor,
};

/* ---- the usual PredictRequest, read without protobuf-c -----------------
 *
 * protobuf-c spends most of a one-row request's time allocating: a
 * message, a shape and dims for each of its tensors.  quick_predict()
 * reads the wire format itself into storage q keeps (offsets while it
 * grows, pointers at the end), building the same structs unpacking
 * would, for the shapes clients send: packed numeric lists,
 * tensor_content, strings, rank <= 2, no field a singular message holds
 * given twice.  Anything else, including every malformed message, goes
 * to protobuf-c, whose answer is the reference (the tests compare).
 */
struct qtensor {
	int dtype, rank, unknown;
	int64_t dim[2];
	size_t key; /* offsets into the arena */
	size_t content, ncontent;
	int field; /* the repeated field that held values, or 0 */
	size_t vals, nvals;
	int shape; /* a tensor_shape was given */
};

struct tfi_pbview {
	Tensorflow__Serving__PredictRequest req;
	Tensorflow__Serving__ModelSpec spec;
	Google__Protobuf__Int64Value version;
	struct tfi_buf arena; /* strings and values */
	struct qtensor *qt;
	size_t nqt, capqt;
	struct qstr {
		size_t off, len;
	} * strs; /* string_val of every tensor, in order */
	size_t nstrs, capstrs;
	ProtobufCBinaryData *bins;
	size_t capbins;
	size_t filters[64], nfilters;
	size_t name, signature;
	/* the structs, once the tensors are known */
	Tensorflow__Serving__PredictRequest__InputsEntry *ent, **entp;
	Tensorflow__TensorProto *t;
	Tensorflow__TensorShapeProto *sh;
	Tensorflow__TensorShapeProto__Dim *dim, **dimp;
	char *filterp[64];
	size_t capstructs;
};

static void
view_free(struct tfi_pbview *v)
{
	if (v != NULL) {
		tfi_buf_free(&v->arena);
		free(v->qt);
		free(v->strs);
		free(v->bins);
		free(v->ent);
		free(v->entp);
		free(v->t);
		free(v->sh);
		free(v->dim);
		free(v->dimp);
		free(v);
	}
}

static void
free_pb(struct tf_request *q)
{
	if (q->pb != NULL && (q->view == NULL || q->pb != &q->view->req)) {
		protobuf_c_message_free_unpacked(q->pb, NULL);
	}
	q->pb = NULL;
}

/* tf_request_free()'s hook: what a gRPC request decoded holds. */
static void
release_pb(struct tf_request *q)
{
	free_pb(q);
	view_free(q->view);
	q->view = NULL;
}

struct wire {
	const uint8_t *p, *end;
};

static int
wvarint(struct wire *w, uint64_t *v)
{
	uint64_t x = 0;
	for (int s = 0; s < 64 && w->p < w->end; s += 7) {
		uint8_t b = *w->p++;
		x |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = x;
			return 1;
		}
	}
	return 0;
}

/* A length-delimited field's bytes. */
static int
wbytes(struct wire *w, struct wire *in)
{
	uint64_t n;
	if (!wvarint(w, &n) || n > (uint64_t)(w->end - w->p)) {
		return 0;
	}
	in->p = w->p;
	in->end = w->p + n;
	w->p += n;
	return 1;
}

static int
wskip(struct wire *w, int type)
{
	uint64_t v;
	struct wire in;
	switch (type) {
	case 0:
		return wvarint(w, &v);
	case 1:
		if (w->end - w->p < 8) {
			return 0;
		}
		w->p += 8;
		return 1;
	case 2:
		return wbytes(w, &in);
	case 5:
		if (w->end - w->p < 4) {
			return 0;
		}
		w->p += 4;
		return 1;
	default:
		return 0; /* groups: not in these messages */
	}
}

/* n bytes (of p) in the arena, 8-aligned: their offset, or (size_t)-1. */
static size_t
arena_put(struct tfi_pbview *v, const void *p, size_t n)
{
	size_t at = (v->arena.len + 7) & ~(size_t)7;
	if (tfi_buf_reserve(&v->arena, at - v->arena.len + n + 1) != 0) {
		return (size_t)-1;
	}
	if (p != NULL && n > 0) { /* NULL: room, filled by the caller */
		memcpy(v->arena.data + at, p, n);
	}
	v->arena.data[at + n] = '\0';
	v->arena.len = at + n + 1;
	return at;
}

/* A packed run of varints, decoded into int64s (or int32s) in the
 * arena. */
static int
varints(struct tfi_pbview *v, struct wire in, int wide, size_t *off, size_t *n)
{
	size_t k = 0;
	for (struct wire c = in; c.p < c.end; k++) {
		uint64_t x;
		if (!wvarint(&c, &x)) {
			return 0;
		}
	}
	size_t es = wide ? 8 : 4;
	size_t at = arena_put(v, NULL, k * es);
	if (at == (size_t)-1) {
		return 0;
	}
	for (size_t i = 0; i < k; i++) {
		uint64_t x = 0;
		wvarint(&in, &x);
		if (wide) {
			int64_t y = (int64_t)x;
			memcpy(v->arena.data + at + 8 * i, &y, 8);
		} else {
			int32_t y = (int32_t)x;
			memcpy(v->arena.data + at + 4 * i, &y, 4);
		}
	}
	*off = at;
	*n = k;
	return 1;
}

/* One TensorProto into qt; 0 for anything the quick reader leaves to
 * protobuf-c. */
static int
quick_tensor(struct tfi_pbview *v, struct wire w, struct qtensor *qt)
{
	while (w.p < w.end) {
		uint64_t tag, x;
		if (!wvarint(&w, &tag)) {
			return 0;
		}
		int type = (int)(tag & 7);
		uint64_t f = tag >> 3;
		struct wire in;
		if (f == 1 && type == 0) { /* dtype */
			if (!wvarint(&w, &x)) {
				return 0;
			}
			qt->dtype = (int)x;
		} else if (f == 2 && type == 2) { /* tensor_shape */
			if (qt->shape || !wbytes(&w, &in)) {
				return 0;
			}
			qt->shape = 1;
			while (in.p < in.end) {
				uint64_t t2;
				if (!wvarint(&in, &t2)) {
					return 0;
				}
				struct wire d;
				if (t2 == (2 << 3 | 2)) { /* dim */
					if (qt->rank == 2 || !wbytes(&in, &d)) {
						return 0;
					}
					int64_t size = 0;
					while (d.p < d.end) {
						uint64_t t3;
						if (!wvarint(&d, &t3)) {
							return 0;
						}
						if (t3 == (1 << 3 | 0)) {
							if (!wvarint(&d, &x)) {
								return 0;
							}
							size = (int64_t)x;
						} else if (t3 ==
						           (2 << 3 |
						            2)) { /* name */
							if (!wskip(&d, 2)) {
								return 0;
							}
						} else if ((t3 >> 3) <= 2 ||
						           !wskip(
						               &d,
						               (int)(t3 & 7))) {
							return 0; /* a known
							             field,
							             wrongly
							             typed */
						}
					}
					qt->dim[qt->rank++] = size;
				} else if (t2 ==
				           (3 << 3 | 0)) { /* unknown_rank */
					if (!wvarint(&in, &x)) {
						return 0;
					}
					qt->unknown = x != 0;
				} else if ((t2 >> 3) <= 3 ||
				           !wskip(&in, (int)(t2 & 7))) {
					return 0;
				}
			}
		} else if (f == 4 && type == 2) { /* tensor_content */
			if (qt->ncontent || !wbytes(&w, &in)) {
				return 0;
			}
			qt->ncontent = (size_t)(in.end - in.p);
			qt->content = arena_put(v, in.p, qt->ncontent);
			if (qt->content == (size_t)-1) {
				return 0;
			}
		} else if ((f == 5 || f == 6 || f == 7 || f == 10 || f == 8) &&
		           type == 2) {
			/* float_val, double_val, int_val, int64_val (one
			 * packed run each), string_val (any number) */
			if (qt->field != 0 && (qt->field != 8 || f != 8)) {
				return 0;
			}
			if (!wbytes(&w, &in)) {
				return 0;
			}
			qt->field = (int)f;
			size_t n = (size_t)(in.end - in.p);
			if (f ==
			    8) { /* this tensor's strings are consecutive */
				size_t at = arena_put(v, in.p, n);
				if (at == (size_t)-1) {
					return 0;
				}
				if (v->nstrs == v->capstrs) {
					size_t cap =
					    v->capstrs ? 2 * v->capstrs : 64;
					struct qstr *p =
					    realloc(v->strs, cap * sizeof *p);
					if (p == NULL) {
						return 0;
					}
					v->strs = p;
					v->capstrs = cap;
				}
				if (qt->nvals == 0) {
					qt->vals = v->nstrs;
				}
				v->strs[v->nstrs++] = (struct qstr){at, n};
				qt->nvals++;
				continue;
			}
			if (f == 7 || f == 10) {
				if (!varints(v, in, f == 10, &qt->vals,
				             &qt->nvals)) {
					return 0;
				}
				continue;
			}
			size_t es = f == 5 ? 4 : 8;
			if (n % es != 0) {
				return 0;
			}
			qt->vals = arena_put(v, in.p, n);
			qt->nvals = n / es;
			if (qt->vals == (size_t)-1) {
				return 0;
			}
		} else if (f <= 17 && (f != 3 || type != 0)) {
			return 0; /* another typed field, or unpacked values */
		} else if (!wskip(&w, type)) {
			return 0;
		}
	}
	return 1;
}

static int
quick_model_spec(struct tfi_pbview *v, struct wire w)
{
	int have_version = 0;
	while (w.p < w.end) {
		uint64_t tag, x;
		struct wire in;
		if (!wvarint(&w, &tag)) {
			return 0;
		}
		uint64_t f = tag >> 3;
		int type = (int)(tag & 7);
		if ((f == 1 || f == 3) && type == 2) {
			if (!wbytes(&w, &in)) {
				return 0;
			}
			size_t at = arena_put(v, in.p, (size_t)(in.end - in.p));
			if (at == (size_t)-1) {
				return 0;
			}
			*(f == 1 ? &v->name : &v->signature) = at;
		} else if (f == 2 && type == 2 && !have_version) {
			if (!wbytes(&w, &in)) {
				return 0;
			}
			have_version = 1;
			v->version.value = 0;
			while (in.p < in.end) {
				uint64_t t2;
				if (!wvarint(&in, &t2)) {
					return 0;
				}
				if (t2 == (1 << 3 | 0)) {
					if (!wvarint(&in, &x)) {
						return 0;
					}
					v->version.value = (int64_t)x;
				} else if ((t2 >> 3) <= 1 ||
				           !wskip(&in, (int)(t2 & 7))) {
					return 0;
				}
			}
			v->spec.version_choice_case =
			    TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION;
		} else if (f <= 4 || !wskip(&w, type)) {
			/* a version label, two versions, a known field wrongly
			 * typed */
			return 0;
		}
	}
	return 1;
}

/* The structs over the arena, now that it no longer moves. */
static int
view_structs(struct tfi_pbview *v)
{
	size_t n = v->nqt;
	if (n > v->capstructs) {
		size_t cap = n;
		free(v->ent);
		free(v->entp);
		free(v->t);
		free(v->sh);
		free(v->dim);
		free(v->dimp);
		v->ent = calloc(cap, sizeof *v->ent);
		v->entp = calloc(cap, sizeof *v->entp);
		v->t = calloc(cap, sizeof *v->t);
		v->sh = calloc(cap, sizeof *v->sh);
		v->dim = calloc(2 * cap, sizeof *v->dim);
		v->dimp = calloc(2 * cap, sizeof *v->dimp);
		v->capstructs = 0;
		if (!v->ent || !v->entp || !v->t || !v->sh || !v->dim ||
		    !v->dimp) {
			return 0;
		}
		v->capstructs = cap;
	}
	if (v->nstrs > v->capbins) {
		free(v->bins);
		v->capbins = 0;
		if ((v->bins = calloc(v->nstrs, sizeof *v->bins)) == NULL) {
			return 0;
		}
		v->capbins = v->nstrs;
	}
	uint8_t *a = v->arena.data;
	for (size_t i = 0; i < v->nstrs; i++) {
		v->bins[i].data = a + v->strs[i].off;
		v->bins[i].len = v->strs[i].len;
	}
	for (size_t i = 0; i < n; i++) {
		const struct qtensor *qt = &v->qt[i];
		Tensorflow__TensorProto *t = &v->t[i];
		tensorflow__tensor_proto__init(t);
		t->dtype = qt->dtype;
		if (qt->shape) {
			Tensorflow__TensorShapeProto *sh = &v->sh[i];
			tensorflow__tensor_shape_proto__init(sh);
			for (int k = 0; k < qt->rank; k++) {
				tensorflow__tensor_shape_proto__dim__init(
				    &v->dim[2 * i + (size_t)k]);
				v->dim[2 * i + (size_t)k].size = qt->dim[k];
				v->dimp[2 * i + (size_t)k] =
				    &v->dim[2 * i + (size_t)k];
			}
			sh->n_dim = (size_t)qt->rank;
			sh->dim = &v->dimp[2 * i];
			sh->unknown_rank = qt->unknown;
			t->tensor_shape = sh;
		}
		if (qt->ncontent) {
			t->tensor_content.data = a + qt->content;
			t->tensor_content.len = qt->ncontent;
		}
		switch (qt->field) {
		case 5:
			t->float_val = (float *)(void *)(a + qt->vals);
			t->n_float_val = qt->nvals;
			break;
		case 6:
			t->double_val = (double *)(void *)(a + qt->vals);
			t->n_double_val = qt->nvals;
			break;
		case 7:
			t->int_val = (int32_t *)(void *)(a + qt->vals);
			t->n_int_val = qt->nvals;
			break;
		case 10:
			t->int64_val = (int64_t *)(void *)(a + qt->vals);
			t->n_int64_val = qt->nvals;
			break;
		case 8:
			t->string_val = v->bins + qt->vals;
			t->n_string_val = qt->nvals;
			break;
		default:
			break;
		}
		tensorflow__serving__predict_request__inputs_entry__init(
		    &v->ent[i]);
		v->ent[i].key = (char *)(a + qt->key);
		v->ent[i].value = t;
		v->entp[i] = &v->ent[i];
	}
	return 1;
}

/* A PredictRequest into q->view; 0 to leave it to protobuf-c. */
static int
quick_predict(struct tf_request *q, const uint8_t *msg, size_t len)
{
	if (q->view == NULL && (q->view = calloc(1, sizeof *q->view)) == NULL) {
		return 0;
	}
	struct tfi_pbview *v = q->view;
	v->arena.len = 0;
	v->nqt = v->nfilters = v->nstrs = 0;
	tensorflow__serving__predict_request__init(&v->req);
	tensorflow__serving__model_spec__init(&v->spec);
	google__protobuf__int64_value__init(&v->version);
	v->name = v->signature = (size_t)-1;
	int have_spec = 0;
	struct wire w = {msg, msg + len};
	while (w.p < w.end) {
		uint64_t tag;
		struct wire in;
		if (!wvarint(&w, &tag)) {
			return 0;
		}
		uint64_t f = tag >> 3;
		int type = (int)(tag & 7);
		if (f == 1 && type == 2) {
			if (have_spec || !wbytes(&w, &in) ||
			    !quick_model_spec(v, in)) {
				return 0;
			}
			have_spec = 1;
		} else if (f == 2 && type == 2) {
			if (!wbytes(&w, &in)) {
				return 0;
			}
			if (v->nqt == v->capqt) {
				size_t cap = v->capqt ? 2 * v->capqt : 64;
				struct qtensor *p =
				    realloc(v->qt, cap * sizeof *p);
				if (p == NULL) {
					return 0;
				}
				v->qt = p;
				v->capqt = cap;
			}
			struct qtensor *qt = &v->qt[v->nqt++];
			memset(qt, 0, sizeof *qt);
			qt->key = (size_t)-1;
			int have_value = 0;
			while (in.p < in.end) {
				uint64_t t2;
				struct wire e;
				if (!wvarint(&in, &t2)) {
					return 0;
				}
				if (t2 == (1 << 3 | 2) &&
				    qt->key == (size_t)-1) {
					if (!wbytes(&in, &e) ||
					    (qt->key = arena_put(
					         v, e.p,
					         (size_t)(e.end - e.p))) ==
					        (size_t)-1) {
						return 0;
					}
				} else if (t2 == (2 << 3 | 2) && !have_value) {
					if (!wbytes(&in, &e) ||
					    !quick_tensor(v, e, qt)) {
						return 0;
					}
					have_value = 1;
				} else {
					return 0;
				}
			}
			if (!have_value || qt->key == (size_t)-1) {
				return 0;
			}
		} else if (f == 3 && type == 2) {
			if (v->nfilters == 64 || !wbytes(&w, &in)) {
				return 0;
			}
			size_t at = arena_put(v, in.p, (size_t)(in.end - in.p));
			if (at == (size_t)-1) {
				return 0;
			}
			v->filters[v->nfilters++] = at;
		} else if (f <= 3 || !wskip(&w, type)) {
			return 0;
		}
	}
	if (!view_structs(v)) {
		return 0;
	}
	uint8_t *a = v->arena.data;
	if (have_spec) {
		v->spec.name = v->name == (size_t)-1
		                   ? (char *)protobuf_c_empty_string
		                   : (char *)(a + v->name);
		v->spec.signature_name = v->signature == (size_t)-1
		                             ? (char *)protobuf_c_empty_string
		                             : (char *)(a + v->signature);
		if (v->spec.version_choice_case ==
		    TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION) {
			v->spec.version = &v->version;
		}
		v->req.model_spec = &v->spec;
	}
	v->req.n_inputs = v->nqt;
	v->req.inputs = v->entp;
	for (size_t i = 0; i < v->nfilters; i++) {
		v->filterp[i] = (char *)(a + v->filters[i]);
	}
	v->req.n_output_filter = v->nfilters;
	v->req.output_filter = v->filterp;
	q->pb = &v->req;
	return 1;
}

/* Every request message has its ModelSpec as field 1. */
static const Tensorflow__Serving__ModelSpec *
spec_of(const struct tf_request *q)
{
	switch (q->method) {
	case TF_METHOD_PREDICT:
		return ((Tensorflow__Serving__PredictRequest *)q->pb)
		    ->model_spec;
	case TF_METHOD_CLASSIFY:
		return ((Tensorflow__Serving__ClassificationRequest *)q->pb)
		    ->model_spec;
	case TF_METHOD_REGRESS:
		return ((Tensorflow__Serving__RegressionRequest *)q->pb)
		    ->model_spec;
	case TF_METHOD_METADATA:
		return ((Tensorflow__Serving__GetModelMetadataRequest *)q->pb)
		    ->model_spec;
	default:
		return ((Tensorflow__Serving__GetModelStatusRequest *)q->pb)
		    ->model_spec;
	}
}

int
tf_request_decode_pb(struct tf_request *q, int method, const void *msg,
                     size_t len, struct tf_model_spec *spec)
{
	tf_errclear(q);
	free_pb(q);
	q->release_pb = release_pb;
	q->precondition = 0;
	*spec = (struct tf_model_spec){"", -1, NULL, ""};
	if (method < 0 || method > TF_METHOD_STATUS ||
	    request_desc[method] == NULL) {
		return tfi_set_error(q, TF_EINVAL, "no such method");
	}
	q->method = method;
	if (method == TF_METHOD_PREDICT && !q->no_quick &&
	    quick_predict(q, msg, len)) {
		q->quick_hits++;
	} else {
		q->pb = protobuf_c_message_unpack(request_desc[method], NULL,
		                                  len, msg);
	}
	if (q->pb == NULL) {
		return tfi_request_bad(q, "the request is not a valid %s",
		                       request_desc[method]->name);
	}
	const Tensorflow__Serving__ModelSpec *ms = spec_of(q);
	if (ms == NULL) {
		return tfi_request_bad(q, "Missing ModelSpec");
	}
	spec->name = ms->name;
	spec->signature = ms->signature_name;
	if (ms->version_choice_case ==
	        TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION &&
	    ms->version != NULL) {
		spec->version = ms->version->value;
		if (spec->version < 0) {
			return tfi_request_bad(q, "version %lld is negative",
			                       (long long)spec->version);
		}
	} else if (
	    ms->version_choice_case ==
	    TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION_LABEL) {
		spec->label = ms->version_label;
	}
	return TF_OK;
}

/* ---- tensors in ----------------------------------------------------------
 */

static const char *
dtype_name(int t)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
	    &tensorflow__data_type__descriptor, t);
	return v ? v->name : "an unknown dtype";
}

/* Bytes an element takes in tensor_content (0: no such encoding). */
static size_t
elem_size(int t)
{
	switch (t) {
	case TENSORFLOW__DATA_TYPE__DT_DOUBLE:
	case TENSORFLOW__DATA_TYPE__DT_INT64:
	case TENSORFLOW__DATA_TYPE__DT_UINT64:
		return 8;
	case TENSORFLOW__DATA_TYPE__DT_FLOAT:
	case TENSORFLOW__DATA_TYPE__DT_INT32:
	case TENSORFLOW__DATA_TYPE__DT_UINT32:
		return 4;
	case TENSORFLOW__DATA_TYPE__DT_INT16:
	case TENSORFLOW__DATA_TYPE__DT_UINT16:
	case TENSORFLOW__DATA_TYPE__DT_HALF:
	case TENSORFLOW__DATA_TYPE__DT_BFLOAT16:
		return 2;
	case TENSORFLOW__DATA_TYPE__DT_INT8:
	case TENSORFLOW__DATA_TYPE__DT_UINT8:
	case TENSORFLOW__DATA_TYPE__DT_BOOL:
		return 1;
	default:
		return 0;
	}
}

/* Values the typed field of t's dtype holds. */
static size_t
typed_count(const Tensorflow__TensorProto *t)
{
	switch (t->dtype) {
	case TENSORFLOW__DATA_TYPE__DT_FLOAT:
		return t->n_float_val;
	case TENSORFLOW__DATA_TYPE__DT_DOUBLE:
		return t->n_double_val;
	case TENSORFLOW__DATA_TYPE__DT_INT64:
		return t->n_int64_val;
	case TENSORFLOW__DATA_TYPE__DT_UINT32:
		return t->n_uint32_val;
	case TENSORFLOW__DATA_TYPE__DT_UINT64:
		return t->n_uint64_val;
	case TENSORFLOW__DATA_TYPE__DT_BOOL:
		return t->n_bool_val;
	case TENSORFLOW__DATA_TYPE__DT_HALF:
	case TENSORFLOW__DATA_TYPE__DT_BFLOAT16:
		return t->n_half_val;
	case TENSORFLOW__DATA_TYPE__DT_STRING:
		return t->n_string_val;
	default: /* int32, int16, uint16, int8, uint8 */
		return t->n_int_val;
	}
}

static float
half_to_float(uint16_t h)
{
	int e = (h >> 10) & 0x1f, f = h & 0x3ff;
	float v = e == 0    ? ldexpf((float)f, -24)
	          : e == 31 ? (f ? NAN : INFINITY)
	                    : ldexpf((float)(f | 0x400), e - 25);
	return h & 0x8000 ? -v : v;
}

/* Element i of a numeric tensor (from tensor_content when it is set). */
static float
element(const Tensorflow__TensorProto *t, size_t i)
{
	if (t->tensor_content.len > 0) {
		const uint8_t *p =
		    t->tensor_content.data + i * elem_size(t->dtype);
		union {
			float f;
			double d;
			int64_t i64;
			uint64_t u64;
			int32_t i32;
			uint32_t u32;
			int16_t i16;
			uint16_t u16;
		} u;
		memcpy(&u, p, elem_size(t->dtype)); /* little-endian hosts */
		switch (t->dtype) {
		case TENSORFLOW__DATA_TYPE__DT_FLOAT:
			return u.f;
		case TENSORFLOW__DATA_TYPE__DT_DOUBLE:
			return (float)u.d;
		case TENSORFLOW__DATA_TYPE__DT_INT64:
			return (float)u.i64;
		case TENSORFLOW__DATA_TYPE__DT_UINT64:
			return (float)u.u64;
		case TENSORFLOW__DATA_TYPE__DT_INT32:
			return (float)u.i32;
		case TENSORFLOW__DATA_TYPE__DT_UINT32:
			return (float)u.u32;
		case TENSORFLOW__DATA_TYPE__DT_INT16:
			return (float)u.i16;
		case TENSORFLOW__DATA_TYPE__DT_UINT16:
			return (float)u.u16;
		case TENSORFLOW__DATA_TYPE__DT_HALF:
			return half_to_float(u.u16);
		case TENSORFLOW__DATA_TYPE__DT_BFLOAT16: {
			uint32_t b = (uint32_t)u.u16 << 16;
			float f;
			memcpy(&f, &b, sizeof f);
			return f;
		}
		case TENSORFLOW__DATA_TYPE__DT_INT8:
			return (float)(int8_t)p[0];
		default: /* uint8, bool */
			return (float)p[0];
		}
	}
	switch (t->dtype) {
	case TENSORFLOW__DATA_TYPE__DT_FLOAT:
		return t->float_val[i];
	case TENSORFLOW__DATA_TYPE__DT_DOUBLE:
		return (float)t->double_val[i];
	case TENSORFLOW__DATA_TYPE__DT_INT64:
		return (float)t->int64_val[i];
	case TENSORFLOW__DATA_TYPE__DT_UINT32:
		return (float)t->uint32_val[i];
	case TENSORFLOW__DATA_TYPE__DT_UINT64:
		return (float)t->uint64_val[i];
	case TENSORFLOW__DATA_TYPE__DT_BOOL:
		return t->bool_val[i] ? 1.0f : 0.0f;
	case TENSORFLOW__DATA_TYPE__DT_HALF:
		return half_to_float((uint16_t)t->half_val[i]);
	case TENSORFLOW__DATA_TYPE__DT_BFLOAT16: {
		uint32_t b = (uint32_t)(uint16_t)t->half_val[i] << 16;
		float f;
		memcpy(&f, &b, sizeof f);
		return f;
	}
	default:
		return (float)t->int_val[i];
	}
}

/* The values t holds (tensor_content's, or its typed field's). */
static int
value_count(struct tf_request *q, const char *name,
            const Tensorflow__TensorProto *t, size_t *have)
{
	if (t->tensor_content.len > 0) {
		size_t es = elem_size(t->dtype);
		if (t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING || es == 0 ||
		    t->tensor_content.len % es != 0) {
			return tfi_request_bad(
			    q,
			    "input '%s': tensor_content of %zu bytes is not "
			    "a whole number of %s",
			    name, t->tensor_content.len, dtype_name(t->dtype));
		}
		*have = t->tensor_content.len / es;
	} else {
		*have = typed_count(t);
	}
	return TF_OK;
}

/* Element i of an integer tensor, all 64 bits (ids: an int64's bits are
 * a uint64 id's). */
static uint64_t
id_element(const Tensorflow__TensorProto *t, size_t i)
{
	if (t->tensor_content.len > 0) {
		const uint8_t *p =
		    t->tensor_content.data + i * elem_size(t->dtype);
		if (elem_size(t->dtype) == 8) {
			uint64_t u;
			memcpy(&u, p, sizeof u); /* little-endian hosts */
			return u;
		}
		int32_t v;
		memcpy(&v, p, sizeof v);
		return (uint64_t)(int64_t)v;
	}
	switch (t->dtype) {
	case TENSORFLOW__DATA_TYPE__DT_INT64:
		return (uint64_t)t->int64_val[i];
	case TENSORFLOW__DATA_TYPE__DT_UINT64:
		return t->uint64_val[i];
	default: /* int32 */
		return (uint64_t)(int64_t)t->int_val[i];
	}
}

/* A tensor's dims as [d0, d1, ...] for messages. */
static void
shape_text(const Tensorflow__TensorProto *t, char *out, size_t len)
{
	const Tensorflow__TensorShapeProto *sh = t->tensor_shape;
	snprintf(out, len, "[");
	for (size_t k = 0; sh != NULL && k < sh->n_dim && k < 6; k++) {
		size_t n = strlen(out);
		snprintf(out + n, len - n, "%s%lld", k ? ", " : "",
		         (long long)sh->dim[k]->size);
	}
	size_t n = strlen(out);
	snprintf(out + n, len - n, "%s",
	         sh != NULL && sh->n_dim > 6 ? ", ...]" : "]");
}

/* Whether t is an integer tensor of ids (int64, uint64 or int32). */
static int
id_dtype(int d)
{
	return d == TENSORFLOW__DATA_TYPE__DT_INT64 ||
	       d == TENSORFLOW__DATA_TYPE__DT_UINT64 ||
	       d == TENSORFLOW__DATA_TYPE__DT_INT32;
}

/* An optional 'lengths' input: rows integers (each a row's unit, ids or
 * steps), or refused naming what it holds; TF_OK without one. */
static int
lengths_ok(struct tf_request *q, const Tensorflow__TensorProto *lens,
           size_t rows, const char *unit)
{
	size_t have = 0;
	if (lens == NULL) {
		return TF_OK;
	}
	if (value_count(q, "lengths", lens, &have) != TF_OK) {
		return TF_EINVAL;
	}
	if (!id_dtype(lens->dtype) || have != rows) {
		return tfi_request_bad(q,
		                       "input 'lengths' takes %zu integers (a "
		                       "row's %s); got %zu of %s",
		                       rows, unit, have,
		                       dtype_name(lens->dtype));
	}
	return TF_OK;
}

/* The rows of a sequence input's padded tensor: [n, T] of tokens
 * (DT_STRING, or integers for int64 tokens) or of one number a step,
 * [n, T, F] of F numbers a step; T in *steps. */
static int
seq_rows(struct tf_request *q, const struct tf_model *m, const char *name,
         const struct tfi_input *in, const Tensorflow__TensorProto *t,
         size_t *rows, size_t *steps)
{
	int kind = tfi_request_seq_kind(m);
	int64_t fw = in->width / in->steps;
	const Tensorflow__TensorShapeProto *sh = t->tensor_shape;
	size_t rank = sh ? sh->n_dim : 0;
	int dt_ok = kind == TFI_SEQ_STRINGS
	                ? t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING
	            : kind == TFI_SEQ_INTEGERS
	                ? id_dtype(t->dtype)
	                : t->dtype != TENSORFLOW__DATA_TYPE__DT_STRING &&
	                      elem_size(t->dtype) != 0;
	int shape_ok =
	    (rank == 2 && (kind != TFI_SEQ_NUMBERS || fw == 1)) ||
	    (rank == 3 && kind == TFI_SEQ_NUMBERS && sh->dim[2]->size == fw);
	if (!dt_ok || !shape_ok || sh->dim[0]->size < 1 ||
	    sh->dim[1]->size < 0) {
		char got[96];
		shape_text(t, got, sizeof got);
		return tfi_request_bad(
		    q,
		    "input '%s' is a sequence: %s of shape [rows, steps%s] "
		    "(padded; 'lengths' gives each row's steps); got %s of "
		    "shape %s",
		    name,
		    kind == TFI_SEQ_STRINGS    ? "DT_STRING tokens"
		    : kind == TFI_SEQ_INTEGERS ? "integer tokens"
		                               : "numbers",
		    kind == TFI_SEQ_NUMBERS && fw > 1 ? ", values a step" : "",
		    dtype_name(t->dtype), got);
	}
	size_t n = (size_t)sh->dim[0]->size, T = (size_t)sh->dim[1]->size;
	size_t have = 0,
	       want = n * T * (kind == TFI_SEQ_NUMBERS ? (size_t)fw : 1);
	if (kind == TFI_SEQ_STRINGS) {
		have = t->n_string_val;
	} else if (value_count(q, name, t, &have) != TF_OK) {
		return TF_EINVAL;
	}
	if (have != want) {
		return tfi_request_bad(q,
		                       "input '%s': %zu values for its shape "
		                       "of %zu",
		                       name, have, want);
	}
	*rows = n;
	*steps = T;
	return TF_OK;
}

/* A sequence input's rows from its padded tensor (T steps a row): each
 * row's steps as 'lengths' says, else up to its first padding (an empty
 * string, a -1 token) or, for numbers, all T. */
static int
seq_values(struct tf_request *q, const struct tf_model *m,
           const struct tfi_input *in, const Tensorflow__TensorProto *t,
           const Tensorflow__TensorProto *lens, size_t rows, size_t T)
{
	int kind = tfi_request_seq_kind(m);
	size_t fw = (size_t)(in->width / in->steps);
	if (lengths_ok(q, lens, rows, "steps") != TF_OK) {
		return TF_EINVAL;
	}
	const void **tok = calloc(T + 1, sizeof *tok);
	size_t *tok_len = calloc(T + 1, sizeof *tok_len);
	int64_t *itok = calloc(T + 1, sizeof *itok);
	float *vals = calloc(T * fw + 1, sizeof *vals);
	int rc = tok && tok_len && itok && vals
	             ? TF_OK
	             : tfi_set_error(q, TF_ENOMEM, "out of memory");
	for (size_t r = 0; rc == TF_OK && r < rows; r++) {
		size_t len = T;
		if (lens != NULL) {
			uint64_t l = id_element(lens, r);
			if (l > T) {
				rc = tfi_request_bad(
				    q,
				    "input 'lengths': row %zu: %lld steps of "
				    "the %zu the tensor has",
				    r, (long long)(int64_t)l, T);
				break;
			}
			len = (size_t)l;
		}
		for (size_t j = 0; j < len; j++) {
			size_t i = r * T + j;
			if (kind == TFI_SEQ_STRINGS) {
				tok[j] = t->string_val[i].data
				             ? t->string_val[i].data
				             : (const uint8_t *)"";
				tok_len[j] = t->string_val[i].len;
				if (lens == NULL && tok_len[j] == 0) {
					len = j;
				}
			} else if (kind == TFI_SEQ_INTEGERS) {
				itok[j] = (int64_t)id_element(t, i);
				if (lens == NULL && itok[j] == -1) {
					len = j;
				}
			} else {
				for (size_t f = 0; f < fw; f++) {
					vals[j * fw + f] =
					    element(t, i * fw + f);
				}
			}
		}
		tfi_request_seq_row(q, m, in, r, (int64_t)len, tok, tok_len,
		                    itok, vals);
	}
	free(tok), free(tok_len), free(itok), free(vals);
	return rc;
}

/*
 * Predict for a model of sparse ids: "ids" (int64, uint64 or int32; an
 * int64's bits are a uint64 id's) of shape [n, k], each row's ids first
 * and padding after; "values" (numbers, the same shape; each 1 without
 * it); "lengths" (integers, shape [n]: each row's ids; without it a row's
 * ids end at its first -1, so an id of 2^64-1 needs lengths); any
 * numeric feature beside them, by name, a value a row.  Each row as the
 * REST API's {"ids": [...], "values": [...], NAME: number}.
 */
static int tensor_rows(struct tf_request *q, const char *name,
                       const struct tfi_input *in,
                       const Tensorflow__TensorProto *t, size_t *rows);
static int tensor_values(struct tf_request *q, const struct tf_model *m,
                         const char *name, const struct tfi_input *in,
                         const Tensorflow__TensorProto *t, size_t rows);
static int predict_bag_rows(struct tf_request *q, const struct tf_model *m,
                            const Tensorflow__TensorProto *const t[3],
                            size_t max_rows);

static int
predict_bag(struct tf_request *q, const struct tf_model *m, size_t max_rows)
{
	const Tensorflow__Serving__PredictRequest *pr = q->pb;
	const Tensorflow__TensorProto *t[3] = {NULL, NULL, NULL};
	static const char *const names[3] = {"ids", "values", "lengths"};
	static const Tensorflow__TensorProto empty =
	    TENSORFLOW__TENSOR_PROTO__INIT;
	/* numeric features beside the ids: a tensor of a value a row each,
	 * their columns after the bag's */
	int64_t bw, bv, width = q->in.width;
	tf_columns_bag(tf_model_columns((struct tf_model *)m), &bw, &bv);
	size_t nnum = 0;
	const Tensorflow__TensorProto **num =
	    calloc((size_t)(width - bw) + 1, sizeof *num);
	struct tfi_input *in = calloc((size_t)(width - bw) + 1, sizeof *in);
	if (num == NULL || in == NULL) {
		free(num);
		free(in);
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	int rc = TF_OK;
	for (size_t i = 0; rc == TF_OK && i < pr->n_inputs; i++) {
		const char *name = pr->inputs[i]->key;
		const Tensorflow__TensorProto *v =
		    pr->inputs[i]->value ? pr->inputs[i]->value : &empty;
		int j = 0;
		while (j < 3 && strcmp(name, names[j]) != 0) {
			j++;
		}
		if (j == 3 && nnum < (size_t)(width - bw) &&
		    tfi_columns_input(tf_model_columns((struct tf_model *)m),
		                      name, &in[nnum]) &&
		    in[nnum].col >= bw && in[nnum].col < width) {
			num[nnum++] = v;
		} else if (j == 3) {
			rc = tfi_request_bad(
			    q,
			    "input tensor alias not found in signature: %s. "
			    "Inputs expected to be in the set {ids, values, "
			    "lengths%s} (a model of sparse ids)",
			    name, width > bw ? ", its numeric features" : "");
		} else {
			t[j] = v;
		}
	}
	if (rc == TF_OK && nnum != (size_t)(width - bw)) {
		rc = tfi_request_bad(q,
		                     "%zu of the model's %lld numeric features "
		                     "given (a tensor of a value a row each)",
		                     nnum, (long long)(width - bw));
	}
	if (rc == TF_OK) {
		rc = predict_bag_rows(q, m, t, max_rows);
	}
	/* each as a Predict of numeric columns reads it */
	for (size_t k = 0; rc == TF_OK && k < nnum; k++) {
		size_t got = 0;
		if (tensor_rows(q, in[k].name, &in[k], num[k], &got) != TF_OK) {
			rc = TF_EINVAL;
		} else if (got != q->in.rows) {
			rc = tfi_request_bad(
			    q,
			    "a numeric feature takes a number a "
			    "row (%zu); got %zu of %s",
			    q->in.rows, got, dtype_name(num[k]->dtype));
		} else if ((rc = tensor_values(q, m, in[k].name, &in[k], num[k],
		                               q->in.rows)) != TF_OK) {
			rc = rc == TF_ENOMEM ? rc : TF_EINVAL;
		}
	}
	free(num);
	free(in);
	return rc;
}

/* The ids (values, lengths) of a sparse model's Predict: t. */
static int
predict_bag_rows(struct tf_request *q, const struct tf_model *m,
                 const Tensorflow__TensorProto *const t[3], size_t max_rows)
{
	const Tensorflow__TensorProto *ids = t[0], *vals = t[1], *lens = t[2];
	if (ids == NULL) {
		return tfi_request_bad(q, "missing input 'ids' (a model of "
		                          "sparse ids: [rows, ids a row])");
	}
	const Tensorflow__TensorShapeProto *sh = ids->tensor_shape;
	size_t have, vhave = 0;
	if (!id_dtype(ids->dtype) || sh == NULL || sh->n_dim != 2 ||
	    sh->dim[0]->size < 1 || sh->dim[1]->size < 0) {
		char got[96];
		shape_text(ids, got, sizeof got);
		return tfi_request_bad(q,
		                       "input 'ids' takes integers (DT_INT64, "
		                       "DT_UINT64 or DT_INT32) of shape [rows, "
		                       "ids a row]; got %s of shape %s",
		                       dtype_name(ids->dtype), got);
	}
	size_t n = (size_t)sh->dim[0]->size, k = (size_t)sh->dim[1]->size;
	if (value_count(q, "ids", ids, &have) != TF_OK ||
	    (vals != NULL && value_count(q, "values", vals, &vhave) != TF_OK)) {
		return TF_EINVAL;
	}
	if (have != n * k) {
		return tfi_request_bad(q,
		                       "input 'ids': %zu values for its shape "
		                       "of %zu",
		                       have, n * k);
	}
	if (vals != NULL && (vals->dtype == TENSORFLOW__DATA_TYPE__DT_STRING ||
	                     elem_size(vals->dtype) == 0 || vhave != n * k)) {
		return tfi_request_bad(q,
		                       "input 'values' takes %zu numbers (the "
		                       "shape of 'ids'); got %zu of %s",
		                       n * k, vhave, dtype_name(vals->dtype));
	}
	if (lengths_ok(q, lens, n, "ids") != TF_OK) {
		return TF_EINVAL;
	}
	int rc = tfi_request_room(q, n, max_rows, "rows");
	if (rc != TF_OK) {
		return rc;
	}
	for (size_t r = 0; r < n; r++) {
		char what[48];
		snprintf(what, sizeof what, "row %zu", r);
		size_t len = 0;
		if (lens != NULL) {
			uint64_t l = id_element(lens, r);
			if (l > k) {
				return tfi_request_bad(
				    q, "%s: a length of %lld (of %zu ids)",
				    what, (long long)(int64_t)l, k);
			}
			len = (size_t)l;
		} else {
			while (len < k &&
			       id_element(ids, r * k + len) != UINT64_MAX) {
				len++;
			}
		}
		if (tfi_request_bag_row(q, m, what, r, len, vals ? len : 0) !=
		    TF_OK) {
			return TF_EINVAL;
		}
		for (size_t j = 0; j < len; j++) {
			float v = vals ? element(vals, r * k + j) : 1.0f;
			if (tfi_request_bag_id(q, m, what, r, j,
			                       id_element(ids, r * k + j),
			                       v) != TF_OK) {
				return TF_EINVAL;
			}
		}
	}
	q->in.rows = n;
	return TF_OK;
}

/* The rows a tensor for input in holds: shape [n] or [n, 1] for one
 * column, [n, width] for a list; scalar for one row of one column. */
static int
tensor_rows(struct tf_request *q, const char *name, const struct tfi_input *in,
            const Tensorflow__TensorProto *t, size_t *rows)
{
	const Tensorflow__TensorShapeProto *sh = t->tensor_shape;
	size_t rank = sh ? sh->n_dim : 0;
	int64_t d0 = rank > 0 ? sh->dim[0]->size : 1;
	int64_t d1 = rank > 1 ? sh->dim[1]->size : 1;
	int ok = rank <= 2 && d0 >= 0 && (!in->list || rank == 2) &&
	         d1 == (in->list ? in->width : 1);
	if (!ok || (sh != NULL && sh->unknown_rank)) {
		char got[96];
		shape_text(t, got, sizeof got);
		if (in->list) {
			return tfi_request_bad(
			    q,
			    "input '%s' has shape [-1, %lld]; "
			    "got %s",
			    name, (long long)in->width, got);
		}
		return tfi_request_bad(
		    q,
		    "input '%s' has shape [-1] (or [-1, 1]); "
		    "got %s",
		    name, got);
	}
	if (d0 == 0) {
		return tfi_request_bad(q, "input '%s' holds no rows", name);
	}
	*rows = (size_t)d0;
	return TF_OK;
}

/* The values of t for input in, rows of them, into q's rows. */
static int
tensor_values(struct tf_request *q, const struct tf_model *m, const char *name,
              const struct tfi_input *in, const Tensorflow__TensorProto *t,
              size_t rows)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	size_t want = rows * (size_t)in->width;
	int str = t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING;
	if (in->categorical != str || (!str && elem_size(t->dtype) == 0)) {
		return tfi_request_bad(
		    q, "input '%s' takes %s; got %s", name,
		    in->categorical ? "DT_STRING (a categorical feature)"
		                    : "numbers (DT_FLOAT, DT_DOUBLE or an "
		                      "integer type)",
		    dtype_name(t->dtype));
	}
	size_t have;
	if (value_count(q, name, t, &have) != TF_OK) {
		return TF_EINVAL;
	}
	/* One value fills the whole shape, as TensorFlow reads a proto. */
	if (have != want && have != 1) {
		return tfi_request_bad(
		    q,
		    "input '%s': %zu values for its shape of "
		    "%zu",
		    name, have, want);
	}
	for (size_t r = 0; r < rows; r++) {
		for (int64_t k = 0; k < in->width; k++) {
			size_t i =
			    have == 1 ? 0 : r * (size_t)in->width + (size_t)k;
			int64_t c = in->col + k;
			if (str) {
				const ProtobufCBinaryData *b =
				    &t->string_val[i];
				q->in.ids[r * (size_t)q->in.id_width +
				          (size_t)(c - q->in.width)] =
				    tf_columns_category(
				        cols, c, (const char *)b->data, b->len);
			} else {
				q->in.x[r * (size_t)q->in.width + (size_t)c] =
				    element(t, i);
			}
		}
	}
	return TF_OK;
}

/* The rows of an image model's input: encoded images (DT_STRING) of
 * shape [n], or numbers of shape [n, H*W*C] or [n, H, W, C]. */
static int
image_rows(struct tf_request *q, const char *name,
           const struct tf_image_view *v, int64_t width,
           const Tensorflow__TensorProto *t, size_t *rows)
{
	const Tensorflow__TensorShapeProto *sh = t->tensor_shape;
	size_t rank = sh && !sh->unknown_rank ? sh->n_dim : 0;
	int64_t d[4] = {1, 1, 1, 1};
	for (size_t k = 0; k < rank && k < 4; k++) {
		d[k] = sh->dim[k]->size;
	}
	int ok = t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING
	             ? rank <= 1 && d[0] >= 1
	             : d[0] >= 1 && ((rank == 2 && d[1] == width) ||
	                             (rank == 4 && d[1] == v->height &&
	                              d[2] == v->width && d[3] == v->channels));
	if (!ok) {
		return tfi_request_bad(
		    q,
		    "input '%s' takes encoded images (DT_STRING, shape [-1]) "
		    "or numbers of shape [-1, %d, %d, %d]",
		    name, v->height, v->width, v->channels);
	}
	*rows = (size_t)d[0];
	return TF_OK;
}

/* Encoded images, one a row, decoded into q's rows. */
static int
image_values(struct tf_request *q, const char *name,
             const struct tf_image_view *v, const Tensorflow__TensorProto *t,
             size_t rows)
{
	if (t->n_string_val != rows) {
		return tfi_request_bad(
		    q,
		    "input '%s': %zu images for its shape of "
		    "%zu",
		    name, t->n_string_val, rows);
	}
	for (size_t r = 0; r < rows; r++) {
		char what[320];
		snprintf(what, sizeof what, "input '%.256s' image %zu", name,
		         r);
		int rc = tfi_request_image(q, v, t->string_val[r].data,
		                           t->string_val[r].len, what, r);
		if (rc != TF_OK) {
			return rc;
		}
	}
	return TF_OK;
}

/* The signature's input names, "{a,b,...}" (for messages). */
static void
input_set(const struct tf_model *m, char *buf, size_t size)
{
	struct tfi_input in[64];
	size_t n =
	    tfi_columns_inputs(tf_model_columns((struct tf_model *)m), in, 64);
	size_t at = (size_t)snprintf(buf, size, "{");
	for (size_t i = 0; i < n && i < 64 && at < size; i++) {
		at += (size_t)snprintf(buf + at, size - at, "%s%s",
		                       i ? "," : "", in[i].name);
	}
	if (at < size) {
		snprintf(buf + at, size - at, "%s}", n > 64 ? ",..." : "");
	}
}

static int
check_signature(struct tf_request *q, const char *sn, int method)
{
	if (*sn == '\0' || strcmp(sn, "serving_default") == 0 ||
	    (method == TF_METHOD_CLASSIFY &&
	     strcmp(sn, "classification") == 0) ||
	    (method == TF_METHOD_REGRESS && strcmp(sn, "regression") == 0)) {
		return TF_OK;
	}
	/* TF Serving's words and code (FAILED_PRECONDITION); REST says 400 */
	q->precondition = 1;
	return tfi_request_bad(q, "Serving signature key \"%s\" not found.",
	                       sn);
}

int
tf_request_grpc_code(const struct tf_request *q)
{
	int rc = tf_errcode(q);
	return rc == TF_OK       ? 0
	       : q->precondition ? 9
	       : rc == TF_EINVAL ? 3
	       : rc == TF_ENOMEM ? 8
	                         : 13;
}

static int
predict_inputs(struct tf_request *q, const struct tf_model *m, size_t max_rows)
{
	const Tensorflow__Serving__PredictRequest *pr = q->pb;
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	size_t rows = 0;
	if (pr->n_inputs == 0) {
		return tfi_request_bad(q, "the request has no inputs");
	}
	int64_t bw, bv;
	if (tf_columns_bag(cols, &bw, &bv)) {
		return predict_bag(q, m, max_rows);
	}
	if (tfi_request_seen(q) != TF_OK) {
		return TF_ENOMEM;
	}
	/* a sequence's lengths (its rows' steps), unless a feature has
	 * the name */
	const Tensorflow__TensorProto *lens = NULL;
	struct tfi_input li;
	int seq_lens = tfi_request_seq_kind(m) >= 0 &&
	               !tfi_columns_input(cols, "lengths", &li);
	static const Tensorflow__TensorProto empty =
	    TENSORFLOW__TENSOR_PROTO__INIT;
	for (size_t i = 0; seq_lens && i < pr->n_inputs; i++) {
		if (strcmp(pr->inputs[i]->key, "lengths") == 0) {
			lens = pr->inputs[i]->value ? pr->inputs[i]->value
			                            : &empty;
		}
	}
	int64_t guess = 0; /* clients mostly send the signature's order */
	int seq_given = 0;
	for (size_t i = 0; i < pr->n_inputs; i++) {
		const char *name = pr->inputs[i]->key;
		const Tensorflow__TensorProto *t = pr->inputs[i]->value;
		struct tfi_input in;
		if (seq_lens && strcmp(name, "lengths") == 0) {
			continue;
		}
		int is_int;
		float mean, inv;
		const char *gn =
		    guess < q->in.width
		        ? tf_columns_column(cols, guess, &is_int, &mean, &inv)
		        : NULL;
		if (gn != NULL && strcmp(gn, name) == 0) {
			/* the numeric column where it was expected */
			in = (struct tfi_input){gn, guess, 1, 0, is_int,
			                        0,  0,     0, 0};
		} else if (!tfi_columns_input(cols, name, &in)) {
			char set[400];
			input_set(m, set, sizeof set);
			return tfi_request_bad(
			    q,
			    "input tensor alias not found in signature: %s. "
			    "Inputs expected to be in the set %s.",
			    name, set);
		}
		t = t ? t : &empty;
		size_t n = 0, steps = 0;
		struct tf_image_view iv;
		int image = tf_columns_image(cols, &iv);
		if (in.sequence
		        ? seq_rows(q, m, name, &in, t, &n, &steps) != TF_OK
		    : image ? image_rows(q, name, &iv, in.width, t, &n) != TF_OK
		            : tensor_rows(q, name, &in, t, &n) != TF_OK) {
			return TF_EINVAL;
		}
		if (rows == 0) {
			int rc = tfi_request_room(q, n, max_rows, "rows");
			if (rc != TF_OK) {
				return rc;
			}
			rows = n;
		} else if (n != rows) {
			return tfi_request_bad(
			    q,
			    "input '%s' has %zu rows, others %zu (all inputs "
			    "must share the batch size)",
			    name, n, rows);
		}
		/* a sequence of tokens is ids, not columns of the row */
		int64_t cols_in =
		    in.sequence && (in.categorical || in.is_int) ? 0 : in.width;
		for (int64_t k = 0; k < cols_in; k++) {
			if (q->seen[in.col + k]) {
				return tfi_request_bad(
				    q,
				    "input '%s' gives a feature another input "
				    "gave",
				    name);
			}
			q->seen[in.col + k] = 1;
		}
		seq_given |= in.sequence;
		int rc = in.sequence
		             ? seq_values(q, m, &in, t, lens, rows, steps)
		         : image && t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING
		             ? image_values(q, name, &iv, t, rows)
		             : tensor_values(q, m, name, &in, t, rows);
		if (rc != TF_OK) {
			return rc == TF_ENOMEM ? rc : TF_EINVAL;
		}
		guess = in.col + in.width;
	}
	struct tfi_input all[64];
	size_t nall = tfi_columns_inputs(cols, all, 64);
	for (size_t k = 0; !seq_given && k < nall && k < 64; k++) {
		if (all[k].sequence) { /* its tokens are no column */
			return tfi_request_bad(
			    q, "missing input '%s' (a sequence)", all[k].name);
		}
	}
	int64_t n = tfi_serving_ninputs(m);
	for (int64_t c = 0; c < n; c++) {
		if (!q->seen[c]) {
			struct tfi_input in[64];
			size_t k = tfi_columns_inputs(cols, in, 64), j = 0;
			while (j + 1 < k && j + 1 < 64 && in[j + 1].col <= c) {
				j++;
			}
			return tfi_request_bad(
			    q, "missing input '%s' (the signature has %zu)",
			    in[j].name, k);
		}
	}
	q->in.rows = rows;
	return TF_OK;
}

/* An Example's sparse ids (an int64_list "ids") and their values (a
 * float_list "values", or none: 1 each) for a model of sparse ids. */
static int
example_bag(struct tf_request *q, const struct tf_model *m,
            const Tensorflow__Example *ex, size_t r)
{
	const Tensorflow__Int64List *ids = NULL;
	const Tensorflow__FloatList *vals = NULL;
	size_t nf = ex && ex->features ? ex->features->n_feature : 0;
	char what[48];
	snprintf(what, sizeof what, "example %zu", r);
	for (size_t i = 0; i < nf; i++) {
		const char *name = ex->features->feature[i]->key;
		const Tensorflow__Feature *f = ex->features->feature[i]->value;
		int is_ids = strcmp(name, "ids") == 0;
		if (f == NULL || (!is_ids && strcmp(name, "values") != 0)) {
			continue;
		}
		if (is_ids
		        ? f->kind_case != TENSORFLOW__FEATURE__KIND_INT64_LIST
		        : f->kind_case !=
		              TENSORFLOW__FEATURE__KIND_FLOAT_LIST) {
			return tfi_request_bad(q,
			                       "%s: feature '%s': expected "
			                       "%s",
			                       what, name,
			                       is_ids ? "an int64_list"
			                              : "a float_list");
		}
		if (is_ids) {
			ids = f->int64_list;
		} else {
			vals = f->float_list;
		}
	}
	if (ids == NULL) {
		return tfi_request_bad(q,
		                       "%s: no int64_list 'ids' (a model of "
		                       "sparse ids)",
		                       what);
	}
	size_t n = ids->n_value, nv = vals ? vals->n_value : 0;
	if (tfi_request_bag_row(q, m, what, r, n, nv) != TF_OK) {
		return TF_EINVAL;
	}
	for (size_t k = 0; k < n; k++) {
		if (tfi_request_bag_id(q, m, what, r, k,
		                       (uint64_t)ids->value[k],
		                       nv ? vals->value[k] : 1.0f) != TF_OK) {
			return TF_EINVAL;
		}
	}
	return TF_OK;
}

/* One Example's features into row r (those the model lacks ignored). */
static int
example_row(struct tf_request *q, const struct tf_model *m,
            const Tensorflow__Example *ex, size_t r)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	size_t nf = ex && ex->features ? ex->features->n_feature : 0;
	int64_t bw, bv;
	if (tf_columns_bag(cols, &bw, &bv)) {
		return example_bag(q, m, ex, r);
	}
	for (size_t i = 0; i < nf; i++) {
		const char *name = ex->features->feature[i]->key;
		const Tensorflow__Feature *f = ex->features->feature[i]->value;
		struct tfi_input in;
		if (f == NULL || !tfi_columns_input(cols, name, &in)) {
			continue;
		}
		if (in.categorical) {
			if (f->kind_case !=
			    TENSORFLOW__FEATURE__KIND_BYTES_LIST) {
				return tfi_request_bad(
				    q,
				    "example %zu: feature '%s' is categorical: "
				    "expected a bytes_list",
				    r, name);
			}
			q->in.ids[r * (size_t)q->in.id_width +
			          (size_t)(in.col - q->in.width)] =
			    f->bytes_list->n_value == 0
			        ? -1
			        : tf_columns_category(
			              cols, in.col,
			              (const char *)f->bytes_list->value[0]
			                  .data,
			              f->bytes_list->value[0].len);
			q->seen[in.col] = 1;
			continue;
		}
		size_t n =
		    f->kind_case == TENSORFLOW__FEATURE__KIND_FLOAT_LIST
		        ? f->float_list->n_value
		    : f->kind_case == TENSORFLOW__FEATURE__KIND_INT64_LIST
		        ? f->int64_list->n_value
		        : (size_t)-1;
		if (n == (size_t)-1) {
			return tfi_request_bad(
			    q,
			    "example %zu: feature '%s': expected "
			    "a float_list or int64_list",
			    r, name);
		}
		if (n != (size_t)in.width) {
			return tfi_request_bad(
			    q,
			    "example %zu: feature '%s' has %zu "
			    "values, the model takes %lld",
			    r, name, n, (long long)in.width);
		}
		float *x = q->in.x + r * (size_t)q->in.width + (size_t)in.col;
		for (size_t k = 0; k < n; k++) {
			x[k] =
			    f->kind_case == TENSORFLOW__FEATURE__KIND_FLOAT_LIST
			        ? f->float_list->value[k]
			        : (float)f->int64_list->value[k];
		}
		memset(q->seen + in.col, 1, n);
	}
	return TF_OK;
}

/* Classify and Regress: Examples (and a context), as REST's "examples". */
static int
examples_in(struct tf_request *q, const struct tf_model *m,
            const Tensorflow__Serving__Input *input, size_t max_rows)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	Tensorflow__Example **ex = NULL;
	const Tensorflow__Example *ctx = NULL;
	size_t n = 0;
	if (input != NULL &&
	    input->kind_case == TENSORFLOW__SERVING__INPUT__KIND_EXAMPLE_LIST) {
		ex = input->example_list->examples;
		n = input->example_list->n_examples;
	} else if (
	    input != NULL &&
	    input->kind_case ==
	        TENSORFLOW__SERVING__INPUT__KIND_EXAMPLE_LIST_WITH_CONTEXT) {
		ex = input->example_list_with_context->examples;
		n = input->example_list_with_context->n_examples;
		ctx = input->example_list_with_context->context;
	}
	if (n == 0) {
		return tfi_request_bad(q, "Input is empty.");
	}
	int rc = tfi_request_room(q, n, max_rows, "examples");
	if (rc != TF_OK) {
		return rc;
	}
	for (size_t r = 0; r < n; r++) {
		float *row = q->in.x + r * (size_t)q->in.width;
		for (int64_t c = 0; c < q->in.width; c++) {
			int is_int;
			float inv;
			tf_columns_column(cols, c, &is_int, &row[c], &inv);
		}
		for (int64_t k = 0; k < q->in.id_width; k++) {
			q->in.ids[r * (size_t)q->in.id_width + (size_t)k] = -1;
		}
		if (tfi_request_seen(q) != TF_OK) {
			return TF_ENOMEM;
		}
		int64_t bw, bv;
		int bag = tf_columns_bag(cols, &bw, &bv);
		if ((!bag && example_row(q, m, ctx, r) != TF_OK) ||
		    example_row(q, m, ex[r], r) != TF_OK) {
			return TF_EINVAL;
		}
		for (int64_t c = 0;
		     !bag && !q->allow_missing && c < q->in.width; c++) {
			if (!q->seen[c]) {
				int is_int;
				float mean, inv;
				const char *cn = tf_columns_column(
				    cols, c, &is_int, &mean, &inv);
				return tfi_request_bad(
				    q,
				    "example %zu: no feature '%s' (tf-serve "
				    "--allow-missing counts a missing feature "
				    "as its training mean)",
				    r, cn ? cn : "x");
			}
		}
	}
	q->in.rows = n;
	return TF_OK;
}

int
tf_request_parse_pb(struct tf_request *q, const struct tf_model *m,
                    size_t max_rows)
{
	int method = q->method;
	if (q->pb == NULL) {
		return tfi_set_error(q, TF_EINVAL, "no request decoded");
	}
	tfi_request_start(q, m, method);
	if (method == TF_METHOD_METADATA || method == TF_METHOD_STATUS) {
		return TF_OK;
	}
	if (check_signature(q, spec_of(q)->signature_name, method) != TF_OK) {
		return TF_EINVAL;
	}
	int rc;
	if (method == TF_METHOD_PREDICT) {
		rc = predict_inputs(q, m, max_rows);
	} else {
		const Tensorflow__Serving__Input *in =
		    method == TF_METHOD_CLASSIFY
		        ? ((Tensorflow__Serving__ClassificationRequest *)q->pb)
		              ->input
		        : ((Tensorflow__Serving__RegressionRequest *)q->pb)
		              ->input;
		rc = examples_in(q, m, in, max_rows);
	}
	if (rc != TF_OK) {
		q->in.rows = 0;
		return rc;
	}
	tf_columns_standardize(tf_model_columns((struct tf_model *)m), q->in.x,
	                       q->in.ids, q->in.rows);
	return TF_OK;
}

/* ---- messages out --------------------------------------------------------
 */

/* The message packed into q->out. */
static int
pack(struct tf_request *q, const ProtobufCMessage *msg, const void **out,
     size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	q->out.len = 0;
	if (tfi_buf_reserve(&q->out, n + 1) != 0) {
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	q->out.len = protobuf_c_message_pack(msg, q->out.data);
	*out = q->out.data;
	*len = q->out.len;
	return TF_OK;
}

struct spec_out {
	Tensorflow__Serving__ModelSpec spec;
	Google__Protobuf__Int64Value version;
};

static Tensorflow__Serving__ModelSpec *
spec_out(struct spec_out *s, const char *name, int64_t version,
         const char *signature)
{
	tensorflow__serving__model_spec__init(&s->spec);
	google__protobuf__int64_value__init(&s->version);
	s->spec.name = (char *)name;
	s->spec.signature_name = (char *)signature;
	s->version.value = version;
	s->spec.version_choice_case =
	    TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION;
	s->spec.version = &s->version;
	return &s->spec;
}

/* A tensor's shape: [d0] or [d0, d1]. */
struct shape_out {
	Tensorflow__TensorShapeProto shape;
	Tensorflow__TensorShapeProto__Dim dim[2], *dims[2];
};

static Tensorflow__TensorShapeProto *
shape_out(struct shape_out *s, int64_t d0, int64_t d1)
{
	tensorflow__tensor_shape_proto__init(&s->shape);
	for (int k = 0; k < 2; k++) {
		tensorflow__tensor_shape_proto__dim__init(&s->dim[k]);
		s->dims[k] = &s->dim[k];
	}
	s->dim[0].size = d0;
	s->dim[1].size = d1;
	s->shape.n_dim = d1 != 0 ? 2 : 1; /* d1 -1: ragged */
	s->shape.dim = s->dims;
	return &s->shape;
}

/* Whether output name passes the request's output_filter. */
static int
wanted(const Tensorflow__Serving__PredictRequest *pr, const char *name)
{
	for (size_t i = 0; i < pr->n_output_filter; i++) {
		if (strcmp(pr->output_filter[i], name) == 0) {
			return 1;
		}
	}
	return pr->n_output_filter == 0;
}

static int
predict_response(struct tf_request *q, const struct tf_model *m,
                 Tensorflow__Serving__ModelSpec *spec, const void **msg,
                 size_t *len)
{
	const Tensorflow__Serving__PredictRequest *pr = q->pb;
	int reg = tf_columns_task(tf_model_columns((struct tf_model *)m)) ==
	          TF_TASK_REGRESSION;
	static const char *const cls_out[] = {"probabilities", "class_ids",
	                                      "classes"};
	static const char *const reg_out[] = {"predictions"};
	const char *const *names = reg ? reg_out : cls_out;
	size_t nnames = reg ? 1 : 3;
	for (size_t i = 0; i < pr->n_output_filter; i++) {
		size_t k = 0;
		while (k < nnames && strcmp(pr->output_filter[i], names[k])) {
			k++;
		}
		if (k == nnames) {
			return tfi_request_bad(
			    q,
			    "output tensor alias not found in signature: %s "
			    "Outputs expected to be in the set %s.",
			    pr->output_filter[i],
			    reg ? "{predictions}"
			        : "{probabilities,class_ids,classes}");
		}
	}
	size_t n = q->in.rows;
	int64_t k = q->nout;
	Tensorflow__TensorProto t[3];
	struct shape_out sh[3];
	Tensorflow__Serving__PredictResponse__OutputsEntry e[3], *ep[3];
	/* a classifier's most probable class of each row, and its label */
	int64_t *ids = reg ? NULL : malloc((n ? n : 1) * sizeof *ids);
	ProtobufCBinaryData *labels =
	    reg ? NULL : malloc((n ? n : 1) * sizeof *labels);
	if (!reg && (ids == NULL || labels == NULL)) {
		free(ids);
		free(labels);
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	for (size_t r = 0; !reg && r < n; r++) {
		ids[r] = tfi_serving_argmax(q->pred + r * (size_t)k, k);
		const char *l = tf_model_label(m, ids[r]);
		labels[r].data = (uint8_t *)l;
		labels[r].len = strlen(l);
	}
	size_t no = 0;
	for (size_t i = 0; i < nnames; i++) {
		if (!wanted(pr, names[i])) {
			continue;
		}
		tensorflow__tensor_proto__init(&t[no]);
		tensorflow__serving__predict_response__outputs_entry__init(
		    &e[no]);
		e[no].key = (char *)names[i];
		e[no].value = &t[no];
		ep[no] = &e[no];
		if (reg || i == 0) { /* predictions, probabilities */
			t[no].dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
			t[no].tensor_shape =
			    shape_out(&sh[no], (int64_t)n, reg ? 0 : k);
			t[no].n_float_val = n * (size_t)k;
			t[no].float_val = q->pred;
		} else if (i == 1) { /* class_ids */
			t[no].dtype = TENSORFLOW__DATA_TYPE__DT_INT64;
			t[no].tensor_shape = shape_out(&sh[no], (int64_t)n, 0);
			t[no].n_int64_val = n;
			t[no].int64_val = ids;
		} else { /* classes: the labels of class_ids */
			t[no].dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
			t[no].tensor_shape = shape_out(&sh[no], (int64_t)n, 0);
			t[no].n_string_val = n;
			t[no].string_val = labels;
		}
		no++;
	}
	Tensorflow__Serving__PredictResponse resp =
	    TENSORFLOW__SERVING__PREDICT_RESPONSE__INIT;
	resp.model_spec = spec;
	resp.n_outputs = no;
	resp.outputs = ep;
	int rc = pack(q, &resp.base, msg, len);
	free(ids);
	free(labels);
	return rc;
}

static int
classify_response(struct tf_request *q, const struct tf_model *m,
                  Tensorflow__Serving__ModelSpec *spec, const void **msg,
                  size_t *len)
{
	size_t n = q->in.rows, k = (size_t)q->nout;
	Tensorflow__Serving__Class *cls = calloc(n * k + 1, sizeof *cls);
	Tensorflow__Serving__Class **clsp = calloc(n * k + 1, sizeof *clsp);
	Tensorflow__Serving__Classifications *cs = calloc(n + 1, sizeof *cs);
	Tensorflow__Serving__Classifications **csp = calloc(n + 1, sizeof *csp);
	int rc = TF_ENOMEM;
	if (cls != NULL && clsp != NULL && cs != NULL && csp != NULL) {
		for (size_t r = 0; r < n; r++) {
			tensorflow__serving__classifications__init(&cs[r]);
			cs[r].n_classes = k;
			cs[r].classes = clsp + r * k;
			csp[r] = &cs[r];
			for (size_t c = 0; c < k; c++) {
				Tensorflow__Serving__Class *e = &cls[r * k + c];
				tensorflow__serving__class__init(e);
				e->label =
				    (char *)tf_model_label(m, (int64_t)c);
				e->score = q->pred[r * k + c];
				clsp[r * k + c] = e;
			}
		}
		Tensorflow__Serving__ClassificationResult res =
		    TENSORFLOW__SERVING__CLASSIFICATION_RESULT__INIT;
		res.n_classifications = n;
		res.classifications = csp;
		Tensorflow__Serving__ClassificationResponse resp =
		    TENSORFLOW__SERVING__CLASSIFICATION_RESPONSE__INIT;
		resp.model_spec = spec;
		resp.result = &res;
		rc = pack(q, &resp.base, msg, len);
	} else {
		tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	free(cls);
	free(clsp);
	free(cs);
	free(csp);
	return rc;
}

static int
regress_response(struct tf_request *q, int reg,
                 Tensorflow__Serving__ModelSpec *spec, const void **msg,
                 size_t *len)
{
	size_t n = q->in.rows, k = (size_t)q->nout;
	Tensorflow__Serving__Regression *v = calloc(n + 1, sizeof *v);
	Tensorflow__Serving__Regression **vp = calloc(n + 1, sizeof *vp);
	int rc;
	if (v != NULL && vp != NULL) {
		for (size_t r = 0; r < n; r++) {
			tensorflow__serving__regression__init(&v[r]);
			/* A binary classifier: the probability of class 1. */
			v[r].value = q->pred[r * k + (reg ? 0 : 1)];
			vp[r] = &v[r];
		}
		Tensorflow__Serving__RegressionResult res =
		    TENSORFLOW__SERVING__REGRESSION_RESULT__INIT;
		res.n_regressions = n;
		res.regressions = vp;
		Tensorflow__Serving__RegressionResponse resp =
		    TENSORFLOW__SERVING__REGRESSION_RESPONSE__INIT;
		resp.model_spec = spec;
		resp.result = &res;
		rc = pack(q, &resp.base, msg, len);
	} else {
		rc = tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	free(v);
	free(vp);
	return rc;
}

/* ---- GetModelMetadata: the signatures as TensorInfo --------------------
 *
 * Built from tf_model_signature() (the inputs and outputs REST's
 * metadata shows too), into a SignatureDefMap packed into an Any.
 */

/* Storage for one SignatureDef's maps, freed together. */
struct sigdef {
	Tensorflow__SignatureDef def;
	size_t n;
	Tensorflow__SignatureDef__InputsEntry *ient, **iep;
	Tensorflow__SignatureDef__OutputsEntry *oent, **oep;
	Tensorflow__TensorInfo *info;
	struct shape_out *shape;
	char **names; /* "NAME:0" */
};

static int
dtype_of(const char *name)
{
	const ProtobufCEnumValue *v =
	    protobuf_c_enum_descriptor_get_value_by_name(
	        &tensorflow__data_type__descriptor, name);
	return v ? v->value : TENSORFLOW__DATA_TYPE__DT_INVALID;
}

/* A SignatureDef of nin inputs and nout outputs, each (key, dtype,
 * width; width 0: shape [-1]), the tensor named "TENSOR:0" (key when
 * NULL). */
struct tinfo {
	const char *name, *dtype;
	int64_t width;
	const char *tensor;
};

static int
sigdef_build(struct sigdef *s, const struct tinfo *in, size_t nin,
             const struct tinfo *out, size_t nout, const char *method)
{
	tensorflow__signature_def__init(&s->def);
	s->n = nin + nout;
	s->ient = calloc(nin + 1, sizeof *s->ient);
	s->iep = calloc(nin + 1, sizeof *s->iep);
	s->oent = calloc(nout + 1, sizeof *s->oent);
	s->oep = calloc(nout + 1, sizeof *s->oep);
	s->info = calloc(s->n, sizeof *s->info);
	s->shape = calloc(s->n, sizeof *s->shape);
	s->names = calloc(s->n, sizeof *s->names);
	if (!s->ient || !s->iep || !s->oent || !s->oep || !s->info ||
	    !s->shape || !s->names) {
		return TF_ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct tinfo *t = i < nin ? &in[i] : &out[i - nin];
		const char *tn = t->tensor ? t->tensor : t->name;
		size_t ln = strlen(tn) + 3;
		if ((s->names[i] = malloc(ln)) == NULL) {
			return TF_ENOMEM;
		}
		snprintf(s->names[i], ln, "%s:0", tn);
		tensorflow__tensor_info__init(&s->info[i]);
		s->info[i].name = s->names[i];
		s->info[i].dtype = dtype_of(t->dtype);
		s->info[i].tensor_shape = shape_out(&s->shape[i], -1, t->width);
		if (i < nin) {
			tensorflow__signature_def__inputs_entry__init(
			    &s->ient[i]);
			s->ient[i].key = (char *)t->name;
			s->ient[i].value = &s->info[i];
			s->iep[i] = &s->ient[i];
		} else {
			size_t j = i - nin;
			tensorflow__signature_def__outputs_entry__init(
			    &s->oent[j]);
			s->oent[j].key = (char *)t->name;
			s->oent[j].value = &s->info[i];
			s->oep[j] = &s->oent[j];
		}
	}
	s->def.n_inputs = nin;
	s->def.inputs = s->iep;
	s->def.n_outputs = nout;
	s->def.outputs = s->oep;
	s->def.method_name = (char *)method;
	return TF_OK;
}

static void
sigdef_free(struct sigdef *s)
{
	for (size_t i = 0; s->names != NULL && i < s->n; i++) {
		free(s->names[i]);
	}
	free(s->names);
	free(s->ient);
	free(s->iep);
	free(s->oent);
	free(s->oep);
	free(s->info);
	free(s->shape);
}

static int
metadata_response(struct tf_request *q, const struct tf_model *m,
                  Tensorflow__Serving__ModelSpec *spec, const void **msg,
                  size_t *len)
{
	const Tensorflow__Serving__GetModelMetadataRequest *mr = q->pb;
	if (mr->n_metadata_field == 0) {
		return tfi_request_bad(q,
		                       "GetModelMetadataRequest must specify "
		                       "at least one metadata_field");
	}
	for (size_t i = 0; i < mr->n_metadata_field; i++) {
		if (strcmp(mr->metadata_field[i], "signature_def") != 0) {
			return tfi_request_bad(
			    q, "Metadata field %s is not supported",
			    mr->metadata_field[i]);
		}
	}
	char *st = tf_model_signature(m);
	json_t *sig = st ? json_loads(st, 0, NULL) : NULL;
	free(st);
	json_t *ji = json_object_get(sig, "inputs");
	json_t *jo = json_object_get(sig, "outputs");
	size_t nin = json_array_size(ji), nout = json_array_size(jo);
	struct tinfo *ti = calloc(nin + nout + 2, sizeof *ti);
	struct sigdef defs[3] = {0};
	int rc = sig != NULL && ti != NULL ? TF_OK : TF_ENOMEM;
	for (size_t i = 0; rc == TF_OK && i < nin + nout; i++) {
		json_t *e =
		    json_array_get(i < nin ? ji : jo, i < nin ? i : i - nin);
		json_t *w = json_object_get(e, "width");
		json_t *shp = json_object_get(e, "shape");
		ti[i].name = json_string_value(json_object_get(e, "name"));
		ti[i].dtype = json_string_value(json_object_get(e, "dtype"));
		ti[i].width =
		    w ? (int64_t)json_integer_value(w)
		    : json_is_true(json_object_get(e, "sequence")) ||
		            json_is_true(json_object_get(e, "sparse"))
		        ? -1 /* ragged steps, or ids */
		    : json_array_size(shp) > 1
		        ? (int64_t)json_integer_value(json_array_get(shp, 1))
		        : 0;
	}
	/* Predict's optional rows' lengths of a sequence or sparse ids
	 * (predict_bag(), seq_values()), unless a feature has the name */
	int64_t bw, bv;
	struct tfi_input li;
	struct tf_columns *mc = tf_model_columns((struct tf_model *)m);
	if (rc == TF_OK &&
	    (tfi_request_seq_kind(m) >= 0 || tf_columns_bag(mc, &bw, &bv)) &&
	    !tfi_columns_input(mc, "lengths", &li)) {
		memmove(ti + nin + 1, ti + nin, nout * sizeof *ti);
		ti[nin++] = (struct tinfo){"lengths", "DT_INT64", 0, NULL};
	}
	int task = tf_columns_task(tf_model_columns((struct tf_model *)m));
	int64_t k = tf_model_outputs(m);
	/* Serialized Examples in, as TF Serving's estimator exports. */
	const struct tinfo ex_in = {"inputs", "DT_STRING", 0, "input_example"};
	const struct tinfo cls_out[] = {{"classes", "DT_STRING", k, NULL},
	                                {"scores", "DT_FLOAT", k, NULL}};
	const struct tinfo reg_out = {"outputs", "DT_FLOAT", 0, NULL};
	static const char *const keys[] = {"serving_default", "classification",
	                                   "regression"};
	int ndef = 0;
	const char *key[3];
	if (rc == TF_OK) {
		rc = sigdef_build(&defs[0], ti, nin, ti + nin, nout,
		                  "tensorflow/serving/predict");
		key[ndef++] = keys[0];
	}
	if (rc == TF_OK && task != TF_TASK_REGRESSION) {
		rc = sigdef_build(&defs[ndef], &ex_in, 1, cls_out, 2,
		                  "tensorflow/serving/classify");
		key[ndef++] = keys[1];
	}
	if (rc == TF_OK && task != TF_TASK_MULTICLASS) {
		rc = sigdef_build(&defs[ndef], &ex_in, 1, &reg_out, 1,
		                  "tensorflow/serving/regress");
		key[ndef++] = keys[2];
	}
	uint8_t *packed = NULL;
	if (rc == TF_OK) {
		Tensorflow__Serving__SignatureDefMap__SignatureDefEntry e[3],
		    *ep[3];
		for (int i = 0; i < ndef; i++) {
			tensorflow__serving__signature_def_map__signature_def_entry__init(
			    &e[i]);
			e[i].key = (char *)key[i];
			e[i].value = &defs[i].def;
			ep[i] = &e[i];
		}
		Tensorflow__Serving__SignatureDefMap map =
		    TENSORFLOW__SERVING__SIGNATURE_DEF_MAP__INIT;
		map.n_signature_def = (size_t)ndef;
		map.signature_def = ep;
		size_t plen = protobuf_c_message_get_packed_size(&map.base);
		if ((packed = malloc(plen + 1)) == NULL) {
			rc = TF_ENOMEM;
		} else {
			protobuf_c_message_pack(&map.base, packed);
			Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
			any.type_url = "type.googleapis.com/"
			               "tensorflow.serving.SignatureDefMap";
			any.value.data = packed;
			any.value.len = plen;
			Tensorflow__Serving__GetModelMetadataResponse__MetadataEntry
			    me =
			        TENSORFLOW__SERVING__GET_MODEL_METADATA_RESPONSE__METADATA_ENTRY__INIT,
			    *mep = &me;
			me.key = "signature_def";
			me.value = &any;
			Tensorflow__Serving__GetModelMetadataResponse resp =
			    TENSORFLOW__SERVING__GET_MODEL_METADATA_RESPONSE__INIT;
			resp.model_spec = spec;
			resp.n_metadata = 1;
			resp.metadata = &mep;
			rc = pack(q, &resp.base, msg, len);
		}
	}
	for (int i = 0; i < 3; i++) {
		sigdef_free(&defs[i]);
	}
	free(packed);
	free(ti);
	json_decref(sig);
	return rc == TF_ENOMEM ? tfi_set_error(q, TF_ENOMEM, "out of memory")
	                       : rc;
}

int
tf_request_respond_pb(struct tf_request *q, const struct tf_model *m,
                      const char *name, int64_t version, const void **msg,
                      size_t *len)
{
	if (q->pb == NULL) {
		return tfi_set_error(q, TF_EINVAL, "no request decoded");
	}
	int task = tf_columns_task(tf_model_columns((struct tf_model *)m));
	const char *sn = spec_of(q)->signature_name;
	struct spec_out so;
	Tensorflow__Serving__ModelSpec *spec =
	    spec_out(&so, name, version, *sn ? sn : "serving_default");
	switch (q->method) {
	case TF_METHOD_PREDICT:
		return predict_response(q, m, spec, msg, len);
	case TF_METHOD_CLASSIFY:
		if (task == TF_TASK_REGRESSION) {
			return tfi_request_bad(
			    q, "this model is a regression: it has no "
			       "classification signature (use Regress or "
			       "Predict)");
		}
		return classify_response(q, m, spec, msg, len);
	case TF_METHOD_REGRESS:
		if (task == TF_TASK_MULTICLASS) {
			return tfi_request_bad(
			    q, "this model is a multiclass classifier: it has "
			       "no regression signature (use Classify or "
			       "Predict)");
		}
		return regress_response(q, task == TF_TASK_REGRESSION, spec,
		                        msg, len);
	case TF_METHOD_METADATA:
		spec->signature_name = "";
		return metadata_response(q, m, spec, msg, len);
	default:
		return tfi_set_error(q, TF_EINVAL,
		                     "GetModelStatus has no model response");
	}
}

/* ---- GetModelStatus ------------------------------------------------------
 */

int
tf_serving_code(const char *name)
{
	const ProtobufCEnumValue *v =
	    protobuf_c_enum_descriptor_get_value_by_name(
	        &tensorflow__error__code__descriptor, name);
	return v ? v->value : TENSORFLOW__ERROR__CODE__INTERNAL;
}

int
tf_serving_status_pb(struct tf_request *q, const struct tf_version_state *v,
                     size_t n, const void **msg, size_t *len)
{
	tf_errclear(q);
	Tensorflow__Serving__ModelVersionStatus *st = calloc(n + 1, sizeof *st);
	Tensorflow__Serving__ModelVersionStatus **stp =
	    calloc(n + 1, sizeof *stp);
	Tensorflow__Serving__StatusProto *sp = calloc(n + 1, sizeof *sp);
	int rc;
	if (st != NULL && stp != NULL && sp != NULL) {
		for (size_t i = 0; i < n; i++) {
			tensorflow__serving__model_version_status__init(&st[i]);
			tensorflow__serving__status_proto__init(&sp[i]);
			const ProtobufCEnumValue *s =
			    protobuf_c_enum_descriptor_get_value_by_name(
			        &tensorflow__serving__model_version_status__state__descriptor,
			        v[i].state);
			st[i].version = v[i].version;
			st[i].state = s ? s->value : 0;
			sp[i].error_code = tf_serving_code(v[i].code);
			sp[i].error_message =
			    (char *)(v[i].message ? v[i].message : "");
			st[i].status = &sp[i];
			stp[i] = &st[i];
		}
		Tensorflow__Serving__GetModelStatusResponse resp =
		    TENSORFLOW__SERVING__GET_MODEL_STATUS_RESPONSE__INIT;
		resp.n_model_version_status = n;
		resp.model_version_status = stp;
		rc = pack(q, &resp.base, msg, len);
	} else {
		rc = tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	free(st);
	free(stp);
	free(sp);
	return rc;
}
