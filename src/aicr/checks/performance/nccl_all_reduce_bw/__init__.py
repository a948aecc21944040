"""nccl-all-reduce-bw: NCCL all-reduce bus bandwidth across GPU nodes meets the recipe's gate.

What it proves: ``all_reduce_perf`` (nccl-tests, pinned image ``nccl-tests``) run over MPI
on every GPU of at least two GPU nodes completes with every rank on its node, no
wrong data, and an out-of-place bus bandwidth at the largest message size (default
16 GiB) that satisfies the recipe's ``nccl-all-reduce-bw`` constraint, with the
constraint's own operator and number (``>= 150`` means 150 GB/s, not 90% of it).

How it launches: with the Kubeflow Trainer when its API is served (a TrainingRuntime
of its own and a TrainJob), else an MPIJob when mpi-operator's API is served, else an
indexed Job of workers behind a headless Service and a launcher Job (no operator
needed); the evidence says which and why (``build``).

Outcomes: below the gate, or any ``#wrong``/out-of-bounds value, fails with the
figures; a truncated table, a missing rank, or a worker or launcher that never starts
is ``other`` with the reason; fewer than two GPU nodes skips ("needs ≥ 2 GPU nodes")
when the recipe has no such constraint and fails when it has one.
"""

from __future__ import annotations

from aicr.catalog.model import workload_pod_security
from aicr.checks import CheckContext
from aicr.checks.performance.nccl_all_reduce_bw import build, evidence, keys
from aicr.checks.performance.nccl_all_reduce_bw.judge import Host, Verdict, judge
from aicr.checks.performance.nccl_all_reduce_bw.params import CONSTRAINT, constraint_value
from aicr.checks.performance.nccl_all_reduce_bw.params import Params as Params
from aicr.checks.performance.nccl_all_reduce_bw.params import preflight as preflight
from aicr.checks.workload_images import workload_image
from aicr.constraints import NumberGate, parse_gate
from aicr.ctrf import Status
from aicr.kube import pod_status
from aicr.kube.gpus import allocatable_gpus, gpu_nodes
from aicr.parsers import ParseError, nccl_tests
from aicr.result import CheckResult


def _gate(ctx: CheckContext) -> NumberGate | None:
    value = constraint_value(ctx.recipe)
    return None if value is None else parse_gate(str(value))


def _topology(ctx: CheckContext) -> tuple[dict[str, int], dict[str, dict[str, str]]]:
    """GPU nodes the workloads may use (placement's node selector), their GPUs and NICs."""
    selector = ctx.workloads.node_selector
    nodes = {str(n["metadata"]["name"]): n for n in ctx.kube.list("Node")}
    usable = {}
    for name in gpu_nodes(list(nodes.values())):
        labels = nodes[name]["metadata"].get("labels") or {}
        if all(labels.get(k) == v for k, v in selector.items()) and allocatable_gpus(nodes[name]):
            usable[name] = allocatable_gpus(nodes[name])
    limit = ctx.params.max_nodes
    chosen = dict(list(usable.items())[:limit] if limit else usable.items())
    return chosen, {n: evidence.fabric_resources(nodes[n]) for n in chosen}


def _launcher(ctx: CheckContext) -> tuple[build.Launcher, str]:
    return build.choose({api: ctx.kube.served(api) for api in (build.TRAINER_API, build.MPI_API)})


