#!/usr/bin/env bash
# Build flurry's container image for this machine's architecture into the local
# image store, tagged flurry:<version>, from deploy/container/Dockerfile. Nothing is
# pulled: the image is FROM scratch, and everything in it comes from here: the
# static release binary (scripts/release.sh: CGO_ENABLED=0, -tags flurry_full),
# this machine's CA bundle (for TLS to a database, Redis or etcd) and an empty data
# directory. Needs bash, git, go and one of podman, buildah or docker.
#
#   deploy/container/build.sh                        # version from git describe (as release.sh),
#                                                    # e.g. flurry:v0.1.0-rc.3-g1a2b3c4
#   deploy/container/build.sh --version v0.4.0       # flurry:v0.4.0
#   deploy/container/build.sh --binary dist/flurry-v0.4.0-linux-amd64 --version v0.4.0
#   deploy/container/build.sh --engine buildah       # podman (default when found), buildah, docker
#   deploy/container/build.sh --context /tmp/ctx     # keep the build context there
#
# It prints the tag it built on standard output (and nothing else there), so:
#   tag=$(deploy/container/build.sh)
#   podman run -d --name flurry --ulimit nofile=16384:16384 --ulimit nproc=4096:4096 \
#       --read-only -p 8080:8080 -v flurry-data:/var/lib/flurry --stop-timeout 45 "$tag"
# (the limits: podman's defaults need CAP_SYS_RESOURCE, docs/operations.md).
#
# The image test (deploy/container/image_test.go) runs this script, then the image.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=""
binary=""
engine=""
ctx=""
ca=${FLURRY_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--version) version=$2; shift 2 ;;
	--binary) binary=$2; shift 2 ;;
	--engine) engine=$2; shift 2 ;;
	--context) ctx=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

if [ -z "$engine" ]; then
	for e in podman buildah docker; do
		if command -v "$e" >/dev/null 2>&1; then engine=$e; break; fi
	done
fi
case "$engine" in
podman | buildah | docker) command -v "$engine" >/dev/null 2>&1 || { echo "build.sh: $engine not installed" >&2; exit 1; } ;;
"") echo "build.sh: no podman, buildah or docker here (Debian: apt-get install podman)" >&2; exit 1 ;;
*) echo "build.sh: --engine $engine: one of podman, buildah, docker" >&2; exit 2 ;;
esac
if [ ! -r "$ca" ]; then
	echo "build.sh: no CA bundle at $ca (Debian: apt-get install ca-certificates; or FLURRY_CA_BUNDLE=file)" >&2
	exit 1
fi

arch=$(go env GOARCH)
if [ -z "$ctx" ]; then
	ctx=$(mktemp -d)
	trap 'rm -rf "$ctx"' EXIT
fi
mkdir -p "$ctx"
if [ -z "$binary" ]; then
	args=(--target "linux/$arch" --out "$ctx")
	[ -n "$version" ] && args+=(--version "$version")
	"$root/scripts/release.sh" "${args[@]}" >&2
	binary=$(ls "$ctx"/flurry-*-linux-"$arch" | head -1)
	found=$(basename "$binary")
	found=${found#flurry-}
	version=${found%-linux-"$arch"}
else
	[ -n "$version" ] || { echo "build.sh: --binary needs --version" >&2; exit 2; }
	cp "$binary" "$ctx/flurry-$version-linux-$arch"
fi
mkdir -p "$ctx/volume"
cp "$ca" "$ctx/ca-certificates.crt"

tag="flurry:$version"
build=(--build-arg "VERSION=$version" --build-arg TARGETOS=linux --build-arg "TARGETARCH=$arch"
	-f "$here/Dockerfile" -t "$tag")
echo "build.sh: $engine: $tag from $here/Dockerfile" >&2
case "$engine" in
# The docker format: the OCI image config has no HEALTHCHECK.
podman) podman build --quiet --layers=false --format docker "${build[@]}" "$ctx" >&2 ;;
buildah) buildah bud --quiet --layers=false --format docker "${build[@]}" "$ctx" >&2 ;;
docker) docker build --quiet "${build[@]}" "$ctx" >&2 ;;
esac
echo "build.sh: built $tag" >&2
echo "$tag"
