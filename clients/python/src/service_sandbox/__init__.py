"""service-sandbox for Python: client, signing, sessions, settle, control plane, webhook receiver and a pytest
plugin, standard library only (docs/clients.md#python)."""

from . import models
from .client import DEFAULT_URL, START_CLOCK, Response, SandboxError, Server, Session, check_model, http_send, raw_body
from .process import Listener, sandbox_cli, start_server, stop_process
from .receiver import WebhookReceiver
from .signing import WEBHOOK_TOLERANCE_MS, hmac_headers, payout_headers, sign, signature_headers, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_URL",
    "START_CLOCK",
    "WEBHOOK_TOLERANCE_MS",
    "Listener",
    "Response",
    "SandboxError",
    "Server",
    "Session",
    "WebhookReceiver",
    "check_model",
    "hmac_headers",
    "http_send",
    "models",
    "payout_headers",
    "raw_body",
    "sandbox_cli",
    "sign",
    "signature_headers",
    "start_server",
    "stop_process",
    "verify_webhook",
]
