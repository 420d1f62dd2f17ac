#!/bin/sh
# The Java kit (docs/clients.md#java), with nothing but a JDK 17+ (javac, jar) and, for its tests, JUnit's console
# launcher jar (Debian: apt-get install default-jdk-headless junit5):
#   clients/java/build.sh              the two jars of pom.xml's artifacts, as Maven would build them:
#                                      build/service-sandbox-client.jar (client/, the JDK only) and
#                                      build/service-sandbox-junit5.jar (junit5/, the extension: JUnit Jupiter 5.9+)
#                                      (BUILD_DIR to put them elsewhere)
#   clients/java/build.sh test [ARGS]  the jars, then the suite (src/test: unit tests and scenarios) against SANDBOX_URL,
#                                      or a server it starts with SANDBOX_CLI / the checkout's dist/service-sandbox.mjs;
#                                      ARGS go to the JUnit console launcher (e.g. --select-class dev.servicesandbox.scenarios.PayoutTest)
#   clients/java/build.sh javadoc      the API docs of both artifacts (build/javadoc) with every doclint check, from
#                                      the sources alone (no jar built): exits 1 on any error or warning
# `mvn -o package` builds the same jars where Maven's plugins are in the local repository (docs/clients.md#java).
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
if [ "${1-}" = javadoc ]; then
  rm -rf "$BUILD_DIR/javadoc"
  status=0
  # shellcheck disable=SC2086
  javadoc $JFAST -quiet -Xdoclint:all --release 17 -d "$BUILD_DIR/javadoc" -cp "$JUNIT_JAR" \
    -sourcepath client/src/main/java:junit5/src/main/java -subpackages dev.servicesandbox > "$BUILD_DIR/javadoc.log" 2>&1 || status=$?
  cat "$BUILD_DIR/javadoc.log"
  if [ "$status" != 0 ] || grep -q -E '(warning|error):' "$BUILD_DIR/javadoc.log"; then
    echo "java kit: javadoc is not clean" >&2
    exit 1
  fi
  echo "java kit: javadoc clean: $BUILD_DIR/javadoc"
  exit 0
fi
rm -rf "$BUILD_DIR/classes" "$BUILD_DIR/junit5-classes" "$BUILD_DIR/test-classes"
CLIENT_JAR="$BUILD_DIR/service-sandbox-client.jar"
JUNIT5_JAR="$BUILD_DIR/service-sandbox-junit5.jar"
find client/src/main/java -name '*.java' > "$BUILD_DIR/sources.txt"
# shellcheck disable=SC2086
javac $JFAST -d "$BUILD_DIR/classes" --release 17 -Xlint:all -Werror @"$BUILD_DIR/sources.txt"
# shellcheck disable=SC2086
jar $JFAST --create --file "$CLIENT_JAR" -C "$BUILD_DIR/classes" .
find junit5/src/main/java -name '*.java' > "$BUILD_DIR/junit5-sources.txt"
# shellcheck disable=SC2086
javac $JFAST -d "$BUILD_DIR/junit5-classes" -cp "$CLIENT_JAR:$JUNIT_JAR" --release 17 -Xlint:all -Werror @"$BUILD_DIR/junit5-sources.txt"
# shellcheck disable=SC2086
jar $JFAST --create --file "$JUNIT5_JAR" -C "$BUILD_DIR/junit5-classes" .
echo "java kit: $CLIENT_JAR $JUNIT5_JAR"

[ "${1-}" = test ] || exit 0
shift

find src/test/java -name '*.java' > "$BUILD_DIR/test-sources.txt"
# shellcheck disable=SC2086
javac $JFAST -d "$BUILD_DIR/test-classes" -cp "$CLIENT_JAR:$JUNIT5_JAR:$JUNIT_JAR" --release 17 -Xlint:all -Werror @"$BUILD_DIR/test-sources.txt"
cp src/test/resources/* "$BUILD_DIR/test-classes/"

SCAN=--scan-class-path
for arg in "$@"; do
  case "$arg" in --select*) SCAN= ;; esac
done
[ -t 1 ] || set -- --disable-ansi-colors "$@"
# The JUnit 4 (vintage) engine on the Debian jar's class path has nothing to run.
status=0
# shellcheck disable=SC2086
java $FAST -Dsandbox.vectors="$(cd .. && pwd)/signing-vectors.json" -jar "$JUNIT_JAR" \
  --class-path "$BUILD_DIR/test-classes:$CLIENT_JAR:$JUNIT5_JAR" $SCAN \
  --exclude-engine=junit-vintage --disable-banner --details=tree --fail-if-no-tests "$@" || status=$?
exit "$status"
