"""accelerator-metrics: page verdicts as tables, and run() on fakes (API, exporters, PromQL)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.catalog import load_catalog
from aicr.catalog.model import workload_pod_security
from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance import accelerator_metrics
from aicr.checks.conformance.accelerator_metrics import build
from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.kube import names
from aicr.parsers import dcgm
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult

Obj = dict[str, Any]
PROM = "http://10.244.0.9:9090"
HELP = "".join(f"# HELP {n} x.\n# TYPE {n} gauge\n" for n in build.REQUIRED)


WNS = names.workload_namespace("r0123abcd", "accelerator-metrics")
CLAIM = "gpu-load-gpu-x7k2p"  # what the resourceclaim controller names the pod's claim
DRA_LABELS = (f',dra_claim_name="{CLAIM}",dra_claim_namespace="{WNS}",'
              'dra_driver_name="gpu.nvidia.com",dra_pool_name="g0",dra_device_name="gpu-1"')


def page(node: str, gpus: int = 2, held: dict[int, str] | None = None, labels: bool = True,
         extra: str = "", stamp: str = "", busy: frozenset[int] = frozenset(),
         dra: str = "") -> str:  # fmt: skip
    """An exporter page: `held` GPUs are busy and attributed to a pod of the workload
    namespace (with `dra` labels), `busy` ones busy and attributed to nobody."""
    lines = [HELP.rstrip("\n")]
    for name in build.REQUIRED:
        for i in range(gpus):
            pod = (held or {}).get(i)
            lab = f'gpu="{i}",UUID="GPU-{node}-{i}",' if labels else ""
            lab += f'Hostname="{node}"'
            lab += f',namespace="{WNS}",pod="{pod}",container="c"{dra}' if pod else ""
            busy_now = pod is not None or i in busy
            value = {build.UTIL: 100 if busy_now else 0, build.FB_USED: 4000 if busy_now else 0,
                     build.FB_FREE: 76000 if busy_now else 80000}[name]  # fmt: skip
            lines.append(f"{name}{{{lab}}} {value}{stamp}")
    return "\n".join(lines) + "\n" + extra


def test_a_healthy_page_passes_and_is_described() -> None:
    extra = '# TYPE DCGM_FI_DEV_GPU_TEMP gauge\nDCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-g0-0"} 31\n'
    p = dcgm.parse(page("g0", extra=extra))
    assert build.judge_page(p, 2) == []
    assert build.describe(p) == ("2 GPUs; utilization 0: 0%, 1: 0%; framebuffer used 0 MiB, "
                                 "free 160000 MiB; recorded: temperature")  # fmt: skip


@pytest.mark.parametrize(
    ("text", "gpus", "problems"),
    [
        (HELP, 2, [f"{n} is only named in HELP/TYPE lines, with no sample"
                   for n in build.REQUIRED]),
        ("", 1, [f"no {n} series" for n in build.REQUIRED]),
        (page("g0", labels=False), 2,
         [f"2 {n} series, none with per-GPU labels (gpu, UUID)" for n in build.REQUIRED]),
        (page("g0", gpus=1), 2, [f"{n} for 1 of 2 GPUs" for n in build.REQUIRED]),
    ],
    ids=["help-only", "empty", "unlabelled", "too-few"],
)  # fmt: skip
def test_broken_pages(text: str, gpus: int, problems: list[str]) -> None:
    assert build.judge_page(dcgm.parse(text), gpus) == problems


def test_malformed_text_is_an_error() -> None:
    with pytest.raises(ValueError):
        dcgm.parse('DCGM_FI_DEV_GPU_UTIL{gpu="0" 1\n')


def test_collected_names_the_nodes_prometheus_lacks() -> None:
    result = [{"metric": {"UUID": "GPU-g0-0"}, "value": [1, "0"]}]
    assert build.judge_collected({"g0": {"GPU-g0-0"}, "g1": {"GPU-g1-0", "GPU-g1-1"}}, result) == [
        "g1: 2 of 2 GPUs not collected"]  # fmt: skip


# ---- run() on fakes -------------------------------------------------------------------
def node(name: str) -> Obj:
    labels = {"nvidia.com/gpu.present": "true"}
    return {"kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"nvidia.com/gpu": "2"}, "conditions": READY}}  # fmt: skip


READY = [{"type": "Ready", "status": "True"}]
INTERVAL_MS = "500"  # the exporters' DCGM_EXPORTER_INTERVAL: the rise bound is 2 x 0.5 s + 2 s


def exporter(n: str, ip: str, ready: bool = True, env: list[Obj] | None = None) -> Obj:
    container = {"name": "nvidia-dcgm-exporter", "ports": [{"containerPort": 9400}],
                 "env": [{"name": "DCGM_EXPORTER_INTERVAL", "value": INTERVAL_MS}]
                 if env is None else env}  # fmt: skip
    return {"kind": "Pod", "metadata": {"name": f"dcgm-{n}", "namespace": "gpu-operator",
                                        "labels": {"app": "nvidia-dcgm-exporter"}},
            "spec": {"nodeName": n, "containers": [container]},
            "status": {"phase": "Running", "podIP": ip, "conditions": [
                {"type": "Ready", "status": "True" if ready else "False"}]}}  # fmt: skip


IPS = {"g0": "10.244.1.1", "g1": "10.244.2.1"}


class Cluster:
    """Exporter pages and Prometheus answers; the load pod's GPU turns busy once it runs."""

    def __init__(self, kube: FakeKube) -> None:
        self.kube = kube
        self.collected = True
        self.load_shows = True
        self.stamp = ""  # an explicit sample timestamp (ms) every page carries
        self.requests: list[str] = []

    def loaded(self) -> bool:
        return self.load_shows and any(
            o["metadata"]["name"] == build.LOAD_POD for o in self.kube.objects)  # fmt: skip

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(str(request.url))
        host = request.url.host
        for n, ip in IPS.items():
            if host == ip:
                held = {1: build.LOAD_POD} if n == "g0" and self.loaded() else None
                return httpx.Response(200, text=page(n, held=held, stamp=self.stamp))
        query = request.url.params.get("query", "")
        result = []
        if self.collected:
            for n in IPS:
                for i in range(2):
                    busy = n == "g0" and i == 1 and self.loaded() and query.startswith(build.UTIL)
                    if "{" not in query or f'"GPU-{n}-{i}"' in query:
                        result.append({"metric": {"UUID": f"GPU-{n}-{i}"},
                                       "value": [1, "100" if busy else "0"]})  # fmt: skip
        return httpx.Response(200, json={"status": "success", "data": {"result": result}})


