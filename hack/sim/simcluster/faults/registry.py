"""The one registry of faults: what each models, where it applies, how to apply and heal it.

`hack/sim/sim fault|heal` and the test harness (`SimCluster.fault`/`heal`) call
`apply` and `heal` here. Every applied fault is recorded in the run's journal
(`<sim dir>/faults-active.json`) so `heal` undoes exactly what was applied; a
fault lasts until healed or until `sim down` removes the run.

Scopes: a `gpu-node` fault applies to one GPU node, or to every GPU node when
no node is named; a `node` fault to one node, or to every node; a `cluster`
fault takes no node.
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from kubernetes import client

from simcluster.cluster import kube
from simcluster.faults import components, nodes, pods
from simcluster.runtime.handlers import NO_SANDBOX_HANDLER

if TYPE_CHECKING:
    from simcluster.cluster.sim import Sim

Scope = Literal["gpu-node", "node", "cluster"]
JOURNAL = "faults-active.json"
Action = Callable[["Sim", "str | None"], None]


class FaultInputError(ValueError):
    """An unknown fault or node, or a node the fault cannot apply to (exit 2)."""


@dataclass(frozen=True)
class Fault:
    """One fault: its name, the real-world failure it models, its scope, apply and heal."""

    name: str
    models: str
    scope: Scope
    apply: Action
    heal: Action


@dataclass(frozen=True)
class NodeInfo:
    """What fault targeting needs to know about a node."""

    name: str
    gpu: bool


def _gpu_fault(name: str, models: str) -> Fault:
    def set_to(on: bool) -> Action:
        return lambda sim, node: nodes.set_gpu_fault(_api(sim), str(node), name, on)

    return Fault(name, models, "gpu-node", set_to(True), set_to(False))


def _pod_fault(name: pods.PodFault, models: str) -> Fault:
    return Fault(
        name,
        models,
        "node",
        lambda sim, node: pods.add_rule(sim.dir, name, node=node),
        lambda sim, node: pods.remove_node_rule(sim.dir, name, str(node)),
    )


def _component_fault(
    name: str, models: str, workloads: Mapping[str, tuple[str, str] | None]
) -> Fault:
    """A cluster fault that stops the pods of whichever of `workloads` (component -> where,
    None: the Deployment its install applied) run."""

    def installed(sim: Sim) -> list[tuple[str, str]]:
        try:
            return components.installed_workloads(sim, workloads)
        except components.NotRecorded as e:
            raise FaultInputError(f"fault {name}: {e}") from None

    def chosen(sim: Sim) -> list[tuple[str, str]]:
        found = installed(sim)
        if not found:
            need = " or ".join(workloads)
            raise FaultInputError(
                f"fault {name} needs {need} installed (`hack/sim/sim up --with {need.split()[0]}`)"
            )
        return found

    return Fault(
        name,
        models,
        "cluster",
        lambda sim, node: components.stop(sim, chosen(sim)),
        lambda sim, node: components.start(sim, installed(sim)),
    )


def _args_fault(name: str, models: str, component: str, args: Callable[[bool], list[str]]) -> Fault:
    """A cluster fault: `component`'s Deployment rolls out with `args(False)`; heal: `args(True)`.

    The component's module names its Deployment (`NAMESPACE`, `NAME`).
    """

    def set_to(on: bool) -> Action:
        def act(sim: Sim, node: str | None) -> None:
            module = importlib.import_module(f"simcluster.components.{component}")
            where = (module.NAMESPACE, module.NAME)
            if not components.installed_workloads(sim, {component: where}):
                if on:
                    return  # healing a component that is gone: nothing left to heal
                raise FaultInputError(
                    f"fault {name} needs {component} installed "
                    f"(`hack/sim/sim up --with {component}`)"
                )
            components.set_args(sim, *where, args(on))

        return act

    return Fault(name, models, "cluster", set_to(False), set_to(True))


def _gateway_args(auth: bool) -> list[str]:
    from simcluster.components import gateway

    return gateway.args(auth=auth)


def _coscheduling_args(gang: bool) -> list[str]:
    from simcluster.components import coscheduling

    return coscheduling.args(gang=gang)


def _kueue_args(jobs: bool) -> list[str]:
    from simcluster.components import kueue

    return kueue.args(jobs=jobs)


def _kuberay(fault: str, act: Callable[[Sim, Any], None], healing: bool) -> Action:
    """An action on the installed KubeRay (the module, given to `act`)."""

    def action(sim: Sim, node: str | None) -> None:
        from simcluster.components import kuberay

        where = {"kuberay": (kuberay.NAMESPACE, kuberay.NAME)}
        if not components.installed_workloads(sim, where):
            if healing:
                return  # KubeRay is gone: nothing left to heal
            raise FaultInputError(
                f"fault {fault} needs kuberay installed (`hack/sim/sim up --with kuberay`)"
            )
        act(sim, kuberay)

    return action


def _kuberay_args(reconciling: bool) -> Action:
    def act(sim: Sim, k: Any) -> None:
        components.set_args(sim, k.NAMESPACE, k.NAME, k.args(reconciling=reconciling))

    return _kuberay("operator-not-reconciling", act, healing=reconciling)


def _kuberay_policy(policy: str) -> Action:
    def act(sim: Sim, k: Any) -> None:
        components.set_failure_policy(sim, k.WEBHOOK_CONFIG, policy)

    return _kuberay("webhook-fail-open", act, healing=policy == "Fail")


def _gateway_routes(source: str) -> Action:
    def act(sim: Sim, node: str | None) -> None:
        from simcluster.components import gateway

        if not components.installed_workloads(sim, {"gateway": (gateway.NAMESPACE, gateway.NAME)}):
            if source == "All":
                return  # healing a gateway that is gone: nothing left to heal
            raise FaultInputError(
                "fault gateway-routes-same-namespace needs gateway installed "
                "(`hack/sim/sim up --with gateway`)"
            )
        gateway.allow_routes_from(_api(sim), source)

    return act


def _monitoring(name: str, act: Callable[[Sim, bool], None]) -> tuple[Action, Action]:
    """Apply and heal of a fault on the operator's Prometheus (apply needs it installed)."""

    def apply(sim: Sim, node: str | None) -> None:
        try:
            act(sim, True)
        except components.NotRecorded as e:
            raise FaultInputError(f"fault {name}: {e}") from None
        except LookupError:
            raise FaultInputError(
                f"fault {name} needs prometheus and prometheus-operator installed "
                "(`hack/sim/sim up --with prometheus,prometheus-operator`)"
            ) from None

    def heal(sim: Sim, node: str | None) -> None:
        try:
            act(sim, False)
        except components.NotRecorded as e:
            raise FaultInputError(f"heal of {name}: {e}") from None

    return apply, heal


