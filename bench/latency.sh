#!/usr/bin/env bash
# latency.sh: flurry's tail latency as a ratio to a bare net/http handler under the
# identical setup, with the measurement's own noise beside it.
#
# The servers under test run pinned to SERVER_CPU and the load generator to
# LOAD_CPU (taskset), so they do not take each other's CPU. The generator is
# `flurry bench --rate R`: open loop, each request scheduled at an intended send
# time and its latency measured from that time (no coordinated omission).
#
# Each run interleaves two servers in slices of SLICE (`flurry bench --baseline
# --slice`): the schedule alternates between them every SLICE, so a slow moment
# of the machine (a stall of the VM, its CPU time stolen by the host) falls on
# both alike, where back-to-back runs gave it to whichever ran then. Per round and
# rate there are two runs:
#   - flurry/bare: `flurry serve` (the embedded default, namespace "default")
#     against bench/cmd/barecounter (a bare net/http handler returning an
#     atomic counter);
#   - bare/bare (the control): a second barecounter against the first. Its ratio
#     would be 1.00 on a quiet machine; its spread is the resolution of the
#     flurry/bare ratio on this one.
# Every request is GET /v1/default/next?count=1&format=text over HTTP/1.1
# keep-alive. All three servers run throughout on the same CPU; only the one
# driven does work. For each run the script also records the CPU time each
# server used (utime+stime from /proc, per request served: the server's own cost,
# which a stall does not inflate) and the CPU time the host stole from this VM
# (/proc/stat's steal column).
#
# A stall of the host shows in both servers' tails, but it dwarfs what either
# server does: on the project's VM, runs in which the host stole 5-45% of the
# CPU time had p99s of 30 ms to 2 s for both, against 1.5-2 ms in quiet runs. So
# a run during which the host stole more than MAX_STEAL % of the VM's CPU time is
# thrown away and run again, up to TRIES times (the last try is kept, marked);
# every try stays in the raw lines, and the table counts them.
#
# It prints, per rate, the medians over the rounds of p50, p99 and p999 for
# flurry and bare, flurry's ratio to bare, the control's ratio (median and
# range), both servers' CPU per request and the steal, and writes the raw JSON
# lines and the table to results/latency-<time>.txt.
#
#   bench/latency.sh
#   RATES='5000 10000 20000' ROUNDS=5 DURATION=20s bench/latency.sh
#
# Environment: RATES (default "5000 10000 20000"), ROUNDS (3), DURATION (10s,
# measured per server), SLICE (500ms), WARMUP (2s), CONCURRENCY (64 workers and
# connections per server), SERVER_CPU (0), LOAD_CPU (1), MAX_STEAL (1, percent),
# TRIES (4), WAIT_IDLE (as in run.sh: wait up to 10 minutes for an idle machine
# first).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rates=${RATES:-5000 10000 20000}
rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
slice=${SLICE:-500ms}
warmup=${WARMUP:-2s}
conc=${CONCURRENCY:-64}
scpu=${SERVER_CPU:-0}
lcpu=${LOAD_CPU:-1}
max_steal=${MAX_STEAL:-1}
tries=${TRIES:-4}

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
# cputicks PID: the process's user+system CPU time, in clock ticks.
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# steal: the CPU time the hypervisor gave to others while this VM wanted it, in ticks.
steal() { awk '/^cpu /{print $9}' /proc/stat; }
hz=$(getconf CLK_TCK)

tmp=$(mktemp -d /tmp/flurry-latency.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$root" && go build -o "$tmp/flurry" ./cmd/flurry && (cd bench && go build -o "$tmp/bare" ./cmd/barecounter))

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
fport=$(port); bport=$(port); cport=$(port)
taskset -c "$scpu" "$tmp/flurry" serve --listen "127.0.0.1:$fport" --data "$tmp/data" >"$tmp/serve.log" 2>&1 &
fpid=$!; pids+=($fpid)
taskset -c "$scpu" "$tmp/bare" --listen "127.0.0.1:$bport" >"$tmp/bare.log" 2>&1 &
bpid=$!; pids+=($bpid)
taskset -c "$scpu" "$tmp/bare" --listen "127.0.0.1:$cport" >"$tmp/bare2.log" 2>&1 &
cpid=$!; pids+=($cpid)
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$fport/healthz" >/dev/null && curl -sf "http://127.0.0.1:$bport/" >/dev/null &&
		curl -sf "http://127.0.0.1:$cport/" >/dev/null && break
	sleep 0.1
done

mkdir -p results
out=results/latency-$(date -u +%F-%H%M%S).txt
{
	echo "date: $(date -u +%FT%TZ)"
	echo "nproc: $(nproc); servers on CPU $scpu, load generator on CPU $lcpu; clock ticks/s $hz"
	echo "go: $(go version)"
	echo "flurry-commit: $(git rev-parse --short HEAD) (plus any uncommitted changes)"
	echo "cpu-busy-before: $(busy)%"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "command: taskset -c $lcpu flurry bench --server URL --baseline BARE_URL --slice $slice --rate R --duration $duration --warmup $warmup --concurrency $conc --count 1 --json"
	echo
} >"$out"
# drive NAME URL PID BASE_URL BASE_PID RATE: one interleaved run, its line in $out.
drive() {
	local name=$1 url=$2 pid=$3 burl=$4 bpid=$5 rate=$6 c0 b0 s0 t0 js st wall kept try
	for try in $(seq "$tries"); do
		c0=$(cputicks "$pid"); b0=$(cputicks "$bpid"); s0=$(steal); t0=$(date +%s%N)
		js=$(taskset -c "$lcpu" "$tmp/flurry" bench --server "$url" --baseline "$burl" --slice "$slice" --rate "$rate" \
			--duration "$duration" --warmup "$warmup" --concurrency "$conc" --count 1 --json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))')
		st=$(( $(steal) - s0 )); wall=$(( ($(date +%s%N) - t0) / 1000000 ))
		# Kept when the host stole at most MAX_STEAL % of the VM's CPU time
		# during the run, or when it is the last try.
		kept=$(awk -v st="$st" -v hz="$hz" -v n="$(nproc)" -v w="$wall" -v max="$max_steal" 'BEGIN { print (st / hz / (n * w / 1000) * 100 <= max) ? 1 : 0 }')
		[ "$try" -eq "$tries" ] && [ "$kept" = 0 ] && kept=last
		echo "raw round=$round rate=$rate run=$name try=$try kept=$kept cpu_ticks=$(( $(cputicks "$pid") - c0 )) base_cpu_ticks=$(( $(cputicks "$bpid") - b0 )) steal_ticks=$st wall_ms=$wall $js" >>"$out"
		[ "$kept" = 0 ] || break
		echo "round $round rate $rate $name: steal over $max_steal% of the CPU time, run again ($try/$tries)" >&2
	done
}
for round in $(seq "$rounds"); do
	for rate in $rates; do
		drive flurry "http://127.0.0.1:$fport" "$fpid" "http://127.0.0.1:$bport" "$bpid" "$rate"
		drive control "http://127.0.0.1:$cport" "$cpid" "http://127.0.0.1:$bport" "$bpid" "$rate"
	done
	echo "round $round/$rounds done" >&2
