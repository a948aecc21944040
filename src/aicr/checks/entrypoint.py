"""What ``aicr check run NAME`` does inside a check's pod (or the local executor's subprocess).

Read the run inputs, run the check, remove its workloads (``ctx.close`` in a
``finally``, whatever the check did), hand the result back through two channels:

1. the run's result ConfigMap for this check (authoritative: the whole
   CheckResult as JSON under ``result.json``), which the orchestrator created
   empty and which this check's Role may update and nothing else;
2. a short JSON summary in the termination message (the kubelet keeps 4096 bytes),
   the fallback when the ConfigMap could not be written (``result_write`` retries
   for a while first); the check then ends ``other``, its own verdict in the message.

Logs (stdout) are diagnostics only. Exit codes: 0 passed, 1 failed, 2 skipped,
3 the check could not reach a verdict (it raised, or its inputs were unusable).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from aicr import defaults as d
from aicr.catalog import load_catalog, registry
from aicr.checks import CheckContext, RunInputs, load_inputs
from aicr.checks.result_write import write_result_configmap
from aicr.ctrf import Status
from aicr.errors import AicrError
from aicr.result import STATUS_BY_EXIT, SUMMARY_MARK, CheckResult, Detail, StepStatus
from aicr.snapshot import host_files

if TYPE_CHECKING:
    from aicr.catalog import CheckSpec
    from aicr.kube.dicts import Kube

CheckFn = Callable[[CheckContext], CheckResult]

# `spec.validate.checks.<name>.params.aicrDelaySeconds: N` (CheckParams) makes any
# check wait N seconds before it runs: synthetic checks of known duration for tests
# and the executor benchmark, through the same Job path as real runs.
EXIT_BY_STATUS = {status: code for code, status in STATUS_BY_EXIT.items()}


def find(spec: CheckSpec) -> CheckFn | None:
    """The check's ``run`` function, or None when the check is not implemented yet."""
    fn: CheckFn | None = getattr(registry.check_module(spec), "run", None)
    return fn


def not_implemented(ctx: CheckContext) -> CheckResult:
    """The verdict for a catalog check whose module does not exist yet: failed, never passed."""
    ctx.record(
        "implementation",
        f"module {registry.module_name(ctx.spec)}",
        "absent in this version of aicr",
        "failed: a check that was not performed cannot pass",
        StepStatus.FAILED,
    )
    return ctx.failed(f"not implemented: check {ctx.name} has no implementation in this aicr")


def _crashed(
    name: str, message: str, start_ms: int, ctx: CheckContext | None = None
) -> CheckResult:
    evidence, nodes = (list(ctx.evidence), ctx.node_names) if ctx else ([], [])
    return CheckResult(
        name=name,
        status=Status.OTHER,
        message=message,
        detail=Detail.CRASHED,
        start_ms=start_ms,
        evidence=evidence,
        nodes=nodes,
    )


def _timeout() -> float | None:
    """The check's effective timeout as the executor passed it, if it did."""
    try:
        return float(os.environ[d.CHECK_TIMEOUT_ENV])
    except (KeyError, ValueError):
        return None


def run_check(name: str, inputs: RunInputs, kube: Kube | None = None) -> CheckResult:
    """Run one check to a result; an exception becomes ``other``, never a pass.

    Whatever happens, the check's workloads are removed before this returns, and
    the evidence says what was created and whether it is gone.
    """
    spec = load_catalog().get(name)
    start_ms = int(time.time() * 1000)
    if spec is None and host_files.is_agent(name):
        return host_files.read_on_node(name)  # a snapshot's node agent, not a check
    if spec is None:
        return _crashed(name, f"unknown check {name!r}", start_ms)
    ctx = CheckContext(spec, inputs, kube=kube, timeout=_timeout())
    try:
        delay = ctx.params.aicr_delay_seconds
        if delay:
            time.sleep(delay)  # tests and benchmarks: a check of known duration
        fn = find(spec)
        result = not_implemented(ctx) if fn is None else fn(ctx)
    except Exception as exc:  # the check could not find out: fail closed as `other`
        traceback.print_exc()
        result = _crashed(name, f"check raised {type(exc).__name__}: {exc}", start_ms, ctx)
    finally:
        cleaned = ctx.close()
    if cleaned is not None:
        result = result.model_copy(update={"evidence": [*result.evidence, cleaned]})
    if ctx.images:  # what the check's pods ran, the close's last listing included
        result = result.model_copy(update={"images": ctx.images})
    if result.name != name:
        result = result.model_copy(update={"name": name})
    return result


def summary(result: CheckResult) -> str:
    """The termination-message form: status and message, within the kubelet's 4096 bytes."""
    doc = {SUMMARY_MARK: 1, "name": result.name, "status": result.status.value, "message": ""}
    room = d.TERMINATION_MESSAGE_LIMIT - len(json.dumps(doc).encode()) - 16
    message = result.message
    while len(json.dumps(message).encode()) > room:
        message = message[: max(0, len(message) - max(16, len(message) // 8))] + "…"
    doc["message"] = message
    return json.dumps(doc)


def undelivered(result: CheckResult, configmap: str, error: str) -> CheckResult:
    """A result whose object could not be written ends ``other`` (exit 3), never a pass.

    The termination message then carries this summary; the check's own verdict
    stays in the message.
    """
    message = (
        f"result ConfigMap {configmap} not written ({error}); the check itself "
        f"ended {result.status.value}: {result.message}"
    )
    return result.model_copy(
        update={"status": Status.OTHER, "message": message, "detail": Detail.NO_RESULT}
    )


def _print(result: CheckResult, out: TextIO) -> None:
    print(f"{result.name}: {result.status.value}: {result.message}", file=out)
    for section in result.evidence:
        status = f"{section.status.value}: " if section.status else ""
        print(f"- {section.title}: {status}{section.verdict}", file=out)
        if section.asked:
            print(f"    asked:  {section.asked}", file=out)
        if section.answer:
            print(f"    answer: {section.answer}", file=out)


def execute(
    name: str,
    run_dir: Path,
    *,
    result_configmap: str | None,
    termination_log: Path | None,
    out: TextIO | None = None,
) -> int:
    """Run check ``name`` and deliver its result; returns the process exit code."""
    start_ms = int(time.time() * 1000)
    inputs: RunInputs | None = None
    try:
        inputs = load_inputs(run_dir)
        result = run_check(name, inputs)
    except AicrError as exc:
        result = _crashed(name, f"unusable run inputs: {exc}", start_ms)
    _print(result, out or sys.stdout)
    if result_configmap and inputs is not None:
        error = write_result_configmap(result, inputs.namespace, result_configmap)
        if error:
            print(
                f"error: could not write result ConfigMap {result_configmap}: {error}",
                file=sys.stderr,
            )
            result = undelivered(result, result_configmap, error)
    if termination_log is not None:
        try:
            termination_log.write_text(summary(result), encoding="utf-8")
        except OSError as exc:
            print(f"warning: cannot write {termination_log}: {exc.strerror}", file=sys.stderr)
    return EXIT_BY_STATUS[result.status]


def default_termination_log() -> Path | None:
    """The termination-message file: the env override, else the pod's when inside a pod.

    Outside a pod (the kubelet sets KUBERNETES_SERVICE_HOST in every container) a
    /dev/termination-log that happens to exist belongs to someone else: never write it.
    """
    override = os.environ.get(d.TERMINATION_LOG_ENV)
    if override:
        return Path(override)
    if "KUBERNETES_SERVICE_HOST" not in os.environ:
        return None
    path = Path(d.TERMINATION_LOG)
    return path if path.exists() and os.access(path, os.W_OK) else None
