"""The kit's receiver fed by hand over real sockets: the same hostile requests every kit's receiver is sent, each
answered by the rule set of docs/clients.md#receivers-one-rule-set (never a dropped connection, never a hang)."""

import socket
import time
from typing import Dict, List, Optional, Tuple

import pytest

from service_sandbox import WebhookReceiver, sign
from service_sandbox.receiver import IDLE_TIMEOUT_MS

KEY, SECRET = "wk_sandbox", "whsec_sandbox_secret"
#: A bound on how long one exchange may take on a loaded machine, not an expected duration.
BOUND_S = 60


def event(event_id: str) -> bytes:
    return ('{"transaction":{"id":"txn_1","status":"COMPLETED"},"metadata":{"eventId":"%s","eventType":"transaction_status_updated"}}' % event_id).encode()


def signed(body: bytes, path: str = "/webhooks", key: str = KEY, secret: str = SECRET) -> Dict[str, str]:
    timestamp = str(int(time.time() * 1000))  # the receiver checks against its real clock (5 minutes either way)
    return {"X-Service-Api-Key": key, "X-Service-Timestamp": timestamp, "X-Service-Signature": sign(secret, key, timestamp, "POST", path, body)}


def raw_request(method: str, headers: List[Tuple[str, str]], body: bytes = b"", path: str = "/webhooks") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers)
    return head.encode("latin-1") + b"\r\n" + body


def exchange(receiver: WebhookReceiver, data: bytes) -> Optional[int]:
    """Sends data on a new connection and reads until the receiver closes it: the status it answered, or None when
    it closed the connection without an answer."""
    port = int(receiver.url.split(":")[2].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND_S) as sock:
        sock.sendall(data)
        answer = b""
        while True:
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
    if not answer:
        return None
    return int(answer.split(b" ", 2)[1])


def post(receiver: WebhookReceiver, body: bytes, headers: Dict[str, str], extra: List[Tuple[str, str]] = ()) -> Optional[int]:
    framing = [("Content-Length", str(len(body)))]
    return exchange(receiver, raw_request("POST", list(headers.items()) + list(extra) + framing, body))


def chunked(body: bytes, size: int = 7) -> bytes:
    out = b""
    for start in range(0, len(body), size):
        piece = body[start : start + size]
        out += b"%x;ext=1\r\n" % len(piece) + piece + b"\r\n"
    return out + b"0\r\nX-Trailer: yes\r\n\r\n"


@pytest.fixture
def receiver():
    with WebhookReceiver(api_key=KEY, secret=SECRET) as receiver:
        yield receiver


def reasons(receiver: WebhookReceiver) -> List[str]:
    return [rejected["reason"] for rejected in receiver.rejected]


def test_another_method_is_a_401_method_not_a_501(receiver):
    assert exchange(receiver, raw_request("GET", [])) == 401
    body = event("evt_put")
    assert exchange(receiver, raw_request("PUT", list(signed(body).items()) + [("Content-Length", str(len(body)))], body)) == 401
    assert exchange(receiver, raw_request("BREW", [])) == 401
    assert reasons(receiver) == ["METHOD", "METHOD", "METHOD"]
    assert receiver.events == []


def test_a_chunked_delivery_is_read_whole(receiver):
    body = event("evt_chunked")
    assert exchange(receiver, raw_request("POST", list(signed(body).items()) + [("Transfer-Encoding", "chunked")], chunked(body))) == 200
    assert [e["metadata"]["eventId"] for e in receiver.events] == ["evt_chunked"]
    broken = b"zz\r\n" + body + b"\r\n0\r\n\r\n"
    assert exchange(receiver, raw_request("POST", list(signed(body).items()) + [("Transfer-Encoding", "chunked")], broken)) == 400


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", "+5", "5, 5", " ", "9" * 40])
def test_a_content_length_that_is_not_a_number_is_a_400_at_once(receiver, length):
    body = event("evt_length")
    assert exchange(receiver, raw_request("POST", list(signed(body).items()) + [("Content-Length", length)], body)) == 400
    assert receiver.events == [] and receiver.rejected == []  # no delivery was read: nothing to keep


def test_both_framings_at_once_or_another_coding_is_a_400(receiver):
    body = event("evt_both")
    both = [("Transfer-Encoding", "chunked"), ("Content-Length", str(len(body)))]
    assert exchange(receiver, raw_request("POST", list(signed(body).items()) + both, chunked(body))) == 400
    assert exchange(receiver, raw_request("POST", list(signed(body).items()) + [("Transfer-Encoding", "gzip")], body)) == 400


def test_an_idle_connection_is_closed():
    """A connection that sends nothing, or stops halfway through its body, is closed after the idle timeout (10 s
    by default; a short one here, and the assertion only that the receiver closes it, within a generous bound)."""
    assert IDLE_TIMEOUT_MS == 10_000
    with WebhookReceiver(api_key=KEY, secret=SECRET) as default:
        assert default.idle_timeout_ms == 10_000
    with WebhookReceiver(api_key=KEY, secret=SECRET, idle_timeout_ms=200) as receiver:
        assert exchange(receiver, b"") is None  # nothing sent: closed, no answer
        body = event("evt_short")
        partial = raw_request("POST", list(signed(body).items()) + [("Content-Length", "1000")], body)
        assert exchange(receiver, partial) is None  # 1000 bytes promised, fewer sent: closed
        assert post(receiver, body, signed(body)) == 200  # and it still answers the next one


def test_header_values_are_trimmed(receiver):
    body = event("evt_spaces")
    assert post(receiver, body, {name: f" \t{value} \t" for name, value in signed(body).items()}) == 200
    assert [e["metadata"]["eventId"] for e in receiver.events] == ["evt_spaces"]


