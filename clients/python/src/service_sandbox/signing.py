"""Signing and verification, standard library only (docs/authentication.md, docs/webhooks.md).

Both request variants sign one canonical string: apiKey + timestamp + METHOD + request target (path and query
exactly as sent, a session's /_sessions/{id} prefix included) + raw body, with no separators, keyed with the
key's secret. HMAC mode: epoch-millisecond timestamp, bare lower-case hex. The payout variant (a path that starts
with /v1/payout-origination/ after an optional session prefix): RFC 3339 UTC timestamp with milliseconds,
``sha256=<hex>``. clients/signing-vectors.json holds the cases every kit checks.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import Message
from typing import Dict, Mapping, Optional, Union

from .errors import WebhookVerificationError

#: Webhook deliveries older or newer than this (receiver's real clock, inclusive) are refused (docs/webhooks.md).
WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000
PAYOUT_PREFIX = "/v1/payout-origination/"

#: The reason codes of a refused delivery, in the order they are checked (clients/signing-vectors.json).
MISSING_HEADER = "MISSING_HEADER"
MALFORMED_TIMESTAMP = "MALFORMED_TIMESTAMP"
TIMESTAMP_OUT_OF_TOLERANCE = "TIMESTAMP_OUT_OF_TOLERANCE"
MALFORMED_SIGNATURE = "MALFORMED_SIGNATURE"
SIGNATURE_MISMATCH = "SIGNATURE_MISMATCH"
WEBHOOK_REASONS = (MISSING_HEADER, MALFORMED_TIMESTAMP, TIMESTAMP_OUT_OF_TOLERANCE, MALFORMED_SIGNATURE, SIGNATURE_MISMATCH)

Part = Union[str, bytes, bytearray, int, None]
#: Request headers as any mapping, or http.server's / http.client's (an email.message.Message).
Headers = Union[Mapping[str, str], Message]
_SESSION_PREFIX = re.compile(r"^/_sessions/[^/]+(?=/)")
# Whole-string matches: Python's `$` also matches before a final line break, and int() of 4,300 digits or more
# raises; the reference accepts 1 to 16 ASCII digits and exactly 64 hex digits, nothing after either
# (docs/clients.md#receivers-one-rule-set).
_TIMESTAMP = re.compile(r"[0-9]{1,16}")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


def _bytes(part: Part) -> bytes:
    if part is None:
        return b""
    return bytes(part) if isinstance(part, (bytes, bytearray)) else str(part).encode()


def sign(secret: Union[str, bytes], *parts: Part) -> str:
    """Lower-case hex HMAC-SHA256 of the parts concatenated with no separator (str as UTF-8, bytes as is)."""
    return hmac.new(_bytes(secret), b"".join(_bytes(part) for part in parts), hashlib.sha256).hexdigest()


def is_payout_target(target: str) -> bool:
    """Whether a request target is signed with the payout variant: its path, after an optional
    /_sessions/{id} prefix, starts with /v1/payout-origination/."""
    path = target.split("?", 1)[0]
    return _SESSION_PREFIX.sub("", path, count=1).startswith(PAYOUT_PREFIX)


def _now_ms() -> int:
    return int(time.time() * 1000)


def hmac_headers(api_key: str, secret: str, programme_id: str, method: str, target: str, body: Part = b"", user_id: Optional[str] = None, timestamp: Optional[int] = None) -> Dict[str, str]:
    """The X-Service-* headers of an HMAC-mode request (docs/authentication.md#hmac-headers-server-to-server);
    ``timestamp`` in epoch milliseconds (default: now)."""
    ts = str(timestamp if timestamp is not None else _now_ms())
    headers = {
        "X-Service-Api-Key": api_key,
        "X-Service-Timestamp": ts,
        "X-Service-Program-Id": programme_id,
        "X-Service-Signature": sign(secret, api_key, ts, method.upper(), target, body),
    }
    if user_id:
        headers["X-Service-User-Id"] = user_id
    return headers


def rfc3339_ms(epoch_ms: int) -> str:
    """2026-03-01T12:00:00.123Z: the payout variant's timestamp."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def payout_headers(api_key: str, secret: str, programme_id: str, target: str, body: Part, user_id: Optional[str] = None, timestamp: Union[str, int, None] = None) -> Dict[str, str]:
    """The headers of the payout variant (docs/payouts.md#signing-the-payout-variant): RFC 3339 timestamp with
    milliseconds, ``sha256=`` signature over the same canonical string; the programme and user headers are not
    signed. ``timestamp``: the RFC 3339 text, or epoch milliseconds (default: now)."""
    ts = timestamp if isinstance(timestamp, str) else rfc3339_ms(timestamp if timestamp is not None else _now_ms())
    headers = {
        "X-Service-Api-Key": api_key,
        "X-Service-Timestamp": ts,
        "X-Service-Program-Id": programme_id,
        "X-Service-Signature": "sha256=" + sign(secret, api_key, ts, "POST", target, body),
    }
    if user_id:
        headers["X-Service-User-Id"] = user_id
    return headers


def signature_headers(api_key: str, secret: str, programme_id: str, method: str, target: str, body: Part = b"", user_id: Optional[str] = None, now_ms: Optional[int] = None) -> Dict[str, str]:
    """The right variant for the target: payout for /v1/payout-origination/..., HMAC mode otherwise."""
    if is_payout_target(target):
        return payout_headers(api_key, secret, programme_id, target, body, user_id=user_id, timestamp=now_ms)
    return hmac_headers(api_key, secret, programme_id, method, target, body, user_id=user_id, timestamp=now_ms)


@dataclass(frozen=True)
class WebhookVerification:
    """What ``verify_webhook`` found: ``valid``, and when not, ``reason`` (one of WEBHOOK_REASONS) and a
    ``detail`` for people. True in a boolean context when valid."""

    valid: bool
    reason: Optional[str] = None
    detail: str = ""

    def __bool__(self) -> bool:
        return self.valid


def _header(headers: Headers, name: str) -> Optional[str]:
    if isinstance(headers, Message):
        return http_header(headers, name)
    value: Optional[str] = headers.get(name)
    if value is None:
        lower = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lower), None)
    return value


