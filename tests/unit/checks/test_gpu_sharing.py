"""gpu-sharing on fakes: the strategies nodes advertise, what each pod saw, the verdicts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance.gpu_sharing import build
from aicr.checks.conformance.gpu_sharing.build import Offer, ReplicaView
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.kube.rest import KubeApiError
from aicr.recipe.load import parse_recipe
from real_captures import capture

Obj = dict[str, Any]
GPU = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-{})\n"
TS = {"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/gpu.replicas": "4",
      "nvidia.com/gpu.count": "2",
      "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-SHARED"}  # fmt: skip
MIG = {"nvidia.com/mig.strategy": "single",
       "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"}  # fmt: skip


def node(name: str, labels: dict[str, str], **alloc: str) -> Obj:
    ready = [{"type": "Ready", "status": "True"}]
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {},
            "status": {"allocatable": alloc, "conditions": ready}}  # fmt: skip


def test_offers_read_what_gfd_and_the_device_plugin_advertise() -> None:
    plain = {"nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/gpu.replicas": "1"}
    assert build.offers(node("g", plain, **{"nvidia.com/gpu": "8"})) == []
    assert build.offers(node("g", TS, **{"nvidia.com/gpu": "8"})) == [
        Offer("time-slicing", "g", "nvidia.com/gpu", 8, gpus=2, replicas=4)]  # fmt: skip
    renamed = {**TS, "nvidia.com/gpu.sharing-strategy": "mps", "nvidia.com/gpu.count": ""}
    assert build.offers(node("g", renamed, **{"nvidia.com/gpu.shared": "8"})) == [
        Offer("mps", "g", "nvidia.com/gpu.shared", 8, gpus=2, replicas=4)]  # fmt: skip
    assert build.offers(node("g", MIG, **{"nvidia.com/gpu": "56"})) == [
        Offer("MIG", "g", "nvidia.com/gpu", 56, profile="1g.10gb")]  # fmt: skip
    # GFD labels mig.strategy on nodes whose GPUs are not partitioned too: no offer
    whole = {**MIG, "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert build.offers(node("g", whole, **{"nvidia.com/gpu": "8"})) == []


GKE_TS = {"cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
          "cloud.google.com/gke-max-shared-clients-per-gpu": "3"}  # fmt: skip


def test_offers_read_gkes_own_labels_where_gfd_says_nothing() -> None:
    # the labels the GKE docs show for a node pool of 3 clients per GPU, 2 GPUs a node
    assert build.offers(node("g", GKE_TS, **{"nvidia.com/gpu": "6"})) == [
        Offer("time-sharing", "g", "nvidia.com/gpu", 6, gpus=2, replicas=3)]  # fmt: skip
    mps = {**GKE_TS, "cloud.google.com/gke-gpu-sharing-strategy": "mps"}
    assert [o.name for o in build.offers(node("g", mps, **{"nvidia.com/gpu": "6"}))] == ["mps"]
    part = {"cloud.google.com/gke-gpu-partition-size": "1g.5gb"}
    assert build.offers(node("g", part, **{"nvidia.com/gpu": "7"})) == [
        Offer("MIG", "g", "nvidia.com/gpu", 7, profile="1g.5gb")]  # fmt: skip
    # time-sharing of MIG partitions is proven as MIG; one client per GPU shares nothing
    both = node("g", {**part, **GKE_TS}, **{"nvidia.com/gpu": "21"})
    assert [o.name for o in build.offers(both)] == ["MIG 1g.5gb"]
    one = {**GKE_TS, "cloud.google.com/gke-max-shared-clients-per-gpu": "1"}
    assert build.offers(node("g", one, **{"nvidia.com/gpu": "2"})) == []
    # where GFD runs too, its labels are the ones read: no second offer
    gfd_too = node("g", {**TS, **GKE_TS}, **{"nvidia.com/gpu": "8"})
    assert [o.name for o in build.offers(gfd_too)] == ["time-slicing"]


def test_a_real_mixed_mig_node_offers_each_profile() -> None:
    labels = json.loads(capture("gpu-feature-discovery", "h100-mig-mixed-node-labels.json"))
    counts = {f"nvidia.com/mig-{p}": labels[f"nvidia.com/mig-{p}.count"]
              for p in ("1g.10gb", "2g.20gb", "3g.40gb")}  # fmt: skip
    real = node("s4124-0073", labels, **{"nvidia.com/gpu": "0"}, **counts)
    assert [(o.name, o.resource, o.units) for o in build.offers(real)] == [
        ("MIG 1g.10gb", "nvidia.com/mig-1g.10gb", 2), ("MIG 2g.20gb", "nvidia.com/mig-2g.20gb", 1),
        ("MIG 3g.40gb", "nvidia.com/mig-3g.40gb", 1)]  # fmt: skip


A100_MIG = Offer("MIG", "g", "nvidia.com/gpu", 7, profile="1g.5gb")


@pytest.mark.parametrize(
    ("name", "offer", "problems"),
    [("a100-mig-pod-list-r460.txt", A100_MIG, []),
     ("a100-mig-pod-list-r460.txt",
      Offer("MIG", "g", "nvidia.com/mig-2g.10gb", 1, profile="2g.10gb"),
      ["the pod asked for MIG 2g.10gb and sees MIG 1g.5gb"]),
     ("h100-mig-single-list.txt", A100_MIG, ["the pod given 1 nvidia.com/gpu sees 7 MIG devices"])],
)  # fmt: skip
def test_judge_mig_on_real_listings(name: str, offer: Offer, problems: list[str]) -> None:
    got, seen = build.judge_mig(offer, 0, capture("nvidia-smi", name))
    assert got == problems
    assert seen.startswith("GPU-")


def test_judge_mig_when_the_gpu_was_never_partitioned_or_smi_fails() -> None:
    assert build.judge_mig(A100_MIG, 0, GPU.format("a")) == (
        ["the pod given 1 nvidia.com/gpu sees no MIG device, only GPU-a (NVIDIA H100 80GB HBM3)"],
        "GPU-a (NVIDIA H100 80GB HBM3)")  # fmt: skip
    assert build.judge_mig(A100_MIG, 0, "") == (["the pod given 1 nvidia.com/gpu sees no GPU"],
                                                "no GPU")  # fmt: skip
    assert build.judge_mig(A100_MIG, 9, "NVIDIA-SMI has failed\n")[0] == [
        "nvidia-smi -L exited 9: NVIDIA-SMI has failed"]  # fmt: skip
    assert build.judge_mig(A100_MIG, 0, "garbage\n")[0] == [
        "cannot read nvidia-smi -L: nvidia-smi -L line 1: not a GPU or MIG device: "
        "'garbage'"]  # fmt: skip


TS_OFFER = Offer("time-slicing", "g", "nvidia.com/gpu", 8, gpus=2, replicas=4)


def _views(*logs: str) -> list[ReplicaView]:
    return [build.read_replica(f"p{i}", log) for i, log in enumerate(logs)]


def listed(uuid: str, code: int = 0) -> str:
    return (GPU.format(uuid) if uuid else "") + f"{build.LISTED} {code}\n"


def test_replicas_pass_when_a_gpu_is_seen_twice() -> None:
    views = _views(listed("a"), listed("b"), listed("a"))
    assert build.judge_replicas(TS_OFFER, views)[0] == []
    assert build.shared_gpu(views) == ("GPU-a", ["p0", "p2"])


@pytest.mark.parametrize(
    ("logs", "problems"),
    [((listed("a"), listed("b"), listed("")), ["p2 sees no GPU"]),
     ((listed("a"), listed("b"), listed("c")),
      ["3 pods given nvidia.com/gpu see 3 different GPUs on a node of 2: no GPU is shared"]),
     ((listed("a"), "sh: 1: nvidia-smi: not found\naicr-listed 127\n", "booting"),
      ["p1 sees no GPU: nvidia-smi was not injected (exit 127)", "p2 printed no listing"]),
     ((listed("a"), "NVIDIA-SMI has failed\naicr-listed 9\n", listed("a")),
      ["p1 nvidia-smi -L exited 9: NVIDIA-SMI has failed"]),
     ((GPU.format("a") + listed("b"), listed("a"), listed("b")), ["p0 sees 2 GPUs"]),
     ((listed("a"), "GPU 0: H100\naicr-listed 0\n", listed("b")), ["p1 cannot read nvidia-smi "
      "-L: nvidia-smi -L line 1: not a GPU or MIG device: 'GPU 0: H100'"])],
)  # fmt: skip
def test_replicas_fail_naming_the_pod(logs: tuple[str, ...], problems: list[str]) -> None:
    assert build.judge_replicas(TS_OFFER, _views(*logs))[0] == problems


def fake(nodes: list[Obj], logs: dict[str, str], running: bool = True) -> FakeKube:
    kube = FakeKube(nodes)

    def started(pod: Obj) -> list[Obj]:
        sleeper = pod["spec"]["containers"][0]["command"][0] == "sh"
        state = {"running": {}} if sleeper else {"terminated": {"exitCode": 0}}
        phase = "Running" if sleeper else "Succeeded"
        if not running:
            return []
        return [{**pod, "status": {"phase": phase, "containerStatuses": [
            {"name": build.CONTAINER, "state": state}]}}]  # fmt: skip

    kube.script["Pod"] = started
    kube.logs_of.update(logs)
    return kube


def run(kube: FakeKube, params: dict[str, Any] | None = None) -> Any:
    config = EMPTY_CONFIG
    if params:
        from aicr.config import parse_config

        config = parse_config(
            "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n  validate:\n"
            f"    checks:\n      gpu-sharing:\n        params: {json.dumps(params)}\n",
            "c",
        )
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe("componentRefs: []\n"), config)
    return entrypoint.run_check("gpu-sharing", inputs, kube=kube)


def test_time_slicing_and_mig_delivered_pass_and_clean_up() -> None:
    nodes = [node("g0", TS, **{"nvidia.com/gpu": "8"}), node("g1", MIG, **{"nvidia.com/gpu": "56"})]
    logs = {"share-time-slicing-0": listed("a"), "share-time-slicing-1": listed("b"),
            "share-time-slicing-2": listed("a"),
            "share-1g-10gb-0": capture("nvidia-smi", "a100-mig-pod-list-r460.txt").replace(
                "1g.5gb", "1g.10gb")}  # fmt: skip
    kube = fake(nodes, logs)
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED,
        "2 GPU sharing strategies delivered: MIG 1g.10gb on g1, time-slicing on g0",
    )
    steps = [(s.title, s.status.value) for s in result.evidence]
    assert steps == [("strategies", "informational"), ("MIG 1g.10gb on g1", "passed"),
                     ("time-slicing on g0", "passed"), ("workloads", "passed")]  # fmt: skip
    ts = result.evidence[2]
    assert ts.verdict == "3 pods ran at once on 2 GPUs; GPU-a is shared by share-time-slicing-0, " \
                         "share-time-slicing-2"  # fmt: skip
    assert "share-time-slicing-1: GPU-b (NVIDIA H100 80GB HBM3)" in ts.answer
    made = [c for c in kube.calls if c[0] == "create"]
    replicas = [f"share-time-slicing-{i}" for i in range(3)]
    assert [c[3] for c in made] == ["share-1g-10gb-0", *replicas]
    assert sorted(c[3] for c in kube.calls if c[0] == "delete") == sorted(c[3] for c in made)


def test_none_advertised_is_a_skip_with_the_reason() -> None:
    result = run(fake([node("g0", {"nvidia.com/gpu.sharing-strategy": "none"},
                            **{"nvidia.com/gpu": "8"})], {}))  # fmt: skip
    assert (result.status, result.message) == (Status.SKIPPED, "no GPU sharing strategy advertised")
    assert [(s.title, s.answer) for s in result.evidence] == [("strategies", "none")]


def test_advertised_but_not_delivered_fails_naming_the_strategy() -> None:
    nodes = [node("g0", TS, **{"nvidia.com/gpu": "8"})]
    logs = {"share-time-slicing-0": listed("a"), "share-time-slicing-1": listed("b"),
            "share-time-slicing-2": listed("")}  # fmt: skip
    result = run(fake(nodes, logs))
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 GPU sharing strategies failed: time-slicing on g0: "
        "share-time-slicing-2 sees no GPU")  # fmt: skip


def test_replica_pods_that_never_run_fail_and_a_full_node_is_other() -> None:
    nodes = [node("g0", TS, **{"nvidia.com/gpu": "8"})]
    result = run(fake(nodes, {}, running=False), {"probe_seconds": 0.2})
    assert result.status == Status.FAILED
    assert result.message.startswith("1/1 GPU sharing strategies failed: time-slicing on g0: "
                                     "3/3 pods did not run at once within 0s")  # fmt: skip
    busy = [node("g0", TS, **{"nvidia.com/gpu": "2"})]  # 2 replicas left: fewer than 3 pods
    result = run(fake(busy, {}))
    assert (result.status, result.message) == (
        Status.OTHER, "1/1 GPU sharing strategies could not be judged: time-slicing: no node has "
        "room to prove time-slicing: too few free nvidia.com/gpu: g0 (2 free)")  # fmt: skip


def plugin(gates: str | None, image: str = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0") -> Obj:
    """The DRA driver's kubelet plugin DaemonSet as its chart renders it."""
    env = [{"name": "FEATURE_GATES", "value": gates}] if gates is not None else []
    return {"kind": "DaemonSet", "metadata": {"name": "nvidia-dra-driver-gpu-kubelet-plugin",
            "namespace": "nvidia-dra-driver"}, "spec": {"template": {"spec": {"containers": [
                {"name": "compute-domains", "image": image},
                {"name": "gpus", "image": image, "env": env}]}}}}  # fmt: skip