def test_a_header_sent_twice_is_malformed(receiver):
    body = event("evt_twice")
    headers = signed(body)
    assert post(receiver, body, headers, [("X-Service-Signature", headers["X-Service-Signature"])]) == 401
    assert post(receiver, body, headers, [("X-Service-Timestamp", headers["X-Service-Timestamp"])]) == 401
    assert reasons(receiver) == ["MALFORMED_SIGNATURE", "MALFORMED_TIMESTAMP"]
    assert receiver.events == []


def test_missing_header_comes_before_unknown_key(receiver):
    body = event("evt_key")
    assert post(receiver, body, {}) == 401
    other = signed(body, key="wk_other")  # a valid HMAC, for another key
    assert post(receiver, body, {name: value for name, value in other.items() if name != "X-Service-Timestamp"}) == 401
    assert post(receiver, body, dict(signed(body), **{"X-Service-Signature": ""})) == 401
    assert post(receiver, body, other) == 401
    assert reasons(receiver) == ["MISSING_HEADER", "MISSING_HEADER", "MISSING_HEADER", "UNKNOWN_KEY"]


def test_no_key_given_yet_is_unknown_key():
    with WebhookReceiver() as receiver:
        body = event("evt_nokey")
        assert post(receiver, body, signed(body)) == 401
        assert reasons(receiver) == ["UNKNOWN_KEY"]
        receiver.expect(KEY, SECRET)
        assert post(receiver, body, signed(body)) == 200


def test_the_signature_checks_answer_their_reasons(receiver):
    body = event("evt_sig")
    headers = signed(body)
    assert post(receiver, body, dict(headers, **{"X-Service-Timestamp": "1" * 5000})) == 401  # int() would raise
    assert post(receiver, body, dict(headers, **{"X-Service-Timestamp": "0000" + headers["X-Service-Timestamp"]})) == 401
    assert post(receiver, body, dict(headers, **{"X-Service-Timestamp": "1000"})) == 401
    assert post(receiver, body, dict(headers, **{"X-Service-Signature": "abc"})) == 401
    assert post(receiver, body, signed(body, secret="not-the-secret")) == 401
    assert post(receiver, body, signed(body, path="/elsewhere")) == 401
    assert reasons(receiver) == ["MALFORMED_TIMESTAMP", "MALFORMED_TIMESTAMP", "TIMESTAMP_OUT_OF_TOLERANCE", "MALFORMED_SIGNATURE", "SIGNATURE_MISMATCH", "SIGNATURE_MISMATCH"]


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1,2]",
        b'"text"',
        b"null",
        b"{}",
        b'{"metadata":null}',
        b'{"metadata":[]}',
        b'{"metadata":{"eventId":7}}',
        b'{"metadata":{"eventId":["evt_1"]}}',
        b'{"metadata":{"eventId":{"a":1}}}',
        b'{"metadata":{"eventId":""}}',
        b'{"metadata":{"eventId":"evt_1"},"n":NaN}',
        b'\xef\xbb\xbf{"metadata":{"eventId":"evt_1"}}',
        b"\xff\xfe",
        b"[" * 100_000,
    ],
    ids=lambda body: repr(body[:30]),
)
def test_a_genuine_delivery_that_is_not_an_event_is_a_401_not_json(receiver, body):
    assert post(receiver, body, signed(body)) == 401
    assert reasons(receiver) == ["NOT_JSON"]
    assert receiver.events == [] and receiver.deliveries == []
    good = event("evt_after")
    assert post(receiver, good, signed(good)) == 200  # the receiver is still there


def test_genuine_deliveries_are_kept_once_and_repeats_acknowledged(receiver):
    for event_id in ("evt_1", "evt_1", "evt_2"):
        body = event(event_id)
        assert post(receiver, body, signed(body)) == 200
    assert [e["metadata"]["eventId"] for e in receiver.events] == ["evt_1", "evt_2"]
    assert [e["metadata"]["eventId"] for e in receiver.duplicates] == ["evt_1"]
    assert len(receiver.deliveries) == 3 and receiver.rejected == []
    assert receiver.summary() == [("transaction_status_updated", "txn_1", "COMPLETED")] * 2
    assert len(receiver.for_transaction("txn_1")) == 2


def test_an_apps_own_handler_reads_a_chunked_delivery_with_read_request_body():
    """docs/clients.md#python's app reads its body with read_request_body: a chunked delivery (no Content-Length)
    is verified and kept, a Content-Length that is not a number is a 400 (int(headers["Content-Length"]) raised)."""
    from app_under_test import PaymentsApp

    app = PaymentsApp(SECRET)
    try:
        port = int(app.webhook_url.split(":")[2].split("/")[0])
        body = b'{"transaction":{"id":"txn_9","status":"PENDING"},"metadata":{"eventId":"evt_app"}}'
        headers = list(signed(body, path="/hooks/service").items())

        def send(data: bytes) -> Optional[int]:
            with socket.create_connection(("127.0.0.1", port), timeout=BOUND_S) as sock:
                sock.sendall(data)
                answer = b"".join(iter(lambda: sock.recv(65536), b""))
            return int(answer.split(b" ", 2)[1]) if answer else None

        assert send(raw_request("POST", headers + [("Transfer-Encoding", "chunked")], chunked(body), path="/hooks/service")) == 200
        assert app.statuses("txn_9") == ["PENDING"] and app.refused == []
        assert send(raw_request("POST", headers + [("Content-Length", "-1")], body, path="/hooks/service")) == 400
    finally:
        app.close()
