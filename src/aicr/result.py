"""What a check returns, and how it becomes one CTRF test.

A check's result is structured data (status, one-line message, evidence
sections), never text scraped from logs. Its JSON form is what the check's
pod hands back to the orchestrator.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from aicr.ctrf import Status, Test

if TYPE_CHECKING:  # only annotations: a check pod builds results and never loads the planner
    from aicr.plan import PlannedCheck

# How a check pod hands its result back: the result ConfigMap's key, the mark of the
# summary line it prints, and the exit code each status ends the pod with.
RESULT_KEY = "result.json"
SUMMARY_MARK = "aicrResult"
STATUS_BY_EXIT = {0: Status.PASSED, 1: Status.FAILED, 2: Status.SKIPPED, 3: Status.OTHER}
MAX_STDOUT_LINES = 1000  # as AICR: enough to diagnose, bounded for huge logs
MAX_LINE_CHARS = 512


class Detail(StrEnum):
    """Why a check ended ``other`` (or was skipped); lets reports and evidence say what happened."""

    TIMEOUT = "timeout"
    UNSCHEDULABLE = "unschedulable"
    IMAGE_PULL = "image-pull"
    OOM_KILLED = "oom-killed"
    CRASHED = "crashed"
    EVICTED = "evicted"
    DELETED = "deleted"
    NO_RESULT = "no-result"
    BAD_RESULT = "bad-result"
    API_UNREACHABLE = "api-unreachable"
    INTERRUPTED = "interrupted"
    NOT_APPLICABLE = "not-applicable"
    SKIP_FLAG = "skip-check"
    NO_CLUSTER = "no-cluster"
    PHASE_STOPPED = "phase-stopped"
    INTERNAL = "internal-error"


class StepStatus(StrEnum):
    """How one evidence section (a step of a check) came out."""

    PASSED = "passed"
    FAILED = "failed"
    OTHER = "other"  # the step could not find out (it raised, or recorded no verdict)
    INFO = "informational"  # what was looked at, not itself a judgement


class EvidenceSection(BaseModel):
    """One thing the check asked the cluster, what came back and what it concluded.

    ``verdict`` is the reason text; ``status`` and ``timestamp`` (ISO 8601 UTC,
    when the step started) are set by ``CheckContext.record`` and ``step``.
    """

    model_config = ConfigDict(frozen=True)

    title: str
    asked: str = ""
    answer: str = ""
    verdict: str = ""
    status: StepStatus | None = None
    timestamp: str | None = None


VALIDATOR = "validator"  # the check's own pod, running the validator image
WORKLOAD = "workload"  # a pod the check created, or that its objects made


class ImageRun(BaseModel):
    """One container a check ran (its validator pod's or a workload's) and the image it ran.

    ``digest`` is the registry digest the kubelet reported in ``imageID``
    (``aicr.kube.image_ids``); when it reported none, ``no_digest`` says why.
    """

    model_config = ConfigDict(frozen=True)

    role: str  # VALIDATOR or WORKLOAD
    pod: str  # namespace/name
    container: str
    image: str  # the reference the pod spec asked for
    image_id: str = ""  # status imageID, as reported
    digest: str | None = None
    no_digest: str | None = None

    @classmethod
    def of(cls, pod: dict[str, Any], role: str) -> list[ImageRun]:
        """Every container status of ``pod``, read by ``aicr.kube.image_ids``."""
        from aicr.kube import image_ids

        meta = pod.get("metadata") or {}
        where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        out = []
        for container, image, image_id in image_ids.ran(pod):
            found = image_ids.resolve(image_id)
            out.append(
                cls(
                    role=role,
                    pod=where,
                    container=container,
                    image=image,
                    image_id=image_id,
                    digest=found.digest,
                    no_digest=found.no_digest,
                )
            )
        return out

    def as_extra(self) -> dict[str, Any]:
        """The report's form (a test's ``extra.images`` entry)."""
        out: dict[str, Any] = {
            "role": self.role,
            "pod": self.pod,
            "container": self.container,
            "image": self.image,
            "imageID": self.image_id,
        }
        if self.digest:
            out["digest"] = self.digest
        else:
            out["noDigest"] = self.no_digest or "no digest reported"
        return out


class CheckResult(BaseModel):
    """The outcome of one check."""

    model_config = ConfigDict(frozen=True)

    name: str
    status: Status
    message: str
    evidence: list[EvidenceSection] = Field(default_factory=list)
    detail: Detail | None = None
    start_ms: int = Field(default_factory=lambda: int(time.time() * 1000))
    stop_ms: int = Field(default_factory=lambda: int(time.time() * 1000))
    node: str | None = None
    nodes: list[str] = Field(default_factory=list)  # every node the check read (for redaction)
    images: list[ImageRun] = Field(default_factory=list)  # what its pods ran, by digest
    stdout: list[str] = Field(default_factory=list)

    @classmethod
    def ended(
        cls,
        check: PlannedCheck | str,
        status: Status,
        message: str,
        detail: Detail | None = None,
        **kwargs: Any,
    ) -> CheckResult:
        """A result decided by the orchestrator (skip, timeout, crash...), not by the check."""
        name = check if isinstance(check, str) else check.name
        return cls(name=name, status=status, message=message, detail=detail, **kwargs)


def ran_images(results: list[CheckResult]) -> list[dict[str, Any]]:
    """Every image the run's pods ran, once per image and digest, with the checks that ran it.

    The run's provenance (``extra.aicr.provenance.images``): the validator pods' first,
    then the workloads', each by the digest the kubelet reported, or ``noDigest`` saying
    why there is none.
    """
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for result in results:
        for run in result.images:
            what = run.digest or run.image_id or (run.no_digest or "")
            entry = found.setdefault(
                (run.role, run.image, what),
                {"role": run.role, "image": run.image, "checks": [], "containers": 0},
            )
            if run.digest:
                entry["digest"] = run.digest
            else:
                entry["noDigest"] = run.no_digest or "no digest reported"
            if run.image_id:
                entry["imageID"] = run.image_id
            entry["containers"] += 1
            if result.name not in entry["checks"]:
                entry["checks"].append(result.name)
    order = {VALIDATOR: 0, WORKLOAD: 1}
    return [found[k] for k in sorted(found, key=lambda k: (order.get(k[0], 2), k[1], k[2]))]


def bounded_lines(text: str) -> list[str]:
    """The last MAX_STDOUT_LINES lines, each cut to MAX_LINE_CHARS."""
    lines = text.splitlines()[-MAX_STDOUT_LINES:]
    return [line[:MAX_LINE_CHARS] for line in lines]


def to_test(check: PlannedCheck, result: CheckResult) -> Test:
    """One CTRF test; phase and requirement ids as labels, evidence in extra."""
    labels: dict[str, Any] = {"phase": check.phase.value, "check": check.name}
    if check.spec.requirements:
        labels["requirements"] = list(check.spec.requirements)
    extra: dict[str, Any] = {
        "evidence": [s.model_dump(mode="json", exclude_none=True) for s in result.evidence],
        "timeoutSeconds": int(check.timeout.total_seconds()),
    }
    if result.detail:
        extra["statusDetail"] = result.detail.value
    if result.status == Status.SKIPPED:
        extra["reason"] = result.message
    if result.node:
        extra["node"] = result.node
    if result.nodes:
        extra["nodes"] = list(result.nodes)
    if result.images:
        extra["images"] = [i.as_extra() for i in result.images]
    return Test(
        name=check.name,
        status=result.status,
        duration=max(0, result.stop_ms - result.start_ms),
        start=result.start_ms,
        stop=result.stop_ms,
        suite=[check.phase.value],
        message=result.message,
        stdout=result.stdout or None,
        labels=labels,
        extra=extra,
    )
