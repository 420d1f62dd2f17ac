"""A webhook receiver for tests: an HTTP server on a thread that verifies every delivery, deduplicates on
``metadata.eventId`` and records what it got (docs/clients.md#python, docs/webhooks.md). It judges each request by
the rule set every kit's receiver follows (docs/clients.md#receivers-one-rule-set)."""

from __future__ import annotations

import http.server
import json
import re
import sys
import threading
from email.message import Message
from types import TracebackType
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Type

from .signing import WEBHOOK_TOLERANCE_MS, http_header, verify_webhook

Event = Dict[str, Any]

#: A connection that sends nothing for this long is closed (docs/clients.md#receivers-one-rule-set, rule 2).
IDLE_TIMEOUT_MS = 10_000
#: Bodies are read in pieces of this size, so a Content-Length larger than what comes never allocates it all.
_READ_PIECE = 64 * 1024
_DIGITS = re.compile(r"[0-9]+")
_CHUNK_SIZE = re.compile(r"[0-9a-fA-F]+")
_LINE_LIMIT = 65536


def _read_exactly(rfile: Any, length: int) -> bytes:
    pieces: List[bytes] = []
    while length > 0:
        piece = rfile.read(min(length, _READ_PIECE))
        if not piece:
            raise ValueError("the connection ended before the body did")
        pieces.append(piece)
        length -= len(piece)
    return b"".join(pieces)


def _read_line(rfile: Any) -> bytes:
    line: bytes = rfile.readline(_LINE_LIMIT + 1)
    if len(line) > _LINE_LIMIT or not line.endswith(b"\n"):
        raise ValueError("a chunk line is too long or the connection ended")
    return line.rstrip(b"\r\n")


def _read_chunked(rfile: Any) -> bytes:
    pieces: List[bytes] = []
    while True:
        size_text = _read_line(rfile).split(b";", 1)[0].strip(b" \t").decode("latin-1")
        if not _CHUNK_SIZE.fullmatch(size_text) or len(size_text) > 16:
            raise ValueError(f"chunk size {size_text[:20]!r} is not hex digits")
        size = int(size_text, 16)
        if size == 0:
            while _read_line(rfile):  # trailer fields, up to the empty line
                pass
            return b"".join(pieces)
        pieces.append(_read_exactly(rfile, size))
        if _read_line(rfile) != b"":
            raise ValueError("a chunk is longer than its size says")


def read_request_body(handler: http.server.BaseHTTPRequestHandler) -> bytes:
    """The whole body of the request an http.server handler is answering, whatever its framing: chunked
    (``Transfer-Encoding: chunked``), ``Content-Length``, or neither (no body). ValueError when the framing is
    broken: a Content-Length that is not a number (negative, or sent twice with ", "), both headers at once, another
    transfer coding, a malformed chunk, or a connection that ends before the body does; answer it with a 400
    (docs/clients.md#receivers-one-rule-set, rule 2)."""
    headers: Message = handler.headers
    encoding = http_header(headers, "Transfer-Encoding")
    length = http_header(headers, "Content-Length")
    if encoding is not None:
        if length is not None:
            raise ValueError("both Transfer-Encoding and Content-Length")
        if encoding.rsplit(",", 1)[-1].strip(" \t").lower() != "chunked":
            raise ValueError(f"Transfer-Encoding {encoding!r} does not end with chunked")
        return _read_chunked(handler.rfile)
    if length is None:
        return b""
    if not _DIGITS.fullmatch(length) or len(length) > 18:
        raise ValueError(f"Content-Length {length[:20]!r} is not a number of bytes")
    return _read_exactly(handler.rfile, int(length))


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else None


