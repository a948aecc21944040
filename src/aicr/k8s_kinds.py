"""Every Kubernetes kind aicr touches: its REST coordinates and its generated-client names.

One table serves the checks (reading over REST, see ``aicr.kubeapi``) and the
runner (creating, listing, deleting through the generated client), so a kind's
path and its API class are written down once.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class Kind:
    """A kind's REST coordinates and, for kinds the runner creates, its client class and stem.

    ``stem`` names the generated methods (``deployment`` -> ``read_namespaced_deployment``).
    """

    name: str
    api_version: str  # "v1", "apps/v1", "nvidia.com/v1"
    plural: str
    namespaced: bool = True
    api: str = ""  # class name in kubernetes.client; empty for kinds aicr only reads
    stem: str = ""

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection (in ``namespace``, or everywhere) or of one object."""
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        return f"{base}/{quote(name, safe='')}" if name else base


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("Namespace", "v1", "namespaces", False, "CoreV1Api", "namespace"),
        Kind("Node", "v1", "nodes", False, "CoreV1Api", "node"),
        Kind("Pod", "v1", "pods", True, "CoreV1Api", "pod"),
        Kind("Service", "v1", "services", True, "CoreV1Api", "service"),
        Kind("ConfigMap", "v1", "configmaps", True, "CoreV1Api", "config_map"),
        Kind("Secret", "v1", "secrets", True, "CoreV1Api", "secret"),
        Kind("ServiceAccount", "v1", "serviceaccounts", True, "CoreV1Api", "service_account"),
        Kind("Deployment", "apps/v1", "deployments", True, "AppsV1Api", "deployment"),
        Kind("DaemonSet", "apps/v1", "daemonsets", True, "AppsV1Api", "daemon_set"),
        Kind("StatefulSet", "apps/v1", "statefulsets", True, "AppsV1Api", "stateful_set"),
        Kind("Job", "batch/v1", "jobs", True, "BatchV1Api", "job"),
        Kind("Lease", "coordination.k8s.io/v1", "leases", True, "CoordinationV1Api", "lease"),
        Kind("EndpointSlice", "discovery.k8s.io/v1", "endpointslices", True,
             "DiscoveryV1Api", "endpoint_slice"),
        Kind("Role", "rbac.authorization.k8s.io/v1", "roles", True,
             "RbacAuthorizationV1Api", "role"),
        Kind("RoleBinding", "rbac.authorization.k8s.io/v1", "rolebindings", True,
             "RbacAuthorizationV1Api", "role_binding"),
        Kind("ClusterRole", "rbac.authorization.k8s.io/v1", "clusterroles", False,
             "RbacAuthorizationV1Api", "cluster_role"),
        Kind("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", "clusterrolebindings", False,
             "RbacAuthorizationV1Api", "cluster_role_binding"),
        Kind("CustomResourceDefinition", "apiextensions.k8s.io/v1", "customresourcedefinitions",
             False, "ApiextensionsV1Api", "custom_resource_definition"),
        Kind("ResourceSlice", "resource.k8s.io/v1", "resourceslices", False,
             "ResourceV1Api", "resource_slice"),
        Kind("DeviceClass", "resource.k8s.io/v1", "deviceclasses", False,
             "ResourceV1Api", "device_class"),
        Kind("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True,
             "ResourceV1Api", "resource_claim"),
        # GPU Operator's ClusterPolicy: a custom resource, read only
        Kind("ClusterPolicy", "nvidia.com/v1", "clusterpolicies", False),
    )
}  # fmt: skip
