#!/usr/bin/env bats
# A full disk (a small tmpfs, filled), a read-only one (remounted) and a device that is always full: every output command says so (exit 74 or 73) and the previous output, checkpoint or export is still there, whole; a run resumed once there is room again goes on.

bats_require_minimum_version 1.5.0
load ../cli/helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir m
	if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=4m tmpfs m 2> /dev/null; then
		skip "mounting a small tmpfs needs root (the CI runs as root)"
	fi
	MOUNTED=1
	tf-csv2record -q "$DATA/breast_cancer.csv" -o bc.tfrecord
}

teardown() {
	cd "$BATS_TEST_TMPDIR" || return 0
	[ -z "${MOUNTED:-}" ] || umount m
}

# Fill the tmpfs to its last block.
fill() {
	dd if=/dev/zero of=m/filler bs=4k > /dev/null 2>&1 || true
}

# What m holds besides the filler (temporaries would show here).
listing() {
	(cd m && find . -path ./filler -prune -o -print | sort)
}

# Save m's files (but the filler) to compare later.
snapshot() {
	rm -rf saved && cp -a m saved && rm -f saved/filler
	listing > saved.list
}

# m holds exactly what it held at the snapshot, byte for byte.
unchanged() {
	diff saved.list <(listing)
	(cd saved && find . -type f) | while read -r f; do cmp "saved/$f" "m/$f"; done
}

@test "tf-csv2record -o on a full disk: exit 74, the previous records and schema whole, no temporary left" {
	tf-csv2record -q "$DATA/breast_cancer.csv" -o m/bc.tfrecord
	snapshot
	fill
	run -74 tf-csv2record -q "$DATA/breast_cancer.csv" --pack-features x -o m/bc.tfrecord
	[[ "$output" == *"No space left on device"* ]]
	unchanged
	# a run with room for its records but not its schema sidecar keeps
	# both old files too: the sidecar is written before either is
	# renamed in
	rm m/filler
	tf-csv2record -q "$DATA/breast_cancer.csv" -o m/bc.tfrecord
	snapshot
	# room for the records and one page more (tmpfs counts pages): the
	# schema (two pages) does not fit
	pages=$((($(stat -c %s m/bc.tfrecord) + 4095) / 4096 + 1))
	dd if=/dev/zero of=m/filler bs=4096 count=$(($(df -B4096 --output=avail m | tail -n1) - pages)) > /dev/null 2>&1
	run -74 tf-csv2record -q "$DATA/breast_cancer.csv" -o m/bc.tfrecord
	[[ "$output" == *"No space left on device"* ]]
	unchanged
}

@test "tf-csv2record and tf-records on a read-only disk: exit 73 naming the file, nothing changed" {
	tf-csv2record -q "$DATA/breast_cancer.csv" -o m/bc.tfrecord
	snapshot
	mount -o remount,ro m
	run -73 tf-csv2record -q "$DATA/breast_cancer.csv" -o m/bc.tfrecord
	[[ "$output" == *"cannot create 'm/bc.tfrecord': Read-only file system"* ]]
	run -73 tf-records shuffle -s 1 bc.tfrecord -o m/bc.tfrecord
	[[ "$output" == *"m/bc.tfrecord"*"Read-only file system"* ]]
	run -73 tf-records split -n 2 bc.tfrecord -o m/part
	mount -o remount,rw m
	unchanged
}

@test "tf-records shuffle and split on a full disk: exit 74, the previous output whole" {
	tf-records shuffle -s 1 bc.tfrecord -o m/sh.tfrecord
	snapshot
	fill
	run -74 tf-records shuffle -s 2 bc.tfrecord -o m/sh.tfrecord
	[[ "$output" == *"No space left on device"* ]]
	run -74 tf-records split -n 3 bc.tfrecord -o m/part
	unchanged
}

@test "a device that is always full (mknod c 1 7): exit 74, for records and for text" {
	mknod full c 1 7
	run -74 tf-csv2record -q "$DATA/breast_cancer.csv" --no-schema -o full
	[[ "$output" == *"No space left on device"* ]]
	run -74 tf-records shuffle -s 1 bc.tfrecord -o full
	tf-train -q --epochs 1 --checkpoint-dir ck bc.tfrecord > /dev/null
	run -74 --separate-stderr sh -c 'tf-eval -d ck --predict bc.tfrecord > full'
	[ "$stderr" = "tf-eval: write error: No space left on device" ]
	run -74 tf-export -d ck --format onnx --output full
	[ -c full ]
}

@test "tf-train when the disk fills mid-run: exit 74, the checkpoints before whole; with room again the run resumes and ends as an unbroken one" {
	args=(-q --epochs 6 --batch-size 16 --save-every 5 --keep 2 --seed 3 bc.tfrecord)
	tf-train --checkpoint-dir whole "${args[@]}" > /dev/null
	# room for about three checkpoints: the run fills the disk on its way
	size=$(stat -c %s "$(ls whole/model.ckpt-* | head -n1)")
	dd if=/dev/zero of=m/filler bs=1 count=$(($(df -B1 --output=avail m | tail -n1) - 3 * size)) > /dev/null 2>&1
	run -74 tf-train --checkpoint-dir m/ck "${args[@]}"
	[[ "$output" == *"No space left on device"* ]]
	latest() { echo "$1/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' "$1/checkpoint")"; }
	# the latest checkpoint named is whole and loads; no temporary left
	tf-eval -d m/ck bc.tfrecord > /dev/null
	[ -z "$(ls m/ck | grep -v -e '^model\.ckpt-[0-9]*$' -e '^checkpoint$' -e '^LOCK$')" ]
	rm m/filler
	tf-train --checkpoint-dir m/ck "${args[@]}" > /dev/null
	same_state "$(latest m/ck)" "$(latest whole)"
}

@test "tf-export on a full or read-only disk: exit 74 or 73, no new version, the old ones still load" {
	tf-train -q --epochs 2 --checkpoint-dir ck bc.tfrecord > /dev/null
	tf-export -d ck --export-base m/models > /dev/null
	snapshot
	fill
	run tf-export -d ck --export-base m/models
	[ "$status" = 74 ] || [ "$status" = 73 ]
	[[ "$output" == *"No space left on device"* ]]
	unchanged
	run -74 tf-export -d ck --archive m/models/model
	unchanged
	rm m/filler
	mount -o remount,ro m
	run -73 tf-export -d ck --export-base m/models
	mount -o remount,rw m
	unchanged
	tf-eval -d m/models/1 bc.tfrecord > /dev/null
}
