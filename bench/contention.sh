#!/usr/bin/env bash
# contention.sh: the snowflake contention variants (add, mutex, hybrid; see
# snowflake/contention.go, type contention) and bwmarrin, interleaved: ROUNDS rounds,
# each running every variant once with -count 6 -benchtime 200ms -cpu 1,2, so that a
# change in the machine's load hits all of them alike. Prints, per benchmark, the
# median, min and max ns/op and each round's median; raw output and the load per
# round go to results/contention-<time>/.
#
#   cd bench && ROUNDS=6 ./contention.sh
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
out=results/contention-$(date -u +%F-%H%M%S)
mkdir -p "$out"
tmp=$(mktemp -d /tmp/flurry-contention.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/snowflake.test" ./snowflake/)
go test -c -o "$tmp/bench.test" .
rounds=${ROUNDS:-4}
{
	echo "date: $(date -u +%FT%TZ)"
	echo "commit: $(git rev-parse --short HEAD)"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/meta.txt"
for r in $(seq "$rounds"); do
	for v in add mutex hybrid; do
		(cd "$root/snowflake" && "$tmp/snowflake.test" -test.run '^$' -test.bench "^BenchmarkContention/$v\$" \
			-test.count 6 -test.benchtime 200ms -test.cpu 1,2 -test.benchmem) | grep '^Benchmark' | sed "s/^/r$r /" >>"$out/raw.txt"
	done
	"$tmp/bench.test" -test.run '^$' -test.bench '^BenchmarkNextParallel/bwmarrin$' \
		-test.count 6 -test.benchtime 200ms -test.cpu 1,2 -test.benchmem | grep '^Benchmark' | sed "s/^/r$r /" >>"$out/raw.txt"
	echo "round $r loadavg $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.txt"
done
python3 - "$out/raw.txt" <<'PY' | tee "$out/summary.txt"
import collections, re, statistics as st, sys
ns = collections.defaultdict(list)
per = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    name = re.sub(r'^Benchmark(Contention|NextParallel)/', '', f[1])
    ns[name].append(float(f[3]))
    per[name][f[0]].append(float(f[3]))
print(f"{'benchmark':12} {'n':>3} {'median':>8} {'min':>8} {'max':>8}  round medians")
for k in sorted(ns, key=lambda k: (k.endswith('-2'), k)):
    v = ns[k]
    rounds = ' '.join(f"{st.median(per[k][r]):.1f}" for r in sorted(per[k]))
    print(f"{k:12} {len(v):3d} {st.median(v):8.2f} {min(v):8.2f} {max(v):8.2f}  {rounds}")
PY
echo "raw output in bench/$out" >&2
