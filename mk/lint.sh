#!/bin/sh
# make lint: clang-format in check mode and cppcheck over the C sources
# (kernels/slots.h, a list read through the macro of whoever includes
# it, is checked where it is included).
set -u
status=0
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find libtfcore kernels plugins tools tests bench -name '*.[ch]')
if command -v clang-format >/dev/null 2>&1; then
	if ! clang-format --dry-run --Werror $files; then
		echo "lint: clang-format wants changes (run: clang-format -i FILE)" >&2
		status=1
	fi
else
	echo "lint: clang-format not found" >&2
	status=1
fi
if command -v cppcheck >/dev/null 2>&1; then
	if ! cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
		--std=c11 --inline-suppr --library=mk/cppcheck.cfg -D_GNU_SOURCE -DTF_BUILDING_LIBRARY \
		-Ilibtfcore/include -Ilibtfcore -I. -Itools \
		--suppress=missingIncludeSystem \
		$(echo "$files" | grep -v -e '^tests/' -e '^kernels/slots.h$'); then
		echo "lint: cppcheck found problems" >&2
		status=1
	fi
else
	echo "lint: cppcheck not found" >&2
	status=1
fi
[ $status -eq 0 ] && echo "lint: clean"
exit $status
