"""Every Kubernetes kind aicr touches: its REST coordinates and its generated-client names.

One table serves the checks (everything over REST, see ``aicr.kube.rest``), run
cleanup (listing and deleting by REST path) and the runner (creating its own
objects through the generated client), so a kind's path is written down once.
A custom resource a check creates costs one row here; a unit test fails when a
catalog rule grants ``create`` on a resource this table does not know.
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
    api: str = ""  # class name in kubernetes.client; empty for kinds the runner never creates
    stem: str = ""
    key: str = ""  # the table key when two groups share a kind name; else the name

    @property
    def ref(self) -> str:
        """The name this kind is looked up by in ``KINDS``."""
        return self.key or self.name

    @property
    def group(self) -> str:
        """The API group ('' for the core group)."""
        return self.api_version.rpartition("/")[0]

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection (in ``namespace``, or everywhere) or of one object."""
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        return f"{base}/{quote(name, safe='')}" if name else base


KINDS: dict[str, Kind] = {
    k.ref: k
    for k in (
        Kind("Namespace", "v1", "namespaces", False, "CoreV1Api", "namespace"),
        Kind("Node", "v1", "nodes", False, "CoreV1Api", "node"),
        Kind("Pod", "v1", "pods", True, "CoreV1Api", "pod"),
        Kind("Service", "v1", "services", True, "CoreV1Api", "service"),
        Kind("ConfigMap", "v1", "configmaps", True, "CoreV1Api", "config_map"),
        Kind("Secret", "v1", "secrets", True, "CoreV1Api", "secret"),
        Kind("ServiceAccount", "v1", "serviceaccounts", True, "CoreV1Api", "service_account"),
        Kind("Event", "v1", "events"),
        Kind("Deployment", "apps/v1", "deployments", True, "AppsV1Api", "deployment"),
        Kind("DaemonSet", "apps/v1", "daemonsets", True, "AppsV1Api", "daemon_set"),
        Kind("StatefulSet", "apps/v1", "statefulsets", True, "AppsV1Api", "stateful_set"),
        Kind("Job", "batch/v1", "jobs", True, "BatchV1Api", "job"),
        Kind("Lease", "coordination.k8s.io/v1", "leases", True, "CoordinationV1Api", "lease"),
        Kind(
            "EndpointSlice",
            "discovery.k8s.io/v1",
            "endpointslices",
            True,
            "DiscoveryV1Api",
            "endpoint_slice",
        ),
        Kind(
            "Role", "rbac.authorization.k8s.io/v1", "roles", True, "RbacAuthorizationV1Api", "role"
        ),
        Kind(
            "RoleBinding",
            "rbac.authorization.k8s.io/v1",
            "rolebindings",
            True,
            "RbacAuthorizationV1Api",
            "role_binding",
        ),
        Kind(
            "ClusterRole",
            "rbac.authorization.k8s.io/v1",
            "clusterroles",
            False,
            "RbacAuthorizationV1Api",
            "cluster_role",
        ),
        Kind(
            "ClusterRoleBinding",
            "rbac.authorization.k8s.io/v1",
            "clusterrolebindings",
            False,
            "RbacAuthorizationV1Api",
            "cluster_role_binding",
        ),
        Kind(
            "CustomResourceDefinition",
            "apiextensions.k8s.io/v1",
            "customresourcedefinitions",
            False,
            "ApiextensionsV1Api",
            "custom_resource_definition",
        ),
        Kind(
            "ResourceSlice",
            "resource.k8s.io/v1",
            "resourceslices",
            False,
            "ResourceV1Api",
            "resource_slice",
        ),
        Kind(
            "DeviceClass",
            "resource.k8s.io/v1",
            "deviceclasses",
            False,
            "ResourceV1Api",
            "device_class",
        ),
        Kind(
            "ResourceClaim",
            "resource.k8s.io/v1",
            "resourceclaims",
            True,
            "ResourceV1Api",
            "resource_claim",
        ),
        Kind("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates"),
        Kind("HorizontalPodAutoscaler", "autoscaling/v2", "horizontalpodautoscalers"),
        Kind("RuntimeClass", "node.k8s.io/v1", "runtimeclasses", False),
        Kind(
            "ValidatingWebhookConfiguration",
            "admissionregistration.k8s.io/v1",
            "validatingwebhookconfigurations",
            False,
        ),
        Kind("APIService", "apiregistration.k8s.io/v1", "apiservices", False),
        # custom resources: one row each (REST only, no generated client)
        Kind("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
        Kind("ClusterPolicy", "nvidia.com/v1", "clusterpolicies", False),
        Kind("DynamoGraphDeployment", "nvidia.com/v1alpha1", "dynamographdeployments"),
        Kind("PodGroup", "scheduling.x-k8s.io/v1alpha1", "podgroups"),
        Kind(
            "PodGroup", "scheduling.run.ai/v2alpha2", "podgroups", key="PodGroup.scheduling.run.ai"
        ),
        Kind("Queue", "scheduling.run.ai/v2", "queues", False),
        Kind("ClusterQueue", "kueue.x-k8s.io/v1beta1", "clusterqueues", False),
        Kind("ResourceFlavor", "kueue.x-k8s.io/v1beta1", "resourceflavors", False),
        Kind("LocalQueue", "kueue.x-k8s.io/v1beta1", "localqueues"),
        Kind("Workload", "kueue.x-k8s.io/v1beta1", "workloads"),
        # Kueue 0.15+ stores v1beta2 (same shapes for what aicr writes); cleanup uses the
        # rows above, which both versions serve.
        Kind(
            "ClusterQueue",
            "kueue.x-k8s.io/v1beta2",
            "clusterqueues",
            False,
            key="ClusterQueue.v1beta2",
        ),
        Kind(
            "ResourceFlavor",
            "kueue.x-k8s.io/v1beta2",
            "resourceflavors",
            False,
            key="ResourceFlavor.v1beta2",
        ),
        Kind("LocalQueue", "kueue.x-k8s.io/v1beta2", "localqueues", key="LocalQueue.v1beta2"),
        Kind("Workload", "kueue.x-k8s.io/v1beta2", "workloads", key="Workload.v1beta2"),
        Kind(
            "PodGroup",
            "scheduling.volcano.sh/v1beta1",
            "podgroups",
            key="PodGroup.scheduling.volcano.sh",
        ),
        Kind("RayCluster", "ray.io/v1", "rayclusters"),
        Kind("RayJob", "ray.io/v1", "rayjobs"),
        Kind("TrainJob", "trainer.kubeflow.org/v1alpha1", "trainjobs"),
        Kind("TrainingRuntime", "trainer.kubeflow.org/v1alpha1", "trainingruntimes"),
        Kind("MPIJob", "kubeflow.org/v2beta1", "mpijobs"),
        Kind("PyTorchJob", "kubeflow.org/v1", "pytorchjobs"),
        Kind("HTTPRoute", "gateway.networking.k8s.io/v1", "httproutes"),
        Kind("Gateway", "gateway.networking.k8s.io/v1", "gateways"),
        Kind("GatewayClass", "gateway.networking.k8s.io/v1", "gatewayclasses", False),
        Kind("NodePool", "karpenter.sh/v1", "nodepools", False),
        Kind("NodeClaim", "karpenter.sh/v1", "nodeclaims", False),
        Kind("PodMonitor", "monitoring.coreos.com/v1", "podmonitors"),
        Kind("ServiceMonitor", "monitoring.coreos.com/v1", "servicemonitors"),
        Kind("Prometheus", "monitoring.coreos.com/v1", "prometheuses"),
        Kind("KubeVirt", "kubevirt.io/v1", "kubevirts"),
    )
}


def by_resource(group: str, plural: str) -> Kind | None:
    """The kind an RBAC rule's ``(apiGroup, resource)`` names, or None."""
    return next((k for k in KINDS.values() if (k.group, k.plural) == (group, plural)), None)


def of(obj: dict[str, object]) -> Kind:
    """The kind of an API-shaped object: its exact apiVersion's row, else its group's; KeyError."""
    version = str(obj.get("apiVersion") or "")
    group = version.rpartition("/")[0]
    same = [k for k in KINDS.values() if k.name == obj.get("kind") and k.group == group]
    for k in same:
        if k.api_version == version:
            return k
    if same:
        return same[0]
    raise KeyError(f"{obj.get('apiVersion')} {obj.get('kind')}")
