#!/usr/bin/env bash
# One leasesize run against one of the engines on loopback, with the engine's server
# process found by its port for the CPU measurement:
#
#   bench/leasesize/sizing.sh ENGINE SESSIONS SCOPE-MODE DURATION [leasesize flags...]
#   bench/leasesize/sizing.sh etcd 1000 own 60s
#   bench/leasesize/sizing.sh postgres 3000 shared 30s -window 4s
#
# ENGINE is etcd, postgres, mariadb, redis, zookeeper or file; the URLs are those of
# internal/testenv's defaults (override with LEASESIZE_URL). The output goes to
# stdout and to $OUT/ENGINE-SESSIONS-MODE.txt (OUT defaults to /tmp/leasesize).
# Run one at a time: the point is the engine's cost, and two runs would share it.
#
# PARTS=N splits the sessions over N processes started together on one run (its
# -run-id), as a fleet's processes would share a store: each keeps its sessions
# renewing for HOLD (default: DURATION) after its own window, so that every
# part's window sees the whole load, and a last run deletes what they left. The
# output is each part's report, then one line for the run: the slowest part's
# start, the writes/s of all parts, the worst part's renewal p99, and the engine's
# CPU (over part 0's window) per 1,000 writes/s.
set -euo pipefail

engine=${1:?engine: etcd, postgres, mariadb, redis, zookeeper or file}
sessions=${2:?sessions}
mode=${3:?scope mode: own or shared}
duration=${4:?duration, e.g. 60s}
shift 4

here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/leasesize}
mkdir -p "$out"

# listener PORT prints the pid of the process listening on 127.0.0.1:PORT.
listener() {
	ss -ltnpH "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2
}

extra=()
case $engine in
etcd)
	url=etcd://127.0.0.1:2379/sizing
	extra=(-cpu-pid "$(listener 2379)" -metrics http://127.0.0.1:2379/metrics) ;;
postgres)
	# application_name lets the run find its own backends in pg_stat_activity.
	url='postgres://postgres@127.0.0.1:5432/test?sslmode=disable&application_name=leasesize'
	extra=(-cpu-pid "$(listener 5432)") ;;
mariadb)
	url=mysql://root@127.0.0.1:3306/test
	extra=(-cpu-pid "$(listener 3306)") ;;
redis)
	url='redis://127.0.0.1:6379/0?prefix=leasesize'
	extra=(-cpu-pid "$(listener 6379)") ;;
zookeeper)
	url=zk://127.0.0.1:2181/sizing
	extra=(-cpu-pid "$(listener 2181)") ;;
file)
	dir=$(mktemp -d /tmp/leasesize-file.XXXXXX)
	trap 'rm -rf "$dir"' EXIT
	# No server: the file store's work is this process's (and the kernel's).
	url=file://$dir ;;
*)
	echo "unknown engine $engine" >&2
	exit 2 ;;
esac
url=${LEASESIZE_URL:-$url}

bin=$out/leasesize
if [[ ! -x $bin || -n $(find "$here" "$here/../../lease" "$here/../../internal" -name '*.go' -newer "$bin" -print -quit) ]]; then
	(cd "$here/.." && go build -tags flurry_full -o "$bin" ./leasesize)
fi
parts=${PARTS:-1}
if ! [[ $parts =~ ^[1-9][0-9]?$ ]] || ((sessions % parts != 0)); then
	echo "PARTS=$parts: use 1 to 99 processes that divide $sessions sessions evenly" >&2
	exit 2
fi
file=$out/$engine-$sessions-$mode.txt
{
	echo "# $(date -u +%FT%TZ) $(git -C "$here" rev-parse --short HEAD 2>/dev/null || true)"
	echo "# leasesize -store $url -sessions $sessions -scope-mode $mode -duration $duration ${extra[*]} $* (PARTS=$parts)"
} >"$file"
if ((parts == 1)); then
	"$bin" -store "$url" -sessions "$sessions" -scope-mode "$mode" -duration "$duration" "${extra[@]}" "$@" 2>&1 | tee -a "$file"
	exit "${PIPESTATUS[0]}"
fi

run_id=p$(date +%s%N | tail -c 9)
hold=${HOLD:-$duration}
pids=()
for ((p = 0; p < parts; p++)); do
	"$bin" -store "$url" -sessions $((sessions / parts)) -scope-mode "$mode" -duration "$duration" \
		-run-id "$run_id" -part "$p" -keep -hold "$hold" "${extra[@]}" "$@" >"$out/part-$p.txt" 2>"$out/part-$p.err" &
	pids+=($!)
done
failed=0
for ((p = 0; p < parts; p++)); do
	wait "${pids[$p]}" || { echo "part $p failed (exit $?):" >&2; tail -5 "$out/part-$p.err" >&2; failed=1; }
done
for ((p = 0; p < parts; p++)); do
	{ echo "## part $p"; cat "$out/part-$p.txt"; } | tee -a "$file"
done
# The last run, one session, deletes the marks every part kept.
"$bin" -store "$url" -sessions 1 -scope-mode "$mode" -duration 1s -run-id "$run_id" -part "$parts" 2>&1 |
	grep '^cleanup' | tee -a "$file"
awk -v parts="$parts" '
	/^summary / {
		n++
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["start_s"] + 0 > start) start = v["start_s"] + 0
		writes += v["writes_per_s"]
		if (v["renew_p99_ms"] + 0 > p99) p99 = v["renew_p99_ms"] + 0
		errors += v["errors"]
		split(v["held"], h, "/"); held += h[1]; up += h[2]
		if (n == 1) { cpu = v["engine_cpu"]; base = v["engine_cpu_base"] }
	}
	END {
		if (n != parts) { printf "run: %d of %d parts reported\n", n, parts; exit 1 }
		net = cpu - (base == "none" ? 0 : base)
		printf "run: %d parts, start_s=%.1f (the slowest part) writes_per_s=%.1f renew_p99_ms=%.2f (the worst part) errors=%d held=%d/%d engine_cpu=%.3f engine_cpu_base=%s", parts, start, writes, p99, errors, held, up, cpu, base
		if (writes > 0) printf " engine_cpu_per_1000_writes=%.1f%%", 100 * net / writes * 1000
		printf "\n"
	}' "$file" | tee -a "$file"
exit "$failed"
