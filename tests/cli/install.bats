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
		share/man/man5/tfrecord.5 share/man/man7/tfkit.7 share/tfkit/data/iris.csv \
		share/tfkit/examples/cron-retrain share/tfkit/examples/sweep; do
		[ -e "$dest/usr/local/$f" ] || { echo "missing $f"; false; }
	done
	[ -d "$dest/usr/local/lib/tfkit/plugins" ]
	# bash completion: each command's flags, tf-records' subcommands
	comp=$dest/usr/local/share/bash-completion/completions
	[ -e "$comp/tf-train" ] && [ -e "$comp/tf-records" ]
	run -0 bash -c "source '$comp/tf-train'
		COMP_WORDS=(tf-train --epo); COMP_CWORD=1; _tfkit; echo \"\${COMPREPLY[*]}\"
		COMP_WORDS=(tf-records sh); COMP_CWORD=1; _tfkit; echo \"\${COMPREPLY[*]}\""
	[ "${lines[0]}" = "--epochs" ]
	[ "${lines[1]}" = "shuffle" ]
	# man finds the installed pages
	run -0 mandoc -T utf8 "$dest/usr/local/share/man/man1/tf-train.1"
	[[ "$output" == *"--checkpoint-dir"* ]]
	# the overview page reads as a page
	run -0 mandoc -T utf8 "$dest/usr/local/share/man/man7/tfkit.7"
	[[ "$output" == *"machine-learning pipelines as Unix filters"* ]]
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
	# linked with the static library: the file's Libs.private are
	# every library it needs
	rm out.tfrecord
	cc -std=c11 -Wall -Werror $(pkg-config --cflags libtfcore) prog.c \
		$(pkg-config --static --libs libtfcore |
			sed "s|-ltfcore|$dest/usr/local/lib/libtfcore.a|") -o prog-static
	run -0 ./prog-static
	[[ "$output" == "libtfcore "* ]]
	[ -s out.tfrecord ]
}