def fake() -> Cluster:
    kube = FakeKube([node("g0"), node("g1"), exporter("g0", IPS["g0"]), exporter("g1", IPS["g1"])])
    kube.script["Pod"] = lambda pod: [{**pod, "status": {"phase": "Running"}}]
    return Cluster(kube)


CONFIG = (f"kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n  validate:\n"
          f"    checks:\n      accelerator-metrics:\n        prometheusUrl: {PROM}\n"
          "        params: {collectSeconds: 2, loadSeconds: 5}\n")  # fmt: skip


def run(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> CheckResult:
    monkeypatch.setattr(accelerator_metrics, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(accelerator_metrics, "_client", lambda ctx: httpx.Client(
        transport=httpx.MockTransport(cluster.handle)))  # fmt: skip
    assert load_catalog().get("accelerator-metrics") is not None
    recipe = parse_recipe("componentRefs:\n- name: gpu-operator\n  namespace: gpu-operator\n")
    inputs = RunInputs("r0123abcd", "aicr-validation", recipe, parse_config(CONFIG, "cfg.yaml"))
    return entrypoint.run_check("accelerator-metrics", inputs, kube=cluster.kube)


def steps(result: CheckResult) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in result.evidence]


def test_healthy_passes_with_a_step_per_node_and_cleans_up(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.PASSED, "per-GPU metrics exported on 2 GPU nodes (4 GPUs), collected by "
        "Prometheus, utilization rose under load")  # fmt: skip
    assert steps(result) == [("exporter on g0", "passed"), ("exporter on g1", "passed"),
                             ("collected by Prometheus", "passed"),
                             ("utilization under load on g0", "passed"),
                             ("workloads", "passed")]  # fmt: skip
    assert result.evidence[0].asked == (
        "GET http://10.244.1.1:9400/metrics (pod gpu-operator/dcgm-g0)")
    assert result.evidence[3].answer == (
        "GPU 1 (GPU-g0-1): 0% before, 100% on the exporter and 100% in Prometheus under load")
    assert f"{PROM}/api/v1/query?query=DCGM_FI_DEV_GPU_UTIL" in cluster.requests
    assert not [o for o in cluster.kube.objects if o["metadata"]["name"] == build.LOAD_POD]


def test_an_unready_exporter_fails_naming_the_node(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    cluster.kube.objects[3] = exporter("g1", IPS["g1"], ready=False)
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, "1/2 accelerator metrics steps failed: exporter on g1: no ready exporter "
        "pod on g1")  # fmt: skip


def test_series_prometheus_lacks_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    cluster.collected = False
    result = run(cluster, monkeypatch)
    assert result.status == Status.FAILED
    assert result.message.startswith(
        "1/3 accelerator metrics steps failed: collected by Prometheus: not collected within 2s: "
        "DCGM_FI_DEV_GPU_UTIL: g0: 2 of 2 GPUs not collected")  # fmt: skip


def test_utilization_that_does_not_follow_the_load_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    cluster.load_shows = False
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, "1/4 accelerator metrics steps failed: utilization under load on g0: "
        "utilization did not rise under load within 3s")  # fmt: skip
    assert result.evidence[3].answer == "the exporter attributes no GPU to the load pod"
    assert not [o for o in cluster.kube.objects if o["metadata"]["name"] == build.LOAD_POD]


