#!/usr/bin/env bash
# staticcheck on both sets of files, -tags flurry_full on every package and the
# lean default build on the packages where it differs (scripts/lean-packages.sh:
# every other package compiles the same files in both), with a pinned version
# installed through the Go module proxy into $(go env
# GOPATH)/bin when that binary is missing or another version (so a machine that
# kept GOPATH pays the install once). `make lint` and CI (.ci/run) run it.
#
#   scripts/staticcheck.sh                  # both tag sets
#   scripts/staticcheck.sh --install        # only install it (CI starts this first,
#                                           # in the background)
#   STATICCHECK_VERSION=v0.8.2 scripts/staticcheck.sh
#
# A finding fails the run unless it is one of the exclusions below: each names a
# file, a check and the finding's text, never a whole check or directory, and
# says why it is not fixed here. An exclusion that matches nothing is reported so
# that it can be dropped.
set -euo pipefail
cd "$(dirname "$0")/.."

# 2026.2.2: the first release line that knows Go 1.26.
version=${STATICCHECK_VERSION:-v0.8.2}
gobin="$(go env GOPATH)/bin"
bin="$gobin/staticcheck"
# One install at a time (a lock beside the binary): a run that finds another
# installing waits for it and uses its binary rather than build the same again.
mkdir -p "$gobin"
exec 9>"$gobin/.staticcheck.lock"
flock 9
if ! "$bin" -version 2>/dev/null | grep -qF "(${version#v})"; then
	echo "staticcheck: installing honnef.co/go/tools/cmd/staticcheck@$version"
	go install "honnef.co/go/tools/cmd/staticcheck@$version"
fi
exec 9>&-
[ "${1:-}" = --install ] && exit 0

# file|check|text: findings that must stay (none today).
exclusions=(
)

status=0
declare -A used
mapfile -t lean < <(scripts/lean-packages.sh)
for tags in flurry_full ""; do
	label=${tags:-lean}
	pkgs=(./...)
	if [ -z "$tags" ]; then
		[ ${#lean[@]} -eq 0 ] && continue
		pkgs=("${lean[@]}")
	fi
	echo "staticcheck ($label; ${pkgs[*]}): $("$bin" -version)"
	out=$("$bin" -tags "$tags" "${pkgs[@]}" 2>&1) && rc=0 || rc=$?
	left=()
	while IFS= read -r line; do
		[ -z "$line" ] && continue
		excluded=
		for ex in "${exclusions[@]}"; do
			IFS='|' read -r file check text <<<"$ex"
			if [[ $line == "$file":* && $line == *"$text"* && $line == *"($check)" ]]; then
				excluded=1
				used[$ex]=1
				break
			fi
		done
		[ -z "$excluded" ] && left+=("$line")
	done <<<"$out"
	# Anything not excluded fails the run: a finding, or staticcheck's own error
	# (a package that does not build).
	if [ ${#left[@]} -gt 0 ]; then
		printf '%s\n' "${left[@]}"
		status=1
	elif [ "$rc" -ne 0 ] && [ -z "$out" ]; then
		echo "staticcheck ($label) failed with status $rc and no output"
		status=1
	fi
done
for ex in "${exclusions[@]}"; do
	[ -n "${used[$ex]:-}" ] || echo "staticcheck: the exclusion \"$ex\" matched nothing; drop it from $0"
done
if [ "$status" -ne 0 ]; then
	echo "staticcheck: findings above (fix them, or, if they must stay, add a //lint:ignore CHECK reason line)"
fi
exit "$status"
