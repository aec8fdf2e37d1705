#!/usr/bin/env bash
# Runs the whole benchmark suite once and writes the raw output, with a header
# describing the machine, to results/<UTC date>.txt (results/<date>-<time>.txt if
# that exists). About 1.5 minutes with COUNT=1.
#
#   COUNT=5 ./run.sh          # 5 runs of every benchmark, then benchstat medians
#   BENCH='Next$' ./run.sh    # only the benchmarks matching a -bench pattern
#   WAIT_IDLE=1 ./run.sh      # first wait until the machine is idle
#
# Environment: COUNT (default 1), BENCH (default .), WAIT_IDLE, and the benchmarks' own
# FLURRY_BENCH_ATCAP_SECONDS (3), FLURRY_BENCH_BORROW_SECONDS (10),
# FLURRY_BENCH_PEER_DRIFT_SECONDS (3), FLURRY_BENCH_CLOCK_SECONDS (2).
set -euo pipefail
cd "$(dirname "$0")"

count=${COUNT:-1}
bench=${BENCH:-.}
mkdir -p results
out=results/$(date -u +%F).txt
[ -e "$out" ] && out=results/$(date -u +%F-%H%M%S).txt

# busy prints the share of CPU time, all CPUs together, not idle over 3 s.
busy() {
	local a b
	a=($(head -1 /proc/stat)); sleep 3; b=($(head -1 /proc/stat))
	local total=0 idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) i
	for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
	echo $(( 100 - 100 * idle / total ))
}

# WAIT_IDLE=1: wait (up to 10 minutes) until the machine is idle, under 5% busy.
if [ -n "${WAIT_IDLE:-}" ]; then
	for _ in $(seq 200); do
		[ "$(busy)" -lt 5 ] && break
	done
fi

cmd=(go test -run '^$' -bench "$bench" -benchmem -count="$count" -timeout 60m .)
{
	echo "date: $(date -u +%FT%TZ)"
	echo "nproc: $(nproc)"
	echo "cpu-model: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
	echo "cpu-busy-before: $(busy)% (all CPUs, over 3 s before the run)"
	echo "kernel: $(uname -sr)"
	echo "go: $(go version)"
	echo "flurry-commit: $(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown) (plus any uncommitted changes in the working tree)"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "command: ${cmd[*]}"
	[ -n "${FLURRY_BENCH_BORROW_SECONDS:-}" ] && echo "borrow-seconds: $FLURRY_BENCH_BORROW_SECONDS"
	echo
} >"$out"

echo "writing $out" >&2
"${cmd[@]}" 2>&1 | tee -a "$out"
echo "loadavg-after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out"

if [ "$count" -gt 1 ]; then
	benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
	if [ -x "$benchstat" ]; then
		"$benchstat" "$out" >"${out%.txt}.benchstat.txt"
		echo "medians in ${out%.txt}.benchstat.txt" >&2
	else
		echo "benchstat not found: go install golang.org/x/perf/cmd/benchstat@latest" >&2
	fi
fi
