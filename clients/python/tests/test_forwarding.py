"""The kit's own webhook forwarding (docs/clients.md#python, docs/webhooks.md#listen): an app under test with its
own endpoint gets a sandbox's deliveries through ``forward_webhooks``, no CLI process, no receiver of the kit.
Run with pytest -n 4 by test/kits/python.test.ts, so several sessions forward at once."""

import logging
import shutil

import pytest

from app_under_test import PaymentsApp
from service_sandbox import ForwardingError, Server, hmac_headers, http_send
from service_sandbox.process import sandbox_cli

DEPOSIT = {"depositInstructionId": "di_acme_usd_ach", "amount": "1250.00", "reference": "INV-2026-0311", "counterpartyName": "Northwind Traders"}


@pytest.fixture
def app(sandbox):
    app = PaymentsApp(sandbox.credentials["webhook"]["secret"])
    yield app
    app.close()


def deposit(session):
    answer = session.post("/v1/sandbox/accounts/acct_acme_usd/deposits", DEPOSIT)
    assert answer.status == 202, answer
    return answer.headers["Location"].rsplit("/", 1)[-1]


@pytest.mark.parametrize("n", range(4))
def test_a_sessions_webhooks_reach_the_apps_own_endpoint(sandbox, app, n):
    forwarder = sandbox.forward_webhooks(app.webhook_url)
    assert forwarder.running and forwarder.listener_id
    endpoints = sandbox.control("GET", "/webhooks/endpoint").json()
    assert {e["url"] for e in endpoints["endpoints"]} == {app.webhook_url}  # every programme's, signed for its path
    txn = deposit(sandbox)
    sandbox.advance(1000)
    sandbox.settle()  # every due delivery was posted to the app and its answer reported back
    assert app.statuses(txn) == ["PENDING", "COMPLETED"]
    assert app.refused == []
    log = sandbox.deliveries(transactionId=txn)
    assert [d["status"] for d in log] == ["DELIVERED", "DELIVERED"]
    assert {a["responseStatus"] for d in log for a in d["attempts"]} == {200}
    assert forwarder.forwarded == 2


def test_a_refused_attempt_is_retried_and_a_duplicate_recorded_once(sandbox, app):
    sandbox.forward_webhooks(app.webhook_url)
    sandbox.set_chaos(seed="kit-python-forward", duplicate={"times": 1}, badSignature={"times": 1})
    txn = deposit(sandbox)
    sandbox.advance(1000)
    sandbox.settle_until_idle()
    assert app.statuses(txn) == ["PENDING", "COMPLETED"]
    assert app.refused == ["SIGNATURE_MISMATCH"]  # the app answered 401; the emulator retried
    assert all(d["status"] == "DELIVERED" for d in sandbox.deliveries(transactionId=txn))


def test_forwarding_connects_again_after_a_reset(sandbox, app):
    forwarder = sandbox.forward_webhooks(app.webhook_url)
    first = forwarder.listener_id
    sandbox.reset()  # ends the stream; reset() returns once the forwarder is connected again
    assert forwarder.running and forwarder.listener_id != first
    txn = deposit(sandbox)
    sandbox.advance(1000)
    sandbox.settle()
    assert app.statuses(txn) == ["PENDING", "COMPLETED"]


def test_forwarding_stops_with_one_message_when_the_session_is_gone(sandbox_server, sandbox_label, caplog):
    session = sandbox_server.create_session(label=sandbox_label)
    app = PaymentsApp(session.credentials["webhook"]["secret"])
    try:
        forwarder = session.forward_webhooks(app.webhook_url)
        with caplog.at_level(logging.WARNING, logger="service_sandbox"):
            sandbox_server.control("DELETE", f"/sessions/{session.id}")  # ended behind the kit's back
            assert forwarder.wait_stopped(30_000)
        assert forwarder.stopped_reason == f"session {session.id} is gone (ended or idled out)"
        messages = [r.getMessage() for r in caplog.records if r.name == "service_sandbox"]
        assert messages == [f"service-sandbox: stopped forwarding webhooks to {app.webhook_url}: {forwarder.stopped_reason}"]
        with pytest.raises(ForwardingError, match="404"):
            session.forward_webhooks(app.webhook_url)  # an ended session refuses at once
    finally:
        session.close()
        app.close()


def test_the_root_sandbox_forwards_too(sandbox_server):
    # The root sandbox's first programme (fixtures/): its webhook key and SINGLE_USER key.
    app = PaymentsApp("whsec_sandbox_secret")
    try:
        with sandbox_server.forward_webhooks(app.webhook_url) as forwarder:
            path = "/v1/sandbox/accounts/acct_acme_usd/deposits"
            import json
            import urllib.request

            body = json.dumps(DEPOSIT).encode()
            headers = hmac_headers("pk_sandbox_single", "sk_sandbox_single_secret", "prg_sandbox", "POST", path, body)
            headers["Content-Type"] = "application/json"
            answer = http_send(urllib.request.Request(sandbox_server.url + path, data=body, method="POST", headers=headers))
            assert answer.status == 202, answer
            txn = answer.headers["Location"].rsplit("/", 1)[-1]
            assert sandbox_server.control("POST", "/clock", {"advanceMs": 1000}).status == 200
            assert sandbox_server.control("POST", "/settle", {"timeoutMs": 10_000}).json()["settled"]
            assert app.statuses(txn) == ["PENDING", "COMPLETED"]
        assert not forwarder.running  # the with block stopped it
    finally:
        app.close()


