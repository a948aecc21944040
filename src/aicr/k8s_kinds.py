"""How each Kubernetes kind aicr touches is reached through the generated client.

One table serves the checks (reading) and the runner (creating, listing, deleting),
so a kind's API class and method stem are written down once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """A kind's client class and method stem (``deployment`` -> ``read_namespaced_deployment``)."""

    name: str
    api: str  # class name in kubernetes.client
    stem: str
    namespaced: bool = True


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("Namespace", "CoreV1Api", "namespace", namespaced=False),
        Kind("Node", "CoreV1Api", "node", namespaced=False),
        Kind("Pod", "CoreV1Api", "pod"),
        Kind("Service", "CoreV1Api", "service"),
        Kind("ConfigMap", "CoreV1Api", "config_map"),
        Kind("Secret", "CoreV1Api", "secret"),
        Kind("ServiceAccount", "CoreV1Api", "service_account"),
        Kind("Deployment", "AppsV1Api", "deployment"),
        Kind("DaemonSet", "AppsV1Api", "daemon_set"),
        Kind("StatefulSet", "AppsV1Api", "stateful_set"),
        Kind("Job", "BatchV1Api", "job"),
        Kind("EndpointSlice", "DiscoveryV1Api", "endpoint_slice"),
        Kind("Role", "RbacAuthorizationV1Api", "role"),
        Kind("RoleBinding", "RbacAuthorizationV1Api", "role_binding"),
        Kind("ClusterRole", "RbacAuthorizationV1Api", "cluster_role", namespaced=False),
        Kind(
            "ClusterRoleBinding", "RbacAuthorizationV1Api", "cluster_role_binding", namespaced=False
        ),
        Kind(
            "CustomResourceDefinition",
            "ApiextensionsV1Api",
            "custom_resource_definition",
            namespaced=False,
        ),
        Kind("ResourceSlice", "ResourceV1Api", "resource_slice", namespaced=False),
        Kind("DeviceClass", "ResourceV1Api", "device_class", namespaced=False),
        Kind("ResourceClaim", "ResourceV1Api", "resource_claim"),
    )
}
