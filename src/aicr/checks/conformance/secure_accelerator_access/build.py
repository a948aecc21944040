"""The pure parts of secure-accelerator-access: the probes, where they run, what each must see.

No client and no I/O: the plan, the pods, the report a container prints and
the verdict on it are functions of plain values and dicts, tested as tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from aicr.checks.probe_pods import gpu_claim, pinned_to, restricted_pod_spec
from aicr.kube import names as k8s_names
from aicr.kube.gpu_inventory import Target
from aicr.kube.gpus import GPU_RESOURCE, gpu_toleration

Obj = dict[str, Any]
IMAGE = "ubuntu"  # in aicr/checks/images.yaml: a vanilla image, nothing NVIDIA of its own
REQUEST = "gpu"  # the pod's claim entry (DRA mode)
PROBE, CLAIMED, UNCLAIMED = "probe", "claimed", "unclaimed"  # container names
END = "end-of-report"
# What a container sees: its /dev/nvidia* entries and what `nvidia-smi -L` lists
# (when the runtime put nvidia-smi on its PATH). Then it sleeps, so pods that
# must hold their GPUs at the same time (cross-pod) do; the check deletes them.
REPORT = (
    "printf 'dev:'; for d in /dev/nvidia*; do [ -e \"$d\" ] && printf ' %s' \"${d#/dev/}\"; "
    "done; echo; "
    "if command -v nvidia-smi >/dev/null 2>&1; then out=$(nvidia-smi -L 2>&1); "
    'echo "smi: $?"; [ -n "$out" ] && printf \'%s\\n\' "$out" | sed \'s/^/smi-out: /\'; '
    f"else echo 'smi: absent'; fi; echo {END}; exec sleep 600"
)
GRACE_SECONDS = 1  # the sleeping probes need no time to shut down
GPU_LINE = re.compile(r"GPU \d+: .*\(UUID: (?P<uuid>[^)]+)\)")

POSITIVE, NEGATIVE, MULTI, CROSS = "positive", "negative", "multi-container", "cross-pod"
BYPASS_ENV, BYPASS_RUNTIME_CLASS = "bypass NVIDIA_VISIBLE_DEVICES=all", "bypass RuntimeClass"


@dataclass(frozen=True)
class ProbePod:
    """One probe pod: its node, its containers and which of them is allocated one GPU."""

    name: str
    node: str
    containers: tuple[str, ...]
    claimed: str | None = None  # the container allocated one GPU (at most one per pod)
    env_all: bool = False  # every container sets NVIDIA_VISIBLE_DEVICES=all
    runtime_class: str | None = None


@dataclass(frozen=True)
class Probe:
    """One named sub-result: its pods, or why it could not run."""

    title: str
    kind: str
    pods: tuple[ProbePod, ...] = ()
    unrunnable: str = ""  # why no pod could be placed (a failure)
    untested: str = ""  # why the cluster cannot hold this probe at all (recorded, not failed)


@dataclass(frozen=True)
class Report:
    """What one container printed: its /dev/nvidia* entries and nvidia-smi's answer."""

    devices: tuple[str, ...]
    smi: str  # "absent" (not on PATH) or its exit code
    smi_out: tuple[str, ...] = ()

    @property
    def uuids(self) -> list[str]:
        """The GPUs ``nvidia-smi -L`` listed."""
        return [m["uuid"] for line in self.smi_out if (m := GPU_LINE.fullmatch(line.strip()))]

    @property
    def gpu_nodes(self) -> list[str]:
        """The per-GPU device nodes (``nvidia0``...; not nvidiactl or nvidia-uvm)."""
        return [d for d in self.devices if re.fullmatch(r"nvidia\d+", d)]

    def sees_any(self) -> bool:
        """Any sign of an accelerator: a /dev/nvidia* entry or a GPU nvidia-smi lists."""
        return bool(self.devices or self.uuids)

    def __str__(self) -> str:
        smi = (
            "not on PATH"
            if self.smi == "absent"
            else (f"exit {self.smi}" + (f": {'; '.join(self.smi_out)}" if self.smi_out else ""))
        )
        return f"/dev: {' '.join(self.devices) or 'no nvidia*'}; nvidia-smi -L: {smi}"


