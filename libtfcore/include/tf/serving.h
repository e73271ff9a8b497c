/*
 * serving.h - TensorFlow Serving REST requests and responses for a model
 * (the bodies of :predict, :classify and :regress, and the metadata).
 *
 * A request is parsed against the model's signature (tf_model_signature)
 * into rows of standardised features; the caller runs the rows through
 * tf_model_predict() into tf_request_outputs() (directly, or batched with
 * other requests), then asks for the response body.  Parsing and
 * responding only read the model, so threads may share one model for
 * that while each predicts with its own.
 *
 * Bodies follow TF Serving: predict takes "instances" (row format) or
 * "inputs" (columnar), each instance an object {input: value} with every
 * input of the signature; an instance may also be a list of all features
 * in signature order (the dense vector TensorFlow.js and ONNX exports
 * take).  classify and regress take "examples" (and "context") objects of
 * features, where a missing feature counts as its training mean.
 */
#ifndef TF_SERVING_H
#define TF_SERVING_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"
#include "tf/model.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tf_method {
	TF_METHOD_PREDICT = 0,
	TF_METHOD_CLASSIFY = 1,
	TF_METHOD_REGRESS = 2,
	TF_METHOD_INSTANCE = 3, /* one instance a line (tf-serve --stdin) */
	TF_METHOD_LINES = 4,    /* rows set directly; one prediction a line */
	TF_METHOD_METADATA = 5, /* gRPC GetModelMetadata */
	TF_METHOD_STATUS = 6,   /* gRPC GetModelStatus */
	TF_METHOD_TRAIN = 7     /* tfkit's :train (tf/queue.h) */
};

struct tf_request;

TF_API struct tf_request *tf_request_new(void);
TF_API void tf_request_free(struct tf_request *q);

/*
 * Parse a body for method.  TF_EINVAL with a message for anything the
 * client got wrong (HTTP 400): malformed JSON, a missing or unknown
 * input, a wrong shape or type, more than max_rows rows (0: no limit).
 */
TF_API int tf_request_parse(struct tf_request *q, const struct tf_model *m,
                            int method, const char *body, size_t len,
                            size_t max_rows);
/* Rows already standardised (records read with tf_dataset_read()), to
 * answer with one row-format prediction per line (TF_METHOD_LINES). */
struct tf_batch;
TF_API int tf_request_set_rows(struct tf_request *q, const struct tf_model *m,
                               const struct tf_batch *b);
TF_API size_t tf_request_rows(const struct tf_request *q);
/* The rows asked about, standardised, for tf_model_predict(). */
TF_API const struct tf_batch *tf_request_batch(const struct tf_request *q);
/* classify and regress: an example that lacks one of the model's
 * features is a 400 naming it; with this on, it counts as its training
 * mean. */
TF_API void tf_request_set_allow_missing(struct tf_request *q, int on);
/* rows x tf_model_outputs() values for tf_model_predict() to fill. */
TF_API float *tf_request_outputs(struct tf_request *q);
/* Predict the request's rows into its outputs with m (one model per
 * thread, as tf_model_predict()). */
TF_API int tf_request_predict(struct tf_request *q, struct tf_model *m);

/*
 * The response body (JSON, no trailing newline; owned by q until the
 * next parse).  TF_EINVAL when the model cannot answer the method
 * (classify on a regression model).
 */
TF_API int tf_request_respond(struct tf_request *q, const struct tf_model *m,
                              const char **body, size_t *len);

/*
 * One row's prediction (outputs p, tf_model_outputs() of them) as the
 * element :predict answers for it in "predictions": a number for a
 * regression, {"probabilities":[...],"class_ids":K,"classes":"LABEL"}
 * for a classifier.  tf-eval --predict writes these lines.  The text is
 * owned by q until its next use.
 */
TF_API int tf_prediction_row(struct tf_request *q, const struct tf_model *m,
                             const float *p, const char **text, size_t *len);

/*
 * The GET .../metadata body for a model served as name, version, in TF
 * Serving's shape (signature_def of serving_default, classification and
 * regression as the task allows).  The caller frees it.
 */
TF_API char *tf_model_metadata(const struct tf_model *m, const char *name,
                               int64_t version);

/*
 * The URL grammar of TF Serving's REST API, and of tfkit's own pages:
 *	GET  /healthz, /readyz, /monitoring/prometheus/metrics
 *	GET  /v1/models/NAME[/versions/N]            model status
 *	GET  /v1/models/NAME[/versions/N]/metadata
 *	POST /v1/models/NAME[/versions/N]:predict (:classify, :regress)
 *	POST /v1/models/NAME:train                   tfkit's own (tf/queue.h)
 * tf_serving_route() fills r from a method and a path: what is asked
 * (model and version point into path), or TF_ROUTE_ERROR with the HTTP
 * status and TF Serving's message (a JSON error body unless plain).
 */
