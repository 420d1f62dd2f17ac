"""service-sandbox for Python: client, signing, sessions, settle, control plane, webhook forwarding and receiver,
and a pytest plugin, standard library only (docs/clients.md#python)."""

from . import models
from ._version import __version__
from .client import DEFAULT_URL, START_CLOCK, Response, Server, Session, VersionMismatchWarning, check_model, http_send, raw_body
from .errors import ForwardingError, NotSettledError, SandboxConnectionError, SandboxError, SandboxHTTPError, SandboxTargetError, WebhookVerificationError
from .forwarding import WebhookForwarder
from .process import sandbox_cli, start_server, stop_process
from .receiver import WebhookReceiver, read_request_body
from .signing import (
    WEBHOOK_REASONS,
    WEBHOOK_TOLERANCE_MS,
    WebhookVerification,
    hmac_headers,
    is_payout_target,
    payout_headers,
    sign,
    signature_headers,
    verify_webhook,
    verify_webhook_or_raise,
)

__all__ = [
    "DEFAULT_URL",
    "START_CLOCK",
    "WEBHOOK_REASONS",
    "WEBHOOK_TOLERANCE_MS",
    "ForwardingError",
    "NotSettledError",
    "Response",
    "SandboxConnectionError",
    "SandboxError",
    "SandboxHTTPError",
    "SandboxTargetError",
    "Server",
    "Session",
    "VersionMismatchWarning",
    "WebhookForwarder",
    "WebhookReceiver",
    "WebhookVerification",
    "WebhookVerificationError",
    "__version__",
    "check_model",
    "hmac_headers",
    "http_send",
    "is_payout_target",
    "models",
    "payout_headers",
    "raw_body",
    "read_request_body",
    "sandbox_cli",
    "sign",
    "signature_headers",
    "start_server",
    "stop_process",
    "verify_webhook",
    "verify_webhook_or_raise",
]
