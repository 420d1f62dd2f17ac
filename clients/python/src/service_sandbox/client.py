"""The client: the server's control plane (sessions, labels, root snapshots) and one session's API and control
plane, standard library only (docs/clients.md#python)."""

import base64
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

from .receiver import WebhookReceiver
from .signing import signature_headers

DEFAULT_URL = "http://127.0.0.1:4010"
#: Sessions start frozen at this instant unless told otherwise: same ids, times and rail steps on every run.
START_CLOCK = "2026-03-01T12:00:00.000Z"


class SandboxError(AssertionError):
    """A control-plane call that did not answer as it must (an AssertionError, so pytest shows it as a failure)."""


class Response:
    """An HTTP answer: ``status``, ``headers``, ``body`` (bytes) and ``json()``. A 4xx or 5xx is an answer, not
    an exception."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body) if self.body else None

    def __repr__(self):
        return f"<Response {self.status} {self.body[:300]!r}>"


def http_send(request, timeout=30.0):
    """urllib, with error statuses returned as a Response."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return Response(answer.status, answer.headers, answer.read())
    except urllib.error.HTTPError as error:
        return Response(error.code, error.headers, error.read())


def raw_body(body):
    """The bytes sent (and signed): bytes as given, str as UTF-8, anything else as json.dumps."""
    if body is None:
        return None
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


def _expect(answer, status, what):
    if answer.status != status:
        raise SandboxError(f"{what}: expected {status}, got {answer!r}")
    return answer.json()


class Server:
    """One emulator process: its control plane (no credentials unless it runs with --admin-token)."""

    def __init__(self, url=None, admin_token=None):
        self.url = (url or os.environ.get("SANDBOX_URL") or DEFAULT_URL).rstrip("/")
        self.admin_token = admin_token if admin_token is not None else os.environ.get("SANDBOX_ADMIN_TOKEN") or None

    def control(self, method, path, body=None, timeout=30.0, base=None):
        """A JSON call to {base or url}/_emulator{path}; body None sends none."""
        data = raw_body(body)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        if self.admin_token:
            headers["X-Admin-Token"] = self.admin_token
        url = f"{base or self.url}/_emulator{path}"
        return http_send(urllib.request.Request(url, data=data, method=method.upper(), headers=headers), timeout)

    def healthy(self, timeout=2.0):
        try:
            answer = self.control("GET", "/health", timeout=timeout)
            return answer.status == 200 and (answer.json() or {}).get("status") == "ok"
        except (OSError, ValueError):
            return False

    def create_session(self, label=None, seed=None, snapshot=None, clock=None, webhook_url=None, fixtures=None, wait_s=120.0):
        """POST /_emulator/sessions (docs/sessions.md). Starts frozen at START_CLOCK unless ``clock`` or
        ``snapshot`` is given (a snapshot brings its own clock). A 429 (the server's session limit) is waited
        out as its Retry-After says, for at most ``wait_s``. Returns a Session."""
        body = {}
        if snapshot:
            body["snapshot"] = snapshot
        else:
            body["clock"] = clock or START_CLOCK
        for key, value in (("label", label), ("seed", seed), ("webhookUrl", webhook_url), ("fixtures", fixtures)):
            if value is not None:
                body[key] = value
        deadline = time.monotonic() + wait_s
        while True:
            answer = self.control("POST", "/sessions", body)
            if answer.status != 429 or time.monotonic() > deadline:
                break
            time.sleep(min(float(answer.headers.get("Retry-After") or 1), max(0.0, deadline - time.monotonic())))
        return Session(self, _expect(answer, 201, "creating a session"))

    def end_label(self, label):
        """DELETE /_emulator/sessions?label=...: ends every session of a run; the ids it ended."""
        answer = self.control("DELETE", "/sessions?" + urllib.parse.urlencode({"label": label}))
        return _expect(answer, 200, f"ending label {label}").get("ended", [])

    def sessions(self):
        return _expect(self.control("GET", "/sessions"), 200, "listing sessions")["data"]

    # The root sandbox's snapshots: a session can start from them (docs/sessions.md#what-a-session-starts-from).
    def save_snapshot(self, name):
        answer = self.control("POST", "/snapshots", {"name": name})
        if answer.status not in (200, 201):
            raise SandboxError(f"saving snapshot {name}: {answer!r}")
        return answer.json()

    def upload_snapshot(self, name, data):
        """PUT /_emulator/snapshots/{name}: an exported file (Session.export_snapshot) becomes a root snapshot,
        which sessions can start from (docs/control-plane.md#snapshots)."""
        headers = {"Content-Type": "application/octet-stream"}
        if self.admin_token:
            headers["X-Admin-Token"] = self.admin_token
        url = f"{self.url}/_emulator/snapshots/{urllib.parse.quote(name)}"
        answer = http_send(urllib.request.Request(url, data=data, method="PUT", headers=headers))
        if answer.status not in (200, 201):
            raise SandboxError(f"uploading snapshot {name}: {answer!r}")
        return answer.json()

    def delete_snapshot(self, name):
        answer = self.control("DELETE", f"/snapshots/{urllib.parse.quote(name)}")
        if answer.status not in (204, 404):
            raise SandboxError(f"deleting snapshot {name}: {answer!r}")


