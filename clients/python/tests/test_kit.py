"""The kit's own behaviour (docs/clients.md#python): its exception root, misuse as TypeError/ValueError, the
version it carries and the once-per-server warning when the server's differs."""

import http.client
import http.server
import json
import re
import threading
import warnings
from pathlib import Path

import pytest

import service_sandbox
from service_sandbox import NotSettledError, SandboxError, SandboxHTTPError, Server, VersionMismatchWarning, WebhookVerificationError


def test_the_exceptions_share_a_root_of_their_own():
    assert issubclass(SandboxError, Exception) and not issubclass(SandboxError, AssertionError)
    for error in (SandboxHTTPError, NotSettledError, WebhookVerificationError, service_sandbox.ForwardingError, service_sandbox.SandboxConnectionError, service_sandbox.SandboxTargetError):
        assert issubclass(error, SandboxError)


def test_an_unexpected_answer_is_an_http_error_with_status_and_error_code(sandbox):
    with pytest.raises(SandboxHTTPError) as raised:
        sandbox.fault("flt_does_not_exist")
    assert raised.value.status == 404
    assert raised.value.error_code and raised.value.message
    assert "404" in str(raised.value)


def test_misuse_is_a_type_or_value_error(sandbox):
    with pytest.raises(ValueError):
        sandbox.advance(-1)
    with pytest.raises(TypeError):
        sandbox.advance("1000")
    with pytest.raises(ValueError):
        sandbox.get("/v1/accounts", key="other")
    with pytest.raises(ValueError):
        sandbox.payout("csv", b"", "key")
    sandbox.receiver()
    with pytest.raises(ValueError, match="has a receiver already"):
        sandbox.listen()


def test_the_version_is_the_packages():
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == service_sandbox.__version__ == "0.2.0"


def fake_server(version):
    """An HTTP server whose /_emulator/health answers with ``version``; it counts the health checks."""
    calls = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            calls.append(self.path)
            body = json.dumps({"status": "ok", "now": "2026-03-01T12:00:00.000Z", "version": version}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}", calls


def test_a_server_of_another_version_is_warned_about_once_per_url():
    other, url, calls = fake_server("9.9.9")
    same, same_url, _ = fake_server(service_sandbox.__version__)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            Server(url).control("GET", "/clock")
            Server(url).control("GET", "/clock")  # another client of the same URL: no second warning
            Server(url + "/").control("GET", "/clock")
            Server(same_url).control("GET", "/clock")
        mismatches = [w for w in seen if issubclass(w.category, VersionMismatchWarning)]
        assert len(mismatches) == 1, [str(w.message) for w in seen]
        assert f"the server at {url} is version 9.9.9" in str(mismatches[0].message)
        assert service_sandbox.__version__ in str(mismatches[0].message)
        assert mismatches[0].filename == __file__  # attributed to the caller, not to the kit's frames
        assert calls.count("/_emulator/health") == 1
    finally:
        other.shutdown()
        same.shutdown()


def test_a_session_starts_from_a_scenario_by_name_or_from_a_file(sandbox_server, sandbox_label, tmp_path):
    """docs/sessions.md#scenarios: the shipped demo by name (its seed and clock apply, no default clock is sent), and
    a file of the test's own with a given user, whose id the session's answer names."""
    with sandbox_server.create_session(label=sandbox_label, scenario="demo") as session:
        assert session.scenario is not None and session.scenario["name"] == "demo" and session.scenario["source"] == "shipped"
        assert session.scenario["steps"] == 17
        assert session.now() == "2026-03-01T12:00:00.000Z"
    story = tmp_path / "one-user.yaml"
    story.write_text(
        "name: one-user\n"
        "clock: 2026-04-01T09:00:00Z\n"
        "given:\n"
        "  users:\n"
        "    - { as: acme, type: BUSINESS, name: Acme Widgets, enrollment: NOT_STARTED }\n"
        "steps:\n"
        "  - advance: 1s\n"
    )
    with sandbox_server.create_session(label=sandbox_label, scenario_file=str(story)) as session:
        assert session.scenario is not None and session.scenario["source"] == "given"
        assert session.scenario["given"]["acme"].startswith("usr_")
    with pytest.raises(SandboxHTTPError) as raised:
        sandbox_server.create_session(label=sandbox_label, scenario="name: broken\nsteps: []\n")
    assert raised.value.status == 400 and "scenario:" in raised.value.message
    with pytest.raises(ValueError):
        sandbox_server.create_session(scenario="demo", scenario_file=str(story))