def gpu_slice(node_name: str, count: int) -> Obj:
    gpu = {"type": {"string": "gpu"}}
    devices = [{"name": f"gpu-{i}", "attributes": gpu} for i in range(count)]
    spec = {"driver": "gpu.nvidia.com", "nodeName": node_name, "devices": devices,
            "pool": {"name": node_name}}  # fmt: skip
    return {"kind": "ResourceSlice", "metadata": {"name": f"{node_name}-slice"}, "spec": spec}


@pytest.mark.parametrize(
    ("gates", "found"),
    [("TimeSlicingSettings=true,", ["DRA TimeSlicing"]),
     ("MPSSupport=true,TimeSlicingSettings=true,", ["DRA TimeSlicing", "DRA MPS"]),
     ("TimeSlicingSettings=false,NVMLDeviceHealthCheck=true,", []),
     (None, [])],  # the chart's default: featureGates {} renders no FEATURE_GATES
    ids=["time-slicing", "both", "off", "chart-default"],
)  # fmt: skip
def test_dra_offers_follow_the_plugins_gates(gates: str | None, found: list[str]) -> None:
    offers = build.dra_offers([plugin(gates)], [gpu_slice("d0", 8), gpu_slice("cpu", 0)])
    assert [(o.name, o.node, o.units) for o in offers] == [(f, "d0", 8) for f in found]
    assert build.dra_offers([plugin(gates, image="other/plugin:1")], [gpu_slice("d0", 8)]) == []