class Session:
    """One isolated sandbox (docs/sessions.md): ``id``, ``base_url``, ``credentials``; signed API calls and its
    own control plane. ``webhooks`` is its WebhookReceiver once one is attached (``receiver()``/``listen()``
    in the pytest plugin, or ``attach_receiver``)."""

    def __init__(self, server, session):
        self.server = server
        self.session = session
        self.id = session["id"]
        self.base_url = session["baseUrl"].rstrip("/")
        self.prefix = urllib.parse.urlsplit(self.base_url).path  # /_sessions/ses_...: part of every signed target
        self.credentials = session["credentials"]
        self.webhooks = None
        self._closers = []

    # --- the API, signed -------------------------------------------------------------------------------

    def _key(self, user, key):
        return self.credentials[key or ("multi" if user else "single")]

    def signature_headers(self, method, path, body=None, user=None, key=None):
        """The signing headers for base_url + path (payout variant under /v1/payout-origination/), for tests
        that alter them before ``send``."""
        credentials = self._key(user, key)
        target = urllib.request.Request(self.base_url + path).selector  # the target as urllib sends it
        return signature_headers(credentials["apiKey"], credentials["secret"], self.credentials["programmeId"], method, target, raw_body(body) or b"", user_id=user)

    def send(self, method, path, body=None, headers=None, content_type="application/json"):
        """Sends as given, unsigned: base_url + path, the body as raw bytes."""
        data = raw_body(body)
        all_headers = {"Content-Type": content_type} if data is not None else {}
        all_headers.update(headers or {})
        return http_send(urllib.request.Request(self.base_url + path, data=data, method=method.upper(), headers=all_headers))

    def request(self, method, path, body=None, user=None, key=None, headers=None):
        """A signed /v1 call. Default key: SINGLE_USER (usr_acme); user=: the MULTI_USER key acting for that
        user; key="multi" without a user: programme-level calls."""
        data = raw_body(body)
        signed = self.signature_headers(method, path, data, user=user, key=key)
        signed.update(headers or {})
        return self.send(method, path, data, signed)

    def get(self, path, **options):
        return self.request("GET", path, **options)

    def post(self, path, body=None, **options):
        return self.request("POST", path, body, **options)

    def payout(self, fmt, payload, idempotency_key, user=None, key=None):
        """POST /v1/payout-origination/{json|pacs008} (docs/payouts.md): payload (a dict for json, XML text or
        bytes for pacs008) sent as Base64 text/plain with the payout signature and Idempotency-Key."""
        if fmt == "json" and not isinstance(payload, (bytes, str)):
            payload = json.dumps(payload)
        body = base64.b64encode(raw_body(payload))
        path = f"/v1/payout-origination/{fmt}"
        headers = self.signature_headers("POST", path, body, user=user, key=key)
        headers["Idempotency-Key"] = idempotency_key
        return self.send("POST", path, body, headers, content_type="text/plain")

    # --- the session's control plane (docs/control-plane.md) -------------------------------------------

    def control(self, method, path, body=None, timeout=30.0):
        """{base_url}/_emulator{path}."""
        return self.server.control(method, path, body, timeout=timeout, base=self.base_url)

    def now(self):
        return _expect(self.control("GET", "/clock"), 200, "reading the clock")["now"]

    def advance(self, ms):
        """Moves the clock on; the jobs due meanwhile have run when it answers."""
        return _expect(self.control("POST", "/clock", {"advanceMs": ms}), 200, "advancing the clock")

    def freeze_at(self, instant):
        return _expect(self.control("POST", "/clock", {"freezeAt": instant}), 200, "freezing the clock")

    def settle(self, timeout_ms=10_000):
        """POST /_emulator/settle: answers once every job due now ran and every due delivery was attempted and
        answered (docs/control-plane.md#settle). Instead of sleeping for webhooks."""
        report = _expect(self.control("POST", "/settle", {"timeoutMs": timeout_ms}, timeout=timeout_ms / 1000 + 30), 200, "settling")
        if not report.get("settled"):
            raise SandboxError(f"not settled within {timeout_ms} ms: {report}")
        return report

    def settle_until_idle(self, max_rounds=20):
        """Settles, and while deliveries wait for a later emulated time (retries), advances the clock to the
        next due instant and settles again. The final report."""
        report = self.settle()
        for _ in range(max_rounds):
            if report["waiting"]["deliveries"] == 0 or not report.get("nextDueAt"):
                return report
            step = max(1, int(_iso_ms(report["nextDueAt"]) - _iso_ms(report["now"])))
            self.advance(step)
            report = self.settle()
        return report

    def snapshot(self, name):
        answer = self.control("POST", "/snapshots", {"name": name})
        if answer.status not in (200, 201):
            raise SandboxError(f"saving snapshot {name}: {answer!r}")
        return answer.json()

    def export_snapshot(self, name):
        """The snapshot as one file (bytes of a SQLite database)."""
        answer = self.control("GET", f"/snapshots/{urllib.parse.quote(name)}/export")
        if answer.status != 200:
            raise SandboxError(f"exporting snapshot {name}: {answer!r}")
        return answer.body

    def restore(self, name):
        return _expect(self.control("POST", f"/snapshots/{urllib.parse.quote(name)}/restore"), 200, f"restoring {name}")

    def reset(self):
        return _expect(self.control("POST", "/reset"), 200, "resetting")

    def add_fault(self, effect, match=None, times=None, probability=None, seed=None):
        """POST /_emulator/faults (docs/faults.md#fault-rules); the rule."""
        body = {"effect": effect}
        for key, value in (("match", match), ("times", times), ("probability", probability), ("seed", seed)):
            if value is not None:
                body[key] = value
        return _expect(self.control("POST", "/faults", body), 201, "adding a fault rule")

    def faults(self):
        return _expect(self.control("GET", "/faults"), 200, "listing fault rules")["data"]

    def fault(self, rule_id):
        return _expect(self.control("GET", f"/faults/{rule_id}"), 200, f"reading fault {rule_id}")

    def clear_faults(self):
        _expect(self.control("DELETE", "/faults"), 204, "removing fault rules")

    def set_chaos(self, **settings):
        """PUT /_emulator/webhooks/chaos (docs/faults.md#webhook-chaos): set_chaos(duplicate={"times": 1}, seed="x")."""
        return _expect(self.control("PUT", "/webhooks/chaos", settings), 200, "setting webhook chaos")

    def chaos(self):
        return _expect(self.control("GET", "/webhooks/chaos"), 200, "reading webhook chaos")

    def clear_chaos(self):
        _expect(self.control("DELETE", "/webhooks/chaos"), 204, "turning webhook chaos off")

    def deliveries(self, **filters):
        """The delivery log (docs/webhooks.md#delivery-log-and-replay): filters status, eventType,
        transactionId, pageSize, ...; the list of deliveries, each with its attempts."""
        query = urllib.parse.urlencode({key: value for key, value in filters.items() if value is not None})
        return _expect(self.control("GET", "/webhooks/deliveries" + (f"?{query}" if query else "")), 200, "reading the delivery log")["data"]

    def delivery(self, delivery_id):
        return _expect(self.control("GET", f"/webhooks/deliveries/{delivery_id}"), 200, f"reading delivery {delivery_id}")

    def replay(self, delivery_id):
        return _expect(self.control("POST", f"/webhooks/deliveries/{delivery_id}/replay"), 200, f"replaying {delivery_id}")

    def set_webhook_url(self, url, programme_id=None):
        body = {"url": url}
        if programme_id:
            body["programId"] = programme_id
        return _expect(self.control("PUT", "/webhooks/endpoint", body), 200, "setting the webhook endpoint")

    def requests(self, **filters):
        """The request journal (docs/test-kit.md#request-journal)."""
        query = urllib.parse.urlencode({key: value for key, value in filters.items() if value is not None})
        return _expect(self.control("GET", "/requests" + (f"?{query}" if query else "")), 200, "reading the journal")["data"]

    # --- webhooks and the end --------------------------------------------------------------------------

    def attach_receiver(self, receiver=None, url=True):
        """A verifying WebhookReceiver for this session's webhook key; with url=True the session's endpoint is
        pointed at it (the emulator posts to it directly). Closed with the session."""
        receiver = receiver or WebhookReceiver()
        receiver.expect(self.credentials["webhook"]["apiKey"], self.credentials["webhook"]["secret"])
        if url:
            self.set_webhook_url(receiver.url)
        self.webhooks = receiver
        self._closers.append(receiver.close)
        return receiver

    def on_close(self, callback):
        """callback() runs at close(), before the session is deleted (last added, first run)."""
        self._closers.insert(0, callback)

    def close(self):
        """Runs what was attached (listeners first), deletes the session, then closes its receiver."""
        receivers = [c for c in self._closers if getattr(c, "__self__", None) is self.webhooks and self.webhooks is not None]
        others = [c for c in self._closers if c not in receivers]
        self._closers = []
        try:
            for callback in others:
                callback()
            answer = self.server.control("DELETE", f"/sessions/{self.id}")
            if answer.status not in (204, 404):
                raise SandboxError(f"deleting session {self.id}: {answer!r}")
        finally:
            for callback in receivers:
                callback()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def check_model(value, model):
    """Asserts that value has every required key of a TypedDict of service_sandbox.models and no key the model
    does not name (one level deep); returns value, typed as the model."""
    required = getattr(model, "__required_keys__", frozenset())
    known = required | getattr(model, "__optional_keys__", frozenset())
    if not isinstance(value, dict):
        raise AssertionError(f"{model.__name__}: not an object: {value!r}")
    missing = sorted(required - value.keys())
    unknown = sorted(value.keys() - known)
    if missing or unknown:
        raise AssertionError(f"{model.__name__}: missing {missing}, unknown {unknown}")
    return value


def _iso_ms(instant):
    from datetime import datetime

    return datetime.fromisoformat(instant.replace("Z", "+00:00")).timestamp() * 1000
