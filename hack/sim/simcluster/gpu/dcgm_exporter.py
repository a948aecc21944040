"""The DCGM exporter of one GPU node: what plays `nvcr.io/nvidia/k8s/dcgm-exporter` pods.

Run by the process runtime as the container's command:
`python dcgm_exporter.py --sim-dir DIR --node NODE --address IP:9400`. It serves
`/metrics` (simcluster.gpu.dcgm) and `/health` on the pod's own address, and
twice a second reads its Node (GPU profile, faults) through the API server with
the pod's ServiceAccount and which GPUs the node's running containers were
given (from the runtime's pod folders, as dcgm-exporter reads the kubelet's
pod-resources API). Fault `exporter-down` on the node closes the listening
socket until healed (scrapes are refused; the readiness probe fails).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # hack/sim, when run as a script

from kubernetes import client, config

from simcluster.gpu.dcgm import Holder, render
from simcluster.gpu.model import node_profile
from simcluster.runtime.pod_files import PodFiles

POLL = 0.5
API_TIMEOUT = 5  # seconds: a hung request must not freeze the page and its faults for good
# Frozen samples are stamped this much after the freeze. Prometheus writes a staleness
# marker, at that scrape's start, for a series that turns to explicit timestamps; a
# stamp later than the first frozen scrape's start makes it reject the marker, so the
# frozen series stay collected (stale, not gone), whatever the scrape's phase.
STALE_LEAD_MS = 5000


def holders(pods_dir: Path, pods: list[dict[str, Any]]) -> dict[int, Holder]:
    """GPU index -> the running container it was given, from the runtime's pod folders."""
    out: dict[int, Holder] = {}
    for pod in pods:
        meta = pod["metadata"]
        files = PodFiles.for_pod(pods_dir, meta["namespace"], meta["name"], meta["uid"])
        for c in pod["spec"].get("containers") or []:
            name = c["name"]
            if not files.proc_record(name).exists():  # not running now
                continue
            specs = sorted((files.root / name).glob("spec-*.json"),
                           key=lambda p: int(p.stem.split("-")[1]))  # fmt: skip
            if not specs:
                continue
            for i in json.loads(specs[-1].read_text()).get("gpus") or []:
                out[int(i)] = Holder(meta["namespace"], meta["name"], name)
    return out


class Exporter:
    """The node's exporter state: the current page, and the listening socket."""

    def __init__(self, sim_dir: Path, node: str, address: str) -> None:
        self.pods_dir = sim_dir / "pods"
        self.node = node
        host, _, port = address.rpartition(":")
        self.address = (host or "0.0.0.0", int(port))
        self.started = time.monotonic()
        self.page = ""
        self.frozen: tuple[int, str] | None = None  # (timestamp ms, page) under exporter-stale

        self.server: ThreadingHTTPServer | None = None
        config.load_incluster_config()
        api = client.ApiClient()
        self.api = api
        self.core = client.CoreV1Api(api)

    def refresh(self) -> list[str]:
        """Read the node and its pods; rebuild the page; return the node's faults."""
        raw = self.core.read_node(self.node, _request_timeout=API_TIMEOUT)
        node = self.api.sanitize_for_serialization(raw)
        profile = node_profile(node)
        if profile is None:
            self.page = ""
            return []
        pods = self.core.list_pod_for_all_namespaces(
            field_selector=f"spec.nodeName={self.node}", _request_timeout=API_TIMEOUT
        )
        running = [self.api.sanitize_for_serialization(p) for p in pods.items
                   if p.status.phase == "Running"]  # fmt: skip
        faults: list[str] = profile["faults"]
        uptime = time.monotonic() - self.started
        if "exporter-stale" in faults:
            if self.frozen is None:
                stamp = int(time.time() * 1000) + STALE_LEAD_MS
                self.frozen = (stamp, render(profile, holders(self.pods_dir, running), uptime,
                                             stamp))  # fmt: skip
            self.page = self.frozen[1]
        else:
            self.frozen = None
            self.page = render(profile, holders(self.pods_dir, running), uptime)
        return faults

    def metrics(self) -> bytes:
        """The page a scrape gets now."""
        return self.page.encode()

    def serve(self, on: bool) -> None:
        """Open or close the listening socket."""
        if on and self.server is None:
            self.server = ThreadingHTTPServer(self.address, _handler(self))
            threading.Thread(target=self.server.serve_forever, daemon=True).start()
        elif not on and self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def run(self) -> None:
        """Poll and serve until killed."""
        while True:
            try:
                faults = self.refresh()
                self.serve("exporter-down" not in faults)
            except Exception as e:  # the API server may be down: keep the last page
                print(f"dcgm-exporter: refresh failed: {e}", file=sys.stderr, flush=True)
            time.sleep(POLL)


def _handler(exporter: Exporter) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] == "/health":
                body, kind = b"OK\n", "text/plain"
            elif self.path.split("?")[0] == "/metrics":
                body, kind = exporter.metrics(), "text/plain; version=0.0.4; charset=utf-8"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


def main(argv: list[str] | None = None) -> None:
    """Parse the flags and serve."""
    p = argparse.ArgumentParser(prog="dcgm-exporter")
    p.add_argument("--sim-dir", required=True, type=Path)
    p.add_argument("--node", required=True)
    p.add_argument("--address", default=":9400")
    p.add_argument("--kubernetes", action="store_true", help="accepted; pod labels are always on")
    args = p.parse_args(argv)
    exporter = Exporter(args.sim_dir, args.node, args.address)
    print(f"dcgm-exporter: serving {args.node} on {args.address}", flush=True)
    exporter.run()


if __name__ == "__main__":
    main()
