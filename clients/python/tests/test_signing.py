"""Signing and verification without a server (docs/authentication.md, docs/webhooks.md)."""

import json

from service_sandbox import hmac_headers, payout_headers, sign, signature_headers, verify_webhook

# The canonical string of docs/authentication.md: apiKey + timestamp + METHOD + target + raw body.
KEY, SECRET = "pk_sandbox_single", "sk_sandbox_single_secret"


def test_hmac_mode_signs_the_canonical_string():
    headers = hmac_headers(KEY, SECRET, "prg_sandbox", "get", "/v1/accounts?pageSize=2", timestamp=1772366400000)
    assert headers["X-Service-Timestamp"] == "1772366400000"
    assert headers["X-Service-Signature"] == sign(SECRET, f"{KEY}1772366400000GET/v1/accounts?pageSize=2")
    assert "X-Service-User-Id" not in headers


def test_the_payout_variant_is_chosen_by_the_target():
    body = b"eyJhbW91bnQiOiIxLjAwIn0="
    headers = signature_headers(KEY, SECRET, "prg_sandbox", "POST", "/_sessions/ses_1/v1/payout-origination/json", body, user_id="usr_acme")
    assert headers["X-Service-Timestamp"].endswith("Z") and "T" in headers["X-Service-Timestamp"]
    expected = sign(SECRET, KEY, headers["X-Service-Timestamp"], "POST", "/_sessions/ses_1/v1/payout-origination/json", body)
    assert headers["X-Service-Signature"] == "sha256=" + expected
    assert headers["X-Service-User-Id"] == "usr_acme"
    fixed = payout_headers(KEY, SECRET, "prg_sandbox", "/v1/payout-origination/json", body, timestamp="2026-03-01T12:00:00Z")
    assert fixed["X-Service-Signature"] == "sha256=" + sign(SECRET, KEY, "2026-03-01T12:00:00Z", "POST", "/v1/payout-origination/json", body)


def test_verify_webhook():
    raw = json.dumps({"transaction": {"id": "txn_1"}, "metadata": {"eventId": "evt_1"}}).encode()
    ts = "1772366400123"
    good = {"X-Service-Api-Key": "wk_sandbox", "X-Service-Timestamp": ts, "X-Service-Signature": sign("whsec_sandbox_secret", "wk_sandbox", ts, "POST", "/webhooks", raw)}
    now = int(ts)
    assert verify_webhook(good, raw, "wk_sandbox", "whsec_sandbox_secret", now_ms=now) is None
    lower = {name.lower(): value for name, value in good.items()}
    assert verify_webhook(lower, raw, "wk_sandbox", "whsec_sandbox_secret", now_ms=now) is None
    assert verify_webhook(good, raw + b" ", "wk_sandbox", "whsec_sandbox_secret", now_ms=now) == "signature mismatch"
    assert verify_webhook(good, raw, "wk_sandbox", "another", now_ms=now) == "signature mismatch"
    assert verify_webhook(good, raw, "wk_sandbox", "whsec_sandbox_secret", path="/hooks", now_ms=now) == "signature mismatch"
    assert "outside" in verify_webhook(good, raw, "wk_sandbox", "whsec_sandbox_secret", now_ms=now + 301_000)
    assert "unexpected api key" in verify_webhook(good, raw, "wk_other", "whsec_sandbox_secret", now_ms=now)