def _event_id(body: Any) -> Optional[str]:
    """metadata.eventId when body is a JSON object whose metadata is an object with a non-empty string eventId."""
    event_id = _field(_field(body, "metadata"), "eventId")
    return event_id if isinstance(event_id, str) and event_id else None


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json(raw: bytes) -> Any:
    """The body as JSON as JSON.parse reads it (the reference receiver's): UTF-8 text, no byte order mark, no NaN or
    Infinity; None when it is not."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep, an integer too long
        return None


class WebhookReceiver:
    """Listens on 127.0.0.1 (a free port unless given) and judges every request by the rule set of every kit's
    receiver (docs/clients.md#receivers-one-rule-set), the first rule that applies giving the answer:

    - a method other than POST: 401, reason ``METHOD``;
    - a Content-Length that is not a number, or broken chunked framing: 400 (not kept: there is no delivery);
    - X-Service-Api-Key, X-Service-Timestamp or X-Service-Signature missing or empty: 401, ``MISSING_HEADER``;
    - another X-Service-Api-Key than the one given (or none given yet): 401, ``UNKNOWN_KEY``;
    - not genuine (``verify_webhook``'s reasons: malformed, stale or future timestamp, bad signature): 401;
    - genuine, but the body not a JSON object with a non-empty string ``metadata.eventId``: 401, ``NOT_JSON``;
    - genuine and new: 200, the parsed body appended to ``events`` (each event once, in arrival order);
    - genuine, an ``eventId`` already seen (a retry, a replay, a chaos duplicate): 200, appended to ``duplicates``.

    Header values are read without the spaces and tabs around them, a header sent twice as its values joined with
    ", " (so malformed). Each 401 is kept in ``rejected`` as ``{"reason", "detail", "headers", "body"}``. A connection
    that sends nothing for ``idle_timeout_ms`` is closed. ``deliveries`` is every genuine delivery, duplicates
    included. Everything is recorded before the answer is sent, so once the emulator's settle has answered, the
    lists hold every attempt it made."""

    def __init__(self, api_key: Optional[str] = None, secret: Optional[str] = None, path: str = "/webhooks", port: int = 0, tolerance_ms: int = WEBHOOK_TOLERANCE_MS, idle_timeout_ms: int = IDLE_TIMEOUT_MS) -> None:
        if not path.startswith("/"):
            raise ValueError(f"path {path!r}: a URL path such as /webhooks")
        if isinstance(idle_timeout_ms, bool) or not isinstance(idle_timeout_ms, (int, float)) or idle_timeout_ms <= 0:
            raise ValueError(f"idle_timeout_ms {idle_timeout_ms!r}: milliseconds, more than 0")
        self.path = path
        self.api_key = api_key
        self.secret = secret
        self.tolerance_ms = tolerance_ms
        self.idle_timeout_ms = idle_timeout_ms
        self.events: List[Event] = []
        self.duplicates: List[Event] = []
        self.deliveries: List[Event] = []
        self.rejected: List[Dict[str, Any]] = []
        self._seen: Set[str] = set()
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # Read by StreamRequestHandler.setup() as the socket's timeout: an idle connection is closed (rule 2).
            timeout = idle_timeout_ms / 1000

            def __getattr__(self, name: str) -> Any:
                # http.server answers 501 to a method it has no do_ method for; every method gets rule 1 instead.
                if name.startswith("do_"):
                    return self._answer
                raise AttributeError(name)

            def _answer(self) -> None:
                try:
                    raw: Optional[bytes] = read_request_body(self)
                except ValueError:
                    raw = None
                    self.close_connection = True  # the rest of the stream cannot be framed
                if self.command != "POST":
                    status = receiver._refuse("METHOD", f"{self.command} is not POST", self.headers, raw or b"")
                elif raw is None:
                    status = 400
                else:
                    status = receiver._receive(self.headers, raw)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet test output

        self.server = _QuietServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        # close() waits for serve_forever to notice: a short poll keeps it from adding half a second per receiver.
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), name="service-sandbox-receiver", daemon=True)
        self._thread.start()

    def expect(self, api_key: str, secret: str) -> None:
        """The webhook key and secret to verify with (a session's ``credentials["webhook"]``)."""
        self.api_key, self.secret = api_key, secret

    def _refuse(self, reason: str, detail: str, headers: Message, raw: bytes) -> int:
        with self._lock:
            self.rejected.append({"reason": reason, "detail": detail, "headers": dict(headers.items()), "body": raw})
        return 401

    def _receive(self, headers: Message, raw: bytes) -> int:
        names = ("X-Service-Api-Key", "X-Service-Timestamp", "X-Service-Signature")
        values = [http_header(headers, name) for name in names]
        missing = [name for name, value in zip(names, values) if not value]
        if missing:
            return self._refuse("MISSING_HEADER", f"missing {', '.join(missing)}", headers, raw)
        if self.api_key is None or self.secret is None or values[0] != self.api_key:
            expected = f"expected {self.api_key!r}" if self.api_key is not None and self.secret is not None else "no key given yet (expect())"
            return self._refuse("UNKNOWN_KEY", f"signed with key {values[0]!r}, {expected}", headers, raw)
        result = verify_webhook(headers, raw, self.secret, path=self.path, api_key=self.api_key, tolerance_ms=self.tolerance_ms)
        if not result.valid:
            return self._refuse(result.reason or "SIGNATURE_MISMATCH", result.detail, headers, raw)
        body = _json(raw)
        event_id = _event_id(body)
        if event_id is None:
            return self._refuse("NOT_JSON", "the body is not a JSON object with a string metadata.eventId", headers, raw)
        with self._lock:
            self.deliveries.append(body)
            if event_id in self._seen:
                self.duplicates.append(body)
            else:
                self._seen.add(event_id)
                self.events.append(body)
        return 200

    def find(self, predicate: Callable[[Event], bool]) -> Event:
        """The first event for which predicate(event) is true; AssertionError (a test assertion) listing what
        came when none is. No waiting: settle the session first."""
        with self._lock:
            found = next((event for event in self.events if predicate(event)), None)
            if found is None:
                raise AssertionError(f"no matching webhook; received {self.summary()}, rejected {[r['reason'] for r in self.rejected]}")
            return found

    def for_transaction(self, transaction_id: str) -> List[Event]:
        """This transaction's events, each once, in arrival order."""
        with self._lock:
            return [event for event in self.events if _field(_field(event, "transaction"), "id") == transaction_id]

    def summary(self) -> List[Tuple[Optional[str], Optional[str], Optional[str]]]:
        """(eventType, transaction id, status) of each event, in arrival order."""
        return [(_field(_field(e, "metadata"), "eventType"), _field(_field(e, "transaction"), "id"), _field(_field(e, "transaction"), "status")) for e in list(self.events)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> WebhookReceiver:
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        self.close()


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a peer that went away while being answered: nothing to tell the test
        super().handle_error(request, client_address)