def test_a_frozen_page_is_named_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    cluster.load_shows = False
    cluster.stamp = " 1764600000000"  # 2025-12-01T14:40:00Z on every scrape
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, "1/4 accelerator metrics steps failed: utilization under load on g0: "
        "utilization did not rise under load within 3s: the exporter's samples are stale "
        "(stamped 2025-12-01T14:40:00+00:00, not advancing)")  # fmt: skip


@pytest.mark.parametrize(
    ("first", "then", "frozen"),
    [("", "", None), (" 1000", " 2000", None), (" 2000", " 2000", 2.0), ("", " 2000", None)],
    ids=["unstamped", "advancing", "frozen", "stamped-later"],
)  # fmt: skip
def test_stale_means_stamps_that_stop_advancing(first: str, then: str,
                                               frozen: float | None) -> None:  # fmt: skip
    before, after = dcgm.parse(page("g0", stamp=first)), dcgm.parse(page("g0", stamp=then))
    assert build.stale(before, after) == frozen


# ---- DRA mode: the load's GPU through a ResourceClaim ---------------------------------
DRA_RECIPE = ("componentRefs:\n- name: gpu-operator\n  namespace: gpu-operator\n"
              "  overrides: {devicePlugin: {enabled: false}}\n"
              "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver-gpu\n"
              "  overrides: {resources: {gpus: {enabled: true}}, "
              "gpuResourcesEnabledOverride: true}\n")
UNSCHEDULABLE = ("0/3 nodes are available: 1 cannot allocate all claims, 2 node(s) didn't "
                 "match Pod's node affinity/selector.")  # fmt: skip


def gpu_slice(n: str, gpus: int = 2) -> Obj:
    devices = [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"},
                                                   "uuid": {"string": f"GPU-{n}-{i}"}}}
               for i in range(gpus)]  # fmt: skip
    return {"kind": "ResourceSlice", "metadata": {"name": f"{n}-gpu.nvidia.com"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": n, "pool": {"name": n},
                     "devices": devices}}  # fmt: skip


def dra_node(name: str) -> Obj:
    return {"kind": "Node", "metadata": {"name": name, "labels": {
        "nvidia.com/gpu.present": "true"}}, "status": {"allocatable": {},
                                                       "conditions": READY}}  # fmt: skip


