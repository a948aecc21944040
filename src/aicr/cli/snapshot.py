"""``aicr snapshot``: AICR's snapshot command line.

What the API server knows (``aicr.snapshot.capture``), then one node agent per
node group for the nodes' own files (``aicr.snapshot.agent``). AICR's agent flags
place and shape those agents; a note names the ones that change nothing here.
"""

from __future__ import annotations

from typing import Any

import click

from aicr import defaults, durations, flags
from aicr.cli import compat, options, render
from aicr.errors import FlagConflictError, Problem


def _checked(opts: dict[str, Any]) -> float:
    """Refuse malformed or contradictory flags and inputs (exit 2); returns the timeout (s)."""
    flags.parse_node_selector(opts["node_selector"], "--node-selector")
    for toleration in opts["toleration"]:
        flags.parse_toleration(toleration, "--toleration")
    _agent_problems(opts)
    from aicr.writers import check_writable

    unwritable = check_writable(opts["output"], "--output")
    if unwritable is not None:  # before the capture, not after it
        raise FlagConflictError(unwritable)
    if opts["require_gpu"] and opts["runtime_class"]:
        raise FlagConflictError(
            Problem(
                "--require-gpu and --runtime-class cannot be used together",
                hint="as in AICR; keep the one your cluster needs",
            )
        )
    try:
        timeout = durations.parse(opts["timeout"])
    except ValueError as exc:
        raise FlagConflictError(Problem(f"--timeout: {exc}")) from None
    return timeout.total_seconds()


def _agent_problems(opts: dict[str, Any]) -> None:
    from aicr.kube import names
    from aicr.run_plan import is_aicr_agent_image

    problems = []
    if opts["image"] is not None:
        problem = flags.image_problem(opts["image"], "--image")
        if problem is not None:
            problems.append(problem)
        elif is_aicr_agent_image(opts["image"]):
            problems.append(
                Problem(
                    f"--image {opts['image']}: AICR's own agent image cannot run aicr's node agent",
                    hint="drop --image to use the image of this version",
                )
            )
    if opts["job_name"] is not None and not names.is_name_prefix(opts["job_name"]):
        problems.append(
            Problem(
                f"--job-name '{opts['job_name']}': invalid name prefix",
                hint="lowercase letters, digits and '-'; it starts every object name",
            )
        )
    if problems:
        raise FlagConflictError(problems)


def _agents(opts: dict[str, Any], kube: Any, timeout: float) -> Any:
    """The node agents' request, or None with --no-agent."""
    if not opts["agent"]:
        return None
    from datetime import timedelta

    from aicr.catalog import load_catalog
    from aicr.checks import workload_images
    from aicr.config import EMPTY_CONFIG
    from aicr.kube.placement import TOLERATE_ALL
    from aicr.snapshot.agent import AgentRequest

    tolerations = tuple(flags.parse_toleration(t, "--toleration") for t in opts["toleration"])
    image = opts["image"] or workload_images.on_registry(
        load_catalog().image_ref, workload_images.registry(EMPTY_CONFIG)
    )
    return AgentRequest(
        kube=kube,
        image=image,
        image_pull_secrets=tuple(opts["image_pull_secret"]),
        node_selector=flags.parse_node_selector(opts["node_selector"], "--node-selector"),
        tolerations=tolerations or TOLERATE_ALL,
        no_cleanup=opts["no_cleanup"],
        name_prefix=opts["job_name"],
        timeout=timedelta(seconds=timeout),
    )


def _inert_given(ctx: click.Context) -> list[str]:
    """A note for each inert flag the user set (on the command line or in the environment)."""
    given = []
    for flag, why in compat.no_effect_flags("snapshot").items():
        name = flag.lstrip("-").replace("-", "_")
        source = ctx.get_parameter_source(name)
        if source in (
            click.core.ParameterSource.COMMANDLINE,
            click.core.ParameterSource.ENVIRONMENT,
        ):
            given.append(f"{flag}: {why}")
    return given


