"""The simulated kubelet's HTTPS endpoint on 127.0.0.1 (one for every node).

Nodes advertise this port as `daemonEndpoints.kubeletEndpoint.Port` with
InternalIP 127.0.0.1, so the API server proxies `pods/log` here. Only a caller
presenting the API server's kubelet client certificate (signed by the cluster
CA) is served. Serves `/containerLogs/{namespace}/{pod}/{container}` with
`tailLines`, `limitBytes`, `timestamps`, `sinceSeconds`, `sinceTime`,
`previous` and `follow`.
"""

from __future__ import annotations

import ssl
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from simcluster.cluster.pki import KUBELET_CLIENT_CN
from simcluster.runtime import logs
from simcluster.runtime.pod_files import PodFiles


def _cn(cert: dict[str, object] | None) -> str:
    for rdn in (cert or {}).get("subject", ()):  # type: ignore[attr-defined]
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return ""


class _Handler(BaseHTTPRequestHandler):
    server: KubeletServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _reply(self, code: int, body: bytes, ctype: str = "text/plain") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        peer = self.connection.getpeercert() if hasattr(self.connection, "getpeercert") else None
        if _cn(peer) != KUBELET_CLIENT_CN:
            self._reply(403, b"forbidden: only the API server may call this kubelet\n")
            return
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        if url.path in ("/healthz", "/readyz"):
            self._reply(200, b"ok")
            return
        if len(parts) != 4 or parts[0] != "containerLogs":
            self._reply(404, b"not found\n")
            return
        self._logs(parts[1], parts[2], parts[3], parse_qs(url.query))

    def _logs(self, ns: str, pod: str, container: str, q: dict[str, list[str]]) -> None:
        def opt(name: str) -> str | None:
            return q[name][0] if name in q else None

        files = PodFiles.find(self.server.pods_dir, ns, pod)
        if files is None:
            # A pod KWOK plays: it has no process, hence no output.
            self._reply(200, b"")
            return
        path = files.log_path(container, previous=opt("previous") == "true")
        since = None
        if opt("sinceSeconds"):
            since = datetime.now(UTC) - timedelta(seconds=int(opt("sinceSeconds") or 0))
        elif opt("sinceTime"):
            since = datetime.fromisoformat((opt("sinceTime") or "").replace("Z", "+00:00"))
        kwargs = {
            "timestamps": opt("timestamps") == "true",
            "tail_lines": int(opt("tailLines")) if opt("tailLines") else None,  # type: ignore[arg-type]
            "limit_bytes": int(opt("limitBytes")) if opt("limitBytes") else None,  # type: ignore[arg-type]
            "since": since,
        }
        if opt("follow") != "true":
            self._reply(200, logs.render(path, **kwargs))  # type: ignore[arg-type]
            return
        self._follow(path, files, container, kwargs)

    def _follow(
        self, path: Path, files: PodFiles, container: str, kwargs: dict[str, object]
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = 0
        while True:
            done = files.exited(container)
            data = logs.render(path, **kwargs)  # type: ignore[arg-type]
            if len(data) > sent:
                chunk = data[sent:]
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
                sent = len(data)
            if done:
                break
            time.sleep(0.2)
        self.wfile.write(b"0\r\n\r\n")


class KubeletServer(ThreadingHTTPServer):
    """Threaded HTTPS server requiring a CA-signed client certificate."""

    daemon_threads = True

    def __init__(self, port: int, pki_dir: Path, pods_dir: Path) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.pods_dir = pods_dir
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(pki_dir / "kubelet.crt"), str(pki_dir / "kubelet.key"))
        ctx.load_verify_locations(str(pki_dir / "ca.crt"))
        ctx.verify_mode = ssl.CERT_REQUIRED
        self.socket = ctx.wrap_socket(self.socket, server_side=True)

    def start(self) -> threading.Thread:
        """Serve in a daemon thread."""
        t = threading.Thread(target=self.serve_forever, daemon=True, name="kubelet-server")
        t.start()
        return t
