#!/usr/bin/env bash
# The emulator as a podman service container, with the Python and Go kits' forwarding suites against it and no
# Node on the test side (docs/ci.md#checked-with-podman).
#
# Usage, from anywhere in the checkout (as a user that can run podman; needs python3 with pytest and pytest-xdist,
# and go):   scripts/podman-service.sh [RUNS]        (RUNS defaults to 5)
#
# Builds the Dockerfile with podman (FROM node:20-bookworm-slim: on machines without a registry,
# /work/shared/tools/container-check makes that base image first), runs the image as a service container on a free
# host port, waits for GET /_emulator/health over HTTP (podman without systemd never runs a HEALTHCHECK), then RUNS
# times: the Python kit's forwarding tests with `pytest -n 4` and the Go kit's forwarding suite (t.Parallel), both
# with SANDBOX_URL at the container and a PATH that holds python3, go and git only (`command -v node` must fail
# there). One line per run, then "N passed, N failed"; exit 1 on any failure, 77 when the base image is missing.
# The built image (localhost/service-sandbox-podman:latest) is kept so the next run's build is a cache hit; the
# container is always removed.
#
# Environment: PYTHON (default /usr/bin/python3), GO (default go), PODMAN_RUNTIME (default runc, as container-check).
set -uo pipefail

runs=${1:-5}
case "$runs" in '' | *[!0-9]* | 0) echo "usage: $0 [RUNS>0]" >&2; exit 2 ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
image=localhost/service-sandbox-podman:latest
name=service-sandbox-podman-$$
python=${PYTHON:-/usr/bin/python3}
gobin=$(command -v "${GO:-go}" || true)
work=$(mktemp -d)
pm() { podman --runtime "${PODMAN_RUNTIME:-runc}" "$@"; }
say() { printf '%s\n' "$*"; }
cleanup() { pm rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

command -v podman >/dev/null || { say "podman-service: no podman on PATH"; exit 77; }
if ! pm image exists localhost/node-base:20; then
  say "podman-service: no local base image localhost/node-base:20 (node:20-bookworm-slim):"
  say "  run /work/shared/tools/container-check first (from the project root, as root), then this script again"
  exit 77
fi
[ -x "$python" ] && "$python" -c 'import pytest, xdist' 2>/dev/null || { say "podman-service: $python has no pytest and pytest-xdist"; exit 77; }
[ -n "$gobin" ] || { say "podman-service: no go on PATH"; exit 77; }

# Another engineer may be building the same Dockerfile (container-check does): wait for that build to end, so the
# two do not fight over the same layers on a loaded machine, and ours reuses what it cached.
other_builds() {
  local pid
  for pid in $(pgrep -x podman 2>/dev/null); do
    [ "$pid" = "$$" ] && continue
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qw build || continue
    cmp -s "/proc/$pid/cwd/Dockerfile" "$root/Dockerfile" 2>/dev/null && printf '%s ' "$pid"
  done
}
waited=0
while [ -n "$(other_builds)" ]; do
  [ "$waited" = 0 ] && say "waiting for another podman build of this Dockerfile (pid $(other_builds)) to end..."
  waited=$((waited + 5))
  sleep 5
done

t0=$(date +%s)
say "building $image with podman..."
if ! (cd "$root" && pm build --format docker --pull=never --network host -t "$image" .) >"$work/build.log" 2>&1; then
  tail -n 30 "$work/build.log"
  say "podman-service: podman build failed"
  exit 1
fi
say "built in $(($(date +%s) - t0)) s"

# Port 0 for podman: the engine picks a free host port, read back with `podman port`.
if ! pm run -d --name "$name" -p 127.0.0.1::4010 "$image" >"$work/run.log" 2>&1; then
  cat "$work/run.log"
  say "podman-service: podman run failed"
  exit 1
fi
port=$(pm port "$name" 4010/tcp | sed -n 's/.*:\([0-9][0-9]*\)$/\1/p' | head -n 1)
[ -n "$port" ] || { say "podman-service: no host port for the container"; exit 1; }
url=http://127.0.0.1:$port
ok=""
for _ in $(seq 1 120); do
  if curl -fsS "$url/_emulator/health" >/dev/null 2>&1; then ok=1; break; fi
  sleep 1
done
if [ -z "$ok" ]; then
  pm logs "$name" 2>&1 | tail -n 30
  say "podman-service: the container did not answer $url/_emulator/health within 120 s"
  exit 1
fi
say "service container $name answers at $url"

# The test side's PATH: python3, go and git only, so nothing on it can start node.
bin=$work/bin
mkdir -p "$bin" "$work/gocache" "$work/gopath"
ln -s "$python" "$bin/python3"
ln -s "$gobin" "$bin/go"
command -v git >/dev/null && ln -s "$(command -v git)" "$bin/git"
if PATH=$bin /bin/bash -c 'command -v node' >/dev/null 2>&1; then
  say "podman-service: node is reachable on the test side's PATH"
  exit 1
fi
say "test side PATH=$bin ($(ls "$bin" | tr '\n' ' ')): command -v node fails"

# No Node, so the Python kit's plugin and the Go kit's Main must use the server at SANDBOX_URL (they start one only
# when nothing answers there); CGO_ENABLED=0 because go1.19 needs a C compiler for cgo, and none is on this PATH.
test_env=(env -i "PATH=$bin" "HOME=$work" "SANDBOX_URL=$url" "LANG=C.UTF-8")
python_cmd=("${test_env[@]}" "PYTHONPATH=$root/clients/python/src" "PYTHONDONTWRITEBYTECODE=1"
  python3 -m pytest -n 4 -p service_sandbox.plugin -p no:cacheprovider -q --tb=short
  "$root/clients/python/tests/test_forwarding.py")
go_cmd=("${test_env[@]}" "GOCACHE=$work/gocache" "GOPATH=$work/gopath" "GOFLAGS=-mod=mod" "GOPROXY=off" "CGO_ENABLED=0"
  go test -count=1 -run Forwarding ./scenarios/)

passed=0
failed=0
for i in $(seq 1 "$runs"); do
  started=$(date +%s.%N)
  (cd "$root/clients/python" && "${python_cmd[@]}") >"$work/python.log" 2>&1
  py=$?
  (cd "$root/clients/go" && "${go_cmd[@]}") >"$work/go.log" 2>&1
  gocode=$?
  secs=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  pysum=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$work/python.log" | tail -n 1 | tr -d '=' | sed 's/^ *//; s/ *$//')
  gosum=$(grep -E '^(ok|FAIL|---)' "$work/go.log" | tail -n 1)
  if [ "$py" = 0 ] && [ "$gocode" = 0 ]; then
    passed=$((passed + 1))
    say "run $i/$runs: passed in $secs s (python pytest -n 4: ${pysum:-?}; go: ${gosum:-?})"
  else
    failed=$((failed + 1))
    say "run $i/$runs: FAILED in $secs s (python exit $py: ${pysum:-?}; go exit $gocode: ${gosum:-?})"
    [ "$py" = 0 ] || tail -n 40 "$work/python.log"
    [ "$gocode" = 0 ] || tail -n 40 "$work/go.log"
  fi
done
say "$passed passed, $failed failed"
[ "$failed" = 0 ]
