#!/usr/bin/env bash
# targets.sh: flurry's performance targets measured against their peers in one run,
# on a quiet machine: the Go client, the Redis generator beside INCR, the snowflake
# generator beside bwmarrin, and the server's tail latency beside a bare handler.
# Writes everything raw to results/targets-<time>/ (one file per part, each with the
# machine's load before and after); docs/benchmarks.md publishes the medians.
#
#   cd bench && WAIT_IDLE=1 ./targets.sh      # about 15 minutes
#
# 1. client.txt: the Go client, one goroutine, `flurry serve` in another process
#    (BenchmarkNextRealServer with FLURRY_BENCH_SERVER), HTTP and gRPC, default
#    Options and Batch 100,000; -count 5. Target >= 20M IDs/s at the defaults.
# 2. redisgen.txt: the Redis generator beside INCR on the same client, same run
#    (BenchmarkRedis, one benchmark per run of the binary, -count 1, five rounds:
#    Next and INCR alternate, INCR first in even rounds), and redis-benchmark's INCR pipelined 16 deep for
#    NextN's per-ID cost. Targets: Next >= 0.9 x INCR's ids/s from 1 and from 64
#    goroutines; NextN per ID at least as cheap as INCR -P16.
# 3. peers.txt: peers.sh (flurry beside bwmarrin, sonyflake and rs/xid, one
#    benchmark per run of the binary, PEER_ROUNDS rounds, default 8; the constant-
#    clock path cost). Targets: the median of flurry's ratio to bwmarrin <= 1.00
#    serial and with two goroutines, <= 0.8 for the path cost; 0 allocs. Then
#    all.txt: peers.sh over every implementation, 3 rounds, and
#    snowflake-variants.txt: BenchmarkContention of ./snowflake (-cpu 1,2), the
#    contention variants side by side.
# 4. latency: latency.sh (ROUNDS 5, DURATION 10s) at 5k, 10k and 20k req/s.
#    Target: flurry p99 <= 1.1 x bare at each rate.
#
# Environment: PARTS (default "client redisgen snowflake latency"), WAIT_IDLE (wait up to 10 minutes for < 5% busy before each part),
# COUNT (5), PEER_ROUNDS (8), FLURRY_TEST_REDIS (the Redis to use; default redis://127.0.0.1:6379/0).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
count=${COUNT:-5}
redis=${FLURRY_TEST_REDIS:-redis://127.0.0.1:6379/0}
parts=" ${PARTS:-client redisgen snowflake latency} "
want() { [[ "$parts" == *" $1 "* ]]; }
out=results/targets-$(date -u +%F-%H%M%S)
mkdir -p "$out"

busy() {
	local a b
	a=($(head -1 /proc/stat)); sleep 3; b=($(head -1 /proc/stat))
	local total=0 idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) i
	for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
	echo $(( 100 - 100 * idle / total ))
}
idle() {
	if [ -n "${WAIT_IDLE:-}" ]; then
		for _ in $(seq 200); do [ "$(busy)" -lt 5 ] && break; done
	fi
}
header() {
	echo "date: $(date -u +%FT%TZ)"
	echo "nproc: $(nproc)"
	echo "cpu-model: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
	echo "kernel: $(uname -sr)"
	echo "go: $(go version)"
	echo "flurry-commit: $(git rev-parse --short HEAD) (plus any uncommitted changes)"
	echo "cpu-busy-before: $(busy)%"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "command: $*"
	echo
}
footer() { echo "loadavg-after: $(cut -d' ' -f1-3 /proc/loadavg)"; }

