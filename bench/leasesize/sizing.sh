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
file=$out/$engine-$sessions-$mode.txt
{
	echo "# $(date -u +%FT%TZ) $(git -C "$here" rev-parse --short HEAD 2>/dev/null || true)"
	echo "# leasesize -store $url -sessions $sessions -scope-mode $mode -duration $duration ${extra[*]} $*"
} >"$file"
"$bin" -store "$url" -sessions "$sessions" -scope-mode "$mode" -duration "$duration" "${extra[@]}" "$@" 2>&1 | tee -a "$file"