done
echo "loadavg-after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out"

python3 - "$out" "$hz" "$(nproc)" "$max_steal" "$tries" <<'PY' | tee -a "$out"
import json, re, statistics, sys
hz, ncpu, max_steal, tries = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
runs, dropped, noisy = {}, {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"raw round=(\d+) rate=(\d+) run=(\w+) try=(\d+) kept=(\w+) cpu_ticks=(\d+) base_cpu_ticks=(\d+) steal_ticks=(\d+) wall_ms=(\d+) (.*)", line)
    if m:
        key = (int(m[2]), m[3])
        if m[5] == "0":
            dropped[key] = dropped.get(key, 0) + 1
            continue
        if m[5] == "last":
            noisy[key] = noisy.get(key, 0) + 1
        res = json.loads(m[10])
        runs.setdefault(key, []).append(dict(a=res[0], b=res[1], cpu=int(m[6]), bcpu=int(m[7]), steal=int(m[8]), wall=int(m[9]) / 1e3))
med = statistics.median
keys = ("p50_ns", "p99_ns", "p999_ns")
ms = lambda vals: " / ".join(f"{v/1e6:.3f}" for v in vals)
print()
print("| rate (req/s) | achieved flurry / bare | flurry p50 / p99 / p999 (ms) | bare p50 / p99 / p999 (ms) | flurry / bare, p50 / p99 / p999 | control bare / bare, p50 / p99 / p999 | control p99 range | CPU per request, flurry / bare (us) | steal (% of the CPUs) | runs thrown away for steal, flurry / control |")
print("|---|---|---|---|---|---|---|---|---|---|")
for rate in sorted({r for r, _ in runs}):
    fl, co = runs.get((rate, "flurry"), []), runs.get((rate, "control"), [])
    if not fl or not co:
        continue
    f = [med(r["a"][k] for r in fl) for k in keys]
    b = [med(r["b"][k] for r in fl) for k in keys]
    ratio = [med(r["a"][k] / r["b"][k] for r in fl) for k in keys]
    cratio = [med(r["a"][k] / r["b"][k] for r in co) for k in keys]
    c99 = [r["a"]["p99_ns"] / r["b"]["p99_ns"] for r in co]
    cpu_f = med(r["cpu"] / hz / r["a"]["requests"] * 1e6 for r in fl if r["a"]["requests"])
    cpu_b = med(r["bcpu"] / hz / r["b"]["requests"] * 1e6 for r in fl if r["b"]["requests"])
    st = med(r["steal"] / hz / (ncpu * r["wall"]) * 100 for r in fl + co)
    thrown = f"{dropped.get((rate, 'flurry'), 0)} / {dropped.get((rate, 'control'), 0)}"
    if noisy.get((rate, "flurry")) or noisy.get((rate, "control")):
        thrown += f" (kept noisy: {noisy.get((rate, 'flurry'), 0)} / {noisy.get((rate, 'control'), 0)})"
    ach = f"{med(r['a']['requests_per_second'] for r in fl):.0f} / {med(r['b']['requests_per_second'] for r in fl):.0f}"
    print(f"| {rate} | {ach} | {ms(f)} | {ms(b)} | {' / '.join(f'{x:.2f}' for x in ratio)} | {' / '.join(f'{x:.2f}' for x in cratio)} | {min(c99):.2f}-{max(c99):.2f} | {cpu_f:.1f} / {cpu_b:.1f} | {st:.1f}% | {thrown} |")
n = len(next(iter(runs.values())))
print(f"\nratios are medians over {n} rounds of each round's ratio (both servers measured in the same interleaved run);")
print("target: flurry p99 <= 1.1 x bare at each rate. The control's ratio shows what the same method reports for two identical servers.")
print(f"A run during which the host stole more than {max_steal}% of the VM's CPU time was thrown away and run again, up to {tries} tries;")
print("the last try is kept whatever its steal ('kept noisy'). Every try is in the raw lines above.")
PY
echo "raw output in bench/$out" >&2
