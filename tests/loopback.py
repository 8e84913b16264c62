"""A tiny HTTP server on 127.0.0.1 that records request bodies and answers with canned JSON.

Tests point a real provider SDK client at it (`base_url=server.url`) to check the exact body the
SDK sends for a compiled payload, without any network beyond loopback. The answer is one canned
JSON value, or a function of the request body (a scripted model, for multi-turn loops).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class LoopbackServer:
    url: str
    response: Any
    requests: list[Recorded] = field(default_factory=list)

    @property
    def last_body(self) -> Any:
        assert self.requests, "the SDK sent no request"
        return self.requests[-1].body


@contextmanager
def loopback_server(response: Any) -> Iterator[LoopbackServer]:
    """Serve `response` for every POST (a JSON value, or a function of the request body that
    returns one); record each request."""
    state = LoopbackServer(url="", response=response)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            body = json.loads(raw or b"null")
            state.requests.append(Recorded("POST", self.path, dict(self.headers.items()), body))
            answer = state.response(body) if callable(state.response) else state.response
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
