"""The probe session: the workloads one check creates, waited on, and always removed.

A check that creates pods, claims or custom resources does so through
``ctx.probes``, owned by its ``CheckContext`` and closed by the entrypoint in a
``finally``, whatever the check did:

- ``create(obj)`` adds the run's labels, the check's workload namespace and the
  ``--node-selector`` / ``--toleration`` placement, and remembers the object;
- ``wait(kind, until, ...)`` lists, then watches from the list's
  resourceVersion on this thread (no polling), until every object of the kind
  this session created (and every one the selector finds) satisfies ``until``;
  on timeout it says where each object got to (``aicr.kube.pod_status.where``);
- ``logs(pod, container)`` reads a pod's log, ``logs_until`` until it is complete;
- ``prove(step, pods)`` creates pods that run to their end, waits for them, and
  records one step per pod: where it got to if it never ended, else a judge of its
  exit code and log (``ProbePod``);
- ``close()`` deletes everything in reverse order of creation and waits until
  it is gone, under its own budget, and returns the evidence section that says
  what was created and whether it is gone.

Every wait is bounded by the check's deadline less what cleanup and the result
write need (``aicr.defaults``).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aicr import defaults as d
from aicr.checks.probe_pods import place
from aicr.checks.steps import Step, now_iso
from aicr.kube import pod_status
from aicr.kube.kinds import KINDS, Kind
from aicr.kube.kinds import of as kind_of
from aicr.kube.placement import Placement
from aicr.result import EvidenceSection, StepStatus

if TYPE_CHECKING:
    from aicr.kube.dicts import Kube

Obj = dict[str, Any]
TITLE = "workloads"
# (exit code, log) -> (problems, what the pod saw); no problems is a pass
Judge = Callable[[int, str], tuple[list[str], str]]
Record = Callable[[str], contextlib.AbstractContextManager[Step]]  # CheckContext.step


@dataclass(frozen=True)
class ProbePod:
    """A pod that runs to its end, and the step that judges it."""

    pod: Obj
    label: str  # the step's title
    container: str  # whose exit code and log are judged
    asked: str  # the step's question after "pod <namespace>/<name> "
    judge: Judge
    passed: str  # the step's reason when the judge found no problem

    @property
    def name(self) -> str:
        """The pod's name."""
        return str(self.pod["metadata"]["name"])