class DraCluster(Cluster):
    """The load pod's template makes a claim the scheduler allocates (g0/gpu-1), or cannot."""

    def __init__(self, kube: FakeKube) -> None:
        super().__init__(kube)
        self.allocates = True
        self.pool = "g0"  # where the claim's device is
        self.maps_claims = True  # the exporter runs with KUBERNETES_ENABLE_DRA
        self.load_scrapes: int | None = None  # the load ends after this many scrapes of g0
        kube.script["Pod"] = self.schedule

    def schedule(self, pod: Obj) -> list[Obj]:
        allocation = {"devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com",
                                               "pool": self.pool, "device": "gpu-1"}]}}
        status = ({"allocation": allocation, "reservedFor": [{"resource": "pods",
                                                              "name": build.LOAD_POD}]}
                  if self.allocates else {})  # fmt: skip
        self.kube.objects.append({"kind": "ResourceClaim", "metadata": {
            "name": CLAIM, "namespace": WNS}, "status": status})  # fmt: skip
        claims = [{"name": build.LOAD_CLAIM, "resourceClaimName": CLAIM}]
        if not self.allocates:
            return [{**pod, "status": {"phase": "Pending", "resourceClaimStatuses": claims,
                                       "conditions": [{"type": "PodScheduled", "status": "False",
                                                       "reason": "Unschedulable",
                                                       "message": UNSCHEDULABLE}]}}]  # fmt: skip
        return [{**pod, "status": {"phase": "Running", "resourceClaimStatuses": claims}}]

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == IPS["g0"] and self.loaded():
            self.requests.append(str(request.url))
            if self.load_scrapes is not None:
                self.load_scrapes -= 1
                if self.load_scrapes < 0:
                    return httpx.Response(200, text=page("g0"))  # done: idle again
            if self.maps_claims:
                text = page("g0", held={1: build.LOAD_POD}, dra=DRA_LABELS)
            else:
                text = page("g0", busy=frozenset({1}))
            return httpx.Response(200, text=text)
        return super().handle(request)


def dra_fake() -> DraCluster:
    kube = FakeKube([dra_node("g0"), dra_node("g1"), gpu_slice("g0"), gpu_slice("g1"),
                     exporter("g0", IPS["g0"]), exporter("g1", IPS["g1"])])  # fmt: skip
    return DraCluster(kube)


