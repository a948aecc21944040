"""What a check pod's state means: pure functions from API objects to verdicts.

The orchestrator decides completion from the pod's terminated container plus
the result object; the Job's conditions only confirm (the Job controller
batches its updates). Everything that is not a well-formed result matching the
exit code ends ``other``: fail closed. Reading a pod's status itself is
``aicr.kube.pod_status``, shared with the checks' probe session.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from aicr.ctrf import Status
from aicr.result import RESULT_KEY, STATUS_BY_EXIT, SUMMARY_MARK, CheckResult, Detail

Obj = dict[str, Any]


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
                name,
                Status.OTHER,
                "termination summary disagrees with the exit code",
                Detail.BAD_RESULT,
            )
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
