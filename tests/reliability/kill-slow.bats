#!/usr/bin/env bats
# SIGKILL at seeded random moments, 200 tries each (make check-slow): a killed tf-train resumes to the weights of an unbroken run, a killed tf-export never leaves a version that loads half, a killed tf-csv2record -o or tf-records -o never leaves part of its output under the name, a killed tf-ps started again applies no gradient twice.

bats_require_minimum_version 1.5.0
load ../cli/helpers
load kill

TRIES=200

@test "tf-train killed while it checkpoints, 200 times over, ends with the unbroken run's weights" {
	kill_train
}

@test "tf-export killed 200 times never leaves a version that does not load" {
	kill_export
}

@test "tf-csv2record -o killed 200 times leaves the whole output or none under its name" {
	kill_convert
}

@test "tf-records shuffle -o killed 200 times leaves the whole output or none under its name" {
	kill_records
}

@test "tf-ps killed 200 times in one run: each time it goes on from the last checkpoint; no gradient applied twice" {
	kill_ps
}
