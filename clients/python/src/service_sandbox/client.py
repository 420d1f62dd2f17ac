"""The client: the server's control plane (sessions, labels, root snapshots) and one session's API and control
plane, standard library only (docs/clients.md#python). Every duration the kit takes or gives is in
milliseconds, as the API's own (``advance(ms)``, ``settle(timeout_ms=)``, ``timeout_ms=``)."""

from __future__ import annotations

import base64
import http.client
import json
import os
import select
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from datetime import datetime
from email.message import Message
from types import TracebackType
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple, Type, TypeVar, Union, cast

from . import models
from ._version import __version__
from ._target import request_target, split_url
from .errors import NotSettledError, SandboxConnectionError, SandboxError, SandboxHTTPError
from .forwarding import WebhookForwarder
from .receiver import WebhookReceiver
from .signing import signature_headers

DEFAULT_URL = "http://127.0.0.1:4010"
#: Sessions start frozen at this instant unless told otherwise: same ids, times and rail steps on every run.
START_CLOCK = "2026-03-01T12:00:00.000Z"
#: How long a control-plane call may take by default.
DEFAULT_TIMEOUT_MS = 30_000

Body = Union[bytes, bytearray, str, Mapping[str, Any], List[Any], None]
T = TypeVar("T")


class VersionMismatchWarning(UserWarning):
    """The server's version (GET /_emulator/health) differs from this kit's ``__version__``."""


# Once per process and server URL (docs/clients.md#python): which URLs were checked.
_versions_checked: Set[str] = set()
_versions_lock = threading.Lock()
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class Response:
    """An HTTP answer: ``status``, ``headers``, ``body`` (bytes) and ``json()``. A 4xx or 5xx is an answer, not
    an exception."""

    def __init__(self, status: int, headers: Message, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def __repr__(self) -> str:
        return f"<Response {self.status} {self.body[:300]!r}>"


class _KeptAlive(threading.local):
    """This thread's kept-alive connections, one per origin (docs/clients.md#connections): a new TCP connection per
    request cost about 0.3 ms of every call. Per thread because an http.client connection carries one request at a
    time; dropped in a forked child, whose parent still owns the sockets."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.by_origin: Dict[Tuple[str, str, Optional[int]], http.client.HTTPConnection] = {}


_kept_alive = _KeptAlive()
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


def _closed_by_peer(connection: http.client.HTTPConnection) -> bool:
    """A kept connection the server has closed meanwhile (its idle timeout) reads as ready with nothing to read."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _connection(url: urllib.parse.SplitResult, timeout_s: float) -> Tuple[http.client.HTTPConnection, bool]:
    """This thread's connection to url's origin and whether it is a reused one."""
    if _kept_alive.pid != os.getpid():
        _kept_alive.pid = os.getpid()
        _kept_alive.by_origin = {}
    origin = (url.scheme, url.hostname or "", url.port)
    kept = _kept_alive.by_origin.get(origin)
    if kept is not None and not _closed_by_peer(kept):
        if kept.sock is not None:
            kept.sock.settimeout(timeout_s)
        return kept, True
    if kept is not None:
        kept.close()
    factory = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    fresh = factory(url.hostname or "", url.port, timeout=timeout_s)
    _kept_alive.by_origin[origin] = fresh
    return fresh, False


def _drop(url: urllib.parse.SplitResult) -> None:
    kept = _kept_alive.by_origin.pop((url.scheme, url.hostname or "", url.port), None)
    if kept is not None:
        kept.close()


def _through_proxy(url: urllib.parse.SplitResult) -> bool:
    """urllib's own rule: a proxy set for the scheme (HTTP_PROXY, ...) and the host not in NO_PROXY."""
    return url.scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(url.hostname or "")


def _connection_failure(error: BaseException, method: str, url: str, timeout_ms: int) -> SandboxConnectionError:
    """What a transport failure means for the caller, as the kit's own error (docs/clients.md#python)."""
    if isinstance(error, ConnectionRefusedError):
        what = "nothing answers there (connection refused): is the emulator running at this URL (SANDBOX_URL)?"
    elif isinstance(error, (socket.timeout, TimeoutError)):
        what = f"no answer within {timeout_ms} ms (timeout)"
    elif isinstance(error, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.IncompleteRead)):
        what = "the connection closed before the answer came"
        if method not in _IDEMPOTENT:
            what += f"; a {method} is not sent again (it may have acted on the server)"
    else:
        what = "the request failed"
    return SandboxConnectionError(f"{method} {url}: {what} ({type(error).__name__}: {error})")


