"""What a check pod's state means: pure functions from API objects to verdicts.

The orchestrator decides completion from the pod's terminated container plus
the result object; the Job's conditions only confirm (the Job controller
batches its updates). Everything that is not a well-formed result matching the
exit code ends ``other``: fail closed.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from aicr.ctrf import Status
from aicr.result import CheckResult, Detail

Obj = dict[str, Any]
RESULT_KEY = "result.json"
SUMMARY_MARK = "aicrResult"
STATUS_BY_EXIT = {0: Status.PASSED, 1: Status.FAILED, 2: Status.SKIPPED, 3: Status.OTHER}
IMAGE_PULL_FINAL = {"ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}
IMAGE_PULL_FIRST = {"ErrImagePull"}
CONFIG_ERRORS = {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}


def _status(pod: Obj) -> Obj:
    return pod.get("status") or {}


def container_status(pod: Obj) -> Obj | None:
    """The status of the pod's (only) container, once the kubelet reported one."""
    statuses = _status(pod).get("containerStatuses") or []
    return statuses[0] if statuses else None


def node_of(pod: Obj) -> str | None:
    """The node the pod was bound to."""
    return (pod.get("spec") or {}).get("nodeName")


def unschedulable(pod: Obj) -> str | None:
    """The scheduler's reason when it could not place the pod."""
    for cond in _status(pod).get("conditions") or []:
        if (cond.get("type"), cond.get("status"), cond.get("reason")) == (
            "PodScheduled",
            "False",
            "Unschedulable",
        ):
            return str(cond.get("message") or "no reason given")
    return None


def waiting(pod: Obj) -> tuple[str, str] | None:
    """``(reason, message)`` of a container stuck before it could start."""
    cs = container_status(pod)
    state = ((cs or {}).get("state") or {}).get("waiting")
    if not state or not state.get("reason"):
        return None
    return str(state["reason"]), str(state.get("message") or "")


def terminated(pod: Obj) -> Obj | None:
    """The container's terminated state (exitCode, reason, message), once it ended."""
    cs = container_status(pod)
    state = ((cs or {}).get("state") or {}).get("terminated")
    return state if state else None


def evicted(pod: Obj) -> str | None:
    """The eviction message when the kubelet or the eviction API removed the pod."""
    status = _status(pod)
    if status.get("reason") == "Evicted":
        return str(status.get("message") or "evicted")
    for cond in status.get("conditions") or []:
        disrupted = cond.get("type") == "DisruptionTarget" and cond.get("status") == "True"
        if disrupted and cond.get("reason") in ("TerminationByKubelet", "EvictionByEvictionAPI"):
            return str(cond.get("message") or cond.get("reason"))
    return None


def job_failure(job: Obj) -> tuple[str, str] | None:
    """``(reason, message)`` once the Job failed or is about to (FailureTarget)."""
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("Failed", "FailureTarget") and cond.get("status") == "True":
            return str(cond.get("reason") or ""), str(cond.get("message") or "")
    return None


def _tail(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else "…" + text[-limit:]


def _summary(message: str | None) -> Obj | None:
    if not message:
        return None
    try:
        doc = json.loads(message)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and doc.get(SUMMARY_MARK) == 1 else None


def from_termination(
    name: str, state: Obj, configmap: Obj | None, memory_limit: str | None = None
) -> CheckResult:
    """The check's result from its terminated state and its result ConfigMap (or fallback)."""
    code = state.get("exitCode")
    reason = state.get("reason") or ""
    message = state.get("message") or ""
    if reason == "OOMKilled":
        limit = f" (memory limit {memory_limit})" if memory_limit else ""
        return CheckResult.ended(
            name, Status.OTHER, f"the check was OOMKilled{limit}", Detail.OOM_KILLED
        )
    if code not in STATUS_BY_EXIT:
        said = f": {_tail(message)}" if message and not _summary(message) else ""
        return CheckResult.ended(
            name,
            Status.OTHER,
            f"the check crashed: exit code {code} ({reason or 'no reason'}){said}",
            Detail.CRASHED,
        )
    expected = STATUS_BY_EXIT[code]
    raw = ((configmap or {}).get("data") or {}).get(RESULT_KEY)
    if raw:
        try:
            result = CheckResult.model_validate_json(raw)
        except ValidationError as exc:
            return CheckResult.ended(
                name,
                Status.OTHER,
                f"malformed result object: {exc.errors()[0]['msg']}",
                Detail.BAD_RESULT,
            )
        if result.name != name or result.status != expected:
            return CheckResult.ended(
                name,
                Status.OTHER,
                f"result object says {result.name}={result.status.value} but the check "
                f"exited {code} ({expected.value})",
                Detail.BAD_RESULT,
            )
        return result
    summary = _summary(message)
    if summary is not None:
        if summary.get("name") != name or summary.get("status") != expected.value:
            return CheckResult.ended(
                name, Status.OTHER, "termination summary disagrees with the exit code",
                Detail.BAD_RESULT,
            )  # fmt: skip
        return CheckResult.ended(
            name,
            expected,
            f"{summary.get('message', '')} (result object missing: summary from the "
            "termination message, no evidence)",
            Detail.NO_RESULT if expected == Status.OTHER else None,
        )
    said = f": {_tail(message)}" if message else ""
    return CheckResult.ended(
        name,
        Status.OTHER,
        f"the check exited {code} without writing a result{said}",
        Detail.NO_RESULT,
    )