tmp=$(mktemp -d /tmp/flurry-targets.XXXXXX)
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# 1. The Go client against a server in another process.
if want client; then
(cd "$root" && go build -o "$tmp/flurry" ./cmd/flurry && go test -c -o "$tmp/client.test" ./client/)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$tmp/flurry" serve --listen "127.0.0.1:$port" --data "$tmp/data" >"$tmp/serve.log" 2>&1 &
spid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
idle
cmd=("$tmp/client.test" -test.run '^$' -test.bench 'NextRealServer/(http|grpc)/(default|batch=100000)' -test.benchmem -test.benchtime 3s -test.count "$count")
{
	header "FLURRY_BENCH_SERVER=http://127.0.0.1:$port (flurry serve, another process) client.test ${cmd[*]:1}"
	(cd "$root/client" && FLURRY_BENCH_SERVER=http://127.0.0.1:$port "${cmd[@]}") 2>&1
	footer
} | tee "$out/client.txt"
kill "$spid"; wait "$spid" 2>/dev/null || true; spid=
fi

# 2. The Redis generator beside INCR.
if want redisgen; then
(cd "$root" && go test -c -o "$tmp/redisgen.test" ./redisgen/)
idle
{
	header "FLURRY_TEST_REQUIRE=1 FLURRY_TEST_REDIS=$redis ./redisgen.test -test.run '^\$' -test.bench . -test.benchmem -test.count 1, one benchmark a run, $count rounds (Next and INCR interleaved, INCR first in even rounds); redis-benchmark -P 16 INCR"
	# One benchmark per run of the test binary, -count 1, count rounds: Next and
	# INCR alternate, and which of the two runs first alternates by round, so
	# that a machine speeding up or slowing down during the run (the VM's stolen
	# time comes and goes) favours neither.
	for round in $(seq "$count"); do
		order="Next INCR Next-parallel64 INCR-parallel64 NextN1000"
		[ $((round % 2)) -eq 0 ] && order="INCR Next INCR-parallel64 Next-parallel64 NextN1000"
		for b in $order; do
			(cd "$root/redisgen" && FLURRY_TEST_REQUIRE=1 FLURRY_TEST_REDIS=$redis "$tmp/redisgen.test" -test.run '^$' -test.bench "^BenchmarkRedis\$/^$b\$" -test.benchmem -test.count 1) 2>&1
		done
	done
	hp=$(python3 -c "import urllib.parse as u; p=u.urlparse('$redis'); print(p.hostname or '127.0.0.1', p.port or 6379)")
	set -- $hp
	for _ in $(seq "$count"); do
		redis-benchmark -h "$1" -p "$2" -c 1 -n 200000 -P 16 -q INCR "{flurry-targets-$$}:incr" 2>&1 | tr '\r' '\n' | tail -1
	done
	redis-cli -h "$1" -p "$2" del "{flurry-targets-$$}:incr" >/dev/null
	footer
} | tee "$out/redisgen.txt"
fi

# 3. The default snowflake generator, serial and two goroutines, beside the peers.
if want snowflake; then
idle
ROUNDS=${PEER_ROUNDS:-8} ./peers.sh
mv "$(ls -t results/peers-*.txt | head -1)" "$out/peers.txt"
idle
ROUNDS=3 CASES="Next NextParallel-2" IMPLS="flurry flurry-coarse flurry-lanes flurry-lanes-coarse bwmarrin sonyflake yitter xid uuidv7 ulid" ./peers.sh
mv "$(ls -t results/peers-*.txt | head -1)" "$out/all.txt"
# The contention variants the default was chosen from (add: fetch-and-add, the old
# default; mutex; hybrid: the default; a per-P lanes-merge variant measured 185 ns/ID
# and is not offered), serial and two goroutines,
# with switches/kID (how often a goroutine's next ID was not its last plus one).
idle
{
	header "go test -run '^\$' -bench '^BenchmarkContention\$' -benchmem -cpu 1,2 -count $count ./snowflake/"
	(cd "$root" && go test -run '^$' -bench '^BenchmarkContention$' -benchmem -cpu 1,2 -count "$count" ./snowflake/) 2>&1
	footer
} | tee "$out/snowflake-variants.txt"
fi

# 4. Tail latency against the bare handler.
if want latency; then
idle
ROUNDS=${ROUNDS:-5} DURATION=${DURATION:-10s} ./latency.sh 2>&1 | tee "$out/latency.log"
mv "$(ls -t results/latency-*.txt | head -1)" "$out/latency.txt"
fi

benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
if [ -x "$benchstat" ]; then
	for f in client redisgen snowflake-variants; do [ -e "$out/$f.txt" ] || continue; "$benchstat" "$out/$f.txt" >"$out/$f.benchstat.txt" 2>&1 || true; done
fi
echo "raw output in bench/$out" >&2