def run_dra(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> CheckResult:
    monkeypatch.setattr(accelerator_metrics, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(accelerator_metrics, "_client", lambda ctx: httpx.Client(
        transport=httpx.MockTransport(cluster.handle)))  # fmt: skip
    recipe = parse_recipe(DRA_RECIPE)
    prepared = {"accelerator-metrics": accelerator_metrics.preflight(recipe, None, "recipe")}
    assert prepared["accelerator-metrics"] == {"mode": "dra"}
    inputs = RunInputs("r0123abcd", "aicr-validation", recipe, parse_config(CONFIG, "cfg.yaml"),
                       prepared=prepared)  # fmt: skip
    return entrypoint.run_check("accelerator-metrics", inputs, kube=cluster.kube)


def test_dra_the_load_claims_its_gpu_and_the_claimed_gpus_series_is_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = dra_fake()
    result = run_dra(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.PASSED, "per-GPU metrics exported on 2 GPU nodes (4 GPUs), collected by "
        "Prometheus, utilization rose under load on the GPU allocated to its DRA claim")
    assert result.evidence[3].asked.startswith(
        f"pod {WNS}/gpu-load (nvcr.io/nvidia/cloud-native/dcgm")
    assert f"holding one GPU of g0 through a ResourceClaim from template {WNS}/gpu-load " \
           "(gpu.nvidia.com) for 5s" in result.evidence[3].asked
    assert result.evidence[3].answer == (
        f"GPU 1 (GPU-g0-1; g0/gpu-1 of claim {WNS}/{CLAIM}): 0% before, 100% on the exporter "
        f"(pod {WNS}/gpu-load (dra_claim_name={CLAIM}, dra_claim_namespace={WNS}, "
        "dra_driver_name=gpu.nvidia.com, dra_pool_name=g0, dra_device_name=gpu-1)) and 100% in "
        "Prometheus under load")  # fmt: skip
    made = [c for c in cluster.kube.calls if c[0] in ("create", "delete")]
    assert made == [("create", "ResourceClaimTemplate", WNS, "gpu-load"),
                    ("create", "Pod", WNS, "gpu-load"), ("delete", "Pod", WNS, "gpu-load"),
                    ("delete", "ResourceClaimTemplate", WNS, "gpu-load")]  # fmt: skip


def test_dra_the_claim_template_labels_its_claims_and_the_pod_uses_it() -> None:
    labels = {"aicr.dev/run-id": "r1"}
    template = build.load_claim_template(labels)
    assert template["spec"]["metadata"] == {"labels": labels}
    assert template["spec"]["spec"]["devices"]["requests"] == [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]
    pod = build.load_pod("img", "g0", 5, dra=True)
    assert pod["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName":
                                              "gpu-load"}]  # fmt: skip
    assert pod["spec"]["containers"][0]["resources"] == {"claims": [{"name": "gpu"}]}
    assert build.load_pod("img", "g0", 5)["spec"]["containers"][0]["resources"] == {
        "limits": {"nvidia.com/gpu": "1"}}
    assert "resourceClaims" not in build.load_pod("img", "g0", 5)["spec"]


def test_the_load_runs_as_root_unprivileged_at_pod_security_baseline() -> None:
    spec = build.load_pod("img", "g0", 5)["spec"]
    assert spec["securityContext"]["runAsUser"] == 0
    assert "runAsNonRoot" not in spec["securityContext"]
    assert spec["containers"][0]["securityContext"] == {
        "privileged": False,
        "allowPrivilegeEscalation": False,
    }
    spec_ = load_catalog().get("accelerator-metrics")
    assert spec_ is not None and workload_pod_security(spec_) == "baseline"


def test_dra_gpu_counts_come_from_the_published_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = dra_fake()
    cluster.kube.objects[3] = gpu_slice("g1", gpus=3)  # g1 publishes 3 GPUs, its exporter 2
    result = run_dra(cluster, monkeypatch)
    assert result.status == Status.FAILED
    assert result.message == (
        "1/2 accelerator metrics steps failed: exporter on g1: DCGM_FI_DEV_GPU_UTIL for 2 of 3 "
        "GPUs; DCGM_FI_DEV_FB_USED for 2 of 3 GPUs; DCGM_FI_DEV_FB_FREE for 2 of 3 GPUs")


def _unmapped_and_short(cluster: DraCluster) -> None:
    """The exporter maps no claims, and the load ends before the check's bound."""
    cluster.maps_claims = False
    cluster.load_scrapes = 3


def _no_uuid(cluster: DraCluster) -> None:
    for d in cluster.kube.objects[2]["spec"]["devices"]:
        del d["attributes"]["uuid"]


@pytest.mark.parametrize(
    ("tweak", "why", "answer"),
    [(lambda c: setattr(c, "allocates", False),
      f"the load pod did not run within 2s: Pending, unschedulable: {UNSCHEDULABLE}; "
      f"its ResourceClaim {WNS}/{CLAIM}: not allocated (its status has no allocation)", None),
     (_unmapped_and_short,
      f"GPU GPU-g0-1 (g0/gpu-1 of claim {WNS}/{CLAIM}) is busy but the exporter "
      f"attributes it to no pod, not to the load pod {WNS}/gpu-load (dcgm-exporter maps "
      "DRA-allocated GPUs to pods only with KUBERNETES_ENABLE_DRA)",
      f"exporter: 100% for GPU GPU-g0-1 (g0/gpu-1 of claim {WNS}/{CLAIM}), held by no pod; "
      "Prometheus: 100%"),
     (lambda c: setattr(c, "pool", "g1"),
      f"g1/gpu-1 of claim {WNS}/{CLAIM} is a device of g1, not of g0 where the pod runs", None),
     (_no_uuid, f"g0/gpu-1 of claim {WNS}/{CLAIM}: its ResourceSlice publishes no uuid "
      "attribute", None)],
    ids=["claim-never-allocated", "claimed-gpu-attributed-to-no-pod", "device-of-another-node",
         "device-without-uuid"],
)  # fmt: skip
def test_dra_broken_loads_fail_and_clean_up(
    monkeypatch: pytest.MonkeyPatch, tweak: Callable[[DraCluster], None], why: str,
    answer: str | None,
) -> None:  # fmt: skip
    cluster = dra_fake()
    tweak(cluster)
    result = run_dra(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, f"1/4 accelerator metrics steps failed: utilization under load on g0: {why}")
    if answer is not None:
        assert result.evidence[3].answer == answer
    assert ("delete", "ResourceClaimTemplate", WNS, "gpu-load") in cluster.kube.calls


@pytest.mark.parametrize(
    ("claim", "state"),
    [(None, "not found"),
     ({"status": {}}, "not allocated (its status has no allocation)"),
     ({"status": {"allocation": {"devices": {"results": [
         {"driver": "gpu.nvidia.com", "pool": "g0", "device": "gpu-1"}]}}}},
      "allocated gpu.nvidia.com/g0/gpu-1, reserved for no pod"),
     ({"status": {"allocation": {"devices": {"results": [
         {"driver": "gpu.nvidia.com", "pool": "g0", "device": "gpu-1"}]}},
         "reservedFor": [{"name": "gpu-load"}]}},
      "allocated gpu.nvidia.com/g0/gpu-1, reserved for gpu-load")],
    ids=["gone", "unallocated", "unreserved", "reserved"],
)  # fmt: skip
def test_claim_state_words(claim: Obj | None, state: str) -> None:
    from aicr.kube.gpus import claim_state

    assert claim_state(claim) == state


# ---- where the load goes, how long it is waited for, and how it can refuse -------------
def test_the_load_goes_to_a_node_with_a_free_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    cluster.kube.objects.append({"kind": "Pod", "metadata": {"name": "trainer", "namespace": "t"},
                                 "spec": {"nodeName": "g0", "containers": [{"name": "c",
                                          "resources": {"limits": {"nvidia.com/gpu": "2"}}}]},
                                 "status": {"phase": "Running"}})  # fmt: skip
    result = run(cluster, monkeypatch)
    # g0's two GPUs are held: the load is pinned to g1, whose GPU then never turns busy here
    assert result.evidence[3].title == "utilization under load on g1"
    load = next(o for o in cluster.kube.calls if o[:2] == ("create", "Pod"))
    assert load == ("create", "Pod", WNS, "gpu-load")
    assert "holding one GPU of g1" in result.evidence[3].asked


def test_no_free_gpu_anywhere_fails_naming_the_busy_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    for n in ("g0", "g1"):
        cluster.kube.objects.append({
            "kind": "Pod", "metadata": {"name": f"t-{n}", "namespace": "t"},
            "spec": {"nodeName": n, "containers": [{"name": "c", "resources": {"limits": {
                "nvidia.com/gpu": "2"}}}]}, "status": {"phase": "Running"}})  # fmt: skip
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, "1/4 accelerator metrics steps failed: utilization under load on a GPU "
        "node: no GPU node with a passing exporter has a free GPU for the load: g0 (all GPUs in "
        "use), g1 (all GPUs in use)")  # fmt: skip
    assert not [c for c in cluster.kube.calls if c[:2] == ("create", "Pod")]