def test_the_shared_claim_asks_for_the_strategy_and_both_pods_use_it() -> None:
    offer = Offer("DRA TimeSlicing", "d0", "gpu.nvidia.com", 8, gpus=8)
    claim = build.shared_claim(offer)
    assert claim["metadata"]["name"] == "share-dra-timeslicing"
    assert claim["spec"]["devices"] == {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                 "allocationMode": "ExactCount", "count": 1}}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
            "sharing": {"strategy": "TimeSlicing"}}}}]}  # fmt: skip
    pod = build.probe_pod(offer, "img", 1)
    assert pod["metadata"]["name"] == "share-dra-timeslicing-1"
    assert pod["spec"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimName": "share-dra-timeslicing"}]  # fmt: skip
    assert pod["spec"]["containers"][0]["resources"] == {"claims": [{"name": "gpu"}]}


DRA_TS = Offer("DRA TimeSlicing", "d0", "gpu.nvidia.com", 8, gpus=8)


@pytest.mark.parametrize(
    ("logs", "problems"),
    [((listed("a"), listed("a")), []),
     ((listed("a"), listed("b")),
      ["2 pods sharing claim share-dra-timeslicing see 2 different GPUs: GPU-a, GPU-b"]),
     ((listed("a"), listed("")), ["p1 sees no GPU"])],
    ids=["same-gpu", "two-gpus", "none"],
)  # fmt: skip
def test_pods_of_one_claim_see_the_same_gpu(logs: tuple[str, ...], problems: list[str]) -> None:
    assert build.judge_shared_claim(DRA_TS, _views(*logs))[0] == problems


def test_dra_time_slicing_delivered_passes_and_a_claim_never_prepared_fails() -> None:
    objects = [node("d0", {"nvidia.com/gpu.present": "true"}), plugin("TimeSlicingSettings=true,"),
               gpu_slice("d0", 8)]  # fmt: skip
    logs = {"share-dra-timeslicing-0": listed("a"), "share-dra-timeslicing-1": listed("a")}
    kube = fake(objects, logs)
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED, "1 GPU sharing strategy delivered: DRA TimeSlicing on d0")  # fmt: skip
    step = result.evidence[1]
    assert (step.title, step.verdict) == (
        "DRA TimeSlicing on d0",
        "2 pods ran at once on one claimed GPU; GPU-a is shared by share-dra-timeslicing-0, "
        "share-dra-timeslicing-1",
    )
    made = [c[3] for c in kube.calls if c[0] == "create"]
    assert made == ["share-dra-timeslicing", "share-dra-timeslicing-0", "share-dra-timeslicing-1"]
    assert sorted(c[3] for c in kube.calls if c[0] == "delete") == sorted(made)
    result = run(fake(objects, {}, running=False), {"probe_seconds": 0.2})
    assert result.status == Status.FAILED
    assert result.message.startswith("1/1 GPU sharing strategies failed: DRA TimeSlicing on d0: "
                                     "2/2 pods did not run at once within 0s")  # fmt: skip


