"""A webhook receiver for tests: an HTTP server on a thread that verifies every delivery, deduplicates on
``metadata.eventId`` and records what it got (docs/clients.md#python, docs/webhooks.md)."""

from __future__ import annotations

import http.server
import json
import threading
from types import TracebackType
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Type

from .signing import WEBHOOK_TOLERANCE_MS, Headers, verify_webhook

Event = Dict[str, Any]


class WebhookReceiver:
    """Listens on 127.0.0.1 (a free port unless given). Every POST is verified with ``verify_webhook``:

    - genuine and new: 200, the parsed body appended to ``events`` (each event once, in arrival order);
    - genuine, an ``eventId`` already seen (a retry, a replay, a chaos duplicate): 200, appended to ``duplicates``;
    - not genuine (bad signature, stale or future timestamp, another key): 401, ``{"reason", "detail", "headers",
      "body"}`` appended to ``rejected`` (``reason``: one of WEBHOOK_REASONS).

    ``deliveries`` is every verified delivery, duplicates included. Everything is recorded before the answer
    is sent, so once the emulator's settle has answered, the lists hold every attempt it made."""

    def __init__(self, api_key: Optional[str] = None, secret: Optional[str] = None, path: str = "/webhooks", port: int = 0, tolerance_ms: int = WEBHOOK_TOLERANCE_MS) -> None:
        if not path.startswith("/"):
            raise ValueError(f"path {path!r}: a URL path such as /webhooks")
        self.path = path
        self.api_key = api_key
        self.secret = secret
        self.tolerance_ms = tolerance_ms
        self.events: List[Event] = []
        self.duplicates: List[Event] = []
        self.deliveries: List[Event] = []
        self.rejected: List[Dict[str, Any]] = []
        self._seen: Set[Any] = set()
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = receiver._receive(self.headers, raw)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet test output

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="service-sandbox-receiver", daemon=True)
        self._thread.start()

    def expect(self, api_key: str, secret: str) -> None:
        """The webhook key and secret to verify with (a session's ``credentials["webhook"]``)."""
        self.api_key, self.secret = api_key, secret

    def _receive(self, headers: Headers, raw: bytes) -> int:
        reason: Optional[str]
        if self.secret is None:
            reason, detail = "SIGNATURE_MISMATCH", "the receiver has no secret yet (expect())"
        else:
            result = verify_webhook(headers, raw, self.secret, path=self.path, api_key=self.api_key, tolerance_ms=self.tolerance_ms)
            reason, detail = result.reason, result.detail
        body: Any = None
        if reason is None:
            try:
                body = json.loads(raw)
            except ValueError:
                reason, detail = "MALFORMED_BODY", "the body is not JSON"
        with self._lock:
            if reason is not None or not isinstance(body, dict):
                self.rejected.append({"reason": reason or "MALFORMED_BODY", "detail": detail, "headers": dict(headers.items()), "body": raw})
                return 401
            self.deliveries.append(body)
            event_id = (body.get("metadata") or {}).get("eventId")
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
            return [event for event in self.events if (event.get("transaction") or {}).get("id") == transaction_id]

    def summary(self) -> List[Tuple[Optional[str], Optional[str], Optional[str]]]:
        """(eventType, transaction id, status) of each event, in arrival order."""
        return [
            ((e.get("metadata") or {}).get("eventType"), (e.get("transaction") or {}).get("id"), (e.get("transaction") or {}).get("status"))
            for e in list(self.events)
        ]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> WebhookReceiver:
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        self.close()