def http_header(headers: Message, name: str) -> Optional[str]:
    """A header of a parsed HTTP request (http.server's ``self.headers``) as Node reads it: each value without the
    spaces and tabs around it, a header sent twice as its values joined with ", " (so a repeated X-Service-Timestamp
    or X-Service-Signature is malformed, not its first copy taken); None when absent
    (docs/clients.md#receivers-one-rule-set)."""
    values = headers.get_all(name)
    if not values:
        return None
    return ", ".join(str(value).strip(" \t") for value in values)


def verify_webhook(headers: Headers, raw_body: Union[bytes, str], secret: str, *, path: str = "/webhooks", api_key: Optional[str] = None, tolerance_ms: int = WEBHOOK_TOLERANCE_MS, now_ms: Optional[int] = None) -> WebhookVerification:
    """Checks a delivery (docs/webhooks.md#what-a-delivery-looks-like), in this order: the three headers are
    there, the timestamp is epoch milliseconds (1 to 16 ASCII digits, nothing after them), within ``tolerance_ms``
    of the receiver's clock (both ways, inclusive), the signature is exactly 64 hex digits, and it is the HMAC of
    apiKey + timestamp + POST + path + raw body.

    headers: any mapping (a dict with any casing, its values taken as given), or http.server's ``self.headers``
    (read as ``http_header`` reads them: values trimmed, a repeated header joined with ", "); raw_body: the bytes
    as received, before any JSON parsing; path: the path of the webhook URL (a query string is ignored); api_key:
    when given, a delivery signed for another key is a SIGNATURE_MISMATCH."""
    key = _header(headers, "X-Service-Api-Key")
    timestamp = _header(headers, "X-Service-Timestamp")
    signature = _header(headers, "X-Service-Signature")
    missing = [name for name, value in (("X-Service-Api-Key", key), ("X-Service-Timestamp", timestamp), ("X-Service-Signature", signature)) if not value]
    if missing or key is None or timestamp is None or signature is None:
        return WebhookVerification(False, MISSING_HEADER, f"missing {', '.join(missing)}")
    if not _TIMESTAMP.fullmatch(timestamp):
        return WebhookVerification(False, MALFORMED_TIMESTAMP, f"timestamp {timestamp[:40]!r}{'...' if len(timestamp) > 40 else ''} is not 1 to 16 digits of epoch milliseconds")
    now = now_ms if now_ms is not None else _now_ms()
    if abs(now - int(timestamp)) > tolerance_ms:
        return WebhookVerification(False, TIMESTAMP_OUT_OF_TOLERANCE, f"timestamp {timestamp} is more than {tolerance_ms} ms from now ({now})")
    if not _HEX64.fullmatch(signature):
        return WebhookVerification(False, MALFORMED_SIGNATURE, "the signature is not 64 hex digits")
    if api_key is not None and key != api_key:
        return WebhookVerification(False, SIGNATURE_MISMATCH, f"signed with key {key!r}, expected {api_key!r}")
    expected = sign(secret, key, timestamp, "POST", path.split("?", 1)[0], raw_body)
    if not hmac.compare_digest(expected, signature.lower()):
        return WebhookVerification(False, SIGNATURE_MISMATCH, "the signature does not match the body, path and secret")
    return WebhookVerification(True)


def verify_webhook_or_raise(headers: Headers, raw_body: Union[bytes, str], secret: str, *, path: str = "/webhooks", api_key: Optional[str] = None, tolerance_ms: int = WEBHOOK_TOLERANCE_MS, now_ms: Optional[int] = None) -> None:
    """``verify_webhook`` that raises WebhookVerificationError (``reason``, ``detail``) when not genuine."""
    result = verify_webhook(headers, raw_body, secret, path=path, api_key=api_key, tolerance_ms=tolerance_ms, now_ms=now_ms)
    if not result.valid:
        raise WebhookVerificationError(result.reason or SIGNATURE_MISMATCH, result.detail)
