"""Signing and verification without a server: every case of clients/signing-vectors.json (the vectors every
kit runs; docs/clients.md#python), and the raising variant."""

import base64
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from service_sandbox import (
    WEBHOOK_REASONS,
    WebhookVerificationError,
    is_payout_target,
    signature_headers,
    verify_webhook,
    verify_webhook_or_raise,
)

VECTORS: Dict[str, Any] = json.loads((Path(__file__).resolve().parents[2] / "signing-vectors.json").read_text())


def _name(case: Dict[str, Any]) -> str:
    return str(case["name"])


def test_the_reason_codes_are_the_vectors():
    assert list(WEBHOOK_REASONS) == VECTORS["webhookReasons"]


@pytest.mark.parametrize("case", VECTORS["requests"], ids=_name)
def test_request_vector(case: Dict[str, Any]) -> None:
    body = base64.b64decode(case["bodyBase64"]) if "bodyBase64" in case else case["body"].encode()
    key = case["key"]
    headers = signature_headers(key["apiKey"], key["secret"], key["programmeId"], case["method"], case["target"], body, now_ms=case["nowMs"])
    assert headers == case["headers"]
    assert is_payout_target(case["target"]) == (case["variant"] == "payout")


@pytest.mark.parametrize("case", VECTORS["webhooks"], ids=_name)
def test_webhook_vector(case: Dict[str, Any]) -> None:
    result = verify_webhook(case["headers"], case["body"].encode(), case["secret"], path=case["path"], tolerance_ms=case["toleranceMs"], now_ms=case["nowMs"])
    assert (result.valid, result.reason) == (case["valid"], case["reason"]), result.detail
    assert bool(result) is case["valid"]
    lower = {name.lower(): value for name, value in case["headers"].items()}  # header names in any case
    assert verify_webhook(lower, case["body"], case["secret"], path=case["path"], tolerance_ms=case["toleranceMs"], now_ms=case["nowMs"]).reason == case["reason"]
    if case["valid"]:
        verify_webhook_or_raise(case["headers"], case["body"].encode(), case["secret"], path=case["path"], tolerance_ms=case["toleranceMs"], now_ms=case["nowMs"])
    else:
        with pytest.raises(WebhookVerificationError) as raised:
            verify_webhook_or_raise(case["headers"], case["body"].encode(), case["secret"], path=case["path"], tolerance_ms=case["toleranceMs"], now_ms=case["nowMs"])
        assert raised.value.reason == case["reason"]


def test_an_expected_key_refuses_another_keys_delivery() -> None:
    genuine: List[Dict[str, Any]] = [case for case in VECTORS["webhooks"] if case["name"] == "genuine"]
    case = genuine[0]
    assert verify_webhook(case["headers"], case["body"], case["secret"], api_key="wk_sandbox", now_ms=case["nowMs"]).valid
    refused = verify_webhook(case["headers"], case["body"], case["secret"], api_key="wk_other", now_ms=case["nowMs"])
    assert refused.reason == "SIGNATURE_MISMATCH" and "wk_other" in refused.detail


def test_control_plane_targets_are_not_signed_and_carry_the_admin_token_as_bearer() -> None:
    from service_sandbox import Server

    plane = VECTORS["controlPlane"]
    assert Server("http://127.0.0.1:9", admin_token=plane["adminToken"])._headers() == plane["headers"]
    assert all(not is_payout_target(target) for target in plane["targets"])


# --- whole-string checks (docs/clients.md#receivers-one-rule-set, rule 6) -------------------------------------------

NOW = 1_772_366_400_000  # 2026-03-01T12:00:00.000Z
SECRET = "whsec_sandbox_secret"
BODY = b'{"metadata":{"eventId":"evt_1"}}'


def _signed(timestamp: str, path: str = "/webhooks") -> Dict[str, str]:
    from service_sandbox import sign

    return {"X-Service-Api-Key": "wk_sandbox", "X-Service-Timestamp": timestamp, "X-Service-Signature": sign(SECRET, "wk_sandbox", timestamp, "POST", path, BODY)}


def test_a_timestamp_beyond_python_s_int_limit_is_malformed_not_an_exception() -> None:
    headers = _signed("1" * 5000)  # int() of 4,300 digits or more raises ValueError
    result = verify_webhook(headers, BODY, SECRET, now_ms=NOW)
    assert (result.valid, result.reason) == (False, "MALFORMED_TIMESTAMP")
    assert len(result.detail) < 200  # the detail quotes the start of it, not 5,000 digits


def test_a_timestamp_of_more_than_16_digits_is_malformed_even_when_signed_and_in_tolerance() -> None:
    assert verify_webhook(_signed(str(NOW)), BODY, SECRET, now_ms=NOW).valid  # the same instant, 13 digits: genuine
    for padded in ("0000" + str(NOW), "0" * 3 + str(NOW)):  # 17 and 16 digits, both signed as sent
        result = verify_webhook(_signed(padded), BODY, SECRET, now_ms=NOW)
        assert (result.valid, result.reason) == ((False, "MALFORMED_TIMESTAMP") if len(padded) > 16 else (True, None)), padded


def test_nothing_may_follow_the_timestamp_or_the_signature_not_even_a_line_break() -> None:
    headers = _signed(str(NOW))
    with_newline = dict(headers, **{"X-Service-Signature": headers["X-Service-Signature"] + "\n"})
    assert verify_webhook(with_newline, BODY, SECRET, now_ms=NOW).reason == "MALFORMED_SIGNATURE"
    with_newline = _signed(str(NOW) + "\n")
    assert verify_webhook(with_newline, BODY, SECRET, now_ms=NOW).reason == "MALFORMED_TIMESTAMP"
    for odd in ("+" + str(NOW), "-" + str(NOW), str(NOW) + ".0", "١٧٧٢٣٦٦٤٠٠٠٠٠"):  # a sign, a decimal, Arabic-Indic digits
        assert verify_webhook(_signed(odd), BODY, SECRET, now_ms=NOW).reason == "MALFORMED_TIMESTAMP", odd


def test_parsed_http_headers_are_trimmed_and_a_repeated_one_is_joined() -> None:
    """http.server's headers (an email.message.Message) are read as Node reads them (rule 3), so an app that
    passes self.headers gets the receivers' verdicts."""
    from email.message import Message

    from service_sandbox.signing import http_header

    def parsed(pairs: List[Any]) -> Message:
        message = Message()
        for name, value in pairs:
            message[name] = value
        return message

    genuine = _signed(str(NOW))
    spaced = parsed([(name, f" \t{value}\t ") for name, value in genuine.items()])
    assert http_header(spaced, "x-service-timestamp") == str(NOW)
    assert verify_webhook(spaced, BODY, SECRET, now_ms=NOW).valid
    twice = parsed(list(genuine.items()) + [("X-Service-Timestamp", str(NOW))])
    assert http_header(twice, "X-Service-Timestamp") == f"{NOW}, {NOW}"
    assert verify_webhook(twice, BODY, SECRET, now_ms=NOW).reason == "MALFORMED_TIMESTAMP"
    twice = parsed(list(genuine.items()) + [("X-Service-Signature", genuine["X-Service-Signature"])])
    assert verify_webhook(twice, BODY, SECRET, now_ms=NOW).reason == "MALFORMED_SIGNATURE"
    assert http_header(parsed([]), "X-Service-Signature") is None
