"""pytest fixtures for service-sandbox, Python standard library only.

Copy this file next to your tests. It gives every test its own sandbox session (own database, clock,
webhooks) inside one emulator process, so tests run in parallel (pytest-xdist, `-n 4`) without seeing
each other. Guide: docs/recipes.md#python.

  SANDBOX_URL      the emulator to use (default http://127.0.0.1:4010); reused when /_emulator/health answers
  SANDBOX_CLI      the built CLI: a path to service-sandbox.mjs (run with node) or a command (default: the
                   checkout's dist/service-sandbox.mjs when this folder is docs/recipes/python of a built
                   checkout, else `service-sandbox` on PATH). Starts the emulator when nothing answers at
                   SANDBOX_URL, and runs `listen` for the tests' webhooks.
  SANDBOX_LABEL    the label of this run's sessions (default: one made up per run); every session with it is
                   ended at the end of the run, so a test that crashed leaves nothing behind
  SANDBOX_ADMIN_TOKEN  sent as X-Admin-Token on control-plane calls, for a server started with --admin-token

Fixtures:
  emulator         (session) the emulator's URL
  sandbox          (test) a fresh session: .signed(), .control(), .advance(), .settle(), .listen() (a verifying
                   receiver the CLI's `listen` forwards the session's webhooks to)
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
import sys
import tempfile
import threading
import time
import uuid
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
LISTEN_READY_TIMEOUT_S = 30.0
HERE = os.path.dirname(os.path.abspath(__file__))


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


def sandbox_cli():
    """The argv that runs the CLI: SANDBOX_CLI (a .mjs/.js file runs with node; anything else is a command),
    else the checkout's built dist/service-sandbox.mjs next to docs/recipes/, else `service-sandbox` on PATH.
    Never `npx`: outside the checkout it would ask the npm registry for a package of that name."""
    configured = os.environ.get("SANDBOX_CLI", "").strip()
    if configured:
        return ["node", configured] if configured.endswith((".mjs", ".js")) else shlex.split(configured)
    built = os.path.normpath(os.path.join(HERE, "..", "..", "..", "dist", "service-sandbox.mjs"))
    return ["node", built] if os.path.isfile(built) else ["service-sandbox"]


def run_label():
    """This run's label: SANDBOX_LABEL, set by the controller before the workers start (pytest_configure)."""
    return os.environ["SANDBOX_LABEL"]


class Emulator:
    """The server at SANDBOX_URL when it answers, else one started with the CLI (and stopped later)."""

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
        command = sandbox_cli() + ["--port", str(port)]
        self.log = tempfile.TemporaryFile()
        # A process group of its own: a `service-sandbox` wrapper script may start node as a child, and stop()
        # must end both.
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
    # It also names the run: every session gets the label (docs/sessions.md#labels).
    if not hasattr(config, "workerinput"):
        os.environ.setdefault("SANDBOX_LABEL", f"pytest-{uuid.uuid4().hex[:12]}")
        try:
            os.environ["SANDBOX_URL"] = _emulator.ensure()
        except RuntimeError as error:
            pytest.exit(str(error), returncode=1)


def pytest_unconfigure(config):
    # The controller ends whatever the run left (a worker that crashed before its fixtures' teardown) in one
    # call, then the server it started, if any.
    if not hasattr(config, "workerinput") and _emulator.url:
        answer = http_json("DELETE", f"{_emulator.url}/_emulator/sessions?" + urllib.parse.urlencode({"label": run_label()}))
        left = answer.json().get("ended") if answer.status == 200 else answer
        if left:
            print(f"\nended sessions the run left behind: {left}", file=sys.stderr)
    _emulator.stop()


@pytest.fixture(scope="session")
def emulator():
    """The emulator's base URL, e.g. http://127.0.0.1:4010."""
    return _emulator.ensure()


# --- sessions: the one place that knows how a sandbox is obtained ----------------------------------------


