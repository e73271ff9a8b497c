/*
 * tf.h - the whole public libtfcore API.
 */
#ifndef TF_TF_H
#define TF_TF_H

#include "tf/crc32c.h"
#include "tf/csv.h"
#include "tf/error.h"
#include "tf/example.h"
#include "tf/input.h"
#include "tf/record.h"
#include "tf/rng.h"

#endif