def test_the_wait_and_the_load_follow_the_exporters_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = fake()
    cluster.load_shows = False
    flag = [{"name": "DCGM_EXPORTER_INTERVAL", "value": "500"}]
    cluster.kube.objects[2] = exporter("g0", IPS["g0"], env=flag)
    cluster.kube.objects[2]["spec"]["containers"][0]["args"] = ["-c", "2500"]  # the flag wins
    result = run(cluster, monkeypatch)
    assert result.message == ("1/4 accelerator metrics steps failed: utilization under load on "
                              "g0: utilization did not rise under load within 7s")  # fmt: skip
    assert result.evidence[3].asked.endswith(
        "for 7s; its GPU's DCGM_FI_DEV_GPU_UTIL on the exporter and in Prometheus, for up to 7s "
        "(2 collection intervals of 2500 ms (flag --collect-interval=2500), and collectSeconds)")


def test_an_interval_the_spec_does_not_say_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    ref = [{"name": "DCGM_EXPORTER_INTERVAL", "valueFrom": {"configMapKeyRef": {"name": "x"}}}]
    cluster.kube.objects[2] = exporter("g0", IPS["g0"], env=ref)
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, "1/4 accelerator metrics steps failed: utilization under load on g0: the "
        "exporter's collection interval is unknown: pod gpu-operator/dcgm-g0: "
        "DCGM_EXPORTER_INTERVAL is set from a reference (valueFrom); set "
        "params.exporterIntervalMs to the interval it collects at")  # fmt: skip
    assert not [c for c in cluster.kube.calls if c[:2] == ("create", "Pod")]


