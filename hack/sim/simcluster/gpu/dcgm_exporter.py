"""The DCGM exporter of one GPU node: what plays `nvcr.io/nvidia/k8s/dcgm-exporter` pods.

Run by the process runtime as the container's command:
`python dcgm_exporter.py --sim-dir DIR --node NODE --address IP:9400`. It serves
`/metrics` (simcluster.gpu.dcgm) and `/health` on the pod's own address, and
twice a second reads its Node (GPU profile, faults) through the API server with
the pod's ServiceAccount, and from the runtime's pod folders which GPUs the
node's running containers have, whether a load runs on them (what makes a GPU
busy: `dcgmproftester12` records when its load ends, `model.LOAD_FILE`; a GPU held
by a container that runs no load is idle, as on real hardware) and what the
kubelet's pod-resources API lists for them (what the exporter maps GPUs to pods by).

As dcgm-exporter does: a device-plugin GPU (`nvidia.com/gpu`, by its UUID) is
mapped to its container always; a DRA-allocated one only with
`--kubernetes-enable-dra` (env `KUBERNETES_ENABLE_DRA`, default off), through
the ResourceSlices of driver `gpu.nvidia.com` (the `uuid` attribute of the
pool's device), and its series carry the claim's `dra_*` labels; without it a
claimed GPU is busy but attributed to no pod. Faults of the node:
`exporter-down` closes the listening socket until healed (scrapes are refused;
the readiness probe fails); `exporter-no-dra` makes it run as without the DRA flag.

As dcgm-exporter does, it collects once per interval and serves the last collection in
between: `-c`/`--collect-interval` in ms, else env `DCGM_EXPORTER_INTERVAL`, else 30000
(NVIDIA/dcgm-exporter pkg/cmd/app.go). Faults and the socket still follow within POLL.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # hack/sim, when run as a script

from kubernetes import client, config

from simcluster.gpu.dcgm import Claimed, Holder, render
from simcluster.gpu.devices import GPU_RESOURCE
from simcluster.gpu.model import LOAD_FILE, node_profile
from simcluster.gpu.smi import gpu_uuid
from simcluster.runtime.pod_files import PodFiles

POLL = 0.5
DEFAULT_INTERVAL_MS = 30000  # dcgm-exporter's --collect-interval default
INTERVAL_ENV = "DCGM_EXPORTER_INTERVAL"
API_TIMEOUT = 5  # seconds: a hung request must not freeze the page and its faults for good
# Frozen samples are stamped this much after the freeze. Prometheus writes a staleness
# marker, at that scrape's start, for a series that turns to explicit timestamps; a
# stamp later than the first frozen scrape's start makes it reject the marker, so the
# frozen series stay collected (stale, not gone), whatever the scrape's phase.
STALE_LEAD_MS = 5000


DRA_DRIVER = "gpu.nvidia.com"
TRUE = ("1", "t", "T", "TRUE", "true", "True")  # what Go's strconv.ParseBool takes as true
Spec = tuple[dict[str, Any], str, dict[str, Any]]  # (pod metadata, container name, run spec)


def running_specs(pods_dir: Path, pods: list[dict[str, Any]]) -> list[Spec]:
    """The latest run spec of every running container, from the runtime's pod folders."""
    out = []
    for pod in pods:
        meta = pod["metadata"]
        files = PodFiles.for_pod(pods_dir, meta["namespace"], meta["name"], meta["uid"])
        for c in pod["spec"].get("containers") or []:
            name = c["name"]
            if not files.proc_record(name).exists():  # not running now
                continue
            specs = sorted(
                (files.root / name).glob("spec-*.json"), key=lambda p: int(p.stem.split("-")[1])
            )
            if specs:
                spec = json.loads(specs[-1].read_text())
                spec[LOAD_UNTIL] = load_until(files.root / name / LOAD_FILE)
                out.append((meta, name, spec))
    return out


LOAD_UNTIL = "loadUntil"  # added to a running spec: epoch seconds its GPU load ends (0: none)


