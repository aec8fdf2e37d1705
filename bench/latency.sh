#!/usr/bin/env bash
# latency.sh: flurry's tail latency as a ratio to a bare net/http handler under the
# identical setup (issue 14).
#
# The server under test runs pinned to SERVER_CPU and the load generator to
# LOAD_CPU (taskset), so they do not take each other's CPU. The generator is
# `flurry bench --rate R`: open loop, each request scheduled at an intended send
# time and its latency measured from that time (no coordinated omission). For each
# round and each rate it drives `flurry serve` (the embedded default, namespace
# "default") and server/internal/barecounter (a bare net/http handler returning
# an atomic counter), flurry first in odd rounds and bare first in even ones, with
# the same command: GET /v1/default/next?count=1&format=text
# over HTTP/1.1 keep-alive. Both servers run throughout, on the same CPU; only the
# one driven does work. It prints, per rate, the medians over the rounds of p50,
# p99 and p999 for both and flurry's ratio to bare, and writes the raw JSON lines
# and the table to results/latency-<time>.txt.
#
#   bench/latency.sh
#   RATES='5000 10000 20000' ROUNDS=5 DURATION=20s bench/latency.sh
#
# Environment: RATES (default "5000 10000 20000"), ROUNDS (3), DURATION (10s),
# WARMUP (2s), CONCURRENCY (64 workers and connections), SERVER_CPU (0), LOAD_CPU
# (1), WAIT_IDLE (as in run.sh: wait up to 10 minutes for an idle machine first).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rates=${RATES:-5000 10000 20000}
rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
warmup=${WARMUP:-2s}
conc=${CONCURRENCY:-64}
scpu=${SERVER_CPU:-0}
lcpu=${LOAD_CPU:-1}

busy() {
	local a b
	a=($(head -1 /proc/stat)); sleep 3; b=($(head -1 /proc/stat))
	local total=0 idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) i
	for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
	echo $(( 100 - 100 * idle / total ))
}
if [ -n "${WAIT_IDLE:-}" ]; then
	for _ in $(seq 200); do [ "$(busy)" -lt 5 ] && break; done
fi

tmp=$(mktemp -d /tmp/flurry-latency.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$root" && go build -o "$tmp/flurry" ./cmd/flurry && go build -o "$tmp/bare" ./server/internal/barecounter)

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
fport=$(port); bport=$(port)
taskset -c "$scpu" "$tmp/flurry" serve --listen "127.0.0.1:$fport" --data "$tmp/data" >"$tmp/serve.log" 2>&1 &
pids+=($!)
taskset -c "$scpu" "$tmp/bare" --listen "127.0.0.1:$bport" >"$tmp/bare.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$fport/healthz" >/dev/null && curl -sf "http://127.0.0.1:$bport/" >/dev/null && break
	sleep 0.1
done

mkdir -p results
out=results/latency-$(date -u +%F-%H%M%S).txt
{
	echo "date: $(date -u +%FT%TZ)"
	echo "nproc: $(nproc); server on CPU $scpu, load generator on CPU $lcpu"
	echo "go: $(go version)"
	echo "flurry-commit: $(git rev-parse --short HEAD) (plus any uncommitted changes)"
	echo "cpu-busy-before: $(busy)%"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "command: taskset -c $lcpu flurry bench --server URL --rate R --duration $duration --warmup $warmup --concurrency $conc --count 1 --json"
	echo
} >"$out"
for round in $(seq "$rounds"); do
	for rate in $rates; do
		# Odd rounds drive flurry first, even rounds bare first: neither always
		# runs on the CPU the other has just warmed (or left busy).
		order="flurry bare"
		[ $((round % 2)) -eq 0 ] && order="bare flurry"
		for target in $order; do
			url=http://127.0.0.1:$fport
			[ "$target" = bare ] && url=http://127.0.0.1:$bport
			line=$(taskset -c "$lcpu" "$tmp/flurry" bench --server "$url" --rate "$rate" --duration "$duration" \
				--warmup "$warmup" --concurrency "$conc" --count 1 --json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[0]))')
			echo "raw round=$round rate=$rate target=$target $line" >>"$out"
		done
	done
	echo "round $round/$rounds done" >&2
done
echo "loadavg-after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out"

python3 - "$out" <<'PY' | tee -a "$out"
import json, re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"raw round=(\d+) rate=(\d+) target=(\w+) (.*)", line)
    if m:
        rows.setdefault((int(m[2]), m[3]), []).append(json.loads(m[4]))
print()
print("| rate (req/s) | achieved flurry / bare | flurry p50 / p99 / p999 (ms) | bare p50 / p99 / p999 (ms) | ratio p50 / p99 / p999 |")
print("|---|---|---|---|---|")
for rate in sorted({r for r, _ in rows}):
    med = {}
    for t in ("flurry", "bare"):
        rs = rows.get((rate, t), [])
        med[t] = {k: statistics.median(r[k] for r in rs) for k in ("p50_ns", "p99_ns", "p999_ns", "requests_per_second")}
    f, b = med["flurry"], med["bare"]
    ms = lambda d: " / ".join(f"{d[k]/1e6:.3f}" for k in ("p50_ns", "p99_ns", "p999_ns"))
    ratio = " / ".join(f"{f[k]/b[k]:.2f}" for k in ("p50_ns", "p99_ns", "p999_ns"))
    print(f"| {rate} | {f['requests_per_second']:.0f} / {b['requests_per_second']:.0f} | {ms(f)} | {ms(b)} | {ratio} |")
print(f"\nmedians of {len(next(iter(rows.values())))} rounds; target: flurry p99 <= 1.1 x bare at each rate")
PY
echo "raw output in bench/$out" >&2
