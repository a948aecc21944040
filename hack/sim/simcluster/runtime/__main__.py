"""The process runtime: watch pods bound to simulated nodes, play the ones it owns.

Started by `sim up` as `python -m simcluster.runtime --sim-dir DIR`. It also
serves the simulated kubelet endpoint (pod logs) on the nodes' kubelet port.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from simcluster.cluster import kube
from simcluster.gpu.model import node_faults, node_units
from simcluster.runtime import node_agent
from simcluster.runtime.kubelet_server import KubeletServer
from simcluster.runtime.ownership import runtime_owned
from simcluster.runtime.worker import PodWorker, RuntimeContext, _kill_group

log = logging.getLogger("runtime")


def _read_node(ctx: RuntimeContext, node: str) -> dict[str, Any] | None:
    try:
        return kube.to_dict(ctx.api, ctx.core.read_node(node))
    except ApiException:
        return None


def _shared_on(ctx: RuntimeContext, node: str) -> bool:
    """True when the node's device plugin hands out GPUs already in use (a fault)."""
    obj = _read_node(ctx, node)
    return obj is not None and "shared-device" in node_faults(obj)


def _on_pod(ctx: RuntimeContext, event: str, pod: dict[str, Any]) -> None:
    meta = pod["metadata"]
    uid = meta["uid"]
    # The device plugin admits every pod of a node, whoever plays it.
    ctx.devices.observe(
        pod,
        event == "DELETED",
        lambda node: _shared_on(ctx, node),
        lambda node: node_units(_read_node(ctx, node)),
    )
    worker = ctx.workers.get(uid)
    if event == "DELETED":
        if worker:
            worker.request_delete()
        return
    if not runtime_owned(pod) or not pod["spec"].get("nodeName"):
        return
    if meta.get("deletionTimestamp"):
        if worker:
            worker.request_delete()
        elif uid not in ctx.finished:
            ctx.finished.add(uid)
            kube.ignore_not_found(
                lambda: ctx.core.delete_namespaced_pod(
                    meta["name"],
                    meta["namespace"],
                    body=client.V1DeleteOptions(
                        grace_period_seconds=0, preconditions=client.V1Preconditions(uid=uid)
                    ),
                )
            )
        return
    phase = (pod.get("status") or {}).get("phase", "Pending")
    if worker is None and phase == "Pending" and uid not in ctx.finished:
        ctx.finished.add(uid)
        worker = PodWorker(ctx, pod)
        ctx.workers[uid] = worker
        log.info("%s/%s: starting on %s", meta["namespace"], meta["name"], pod["spec"]["nodeName"])
        worker.start()


def watch_pods(ctx: RuntimeContext) -> None:
    """List then watch every bound pod, relisting after any error (e.g. API server down)."""
    core = ctx.core
    while True:
        try:
            pods = core.list_pod_for_all_namespaces(field_selector="spec.nodeName!=")
            for p in pods.items:
                _on_pod(ctx, "ADDED", ctx.api.sanitize_for_serialization(p))
            rv = pods.metadata.resource_version
            w = watch.Watch()
            for ev in w.stream(
                core.list_pod_for_all_namespaces,
                field_selector="spec.nodeName!=",
                resource_version=rv,
                timeout_seconds=300,
            ):
                _on_pod(ctx, ev["type"], ctx.api.sanitize_for_serialization(ev["object"]))
        except ApiException as e:
            log.warning("watch: %s %s; relisting", e.status, e.reason)
            time.sleep(1)
        except Exception as e:  # connection refused while the API server is stopped
            log.warning("watch: %s; relisting", e)
            time.sleep(1)


def main() -> None:
    """Parse flags, start the kubelet endpoint, then watch pods until SIGTERM."""
    ap = argparse.ArgumentParser(prog="simcluster.runtime")
    ap.add_argument("--sim-dir", required=True, type=Path)
    ap.add_argument("--aicr-bin-dir", default=None)
    args = ap.parse_args()
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout
    )
    state = json.loads((args.sim_dir / "state.json").read_text())
    ports = state["ports"]
    api = kube.api_client(args.sim_dir / "kubeconfig")
    ctx = RuntimeContext(
        api=api,
        sim_dir=args.sim_dir,
        apiserver_port=int(ports["apiserver"]),
        aicr_bin_dir=args.aicr_bin_dir,
        python=sys.executable,
        cluster_ns=os.readlink(f"/proc/{state['procs']['netns']['pid']}/ns/net"),
    )
    ctx.pods_dir.mkdir(parents=True, exist_ok=True)
    KubeletServer(int(ports["kubelet"]), args.sim_dir / "pki", ctx.pods_dir).start()
    node_agent.start(kube.api_client(args.sim_dir / "kubeconfig"), args.sim_dir)

    def stop(signum: int, frame: FrameType | None) -> None:
        for w in list(ctx.workers.values()):
            for proc in list(w.procs.values()):
                _kill_group(proc, 2)
            w.stop_sandbox()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    log.info("runtime ready; kubelet endpoint on 127.0.0.1:%s", ports["kubelet"])
    watch_pods(ctx)


if __name__ == "__main__":
    main()
