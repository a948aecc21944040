"""Faults of components: what `hack/sim/sim fault` does to a running component."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubernetes import client

from simcluster import kube
from simcluster.components import install

if TYPE_CHECKING:
    from simcluster.cluster import Sim


def scale(sim: Sim, component: str, namespace: str, deployment: str, replicas: int) -> None:
    """Scale a component's Deployment (to zero: the component is down, as after a crash loop)."""
    from simcluster.faults.registry import FaultInputError

    if component not in install.journal(sim):
        raise FaultInputError(
            f"the fault needs the {component} component "
            f"(`hack/sim/sim up --with {component}`), which is not running"
        )
    apps = client.AppsV1Api(kube.api_client(sim.kubeconfig))
    apps.patch_namespaced_deployment_scale(deployment, namespace, {"spec": {"replicas": replicas}})
