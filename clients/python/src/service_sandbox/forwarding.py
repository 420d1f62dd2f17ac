"""Webhook forwarding into the app under test, standard library only (docs/webhooks.md#listen,
docs/clients.md#python).

The kit speaks the relay's protocol itself (no Node process): it holds
``GET {base}/_emulator/webhooks/listen/stream?forwardTo=APP_URL`` open on a thread (http.client, text/event-stream),
posts each ``attempt`` to the app with exactly its headers and bytes, and reports the app's answer with
``POST {base}/_emulator/webhooks/listen/{listenerId}/results``. ``{base}`` is the server's URL (the root sandbox)
or a session's base URL. A reset ends the stream with ``closed`` and ``reconnect: true``: the forwarder connects
again at once (the emulator then points the reset sandbox's endpoints at the app again). When the session is gone
(ended, idled out) it stops with one logged line.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
import urllib.parse
from types import TracebackType
from typing import Any, Dict, Iterator, List, Optional, Tuple, Type, Union

from ._target import request_target
from .errors import ForwardingError

log = logging.getLogger("service_sandbox")

#: No byte (the emulator writes a comment every 15 s) for this long: the stream is dead, connect again.
STREAM_IDLE_TIMEOUT_MS = 60_000
#: How long start() waits for the stream's ``ready``.
READY_TIMEOUT_MS = 30_000
#: After the emulator could not be reached mid-run, try again this much later.
RECONNECT_DELAY_MS = 1_000
#: The first bytes of the app's answer reported to the emulator (the delivery log keeps 2 KiB).
ANSWER_BYTES_REPORTED = 4096

Connection = Union[http.client.HTTPConnection, http.client.HTTPSConnection]


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _connection(url: urllib.parse.SplitResult, timeout_s: float) -> Connection:
    host = url.hostname or "127.0.0.1"
    if url.scheme == "https":
        return http.client.HTTPSConnection(host, url.port, timeout=timeout_s)
    return http.client.HTTPConnection(host, url.port, timeout=timeout_s)


def _http_url(value: str, what: str) -> urllib.parse.SplitResult:
    if not isinstance(value, str):
        raise TypeError(f"{what}: a str URL, got {type(value).__name__}")
    parsed = urllib.parse.urlsplit(value)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(f"{what} {value!r}: an http:// or https:// URL, such as http://127.0.0.1:3000/webhooks")
    return parsed


def _server_sent_events(answer: http.client.HTTPResponse) -> Iterator[Tuple[str, str]]:
    """(event, data) of a text/event-stream; comment lines (keep-alives) are skipped."""
    event = "message"
    data: List[str] = []
    while True:
        raw = answer.readline()
        if not raw:
            return
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


class WebhookForwarder:
    """Forwards a sandbox's webhook deliveries to ``app_url`` (``Session.forward_webhooks`` or
    ``Server.forward_webhooks`` make one, started). ``stop()`` (or leaving its ``with`` block) ends it; a session
    stops its forwarders when it ends. ``listener_id`` is the emulator's id for the current stream,
    ``forwarded`` counts the attempts posted to the app, ``stopped_reason`` says why it stopped by itself."""

    def __init__(self, base_url: str, app_url: str, admin_token: Optional[str] = None, *, session_id: Optional[str] = None) -> None:
        self._base = _http_url(base_url, "base_url")
        _http_url(app_url, "app_url")
        self.base_url = base_url.rstrip("/")
        self.app_url = app_url
        self.admin_token = admin_token
        self.session_id = session_id
        self.listener_id: Optional[str] = None
        self.forwarded = 0
        self.stopped_reason: Optional[str] = None
        self._ready_count = 0
        self._failure: Optional[BaseException] = None
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._conn: Optional[Connection] = None
        # The stream's socket: http.client lets go of it (conn.sock is None) once an answer that ends with the
        # connection (Connection: close, HTTP/1.0) has begun, but stop() must still be able to wake the reader.
        self._sock: Optional[socket.socket] = None
        self._thread = threading.Thread(target=self._run, name=f"service-sandbox-forward {app_url}", daemon=True)

    # --- life cycle ------------------------------------------------------------------------------------

    def start(self, ready_timeout_ms: int = READY_TIMEOUT_MS) -> WebhookForwarder:
        """Connects and returns once the emulator has answered ``ready`` (every programme's webhook endpoint is
        then ``app_url``); ForwardingError when it refuses (unknown session, admin token) or is not ready in time."""
        if self._thread.is_alive() or self._stopping.is_set():
            raise ValueError("this forwarder was started already")
        self._thread.start()
        with self._changed:
            self._changed.wait_for(lambda: self._ready_count > 0 or self._failure is not None, ready_timeout_ms / 1000)
            failure = self._failure
            ready = self._ready_count > 0
        if not ready:
            self.stop()
            if isinstance(failure, ForwardingError):
                raise failure
            raise ForwardingError(f"forwarding {self.base_url} to {self.app_url}: no ready from the emulator within {ready_timeout_ms} ms ({failure or 'no answer'})")
        return self

    def stop(self) -> None:
        """Ends the stream (the emulator then fails new attempts to app_url as to an unreachable URL) and waits
        for the thread. Idempotent."""
        self._stopping.set()
        with self._changed:
            conn, sock = self._conn, self._sock
        sock = sock or (conn.sock if conn is not None else None)
        if sock is not None:
            try:  # wakes the thread blocked on the stream
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(10)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def ready_count(self) -> int:
        """How many times the stream has answered ``ready`` (1 after start, one more per reconnect)."""
        with self._changed:
            return self._ready_count

    def wait_ready(self, after: int, timeout_ms: int = READY_TIMEOUT_MS) -> bool:
        """Waits until ``ready_count`` is above ``after`` (connected again after a reset) or the forwarder
        stopped; whether it is."""
        with self._changed:
            return self._changed.wait_for(lambda: self._ready_count > after or not self._thread.is_alive(), timeout_ms / 1000) and self._ready_count > after

    def wait_stopped(self, timeout_ms: int = READY_TIMEOUT_MS) -> bool:
        """Waits for the forwarder to stop (by stop() or by itself: the session gone); whether it has."""
        self._thread.join(timeout_ms / 1000)
        return not self._thread.is_alive()

    def __enter__(self) -> WebhookForwarder:
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<WebhookForwarder {self.base_url} -> {self.app_url} {self.listener_id or 'not connected'}>"

    # --- the stream ------------------------------------------------------------------------------------

    def _headers(self, extra: Dict[str, str]) -> Dict[str, str]:
        if self.admin_token:
            extra["Authorization"] = f"Bearer {self.admin_token}"
        return extra

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                try:
                    if self._listen_once() == "stop":
                        return
                except _Refused as refused:
                    self._refused(refused)
                    return
                except (OSError, http.client.HTTPException) as error:
                    if self._stopping.is_set():
                        return
                    if self.ready_count == 0:  # never connected: start() reports it
                        self._fail(ForwardingError(f"forwarding {self.base_url} to {self.app_url}: cannot reach the emulator ({error})"))
                        return
                    self._stopping.wait(RECONNECT_DELAY_MS / 1000)
        finally:
            with self._changed:
                self._conn = None
                self._sock = None
                self._changed.notify_all()

    def _fail(self, error: BaseException) -> None:
        with self._changed:
            self._failure = error
            self._changed.notify_all()

    def _refused(self, refused: _Refused) -> None:
        if self.ready_count == 0:
            self._fail(ForwardingError(f"forwarding {self.base_url} to {self.app_url}: the emulator refused ({refused.status}): {refused}"))
            return
        if refused.status == 404 and self.session_id:
            self.stopped_reason = f"session {self.session_id} is gone (ended or idled out)"
        else:
            self.stopped_reason = f"the emulator refused to connect again ({refused.status}): {refused}"
        log.warning("service-sandbox: stopped forwarding webhooks to %s: %s", self.app_url, self.stopped_reason)

    def _listen_once(self) -> str:
        """One connection; "stop" when the forwarding must end, "again" when it should connect again."""
        query = urllib.parse.urlencode({"forwardTo": self.app_url})
        conn = _connection(self._base, STREAM_IDLE_TIMEOUT_MS / 1000)
        with self._changed:
            if self._stopping.is_set():
                return "stop"
            self._conn, self._sock = conn, None
        try:
            conn.request("GET", f"{self._base.path.rstrip('/')}/_emulator/webhooks/listen/stream?{query}", headers=self._headers({"Accept": "text/event-stream"}))
            with self._changed:
                self._sock = conn.sock
            if self._stopping.is_set():  # stop() ran before the socket existed: it could not wake us
                return "stop"
            answer = conn.getresponse()
            if answer.status != 200:
                text = answer.read().decode(errors="replace")
                try:
                    message = str(json.loads(text).get("message") or text)
                except (ValueError, AttributeError):
                    message = text
                if 400 <= answer.status < 500:
                    raise _Refused(answer.status, message)
                raise http.client.HTTPException(f"{answer.status} {message}")
            for event, data in _server_sent_events(answer):
                payload: Dict[str, Any] = json.loads(data)
                if event == "ready":
                    with self._changed:
                        self.listener_id = str(payload.get("listenerId"))
                        self._ready_count += 1
                        self._changed.notify_all()
                elif event == "attempt":
                    threading.Thread(target=self._forward, args=(payload,), name="service-sandbox-forward-attempt", daemon=True).start()
                elif event == "replaced":
                    self.stopped_reason = f"another listener ({payload.get('by')}) took over"
                    log.warning("service-sandbox: stopped forwarding webhooks to %s: %s", self.app_url, self.stopped_reason)
                    return "stop"
                elif event == "closed":
                    if payload.get("reconnect") is False:
                        gone = self.session_id is not None and self._session_gone()
                        self.stopped_reason = f"session {self.session_id} is gone (ended or idled out)" if gone else str(payload.get("reason") or "the emulator ended the relay")
                        log.warning("service-sandbox: stopped forwarding webhooks to %s: %s", self.app_url, self.stopped_reason)
                        return "stop"
                    return "again"  # a reset (or the session ending: connecting again tells which)
            if self._stopping.is_set():
                return "stop"
            raise ConnectionResetError("the event stream ended")
        finally:
            conn.close()

    def _session_gone(self) -> bool:
        """Whether the session answers 404 now (the stream's end said no more than that it closed)."""
        conn = _connection(self._base, 10)
        try:
            conn.request("GET", f"{self._base.path.rstrip('/')}/_emulator/clock", headers=self._headers({}))
            answer = conn.getresponse()
            answer.read()
            return answer.status == 404
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    # --- one attempt -----------------------------------------------------------------------------------

    def _forward(self, attempt: Dict[str, Any]) -> None:
        started = time.perf_counter()
        timeout = attempt.get("timeoutMs")
        timeout_ms = int(timeout) if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0 else 10_000
        status: Optional[int] = None
        response_body: Optional[str] = None
        error: Optional[str] = None
        conn: Optional[Connection] = None
        # Every failure of the attempt is its error, reported below: a thread that died unreported left the emulator
        # waiting for its timeout and retrying the same failure forever.
        try:
            app_url = str(attempt.get("url") or self.app_url)
            body = str(attempt.get("body") or "").encode("utf-8")
            # the path as fetch and the emulator's direct delivery send it: non-ASCII percent-encoded (/caf%C3%A9)
            target = request_target(app_url)
            conn = _connection(urllib.parse.urlsplit(app_url), timeout_ms / 1000)
            conn.putrequest("POST", target, skip_accept_encoding=True)
            for name, value in dict(attempt.get("headers") or {}).items():
                if name.lower() not in ("content-length", "host"):
                    conn.putheader(name, str(value))
            conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            answer = conn.getresponse()
            status = answer.status
            text = answer.read(ANSWER_BYTES_REPORTED).decode("utf-8", errors="replace")
            response_body = text or None
        except socket.timeout:
            error = f"no answer within {timeout_ms} ms (timeout)"
        except Exception as failure:  # OSError, HTTPException, a header value with a line break (ValueError), ...
            error = f"{type(failure).__name__}: {failure}"
        finally:
            if conn is not None:
                conn.close()
        latency_ms = round((time.perf_counter() - started) * 1000, 1)
        with self._changed:
            self.forwarded += 1
        report = json.dumps({"attemptId": attempt.get("attemptId"), "status": status, "responseBody": response_body, "error": error, "latencyMs": latency_ms}).encode()
        listener = urllib.parse.quote(str(attempt.get("listenerId") or self.listener_id), safe="")
        results = _connection(self._base, 30)
        try:
            results.request("POST", f"{self._base.path.rstrip('/')}/_emulator/webhooks/listen/{listener}/results", body=report, headers=self._headers({"Content-Type": "application/json"}))
            results.getresponse().read()  # 204, or 404 when the attempt no longer waits (timed out, reset)
        except (OSError, http.client.HTTPException):
            pass  # the stream dropped meanwhile: the emulator counts the attempt as failed and retries it
        finally:
            results.close()