@dataclass(frozen=True)
class Deadline:
    """When the check must be done (monotonic seconds), and what its waits may use of it."""

    at: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline ``seconds`` from now."""
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        """Seconds until the deadline (never negative)."""
        return max(0.0, self.at - time.monotonic())

    def for_waits(self) -> float:
        """What a wait may take now: the rest, less cleanup and the result write."""
        return max(0.0, self.remaining() - d.PROBE_CLEANUP_SECONDS - d.RESULT_RESERVE_SECONDS)


@dataclass(frozen=True)
class Waited:
    """How a wait ended: the last state of every object, and where the laggards got to."""

    objects: dict[str, Obj]  # name -> last state seen (as it was when ``until`` held)
    pending: dict[str, str]  # name -> where it got to, for those that never got there
    seconds: float  # the budget the wait had

    @property
    def done(self) -> bool:
        """Every object got there."""
        return not self.pending

    def exit_code(self, pod: str) -> tuple[int | None, str]:
        """``(the pod's container exit code, "")`` once it ended, else ``(None, why not)``."""
        obj = self.objects.get(pod) or {}
        state = pod_status.terminated(obj)
        if pod in self.pending or state is None:
            where = self.pending.get(pod) or pod_status.where(obj)
            return None, f"the pod did not finish within {int(self.seconds)}s: {where}"
        return int(state.get("exitCode", -1)), ""


@dataclass(frozen=True)
class _Made:
    kind: Kind
    namespace: str | None
    name: str

    def __str__(self) -> str:
        return f"{self.kind.name} {self.namespace + '/' if self.namespace else ''}{self.name}"


class _Relist(Exception):
    """The watch's resourceVersion expired (410): list again."""


@dataclass
class ProbeSession:
    """See the module docstring; one per check process, closed exactly once."""

    kube: Kube
    namespace: str
    labels: dict[str, str]
    placement: Placement
    deadline: Deadline
    cleanup_seconds: float = d.PROBE_CLEANUP_SECONDS
    made: list[_Made] = field(default_factory=list)
    closed: bool = False

    @property
    def selector(self) -> str:
        """The label selector of everything this session creates."""
        return ",".join(f"{k}={v}" for k, v in sorted(self.labels.items()))

    # ---- create ---------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        """Create ``obj`` labelled, namespaced and placed for this check; the created object."""
        kind = kind_of(obj)
        body = place(obj, self.placement)
        meta = body.setdefault("metadata", {})
        meta["labels"] = {**(meta.get("labels") or {}), **self.labels}
        if kind.namespaced:
            meta.setdefault("namespace", self.namespace)
        created = self.kube.create(body)
        self.made.append(_Made(kind, meta.get("namespace"), str(meta["name"])))
        return created

    # ---- wait -----------------------------------------------------------------------
    def wait(
        self,
        kind: str,
        until: Callable[[Obj], bool],
        budget: float | None = None,
        selector: str | None = None,
        expect: int = 0,
    ) -> Waited:
        """Wait until each object of ``kind`` (created here, or selected) satisfies ``until``.

        ``budget`` is capped by the check's deadline. An object deleted before it
        got there is pending ("deleted"); a wait never raises on timeout. ``expect``
        also waits until at least that many got there, for objects a controller
        makes (a Job's pods), which the session cannot name in advance.
        """
        spec = KINDS[kind]
        seconds = min(budget if budget is not None else math.inf, self.deadline.for_waits())
        end = time.monotonic() + seconds
        namespace = self.namespace if spec.namespaced else None
        expected = {m.name for m in self.made if m.kind is spec}
        seen: dict[str, Obj] = {}
        reached: set[str] = set()
        deleted: set[str] = set()

        def take(obj: Obj, gone: bool = False) -> None:
            name = str((obj.get("metadata") or {}).get("name"))
            if name in reached:
                return
            obj.setdefault("kind", spec.name)
            if gone:
                seen.pop(name, None)
                deleted.add(name)
            else:
                seen[name] = obj
                deleted.discard(name)
                if until(obj):
                    reached.add(name)

        def open_() -> set[str]:
            return (expected | set(seen) | deleted) - reached

        def waiting() -> bool:
            return bool(open_() - deleted) or len(reached) < expect

        version = None
        delay = d.PROBE_RETRY_START_SECONDS
        listed = False  # look at least once, even with no budget left, to say where things are
        while not listed or (waiting() and time.monotonic() < end):
            try:
                if version is None:
                    items, version = self.kube.listing(kind, namespace, selector or self.selector)
                    for item in items:
                        take(item)
                    # Created here but not listed: deleted already (lists are consistent reads).
                    listed_names = {str((i.get("metadata") or {}).get("name")) for i in items}
                    for name in expected - listed_names - reached:
                        seen.pop(name, None)
                        deleted.add(name)
                    listed = True
                    continue
                left = math.ceil(min(end - time.monotonic(), d.PROBE_WATCH_SECONDS))
                for event in self.kube.watch(
                    kind, namespace, selector or self.selector, version, max(1, left)
                ):
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        raise _Relist if obj.get("code") == 410 else _api_error(obj)
                    version = (obj.get("metadata") or {}).get("resourceVersion") or version
                    if event.get("type") != "BOOKMARK":
                        take(obj, gone=event.get("type") == "DELETED")
                    if not waiting() or time.monotonic() >= end:
                        break
                delay = d.PROBE_RETRY_START_SECONDS
            except _Relist:
                version = None
            except Exception as exc:
                if not _transient(exc):
                    raise
                listed = listed or time.monotonic() >= end  # no answer in time: say so
                time.sleep(min(delay, max(0.0, end - time.monotonic())))
                delay, version = min(delay * 2, d.PROBE_RETRY_MAX_SECONDS), None
        pending = {
            n: "deleted" if n in deleted else pod_status.where(seen.get(n)) for n in sorted(open_())
        }
        return Waited(objects=seen, pending=pending, seconds=seconds)

    # ---- logs -----------------------------------------------------------------------
    def logs(self, pod: str, container: str | None = None) -> str:
        """The log of ``pod`` (in the workload namespace), of ``container`` if given."""
        return self.kube.logs(pod, self.namespace, container)

    def logs_until(
        self, pod: str, container: str | None, done: Callable[[str], bool], end: float
    ) -> str:
        """The pod's log, read again until ``done`` holds for it or ``end`` (monotonic) passes.

        For a running container whose output is still being written: the last log read.
        """
        while True:
            log = self.logs(pod, container)
            if done(log) or time.monotonic() >= end:
                return log
            time.sleep(d.PROBE_LOG_POLL_SECONDS)

    def prove(self, record: Record, probes: list[ProbePod], budget: float | None = None) -> None:
        """Create the pods, wait until all ended (``budget`` capped), judge each on a step.

        ``record`` opens a step (``CheckContext.step``). A pod that never ended fails
        its step saying where it got to; otherwise its judge reads its exit code and
        log, and the step fails naming the problems, else passes.
        """
        for probe in probes:
            self.create(probe.pod)
        waited = self.wait("Pod", pod_status.finished, budget=budget)
        for probe in probes:
            with record(probe.label) as step:
                step.asked = f"pod {self.namespace}/{probe.name} {probe.asked}"
                code, unfinished = waited.exit_code(probe.name)
                if code is None:
                    step.failed(unfinished)
                    continue
                problems, step.answer = probe.judge(code, self.logs(probe.name, probe.container))
                if problems:
                    step.failed("; ".join(problems))
                else:
                    step.passed(probe.passed)

    # ---- close ----------------------------------------------------------------------
    def close(self) -> EvidenceSection | None:
        """Delete everything created, newest first, and wait until it is gone.

        Returns the evidence section (None when nothing was created); never raises,
        because the check's result must still be delivered.
        """
        if self.closed:
            return None
        self.closed = True
        if not self.made:
            return None
        started, begin = now_iso(), time.monotonic()
        errors: list[str] = []
        for made in reversed(self.made):
            try:
                self.kube.delete(made.kind.ref, made.name, made.namespace)
            except Exception as exc:
                errors.append(f"{made}: {exc}")
        left = self._wait_gone(begin + self.cleanup_seconds)
        asked = "; ".join(f"created {m}" for m in self.made)
        took = time.monotonic() - begin
        if not left and not errors:
            return EvidenceSection(
                title=TITLE,
                asked=asked,
                answer=f"all {len(self.made)} deleted and gone after {took:.1f}s",
                verdict="nothing left behind",
                status=StepStatus.PASSED,
                timestamp=started,
            )
        answer = "; ".join(errors + [f"{m} still present after {took:.0f}s" for m in left])
        return EvidenceSection(
            title=TITLE,
            asked=asked,
            answer=answer,
            status=StepStatus.FAILED,
            verdict="left behind until run cleanup removes it",
            timestamp=started,
        )

    def _wait_gone(self, end: float) -> list[_Made]:
        left = list(self.made)
        while left:
            try:
                present = self._present({m.kind for m in left})
            except Exception:  # an API blip: look again until the budget is spent
                present = {_key(m.kind, m.namespace, m.name) for m in left}
            left = [m for m in left if _key(m.kind, m.namespace, m.name) in present]
            if not left or time.monotonic() >= end:
                return left
            time.sleep(d.PROBE_GONE_POLL_SECONDS)
        return left

    def _present(self, kinds: set[Kind]) -> set[tuple[str, str | None, str]]:
        """Objects of ``kinds`` still carrying this session's labels (terminating included)."""
        found = set()
        for kind in kinds:
            namespace = self.namespace if kind.namespaced else None
            for obj in self.kube.list(kind.ref, namespace, self.selector):
                meta = obj.get("metadata") or {}
                found.add(_key(kind, meta.get("namespace"), str(meta.get("name"))))
        return found


def _key(kind: Kind, namespace: str | None, name: str) -> tuple[str, str | None, str]:
    return kind.ref, namespace, name


def _api_error(status: Obj) -> Exception:
    from aicr.kube.rest import KubeApiError

    return KubeApiError(
        int(status.get("code") or 500),
        str(status.get("reason") or ""),
        str(status.get("message") or "watch error"),
    )


def _transient(exc: Exception) -> bool:
    """An API blip worth retrying within the budget: 5xx, 429, or the connection."""
    from aicr.kube.rest import KubeApiError

    if isinstance(exc, KubeApiError):
        return exc.status >= 500 or exc.status == 429
    import httpx

    return isinstance(exc, httpx.TransportError)