def http_send(request: urllib.request.Request, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Response:
    """Sends request on this thread's kept-alive connection to its origin (docs/clients.md#connections); an error
    status is returned as a Response. Through urllib (a new connection each time) when a proxy applies to the URL.
    The target sent is request_target's: non-ASCII percent-encoded, an empty query left out, as it is signed.
    SandboxConnectionError when the server cannot be reached or the connection fails before the answer,
    SandboxTargetError when the URL cannot be sent."""
    method = request.get_method()
    url = urllib.parse.urlsplit(request.full_url)
    if url.scheme in ("http", "https"):
        origin, target = split_url(request.full_url)
        request.full_url = origin + target  # what urllib sends too, through a proxy
    try:
        return _http_send(request, method, timeout_ms)
    except SandboxError:
        raise
    except (OSError, http.client.HTTPException) as error:
        raise _connection_failure(error, method, request.full_url, timeout_ms) from error


def _http_send(request: urllib.request.Request, method: str, timeout_ms: int) -> Response:
    url = urllib.parse.urlsplit(request.full_url)
    if url.scheme not in ("http", "https") or _through_proxy(url):
        try:
            with urllib.request.urlopen(request, timeout=timeout_ms / 1000) as answer:
                return Response(answer.status, answer.headers, answer.read())
        except urllib.error.HTTPError as error:
            return Response(error.code, error.headers, error.read())
        except urllib.error.URLError as error:
            # urllib wraps the socket's error; the caller is told about that one
            raise (error.reason if isinstance(error.reason, OSError) else error) from error
    target = request_target(request.full_url)
    headers = dict(request.header_items())
    while True:
        connection, reused = _connection(url, timeout_ms / 1000)
        try:
            connection.request(method, target, body=request.data, headers=headers)
            answer = connection.getresponse()
            body = answer.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            _drop(url)
            # a reused connection the server closed as the request left: sent again on a new one, when sending
            # twice cannot do anything twice (a POST is not sent again)
            if reused and method in _IDEMPOTENT:
                continue
            raise
        except BaseException:
            _drop(url)
            raise
        if answer.will_close:
            _drop(url)
        return Response(answer.status, answer.headers, body)


def raw_body(body: Body) -> Optional[bytes]:
    """The bytes sent (and signed): bytes as given, str as UTF-8, anything else as json.dumps."""
    if body is None:
        return None
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


def _expect(answer: Response, status: Union[int, tuple[int, ...]], what: str) -> Any:
    wanted = status if isinstance(status, tuple) else (status,)
    if answer.status not in wanted:
        raise SandboxHTTPError(what, answer.status, answer.body, expected=wanted[0])
    return answer.json()


def _ms(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what}: milliseconds as a number, got {value!r}")
    if value < 0:
        raise ValueError(f"{what}: milliseconds, not negative ({value})")
    return int(value)


def _query(filters: Mapping[str, Any]) -> str:
    query = urllib.parse.urlencode({key: value for key, value in filters.items() if value is not None})
    return f"?{query}" if query else ""


class Server:
    """One emulator process: its control plane. ``url`` (default SANDBOX_URL, else http://127.0.0.1:4010) and
    ``admin_token`` (default SANDBOX_ADMIN_TOKEN), sent as ``Authorization: Bearer`` on control-plane calls."""

    def __init__(self, url: Optional[str] = None, admin_token: Optional[str] = None) -> None:
        self.url = (url or os.environ.get("SANDBOX_URL") or DEFAULT_URL).rstrip("/")
        self.admin_token = admin_token if admin_token is not None else os.environ.get("SANDBOX_ADMIN_TOKEN") or None
        self.forwarders: List[WebhookForwarder] = []

    def _headers(self, content_type: Optional[str] = None) -> Dict[str, str]:
        headers = {"Content-Type": content_type} if content_type else {}
        if self.admin_token:
            headers["Authorization"] = f"Bearer {self.admin_token}"
        return headers

    def _send(self, method: str, url: str, data: Optional[bytes], content_type: Optional[str], timeout_ms: int) -> Response:
        headers = self._headers(content_type if data is not None else None)
        return http_send(urllib.request.Request(url, data=data, method=method.upper(), headers=headers), timeout_ms)

    def control(self, method: str, path: str, body: Body = None, timeout_ms: int = DEFAULT_TIMEOUT_MS, base: Optional[str] = None) -> Response:
        """A JSON call to {base or url}/_emulator{path}; body None sends none."""
        self.check_version()
        return self._send(method, f"{base or self.url}/_emulator{path}", raw_body(body), "application/json", timeout_ms)

    def check_version(self) -> Optional[str]:
        """Reads the server's version from /_emulator/health the first time this process talks to its URL and
        warns (VersionMismatchWarning) when it is not this kit's; the version, or None when already checked."""
        with _versions_lock:
            if self.url in _versions_checked:
                return None
            _versions_checked.add(self.url)
        try:
            answer = self._send("GET", f"{self.url}/_emulator/health", None, None, 10_000)
            version = (answer.json() or {}).get("version") if answer.status == 200 else None
        except (OSError, ValueError):
            with _versions_lock:  # not reachable yet: check on a later call
                _versions_checked.discard(self.url)
            return None
        if isinstance(version, str) and version != __version__:
            # Attributed to the first caller outside the kit (the user's test), not to the kit's own frames.
            level, frame = 1, sys._getframe(0)
            while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
                frame, level = frame.f_back, level + 1
            warnings.warn(
                f"service-sandbox: the server at {self.url} is version {version} and this kit (service_sandbox) is {__version__}; "
                f"use the same version of both (docs/clients.md#python)",
                VersionMismatchWarning,
                stacklevel=level,
            )
        return version if isinstance(version, str) else None

    def healthy(self, timeout_ms: int = 2_000) -> bool:
        try:
            answer = self._send("GET", f"{self.url}/_emulator/health", None, None, timeout_ms)
            return answer.status == 200 and (answer.json() or {}).get("status") == "ok"
        except (OSError, ValueError):
            return False

    def create_session(self, label: Optional[str] = None, seed: Optional[str] = None, snapshot: Optional[str] = None, clock: Optional[str] = None, webhook_url: Optional[str] = None, fixtures: Optional[Mapping[str, Any]] = None, wait_ms: int = 120_000, scenario: Union[str, Mapping[str, Any], None] = None, scenario_file: Optional[str] = None) -> Session:
        """POST /_emulator/sessions (docs/sessions.md). Starts frozen at START_CLOCK unless ``clock`` (an instant,
        or "realtime"), ``snapshot`` (a snapshot brings its own clock) or a scenario is given. ``scenario``: the name
        of a scenario the server knows, a scenario file's text, or the scenario as a dict; ``scenario_file``: the path
        of a scenario file (YAML or JSON), read here and sent as text (docs/sessions.md#scenarios). The session then
        starts with the scenario's seed, clock and fixtures and its ``given`` built; ``Session.scenario`` says what it
        made. A 429 (the server's session limit) is waited out as its Retry-After says, for at most ``wait_ms``."""
        if scenario is not None and scenario_file is not None:
            raise ValueError("give scenario or scenario_file, not both")
        if scenario_file is not None:
            with open(scenario_file, encoding="utf-8") as handle:
                scenario = handle.read()
        body: Dict[str, Any] = {}
        if snapshot:
            body["snapshot"] = snapshot
        elif clock or scenario is None:
            body["clock"] = clock or START_CLOCK
        for key, value in (("label", label), ("seed", seed), ("webhookUrl", webhook_url), ("fixtures", fixtures), ("scenario", scenario)):
            if value is not None:
                body[key] = value
        deadline = time.monotonic() + _ms(wait_ms, "wait_ms") / 1000
        while True:
            answer = self.control("POST", "/sessions", body)
            if answer.status != 429 or time.monotonic() > deadline:
                break
            time.sleep(min(float(answer.headers.get("Retry-After") or 1), max(0.0, deadline - time.monotonic())))
        return Session(self, cast(models.Session, _expect(answer, 201, "creating a session")))

    def end_label(self, label: str) -> List[str]:
        """DELETE /_emulator/sessions?label=...: ends every session of a run; the ids it ended."""
        answer = self.control("DELETE", "/sessions" + _query({"label": label}))
        return cast(List[str], _expect(answer, 200, f"ending label {label}").get("ended", []))

    def end_session(self, session_id: str) -> bool:
        """DELETE /_emulator/sessions/{id}: whether it ended it (False: it was gone already)."""
        answer = self.control("DELETE", f"/sessions/{urllib.parse.quote(session_id, safe='')}")
        _expect(answer, (204, 404), f"ending session {session_id}")
        return answer.status == 204

    def sessions(self) -> List[models.Session]:
        return cast(List[models.Session], _expect(self.control("GET", "/sessions"), 200, "listing sessions")["data"])

    def forward_webhooks(self, app_url: str) -> WebhookForwarder:
        """The root sandbox's webhooks to ``app_url`` through the relay (docs/webhooks.md#listen), started; stop it
        with ``stop()`` or a ``with`` block (the pytest plugin stops it at the end of the test)."""
        forwarder = WebhookForwarder(self.url, app_url, self.admin_token).start()
        self.forwarders.append(forwarder)
        return forwarder

    # The root sandbox's snapshots: a session can start from them (docs/sessions.md#what-a-session-starts-from).
    def save_snapshot(self, name: str) -> models.Snapshot:
        return cast(models.Snapshot, _expect(self.control("POST", "/snapshots", {"name": name}), (200, 201), f"saving snapshot {name}"))

    def upload_snapshot(self, name: str, data: bytes) -> models.Snapshot:
        """PUT /_emulator/snapshots/{name}: an exported file (Session.export_snapshot) becomes a root snapshot,
        which sessions can start from (docs/control-plane.md#snapshots)."""
        self.check_version()
        answer = self._send("PUT", f"{self.url}/_emulator/snapshots/{urllib.parse.quote(name)}", data, "application/octet-stream", DEFAULT_TIMEOUT_MS)
        return cast(models.Snapshot, _expect(answer, (200, 201), f"uploading snapshot {name}"))

    def delete_snapshot(self, name: str) -> None:
        _expect(self.control("DELETE", f"/snapshots/{urllib.parse.quote(name)}"), (204, 404), f"deleting snapshot {name}")


class Session:
    """One isolated sandbox (docs/sessions.md): ``id``, ``base_url``, ``credentials``; signed API calls and its
    own control plane. ``webhooks`` is its WebhookReceiver once one is attached (``listen()``, ``receiver()``,
    ``attach_receiver``). A context manager: ``close()`` at the end."""

    def __init__(self, server: Server, session: models.Session) -> None:
        self.server = server
        self.session = session
        self.id: str = session["id"]
        self.base_url: str = session["baseUrl"].rstrip("/")
        self.prefix = urllib.parse.urlsplit(self.base_url).path  # /_sessions/ses_...: part of every signed target
        self.credentials: models.SessionCredentials = session["credentials"]
        # the scenario it started from: name, source, steps, and given (each name the scenario made -> its id)
        self.scenario: Optional[Dict[str, Any]] = cast(Optional[Dict[str, Any]], cast(Dict[str, Any], session).get("scenario"))
        self.webhooks: Optional[WebhookReceiver] = None
        self.forwarders: List[WebhookForwarder] = []
        self._before_end: List[Callable[[], None]] = []
        self._after_end: List[Callable[[], None]] = []

    # --- the API, signed -------------------------------------------------------------------------------

    def _key(self, user: Optional[str], key: Optional[str]) -> Dict[str, str]:
        name = key or ("multi" if user else "single")
        if name not in ("single", "multi"):
            raise ValueError(f'key {key!r}: "single" or "multi"')
        credentials = cast(Dict[str, Optional[Dict[str, str]]], self.credentials).get(name)
        if credentials is None:
            raise ValueError(f"this session has no {name} key")
        return credentials

    def signature_headers(self, method: str, path: str, body: Body = None, user: Optional[str] = None, key: Optional[str] = None) -> Dict[str, str]:
        """The signing headers for base_url + path (payout variant under /v1/payout-origination/), for tests
        that alter them before ``send``."""
        credentials = self._key(user, key)
        target = request_target(self.base_url + path)  # the target as http_send sends it
        return signature_headers(credentials["apiKey"], credentials["secret"], self.credentials["programmeId"], method, target, raw_body(body) or b"", user_id=user)

    def send(self, method: str, path: str, body: Body = None, headers: Optional[Mapping[str, str]] = None, content_type: str = "application/json") -> Response:
        """Sends as given, unsigned: base_url + path, the body as raw bytes."""
        if not path.startswith("/"):
            raise ValueError(f"path {path!r}: starts with /, such as /v1/accounts")
        data = raw_body(body)
        all_headers = {"Content-Type": content_type} if data is not None else {}
        all_headers.update(headers or {})
        return http_send(urllib.request.Request(self.base_url + path, data=data, method=method.upper(), headers=all_headers))

    def request(self, method: str, path: str, body: Body = None, user: Optional[str] = None, key: Optional[str] = None, headers: Optional[Mapping[str, str]] = None) -> Response:
        """A signed /v1 call. Default key: SINGLE_USER (usr_acme); user=: the MULTI_USER key acting for that
        user; key="multi" without a user: programme-level calls."""
        data = raw_body(body)
        signed = self.signature_headers(method, path, data, user=user, key=key)
        signed.update(headers or {})
        return self.send(method, path, data, signed)

    def get(self, path: str, user: Optional[str] = None, key: Optional[str] = None, headers: Optional[Mapping[str, str]] = None) -> Response:
        return self.request("GET", path, user=user, key=key, headers=headers)

    def post(self, path: str, body: Body = None, user: Optional[str] = None, key: Optional[str] = None, headers: Optional[Mapping[str, str]] = None) -> Response:
        return self.request("POST", path, body, user=user, key=key, headers=headers)

    def payout(self, fmt: str, payload: Union[bytes, str, Mapping[str, Any]], idempotency_key: str, user: Optional[str] = None, key: Optional[str] = None) -> Response:
        """POST /v1/payout-origination/{json|pacs008} (docs/payouts.md): payload (a dict for json, XML text or
        bytes for pacs008) sent as Base64 text/plain with the payout signature and Idempotency-Key."""
        if fmt not in ("json", "pacs008"):
            raise ValueError(f'fmt {fmt!r}: "json" or "pacs008"')
        data = raw_body(payload if isinstance(payload, (bytes, str)) else json.dumps(payload)) or b""
        body = base64.b64encode(data)
        path = f"/v1/payout-origination/{fmt}"
        headers = self.signature_headers("POST", path, body, user=user, key=key)
        headers["Idempotency-Key"] = idempotency_key
        return self.send("POST", path, body, headers, content_type="text/plain")

    # --- the session's control plane (docs/control-plane.md) -------------------------------------------

    def control(self, method: str, path: str, body: Body = None, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Response:
        """{base_url}/_emulator{path}."""
        return self.server.control(method, path, body, timeout_ms=timeout_ms, base=self.base_url)

    def now(self) -> str:
        return cast(str, _expect(self.control("GET", "/clock"), 200, "reading the clock")["now"])

    def advance(self, ms: int) -> models.Clock:
        """Moves the clock on by ``ms`` milliseconds; the jobs due meanwhile have run when it answers."""
        return cast(models.Clock, _expect(self.control("POST", "/clock", {"advanceMs": _ms(ms, "advance")}), 200, "advancing the clock"))

    def freeze_at(self, instant: str) -> models.Clock:
        return cast(models.Clock, _expect(self.control("POST", "/clock", {"freezeAt": instant}), 200, "freezing the clock"))

    def settle(self, timeout_ms: int = 10_000) -> models.SettleReport:
        """POST /_emulator/settle: answers once every job due now ran and every due delivery was attempted and
        answered (docs/control-plane.md#settle). Instead of sleeping for webhooks. NotSettledError when it was
        not within ``timeout_ms``."""
        timeout_ms = _ms(timeout_ms, "timeout_ms")
        report = cast(models.SettleReport, _expect(self.control("POST", "/settle", {"timeoutMs": timeout_ms}, timeout_ms=timeout_ms + 30_000), 200, "settling"))
        if not report.get("settled"):
            raise NotSettledError(timeout_ms, report)
        return report

    def settle_until_idle(self, max_rounds: int = 20) -> models.SettleReport:
        """Settles, and while deliveries wait for a later emulated time (retries), advances the clock to the
        next due instant and settles again. The final report."""
        report = self.settle()
        for _ in range(max_rounds):
            next_due = report.get("nextDueAt")
            if report["waiting"]["deliveries"] == 0 or not next_due:
                return report
            self.advance(max(1, _iso_ms(next_due) - _iso_ms(report["now"])))
            report = self.settle()
        return report

    def snapshot(self, name: str) -> models.Snapshot:
        return cast(models.Snapshot, _expect(self.control("POST", "/snapshots", {"name": name}), (200, 201), f"saving snapshot {name}"))

    def export_snapshot(self, name: str) -> bytes:
        """The snapshot as one file (bytes of a SQLite database)."""
        answer = self.control("GET", f"/snapshots/{urllib.parse.quote(name)}/export")
        if answer.status != 200:
            raise SandboxHTTPError(f"exporting snapshot {name}", answer.status, answer.body, expected=200)
        return answer.body

    def restore(self, name: str) -> Any:
        return _expect(self.control("POST", f"/snapshots/{urllib.parse.quote(name)}/restore"), 200, f"restoring {name}")

    def reset(self) -> Any:
        """POST /_emulator/reset. The session's running forwarders have connected again when it returns (a reset
        ends their stream; docs/webhooks.md#listen)."""
        running = [(forwarder, forwarder.ready_count) for forwarder in self.forwarders if forwarder.running]
        answer = _expect(self.control("POST", "/reset"), 200, "resetting")
        for forwarder, count in running:
            if not forwarder.wait_ready(after=count):
                raise SandboxError(f"{forwarder!r} did not connect again after the reset: {forwarder.stopped_reason}")
        return answer

    def add_fault(self, effect: Mapping[str, Any], match: Optional[Mapping[str, Any]] = None, times: Optional[int] = None, probability: Optional[float] = None, seed: Optional[str] = None) -> models.FaultRule:
        """POST /_emulator/faults (docs/faults.md#fault-rules); the rule."""
        body: Dict[str, Any] = {"effect": effect}
        for key, value in (("match", match), ("times", times), ("probability", probability), ("seed", seed)):
            if value is not None:
                body[key] = value
        return cast(models.FaultRule, _expect(self.control("POST", "/faults", body), 201, "adding a fault rule"))

    def faults(self) -> List[models.FaultRule]:
        return cast(List[models.FaultRule], _expect(self.control("GET", "/faults"), 200, "listing fault rules")["data"])

    def fault(self, rule_id: str) -> models.FaultRule:
        return cast(models.FaultRule, _expect(self.control("GET", f"/faults/{urllib.parse.quote(rule_id)}"), 200, f"reading fault {rule_id}"))

    def clear_faults(self) -> None:
        _expect(self.control("DELETE", "/faults"), 204, "removing fault rules")

    def set_chaos(self, **settings: Any) -> models.WebhookChaos:
        """PUT /_emulator/webhooks/chaos (docs/faults.md#webhook-chaos): set_chaos(duplicate={"times": 1}, seed="x")."""
        return cast(models.WebhookChaos, _expect(self.control("PUT", "/webhooks/chaos", settings), 200, "setting webhook chaos"))

    def chaos(self) -> models.WebhookChaos:
        return cast(models.WebhookChaos, _expect(self.control("GET", "/webhooks/chaos"), 200, "reading webhook chaos"))

    def clear_chaos(self) -> None:
        _expect(self.control("DELETE", "/webhooks/chaos"), 204, "turning webhook chaos off")

    def deliveries(self, **filters: Any) -> List[models.WebhookDelivery]:
        """The delivery log (docs/webhooks.md#delivery-log-and-replay): filters status, eventType,
        transactionId, pageSize, ...; the list of deliveries, each with its attempts."""
        return cast(List[models.WebhookDelivery], _expect(self.control("GET", "/webhooks/deliveries" + _query(filters)), 200, "reading the delivery log")["data"])

    def delivery(self, delivery_id: str) -> models.WebhookDelivery:
        return cast(models.WebhookDelivery, _expect(self.control("GET", f"/webhooks/deliveries/{urllib.parse.quote(delivery_id)}"), 200, f"reading delivery {delivery_id}"))

    def replay(self, delivery_id: str) -> Any:
        return _expect(self.control("POST", f"/webhooks/deliveries/{urllib.parse.quote(delivery_id)}/replay"), 200, f"replaying {delivery_id}")

    def set_webhook_url(self, url: str, programme_id: Optional[str] = None) -> models.WebhookEndpoints:
        body = {"url": url}
        if programme_id:
            body["programId"] = programme_id
        return cast(models.WebhookEndpoints, _expect(self.control("PUT", "/webhooks/endpoint", body), 200, "setting the webhook endpoint"))

    def requests(self, **filters: Any) -> List[models.JournalEntry]:
        """The request journal (docs/test-kit.md#request-journal)."""
        return cast(List[models.JournalEntry], _expect(self.control("GET", "/requests" + _query(filters)), 200, "reading the journal")["data"])

    # --- webhooks and the end --------------------------------------------------------------------------

    def forward_webhooks(self, app_url: str) -> WebhookForwarder:
        """This session's webhook deliveries to ``app_url`` (the app under test's own endpoint) through the relay
        (docs/webhooks.md#listen): every programme's endpoint becomes app_url and each attempt is posted there
        with its headers and bytes, signed for app_url's path. Started when it returns; stopped by ``stop()``, a
        ``with`` block, or when the session ends."""
        forwarder = WebhookForwarder(self.base_url, app_url, self.server.admin_token, session_id=self.id).start()
        self.forwarders.append(forwarder)
        self._before_end.append(forwarder.stop)
        return forwarder

    def attach_receiver(self, receiver: Optional[WebhookReceiver] = None, url: bool = True) -> WebhookReceiver:
        """A verifying WebhookReceiver for this session's webhook key; with url=True the session's endpoint is
        pointed at it (the emulator posts to it directly). Closed with the session."""
        if self.webhooks is not None:
            raise ValueError(f"session {self.id} has a receiver already (session.webhooks)")
        receiver = receiver or WebhookReceiver()
        receiver.expect(self.credentials["webhook"]["apiKey"], self.credentials["webhook"]["secret"])
        self.webhooks = receiver
        self._after_end.append(receiver.close)
        if url:
            self.set_webhook_url(receiver.url)
        return receiver

    def listen(self) -> WebhookReceiver:
        """A verifying receiver fed through forward_webhooks: the emulator never connects to the test."""
        receiver = self.attach_receiver(WebhookReceiver(), url=False)
        self.forward_webhooks(receiver.url)
        return receiver

    def receiver(self) -> WebhookReceiver:
        """A verifying receiver the emulator posts to directly (the session's webhook endpoint)."""
        return self.attach_receiver(WebhookReceiver(), url=True)

    def on_close(self, callback: Callable[[], None]) -> None:
        """callback() runs at close(), before the session is deleted (last added, first run)."""
        self._before_end.insert(0, callback)

    def close(self) -> None:
        """Stops forwarders and runs on_close callbacks, deletes the session, then closes its receiver."""
        before, after = self._before_end, self._after_end
        self._before_end, self._after_end = [], []
        try:
            for callback in before:
                callback()
            _expect(self.server.control("DELETE", f"/sessions/{self.id}"), (204, 404), f"deleting session {self.id}")
        finally:
            for callback in after:
                callback()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Session {self.id} {self.base_url}>"


def check_model(value: Any, model: Type[T]) -> T:
    """Asserts (AssertionError, a test assertion) that value has every required key of a TypedDict of
    service_sandbox.models and no key the model does not name (one level deep); returns value, typed as the
    model."""
    required: frozenset[str] = getattr(model, "__required_keys__", frozenset())
    known = required | getattr(model, "__optional_keys__", frozenset())
    name = getattr(model, "__name__", str(model))
    if not isinstance(value, dict):
        raise AssertionError(f"{name}: not an object: {value!r}")
    missing = sorted(required - value.keys())
    unknown = sorted(value.keys() - known)
    if missing or unknown:
        raise AssertionError(f"{name}: missing {missing}, unknown {unknown}")
    return cast(T, value)


def _iso_ms(instant: str) -> int:
    return int(datetime.fromisoformat(instant.replace("Z", "+00:00")).timestamp() * 1000)
