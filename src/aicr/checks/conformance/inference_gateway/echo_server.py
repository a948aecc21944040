"""The echo backend inference-gateway deploys: every request is answered with its own name.

A program, not a library: the check runs this file's text with ``python3 -c``
in the pinned Python image (``python3 -c <text> NAME PORT``), so it uses the
standard library only. It binds the pod's own IP (``POD_IP``, from the
downward API) and answers every method and path with ``{"backend": NAME}``,
which is how the traffic client counts where each request landed.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def handler(name: str) -> type[BaseHTTPRequestHandler]:
    """A request handler answering 200 with ``name`` for any request."""

    class Echo(BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            body = json.dumps({"backend": name}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = answer

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: 550 requests would flood the pod's log."""

    return Echo


def main(argv: list[str]) -> None:
    """Serve as ``argv[0]`` on port ``argv[1]`` until killed."""
    name, port = argv[0], int(argv[1])
    server = ThreadingHTTPServer((os.environ.get("POD_IP") or "0.0.0.0", port), handler(name))
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
