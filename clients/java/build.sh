#!/bin/sh
# The Java kit (docs/clients.md#java), with nothing but a JDK 17+ (javac, jar) and, for its tests, JUnit's console
# launcher jar (Debian: apt-get install default-jdk-headless junit5):
#   clients/java/build.sh              the jar: build/service-sandbox-client.jar (BUILD_DIR to put it elsewhere)
#   clients/java/build.sh test [ARGS]  the jar, then the scenario suite (src/test) against SANDBOX_URL, or a server it
#                                      starts with SANDBOX_CLI / the checkout's dist/service-sandbox.mjs; ARGS go to
#                                      the JUnit console launcher (e.g. --select-class dev.servicesandbox.scenarios.PayoutTest)
# The jar's dev.servicesandbox.junit package needs JUnit Jupiter 5.9+ on the class path; the rest needs only the JDK.
# Exit codes: 0 built (and passed), 1 failed, 77 toolchain missing (test/kits/java.test.ts then skips).
set -eu
cd "$(dirname "$0")"

JUNIT_JAR=${JUNIT_JAR:-/usr/share/java/junit-platform-console-standalone.jar}
BUILD_DIR=${BUILD_DIR:-build}
if ! command -v javac >/dev/null 2>&1 || ! command -v jar >/dev/null 2>&1; then
  echo "java kit: javac/jar not found (install a JDK 17+, e.g. apt-get install default-jdk-headless)" >&2
  exit 77
fi
# "javac 17.0.15" -> 17 (a JDK 1.8 says "javac 1.8.0_...": 1)
JAVAC_MAJOR=$(javac -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p')
if [ "${JAVAC_MAJOR:-0}" -lt 17 ]; then
  echo "java kit: needs JDK 17+, found: $(javac -version 2>&1)" >&2
  exit 77
fi
if [ ! -f "$JUNIT_JAR" ]; then
  echo "java kit: $JUNIT_JAR not found (apt-get install junit5, or set JUNIT_JAR to junit-platform-console-standalone-*.jar)" >&2
  exit 77
fi

# C1 only and the serial GC: they halve javac's time on a short run (docs/recipes/java/run.sh does the same).
FAST="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto"
JFAST=$(for f in $FAST; do printf ' -J%s' "$f"; done)
mkdir -p "$BUILD_DIR"
rm -rf "$BUILD_DIR/classes" "$BUILD_DIR/test-classes"
find src/main/java -name '*.java' > "$BUILD_DIR/sources.txt"
# shellcheck disable=SC2086
javac $JFAST -d "$BUILD_DIR/classes" -cp "$JUNIT_JAR" --release 17 -Xlint:all -Werror @"$BUILD_DIR/sources.txt"
# shellcheck disable=SC2086
jar $JFAST --create --file "$BUILD_DIR/service-sandbox-client.jar" -C "$BUILD_DIR/classes" .
echo "java kit: $BUILD_DIR/service-sandbox-client.jar"

[ "${1-}" = test ] || exit 0
shift

find src/test/java -name '*.java' > "$BUILD_DIR/test-sources.txt"
# shellcheck disable=SC2086
javac $JFAST -d "$BUILD_DIR/test-classes" -cp "$BUILD_DIR/service-sandbox-client.jar:$JUNIT_JAR" --release 17 -Xlint:all -Werror @"$BUILD_DIR/test-sources.txt"
cp src/test/resources/* "$BUILD_DIR/test-classes/"

SCAN=--scan-class-path
for arg in "$@"; do
  case "$arg" in --select*) SCAN= ;; esac
done
[ -t 1 ] || set -- --disable-ansi-colors "$@"
# The JUnit 4 (vintage) engine on the Debian jar's class path has nothing to run.
status=0
# shellcheck disable=SC2086
java $FAST -jar "$JUNIT_JAR" \
  --class-path "$BUILD_DIR/test-classes:$BUILD_DIR/service-sandbox-client.jar" $SCAN \
  --exclude-engine=junit-vintage --disable-banner --details=tree --fail-if-no-tests "$@" || status=$?
exit "$status"