def _running(pod: build.Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed")


def run(ctx: CheckContext) -> CheckResult:
    """Topology, launcher, workers up, the test, then the verdict on its output."""
    gate = _gate(ctx)
    topology, nics = _topology(ctx)
    ctx.record(
        "topology",
        "GPU nodes (nvidia.com/gpu.present), their allocatable GPUs and fabric devices",
        evidence.topology(topology, nics),
        f"{len(topology)} GPU nodes usable",
    )
    if len(topology) < 2:
        if gate is None:
            return ctx.skipped(
                f"needs ≥ 2 GPU nodes; {len(topology)} usable and the recipe "
                f"has no {CONSTRAINT} constraint"
            )
        return ctx.failed(
            f"the recipe's {CONSTRAINT} {gate} needs ≥ 2 GPU nodes; {len(topology)} usable"
        )
    gpus = min(topology.values())
    params = ctx.params
    launch = build.Launch(
        image=workload_image(build.IMAGE, check=ctx.name, config=ctx.config),
        nodes=len(topology),
        gpus_per_node=gpus,
        min_bytes=params.min_bytes,
        max_bytes=params.max_bytes,
        path=params.path,
        mpirun=params.mpirun,
        env=dict(params.env),
        capabilities=tuple(params.capabilities),
        resources=dict(params.resources),
        labels=ctx.workload_labels(),
        placement=ctx.workloads,
    )
    launcher, why = _launcher(ctx)
    ctx.record(
        "launcher", f"API discovery of {build.TRAINER_API} and {build.MPI_API}", launcher, why
    )
    ctx.record(
        "workload",
        "what runs",
        evidence.workload(launch, launcher),
        f"{launch.ranks} ranks: {launch.nodes} nodes x {gpus} GPUs",
    )
    key_pair = keys.ed25519_pair() if launcher == "job" else ("", "")
    for obj in build.objects(launcher, launch, key_pair):
        ctx.probes.create(obj)
    base = ctx.probes.selector
    workers = ctx.probes.wait(
        "Pod",
        _running,
        budget=params.worker_start_seconds,
        selector=f"{base},{build.role_selector('worker')}",
        expect=launch.nodes,
    )
    started = [p for n, p in workers.objects.items() if n not in workers.pending and _running(p)]
    if workers.pending or len(started) < launch.nodes:
        where = "; ".join(f"{n}: {w}" for n, w in workers.pending.items()) or (
            f"{len(started)} of {launch.nodes} worker pods exist"
        )
        if not workers.objects and launcher != "job":
            where += "; " + _operator_state(ctx, launcher)
        return _other(ctx, f"workers did not all start within {workers.seconds:g}s: {where}")
    level = params.workload_pod_security() or workload_pod_security(ctx.spec)
    ctx.record(
        "pod security",
        "the workload namespace's level the run was asked for; the worker pods' security fields",
        evidence.pod_security(level, started),
        "never privileged; IPC_LOCK, outside baseline, makes the namespace privileged"
        if level == "privileged"
        else "never privileged",
    )
    if launcher == "job":
        ctx.probes.create(build.launcher_job(launch))
    done = ctx.probes.wait(
        "Pod",
        pod_status.finished,
        budget=params.run_seconds,
        selector=f"{base},{build.role_selector('launcher')}",
        expect=1,
    )
    pods = [p for n, p in done.objects.items() if n not in done.pending]
    if done.pending or not pods:
        where = "; ".join(f"{n}: {w}" for n, w in done.pending.items()) or "no launcher pod"
        return _other(ctx, f"the launcher did not finish within {done.seconds:g}s: {where}")
    pod = pods[0]
    log = ctx.probes.logs(pod["metadata"]["name"], build.CONTAINER)
    worker_logs = {
        p["metadata"]["name"]: ctx.probes.logs(p["metadata"]["name"], build.CONTAINER)
        for p in started
    }
    hosts = [Host(build.hostname(p), str(pod_status.node_of(p)), gpus) for p in started]
    hosts.sort(key=lambda h: h.hostname)
    try:
        report = nccl_tests.parse(log)
        verdict = judge(report, hosts, gate)
    except ParseError as exc:
        report, verdict = nccl_tests.Run(), Verdict("other", str(exc))
    state = pod_status.terminated(pod) or {}
    ctx.record(
        "images",
        "containerStatuses[].imageID of the launcher and workers",
        evidence.images([pod, *started]),
        "the digests that ran",
    )
    ctx.record(
        "launcher log",
        f"log of {pod['metadata']['name']} (exit {state.get('exitCode')})",
        evidence.tail(log),
        "kept",
    )
    for name, text in sorted(worker_logs.items()):
        ctx.record(f"worker log {name}", f"log of {name}", evidence.tail(text), "kept")
    with ctx.step("all-reduce bus bandwidth") as step:
        step.asked = f"the table of {build.CONTAINER} in {pod['metadata']['name']}; gate {gate}"
        step.answer = evidence.table(report) + "\n" + evidence.ranks(report, hosts)
        if verdict.outcome == "passed":
            step.passed(verdict.message)
        elif verdict.outcome == "failed":
            step.failed(verdict.message)
        else:
            exit_note = f" (launcher exit {state.get('exitCode')})" if state.get("exitCode") else ""
            step.other(verdict.message + exit_note)
    result = ctx.conclude("steps")
    if result.status == Status.PASSED:
        return ctx.passed(
            f"{verdict.message} across {launch.nodes} nodes x {gpus} GPUs ({launcher})"
        )
    return (
        ctx.other(verdict.message) if result.status == Status.OTHER else ctx.failed(verdict.message)
    )


def _operator_state(ctx: CheckContext, launcher: build.Launcher) -> str:
    """Why an operator's object made no pods, as far as its status says."""
    kind = "TrainJob" if launcher == "trainjob" else "MPIJob"
    obj = ctx.kube.get(kind, build.NAME, ctx.workload_namespace)
    if obj is None:
        return f"{kind} {build.NAME} is gone"
    conditions = (obj.get("status") or {}).get("conditions") or []
    if not conditions:
        return f"{kind} {build.NAME} has no status: no operator reconciled it"
    return f"{kind} {build.NAME}: " + "; ".join(
        f"{c.get('type')}={c.get('status')} {c.get('reason') or ''}: {c.get('message') or ''}"
        for c in conditions
    )


def _other(ctx: CheckContext, message: str) -> CheckResult:
    with ctx.step("all-reduce bus bandwidth") as step:
        step.asked = "the workers and the launcher"
        step.answer = message
        step.other(message)
    return ctx.other(message)
