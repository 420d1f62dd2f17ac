#!/usr/bin/env bash
# Runs recipe.sh against $SANDBOX_URL (default http://127.0.0.1:4010). Exit 77: curl or openssl is missing.
set -euo pipefail
cd "$(dirname "$0")"
for tool in curl openssl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "skip: $tool is not installed (Debian: apt-get install curl openssl)" >&2; exit 77; }
done
exec bash recipe.sh
