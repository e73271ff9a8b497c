#!/bin/sh
# mk/device-kit.sh - make device-kit: one folder, and a tar.xz of it, that
# runs tfkit's GPU checks on a lent machine that is not Debian, has no
# package registry and builds nothing (the `device` tool's H200).
#
#   sh mk/device-kit.sh BUILD    (make device-kit)
#
# BUILD/device-kit/ mirrors the source tree where the scripts need it:
# BUILD's tools, libtfcore, plugins and cuda.so, tests/gpu/*, the
# benchmarks' programs and scripts, two bundled datasets, and deps/: every
# shared library those programs load that a bare machine may lack, found
# with the loader (ldd), less the C library's own, libstdc++ and
# libgcc_s (any Linux has them, and a newer one serves) and CUDA's
# runtime and cuBLAS (the GPU machine's toolkit provides them).  kit/env
# sets the library path; kit/selftest is the CPU self-test (train, eval,
# export, serve a request, a small distributed run); kit/gpu-check is the
# command for the GPU machine.  BUILD/device-kit.tar.xz is the same,
# compressed, to carry there.
set -eu
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
k=$B/device-kit
rm -rf "$k" "$k.tar.xz"
# the benchmarks' helpers, as bench/gpu and bench/train build them
mkdir -p "$B/bench"
${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -Werror -Ilibtfcore/include \
	bench/gen-higgs.c "$B/lib/libtfcore.a" -lm -o "$B/bench/gen-higgs"
${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -Werror -Ilibtfcore/include \
	bench/gemm-ceiling.c -L"$B/lib" -ltfcore -Wl,-rpath,'$ORIGIN/../lib' -o "$B/bench/gemm-ceiling"
mkdir -p "$k/$B/bin" "$k/$B/lib" "$k/$B/tests/gpu" "$k/tests/gpu" "$k/$B/bench" "$k/bench" \
	"$k/share/data" "$k/deps" "$k/kit"
cp -p "$B"/bin/tf-* "$k/$B/bin/"
cp -pP "$B"/lib/libtfcore.so* "$k/$B/lib/"
cp -pR "$B/lib/tfkit" "$k/$B/lib/"
for t in test_kernels test_train; do
	[ -x "$B/tests/gpu/$t" ] && cp -p "$B/tests/gpu/$t" "$k/$B/tests/gpu/"
done
for p in gen-higgs gemm-ceiling gpu-sgemm; do
	[ -x "$B/bench/$p" ] && cp -p "$B/bench/$p" "$k/$B/bench/"
done
cp -p bench/gpu bench/distributed bench/peer.sh bench/torch_train.py bench/csv_cache.py \
	bench/gen-higgs.c bench/gemm-ceiling.c bench/cnn bench/rnn bench/gpu-peer.sh \
	bench/torch_cnn.py bench/torch_rnn.py bench/torch_loop.py bench/gen-images.py bench/elastic \
	"$k/bench/"
cp -p tests/gpu/models.sh "$k/tests/gpu/"
mkdir -p "$k/share/examples"
cp -p share/examples/inception.spec "$k/share/examples/"
cp -p share/data/breast_cancer.csv share/data/iris.csv share/data/digits.csv \
	share/data/heart_scale share/data/README "$k/share/data/"
cp -p kit/env kit/selftest kit/gpu-check kit/README "$k/kit/"
# The libraries the programs load, as the loader resolves them here.
skip='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libtfcore)\.so'
find "$k/$B" -type f \( -perm -u+x -o -name '*.so*' \) | while read -r f; do
	case $(head -c 4 "$f") in *ELF) ;; *) continue ;; esac
	ldd "$f" 2> /dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
	echo "$name" | grep -Eq "$skip" && continue
	[ -e "$k/deps/$name" ] || cp -L "$path" "$k/deps/$name"
done
git log -1 --format='%H %s' > "$k/kit/COMMIT" 2> /dev/null || echo unknown > "$k/kit/COMMIT"
(cd "$k" && find . -type f | sort | xargs ls -l | awk '{ print $5, $9 }') > "$k/kit/MANIFEST"
tar -C "$B" -cJf "$k.tar.xz" device-kit
echo "device-kit: $k ($(du -sh "$k" | cut -f1), $(ls "$k/deps" | wc -l) libraries in deps/), $k.tar.xz ($(du -h "$k.tar.xz" | cut -f1))"
