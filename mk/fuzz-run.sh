#!/bin/sh
# Run every libFuzzer target of `make fuzz` for SECONDS seconds each.
#   sh mk/fuzz-run.sh BUILD SECONDS [TARGET...]
# Each target starts from its seeds (tests/fuzz/corpus/NAME) and grows
# its own corpus under BUILD/fuzz/corpus/NAME; undefined behaviour and
# leaks stop a run (the build does not recover).  Prints one line a
# target: executions, coverage (edges), features, corpus size; a crash,
# leak or timeout is left in BUILD/fuzz/artifacts/NAME/, named, and the
# script exits 1 (copy it into the seeds, with the fix, as a regression
# test).
set -u
B=$1
secs=$2
shift 2
cd "$(dirname "$0")/.."
targets=${*:-$(cd "$B/fuzz" 2>/dev/null &&
	for f in fuzz_*; do [ -f "$f" ] && [ -x "$f" ] && echo "${f#fuzz_}"; done)}
[ -n "$targets" ] || { echo "fuzz-run: no targets in $B/fuzz (make fuzz first)" >&2; exit 66; }
bad=0
for t in $targets; do
	corpus=$B/fuzz/corpus/$t
	art=$B/fuzz/artifacts/$t
	mkdir -p "$corpus" "$art"
	cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
	log=$B/fuzz/$t.log
	"$B/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="$art/" "$corpus" > "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n1)
	cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	files=$(ls "$corpus" | wc -l)
	found=$(ls "$art" | head -n 3 | tr '\n' ' ')
	if [ $rc -ne 0 ] || [ -n "$found" ]; then
		echo "fuzz-run: $t: FAILED after ${execs:-?} executions: ${found:-see $log}"
		grep -m1 -E 'ERROR|runtime error|SUMMARY' "$log" || true
		bad=1
	else
		printf 'fuzz-run: %-10s %10s executions in %ss   cov %s   ft %s   corpus %s files\n' \
			"$t" "${execs:-?}" "$secs" "${cov:-?}" "${ft:-?}" "$files"
	fi
done
exit $bad