@test "each built-in plugin exports exactly tf_plugin_entry" {
	n=0
	for so in "$TFKIT_BUILD"/lib/tfkit/plugins/*.so; do
		run -0 bash -c "nm -D --defined-only '$so' | awk '{ print \$3 }'"
		[ "$output" = tf_plugin_entry ] || { echo "$so: $output"; false; }
		n=$((n + 1))
	done
	[ "$n" -ge 13 ]
}

@test "an out-of-tree optimizer plugin, built against the installed headers, trains" {
	dest=$BATS_TEST_TMPDIR/root
	make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/usr/local SANITIZE=0 >/dev/null
	export PKG_CONFIG_PATH=$dest/usr/local/lib/pkgconfig
	export PKG_CONFIG_SYSROOT_DIR=$dest
	[ -e "$dest/usr/local/lib/tfkit/plugins/adam.so" ]
	mkdir myplugins
	# "halfsgd": w -= lr g / 2, with a step counter in its state
	cat > halfsgd.c <<'C'
#include <stdlib.h>
#include <tf/plugin.h>
static void apply(void *st, float *w, const float *g, float *const *slots,
                  size_t n, uint64_t step, float lr)
{
	(void)st; (void)slots; (void)step;
	for (size_t i = 0; i < n; i++)
		w[i] -= 0.5f * lr * g[i];
}
static const struct tf_optimizer opts[] = {
	{"halfsgd", "gradient descent at half the rate", 0, NULL, NULL, NULL, apply},
	{0}};
static const struct tf_plugin plugin = {TF_PLUGIN_ABI, sizeof(struct tf_plugin),
	"halfsgd", "0.1", NULL, opts, NULL};
TF_PLUGIN_EXPORT const struct tf_plugin *tf_plugin_entry(void) { return &plugin; }
C
	cc -std=c11 -Wall -Werror -shared -fPIC -fvisibility=hidden \
		$(pkg-config --cflags libtfcore) halfsgd.c -o myplugins/halfsgd.so
	cat > train.c <<'C'
#include <stdio.h>
#include <tf/tf.h>
int main(void)
{
	struct tf_registry *r = tf_registry_new();
	if (tf_registry_load(r) != TF_OK) { fprintf(stderr, "%s\n", tf_errmsg(r)); return 1; }
	const struct tf_optimizer *o = tf_registry_optimizer(r, "halfsgd");
	if (o == NULL) { fprintf(stderr, "halfsgd not found\n"); return 1; }
	struct tf_graph *g = tf_graph_new();
	if (tf_graph_parse(g, "input x 1\ninput y 1\nnode p dense x units=1\nnode loss mse p,y\n") ||
	    tf_graph_build(g, r, tf_device_cpu(), 1)) { fprintf(stderr, "%s\n", tf_errmsg(g)); return 1; }
	float x[50], y[50];
	for (int i = 0; i < 50; i++) { x[i] = i / 25.0f - 1; y[i] = 3 * x[i] - 1; }
	struct tf_optim *opt = tf_optim_new();
	tf_optim_init(opt, o, NULL, tf_graph_nparams(g));
	tf_graph_feed(g, "x", x, 50);
	tf_graph_feed(g, "y", y, 50);
	for (int s = 0; s < 2000; s++) {
		tf_graph_forward(g, 1);
		tf_graph_backward(g);
		tf_optim_step(opt, tf_graph_params(g), tf_graph_grads(g), 0.2f);
	}
	printf("%.3f %.3f\n", tf_graph_params(g)[0], tf_graph_params(g)[1]);
	return 0;
}
C
	cc -std=c11 -Wall -Werror $(pkg-config --cflags libtfcore) train.c \
		$(pkg-config --libs libtfcore) -o train
	run -0 env LD_LIBRARY_PATH="$dest/usr/local/lib" TF_PLUGIN_PATH="$PWD/myplugins:$dest/usr/local/lib/tfkit/plugins" ./train
	[ "$output" = "3.000 -1.000" ]
}

@test "an out-of-tree optimizer with a setting of its own trains through tf-train" {
	dest=$BATS_TEST_TMPDIR/root
	make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/usr/local SANITIZE=0 >/dev/null
	export PKG_CONFIG_PATH=$dest/usr/local/lib/pkgconfig
	export PKG_CONFIG_SYSROOT_DIR=$dest
	mkdir myplugins
	# "sgdw": gradient descent with decoupled weight decay, which it
	# insists on being given
	cat > sgdw.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <tf/plugin.h>
static int create(const struct tf_hparams *h, void **st, char *err, size_t n)
{
	double wd = tf_hparam(h, "weight_decay", -1);
	if (wd < 0) { snprintf(err, n, "needs --opt weight_decay=X"); return 1; }
	float *s = malloc(sizeof *s);
	if (s == NULL) return 1;
	*s = (float)wd;
	*st = s;
	return 0;
}
static void apply(void *st, float *w, const float *g, float *const *slots,
                  size_t n, uint64_t step, float lr)
{
	(void)slots; (void)step;
	float wd = *(float *)st;
	for (size_t i = 0; i < n; i++)
		w[i] -= lr * (g[i] + wd * w[i]);
}
static const struct tf_optimizer opts[] = {
	{"sgdw", "SGD with weight decay (weight_decay)", 0, create, free, NULL, apply},
	{0}};
static const char *const sgdw_keys[] = {"weight_decay", NULL};
static const char *const *const keys[] = {sgdw_keys};
TF_PLUGIN_DEFINE_KEYS("sgdw", "0.1", NULL, opts, keys)
C
	cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
		$(pkg-config --cflags libtfcore) sgdw.c -o myplugins/sgdw.so
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	args="-q --model lr --optimizer sgdw --plugin-dir myplugins --learning-rate 0.1 --epochs 3"
	run -0 tf-train $args --opt weight_decay=0.01 --checkpoint-dir ck bc.tfrecord
	[[ "$output" == *'"step":15,'* ]]
	grep -aq '"optimizer":"sgdw","hparams":{"weight_decay":0.01}' ck/model.ckpt-15
	run -0 tf-eval -d ck bc.tfrecord
	/usr/bin/python3 -c '
import json, sys
assert json.loads(sys.argv[1])["accuracy"] > 0.9, sys.argv[1]' "$output"
	# its key is the only one it takes; without it, its own message
	run -64 --separate-stderr tf-train $args --opt momentum=0.9 bc.tfrecord
	[ "$stderr" = "tf-train: --opt momentum: optimizer 'sgdw' takes weight_decay" ]
	run -64 --separate-stderr tf-train $args bc.tfrecord
	[ "$stderr" = "tf-train: optimizer 'sgdw': needs --opt weight_decay=X" ]
	# a plugin that does not say which keys it takes is passed them all
	sed -e '/_keys\[\]/d; /keys\[\] =/d' -e 's/TF_PLUGIN_DEFINE_KEYS(\(.*\), keys)/TF_PLUGIN_DEFINE(\1)/' \
		sgdw.c > quiet.c
	mkdir quiet
	cc -std=c11 -Wall -Werror -shared -fPIC -fvisibility=hidden \
		$(pkg-config --cflags libtfcore) quiet.c -o quiet/sgdw.so
	run -0 tf-train -q --model lr --optimizer sgdw --plugin-dir quiet --max-steps 2 --epochs 0 \
		--opt weight_decay=0.01 --opt anything=1 bc.tfrecord
}

@test "a plugin built for another ABI is refused, naming the file and both versions" {
	mkdir bad
	cat > future.c <<'C'
#include "tf/plugin.h"
static const struct tf_plugin plugin = {7, sizeof(struct tf_plugin), "future", "7.0", NULL, NULL, NULL};
TF_PLUGIN_EXPORT const struct tf_plugin *tf_plugin_entry(void) { return &plugin; }
C
	cc -std=c11 -shared -fPIC -I"$TOP/libtfcore/include" future.c -o bad/future.so
	cat > load.c <<'C'
#include <stdio.h>
#include "tf/tf.h"
int main(int argc, char **argv)
{
	struct tf_registry *r = tf_registry_new();
	tf_registry_add_dir(r, argv[1]);
	int rc = tf_registry_load(r);
	printf("%d %s\n", rc, tf_errmsg(r));
	tf_registry_free(r);
	(void)argc;
	return 0;
}
C
	san=
	[ "${SANITIZE:-0}" = 1 ] && san="-fsanitize=address,undefined"
	cc -std=c11 $san -I"$TOP/libtfcore/include" load.c -L"$TFKIT_BUILD/lib" -ltfcore \
		-Wl,-rpath,"$TFKIT_BUILD/lib" -o load
	run -0 ./load "$PWD/bad"
	[[ "$output" == "6 $PWD/bad/future.so: plugin ABI 7 "*"speaks ABI 1" ]]
}

@test "an out-of-tree op in a model spec: trained, evaluated, exported and served" {
	dest=$BATS_TEST_TMPDIR/root
	# a prefix other than the build's (/usr/local): the installed
	# libtfcore.pc names the one installed to
	make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/opt/tfkit SANITIZE=0 >/dev/null
	grep -qx 'prefix=/opt/tfkit' "$dest/opt/tfkit/lib/pkgconfig/libtfcore.pc"
	export PKG_CONFIG_PATH=$dest/opt/tfkit/lib/pkgconfig
	export PKG_CONFIG_SYSROOT_DIR=$dest
	ex=$dest/opt/tfkit/share/tfkit/examples
	mkdir ops
	# the example as its comment says to build it, with the warnings on
	cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
		$(pkg-config --cflags libtfcore) "$ex/leaky_relu.c" -o ops/leaky_relu.so
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-records split -n 5 -o bc bc.tfrecord
	run -0 tf-train -q --plugin-dir ops --model-file "$ex/leaky.spec" --epochs 20 --batch-size 32 \
		--validate bc-00004-of-00005 --checkpoint-dir ck 'bc-0000[0-3]-of-00005'
	run -0 tf-eval --plugin-dir ops -d ck bc-00004-of-00005
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["accuracy"] > 0.93 and j["auc"] > 0.98, j' "$output"
	# the same op built against the headers of before shapes (ABI 1 as
	# first released) loads and trains alike
	mkdir old-ops
	cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
		-I"$TOP/tests/fixtures/abi1-before-shapes" "$ex/leaky_relu.c" -o old-ops/leaky_relu.so
	run -0 tf-train -q --plugin-dir old-ops --model-file "$ex/leaky.spec" --epochs 20 --batch-size 32 \
		--validate bc-00004-of-00005 --checkpoint-dir ck-old 'bc-0000[0-3]-of-00005'
	same_state ck/model.ckpt-* ck-old/model.ckpt-*
	# without the plugin the model cannot be built: the op is named
	run -65 --separate-stderr tf-eval -d ck bc-00004-of-00005
	[[ "$stderr" == *"node 'a1': unknown op 'leaky_relu' (see --list-plugins)"* ]]
	# exported for tf-serve; TensorFlow.js and ONNX have no such op
	run -0 tf-export --plugin-dir ops -d ck --export-base models
	run -65 --separate-stderr tf-export --plugin-dir ops -d ck --format onnx -o m.onnx
	[ "$stderr" = "tf-export: ONNX export: op 'leaky_relu' (node 'a1') has no ONNX counterpart" ]
	[ ! -e m.onnx ]
	run -65 --separate-stderr tf-export --plugin-dir ops -d ck --format tfjs -o m-js
	[[ "$stderr" == *"op 'leaky_relu' (node 'a1') has no TensorFlow.js counterpart" ]]
	# served: the row tf-eval predicts
	tf-records head -n 1 --raw bc-00004-of-00005 > one.tfrecord
	want=$(tf-eval --plugin-dir ops -d models/1 --predict one.tfrecord)
	tf-records head -n 1 bc-00004-of-00005 | jq -c '{instances: [del(.label)]}' > req.json
	tf-serve --plugin-dir ops --model-base models --model-name bc --rest-api-port 0 --grpc-port 0 \
		--listen-address 127.0.0.1 2> serve.log 3>&- &
	spid=$!
	for _ in $(seq 100); do
		port=$(sed -n 's|.*REST API on http://[0-9.]*:\([0-9]*\)/.*|\1|p' serve.log)
		[ -n "$port" ] && grep -q "version 1 loaded" serve.log && break
		sleep 0.05
	done
	run -0 curl -s -d @req.json "http://127.0.0.1:$port/v1/models/bc:predict"
	kill -TERM "$spid"
	wait "$spid"
	[ "$output" = "{\"predictions\":[$want]}" ]
}
