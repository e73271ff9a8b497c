#!/usr/bin/env bats
# tf-records: every command on real data, compressed input, damage.

bats_require_minimum_version 1.5.0
load helpers

iris() {
	tf-csv2record --no-schema "$DATA/iris.csv" -o iris.tfrecord
}

@test "-h and --help print the same usage on stdout" {
	run -0 --separate-stderr tf-records --help
	[[ "$output" == Usage:* ]]
	[ -z "$stderr" ]
	help=$output
	run -0 tf-records -h
	[ "$output" = "$help" ]
	run -0 tf-records cat --help
	[ "$output" = "$help" ]
}

@test "--version names the command and the library" {
	run -0 tf-records --version
	[[ "$output" =~ ^tf-records\ [0-9]+\.[0-9]+\.[0-9]+\ \(libtfcore ]]
}

@test "the man page documents exactly the options --help lists" {
	diff <(help_options tf-records) <(man_options tf-records)
}

@test "cat prints JSON lines that round-trip the CSV values" {
	iris
	run -0 --separate-stderr tf-records cat iris.tfrecord
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 150 ]
	[ "${lines[0]}" = '{"label":[0],"petal_length":[1.4],"petal_width":[0.2],"sepal_length":[5.1],"sepal_width":[3.5]}' ]
	printf '%s\n' "${lines[@]}" | /usr/bin/python3 -c '
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for line, row in zip(sys.stdin, rows):
    j = json.loads(line)
    for k, v in row.items():
        assert abs(j[k][0] - float(v)) < 1e-6, (k, j[k], v)
print("ok")' "$DATA/iris.csv"
}

@test "cat prints an int64 as TensorFlow reads it: a libsvm id past 2^63-1 as the negative number of the same bits" {
	printf '1 5:1 18446744073709551615:0.5 9223372036854775808:2\n' > big.svm
	tf-csv2record -q -f libsvm -o big.tfrecord big.svm
	run -0 tf-records cat big.tfrecord
	[ "$output" = '{"ids":[5,-1,-9223372036854775808],"label":[1],"values":[1,0.5,2]}' ]
}

@test "cat --csv writes a header and the values" {
	iris
	run -0 tf-records cat --csv iris.tfrecord
	[ "${lines[0]}" = "label,petal_length,petal_width,sepal_length,sepal_width" ]
	[ "${lines[150]}" = "2,5.1,1.8,5.9,3" ]
	printf 'a,b,y\n1,"x, ""y""",0\n' > q.csv
	tf-csv2record q.csv -o q.tfrecord
	run -0 tf-records cat --csv q.tfrecord
	[ "${lines[1]}" = '1,"x, ""y""",0' ]
}

@test "cat --raw and head --raw write records; head -n" {
	iris
	tf-records cat --raw iris.tfrecord > copy.tfrecord
	cmp iris.tfrecord copy.tfrecord
	run -0 tf-records head -n 3 iris.tfrecord
	[ "${#lines[@]}" -eq 3 ]
	tf-records head -n 5 --raw iris.tfrecord -o five.tfrecord
	run -0 tf-records count five.tfrecord
	[ "$output" = 5 ]
	run -0 tf-records head iris.tfrecord
	[ "${#lines[@]}" -eq 10 ]
	tf-records head -n 7 --raw iris.tfrecord | tf-records cat --raw -z gzip -o seven.gz
	run -0 tf-records count seven.gz
	[ "$output" = 7 ]
}

@test "count: one number, or per-file lines and a total; stdin" {
	iris
	run -0 tf-records count iris.tfrecord
	[ "$output" = 150 ]
	run -0 tf-records count iris.tfrecord iris.tfrecord
	[ "${lines[2]}" = "300 total" ]
	run -0 bash -c 'tf-records count < iris.tfrecord'
	[ "$output" = 150 ]
}

@test "compressed input is detected; --compression forces a type" {
	tf-csv2record --no-schema -z gzip "$DATA/iris.csv" -o iris.gz
	tf-csv2record --no-schema -z zlib "$DATA/iris.csv" -o iris.z
	run -0 tf-records count iris.gz
	[ "$output" = 150 ]
	run -0 tf-records count iris.z
	[ "$output" = 150 ]
	run -65 --separate-stderr tf-records count --compression none iris.gz
	[[ "$stderr" == *"corrupted record at 0"*"(Is this even a TFRecord file?)"* ]]
	run -65 --separate-stderr tf-records count -c zlib iris.gz
	[[ "$stderr" == *"inflate() failed"* ]]
}