def read_report(log: str) -> Report | str:
    """The container's report, or what is wrong with its log."""
    lines = log.splitlines()
    if END not in (line.strip() for line in lines):
        last = next((line for line in reversed(lines) if line.strip()), "")
        return "its report is incomplete" + (
            f" (last line: {last.strip()[:120]})" if last else " (empty log)"
        )
    dev = next((line for line in lines if line.startswith("dev:")), None)
    smi = next((line for line in lines if line.startswith("smi: ")), None)
    if dev is None or smi is None:
        return "its report is malformed (no dev: or smi: line)"
    out = tuple(line[len("smi-out: ") :] for line in lines if line.startswith("smi-out: "))
    devices = sorted(dev[len("dev:") :].split(), key=_device_order)
    return Report(tuple(devices), smi[len("smi: ") :].strip(), out)


def _device_order(name: str) -> tuple[int, int, str]:
    """nvidia0, nvidia1, ..., nvidia10, then the control devices by name."""
    m = re.fullmatch(r"nvidia(\d+)", name)
    return (0, int(m[1]), "") if m else (1, 0, name)


def summary(report: Report) -> str:
    """How many GPUs a report shows, for messages."""
    if not report.sees_any():
        return "no GPU"
    return (
        f"{len(report.gpu_nodes)} GPU device nodes ({' '.join(report.devices)}) and "
        f"nvidia-smi lists {len(report.uuids)} GPUs"
    )


# ---- plan ----------------------------------------------------------------------------
@dataclass
class Plan:
    """The probes, in evidence order, and the nodes they use."""

    probes: list[Probe] = field(default_factory=list)

    @property
    def pods(self) -> list[ProbePod]:
        """Every pod of every probe."""
        return [p for probe in self.probes for p in probe.pods]


def _take(free: dict[str, int], count: int) -> str | None:
    """The node with the most free GPUs (then by name) if it has ``count``; reserves them."""
    node = min(free, key=lambda n: (-free[n], n), default=None)
    if node is None or free[node] < count:
        return None
    free[node] -= count
    return node


def plan(targets: list[Target], idle: list[str], runtime_class: str | None) -> Plan:
    """Every probe, placed.

    ``targets`` are the schedulable GPU nodes with free GPUs; ``idle`` the
    schedulable GPU nodes whose GPUs are all in use. The allocation probes take
    GPUs where most are free (cross-pod needs two on one node, so the shared
    device a broken device plugin hands out shows); the probes without an
    allocation run on every schedulable GPU node, since a node with no GPU
    shows nothing whatever its runtime does.
    """
    free = {t.node: t.gpus for t in targets}
    cross, positive, multi = _take(free, 2), _take(free, 1), _take(free, 1)
    if cross is None:
        # Two GPUs on one node are what the cross-pod probe needs; without them (one-GPU
        # nodes, or the others' workloads holding them) it cannot run, which says nothing
        # about isolation: the other probes still must pass.
        two = any(t.total >= 2 for t in targets)
        untested = (
            "every node with two GPUs has fewer than two free now"
            if two
            else "no schedulable GPU node has two GPUs"
        )
    every = sorted({*free, *idle})
    out = Plan()
    out.probes.append(_claimed(POSITIVE, positive, [("positive", (CLAIMED,))]))
    out.probes += [_unallocated(NEGATIVE, "negative", n) for n in every]
    out.probes.append(_claimed(MULTI, multi, [("multi-container", (CLAIMED, UNCLAIMED))]))
    if cross is None:
        out.probes.append(Probe(CROSS, CROSS, untested=untested))
    else:
        out.probes.append(_claimed(CROSS, cross, [(f"cross-pod-{x}", (CLAIMED,)) for x in "ab"]))
    out.probes += [_unallocated(BYPASS_ENV, "bypass-env", n, env_all=True) for n in every]
    if runtime_class:
        out.probes += [
            _unallocated(
                BYPASS_RUNTIME_CLASS, "bypass-runtimeclass", n, runtime_class=runtime_class
            )
            for n in every
        ]
    return out


def _claimed(kind: str, node: str | None, pods: list[tuple[str, tuple[str, ...]]]) -> Probe:
    """A probe whose pods' first containers are allocated one GPU each, all on ``node``."""
    if node is None:
        gpus = "a free GPU" if len(pods) == 1 else f"{len(pods)} free GPUs"
        return Probe(kind, kind, unrunnable=f"no schedulable GPU node has {gpus}")
    return Probe(kind, kind, tuple(ProbePod(name, node, cs, cs[0]) for name, cs in pods))


