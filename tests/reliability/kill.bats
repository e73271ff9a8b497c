#!/usr/bin/env bats
# SIGKILL at seeded random moments, 20 tries each: a killed tf-train resumes to the weights of an unbroken run, a killed tf-export never leaves a version that loads half, a killed tf-csv2record -o or tf-records -o never leaves part of its output under the name, a killed tf-ps started again takes its shard from the last checkpoint and applies no gradient twice.

bats_require_minimum_version 1.5.0
load ../cli/helpers
load kill

TRIES=20

@test "tf-train killed while it checkpoints, again and again, ends with the unbroken run's weights" {
	kill_train
}

@test "tf-export killed at any moment never leaves a version that does not load" {
	kill_export
}

@test "tf-csv2record -o killed at any moment leaves the whole output or none under its name" {
	kill_convert
}

@test "tf-records shuffle -o killed at any moment leaves the whole output or none under its name" {
	kill_records
}

@test "tf-ps killed 20 times in one run: started again, it goes on from the last checkpoint; no gradient applied twice" {
	kill_ps
}
