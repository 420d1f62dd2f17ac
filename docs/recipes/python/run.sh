#!/usr/bin/env bash
# Runs the pytest suite in this folder, 4 tests at a time, against $SANDBOX_URL (default http://127.0.0.1:4010;
# when nothing answers there, the kit starts one with SANDBOX_CLI, default the checkout's dist/service-sandbox.mjs
# or `service-sandbox` on PATH; webhooks come through the kit's own forwarding, no CLI process). SANDBOX_LABEL names the run. Extra arguments go to pytest.
# The fixtures are the Python kit's pytest plugin (clients/python, loaded by conftest.py; docs/clients.md#python).
# Exit 77: no python3 with pytest and pytest-xdist.
set -euo pipefail
cd "$(dirname "$0")"
python=
# $PYTHON first, then the python3 on PATH, then the system's (a pyenv or venv python3 may lack pytest).
for candidate in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import pytest, xdist' >/dev/null 2>&1; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "skip: no python3 with pytest and pytest-xdist (Debian: apt-get install python3-pytest python3-pytest-xdist; or pip install pytest pytest-xdist)" >&2
  exit 77
fi
# No __pycache__ or .pytest_cache left in the source tree.
export PYTHONDONTWRITEBYTECODE=1
exec "$python" -m pytest -p no:cacheprovider -n "${PYTEST_WORKERS:-4}" -q --tb=short "$@"
