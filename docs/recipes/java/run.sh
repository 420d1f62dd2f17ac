#!/bin/sh
# Compiles and runs the Java recipe, a few JUnit 5 tests on the Java kit (clients/java, docs/clients.md#java), against
# the emulator at SANDBOX_URL (default http://127.0.0.1:4010; the first test starts one with SANDBOX_CLI, else the
# checkout's dist/service-sandbox.mjs, when nothing answers there), with nothing but a JDK (17+) and the JUnit console
# launcher jar (Debian: apt-get install default-jdk-headless junit5).
# The kit's jars (the client and the JUnit 5 extension): SANDBOX_KIT_JAR (a class path), else built from this
# checkout's clients/java into a temporary folder.
# Extra arguments go to the JUnit console launcher (e.g. --select-class example.AccountsTest).
# Exit codes: 0 passed, 1 failed, 77 toolchain missing (the recipes harness then skips).
set -eu
cd "$(dirname "$0")"

JUNIT_JAR=${JUNIT_JAR:-/usr/share/java/junit-platform-console-standalone.jar}
if ! command -v javac >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
  echo "java recipe: javac/java not found (install a JDK 17+, e.g. apt-get install default-jdk-headless)" >&2
  exit 77
fi
if [ ! -f "$JUNIT_JAR" ]; then
  echo "java recipe: $JUNIT_JAR not found (apt-get install junit5, or set JUNIT_JAR to junit-platform-console-standalone-*.jar)" >&2
  exit 77
fi

OUT=$(mktemp -d "${TMPDIR:-/tmp}/sandbox-java-recipe.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
trap 'exit 130' INT TERM

KIT_JAR=${SANDBOX_KIT_JAR:-}
if [ -z "$KIT_JAR" ]; then
  status=0
  BUILD_DIR="$OUT/kit" JUNIT_JAR="$JUNIT_JAR" ../../../clients/java/build.sh >/dev/null || status=$?
  [ "$status" = 0 ] || exit "$status" # 77 when the JDK is too old
  KIT_JAR="$OUT/kit/service-sandbox-client.jar:$OUT/kit/service-sandbox-junit5.jar"
fi

FAST="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto"
find src/test/java -name '*.java' > "$OUT/sources.txt"
# shellcheck disable=SC2046
javac $(for f in $FAST; do printf ' -J%s' "$f"; done) -d "$OUT/classes" -cp "$KIT_JAR:$JUNIT_JAR" --release 17 -Xlint:all -Werror @"$OUT/sources.txt"
cp src/test/resources/* "$OUT/classes/"

# The whole class path unless the arguments select tests (the launcher refuses both at once).
SCAN=--scan-class-path
for arg in "$@"; do
  case "$arg" in --select*) SCAN= ;; esac
done
[ -t 1 ] || set -- --disable-ansi-colors "$@"
status=0
# shellcheck disable=SC2086
java $FAST -jar "$JUNIT_JAR" \
  --class-path "$OUT/classes:$KIT_JAR" $SCAN \
  --exclude-engine=junit-vintage --disable-banner --details=tree --fail-if-no-tests "$@" || status=$?
exit "$status"