BODY_LIMIT = "64B"  # smaller than any metrics page


def _body_limit(sim: Sim, on: bool) -> None:
    spec = {"enforcedBodySizeLimit": BODY_LIMIT if on else None}
    components.patch_prometheus(sim, spec, on, "body_size_limit")


def _api(sim: Sim) -> client.ApiClient:
    return kube.api_client(sim.kubeconfig)


FAULTS: tuple[Fault, ...] = (
    _gpu_fault(
        "driver-not-loaded",
        "the NVIDIA kernel module is not loaded: nvidia-smi fails with the driver message, exit 9",
    ),
    _gpu_fault(
        "gpu-lost",
        "a GPU fell off the bus (Xid 79): pods see one GPU fewer than they were given",
    ),
    Fault(
        "driver-mismatch",
        "the loaded driver differs from the version the node's feature-discovery labels name",
        "gpu-node",
        lambda sim, node: nodes.set_loaded_driver(_api(sim), str(node), True),
        lambda sim, node: nodes.set_loaded_driver(_api(sim), str(node), False),
    ),
    _gpu_fault(
        "permissive-toolkit",
        "the container toolkit honours NVIDIA_VISIBLE_DEVICES from unprivileged containers: "
        "one that sets it to `all` without an allocation sees every GPU",
    ),
    _gpu_fault(
        "runtimeclass-leak",
        "the GPU runtime exposes all GPUs by default: a pod that only names the GPU "
        "RuntimeClass, without an allocation, sees every GPU",
    ),
    _gpu_fault(
        "device-leak",
        "device isolation is broken on the node: every container sees every GPU",
    ),
    _gpu_fault(
        "shared-device",
        "the device plugin hands one GPU to two pods: new pods get the lowest indices, "
        "in use or not",
    ),
    _gpu_fault(
        "inference-slow",
        "the GPU runs throttled: a model server on the node streams a quarter of its "
        "tokens per second",
    ),
    _gpu_fault(
        "inference-slow-first-token",
        "prefill stalls on the node: a model server's first token comes 1.5 s late",
    ),
    _gpu_fault(
        "model-loading",
        "the model server is up but its model is still loading: health answers, "
        "completions answer 503 for ten minutes",
    ),
    _gpu_fault(
        "dra-driver-down",
        "the DRA driver's kubelet plugin is not running on the node: pods using "
        "ResourceClaims stay ContainerCreating with FailedPrepareDynamicResources",
    ),
    _gpu_fault(
        "mps-daemon-not-ready",
        "the MPS control daemon the DRA driver's kubelet plugin starts for an MPS claim never "
        "becomes ready on the node: pods of a claim whose GpuConfig asks for MPS stay "
        "ContainerCreating with FailedPrepareDynamicResources (MPS control daemon is not yet "
        "ready: waiting for MPS control daemon to come online)",
    ),
    _gpu_fault(
        "nccl-degraded",
        "a degraded fabric (a NIC down, links retrained slower): nccl-tests' all-reduce "
        "bus bandwidth across the node drops to 40% of the profile's",
    ),
    _gpu_fault(
        "nccl-wrong",
        "silent data corruption on the node's GPUs or links: nccl-tests reports #wrong "
        "elements at 1 GiB and above and exits non-zero",
    ),
    _gpu_fault(
        "mig-not-applied",
        "the MIG manager never partitioned the GPUs: the labels and resources say MIG, but a "
        "pod given a MIG device gets a whole GPU",
    ),
    _gpu_fault(
        "replicas-not-shared",
        "the device plugin advertises replicas but hands each GPU to one pod only: a second "
        "pod gets another GPU, or none when every GPU is held",
    ),
    _gpu_fault(
        "vgpu-not-attached",
        "the node's labels say vGPU (GPU feature discovery's vgpu.present), but the VM's GPU "
        "is a whole GPU passed through: a pod's nvidia-smi -q names the physical GPU and "
        "Pass-Through",
    ),
    _gpu_fault(
        "vgpu-unlicensed",
        "the vGPU guest holds no licence (no license server reachable or configured): a pod's "
        "nvidia-smi -q reads License Status Unlicensed (Unrestricted), full speed for a "
        "20-minute grace period, degraded after it",
    ),
    Fault(
        "no-sandbox-handler",
        "containerd on the node has no gVisor runtime configured: pods whose RuntimeClass "
        "handler is runsc stay ContainerCreating with FailedCreatePodSandBox (no runtime for "
        '"runsc" is configured)',
        "node",
        lambda sim, node: nodes.set_runtime_fault(_api(sim), str(node), NO_SANDBOX_HANDLER, True),
        lambda sim, node: nodes.set_runtime_fault(_api(sim), str(node), NO_SANDBOX_HANDLER, False),
    ),
    _gpu_fault(
        "exporter-down",
        "the node's GPU metrics exporter is not serving: scrapes of its pod are refused "
        "and the pod is not ready",
    ),
    _gpu_fault(
        "exporter-unlabelled",
        "the node's GPU metrics exporter publishes its series without per-GPU labels "
        "(no gpu or UUID)",
    ),
    _gpu_fault(
        "exporter-stale",
        "the node's GPU metrics exporter serves frozen samples stamped with the moment they froze",
    ),
    _gpu_fault(
        "exporter-no-dra",
        "the node's GPU metrics exporter runs without KUBERNETES_ENABLE_DRA: GPUs allocated "
        "through ResourceClaims are busy but attributed to no pod",
    ),
    _pod_fault(
        "image-pull",
        "the node cannot pull images (registry unreachable): new runtime pods wait in "
        "ErrImagePull, then ImagePullBackOff",
    ),
    _pod_fault("crash", "the command crashes: new runtime pods' containers exit 1 (Error)"),
    _pod_fault(
        "oom", "the node's memory runs out: new runtime pods' containers are OOMKilled (137)"
    ),
    _pod_fault(
        "never-ready",
        "a hung process: new runtime pods run but never become Ready",
    ),
    _pod_fault(
        "evict",
        "memory pressure on the node: new runtime pods are evicted by the kubelet",
    ),
    _component_fault(
        "webhook-down",
        "an admission webhook's pod is not running (crashed, evicted, its node drained): "
        "requests its failurePolicy=Fail webhooks match are refused with `failed calling "
        "webhook ... no endpoints available for service`",
        {
            "kueue": ("kueue-system", "kueue-controller-manager"),
            "kuberay": ("ray-system", "kuberay-operator"),
        },
    ),
    Fault(
        "webhook-fail-open",
        "the operator's validating webhooks are registered with failurePolicy: Ignore: when "
        "they cannot be called, the API server admits what they match without review",
        "cluster",
        _kuberay_policy("Ignore"),
        _kuberay_policy("Fail"),
    ),
    Fault(
        "operator-not-reconciling",
        "the operator's pod serves its webhooks but its controllers reconcile nothing (it "
        "watches only a namespace that does not exist): custom resources never get a status",
        "cluster",
        _kuberay_args(False),
        _kuberay_args(True),
    ),
    _component_fault(
        "autoscaler-stopped",
        "the cluster autoscaler is not running (crash loop, OOMKilled, scaled down): pending "
        "pods that no node fits get no new node",
        {"karpenter": ("kube-system", "karpenter")},
    ),
    _args_fault(
        "gateway-auth-open",
        "the gateway's API-key authentication is left out of its configuration: keyless "
        "requests are served",
        "gateway",
        _gateway_args,
    ),
    _component_fault(
        "gang-scheduler-down",
        "the second scheduler is not running (crash loop, OOMKilled, scaled down): pods that "
        "name it stay Pending, not scheduled, with no condition",
        {"coscheduling": ("scheduler-plugins", "scheduler-plugins-scheduler")},
    ),
    _args_fault(
        "gang-plugin-disabled",
        "the gang scheduler's profile leaves its Coscheduling plugin out: a PodGroup's pods "
        "are bound one by one as they fit, so a gang that cannot fit starts in part",
        "coscheduling",
        _coscheduling_args,
    ),
    _args_fault(
        "queue-jobs-unmanaged",
        "the job queue's configuration leaves the batch/job integration out (integrations."
        "frameworks lists only JobSet): Kueue 0.17's Job webhook, registered without the "
        "integration's options, panics on every Job, so every Job it matches is refused",
        "kueue",
        _kueue_args,
    ),
    Fault(
        "gateway-routes-same-namespace",
        "the Gateway's listener admits routes only from its own namespace "
        "(allowedRoutes.namespaces.from: Same, the Gateway API default): HTTPRoutes of other "
        "namespaces are refused with NotAllowedByListeners",
        "cluster",
        _gateway_routes("Same"),
        _gateway_routes("All"),
    ),
    _component_fault(
        "adapter-down",
        "the custom metrics adapter is not running: the APIService "
        "v1beta1.custom.metrics.k8s.io is unavailable, HPAs on custom metrics cannot scale",
        {"prometheus-adapter": ("monitoring", "prometheus-adapter")},
    ),
    _component_fault(
        "monitoring-operator-down",
        "prometheus-operator is not running: new PodMonitors and ServiceMonitors are never "
        "turned into scrape configuration, so Prometheus never discovers their workloads",
        {"prometheus-operator": None},  # named as the recipe's values name it
    ),
    Fault(
        "scrape-body-limit",
        f"Prometheus enforces a scrape body size limit ({BODY_LIMIT}, `enforcedBodySizeLimit`) "
        "smaller than the workloads' metrics pages: their scrapes fail with `body size limit "
        "exceeded` and their targets are down",
        "cluster",
        *_monitoring("scrape-body-limit", _body_limit),
    ),
    Fault(
        "duplicate-scrape",
        "a second scrape job (a catch-all on pod ports named http-metrics, left beside the "
        "operator's monitors) collects the same pods: every such series is stored twice, once "
        "per job, and sums over a workload double count",
        "cluster",
        *_monitoring("duplicate-scrape", components.set_duplicate_scrape),
    ),
    Fault(
        "apiserver-down",
        "the control plane is unreachable: the API server is stopped (connection refused)",
        "cluster",
        lambda sim, node: sim.stop_apiserver(),
        lambda sim, node: sim.start_apiserver(),
    ),
)
BY_NAME = {f.name: f for f in FAULTS}


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean {close[0]}?" if close else ""