# --- the target sent is the target signed (docs/clients.md#python, docs/authentication.md) ------------------------


def test_a_non_ascii_query_is_sent_percent_encoded_as_signed(sandbox):
    answer = sandbox.get("/v1/transactions?pageSize=2&foo=Zoë日本")  # raised UnicodeEncodeError
    assert answer.status != 401, answer  # the server's validation may refuse foo, never the signature
    journal = [entry for entry in sandbox.requests() if entry["path"] == "/v1/transactions"]
    assert [entry["query"] for entry in journal] == ["pageSize=2&foo=Zo%C3%AB%E6%97%A5%E6%9C%AC"]
    assert sandbox.get("/v1/transactions?pageSize=2&note=a b").status != 401  # a space too (%20)


def test_an_empty_query_is_left_out_of_both_the_request_and_the_signature(sandbox):
    from service_sandbox import signature_headers

    assert sandbox.get("/v1/transactions?").status == 200  # 401: it was signed with the "?" and sent without
    key = sandbox.credentials["single"]
    headers = sandbox.signature_headers("GET", "/v1/transactions?")
    expected = signature_headers(key["apiKey"], key["secret"], sandbox.credentials["programmeId"], "GET", f"{sandbox.prefix}/v1/transactions", now_ms=int(headers["X-Service-Timestamp"]))
    assert headers == expected


def test_a_target_that_cannot_be_sent_is_the_kits_own_error(sandbox):
    from service_sandbox import SandboxTargetError

    with pytest.raises(SandboxTargetError) as raised:
        sandbox.get("/v1/transactions?note=\ud800")  # a lone surrogate: no UTF-8 for it
    assert isinstance(raised.value, SandboxError) and isinstance(raised.value, ValueError)
    assert [entry for entry in sandbox.requests() if entry["path"] == "/v1/transactions"] == []  # nothing was sent


# --- transport failures are SandboxErrors (docs/clients.md#python) ------------------------------------------------


def test_a_server_that_is_not_there_is_a_sandbox_connection_error():
    import socket

    from service_sandbox import SandboxConnectionError

    with socket.socket() as bound:  # bound, never listening: every connection to it is refused
        bound.bind(("127.0.0.1", 0))
        server = Server(f"http://127.0.0.1:{bound.getsockname()[1]}")
        with pytest.raises(SandboxConnectionError) as raised:
            server.sessions()
        assert not server.healthy()
    assert isinstance(raised.value, SandboxError) and isinstance(raised.value.__cause__, ConnectionRefusedError)
    assert "connection refused" in str(raised.value) and server.url in str(raised.value)


def test_a_server_that_never_answers_is_a_sandbox_connection_error_after_the_timeout():
    import socket
    import urllib.request

    from service_sandbox import SandboxConnectionError, http_send

    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/_emulator/clock"
        with pytest.raises(SandboxConnectionError) as raised:
            http_send(urllib.request.Request(url), timeout_ms=200)
    assert isinstance(raised.value.__cause__, socket.timeout) and "no answer within 200 ms" in str(raised.value)


def test_a_post_whose_connection_drops_is_a_sandbox_connection_error_and_is_not_sent_again(sandbox):
    from service_sandbox import SandboxConnectionError

    sandbox.add_fault({"type": "drop"}, match={"method": "POST", "path": "/v1/sandbox/accounts/*/deposits"}, times=1)
    with pytest.raises(SandboxConnectionError) as raised:
        sandbox.post("/v1/sandbox/accounts/acct_acme_usd/deposits", {"depositInstructionId": "di_acme_usd_ach", "amount": "5.00"})
    assert isinstance(raised.value.__cause__, (ConnectionError, http.client.HTTPException)), repr(raised.value.__cause__)
    assert "a POST is not sent again" in str(raised.value)
    posts = [entry for entry in sandbox.requests() if entry["method"] == "POST" and entry["path"].endswith("/deposits")]
    assert len(posts) == 1, posts
