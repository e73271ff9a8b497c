#!/usr/bin/env bats
# make install lays out tools, library, headers, pkg-config file and man
# pages; a program built against the installed files works.

bats_require_minimum_version 1.5.0
load helpers

@test "the shared library exports only tf_ symbols" {
	nm -D --defined-only "$TFKIT_BUILD/lib/libtfcore.so" |
		awk '$2 ~ /^[TDRB]$/ { print $3 }' > symbols
	grep -q '^tf_reader_next$' symbols
	run -1 grep -v '^tf_' symbols
}

@test "make install DESTDIR PREFIX, then build against pkg-config" {
	dest=$BATS_TEST_TMPDIR/root
	make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/usr/local SANITIZE=0 >/dev/null
	for f in bin/tf-csv2record bin/tf-records lib/libtfcore.so.0 lib/libtfcore.a \
		lib/pkgconfig/libtfcore.pc include/tf/tf.h include/tf/record.h \
		share/man/man1/tf-csv2record.1 share/man/man1/tf-records.1 \
		share/man/man5/tfrecord.5 share/tfkit/data/iris.csv; do
		[ -e "$dest/usr/local/$f" ] || { echo "missing $f"; false; }
	done
	[ -d "$dest/usr/local/lib/tfkit/plugins" ]
	# the installed tool finds its library next to it
	run -0 "$dest/usr/local/bin/tf-records" --version
	cat > prog.c <<'C'
#include <stdio.h>
#include <tf/tf.h>
int main(void)
{
	struct tf_writer *w = tf_writer_new();
	if (tf_writer_open(w, "out.tfrecord", TF_COMPRESS_NONE, 0) != TF_OK ||
	    tf_writer_write(w, "hello", 5) != TF_OK || tf_writer_close(w) != TF_OK) {
		fprintf(stderr, "%s\n", tf_errmsg(w));
		return 1;
	}
	tf_writer_free(w);
	printf("libtfcore %s\n", tf_version());
	return 0;
}
C
	export PKG_CONFIG_PATH=$dest/usr/local/lib/pkgconfig
	export PKG_CONFIG_SYSROOT_DIR=$dest
	cc -std=c11 -Wall -Werror $(pkg-config --cflags libtfcore) prog.c \
		$(pkg-config --libs libtfcore) -o prog
	run -0 env LD_LIBRARY_PATH="$dest/usr/local/lib" ./prog
	[[ "$output" == "libtfcore "* ]]
	# the bytes of FORMATS' "hello" vector
	[ "$(od -An -tx1 out.tfrecord | tr -d ' \n')" = "0500000000000000eab2043e68656c6c6fbb1f1c19" ]
}
