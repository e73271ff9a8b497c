# bench/peer.sh - sourced by the benchmarks that run another program
# beside tfkit: the peer at its best, and how it was run.
#
# PyTorch (Debian's python3-torch, seen by /usr/bin/python3) links
# OpenBLAS, whose own worker threads run beside torch's (oversubscribing
# the CPUs), and whose OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, which
# some machines set for old builds, pick slower kernels; torch's own
# kernels take AVX-512 only when told.  Measured on the 2-CPU
# development machines, the same PyTorch runs up to 2x faster so.
peer_cpu=default
if grep -q -w avx512f /proc/cpuinfo 2> /dev/null; then
	peer_cpu=avx512
fi
# peer CMD...: the command in the peer's fastest configuration found.
peer() {
	if [ "$peer_cpu" = avx512 ]; then
		env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \
			ATEN_CPU_CAPABILITY=avx512 "$@"
	else
		env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 "$@"
	fi
}
if [ "$peer_cpu" = avx512 ]; then
	peer_config="OPENBLAS_NUM_THREADS=1, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, ATEN_CPU_CAPABILITY=avx512"
else
	peer_config="OPENBLAS_NUM_THREADS=1, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, ATEN_CPU_CAPABILITY unset (no AVX-512 here: torch picks its best, AVX2)"
fi
# best RUNS: the highest of a list of examples/s (the peer's best run).
best() { tr ' ' '\n' | sed '/^$/d' | sort -n | tail -n 1; }
