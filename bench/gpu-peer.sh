# bench/gpu-peer.sh - sourced by bench/cnn and bench/rnn when
# BENCH_DEVICE=cuda: tf-train on the GPU against PyTorch on the same GPU.
# Needs B, dir, PY, BATCH, EP and bench/peer.sh's peer and best.
gpu_name() { nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1; }
torch_cuda=0
"$PY" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2> /dev/null && torch_cuda=1
# gpu_ours TAG FILE MODEL-FLAGS...: examples/s of EP epochs on the GPU
# (fp32 math); a failed run prints its error on stderr and counts 0.
# Each run is also said on stderr as it ends (with its whole time), so
# a step cut off by its time limit still shows how far it came.
gpu_ours() {
	t=$1 f=$2
	shift 2
	rm -rf "$dir/ck-$t-gpu"
	t0=$(date +%s.%N)
	if ! "$B/bin/tf-train" -q --device cuda --gpu-math fp32 --batch-size "$BATCH" \
		--epochs "$EP" --checkpoint-dir "$dir/ck-$t-gpu" "$@" "$f" > "$dir/$t-gpu.out" \
		2> "$dir/$t-gpu.err"; then
		echo "tf-train --device cuda $* failed:" >&2
		tail -n 5 "$dir/$t-gpu.err" >&2
		echo 0
		return
	fi
	r=$(sed -n 's/.*"examples_per_sec":\([0-9.]*\).*/\1/p' "$dir/$t-gpu.out")
	echo "  ... tf-train $t on the GPU: $r examples/s ($(gpu_since "$t0") s in all)" >&2
	echo "$r"
}
gpu_since() { echo "$(date +%s.%N) $1" | awk '{ printf "%.1f", $1 - $2 }'; }
# gpu_theirs TAG SCRIPT ARGS...: PyTorch's examples/s, said as gpu_ours.
gpu_theirs() {
	t=$1
	shift
	t0=$(date +%s.%N)
	r=$(peer "$PY" "$@")
	echo "  ... PyTorch $t on the GPU: $r examples/s ($(gpu_since "$t0") s in all)" >&2
	echo "$r"
}
gpu_median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
gpu_show() { # LABEL RUNS
	printf '  %-36s %9.0f examples/s   runs:%s\n' "$1" "$(echo "$2" | gpu_median)" "$2"
}
# gpu_vs_torch LABEL OURS THEIRS [LABEL OURS THEIRS]...: PyTorch's lines
# (median and best) and the ratios of the medians (target: at least 1).
gpu_vs_torch() {
	if [ "$torch_cuda" = 0 ]; then
		echo "  PyTorch with CUDA: not found by $PY; no baseline"
		return
	fi
	echo "  PyTorch on the same GPU: FP32 (TF32 off), cudnn.benchmark, 10 steps' warm-up, data in GPU memory; its best run beside the median"
	while [ $# -ge 3 ]; do
		printf '  %-36s %9.0f examples/s   best %9.0f   runs:%s\n' "PyTorch $1, GPU" \
			"$(echo "$3" | gpu_median)" "$(echo "$3" | best)" "$3"
		echo "$(echo "$2" | gpu_median) $(echo "$3" | gpu_median) $(echo "$3" | best)" |
			awk -v l="$1" '{ printf "  %-46s %5.2f   (target >= 1; against its best run %.2f)\n", l " / PyTorch, same GPU", $1 / $2, $1 / $3 }'
		shift 3
	done
}
