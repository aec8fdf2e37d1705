#!/usr/bin/env bash
# peers.sh: the default snowflake generator beside bwmarrin/snowflake (and, for
# context, sonyflake and rs/xid), measured as a peer would measure it: one test
# binary of this module (go test -c, no profile, no flags of flurry's own), one
# benchmark per run of the binary, the implementations alternating inside each
# round and the first place alternating by round, so that the machine speeding up
# or slowing down during the run favours none of them. Prints each round's ratio of
# flurry to each peer and the median of those ratios; raw output, with the machine
# and the CPU time the host stole, goes to results/peers-<time>.txt.
#
#   cd bench && ./peers.sh                  # 8 rounds, about 6 minutes
#   ROUNDS=3 BENCHTIME=300ms ./peers.sh     # a quick look
#
# The cases, each a benchmark of next_test.go or pathcost_test.go:
#   Next            one goroutine (BenchmarkNext, -cpu 1)
#   NextParallel-1  BenchmarkNextParallel with -cpu 1: one goroutine through RunParallel
#   NextParallel-2  BenchmarkNextParallel with -cpu 2: two goroutines sharing one generator
#   PathCost        one goroutine, a constant clock (BenchmarkPathCost, -cpu 1):
#                   flurry against bwmarrin's algorithm on the same clock, so what
#                   is compared is each one's work besides the clock read
#   PathCost-2      BenchmarkPathCostParallel with -cpu 2
# A ratio below 1 means flurry took less time per ID than the peer in that round.
#
# The summary names the CPU (the ordering of two generators can differ between CPU
# vendors: a locked instruction costs more on some than on others) and, when
# valgrind is installed, ends with instructions.sh's counts of instructions per ID
# for Next and PathCost, which hold on any x86-64 CPU (INSTRUCTIONS=0 skips them).
#
# Environment: ROUNDS (8), BENCHTIME (1s), CASES (the cases above, space-separated),
# IMPLS (the implementations of the Next cases, default "flurry bwmarrin sonyflake
# xid"; any sub-benchmark of BenchmarkNext, e.g. yitter, uuidv7, ulid, flurry-coarse,
# flurry-lanes; one missing from a case, such as flurry-lanes-coarse serially, is
# skipped there).
set -euo pipefail
cd "$(dirname "$0")"
rounds=${ROUNDS:-8}
benchtime=${BENCHTIME:-1s}
cases=${CASES:-Next NextParallel-1 NextParallel-2 PathCost PathCost-2}
impls_next=${IMPLS:-flurry bwmarrin sonyflake xid}
mkdir -p results
out=results/peers-$(date -u +%F-%H%M%S).txt
tmp=$(mktemp -d /tmp/flurry-peers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .

# stat prints the CPU time counters of /proc/stat's first line: total and steal.
stat() { awk '/^cpu /{t=0; for (i=2;i<=NF;i++) t+=$i; print t, $9}' /proc/stat; }
read -r t0 s0 < <(stat)
{
	echo "date: $(date -u +%FT%TZ)"
	echo "nproc: $(nproc)"
	echo "cpu-model: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
	echo "kernel: $(uname -sr)"
	echo "go: $(go version)"
	echo "flurry-commit: $(git rev-parse --short HEAD) (plus any uncommitted changes)"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "command: ROUNDS=$rounds BENCHTIME=$benchtime CASES='$cases' IMPLS='$impls_next' ./peers.sh"
	echo
} >"$out"

# run CASE IMPL: one run of the binary, one benchmark; appends "round case impl ns".
run() {
	local bench cpu
	case $1 in
	Next) bench=BenchmarkNext cpu=1 ;;
	NextParallel-1) bench=BenchmarkNextParallel cpu=1 ;;
	NextParallel-2) bench=BenchmarkNextParallel cpu=2 ;;
	PathCost) bench=BenchmarkPathCost cpu=1 ;;
	PathCost-2) bench=BenchmarkPathCostParallel cpu=2 ;;
	*) echo "peers.sh: unknown case $1" >&2; exit 2 ;;
	esac
	local line
	line=$("$tmp/bench.test" -test.run '^$' -test.bench "^$bench\$/^$2\$" -test.cpu "$cpu" \
		-test.benchtime "$benchtime" -test.benchmem -test.count 1 2>&1 | grep '^Benchmark') || {
		echo "peers.sh: no $bench/$2, skipped" >&2; return 0; }
	echo "$line" >>"$out"
	echo "$round $1 $2 $(echo "$line" | awk '{print $3}')" >>"$tmp/ns.txt"
}

