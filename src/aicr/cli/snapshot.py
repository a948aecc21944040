"""``aicr snapshot``: AICR's snapshot command line, answered from the Kubernetes API.

There is no node agent yet, so the snapshot holds what the API server knows
(see ``aicr.snapshot.capture``). AICR's agent flags are still accepted and
checked, so scripts keep working, and a note names the ones that change nothing.
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
    from aicr.outputs import check_writable

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
    if timeout.total_seconds() <= 0:
        raise FlagConflictError(Problem(f"--timeout {opts['timeout']}: must be above zero"))
    return timeout.total_seconds()


def _inert_given(ctx: click.Context) -> list[str]:
    """The agent-only flags the user set (on the command line or through the environment)."""
    given = []
    for flag in compat.no_effect_flags("snapshot"):
        name = flag.lstrip("-").replace("-", "_")
        source = ctx.get_parameter_source(name)
        if source in (
            click.core.ParameterSource.COMMANDLINE,
            click.core.ParameterSource.ENVIRONMENT,
        ):
            given.append(flag)
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
    help="AICR's agent namespace; no agent is deployed, so nothing is created.",
)
@click.option("--image", envvar="AICR_IMAGE", show_envvar=True, help="AICR's agent image.")
@click.option(
    "--image-pull-secret", cls=options.ListOption, multiple=True, metavar="NAME",
    help="AICR's agent pull secret; repeatable.",
)  # fmt: skip
@click.option("--job-name", metavar="NAME", help="AICR's agent Job name.")
@options.refused("--service-account-name", message=compat.SERVICE_ACCOUNT)
@click.option(
    "--node-selector", multiple=True, metavar="KEY=VALUE",
    help="AICR's agent placement; repeatable.",
)  # fmt: skip
@click.option(
    "--toleration", cls=options.ListOption, multiple=True, metavar="KEY[=VALUE]:EFFECT",
    help="AICR's agent tolerations; repeatable.",
)  # fmt: skip
@click.option(
    "--timeout",
    default=defaults.SNAPSHOT_TIMEOUT,
    show_default=True,
    metavar="DURATION",
    help="Bound each read of the Kubernetes API.",
)
@click.option("--no-cleanup", is_flag=True, help="AICR: keep the agent Job and RBAC.")
@click.option(
    "--privileged", is_flag=True, flag_value=True, default=True,
    help="AICR: run the agent privileged (--privileged=false turns it off).",
)  # fmt: skip
@options.require_gpu("Exit 8 when no node has allocatable nvidia.com/gpu.")
@click.option(
    "--runtime-class", envvar="AICR_RUNTIME_CLASS", show_envvar=True, metavar="NAME",
    help="AICR's agent runtimeClassName.",
)  # fmt: skip
@options.refused("--template", message=compat.TEMPLATE)
@click.option(
    "--max-nodes-per-entry", type=click.IntRange(min=0), default=0,
    help="AICR: node names per NodeTopology entry (0: all).",
)  # fmt: skip
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
    """Capture what the cluster is, in AICR's Snapshot format, from the Kubernetes API.

    It holds the server version, node and GPU readings the API knows; readings
    that need a node agent (OS, GPU.smi, SystemD, NodeTopology) are not captured.

    Exit codes: 0 written, 2 invalid input, 8 cluster unreachable or no GPU
    with --require-gpu.
    """
    from aicr.formats import Format
    from aicr.k8s import KubeTarget
    from aicr.outputs import write_snapshot
    from aicr.snapshot.capture import capture
    from aicr.snapshot.model import require_gpu

    request_timeout = _checked(opts)
    pools = None
    if opts["aks_gpu_pools"]:
        from aicr.snapshot.aks import load_pools, project

        pools = load_pools(opts["aks_gpu_pools"])  # before any cluster work
    inert = _inert_given(ctx)
    if inert:
        render.note(f"{', '.join(inert)}: {compat.NO_AGENT}", json_lines=opts["log_json"])
    kube = KubeTarget(opts["kubeconfig"], opts["context"])
    taken = capture(kube, request_timeout)
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