@test "verify checks every record and names each damaged one" {
	iris
	run -0 tf-records verify iris.tfrecord
	[ "$output" = "iris.tfrecord: OK, 150 records (none)" ]
	# record 0 is 0..(n0+16); damage record 1's data and record 3's length
	tf-records index iris.tfrecord > idx
	r1=$(sed -n 2p idx | cut -d' ' -f1)
	r3=$(sed -n 4p idx | cut -d' ' -f1)
	flip_byte iris.tfrecord $((r1 + 20))
	flip_byte iris.tfrecord $((r3 + 2))
	run -65 --separate-stderr tf-records verify iris.tfrecord
	[ -z "$output" ]
	[[ "$stderr" == *"record 1: corrupted record at $((r1 + 12)) (data checksum mismatch)"* ]]
	[[ "$stderr" == *"corrupted record at $r3 (length checksum mismatch)"* ]]
	[[ "$stderr" == *"iris.tfrecord: 2 damaged records, 148 good"* ]]
	# count: nothing on standard output unless the count is whole
	run -65 --separate-stderr tf-records count iris.tfrecord
	[ -z "$output" ]
	cp iris.tfrecord copy.tfrecord
	run -65 --separate-stderr tf-records count copy.tfrecord iris.tfrecord
	[ -z "$output" ]
	run -0 --separate-stderr tf-records count --skip-corrupt iris.tfrecord
	[ "$output" = 148 ]
}

@test "verify: any TFRecord file's framing; content that is not an Example is said, not damage" {
	iris
	tf-train -q --label label --epochs 2 --logdir logs --checkpoint-dir ck iris.tfrecord > /dev/null 2>&1
	ev=$(ls logs/events.out.tfevents.*)
	run -0 --separate-stderr tf-records verify "$ev"
	[[ "$output" =~ ^logs/events\.out\.tfevents\..*:\ OK,\ [0-9]+\ records\ \(none\)\;\ none\ is\ a\ tf\.train\.Example\ \(record\ 0:\ .*\)$ ]]
	[ -z "$stderr" ]
	# a file of Examples with one record that is not one
	cat iris.tfrecord "$ev" > mixed.tfrecord
	run -0 tf-records verify mixed.tfrecord
	[[ "$output" == "mixed.tfrecord: OK, "*" records (none); "*" not a tf.train.Example (record 150: "* ]]
}

@test "a truncated file: the good records, then exit 65 naming the offset" {
	iris
	size=$(stat -c %s iris.tfrecord)
	head -c $((size - 3)) iris.tfrecord > cut.tfrecord
	last=$(tf-records index iris.tfrecord | tail -n1 | cut -d' ' -f1)
	run -65 --separate-stderr tf-records cat cut.tfrecord
	[ "${#lines[@]}" -eq 149 ]
	[ "$stderr" = "tf-records: cut.tfrecord: record 149: truncated record at $last" ]
	run -0 --separate-stderr tf-records count --skip-corrupt cut.tfrecord
	[ "$output" = 149 ]
	[[ "$stderr" == *"skipped 1 damaged record"* ]]
}

@test "schema lists features, kinds and lengths; --json" {
	printf '+1 1:0.5 3:-1\n-1 2:0.25\n' > h.svm
	tf-csv2record --no-schema -f libsvm h.svm -o h.tfrecord
	run -0 tf-records schema h.tfrecord
	[ "${lines[0]}" = "feature                  kind      records  min_len  max_len" ]
	[ "${lines[1]}" = "ids                      int64           2        1        2" ]
	[ "${lines[4]}" = "2 records" ]
	run -0 tf-records schema --json h.tfrecord
	[ "$output" = '{"records":2,"features":[{"name":"ids","kind":"int64","records":2,"min_len":1,"max_len":2},{"name":"label","kind":"int64","records":2,"min_len":1,"max_len":1},{"name":"values","kind":"float","records":2,"min_len":1,"max_len":2}]}' ]
}