def holding(node_name: str, *devices: int) -> Obj:
    """A claim of someone else's the scheduler allocated these devices of ``node_name``."""
    results = [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": node_name,
                "device": f"gpu-{i}"} for i in devices]  # fmt: skip
    return {"kind": "ResourceClaim", "metadata": {"name": f"held-{node_name}", "namespace": "ml"},
            "status": {"allocation": {"devices": {"results": results}}}}  # fmt: skip


def test_dra_sharing_is_proven_on_a_node_with_a_free_device_never_a_full_one() -> None:
    gpu_node = {"nvidia.com/gpu.present": "true"}
    objects = [node("d0", gpu_node), node("d1", gpu_node), plugin("TimeSlicingSettings=true,"),
               gpu_slice("d0", 2), gpu_slice("d1", 2), holding("d0", 0, 1)]  # fmt: skip
    logs = {"share-dra-timeslicing-0": listed("a"), "share-dra-timeslicing-1": listed("a")}
    kube = fake(objects, logs)
    made: list[Obj] = []
    create = kube.create
    kube.create = lambda obj, dry_run=False: made.append(obj) or create(obj, dry_run)  # type: ignore[method-assign]
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED, "1 GPU sharing strategy delivered: DRA TimeSlicing on d1")  # fmt: skip
    step = result.evidence[1]
    assert step.title == "DRA TimeSlicing on d1"
    assert step.asked.endswith("; free gpu.nvidia.com: d1 2/2 free; d0 none free"), step.asked
    pods = [o for o in made if o["kind"] == "Pod"]
    assert [p["metadata"]["name"] for p in pods] == [
        "share-dra-timeslicing-0", "share-dra-timeslicing-1"]  # fmt: skip
    pinned = [p["spec"]["affinity"]["nodeAffinity"] for p in pods]
    assert all("'d1'" in str(a) and "'d0'" not in str(a) for a in pinned), pinned
    full = [*objects, holding("d1", 0, 1)]
    full[-1]["metadata"]["name"] = "held-d1"
    kube = fake(full, logs)
    result = run(kube)
    assert (result.status, result.message) == (
        Status.OTHER, "1/1 GPU sharing strategies could not be judged: DRA TimeSlicing: no node "
        "has room to prove DRA TimeSlicing: no free gpu.nvidia.com device (every one is "
        "allocated to a ResourceClaim): d0, d1")  # fmt: skip
    assert [c for c in kube.calls if c[0] == "create"] == []  # nothing made, nothing waited for


