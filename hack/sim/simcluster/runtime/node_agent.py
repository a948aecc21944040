"""The runtime's node side: nodes that appear while the cluster runs get their GPU model.

A real node's kubelet, feature discovery and device plugin (or DRA driver)
describe it once it joins; here a watch on Nodes gives every provisioned node
(simcluster.nodes.provisioned) its profile's labels and kernel, then advertises its
GPUs in the cluster's current GPU mode (the `gpu-mode` file `sim mode` writes).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from kubernetes import client, watch

from simcluster.gpu import modes as gpu_modes
from simcluster.nodes import provisioned

log = logging.getLogger("runtime")


def on_node(api: client.ApiClient, sim_dir: Path, node: dict[str, Any]) -> None:
    """Describe a new provisioned node (once; later events find it described)."""
    name = node["metadata"]["name"]
    if provisioned.decoration(node) is None:
        return
    if provisioned.decorate(api, name):
        count = provisioned.gpu_count_of(node)
        if count:
            gpu_modes.apply_mode(api, name, count, gpu_modes.recorded_mode(sim_dir))
        log.info("node %s: provisioned node described (%d GPUs)", name, count)


def watch_nodes(api: client.ApiClient, sim_dir: Path) -> None:
    """List then watch Nodes carrying the autoscaler's label, relisting after any error."""
    core = client.CoreV1Api(api)
    selector = provisioned.NODEPOOL_LABEL
    while True:
        try:
            nodes = core.list_node(label_selector=selector)
            for n in nodes.items:
                on_node(api, sim_dir, api.sanitize_for_serialization(n))
            for ev in watch.Watch().stream(
                core.list_node,
                label_selector=selector,
                resource_version=nodes.metadata.resource_version,
                timeout_seconds=300,
            ):
                if ev["type"] in ("ADDED", "MODIFIED"):
                    on_node(api, sim_dir, api.sanitize_for_serialization(ev["object"]))
        except Exception as e:  # API server restarts, conflicts: relist
            log.warning("node watch: %s; relisting", e)
            time.sleep(1)


def start(api: client.ApiClient, sim_dir: Path) -> threading.Thread:
    """Run the node watch in a daemon thread."""
    t = threading.Thread(target=watch_nodes, args=(api, sim_dir), daemon=True, name="nodes")
    t.start()
    return t