def lookup(name: str) -> Fault:
    """The fault called `name`, or FaultInputError with the closest name."""
    if name in BY_NAME:
        return BY_NAME[name]
    raise FaultInputError(
        f"unknown fault {name!r}{_suggest(name, list(BY_NAME))} "
        "(`hack/sim/sim fault list` shows every fault)"
    )


def targets(fault: Fault, node: str | None, known: Sequence[NodeInfo]) -> list[str | None]:
    """The nodes `fault` applies to when `node` is (or is not) named."""
    if fault.scope == "cluster":
        if node is not None:
            raise FaultInputError(f"fault {fault.name} applies to the cluster, not to a node")
        return [None]
    if node is None:
        return [n.name for n in known if n.gpu or fault.scope == "node"]
    check_node(node, known)
    info = next(n for n in known if n.name == node)
    if fault.scope == "gpu-node" and not info.gpu:
        gpus = ", ".join(n.name for n in known if n.gpu) or "none"
        raise FaultInputError(
            f"fault {fault.name} needs a GPU node; {node} has no GPUs (GPU nodes: {gpus})"
        )
    return [node]


def check_node(node: str, known: Sequence[NodeInfo]) -> None:
    """FaultInputError unless `node` is one of `known`."""
    names = [n.name for n in known]
    if node not in names:
        raise FaultInputError(
            f"unknown node {node!r}{_suggest(node, names)} (nodes: {', '.join(names)})"
        )