@click.command(cls=options.StrictCommand)
@options.kubeconfig
@options.context
@click.option(
    "-n",
    "--namespace",
    envvar="AICR_NAMESPACE",
    show_envvar=True,
    default=defaults.SNAPSHOT_NAMESPACE,
    show_default=True,
    help="AICR's agent namespace; the agents run in a run-unique namespace instead.",
)
@options.image(
    "AICR_IMAGE", "Image the node agents run (default: the check image of this version)."
)
@options.image_pull_secret("Pull secret for the node agents; repeatable.")
@options.job_name("Start the agents' object names with PREFIX.")
@options.refused("--service-account-name", message=compat.SERVICE_ACCOUNT)
@options.node_selector("Only nodes with these labels host an agent; repeatable.")
@options.toleration("The agents' tolerations (default: every taint); repeatable.")
@options.timeout(
    "Bound each read of the Kubernetes API, and each node agent.",
    default=defaults.SNAPSHOT_TIMEOUT,
    show_default=True,
)
@options.no_cleanup("Keep the agents' Jobs, RBAC and namespace.")
@click.option(
    "--agent/--no-agent",
    default=True,
    show_default=True,
    help="Run a node agent per node group (--no-agent: the Kubernetes API only).",
)
@click.option(
    "--privileged",
    is_flag=True,
    flag_value=True,
    default=True,
    help="AICR: run the agent privileged (--privileged=false turns it off).",
)
@options.require_gpu("Exit 8 when no node has allocatable nvidia.com/gpu.")
@click.option(
    "--runtime-class",
    envvar="AICR_RUNTIME_CLASS",
    show_envvar=True,
    metavar="NAME",
    help="AICR's agent runtimeClassName.",
)
@options.refused("--template", message=compat.TEMPLATE)
@click.option(
    "--max-nodes-per-entry",
    type=click.IntRange(min=0),
    default=0,
    help="AICR: node names per NodeTopology entry (0: all).",
)
@options.aks_gpu_pools
@click.option(
    "--redact",
    is_flag=True,
    help="Replace node, host and cluster names, addresses, ids and credentials with "
    "placeholders (the CNCF submission redaction).",
)
@options.output("Where the snapshot goes (default: stdout).")
@options.output_format("yaml", "Snapshot format: YAML or JSON (AICR's file format), or a table.")
@options.log_json
@options.debug
@click.pass_context
def snapshot(ctx: click.Context, /, **opts: Any) -> None:
    """Capture what the cluster is, in AICR's Snapshot format.

    Server, node, node-group and GPU readings come from the Kubernetes API (GPU
    feature discovery labels and ResourceSlices); the OS release, container toolkit
    config and NUMA layout of each node group from a short-lived agent pod
    (unprivileged, read-only mounts of exactly those files, in a run-unique
    namespace removed afterwards).

    Exit codes: 0 written, 2 invalid input, 8 cluster unreachable, a node agent
    that did not pass (nothing is written), or no GPU with --require-gpu.
    """
    from aicr.errors import ClusterError
    from aicr.kube.target import KubeTarget
    from aicr.serialize import Format
    from aicr.snapshot.agent import capture
    from aicr.snapshot.model import require_gpu
    from aicr.writers import write_snapshot

    request_timeout = _checked(opts)
    pools = None
    if opts["aks_gpu_pools"]:
        from aicr.snapshot.aks import load_pools, project

        pools = load_pools(opts["aks_gpu_pools"])  # before any cluster work
    for line in _inert_given(ctx):
        render.note(line, json_lines=opts["log_json"])
    kube = KubeTarget(opts["kubeconfig"], opts["context"])
    taken, agents = capture(
        kube,
        request_timeout,
        _agents(opts, kube, request_timeout),
        render.agent_progress(opts["log_json"]),
    )
    if agents is not None:
        render.agents(agents, json_lines=opts["log_json"])
        if agents.failures:
            raise ClusterError("node agents did not pass: " + "; ".join(agents.failures))
    if opts["require_gpu"]:
        require_gpu(taken, "live capture")
    if pools is not None:
        taken = project(taken, pools)
    if opts["redact"]:
        from aicr.snapshot.redaction import redact

        taken = redact(taken)
    where = write_snapshot(taken, opts["output"], kube, Format(opts["output_format"]))
    if where != "stdout":
        render.note(f"snapshot: {where}", json_lines=opts["log_json"])
