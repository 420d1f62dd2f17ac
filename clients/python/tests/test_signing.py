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