def load_until(path: Path) -> float:
    """When the container's GPU load ends (epoch seconds), 0 when it never ran one."""
    try:
        return float(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0.0


def busy(specs: list[Spec], now: float | None = None) -> set[int]:
    """Indexes of the GPUs that running containers have and load now (whoever they map to)."""
    at = time.time() if now is None else now
    return {
        int(i)
        for _, _, spec in specs
        if float(spec.get(LOAD_UNTIL) or 0) > at
        for i in spec.get("gpus") or []
    }


def slice_uuids(slices: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(pool, device) -> GPU UUID, from the `gpu.nvidia.com` ResourceSlices' whole GPUs."""
    out = {}
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("driver") != DRA_DRIVER:
            continue
        pool = str((spec.get("pool") or {}).get("name"))
        for d in spec.get("devices") or []:
            attrs = d.get("attributes") or {}
            uuid = (attrs.get("uuid") or {}).get("string")
            if (attrs.get("type") or {}).get("string") == "gpu" and uuid:
                out[(pool, str(d.get("name")))] = str(uuid)
    return out


def holders(
    specs: list[Spec], node: str, count: int, dra: dict[tuple[str, str], str] | None
) -> dict[int, Holder]:
    """GPU index -> the container the exporter maps it to, from the pod-resources lists.

    `dra` is `slice_uuids` when DRA mapping is on, else None (claims are ignored).
    """
    index = {gpu_uuid(node, i): i for i in range(count)}
    out: dict[int, Holder] = {}
    for meta, name, spec in specs:
        resources = spec.get("podResources") or {}
        for d in resources.get("devices") or []:
            if d.get("resourceName") == GPU_RESOURCE:
                for uuid in d.get("deviceIds") or []:
                    if uuid in index:
                        out[index[uuid]] = Holder(meta["namespace"], meta["name"], name)
        for claim in resources.get("dynamicResources") or [] if dra is not None else []:
            for r in claim.get("claimResources") or []:
                uuid = dra.get((str(r.get("poolName")), str(r.get("deviceName")))) if dra else None
                if r.get("driverName") != DRA_DRIVER or uuid not in index:
                    continue
                claimed = Claimed(
                    str(claim.get("claimName")),
                    str(claim.get("claimNamespace")),
                    DRA_DRIVER,
                    str(r["poolName"]),
                    str(r["deviceName"]),
                )
                out[index[str(uuid)]] = Holder(meta["namespace"], meta["name"], name, claimed)
    return out


class Exporter:
    """The node's exporter state: the current page, and the listening socket."""

    def __init__(
        self,
        sim_dir: Path,
        node: str,
        address: str,
        dra: bool = False,
        interval_ms: int = DEFAULT_INTERVAL_MS,
    ) -> None:
        self.pods_dir = sim_dir / "pods"
        self.node = node
        self.dra = dra  # --kubernetes-enable-dra
        self.interval = interval_ms / 1000  # --collect-interval
        self.collected_at: float | None = None  # monotonic time of the last collection
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
        self.resource = client.ResourceV1Api(api)

    def refresh(self) -> list[str]:
        """Read the node; once an interval, its pods and a new page; return the node's faults."""
        raw = self.core.read_node(self.node, _request_timeout=API_TIMEOUT)
        node = self.api.sanitize_for_serialization(raw)
        profile = node_profile(node)
        if profile is None:
            self.page = ""
            return []
        faults: list[str] = profile["faults"]
        now = time.monotonic()
        if self.collected_at is not None and now - self.collected_at < self.interval:
            return faults  # between collections: the last page stands
        pods = self.core.list_pod_for_all_namespaces(
            field_selector=f"spec.nodeName={self.node}", _request_timeout=API_TIMEOUT
        )
        running = [
            self.api.sanitize_for_serialization(p)
            for p in pods.items
            if p.status.phase == "Running"
        ]
        self.collected_at = now
        uptime = now - self.started
        specs = running_specs(self.pods_dir, running)
        dra = None
        if self.dra and "exporter-no-dra" not in faults:
            slices = self.resource.list_resource_slice(_request_timeout=API_TIMEOUT)
            dra = slice_uuids([self.api.sanitize_for_serialization(s) for s in slices.items])
        mapped = holders(specs, self.node, int(profile["count"]), dra)
        if "exporter-stale" in faults:
            if self.frozen is None:
                stamp = int(time.time() * 1000) + STALE_LEAD_MS
                self.frozen = (stamp, render(profile, busy(specs), mapped, uptime, stamp))
            self.page = self.frozen[1]
        else:
            self.frozen = None
            self.page = render(profile, busy(specs), mapped, uptime)
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
    p.add_argument(
        "--kubernetes-enable-dra",
        action="store_true",
        default=os.environ.get("KUBERNETES_ENABLE_DRA") in TRUE,
        help="map DRA-allocated GPUs to pods (env KUBERNETES_ENABLE_DRA)",
    )
    p.add_argument(
        "-c",
        "--collect-interval",
        type=int,
        default=int(os.environ.get(INTERVAL_ENV) or DEFAULT_INTERVAL_MS),
        help=f"collection interval in ms (env {INTERVAL_ENV}, default {DEFAULT_INTERVAL_MS})",
    )
    args = p.parse_args(argv)
    exporter = Exporter(
        args.sim_dir, args.node, args.address, args.kubernetes_enable_dra, args.collect_interval
    )
    print(f"dcgm-exporter: serving {args.node} on {args.address}", flush=True)
    exporter.run()


if __name__ == "__main__":
    main()