def create_session(emulator_url, webhook_url=None, seed=None):
    """A new isolated sandbox with this run's label: POST /_emulator/sessions (docs/recipes.md#how-sessions-isolate-tests).
    Without webhook_url, `listen` gives the session its webhook endpoint (Sandbox.listen)."""
    body = {"clock": START_CLOCK, "label": run_label()}
    if webhook_url:
        body["webhookUrl"] = webhook_url
    if seed:
        body["seed"] = seed
    answer = http_json("POST", emulator_url + "/_emulator/sessions", body)
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

    def __init__(self, emulator_url, session, webhooks=None):
        self.emulator_url = emulator_url
        self.session = session
        self.id = session["id"]
        self.base_url = session["baseUrl"].rstrip("/")
        self.credentials = session["credentials"]
        self.webhooks = webhooks  # a WebhookReceiver once listen() ran, or given a webhookUrl; else None
        self.listener = None

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

    def settle(self, timeout_ms=10_000):
        """POST /_emulator/settle: answers once every job due now has run and every webhook due now was attempted
        and answered (docs/control-plane.md#settle); the clock does not move. Instead of sleeping for webhooks."""
        answer = self.control("POST", "/settle", {"timeoutMs": timeout_ms})
        assert answer.status == 200 and answer.json()["settled"], f"settling: {answer}"
        return answer.json()

    def listen(self):
        """Webhooks through the CLI's `listen`: a verifying receiver on a free port, and
        `service-sandbox listen --forward-to <it> --url <server> --session <id>`, ready when this returns. The
        emulator never connects to the receiver (docs/webhooks.md#listen). Stopped by the fixture."""
        assert self.webhooks is None, "this session already has a receiver"
        receiver = WebhookReceiver()
        receiver.expect(self.credentials["webhook"]["apiKey"], self.credentials["webhook"]["secret"])
        self.webhooks = receiver
        self.listener = Listener(receiver.url, self.emulator_url, self.id)
        return receiver

    def close(self):
        """Stops the listener (its session still exists), deletes the session, then closes the receiver."""
        try:
            if self.listener:
                self.listener.stop()
            delete_session(self.emulator_url, self.session)
        finally:
            if self.webhooks:
                self.webhooks.close()

    def now(self):
        return self.control("GET", "/clock").json()["now"]


class Listener:
    """`service-sandbox listen` for one session, as a child process: connects out to the emulator and posts each
    of the session's deliveries to forward_to (docs/webhooks.md#listen). Started and ready on construction."""

    def __init__(self, forward_to, emulator_url, session_id):
        command = sandbox_cli() + ["listen", "--forward-to", forward_to, "--url", emulator_url, "--session", session_id]
        self.lines = []
        self.ready = False
        self._ready = threading.Event()
        try:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise RuntimeError(f"`{' '.join(command)}` cannot start (set SANDBOX_CLI): {error}") from None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        # "Ready: ..." once the emulator has made forward_to the session's endpoint: deliveries go through it from now.
        self._ready.wait(LISTEN_READY_TIMEOUT_S)
        if not self.ready:
            self.stop()
            raise RuntimeError(f"`{' '.join(command)}` said no Ready: within {LISTEN_READY_TIMEOUT_S} s:\n" + "".join(self.lines))

    def _read(self):
        for raw in self.process.stdout:  # one line per delivery after Ready (kept for failure messages)
            line = raw.decode(errors="replace")
            self.lines.append(line)
            if line.startswith("Ready:"):
                self.ready = True
                self._ready.set()
        self._ready.set()  # it exited: the constructor reports its output

    def stop(self):
        """Ctrl+C, as a user would (exit 0); SIGKILL if it has not gone within 10 s."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(5)  # its last lines read; the pipe closes with the process


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
        self._changed = threading.Lock()
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

    def find(self, predicate):
        """The first verified delivery for which predicate(delivery) is true. No waiting: settle the session
        first (Sandbox.settle), and every delivery due has been answered by then."""
        with self._changed:
            found = next((d for d in self.deliveries if predicate(d)), None)
            if found is None:
                seen = [(d["metadata"]["eventType"], d["transaction"]["id"], d["transaction"]["status"]) for d in self.deliveries]
                raise AssertionError(f"no matching webhook; received {seen}, rejected {self.rejected}")
            return found

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sandbox_factory(emulator):
    """make(seed=None, webhook_url=False) -> a new Sandbox, labelled with the run's label; every one is deleted
    after the test. Its webhooks: sandbox.listen() (through the CLI), or webhook_url=True for a receiver the
    emulator posts to directly (given as the session's webhookUrl)."""
    made = []

    def make(seed=None, webhook_url=False):
        receiver = WebhookReceiver() if webhook_url else None
        try:
            session = create_session(emulator, receiver.url if receiver else None, seed=seed)
        except BaseException:
            if receiver:
                receiver.close()
            raise
        if receiver:
            receiver.expect(session["credentials"]["webhook"]["apiKey"], session["credentials"]["webhook"]["secret"])
        sandbox = Sandbox(emulator, session, receiver)
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        sandbox.close()  # listener, session, receiver: nothing is sent to a receiver that is gone


@pytest.fixture
def sandbox(sandbox_factory):
    """A fresh, isolated sandbox session for this test."""
    return sandbox_factory()