enum tf_route_kind {
	TF_ROUTE_HEALTH,
	TF_ROUTE_READY,
	TF_ROUTE_METRICS,
	TF_ROUTE_STATUS,
	TF_ROUTE_METADATA,
	TF_ROUTE_PREDICT,
	TF_ROUTE_CLASSIFY,
	TF_ROUTE_REGRESS,
	TF_ROUTE_TRAIN,
	TF_ROUTE_ERROR
};
struct tf_route {
	int kind;
	const char *model; /* into path; not NUL-terminated */
	size_t model_len;
	int64_t version; /* -1: the latest */
	int status;      /* TF_ROUTE_ERROR: the HTTP status */
	int plain;       /* ... the message is text/plain, not JSON */
	char message[512];
};
TF_API void tf_serving_route(const char *method, const char *path,
                             struct tf_route *r);
/* TF Serving's message for a model or version not being served:
 * "Servable not found for request: Latest(NAME)" or Specific(NAME, N). */
TF_API void tf_serving_not_found(char *buf, size_t size, const char *model,
                                 size_t len, int64_t version);
/* TF Serving's error body for a message, {"error": "..."} (the caller
 * frees it; NULL when out of memory). */
TF_API char *tf_serving_error_body(const char *message);
/*
 * A request over nng (tf-serve --nng-listen): "METHOD PATH\n", then the
 * body.  The request line is copied into line (cap bytes, NUL-ended,
 * method and path pointing into it); the body is the rest of msg (empty
 * without a newline).  TF_EFORMAT when the line has no space or does not
 * fit in cap.
 */
struct tf_frame {
	const char *method, *path;
	const char *body;
	size_t body_len;
};
TF_API int tf_serving_frame(const void *msg, size_t n, char *line, size_t cap,
                            struct tf_frame *f);

/*
 * TF Serving's gRPC API (tensorflow.serving.PredictionService and
 * ModelService): the messages of libtfcore/proto/tensorflow_serving/,
 * serialized.  tf_request_decode_pb() unpacks a request of method
 * (TF_METHOD_PREDICT, _CLASSIFY, _REGRESS, _METADATA or _STATUS) and
 * says which model it asks for; tf_request_parse_pb() reads its tensors
 * (Predict) or Examples (Classify, Regress) into rows, as
 * tf_request_parse() does a REST body; tf_request_respond_pb() writes the
 * response message of the method (for _METADATA, the signatures).  All
 * return TF_EINVAL with TF Serving's message for a client's mistake.
 *
 * Predict takes one tensor per signature input: a [n] or [n, 1] tensor
 * for a feature, [n, width] for a list input (a model trained on
 * --pack-features records has one, named as the list), DT_STRING for a
 * categorical feature; any numeric dtype for a numeric one, in the typed
 * *_val fields or tensor_content.  It answers "probabilities" [n, K],
 * "class_ids" [n] and "classes" [n] for a classifier, "predictions" [n]
 * for a regression, less what output_filter leaves out.
 */
struct tf_model_spec {
	const char *name;      /* "" when the request has none */
	int64_t version;       /* -1: the latest */
	const char *label;     /* a version label, or NULL */
	const char *signature; /* "" for the default */
};
TF_API int tf_request_decode_pb(struct tf_request *q, int method,
                                const void *msg, size_t len,
                                struct tf_model_spec *spec);
TF_API int tf_request_parse_pb(struct tf_request *q, const struct tf_model *m,
                               size_t max_rows);
TF_API int tf_request_respond_pb(struct tf_request *q, const struct tf_model *m,
                                 const char *name, int64_t version,
                                 const void **msg, size_t *len);
/* The gRPC status code TF Serving gives the request's last error: 9
 * (FAILED_PRECONDITION) for a signature the model does not have, 3
 * (INVALID_ARGUMENT) for the other mistakes of a client's (TF_EINVAL),
 * 8 (RESOURCE_EXHAUSTED) out of memory, 13 (INTERNAL) otherwise. */
TF_API int tf_request_grpc_code(const struct tf_request *q);
/* One version as GetModelStatus reports it: state "AVAILABLE", "END",
 * ...; code a tensorflow.error.Code name ("OK", "DATA_LOSS", ...). */
struct tf_version_state {
	int64_t version;
	const char *state, *code, *message;
};
/* The GetModelStatusResponse of n versions, owned by q. */
TF_API int tf_serving_status_pb(struct tf_request *q,
                                const struct tf_version_state *v, size_t n,
                                const void **msg, size_t *len);
/* The number of a tensorflow.error.Code name (13, INTERNAL, if unknown). */
TF_API int tf_serving_code(const char *name);

/* A float as TF Serving prints it: 6 significant digits when they read
 * back the same, else 9; ".0" added to whole numbers; NaN, Infinity. */
TF_API int tf_format_serving_float(char *buf, size_t size, float v);

#ifdef __cplusplus
}
#endif
#endif
