#!/usr/bin/env bash
# instructions.sh: instructions per ID of flurry's default generator and of
# bwmarrin/snowflake, counted by valgrind's callgrind, which a busy or a slow
# machine does not change: the same binary gives the same count to within an
# instruction or two. For each benchmark it runs the bench module's test binary
# twice under callgrind, for 200,000 and 600,000 IDs, and prints the difference
# over 400,000: the cost of one more ID, with the binary's start, the generator's
# setup and the benchmark's first run cancelled out. GOMAXPROCS=1 keeps the
# runtime's idle processors from spinning (their instructions would count),
# GOGC=off keeps the collector out, asyncpreemptoff keeps callgrind from tripping
# over the runtime's preemption signals.
#
#   cd bench && ./instructions.sh        # about a minute; needs valgrind
#
# The benchmarks: Next (the system clock; the clock read, about 86 instructions
# of time.Since and the runtime's nanotime on linux/amd64, is in both counts) and
# PathCost (the constant clock of pathcost_test.go, read through clock.Clock by
# both). Environment: BENCHES (the benchmarks, as -test.bench patterns).
set -euo pipefail
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind not installed (apt-get install valgrind)" >&2; exit 1; }
benches=${BENCHES:-'^BenchmarkNext$/^flurry$ ^BenchmarkNext$/^bwmarrin$ ^BenchmarkPathCost$/^flurry$ ^BenchmarkPathCost$/^bwmarrin$'}
tmp=$(mktemp -d /tmp/flurry-instructions.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .

# count N PATTERN: the instructions callgrind counted for a run of N IDs.
count() {
	GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$tmp/bench.test" -test.run '^$' -test.bench "$2" -test.benchtime "${1}x" -test.count 1 2>&1 |
		sed -n 's/.*Collected : //p'
}
echo "flurry-commit: $(git rev-parse --short HEAD) (plus any uncommitted changes); $(go version)"
for b in $benches; do
	x=$(count 200000 "$b")
	y=$(count 600000 "$b")
	printf '%-32s %4d instructions per ID\n' "$b" $(((y - x) / 400000))
done