@test "index: one 'offset length' per record, covering the file" {
	iris
	run -0 tf-records index iris.tfrecord
	[ "${#lines[@]}" -eq 150 ]
	[ "${lines[0]%% *}" = 0 ]
	total=$(tf-records index iris.tfrecord | awk '{ s += $2 } END { print s }')
	[ "$total" = "$(stat -c %s iris.tfrecord)" ]
	tf-csv2record --no-schema -z gzip "$DATA/iris.csv" -o iris.gz
	run -65 --separate-stderr tf-records index iris.gz
	[[ "$stderr" == *"an index needs an uncompressed file"* ]]
}

@test "split -n N round-robin, and --shard I/N picks the same records" {
	iris
	tf-records split -n 4 -o part iris.tfrecord
	run -0 tf-records count part-0000[0-3]-of-00004
	[ "${lines[0]}" = "38 part-00000-of-00004" ]
	[ "${lines[3]}" = "37 part-00003-of-00004" ]
	[ "${lines[4]}" = "150 total" ]
	tf-records split --shard 2/4 iris.tfrecord > s2
	cmp s2 part-00002-of-00004
	run -64 --separate-stderr tf-records split iris.tfrecord
	run -64 --separate-stderr tf-records split --shard 4/4 iris.tfrecord
}

@test "shuffle: seeded, a permutation, larger than memory works" {
	tf-csv2record --no-schema "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-records shuffle --seed 7 bc.tfrecord -o a.tfrecord
	tf-records shuffle -s 7 bc.tfrecord -o b.tfrecord
	tf-records shuffle -s 8 bc.tfrecord -o c.tfrecord
	cmp a.tfrecord b.tfrecord
	! cmp -s a.tfrecord c.tfrecord
	! cmp -s a.tfrecord bc.tfrecord
	diff <(tf-records cat bc.tfrecord | sort) <(tf-records cat a.tfrecord | sort)
	# 520 KB of records with 64 KB of memory: spilled to temporary buckets
	tf-records shuffle -s 7 --memory 64K bc.tfrecord -o spill.tfrecord
	diff <(tf-records cat bc.tfrecord | sort) <(tf-records cat spill.tfrecord | sort)
	! cmp -s spill.tfrecord bc.tfrecord
	tf-records shuffle -s 7 -M 64K bc.tfrecord -o spill2.tfrecord
	cmp spill.tfrecord spill2.tfrecord
	# the first record lands anywhere: not stuck at the front
	first=$(tf-records head -n 1 bc.tfrecord)
	pos=$(tf-records cat spill.tfrecord | grep -nxF "$first" | cut -d: -f1)
	[ "$pos" -gt 1 ]
}

@test "a failed input leaves no output file" {
	iris
	head -c 100 iris.tfrecord > cut.tfrecord
	run -65 tf-records shuffle -s 1 cut.tfrecord -o out.tfrecord
	[ ! -e out.tfrecord ]
	[ -z "$(ls | grep '\.tmp\.')" ]
	run -65 tf-records split -n 2 -o part cut.tfrecord
	[ -z "$(ls | grep part)" ]
}

@test "bad usage and missing files" {
	run -64 --separate-stderr tf-records
	[[ "$stderr" == *"missing COMMAND"* ]]
	run -64 --separate-stderr tf-records frobnicate x
	[[ "$stderr" == *"unknown command 'frobnicate'"* ]]
	run -64 --separate-stderr tf-records cat --bogus x
	[[ "$stderr" == *"try 'tf-records --help'"* ]]
	run -64 tf-records head -n -1 x
	run -64 tf-records cat --csv --raw x
	run -64 tf-records shuffle --memory 1 x
	run -66 --separate-stderr tf-records count no-such.tfrecord
	[[ "$stderr" == *"cannot open 'no-such.tfrecord'"* ]]
}

@test "a record that is not an Example is a data error" {
	printf 'hello' | /usr/bin/python3 -c '
import struct, sys
sys.path.insert(0, sys.argv[1])
from pydecode import masked
d = sys.stdin.buffer.read()
h = struct.pack("<Q", len(d))
sys.stdout.buffer.write(h + struct.pack("<I", masked(h)) + d + struct.pack("<I", masked(d)))' "$TOP/tests/cli" > hello.tfrecord
	run -0 tf-records count hello.tfrecord
	[ "$output" = 1 ]
	run -65 --separate-stderr tf-records cat hello.tfrecord
	[[ "$stderr" == *"record 0: malformed Example"* ]]
}