UNPREPARED = (
    "Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed "
    "for claim ns/share-dra-timeslicing: error preparing devices for claim "
    "ns/share-dra-timeslicing:uid: prepare devices failed: error validating GPU config: unknown "
    "GPU sharing strategy: TimeSlicing"
)


def unprepared(objects: list[Obj]) -> FakeKube:
    """The DRA pods never start; the kubelet records FailedPrepareDynamicResources for each."""
    kube = fake(objects, {}, running=False)

    def stuck(pod: Obj) -> list[Obj]:
        meta = pod["metadata"]
        kube.objects.append({"kind": "Event", "metadata": {
            "name": f"{meta['name']}.1", "namespace": meta["namespace"]},
            "involvedObject": {"kind": "Pod", "name": meta["name"]},
            "reason": "FailedPrepareDynamicResources", "message": UNPREPARED, "type": "Warning",
            "lastTimestamp": "2026-12-06T21:00:00Z"})  # fmt: skip
        return []

    kube.script["Pod"] = stuck
    return kube


def test_a_claim_the_plugin_refused_to_prepare_fails_quoting_the_kubelet() -> None:
    objects = [node("d0", {"nvidia.com/gpu.present": "true"}), plugin("TimeSlicingSettings=true,"),
               gpu_slice("d0", 8)]  # fmt: skip
    result = run(unprepared(objects), {"probe_seconds": 0.2})
    assert result.status == Status.FAILED
    head = "1/1 GPU sharing strategies failed: DRA TimeSlicing on d0: 2/2 pods did not run at once"
    assert result.message.startswith(head), result.message
    said = ("; the kubelet of share-dra-timeslicing-0, share-dra-timeslicing-1: "
            f"FailedPrepareDynamicResources: {UNPREPARED}")  # fmt: skip
    assert result.message.endswith(said), result.message
    assert result.evidence[1].answer.endswith(said)


class NoEvents(FakeKube):
    """A namespace whose events the check may not read (its Role lacks them)."""

    def listing(self, kind: str, namespace: str | None = None,
                label_selector: str | None = None) -> tuple[list[Obj], str]:  # fmt: skip
        if kind == "Event":
            raise KubeApiError(403, "Forbidden", f'events is forbidden in "{namespace}"')
        return super().listing(kind, namespace, label_selector)


def test_unreadable_events_still_fail_and_say_so() -> None:
    objects = [node("d0", {"nvidia.com/gpu.present": "true"}), plugin("TimeSlicingSettings=true,"),
               gpu_slice("d0", 8)]  # fmt: skip
    kube = unprepared(objects)
    refusing = NoEvents(kube.objects)
    refusing.script = kube.script
    result = run(refusing, {"probe_seconds": 0.2})
    assert result.status == Status.FAILED
    assert result.message.endswith(
        "; the pods' events in aicr-r0123abcd-gpu-sharing-w could not be read (HTTP 403 "
        'Forbidden: events is forbidden in "aicr-r0123abcd-gpu-sharing-w"), so what the kubelet '
        "said of the claim is unknown"), result.message  # fmt: skip