def _unallocated(kind: str, prefix: str, node: str, **how: Any) -> Probe:
    """A probe of one pod on ``node`` with one container and no allocation."""
    title = f"{kind} {how['runtime_class']}" if "runtime_class" in how else kind
    return Probe(f"{title} ({node})", kind, (ProbePod(_name(prefix, node), node, (PROBE,), **how),))


def describe(pod: ProbePod, namespace: str, image: str) -> str:
    """The pod as the evidence names it: where, what image, how it asks, its containers."""
    how = "".join(
        [
            f", runtimeClassName {pod.runtime_class}" if pod.runtime_class else "",
            ", NVIDIA_VISIBLE_DEVICES=all" if pod.env_all else "",
        ]
    )
    containers = ", ".join(c + (" (1 GPU)" if c == pod.claimed else "") for c in pod.containers)
    return f"pod {namespace}/{pod.name} on {pod.node} ({image}{how}): containers {containers}"


def _name(what: str, node: str) -> str:
    return k8s_names.bounded(f"{what}-{node}")


# ---- manifests -----------------------------------------------------------------------
def claim(pod: ProbePod) -> Obj:
    """The ResourceClaim for one GPU of a pod's claimed container (DRA mode); named as the pod."""
    return gpu_claim(pod.name, 1, REQUEST)


def manifest(pod: ProbePod, image: str, dra: bool) -> Obj:
    """The probe pod: pinned to its node, each container printing what it sees."""
    containers = []
    for name in pod.containers:
        c: Obj = {"name": name, "image": image, "command": ["sh", "-c", REPORT]}
        if name == pod.claimed:
            c["resources"] = (
                {"claims": [{"name": REQUEST}]} if dra else {"limits": {GPU_RESOURCE: "1"}}
            )
        if pod.env_all:
            c["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
        containers.append(c)
    spec = restricted_pod_spec(containers)
    spec["affinity"] = pinned_to(pod.node)
    spec["tolerations"] = [gpu_toleration()]
    spec["terminationGracePeriodSeconds"] = GRACE_SECONDS
    if pod.runtime_class:
        spec["runtimeClassName"] = pod.runtime_class
    if dra and pod.claimed:
        spec["resourceClaims"] = [{"name": REQUEST, "resourceClaimName": pod.name}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod.name}, "spec": spec}


# ---- verdict -------------------------------------------------------------------------
def judge(probe: Probe, reports: dict[tuple[str, str], Report]) -> list[str]:
    """What is wrong with a probe's reports (``(pod, container) -> report``); [] if nothing.

    A claimed container must see exactly one GPU (one device node, one GPU
    listed); every other container none at all; the two cross-pod containers
    must see different GPUs.
    """
    problems = []
    for pod in probe.pods:
        for c in pod.containers:
            r = reports[(pod.name, c)]
            who = f"{pod.name}/{c}"
            if c == pod.claimed:
                if len(r.gpu_nodes) != 1 or len(r.uuids) != 1:
                    problems.append(f"{who} was allocated one GPU but sees {summary(r)}")
            elif r.sees_any():
                problems.append(f"{who} has no GPU allocated but sees {summary(r)}")
    if probe.kind == CROSS and not problems:
        a, b = (reports[(p.name, CLAIMED)] for p in probe.pods)
        if set(a.uuids) & set(b.uuids) or set(a.gpu_nodes) & set(b.gpu_nodes):
            problems.append(
                f"{probe.pods[0].name} and {probe.pods[1].name} on "
                f"{probe.pods[0].node} were given the same GPU "
                f"{', '.join(a.uuids)} ({' '.join(a.gpu_nodes)})"
            )
    return problems


def verdict(probe: Probe) -> str:
    """What a passing probe showed, in a few words."""
    return {
        POSITIVE: "the claimed container sees exactly one GPU",
        NEGATIVE: "a pod without an allocation sees no GPU",
        MULTI: "only the claimed container sees a GPU",
        CROSS: "two pods with one GPU each see different GPUs",
        BYPASS_ENV: "NVIDIA_VISIBLE_DEVICES=all without an allocation shows no GPU",
        BYPASS_RUNTIME_CLASS: "naming the GPU RuntimeClass without an allocation shows no GPU",
    }[probe.kind]
