"""Signing and verification, standard library only (docs/authentication.md, docs/webhooks.md).

Both request variants sign one canonical string: apiKey + timestamp + METHOD + request target (path and query
exactly as sent, a session's /_sessions/{id} prefix included) + raw body, with no separators, keyed with the
key's secret. HMAC mode: epoch-millisecond timestamp, bare lower-case hex. The payout variant
(POST /v1/payout-origination/...): RFC 3339 UTC timestamp, ``sha256=<hex>``.
"""

import hashlib
import hmac
import time
from datetime import datetime, timezone

#: Webhook deliveries older or newer than this (real clock) are refused (docs/webhooks.md).
WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000
PAYOUT_PREFIX = "/v1/payout-origination/"


def _bytes(part):
    if part is None:
        return b""
    return part if isinstance(part, (bytes, bytearray)) else str(part).encode()


def sign(secret, *parts):
    """Lower-case hex HMAC-SHA256 of the parts concatenated with no separator (str as UTF-8, bytes as is)."""
    return hmac.new(_bytes(secret), b"".join(_bytes(part) for part in parts), hashlib.sha256).hexdigest()


def is_payout_target(target):
    """Whether a request target (session prefix allowed) is signed with the payout variant."""
    path = target.split("?", 1)[0]
    return PAYOUT_PREFIX in path


def hmac_headers(api_key, secret, programme_id, method, target, body=b"", user_id=None, timestamp=None):
    """The X-Service-* headers of an HMAC-mode request (docs/authentication.md#hmac-headers-server-to-server)."""
    ts = str(timestamp if timestamp is not None else int(time.time() * 1000))
    headers = {
        "X-Service-Api-Key": api_key,
        "X-Service-Timestamp": ts,
        "X-Service-Program-Id": programme_id,
        "X-Service-Signature": sign(secret, api_key, ts, method.upper(), target, body),
    }
    if user_id:
        headers["X-Service-User-Id"] = user_id
    return headers


def payout_headers(api_key, secret, programme_id, target, body, user_id=None, timestamp=None):
    """The headers of the payout variant (docs/payouts.md#signing-the-payout-variant): RFC 3339 timestamp,
    ``sha256=`` signature over the same canonical string; the programme and user headers are not signed."""
    ts = timestamp or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    headers = {
        "X-Service-Api-Key": api_key,
        "X-Service-Timestamp": ts,
        "X-Service-Program-Id": programme_id,
        "X-Service-Signature": "sha256=" + sign(secret, api_key, ts, "POST", target, body),
    }
    if user_id:
        headers["X-Service-User-Id"] = user_id
    return headers


def signature_headers(api_key, secret, programme_id, method, target, body=b"", user_id=None):
    """The right variant for the target: payout for /v1/payout-origination/..., HMAC mode otherwise."""
    if is_payout_target(target):
        return payout_headers(api_key, secret, programme_id, target, body, user_id=user_id)
    return hmac_headers(api_key, secret, programme_id, method, target, body, user_id=user_id)


def verify_webhook(headers, raw_body, api_key, secret, path="/webhooks", tolerance_ms=WEBHOOK_TOLERANCE_MS, now_ms=None):
    """None when a delivery is genuine, else the reason it is not (docs/webhooks.md#what-a-delivery-looks-like).

    headers: any mapping with .get (case-insensitive ones such as http.client's, or a dict with the canonical
    names); raw_body: the bytes as received, before any JSON parsing; path: the path of the webhook URL without
    its query string."""
    def get(name):
        value = headers.get(name)
        if value is None and isinstance(headers, dict):
            value = next((v for k, v in headers.items() if k.lower() == name.lower()), None)
        return value or ""

    got_key = get("X-Service-Api-Key")
    timestamp = get("X-Service-Timestamp")
    signature = get("X-Service-Signature")
    if got_key != api_key:
        return f"unexpected api key {got_key!r}"
    now = now_ms if now_ms is not None else time.time() * 1000
    if not timestamp.isdigit() or abs(now - int(timestamp)) > tolerance_ms:
        return f"timestamp {timestamp!r} outside {tolerance_ms} ms of the real clock"
    expected = sign(secret, api_key, timestamp, "POST", path, raw_body)
    if not hmac.compare_digest(expected, signature):
        return "signature mismatch"
    return None
