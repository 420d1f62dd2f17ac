"""The kit's exceptions: one root, ``SandboxError`` (docs/clients.md#python)."""

from __future__ import annotations

from typing import Any, Optional


class SandboxError(Exception):
    """The root of every error the kit raises about the emulator (a call that did not answer as it must, a
    forwarding that cannot go on, a server that cannot start). Misuse of the kit's API raises TypeError or
    ValueError instead."""


class SandboxHTTPError(SandboxError):
    """A control-plane call answered with another status than the one it must: ``status``, the error body's
    ``error_code`` and ``message`` (docs/errors.md), and the raw ``body``."""

    def __init__(self, what: str, status: int, body: bytes, expected: Optional[int] = None) -> None:
        self.what = what
        self.status = status
        self.body = body
        self.expected = expected
        parsed: Any = None
        try:
            import json

            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        self.error_code: Optional[str] = parsed.get("errorCode") if isinstance(parsed, dict) else None
        self.message: Optional[str] = parsed.get("message") if isinstance(parsed, dict) else None
        wanted = f"expected {expected}, " if expected is not None else ""
        detail = f"{self.error_code}: {self.message}" if self.error_code else body[:300].decode(errors="replace")
        super().__init__(f"{what}: {wanted}got {status} ({detail})")


class NotSettledError(SandboxError):
    """``settle`` answered before everything due was done (docs/control-plane.md#settle): ``report`` is the
    SettleReport, with what still waits."""

    def __init__(self, timeout_ms: int, report: Any) -> None:
        self.timeout_ms = timeout_ms
        self.report = report
        super().__init__(f"not settled within {timeout_ms} ms: {report}")


class WebhookVerificationError(SandboxError):
    """A delivery that is not genuine (``verify_webhook_or_raise``): ``reason`` is one of WEBHOOK_REASONS."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}")


class ForwardingError(SandboxError):
    """The emulator refused webhook forwarding (an unknown or ended session, a wrong admin token), or the stream
    did not become ready (docs/webhooks.md#listen)."""


class SandboxConnectionError(SandboxError, ConnectionError):
    """The emulator could not be reached, or the connection failed before its answer came: refused, reset, closed
    without an answer, no answer in time. The original error (ConnectionRefusedError, TimeoutError,
    http.client.RemoteDisconnected, ...) is its ``__cause__``. A ConnectionError too, so code that catches OSError
    still catches it. A POST that failed this way may have acted on the server: the kit never sends it again
    (docs/clients.md#connections)."""


class SandboxTargetError(SandboxError, ValueError):
    """A URL or path the kit cannot send (a lone surrogate in it, a host that is not ASCII): nothing was sent. A
    ValueError too, as other misuse of the kit's API."""