def test_bad_arguments_are_type_and_value_errors(sandbox):
    with pytest.raises(ValueError, match="http:// or https://"):
        sandbox.forward_webhooks("ftp://127.0.0.1/hooks")
    with pytest.raises(TypeError):
        sandbox.forward_webhooks(None)
    with pytest.raises(ForwardingError, match="cannot reach"):
        Server("http://127.0.0.1:9").forward_webhooks("http://127.0.0.1:9/hooks")


# Starts an emulator of its own (with an admin token), so it needs the CLI and node on the test host: skipped where the
# emulator runs elsewhere and no Node is installed (scripts/podman-service.sh, docs/ci.md#checked-with-podman).
@pytest.mark.skipif(shutil.which(sandbox_cli()[0]) is None, reason="no CLI to start a server of its own (no node on PATH, or no built dist/)")
def test_the_admin_token_goes_with_the_stream_and_the_results():
    # A server of its own that requires an admin token (docs/configuration.md): the forwarder sends it as a Bearer
    # token on the stream and on every result it reports.
    from service_sandbox import WebhookForwarder, start_server, stop_process

    started, process = start_server(args=("--admin-token", "kit-python-token", "--db", ":memory:"))
    try:
        server = Server(started.url, admin_token="kit-python-token")
        with server.create_session() as session:
            app = PaymentsApp(session.credentials["webhook"]["secret"])
            try:
                with pytest.raises(ForwardingError, match="401"):
                    WebhookForwarder(session.base_url, app.webhook_url).start()  # no token: refused
                session.forward_webhooks(app.webhook_url)
                txn = deposit(session)
                session.advance(1000)
                session.settle()
                assert app.statuses(txn) == ["PENDING", "COMPLETED"]
            finally:
                app.close()
    finally:
        stop_process(process.pid)


def test_a_non_ascii_app_path_is_sent_percent_encoded_and_delivered(sandbox):
    """The app URL's path and query are sent as fetch and the emulator's direct delivery send them (the app sees
    /uni/caf%C3%A9); the attempt thread raised UnicodeEncodeError, reported nothing, and the emulator retried forever."""
    app = PaymentsApp(sandbox.credentials["webhook"]["secret"], path="/uni/café?v=ñ")
    try:
        sandbox.forward_webhooks(app.webhook_url)
        txn = deposit(sandbox)
        sandbox.advance(1000)
        sandbox.settle()
        assert app.statuses(txn) == ["PENDING", "COMPLETED"] and app.refused == []
        assert set(app.paths) == {"/uni/caf%C3%A9?v=%C3%B1"}
        assert [d["status"] for d in sandbox.deliveries(transactionId=txn)] == ["DELIVERED", "DELIVERED"]
    finally:
        app.close()


class FakeRelay:
    """A stand-in for the emulator's relay over real HTTP: its event stream hands the forwarder one attempt of our
    making (one the emulator never sends), and it keeps the result the forwarder reports."""

    def __init__(self, attempt):
        import http.server
        import json
        import threading

        self.results = []
        self.reported = threading.Event()
        self.done = threading.Event()
        relay = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b'event: ready\ndata: {"listenerId": "lst_fake"}\n\n')
                self.wfile.write(b"event: attempt\ndata: " + json.dumps(attempt).encode() + b"\n\n")
                self.wfile.flush()
                relay.done.wait(60)  # the stream stays open until the test is over

            def do_POST(self):
                relay.results.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
                self.send_response(204)
                self.end_headers()
                relay.reported.set()

            def log_message(self, format, *args):
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self):
        self.done.set()
        self.http.shutdown()
        self.http.server_close()


def test_an_attempt_that_fails_in_any_way_is_reported_as_its_error():
    """A header value with a line break makes http.client raise ValueError, not OSError: the attempt is reported
    with that error (the emulator then records a failed attempt and retries), never left unanswered."""
    from service_sandbox import WebhookForwarder

    app = PaymentsApp("whsec_sandbox_secret")
    attempt = {"attemptId": "att_1", "listenerId": "lst_fake", "url": app.webhook_url, "timeoutMs": 10_000, "headers": {"X-Service-Api-Key": "wk\r\nInjected: yes"}, "body": "{}"}
    relay = FakeRelay(attempt)
    try:
        with WebhookForwarder(relay.url, app.webhook_url).start():
            assert relay.reported.wait(60), "no result was reported for the attempt"
        [(path, result)] = relay.results
        assert path == "/_emulator/webhooks/listen/lst_fake/results"
        assert result["attemptId"] == "att_1" and result["status"] is None
        assert result["error"].startswith("ValueError: ") and "header" in result["error"]
        assert app.paths == []  # nothing reached the app
    finally:
        relay.close()
        app.close()