@test "a file pattern stands for its files; one matching none is 66" {
	printf 'a,label\n1,0\n2,1\n3,0\n' > small.csv
	tf-csv2record small.csv -o small.tfrecord
	tf-records split -n 3 -o part small.tfrecord
	run -0 tf-records count 'part-*'
	[ "${lines[0]}" = "1 part-00000-of-00003" ]
	[ "${lines[3]}" = "3 total" ]
	run -66 --separate-stderr tf-records count 'none-*'
	[ "$stderr" = "tf-records: none-*: no files match this pattern" ]
}

@test "split, --shard and shuffle carry the schema to their outputs" {
	printf 'a,b,label\n' > s.csv
	for i in $(seq 1 10); do printf '%d,%d.5,%d\n' $i $i $((i % 2)) >> s.csv; done
	tf-csv2record s.csv -o s.tfrecord
	tf-records split -n 3 -o part s.tfrecord
	cmp part.schema.json s.tfrecord.schema.json
	# the shards of one set: their schema goes with them
	tf-records shuffle --seed 1 -o mixed.tfrecord 'part-*'
	cmp mixed.tfrecord.schema.json s.tfrecord.schema.json
	tf-records split --shard 1/3 -o one.tfrecord s.tfrecord
	/usr/bin/python3 -c '
import json
a, b = (json.load(open(f)) for f in ("one.tfrecord.schema.json", "s.tfrecord.schema.json"))
assert a["rows"] == 3 and b["rows"] == 10, (a["rows"], b["rows"])
a["rows"] = b["rows"]
assert a == b'
	# tf-train finds them
	run -0 tf-train -q --epochs 1 --checkpoint-dir ck 'part-*'
	run -0 tf-train -q --epochs 1 --checkpoint-dir ck2 mixed.tfrecord
	# inputs of several sets, standard input or output: no schema
	cp s.csv t.csv
	tf-csv2record t.csv -o t.tfrecord
	tf-records shuffle --seed 1 -o both.tfrecord s.tfrecord t.tfrecord
	[ ! -e both.tfrecord.schema.json ]
	tf-records shuffle --seed 1 -o piped.tfrecord < s.tfrecord
	[ ! -e piped.tfrecord.schema.json ]
}

@test "-o names a device: written in place, never replaced, no sidecar" {
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	mknod null c 1 3
	mknod full c 1 7
	run -0 tf-records shuffle -s 1 iris.tfrecord -o null
	[ -c null ]
	[ ! -e null.schema.json ]
	run -74 --separate-stderr tf-records shuffle -s 1 iris.tfrecord -o full
	[[ "$stderr" == *"No space left on device"* ]]
	[ -c full ]
	[ ! -e full.schema.json ]
	[ -z "$(ls | grep '\.tmp\.')" ]
}

@test "cat --csv writes the schema's columns, label last: tf-csv2record reads it back the same" {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	run -0 tf-records head -n 1 --csv bc.tfrecord
	[ "${lines[0]}" = "$(head -n 1 "$DATA/breast_cancer.csv")" ]
	tf-records cat --csv bc.tfrecord | tf-csv2record -o back.tfrecord
	/usr/bin/python3 -c '
import json
a, b = (json.load(open(f)) for f in ("bc.tfrecord.schema.json", "back.tfrecord.schema.json"))
for s in a, b:
    s.pop("sources")
assert a == b, (a["label"], b["label"])'
	cmp <(tf-records cat bc.tfrecord) <(tf-records cat back.tfrecord)
}

@test "a command runs no idle OpenBLAS workers beside its own threads" {
	# OpenBLAS starts a worker per further CPU when it loads; idle, they
	# spin and take a CPU from the command.  tf-records is one thread:
	# blocked opening a FIFO, it must be that thread alone.
	[ "$(nproc)" -ge 2 ] || skip "OpenBLAS starts no workers on one CPU"
	mkfifo in.fifo
	tf-records count in.fifo > count.out &
	pid=$!
	for _ in $(seq 50); do
		[ "$(awk '/^State:/ { print $2 }' /proc/$pid/status)" = S ] && break
		sleep 0.1
	done
	sleep 0.3
	tasks=$(ls /proc/$pid/task | wc -l)
	: > in.fifo
	wait "$pid"
	[ "$(cat count.out)" = 0 ]
	[ "$tasks" -eq 1 ]
}
