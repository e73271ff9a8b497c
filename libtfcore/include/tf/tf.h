/*
 * tf.h - the whole public libtfcore API.
 */
#ifndef TF_TF_H
#define TF_TF_H

#include "tf/batch.h"
#include "tf/checkpoint.h"
#include "tf/cluster.h"
#include "tf/crc32c.h"
#include "tf/csv.h"
#include "tf/dataset.h"
#include "tf/device.h"
#include "tf/error.h"
#include "tf/events.h"
#include "tf/example.h"
#include "tf/export.h"
#include "tf/file.h"
#include "tf/graph.h"
#include "tf/image.h"
#include "tf/input.h"
#include "tf/metrics.h"
#include "tf/model.h"
#include "tf/number.h"
#include "tf/optim.h"
#include "tf/plugin.h"
#include "tf/ps.h"
#include "tf/queue.h"
#include "tf/record.h"
#include "tf/rng.h"
#include "tf/schema.h"
#include "tf/serving.h"
#include "tf/settings.h"
#include "tf/shuffle.h"
#include "tf/tensor.h"
#include "tf/train.h"

#endif