for round in $(seq "$rounds"); do
	for c in $cases; do
		impls="flurry bwmarrin"
		[[ $c == Next* ]] && impls=$impls_next
		# First place alternates by round: odd rounds flurry first, even rounds last.
		[ $((round % 2)) -eq 0 ] && impls=$(echo "$impls" | tr ' ' '\n' | tac | tr '\n' ' ')
		for i in $impls; do run "$c" "$i"; done
	done
	echo "round $round/$rounds done" >&2
done

read -r t1 s1 < <(stat)
{
	echo
	echo "loadavg-after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "steal: $(awk -v t="$((t1 - t0))" -v s="$((s1 - s0))" 'BEGIN{printf "%.1f%%", t ? 100*s/t : 0}') of CPU time during the run"
	echo
} >>"$out"

python3 - "$tmp/ns.txt" "$cases" <<'PY' | tee -a "$out"
import collections, statistics as st, sys
ns = collections.defaultdict(dict)  # (case, impl) -> round -> ns/ID
impls = []
for line in open(sys.argv[1]):
    r, c, i, v = line.split()
    ns[(c, i)][int(r)] = float(v)
    if i not in impls:
        impls.append(i)
peers = [p for p in ("bwmarrin", "sonyflake", "xid") if p in impls]
cases = sys.argv[2].split()
print(f"cpu: {open('/proc/cpuinfo').read().split('model name')[1].split(':',1)[1].splitlines()[0].strip()}")
print("flurry's ns/ID over the peer's, per round (below 1: flurry cheaper), and the median")
for c in cases:
    f = ns[(c, "flurry")]
    for peer in peers:
        p = ns.get((c, peer))
        if not p:
            continue
        rs = [f[r] / p[r] for r in sorted(f) if r in p]
        print(f"{c:15} vs {peer:9} {st.median(rs):5.2f}   rounds {' '.join(f'{x:.2f}' for x in rs)}")
print()
print("ns/ID, median of the rounds")
w = {i: max(9, len(i)) for i in impls}
print(f"{'':15} " + " ".join(f"{i:>{w[i]}}" for i in impls))
for c in cases:
    print(f"{c:15} " + " ".join(f"{st.median(ns[(c, i)].values()):{w[i]}.2f}" if (c, i) in ns else f"{'':>{w[i]}}" for i in impls))
if len(impls) > 4:
    print()
    print("each one's ns/ID over bwmarrin's, median of the per-round ratios")
    print(f"{'':15} " + " ".join(f"{i:>{w[i]}}" for i in impls))
    for c in cases:
        b = ns.get((c, "bwmarrin"), {})
        row = []
        for i in impls:
            v = ns.get((c, i), {})
            rs = [v[r] / b[r] for r in v if r in b]
            row.append(f"{st.median(rs):{w[i]}.2f}" if rs else f"{'':>{w[i]}}")
        print(f"{c:15} " + " ".join(row))
PY
if [ "${INSTRUCTIONS:-1}" != 0 ] && command -v valgrind >/dev/null; then
	echo "instructions per ID (callgrind, bench/instructions.sh; the same on any x86-64 CPU):" | tee -a "$out"
	./instructions.sh | tee -a "$out"
fi
echo "raw output in bench/$out" >&2
