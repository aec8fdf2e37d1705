#!/usr/bin/env bash
# Runs, without -race, exactly the tests that a -race build skips: every Test
# function that calls testing.AllocsPerRun (allocation counts mean nothing under
# the race detector, so those tests skip there) and every one that calls t.Skip
# under `if raceEnabled` (objectid's TestPerSecondLimitFull, 16.7M IDs). CI's main
# run is -race, so without this step they never run. The tests are found in the
# source each time, so a new one is run without being listed anywhere. `make
# test-norace` and CI (.ci/run) run it.
#
#   scripts/norace-tests.sh            # find, then run them
#   scripts/norace-tests.sh -list      # only print package and test names
set -euo pipefail
cd "$(dirname "$0")/.."

# find prints "dir test" for each such test, found in *_test.go files of this
# module (bench/ and deploy/ are modules of their own).
find_tests() {
	git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go' -not -path './bench/*' -not -path './deploy/*'
}
tests=$(find_tests | grep -v -e '^bench/' -e '^deploy/' -e '^\./bench/' -e '^\./deploy/' | while read -r f; do
	awk -v dir="$(dirname "$f")" '
		/^func Test[A-Za-z0-9_]*\(/ { fn = $2; sub(/\(.*/, "", fn); race = 0 }
		/^func / && !/^func Test/ { fn = "" }
		fn == "" { next }
		/testing\.AllocsPerRun\(/ { print dir, fn; next }
		/if raceEnabled/ { race = 2; next }
		race > 0 && /t\.Skip/ { print dir, fn }
		race > 0 { race-- }
	' "$f"
done | sort -u)

if [ -z "$tests" ]; then
	echo "norace-tests: found no test that skips under -race" >&2
	exit 1
fi
if [ "${1:-}" = -list ]; then
	echo "$tests"
	exit 0
fi

status=0
for dir in $(awk '{print $1}' <<<"$tests" | sort -u); do
	names=$(awk -v d="$dir" '$1 == d {print $2}' <<<"$tests" | paste -sd '|')
	echo "go test -count=1 -v -run '^($names)\$' ./$dir"
	out=$(go test -count=1 -v -run "^($names)\$" "./$dir" 2>&1) || status=1
	# What ran, and how it ended: a skip is a failure here, since these tests
	# exist to run where -race cannot.
	grep -E '^(--- |ok |FAIL|panic)' <<<"$out" || true
	if grep -q '^--- SKIP' <<<"$out"; then
		echo "norace-tests: a test skipped without -race; it must run here" >&2
		status=1
	fi
	[ "$status" -eq 0 ] || { echo "$out" | tail -40; break; }
done
exit "$status"
