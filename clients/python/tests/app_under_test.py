"""A small app under test, as a team adopting the emulator has one: a payments service with its own webhook
endpoint (http.server on a free port) that verifies each delivery with the kit's verifier and records each event
once (docs/clients.md#python). The tests feed it through the kit's forwarding, never through the kit's receiver."""

import http.server
import json
import threading
from typing import Any, Dict, List, Set

from service_sandbox import read_request_body, verify_webhook


class PaymentsApp:
    def __init__(self, webhook_secret: str, path: str = "/hooks/service") -> None:
        self.secret = webhook_secret
        self.events: List[Dict[str, Any]] = []
        self.refused: List[str] = []
        self.paths: List[str] = []  # the request target of every delivery, as it arrived
        self._seen: Set[str] = set()
        self._lock = threading.Lock()
        app = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                try:
                    raw = read_request_body(self)  # by Content-Length or chunked
                except ValueError:
                    status = 400
                else:
                    status = app.receive(self.headers, raw, self.path)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.webhook_url = f"http://127.0.0.1:{self.http.server_address[1]}{path}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def receive(self, headers: Any, raw: bytes, path: str) -> int:
        result = verify_webhook(headers, raw, self.secret, path=path)
        with self._lock:
            self.paths.append(path)
            if not result:
                self.refused.append(str(result.reason))
                return 401
            event = json.loads(raw)
            event_id = event["metadata"]["eventId"]
            if event_id not in self._seen:  # a retry or duplicate: 200, recorded once
                self._seen.add(event_id)
                self.events.append(event)
            return 200

    def statuses(self, transaction_id: str) -> List[str]:
        with self._lock:
            return [e["transaction"]["status"] for e in self.events if e["transaction"]["id"] == transaction_id]

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()
