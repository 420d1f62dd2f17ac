#!/bin/sh
# Compiles and runs the Java recipe against the emulator at SANDBOX_URL (default http://127.0.0.1:4010; the
# first test starts one with SANDBOX_CLI, default ../../../dist/service-sandbox.mjs, when nothing answers there;
# see README.md),
# with nothing but a JDK (17+) and the JUnit console launcher jar (Debian: apt-get install junit5).
# Extra arguments go to the JUnit console launcher (e.g. --select-class example.AccountsTest).
# Exit codes: 0 passed, 1 failed, 77 toolchain missing (the recipes harness then skips).
set -eu
cd "$(dirname "$0")"

JUNIT_JAR=${JUNIT_JAR:-/usr/share/java/junit-platform-console-standalone.jar}
if ! command -v javac >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
  echo "java recipe: javac/java not found (install a JDK 17+, e.g. apt-get install openjdk-17-jdk-headless)" >&2
  exit 77
fi
# "javac 17.0.15" -> 17 (a JDK 1.8 says "javac 1.8.0_...": 1)
JAVAC_MAJOR=$(javac -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p')
if [ "${JAVAC_MAJOR:-0}" -lt 17 ]; then
  echo "java recipe: needs JDK 17+, found: $(javac -version 2>&1)" >&2
  exit 77
fi
if [ ! -f "$JUNIT_JAR" ]; then
  echo "java recipe: $JUNIT_JAR not found (apt-get install junit5, or set JUNIT_JAR to junit-platform-console-standalone-*.jar)" >&2
  exit 77
fi

OUT=$(mktemp -d "${TMPDIR:-/tmp}/sandbox-java-recipe.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
trap 'exit 130' INT TERM

# One javac call for every source; junit-platform.properties goes next to the classes. The JVM flags
# (here and below, C1 compiler only and the serial GC) favour start-up: they halve javac's time on a short run.
FAST="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto"
find src/test/java -name '*.java' > "$OUT/sources.txt"
javac $(for f in $FAST; do printf ' -J%s' "$f"; done) -d "$OUT/classes" -cp "$JUNIT_JAR" --release 17 -Xlint:all -Werror @"$OUT/sources.txt"
cp src/test/resources/* "$OUT/classes/"

# The whole class path unless the arguments select tests (the launcher refuses both at once).
SCAN=--scan-class-path
for arg in "$@"; do
  case "$arg" in --select*) SCAN= ;; esac
done
# No colours in a log file; the JUnit 4 (vintage) engine on the Debian jar's class path has nothing to run.
[ -t 1 ] || set -- --disable-ansi-colors "$@"
status=0
java $FAST -jar "$JUNIT_JAR" \
  --class-path "$OUT/classes" $SCAN \
  --exclude-engine=junit-vintage --disable-banner --details=tree --fail-if-no-tests "$@" || status=$?
exit "$status"
