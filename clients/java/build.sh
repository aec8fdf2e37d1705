#!/usr/bin/env bash
# Builds and tests the Java client with the JDK alone (javac, jar, java): no
# Maven, no network.
#
#   clients/java/build.sh test        compile, then run the tests (unit, and against
#                                     flurry serve, built with go or FLURRY_BIN)
#   clients/java/build.sh jar         target/flurry-client-<version>.jar and
#                                     target/flurry-client-<version>-sources.jar
#   clients/java/build.sh test -run failover    only the tests whose names match
#   clients/java/build.sh bench [rounds] [IDs] [threads]   64 threads (default) against flurry serve: IDs/s and
#                                     the longest waits, one server and through a SIGKILL
#
# The version is pom.xml's. Without javac the tests are skipped with a message,
# or fail with FLURRY_TEST_REQUIRE=1 (as in CI).
set -euo pipefail
cd "$(dirname "$0")"

what=${1:-test}
shift || true

if ! command -v javac >/dev/null 2>&1 || ! command -v jar >/dev/null 2>&1; then
	msg="java client: javac or jar not found; install a JDK 11 or later (Debian: apt-get install default-jdk-headless)"
	if [ "${FLURRY_TEST_REQUIRE:-}" = 1 ]; then
		echo "$msg; FLURRY_TEST_REQUIRE=1 makes this a failure" >&2
		exit 1
	fi
	echo "$msg; skipped" >&2
	exit 0
fi

# FLURRY_JAVA_VERSION names the jar as a release does (scripts/release.sh);
# otherwise pom.xml's version.
version=${FLURRY_JAVA_VERSION:-$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' pom.xml | head -1)}
[ -n "$version" ] || { echo "build.sh: no <version> in pom.xml" >&2; exit 1; }
out=target
rm -rf "$out/classes" "$out/test-classes"
mkdir -p "$out/classes" "$out/test-classes"
javac --release 11 -Xlint:all -Werror -encoding UTF-8 -d "$out/classes" $(find src/main/java -name '*.java')

case "$what" in
test | bench)
	javac --release 11 -Xlint:all -Werror -encoding UTF-8 -cp "$out/classes" -d "$out/test-classes" $(find src/test/java -name '*.java')
	main=TestRunner
	[ "$what" = bench ] && main=Bench
	exec java -cp "$out/classes:$out/test-classes" "io.github.flurryid.flurry.client.$main" "$@"
	;;
jar)
	jar="$out/flurry-client-$version.jar"
	src="$out/flurry-client-$version-sources.jar"
	mkdir -p "$out/classes/META-INF/maven/io.github.flurryid/flurry-client"
	cp pom.xml "$out/classes/META-INF/maven/io.github.flurryid/flurry-client/pom.xml"
	printf 'Automatic-Module-Name: io.github.flurryid.flurry.client\nImplementation-Title: flurry-client\nImplementation-Version: %s\n' "$version" > "$out/manifest.txt"
	rm -f "$jar" "$src"
	jar --create --file "$jar" --manifest "$out/manifest.txt" -C "$out/classes" .
	jar --create --file "$src" -C src/main/java .
	echo "$jar"
	echo "$src"
	;;
*)
	echo "build.sh: unknown step $what; use test, bench or jar" >&2
	exit 2
	;;
esac
