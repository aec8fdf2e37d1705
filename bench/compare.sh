#!/usr/bin/env bash
# compare.sh OLD NEW: runs the key hot-path benchmarks of two commits in one go and
# prints benchstat's deltas, so a change that touches a hot path can state its effect.
#
#   bench/compare.sh main HEAD            # 6 interleaved rounds (COUNT=6)
#   COUNT=10 bench/compare.sh HEAD~1 HEAD
#   PKGS='./snowflake/' BENCH='NextParallel' bench/compare.sh main HEAD
#
# Both commits are checked out with `git worktree add` into a temporary directory
# (removed on exit; the working tree is not touched, uncommitted changes are not
# measured). Each package's test binary is built once per commit, then the rounds
# alternate OLD, NEW, OLD, NEW, ... with -count=1 each, so that a change in the
# machine's load hits both sides alike. Raw output goes to results/compare-<time>/
# (meta.txt, old.txt, new.txt, benchstat.txt).
#
# Environment: COUNT (rounds, default 6), BENCHTIME (default 1s), PKGS (the packages,
# default the key ones below), BENCH (a -bench pattern for all of them; default each
# package's own pattern below), FLURRY_TEST_* as for the tests (a package whose
# service is missing skips its benchmarks).
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,8p "$0" >&2; exit 2; }
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
old=$(git -C "$root" rev-parse --verify "$1^{commit}")
new=$(git -C "$root" rev-parse --verify "$2^{commit}")
count=${COUNT:-6}
benchtime=${BENCHTIME:-1s}

# The key hot paths and their benchmarks: package pattern.
declare -A pattern=(
	[./snowflake/]='ManagedOverhead'
	[./segment/]='^BenchmarkNext$|NextParallel|NextN1000'
	[./client/]='NextBuffered|NextParallel'
	[./redisgen/]='Redis/(Next|INCR|NextN1000)$'
	[./server/]='NextOneText$|Next1000Text$|BareHandler$'
)
pkgs=${PKGS:-./snowflake/ ./segment/ ./client/ ./redisgen/ ./server/}

benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
if [ ! -x "$benchstat" ]; then
	echo "benchstat not found: go install golang.org/x/perf/cmd/benchstat@latest" >&2
	exit 1
fi

tmp=$(mktemp -d /tmp/flurry-compare.XXXXXX)
cleanup() {
	git -C "$root" worktree remove --force "$tmp/old" 2>/dev/null || true
	git -C "$root" worktree remove --force "$tmp/new" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$root" worktree add --detach "$tmp/old" "$old" >/dev/null 2>&1
git -C "$root" worktree add --detach "$tmp/new" "$new" >/dev/null 2>&1

out="$root/bench/results/compare-$(date -u +%F-%H%M%S)"
mkdir -p "$out"
for side in old new; do
	for p in $pkgs; do
		name=$(echo "$p" | tr -c 'a-zA-Z0-9\n' '_')
		(cd "$tmp/$side" && go test -c -o "$tmp/$side.$name.test" "$p")
	done
	echo "$side: $(git -C "$tmp/$side" log -1 --format='%h %s')" >>"$out/meta.txt"
	: >"$out/$side.txt"
done
# Not in old.txt/new.txt: benchstat would read differing "key: value" lines as
# different configurations and not compare them.
{
	echo "date: $(date -u +%FT%TZ)"
	echo "nproc: $(nproc)"
	echo "go: $(go version)"
	echo "rounds: $count, benchtime $benchtime"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$out/meta.txt"

for round in $(seq "$count"); do
	for side in old new; do
		for p in $pkgs; do
			name=$(echo "$p" | tr -c 'a-zA-Z0-9\n' '_')
			bin="$tmp/$side.$name.test"
			[ -x "$bin" ] || continue
			# The binary runs in its package's directory, as go test would.
			(cd "$tmp/$side/$p" && "$bin" -test.run '^$' -test.bench "${BENCH:-${pattern[$p]:-.}}" \
				-test.benchmem -test.count 1 -test.benchtime "$benchtime") 2>&1 |
				grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$out/$side.txt" || true
		done
	done
	echo "round $round/$count done" >&2
done
echo "loadavg-after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.txt"
cat "$out/meta.txt"

(cd "$out" && "$benchstat" old=old.txt new=new.txt) | tee "$out/benchstat.txt"
echo "raw output in ${out#$root/}" >&2
