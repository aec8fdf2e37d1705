#!/usr/bin/env bash
# The cold first run of flurry: the time a new user waits for the README's main
# command, `go run ./cmd/flurry serve`, with an empty build cache (the module cache
# is kept: downloads are not counted), from its start to the first ID it answers.
# Then the size of the binary `go build` makes, without and with -ldflags "-s -w",
# and the load average before and after (a figure from a busy machine says little).
#
#   scripts/coldstart.sh                      # the lean default build
#   scripts/coldstart.sh --tags flurry_full   # the same with build tags
#
# Everything goes to a temporary directory (build cache, data, binaries) that is
# removed at the end; the server is stopped with SIGINT. Needs bash, go, curl and
# setsid (util-linux). docs/building.md has the figures and how they were taken.
set -euo pipefail

tags=""
while [ $# -gt 0 ]; do
	case "$1" in
	--tags) tags=$2; shift 2 ;;
	-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "coldstart: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
for tool in go curl setsid; do
	command -v "$tool" >/dev/null 2>&1 || { echo "coldstart: $tool is needed" >&2; exit 2; }
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
pgid=""
cleanup() {
	if [ -n "$pgid" ]; then
		kill -INT -- "-$pgid" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 -- "-$pgid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$pgid" 2>/dev/null || true
	fi
	chmod -R u+w "$tmp" 2>/dev/null || true # the module cache is read-only; this one holds none
	rm -rf "$tmp"
}
trap cleanup EXIT

# A port nothing listens on.
port=""
for _ in $(seq 1 50); do
	p=$((20000 + RANDOM % 40000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || { echo "coldstart: no free port found" >&2; exit 1; }

export GOCACHE="$tmp/gocache"
export GOFLAGS="${GOFLAGS:-}"
tagflag=()
[ -n "$tags" ] && tagflag=(-tags "$tags")
# Fill the module cache first, so that downloads are not timed.
go mod download

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime | sed 's/.*load averages*: //'; }
echo "coldstart: $(go version), $(nproc 2>/dev/null || sysctl -n hw.ncpu) CPUs, tags: ${tags:-(none: the lean default)}"
echo "coldstart: load average before: $(load)"

start=$(date +%s.%N)
setsid go run "${tagflag[@]}" ./cmd/flurry serve --listen "127.0.0.1:$port" --data "$tmp/data" >"$tmp/serve.log" 2>&1 &
pgid=$!
first=""
while kill -0 "$pgid" 2>/dev/null; do
	if first=$(curl -fsS --max-time 2 "http://127.0.0.1:$port/v1/default/next" 2>/dev/null); then
		break
	fi
	first=""
	sleep 0.2
done
end=$(date +%s.%N)
if [ -z "$first" ]; then
	echo "coldstart: flurry serve ended without answering:" >&2
	cat "$tmp/serve.log" >&2
	exit 1
fi
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "coldstart: first ID after ${secs} s: $first"
echo "coldstart: load average after the first ID: $(load)"

kill -INT -- "-$pgid" 2>/dev/null || true
wait "$pgid" 2>/dev/null || true
pgid=""

go build "${tagflag[@]}" -o "$tmp/flurry" ./cmd/flurry
go build "${tagflag[@]}" -ldflags "-s -w" -o "$tmp/flurry-sw" ./cmd/flurry
size() { wc -c <"$1" | tr -d ' '; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
a=$(size "$tmp/flurry") b=$(size "$tmp/flurry-sw")
echo "coldstart: go build: $a bytes ($(mib "$a")); with -ldflags \"-s -w\": $b bytes ($(mib "$b"))"
echo "coldstart: load average at the end: $(load)"
echo "coldstart: ${secs} s to the first ID; the figure is only meaningful on an idle machine"
