#!/usr/bin/env bash
# Release build of flurry: static binaries (CGO_ENABLED=0, -trimpath) for
# linux, darwin and windows on amd64 and arm64, with every store engine
# (-tags flurry_full; docs/building.md), the version and commit stamped into
# `flurry version`, SHA-256 checksums and a CycloneDX SBOM per binary, all in one
# directory; with a JDK (javac, jar), the Java client's jar, its sources jar and its
# pom, named for the version. Needs only bash, git and go (no goreleaser, no network
# once the module cache is filled); without a JDK the Java files are left out, said
# on stderr.
#
#   scripts/release.sh                         # every target, version from git describe
#                                              # (untagged: CHANGELOG's newest, as -rc.<hash>)
#   scripts/release.sh --version v0.4.0        # the same, named
#   scripts/release.sh --target linux/amd64    # one target (repeatable)
#   scripts/release.sh --out /tmp/rel --commit 1a2b3c4d5e6f
#   scripts/release.sh --tags ""              # the lean default build instead
#
# Output (default dist/):
#   flurry-<version>-<os>-<arch>[.exe]         the binary
#   flurry-<version>-<os>-<arch>.cdx.json      its SBOM (CycloneDX 1.5 JSON, from the
#                                              module list linked into that binary)
#   flurry-client-<version>.jar, -sources.jar, .pom   the Java client (clients/java), with a JDK
#   SHA256SUMS                                 sha256sum format, every file above
#
# The SBOM generator is scripts/sbom (standard library only). The release test
# (TestRelease in scripts/deploy_test.go) runs this script for one target.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/dist"
version=""
commit=""
tags=flurry_full
targets=()
all_targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--version) version=$2; shift 2 ;;
	--commit) commit=$2; shift 2 ;;
	--target) targets+=("$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	--tags) tags=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "release: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
	case " ${all_targets[*]} " in
	*" $t "*) ;;
	*) echo "release: unknown target $t; one of: ${all_targets[*]}" >&2; exit 2 ;;
	esac
done

cd "$root"
if [ -z "$version" ]; then
	version=$(git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
	# A describe without a tag is a bare hash: the release being prepared is the
	# newest version CHANGELOG.md has a section for ("## [0.1.0] - date"), with
	# the hash as a pre-release (v0.1.0-rc.<hash>) until the commit is tagged.
	case "$version" in
	v*) ;;
	*)
		planned=$(sed -n 's/^## \[\([0-9][0-9.]*\)\].*/\1/p' CHANGELOG.md 2>/dev/null | head -1)
		version="v${planned:-0.0.0}-rc.$version"
		;;
	esac
fi
if [ -z "$commit" ]; then
	commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
	if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+dirty"; fi
fi
case "$version" in *[!A-Za-z0-9.+_-]*) echo "release: version $version has characters a file name should not" >&2; exit 2 ;; esac
# The SBOM's timestamp is the commit's, so two runs on one commit give the same files.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/sbom" ./scripts/sbom

ldflags="-s -w -X main.version=$version -X main.commit=$commit"
files=()
for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	name="flurry-$version-$goos-$goarch"
	exe=$name
	[ "$goos" = windows ] && exe="$name.exe"
	echo "release: $t -> $out/$exe" >&2
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$out/$exe" ./cmd/flurry
	"$tmp/sbom" -version "$version" -epoch "$epoch" -o "$out/$name.cdx.json" "$out/$exe"
	files+=("$exe" "$name.cdx.json")
done

if command -v javac >/dev/null 2>&1 && command -v jar >/dev/null 2>&1; then
	jv=${version#v}
	echo "release: the Java client -> $out/flurry-client-$jv.jar" >&2
	FLURRY_JAVA_VERSION=$jv "$root/clients/java/build.sh" jar >/dev/null
	cp "$root/clients/java/target/flurry-client-$jv.jar" "$root/clients/java/target/flurry-client-$jv-sources.jar" "$out/"
	sed "0,/^  <version>.*<\/version>$/s::  <version>$jv</version>:" "$root/clients/java/pom.xml" >"$out/flurry-client-$jv.pom"
	files+=("flurry-client-$jv.jar" "flurry-client-$jv-sources.jar" "flurry-client-$jv.pom")
else
	echo "release: no JDK (javac, jar): the Java client's jar left out; install a JDK 11 or later to include it" >&2
fi

cd "$out"
if command -v sha256sum >/dev/null 2>&1; then
	sha256sum "${files[@]}" >SHA256SUMS
else
	shasum -a 256 "${files[@]}" >SHA256SUMS # macOS
fi
echo "release: $version ($commit): ${#targets[@]} target(s), checksums in $out/SHA256SUMS" >&2
