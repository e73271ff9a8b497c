#!/usr/bin/env bats
# The documentation stays true: man pages lint clean, every command has
# one, and the EXAMPLES of each page run on the bundled data.

bats_require_minimum_version 1.5.0
load helpers

@test "man pages are mandoc -Tlint clean (warnings and errors)" {
	run -0 mandoc -Tlint -Wwarning "$TOP"/man/man*/*.[0-9]
}

@test "every command has a man page and a bats file" {
	count=0
	for t in "$TFKIT_BUILD"/bin/tf-*; do
		n=$(basename "$t")
		count=$((count + 1))
		[ -e "$TOP/man/man1/$n.1" ] || { echo "no man page for $n"; false; }
		[ -e "$TOP/tests/cli/$n.bats" ] || { echo "no tests for $n"; false; }
	done
	[ "$count" -ge 6 ]
}

# Run the ".Dl $ command" lines of a page's EXAMPLES section (of a
# section 1 page; of the whole page for another: "tfkit.7"), as a reader
# sees them (\e is a backslash).
run_examples() {
	case $1 in
	*.[0-9]) sed -n 's/^\.Dl \$ //p' "$TOP/man/man${1##*.}/$1" > examples.sh ;;
	*) sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' "$TOP/man/man1/$1.1" |
		sed -n 's/^\.Dl \$ //p' > examples.sh ;;
	esac
	sed -i 's/\\e/\\/g' examples.sh
	[ -s examples.sh ]
	while IFS= read -r cmd; do
		echo "# $cmd"
		bash -o pipefail -c "$cmd" > /dev/null || { echo "failed: $cmd"; return 1; }
	done < examples.sh
}

# A clone's top directory: the examples run on the bundled data alone
# (tfkit(7) says so), each page's making the files it names.
fixtures() {
	mkdir -p share
	ln -s "$DATA" share/data
}

@test "the EXAMPLES of tf-csv2record(1) run" {
	fixtures
	run_examples tf-csv2record
}

@test "the EXAMPLES of tf-img2record(1) run" {
	fixtures
	run_examples tf-img2record
	[ "$(tf-records count shuffled-0000*-of-00004 | tail -n 1)" = "1797 total" ]
}

@test "the EXAMPLES of tf-records(1) run" {
	fixtures
	run_examples tf-records
}

@test "the EXAMPLES of tf-train(1) run" {
	fixtures
	run_examples tf-train
}

@test "the EXAMPLES of tf-eval(1) run" {
	fixtures
	run_examples tf-eval
}

@test "the EXAMPLES of tf-export(1) run" {
	fixtures
	run_examples tf-export
}

@test "the EXAMPLES of tf-ps(1) run" {
	fixtures
	run_examples tf-ps
	[ -e ck/checkpoint ]
}

@test "the EXAMPLES of tf-serve(1) run" {
	fixtures
	run_examples tf-serve
}

@test "the commands of tfkit(7) run" {
	fixtures
	run_examples tfkit.7
}

@test "the README's tour runs as written, printing what it shows" {
	# a clone's top directory: share/ beside the commands' outputs
	ln -s "$TOP/share" share
	run -0 python3 "$TOP/tests/cli/runtour.py" "$TOP/README" "A tour" "Building and installing"
	[[ "${lines[-1]}" =~ ^#\ [0-9]+\ commands\ ran\ as\ the\ README\ says$ ]]
}

@test "the README gives the two set-up commands" {
	grep -q '^ *make demo' "$TOP/README"
	grep -q '^ *make check' "$TOP/README"
}

@test "each command's --help and man page name the same exit statuses" {
	for t in tf-csv2record tf-img2record tf-records tf-train tf-ps tf-eval tf-export tf-serve; do
		h=$("$t" --help | sed -n '/Exit status\|Exit$/,$p' | tr '\n' ' ' |
			grep -oE '(^| )(0|6[4-9]|7[0-9])( |,|\.)' | grep -oE '[0-9]+' | sort -un | tr '\n' ' ')
		m=$(sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /p' "$TOP/man/man1/$t.1" |
			grep -E '^\.It [0-9]' | grep -oE '[0-9]+' | grep -vE '^(130|143)$' | sort -un | tr '\n' ' ')
		echo "$t: --help $h; man $m"
		[ -n "$h" ] && [ "$h" = "$m" ]
		# out of memory is 70 (tf_exit_code()), documented everywhere
		[[ " $h" == *" 70 "* ]]
	done
}
