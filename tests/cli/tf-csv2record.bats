#!/usr/bin/env bats
# tf-csv2record as a user runs it: normal use, every option, bad input.

bats_require_minimum_version 1.5.0
load helpers

@test "-h and --help print the same usage on stdout" {
	run -0 --separate-stderr tf-csv2record --help
	[[ "$output" == Usage:* ]]
	[ -z "$stderr" ]
	help=$output
	run -0 tf-csv2record -h
	[ "$output" = "$help" ]
}

@test "--version names the command and the library" {
	run -0 tf-csv2record --version
	[[ "$output" =~ ^tf-csv2record\ [0-9]+\.[0-9]+\.[0-9]+\ \(libtfcore ]]
}

@test "the man page documents exactly the options --help lists" {
	diff <(help_options tf-csv2record) <(man_options tf-csv2record)
}

@test "converts breast_cancer.csv: 569 records and a schema" {
	run -0 --separate-stderr tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	[ -z "$stderr" ]
	run -0 tf-records count bc.tfrecord
	[ "$output" = 569 ]
	run -0 /usr/bin/python3 -c 'import json,sys; s=json.load(open("bc.tfrecord.schema.json")); print(s["rows"], s["label"]["name"], s["label"]["classes"], len(s["features"]), s["features"][0]["type"])'
	[ "$output" = "569 label [0, 1] 30 float" ]
	# no temporary files are left beside the output
	[ -z "$(ls | grep '\.tmp\.')" ]
}

@test "python3-protobuf decodes every record to the CSV's values" {
	mkdir pb
	protoc -I"$TOP/tests/proto" --python_out=pb "$TOP/tests/proto/example.proto"
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	run -0 /usr/bin/python3 "$TOP/tests/cli/pydecode.py" pb compare "$DATA/breast_cancer.csv" bc.tfrecord
	[ "$output" = "569 records match" ]
	tf-csv2record --pack-features features -z gzip "$DATA/iris.csv" -o iris.tfrecord.gz
	run -0 /usr/bin/python3 "$TOP/tests/cli/pydecode.py" pb compare "$DATA/iris.csv" iris.tfrecord.gz --packed features
	[ "$output" = "150 records match" ]
}

@test "reads standard input, as - and with no file" {
	small_csv > s.csv
	small_csv | tf-csv2record > a.tfrecord
	small_csv | tf-csv2record - > b.tfrecord
	tf-csv2record s.csv > c.tfrecord
	cmp a.tfrecord b.tfrecord
	cmp a.tfrecord c.tfrecord
	# stdout output writes no schema unless asked
	[ ! -e a.tfrecord.schema.json ]
	run -0 tf-records head -n 1 a.tfrecord
	[ "$output" = '{"a":[1],"b":[2.5],"name":["x"],"y":[0]}' ]
}

@test "several files in a row, and their headers must agree" {
	small_csv > s1.csv
	small_csv > s2.csv
	tf-csv2record s1.csv s2.csv -o two.tfrecord
	run -0 tf-records count two.tfrecord
	[ "$output" = 6 ]
	printf 'a,b,other,y\n1,2,3,4\n' > s3.csv
	run -65 --separate-stderr tf-csv2record s1.csv s3.csv -o bad.tfrecord
	[[ "$stderr" == *"s3.csv:1: the header differs"* ]]
	[ ! -e bad.tfrecord ]
}

@test "archives: every CSV member of a .tar.gz in order, --member, zip, gz" {
	mkdir d
	small_csv > d/one.csv
	small_csv | sed 's/^1,/7,/' > d/two.csv
	echo "not data" > d/README
	tar -czf data.tar.gz -C d one.csv README two.csv
	run -0 tf-csv2record data.tar.gz -o all.tfrecord
	run -0 tf-records count all.tfrecord
	[ "$output" = 6 ]
	run -0 tf-records cat all.tfrecord
	[[ "${lines[3]}" == '{"a":[7],'* ]]
	tf-csv2record --member 'two*' data.tar.gz -o two.tfrecord
	run -0 tf-records count two.tfrecord
	[ "$output" = 3 ]
	(cd d && /usr/bin/python3 -c 'import zipfile; z=zipfile.ZipFile("../d.zip","w",zipfile.ZIP_DEFLATED); z.write("one.csv"); z.write("two.csv"); z.close()')
	tf-csv2record d.zip -o zip.tfrecord
	cmp zip.tfrecord all.tfrecord
	gzip -c d/one.csv > one.csv.gz
	tf-csv2record one.csv.gz -o gz.tfrecord
	tf-csv2record d/one.csv -o plain.tfrecord
	cmp gz.tfrecord plain.tfrecord
	run -65 --separate-stderr tf-csv2record --member 'nothing*' data.tar.gz -o none.tfrecord
	[[ "$stderr" == *"no CSV members"* ]]
}

@test "--delimiter tab, --no-header and --names" {
	printf '1\t2.5\t0\n2\t3.5\t1\n' > t.tsv
	tf-csv2record --delimiter tab --no-header --names u,v,label t.tsv -o t.tfrecord
	run -0 tf-records cat t.tfrecord
	[ "${lines[1]}" = '{"label":[1],"u":[2],"v":[3.5]}' ]
	tf-csv2record -d '	' --no-header t.tsv -o t2.tfrecord
	run -0 tf-records head -n 1 t2.tfrecord
	[ "$output" = '{"col1":[1],"col2":[2.5],"col3":[0]}' ]
}

@test "RFC 4180 quoting: delimiters, quotes and newlines inside fields" {
	printf 'id,text,y\r\n1,"a, ""b""\r\nc",0\r\n2,plain,1\r\n' > q.csv
	tf-csv2record q.csv -o q.tfrecord
	run -0 tf-records cat q.tfrecord
	[ "${lines[0]}" = '{"id":[1],"text":["a, \"b\"\r\nc"],"y":[0]}' ]
}

@test "--label by name or index, --label-type, --no-label" {
	small_csv > s.csv
	tf-csv2record --label a s.csv -o l.tfrecord
	run -0 tf-records head -n 1 l.tfrecord
	[ "$output" = '{"a":[1],"b":[2.5],"name":["x"],"y":[0]}' ]
	run -0 /usr/bin/python3 -c 'import json; print(json.load(open("l.tfrecord.schema.json"))["label"]["name"])'
	[ "$output" = a ]
	tf-csv2record --label 2 --label-type float --numeric-as-float s.csv -o l2.tfrecord
	run -0 /usr/bin/python3 -c 'import json; s=json.load(open("l2.tfrecord.schema.json")); print(s["label"]["name"], s["label"]["type"], [f["type"] for f in s["features"]])'
	[ "$output" = "b float ['float', 'bytes', 'float']" ]
	tf-csv2record --no-label s.csv -o n.tfrecord
	run -0 /usr/bin/python3 -c 'import json; print(json.load(open("n.tfrecord.schema.json"))["label"])'
	[ "$output" = None ]
}

@test "--columns, --drop and --types" {
	small_csv > s.csv
	tf-csv2record --columns a s.csv -o c.tfrecord
	run -0 tf-records head -n 1 c.tfrecord
	[ "$output" = '{"a":[1],"y":[0]}' ]
	tf-csv2record --drop name,b s.csv -o d.tfrecord
	cmp c.tfrecord d.tfrecord
	tf-csv2record --types a:float,b:bytes s.csv -o t.tfrecord
	run -0 tf-records head -n 1 t.tfrecord
	[ "$output" = '{"a":[1],"b":["2.5"],"name":["x"],"y":[0]}' ]
	run -0 tf-records schema t.tfrecord
	[[ "$output" == *"a                        float"* ]]
}

@test "--empty: omit (default), zero, error; an empty label is an error" {
	printf 'x,z,y\n,1,0\n2,,1\n' > e.csv
	tf-csv2record e.csv -o omit.tfrecord
	run -0 tf-records cat omit.tfrecord
	[ "${lines[0]}" = '{"y":[0],"z":[1]}' ]
	tf-csv2record --empty zero e.csv -o zero.tfrecord
	run -0 tf-records cat zero.tfrecord
	[ "${lines[1]}" = '{"x":[2],"y":[1],"z":[0]}' ]
	run -65 --separate-stderr tf-csv2record --empty error e.csv -o err.tfrecord
	[ "$stderr" = "tf-csv2record: e.csv:2: column 'x' is empty" ]
	printf 'x,y\n1,\n' > nolabel.csv
	run -65 --separate-stderr tf-csv2record nolabel.csv -o x.tfrecord
	[ "$stderr" = "tf-csv2record: nolabel.csv:2: the label 'y' is empty" ]
}

@test "--pack-features puts numeric columns in one float list" {
	tf-csv2record --pack-features features "$DATA/iris.csv" -o p.tfrecord
	run -0 tf-records head -n 1 p.tfrecord
	[ "$output" = '{"features":[5.1,3.5,1.4,0.2],"label":[0]}' ]
	run -0 /usr/bin/python3 -c 'import json; s=json.load(open("p.tfrecord.schema.json")); print(s["layout"], s["packed"]["size"], s["packed"]["columns"][0])'
	[ "$output" = "packed 4 sepal_length" ]
}

@test "--format libsvm: ids, values and the label" {
	printf '+1 1:0.5 3:-1\n-1 2:0.25\n' > h.svm
	tf-csv2record --format libsvm h.svm -o h.tfrecord
	run -0 tf-records cat h.tfrecord
	[ "${lines[0]}" = '{"ids":[1,3],"label":[1],"values":[0.5,-1]}' ]
	[ "${lines[1]}" = '{"ids":[2],"label":[-1],"values":[0.25]}' ]
	run -0 /usr/bin/python3 -c 'import json; s=json.load(open("h.tfrecord.schema.json")); print(s["layout"], s["sparse"]["max_index"], s["label"]["classes"])'
	[ "$output" = "libsvm 3 [-1, 1]" ]
	tf-csv2record -f libsvm --label target --label-type float h.svm -o t.tfrecord
	run -0 tf-records head -n 1 t.tfrecord
	[ "$output" = '{"ids":[1,3],"target":[1],"values":[0.5,-1]}' ]
	run -64 --separate-stderr tf-csv2record -f libsvm --label ids h.svm -o t.tfrecord
	[ "$stderr" = "tf-csv2record: --label: 'ids' is taken by the sparse features" ]
	printf '1 1:0.5\n1 x:2\n' > bad.svm
	run -65 --separate-stderr tf-csv2record -f libsvm bad.svm -o b.tfrecord
	[ "$stderr" = "tf-csv2record: bad.svm:2: expected INDEX:VALUE, found 'x:2'" ]
	# regression data's labels say the flag they need
	printf '1.5 1:0.3\n-2.25 2:1\n' > reg.svm
	run -65 --separate-stderr tf-csv2record -f libsvm reg.svm -o r.tfrecord
	[ "$stderr" = "tf-csv2record: reg.svm:1: label '1.5' is not an integer (the labels of regression data: --label-type float)" ]
	[ ! -e r.tfrecord ]
	tf-csv2record -f libsvm --label-type float reg.svm -o r.tfrecord
	run -0 tf-records cat r.tfrecord
	[ "${lines[1]}" = '{"ids":[2],"label":[-2.25],"values":[1]}' ]
	printf 'x 1:0.3\n' > word.svm
	run -65 --separate-stderr tf-csv2record -f libsvm word.svm -o w.tfrecord
	[ "$stderr" = "tf-csv2record: word.svm:1: label 'x' is not an integer" ]
}

@test "--compress gzip and zlib write what tf-records and gzip read" {
	tf-csv2record -z gzip "$DATA/iris.csv" -o i.tfrecord.gz
	gzip -t i.tfrecord.gz
	run -0 tf-records verify i.tfrecord.gz
	[ "$output" = "i.tfrecord.gz: OK, 150 records (gzip)" ]
	tf-csv2record --compress zlib "$DATA/iris.csv" -o i.tfrecord.z
	run -0 tf-records verify -c zlib i.tfrecord.z
	[ "$output" = "i.tfrecord.z: OK, 150 records (zlib)" ]
	tf-csv2record "$DATA/iris.csv" -o plain.tfrecord
	gzip -dc i.tfrecord.gz | cmp - plain.tfrecord
}

@test "--shards N writes NAME-0000i-of-0000N round-robin" {
	tf-csv2record --shards 3 "$DATA/iris.csv" -o iris
	run -0 tf-records count iris-00000-of-00003 iris-00001-of-00003 iris-00002-of-00003
	[ "${lines[3]}" = "150 total" ]
	[ -e iris.schema.json ]
	tf-csv2record "$DATA/iris.csv" -o whole.tfrecord
	tf-records split --shard 1/3 whole.tfrecord -o s1
	cmp s1 iris-00001-of-00003
}

@test "--schema names the sidecar, --no-schema writes none" {
	tf-csv2record --schema my.json "$DATA/iris.csv" > out.tfrecord
	[ -s my.json ]
	tf-csv2record --no-schema "$DATA/iris.csv" -o x.tfrecord
	[ ! -e x.tfrecord.schema.json ]
}

@test "--threads does not change the output" {
	/usr/bin/python3 -c '
import random
r = random.Random(5)
print("k,s,v,y")
for i in range(60000):
    s = "\"q,\"\"%d\"\"\nx\"" % i if i % 9 == 0 else "s%d" % i
    print("%d,%s,%.4f,%d" % (i, s, r.random(), i % 2))' > big.csv
	tf-csv2record -j 1 big.csv -o one.tfrecord
	tf-csv2record --threads 4 big.csv -o four.tfrecord
	cmp one.tfrecord four.tfrecord
	run -0 tf-records count four.tfrecord
	[ "$output" = 60000 ]
}

@test "a malformed row: FILE:LINE, exit 65, no output left behind" {
	printf 'x,y\n1,0\n2,1\n3\n4,1\n' > bad.csv
	run -65 --separate-stderr tf-csv2record bad.csv -o out.tfrecord
	[ "$stderr" = "tf-csv2record: bad.csv:4: expected 2 fields, found 1" ]
	[ -z "$output" ]
	[ ! -e out.tfrecord ] && [ ! -e out.tfrecord.schema.json ]
	[ -z "$(ls | grep '\.tmp\.')" ]
	printf 'x,y\n1.5,0\nabc,1\n' > num.csv
	run -65 --separate-stderr tf-csv2record --infer-rows 1 num.csv -o out.tfrecord
	[ "$stderr" = "tf-csv2record: num.csv:3: column 'x': 'abc' is not a number" ]
}

@test "NaN, inf and 1e39 are bad data unless --allow-nonfinite; the schema stays JSON" {
	printf 'x,z,y\n1.5,2,0\nnan,3,1\n2.5,1e39,0\n-inf,4,1\n3.5,5,0\n' > nf.csv
	run -65 --separate-stderr tf-csv2record nf.csv -o out.tfrecord
	[ "$stderr" = "tf-csv2record: nf.csv:3: column 'x' (field 1): 'nan' is not a number (NaN) (--allow-nonfinite keeps such values)" ]
	[ ! -e out.tfrecord ] && [ ! -e out.tfrecord.schema.json ]
	printf 'x,z,y\n1.5,2,0\n2.5,1e39,0\n' > big.csv
	run -65 --separate-stderr tf-csv2record big.csv -o out.tfrecord
	[ "$stderr" = "tf-csv2record: big.csv:3: column 'z' (field 2): '1e39' is out of the range of a 32-bit float (--allow-nonfinite keeps such values)" ]
	# --skip-bad skips and counts such rows as any other bad row
	run -0 --separate-stderr tf-csv2record --skip-bad nf.csv -o skip.tfrecord
	[[ "$stderr" == *"skipped 3 malformed rows of 5"* ]]
	run -0 tf-records count skip.tfrecord
	[ "$output" = 2 ]
	# kept on request: the values as written, the statistics over the
	# finite ones, a count of the others, and the schema is JSON
	run -0 tf-csv2record --allow-nonfinite nf.csv -o keep.tfrecord
	run -0 /usr/bin/python3 - <<'PY'
import json, math
s = json.load(open("keep.tfrecord.schema.json"))
x = next(c for c in s["features"] if c["name"] == "x")
z = next(c for c in s["features"] if c["name"] == "z")
assert x["present"] == 5 and x["nonfinite"] == 2, x
assert abs(x["mean"] - 2.5) < 1e-9 and x["min"] == 1.5 and x["max"] == 3.5, x
assert z["nonfinite"] == 1 and z["max"] == 5, z
PY
	run -0 tf-records cat --csv keep.tfrecord
	[[ "$output" == *"NaN,3,1"* && "$output" == *"2.5,Infinity,0"* && "$output" == *"-Infinity,4,1"* ]]
	# the schema that tf-records writes from such records is JSON too
	tf-csv2record --allow-nonfinite --no-schema nf.csv -o bare.tfrecord
	run -0 tf-records schema --write --label y bare.tfrecord
	/usr/bin/python3 -c 'import json; json.load(open("bare.tfrecord.schema.json"))'
	# and tf-train reads both
	run -0 tf-train -q --epochs 1 --checkpoint-dir ck keep.tfrecord
	# libsvm values and labels likewise
	printf '1 1:0.5 2:nan\n' > nf.svm
	run -65 --separate-stderr tf-csv2record -f libsvm nf.svm -o svm.tfrecord
	[[ "$stderr" == *"nf.svm:1: index 2: 'nan' is not a number (NaN)"* ]]
}

@test "headers: a repeated or empty name names the file; an unclosed quote is said as such" {
	printf 'a,b,a,y\n1,2,3,0\n' > dup.csv
	run -65 --separate-stderr tf-csv2record dup.csv -o out.tfrecord
	[ "$stderr" = "tf-csv2record: dup.csv:1: column name 'a' appears twice (columns 1 and 3)" ]
	printf 'a,,c,y\n1,2,3,0\n' > empty.csv
	run -65 --separate-stderr tf-csv2record empty.csv -o out.tfrecord
	[ "$stderr" = "tf-csv2record: empty.csv:1: column 2 has no name (--names names every column)" ]
	run -0 tf-csv2record --names a,b,c,y empty.csv -o out.tfrecord
	run -65 --separate-stderr sh -c 'printf "1,2\n" | tf-csv2record --no-header --names a,a'
	[ "$stderr" = "tf-csv2record: --names: column name 'a' appears twice (columns 1 and 2)" ]
	[ ! -e out.tfrecord.tmp ] && [ -z "$(ls | grep '\.tmp\.')" ]
	printf 'a,b,y\n1,2,0\n3,4,1\n5,"6\n,1\n' > quote.csv
	for j in 1 2; do
		run -65 --separate-stderr tf-csv2record -j $j quote.csv -o q.tfrecord
		[ "$stderr" = "tf-csv2record: quote.csv:4: a quoted field that starts in this row is never closed" ]
	done
	run -0 --separate-stderr tf-csv2record --skip-bad quote.csv -o q.tfrecord
	[[ "$stderr" == *"skipped 1 malformed row of 3" ]]
	run -0 tf-records count q.tfrecord
	[ "$output" = 2 ]
}

@test "--skip-bad keeps going and reports the skipped rows" {
	printf 'x,y\n1,0\n2,1\n3\n4,1\n5\n' > bad.csv
	run -0 --separate-stderr tf-csv2record --skip-bad bad.csv -o out.tfrecord
	[[ "$stderr" == *"bad.csv:4: expected 2 fields, found 1"* ]]
	[[ "$stderr" == *"bad.csv:6: expected 2 fields, found 1"* ]]
	[[ "$stderr" == *"skipped 2 malformed rows of 5"* ]]
	run -0 tf-records count out.tfrecord
	[ "$output" = 3 ]
	run -0 /usr/bin/python3 -c 'import json; s=json.load(open("out.tfrecord.schema.json")); print(s["rows"], s["skipped"])'
	[ "$output" = "3 2" ]
}

@test "usage errors exit 64 with a hint" {
	run -64 --separate-stderr tf-csv2record --bogus
	[[ "$stderr" == *"try 'tf-csv2record --help'"* ]]
	run -64 --separate-stderr tf-csv2record --delimiter ab x.csv
	[[ "$stderr" == *"--delimiter: 'ab' is not one character"* ]]
	run -64 --separate-stderr tf-csv2record --shards 2 x.csv
	[[ "$stderr" == *"--shards needs --output"* ]]
	run -64 --separate-stderr tf-csv2record --threads 0 x.csv
	run -64 --separate-stderr tf-csv2record --compress lz4 x.csv
	run -64 --separate-stderr tf-csv2record --empty maybe x.csv
	run -64 --separate-stderr tf-csv2record --format parquet x.csv
	small_csv > s.csv
	run -64 --separate-stderr tf-csv2record --label nope s.csv -o o.tfrecord
	[ "$stderr" = "tf-csv2record: --label: no column 'nope'" ]
	run -64 --separate-stderr tf-csv2record --drop nope s.csv -o o.tfrecord
	[ "$stderr" = "tf-csv2record: --drop: no column named 'nope'" ]
	[ ! -e o.tfrecord ]
}

@test "missing input exits 66, an unwritable output 73" {
	run -66 --separate-stderr tf-csv2record no-such.csv -o o.tfrecord
	[[ "$stderr" == *"cannot open 'no-such.csv': No such file or directory"* ]]
	[ ! -e o.tfrecord ]
	small_csv > s.csv
	run -73 --separate-stderr tf-csv2record s.csv -o no/such/dir/o.tfrecord
	[[ "$stderr" == *"cannot create 'no/such/dir/o.tfrecord'"* ]]
}

@test "an empty input is an error; a header alone gives an empty output" {
	: > empty.csv
	run -65 --separate-stderr tf-csv2record empty.csv -o e.tfrecord
	[ "$stderr" = "tf-csv2record: empty.csv: empty: no header and no rows to convert" ]
	[ ! -e e.tfrecord ]
	printf 'x,y\n' > header-only.csv
	run -0 tf-csv2record header-only.csv -o h.tfrecord
	run -0 tf-records count h.tfrecord
	[ "$output" = 0 ]
}

@test "a progress line on a terminal's stderr, none otherwise" {
	/usr/bin/python3 -c '
for i in range(900000): print("%d.5,%d" % (i, i % 2))' > rows.csv
	# two parts with a pause between, so progress is reported mid-run
	printf '#!/bin/sh\necho x,y; cat rows.csv; sleep 0.6; cat rows.csv\n' > feed
	script -qec "sh feed | tf-csv2record -o big.tfrecord" /dev/null > tty.txt
	grep -q 'tf-csv2record: [0-9]* rows, [0-9]* rows/s' tty.txt
	run -0 --separate-stderr sh -c "sh feed | tf-csv2record -o big2.tfrecord"
	[ -z "$stderr" ]
	# --quiet: no progress even on a terminal
	script -qec "sh feed | tf-csv2record --quiet -o big3.tfrecord" /dev/null > quiet.txt
	! grep -q 'rows/s' quiet.txt
	cmp big.tfrecord big3.tfrecord
	run -0 tf-records count big.tfrecord
	[ "$output" = 1800000 ]
	cmp big.tfrecord big2.tfrecord
}

@test "refuses to write records to a terminal" {
	small_csv > s.csv
	run -64 script -qec "tf-csv2record s.csv" /dev/null
	[[ "$output" == *"refusing to write binary records to a terminal"* ]]
}

@test "-o names a device or FIFO: written in place, never replaced, no sidecar" {
	mknod null c 1 3
	mknod full c 1 7
	run -0 tf-csv2record "$DATA/breast_cancer.csv" -o null
	[ -c null ]
	[ ! -e null.schema.json ]
	run -74 --separate-stderr tf-csv2record "$DATA/breast_cancer.csv" -o full
	[[ "$stderr" == *"full: write failed: No space left on device"* ]]
	[ -c full ]
	[ ! -e full.schema.json ]
	[ -z "$(ls | grep '\.tmp\.')" ]
	mkfifo pipe
	cat pipe > got.tfrecord &
	run -0 tf-csv2record "$DATA/iris.csv" -o pipe
	wait
	[ -p pipe ]
	[ ! -e pipe.schema.json ]
	run -0 tf-records count got.tfrecord
	[ "$output" = 150 ]
	run -64 --separate-stderr tf-csv2record --shards 2 "$DATA/iris.csv" -o null
	[[ "$stderr" == *"--shards needs an --output that names files"* ]]
	mkdir d
	run -73 --separate-stderr tf-csv2record "$DATA/iris.csv" -o d
	[ "$stderr" = "tf-csv2record: d: is a directory" ]
}

@test "a gzip-compressed copy of a bundled CSV converts as the CSV does" {
	# libarchive's mtree reader once claimed such text: "no CSV members"
	for f in iris breast_cancer wine; do
		gzip -c "$DATA/$f.csv" > "$f.csv.gz"
		run -0 tf-csv2record --no-schema "$f.csv.gz" -o gz.tfrecord
		tf-csv2record --no-schema "$DATA/$f.csv" -o plain.tfrecord
		cmp gz.tfrecord plain.tfrecord
	done
}

@test "--sequence: a cell's steps become a list feature (bytes, int64 or float tokens as inferred), the schema its max_length and vocabulary" {
	printf 'id,pages,xs,items,label\n1,home  cart buy,0.5 1.5,7 007 12,1\n2,,2,3,0\n' > s.csv
	tf-csv2record --sequence pages,xs,items s.csv -o s.tfrecord
	run -0 tf-records cat s.tfrecord
	[ "${lines[0]}" = '{"id":[1],"items":[7,7,12],"label":[1],"pages":["home","cart","buy"],"xs":[0.5,1.5]}' ]
	[ "${lines[1]}" = '{"id":[2],"items":[3],"label":[0],"pages":[],"xs":[2]}' ]
	/usr/bin/python3 -c '
import json
s = json.load(open("s.tfrecord.schema.json"))
f = {c["name"]: c for c in s["features"]}
assert (f["pages"]["type"], f["pages"]["max_length"]) == ("bytes", 3), f
assert (f["xs"]["type"], f["xs"]["max_length"]) == ("float", 2), f
assert (f["items"]["type"], f["items"]["max_length"]) == ("int64", 3), f
assert "mean" not in f["pages"] and f["id"]["mean"] == 1.5
assert s["vocabularies"]["pages"] == ["buy", "cart", "home"]
assert s["vocabularies"]["items"] == ["12", "3", "7"]'
	# another separator, and a type said
	printf 'p;label\nhome|cart;1\n' > t.csv
	tf-csv2record -d ';' --sequence p --sequence-delimiter '|' --types p:bytes t.csv -o t.tfrecord
	run -0 tf-records cat t.tfrecord
	[ "$output" = '{"label":[1],"p":["home","cart"]}' ]
}

@test "--sequence: a step that is not a number of a numeric sequence is 65 naming the line and step; bad flags are 64" {
	printf 'xs,label\n1 2 3,0\n4 x 6,1\n' > s.csv
	run -65 tf-csv2record --sequence xs --infer-rows 1 s.csv -o s.tfrecord
	[[ "$output" == *"s.csv:3: column 'xs', step 2: 'x' is not an integer"* ]]
	[ ! -e s.tfrecord ]
	run -64 tf-csv2record --sequence nope s.csv -o s.tfrecord
	[[ "$output" == *"--sequence: no column named 'nope'"* ]]
	run -64 tf-csv2record --sequence label s.csv -o s.tfrecord
	[[ "$output" == *"--sequence: 'label' is the label"* ]]
	run -64 tf-csv2record --sequence xs --sequence-delimiter , s.csv -o s.tfrecord
	[[ "$output" == *"bad sequence delimiter"* ]]
	run -64 tf-csv2record --sequence xs --sequence-delimiter ab s.csv -o s.tfrecord
	[[ "$output" == *"--sequence-delimiter: 'ab' is not one character"* ]]
}
