"""The recipe's only glue: the Python kit's pytest plugin (clients/python; guide: docs/clients.md#python).

Installed (python3 -m pip install ./clients/python, or the venv command of docs/clients.md#python), the kit's
entry point loads the plugin; in a checkout without it, the kit's sources are used from clients/python/src.
The plugin's fixtures: sandbox (a labelled session per test, ended after it), sandbox_factory (more of them),
webhook_receiver (the session's webhooks through the kit's own forwarding, no CLI process), sandbox_server, sandbox_label.
"""

import os
import sys

try:
    import service_sandbox  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "clients", "python", "src"))

pytest_plugins = ["service_sandbox.plugin"]