def test_dcgm_refusing_to_profile_without_root_is_a_failure_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = fake()
    refused = {"phase": "Failed", "containerStatuses": [{"name": build.LOAD_CONTAINER, "state": {
        "terminated": {"exitCode": 227, "reason": "Error"}}}]}  # fmt: skip
    cluster.kube.script["Pod"] = lambda pod: [{**pod, "status": refused}]
    cluster.kube.logs_of[build.LOAD_POD] = "CacheManager Init Failed. Error: -29\n"
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, "1/4 accelerator metrics steps failed: utilization under load on g0: "
        "dcgmproftester12 refused to load the GPU: exit 227, DCGM_ST_REQUIRES_ROOT (profiling "
        "requires root; the pod ran as another user) (its log: 'CacheManager Init Failed. "
        "Error: -29')")  # fmt: skip


@pytest.mark.parametrize(
    ("container", "ms", "source"),
    [({}, 30000, "dcgm-exporter's default: neither -c nor DCGM_EXPORTER_INTERVAL"),
     ({"env": [{"name": "DCGM_EXPORTER_INTERVAL", "value": "1000"}]}, 1000,
      "DCGM_EXPORTER_INTERVAL=1000"),
     ({"args": ["--collect-interval=250"], "env": [{"name": "DCGM_EXPORTER_INTERVAL",
                                                    "value": "1000"}]}, 250,
      "flag --collect-interval=250"),
     ({"command": ["dcgm-exporter", "-c", "5000"]}, 5000, "flag --collect-interval=5000"),
     ({"args": ["-c", "soon"]}, None, "flag --collect-interval=soon is 'soon', not a number of "
      "milliseconds"),
     ({"envFrom": [{"configMapRef": {"name": "x"}}]}, None,
      "pod gpu-operator/dcgm-g0: envFrom may set DCGM_EXPORTER_INTERVAL"),
     ({"args": ["--config-file=/etc/dcgm-exporter/config.yaml"]}, None,
      "pod gpu-operator/dcgm-g0: a --config-file may set the interval")],
    ids=["default", "env", "flag-beats-env", "short-flag", "not-a-number", "env-from",
         "config-file"],
)  # fmt: skip
def test_the_collection_interval_read_as_dcgm_exporter_reads_it(
    container: Obj, ms: int | None, source: str
) -> None:
    from aicr.checks.dcgm_interval import collect_interval

    pod = exporter("g0", IPS["g0"])
    pod["spec"]["containers"][0] = {"name": "nvidia-dcgm-exporter",
                                    "ports": [{"containerPort": 9400}], **container}  # fmt: skip
    got = collect_interval(pod)
    assert (got.ms, got.source) == (ms, source)


def test_the_wait_is_two_intervals_and_collect_seconds() -> None:
    assert build.rise_bound(30000, 90) == 150 and build.load_duration(60, 150) == 150
    assert build.load_duration(600, 150) == 600
