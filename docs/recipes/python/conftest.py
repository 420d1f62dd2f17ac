"""pytest fixtures for service-sandbox, Python standard library only.

Copy this file next to your tests. It gives every test its own sandbox session (own database, clock,
webhooks) inside one emulator process, so tests run in parallel (pytest-xdist, `-n 4`) without seeing
each other. Guide: docs/recipes.md#python.

  SANDBOX_URL      the emulator to use (default http://127.0.0.1:4010); reused when /_emulator/health answers
  SANDBOX_COMMAND  how to start one when nothing answers (default `npx service-sandbox`; `--port N` is added)
  SANDBOX_ADMIN_TOKEN  sent as X-Admin-Token on control-plane calls, for a server started with --admin-token

Fixtures:
  emulator         (session) the emulator's URL
  sandbox          (test) a fresh session: .signed(), .control(), .advance(), .webhooks (a verifying receiver)
  sandbox_factory  (test) makes more sessions in one test (each deleted at the end of the test)
"""

import hashlib
import hmac
import http.server
import json
import os
import shlex
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

DEFAULT_URL = "http://127.0.0.1:4010"
# Sessions start frozen at this instant: ids, times and rail steps are the same on every run; a test moves
# the clock with sandbox.advance(ms).
START_CLOCK = "2026-03-01T12:00:00.000Z"
START_TIMEOUT_S = 60.0
WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000


# --- plain HTTP ------------------------------------------------------------------------------------------


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body) if self.body else None

    def __repr__(self):
        return f"<Response {self.status} {self.body[:300]!r}>"


def http_send(request, timeout=30.0):
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return Response(answer.status, answer.headers, answer.read())
    except urllib.error.HTTPError as error:  # a 4xx or 5xx is an answer to check, not an exception
        return Response(error.code, error.headers, error.read())


def http_json(method, url, body=None, headers=None, timeout=30.0):
    """An unsigned JSON request: the control plane takes no credentials unless the server has --admin-token."""
    data = None if body is None else json.dumps(body).encode()
    all_headers = {"Content-Type": "application/json"} if data is not None else {}
    if os.environ.get("SANDBOX_ADMIN_TOKEN"):
        all_headers["X-Admin-Token"] = os.environ["SANDBOX_ADMIN_TOKEN"]
    all_headers.update(headers or {})
    return http_send(urllib.request.Request(url, data=data, method=method, headers=all_headers), timeout)


# --- the emulator process --------------------------------------------------------------------------------


def _healthy(url):
    try:
        answer = http_json("GET", url + "/_emulator/health", timeout=2.0)
        return answer.status == 200 and answer.json().get("status") == "ok"
    except (OSError, ValueError):
        return False


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Emulator:
    """The server at SANDBOX_URL when it answers, else one started with SANDBOX_COMMAND (and stopped later)."""

    def __init__(self):
        self.url = None
        self.process = None
        self.log = None

    def ensure(self):
        if self.url and _healthy(self.url):
            return self.url
        url = os.environ.get("SANDBOX_URL", DEFAULT_URL).rstrip("/")
        if _healthy(url):
            self.url = url
            return url
        port = _free_port()
        command = shlex.split(os.environ.get("SANDBOX_COMMAND", "npx service-sandbox")) + ["--port", str(port)]
        self.log = tempfile.TemporaryFile()
        # A process group of its own: `npx` starts node as a child, and stop() must end both.
        try:
            self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise RuntimeError(f"nothing answers at {url}/_emulator/health and `{' '.join(command)}` cannot start: {error}") from None
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(url):
            if self.process.poll() is not None or time.monotonic() > deadline:
                output = self._output()
                self.stop()
                raise RuntimeError(f"`{' '.join(command)}` did not answer on {url}/_emulator/health:\n{output}")
            time.sleep(0.2)
        self.url = url
        return url

    def _output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self):
        """Stops the server only if this process started it."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None
        self.log.close()


_emulator = Emulator()


def pytest_configure(config):
    # With pytest-xdist a session-scoped fixture runs once per worker, which would start one server per
    # worker. The controller (the process without `workerinput`) finds or starts the one server before the
    # workers exist and exports its URL; the workers inherit SANDBOX_URL and reuse it.
    if not hasattr(config, "workerinput"):
        try:
            os.environ["SANDBOX_URL"] = _emulator.ensure()
        except RuntimeError as error:
            pytest.exit(str(error), returncode=1)


def pytest_unconfigure(config):
    _emulator.stop()


@pytest.fixture(scope="session")
def emulator():
    """The emulator's base URL, e.g. http://127.0.0.1:4010."""
    return _emulator.ensure()


# --- sessions: the one place that knows how a sandbox is obtained ----------------------------------------


def create_session(emulator_url, webhook_url):
    """A new isolated sandbox: POST /_emulator/sessions (docs/recipes.md#how-sessions-isolate-tests)."""
    answer = http_json("POST", emulator_url + "/_emulator/sessions", {"clock": START_CLOCK, "webhookUrl": webhook_url})
    assert answer.status == 201, f"creating a session: {answer}"
    return answer.json()


def delete_session(emulator_url, session):
    answer = http_json("DELETE", f"{emulator_url}/_emulator/sessions/{session['id']}")
    assert answer.status == 204, f"deleting session {session['id']}: {answer}"


# --- signing (docs/authentication.md#hmac-headers-server-to-server) --------------------------------------


def sign(secret, *parts):
    """Lower-case hex HMAC-SHA256 of the parts concatenated with no separator (str as UTF-8, bytes as is)."""
    message = b"".join(part if isinstance(part, bytes) else part.encode() for part in parts)
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def _raw_body(body):
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


