#!/bin/sh
# Runs the Go recipe against the emulator at SANDBOX_URL (default http://127.0.0.1:4010; sandboxtest.Main starts
# one with SANDBOX_CLI, default the checkout's dist/service-sandbox.mjs, when nothing answers there; see README.md) with nothing but a
# Go toolchain (1.19+; Debian: apt-get install golang-go). The kit clients/go comes from this checkout (a replace
# directive in go.mod) and uses the standard library only: nothing is downloaded.
# Extra arguments go to `go test` (e.g. -run Isolation -v).
# Exit codes: 0 passed, 1 failed, 77 toolchain missing (the recipes harness then skips).
set -eu
cd "$(dirname "$0")"

if ! command -v go >/dev/null 2>&1; then
  echo "go recipe: go not found (install Go 1.19+, e.g. apt-get install golang-go)" >&2
  exit 77
fi

# No module is downloaded (go.mod requires nothing): make that explicit so a bare machine never tries.
export GOFLAGS="${GOFLAGS:--mod=mod}" GOPROXY="${GOPROXY:-off}" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
# The build cache must be writable; without a usable HOME (CI users, containers) keep it under /tmp.
if ! mkdir -p "$(go env GOCACHE 2>/dev/null || echo /nonexistent/x)" 2>/dev/null; then
  export GOCACHE="${TMPDIR:-/tmp}/service-sandbox-recipe-go-cache"
fi

# -parallel: the tests wait on HTTP, not on the CPU, so run more at once than there are cores.
go test -count=1 -parallel 8 "$@" ./...