def cluster_nodes(sim: Sim) -> list[NodeInfo]:
    """The cluster's nodes, read from the API server."""
    items = client.CoreV1Api(_api(sim)).list_node().items
    return [
        NodeInfo(n.metadata.name, (n.metadata.labels or {}).get("nvidia.com/gpu.present") == "true")
        for n in items
    ]


# ---- the journal of applied faults ------------------------------------------------------
def active(sim: Sim) -> list[dict[str, Any]]:
    """Applied faults, oldest first: `{"fault": NAME, "node": NODE or None}`."""
    try:
        entries: list[dict[str, Any]] = json.loads((sim.dir / JOURNAL).read_text())
    except (OSError, ValueError):
        return []
    return entries


def _record(sim: Sim, entries: list[dict[str, Any]]) -> None:
    tmp = sim.dir / (JOURNAL + ".tmp")
    tmp.write_text(json.dumps(entries, indent=1))
    tmp.replace(sim.dir / JOURNAL)


def apply(sim: Sim, name: str, node: str | None = None) -> list[str | None]:
    """Apply fault `name` on `node` (or on its whole scope); return where it was applied."""
    fault = lookup(name)
    where = targets(fault, node, [] if fault.scope == "cluster" else cluster_nodes(sim))
    for target in where:
        entry = {"fault": fault.name, "node": target}
        if entry in active(sim):
            continue
        fault.apply(sim, target)
        _record(sim, [*active(sim), entry])
    return where


def heal(sim: Sim, node: str | None = None, fault: str | None = None) -> list[dict[str, Any]]:
    """Heal every applied fault (on `node`, of `fault`, when named); return what was healed.

    Cluster faults are healed first, so the API server is back before node faults
    are undone through it.
    """
    entries = active(sim)
    if node is not None:
        check_node(node, cluster_nodes(sim))
    chosen = [e for e in entries if node in (None, e["node"]) and fault in (None, e["fault"])]
    chosen.sort(key=lambda e: e["node"] is not None)
    for entry in chosen:
        BY_NAME[entry["fault"]].heal(sim, entry["node"])
        _record(sim, [e for e in active(sim) if e != entry])
    return chosen