class Sandbox:
    """One session: its base URL, credentials and webhook receiver, and a client for it."""

    def __init__(self, session, webhooks):
        self.session = session
        self.id = session["id"]
        self.base_url = session["baseUrl"].rstrip("/")
        self.credentials = session["credentials"]
        self.webhooks = webhooks

    def _key(self, user, key):
        name = key or ("multi" if user else "single")
        return self.credentials[name]

    def signature_headers(self, method, path, body=None, user=None, key=None, timestamp=None):
        """The HMAC headers for a request to base_url + path, for tests that alter them before sending."""
        credentials = self._key(user, key)
        request = urllib.request.Request(self.base_url + path)
        # The request target AS SENT: the session's path prefix, the path and the query, exactly as urllib
        # puts them on the request line (request.selector).
        target = request.selector
        ts = timestamp or str(int(time.time() * 1000))
        headers = {
            "X-Service-Api-Key": credentials["apiKey"],
            "X-Service-Timestamp": ts,
            "X-Service-Program-Id": self.credentials["programmeId"],
            "X-Service-Signature": sign(credentials["secret"], credentials["apiKey"], ts, method.upper(), target, _raw_body(body)),
        }
        if user:
            headers["X-Service-User-Id"] = user
        return headers

    def send(self, method, path, body=None, headers=None):
        """Send as given (no signing): base_url + path, body as raw bytes."""
        data = None if body is None else _raw_body(body)
        all_headers = {"Content-Type": "application/json"} if data is not None else {}
        all_headers.update(headers or {})
        return http_send(urllib.request.Request(self.base_url + path, data=data, method=method.upper(), headers=all_headers))

    def signed(self, method, path, body=None, user=None, key=None):
        """A signed /v1 call. Default key: SINGLE_USER (usr_acme); with user=: MULTI_USER acting for that user;
        key="multi" without a user: programme-level calls."""
        raw = None if body is None else _raw_body(body)
        return self.send(method, path, raw, self.signature_headers(method, path, raw, user=user, key=key))

    def control(self, method, path, body=None):
        """The session's control plane: base_url + /_emulator + path."""
        return http_json(method, f"{self.base_url}/_emulator{path}", body)

    def advance(self, ms):
        """Move the session's clock on; the jobs due meanwhile (rail steps, retries) have run when it returns."""
        answer = self.control("POST", "/clock", {"advanceMs": ms})
        assert answer.status == 200, f"advancing the clock: {answer}"
        return answer.json()

    def now(self):
        return self.control("GET", "/clock").json()["now"]


# --- webhooks (docs/webhooks.md#what-a-delivery-looks-like) ----------------------------------------------


class WebhookReceiver:
    """An HTTP server on a free port that verifies each delivery's signature: 204 and kept when it is right,
    401 and listed in .rejected when it is not."""

    def __init__(self, path="/webhooks"):
        self.path = path
        self.api_key = None
        self.secret = None
        self.deliveries = []
        self.rejected = []
        self._changed = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                reason = receiver.verify(self.headers, raw)
                with receiver._changed:  # recorded before answering, so the sender sees it once answered
                    if reason:
                        receiver.rejected.append({"reason": reason, "headers": dict(self.headers), "body": raw})
                    else:
                        receiver.deliveries.append(json.loads(raw))
                    receiver._changed.notify_all()
                self.send_response(401 if reason else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass  # quiet test output

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def expect(self, api_key, secret):
        """The webhook key and secret to verify with (the session's credentials.webhook)."""
        self.api_key, self.secret = api_key, secret

    def verify(self, headers, raw):
        """None when the delivery is genuine, else why not."""
        api_key = headers.get("X-Service-Api-Key") or ""
        timestamp = headers.get("X-Service-Timestamp") or ""
        signature = headers.get("X-Service-Signature") or ""
        if api_key != self.api_key:
            return f"unexpected api key {api_key!r}"
        if not timestamp.isdigit() or abs(time.time() * 1000 - int(timestamp)) > WEBHOOK_TOLERANCE_MS:
            return f"timestamp {timestamp!r} outside {WEBHOOK_TOLERANCE_MS} ms of the real clock"
        # The path of the configured webhook URL (no query), not whatever a proxy made of it.
        expected = sign(self.secret, api_key, timestamp, "POST", self.path, raw)
        if not hmac.compare_digest(expected, signature):
            return "signature mismatch"
        return None

    def wait_for(self, predicate, timeout=10.0):
        """The first verified delivery for which predicate(delivery) is true; fails after timeout seconds."""
        with self._changed:
            found = self._changed.wait_for(lambda: next((d for d in self.deliveries if predicate(d)), None), timeout)
            if found is None:
                seen = [(d["metadata"]["eventType"], d["transaction"]["id"], d["transaction"]["status"]) for d in self.deliveries]
                raise AssertionError(f"no matching webhook within {timeout} s; received {seen}, rejected {self.rejected}")
            return found

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sandbox_factory(emulator):
    """make() -> a new Sandbox with its own webhook receiver; every one is deleted after the test."""
    made = []

    def make():
        receiver = WebhookReceiver()
        try:
            session = create_session(emulator, receiver.url)
        except BaseException:
            receiver.close()
            raise
        receiver.expect(session["credentials"]["webhook"]["apiKey"], session["credentials"]["webhook"]["secret"])
        made.append((session, receiver))
        return Sandbox(session, receiver)

    yield make
    for session, receiver in made:
        delete_session(emulator, session)  # first: nothing is sent to a receiver that is gone
        receiver.close()


@pytest.fixture
def sandbox(sandbox_factory):
    """A fresh, isolated sandbox session for this test."""
    return sandbox_factory()
