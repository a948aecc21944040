"""What a check runs with, in its pod: the run inputs and the ``CheckContext``.

A check talks to the cluster through ``CheckContext`` (``ctx.kube``: the REST
client with its own ServiceAccount's credentials; ``ctx.probes``: the session
for the workloads it creates), records what it asked and what came back as
evidence (``ctx.record``, ``with ctx.step(...)``), and returns passed, failed,
or skipped with a reason. Its params model and preflight are orchestrator-side
(``aicr.catalog.params``).
"""

from __future__ import annotations

import contextlib
import functools
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from aicr.catalog import CheckSpec, params
from aicr.config import CheckSettings, ValidateConfig, parse_config
from aicr.ctrf import Status
from aicr.errors import AicrError, FileFormatError
from aicr.kube import names as k8s_names
from aicr.kube import placement
from aicr.kube.placement import Placement
from aicr.kube.target import KubeTarget
from aicr.recipe.load import parse_recipe
from aicr.recipe.model import Recipe
from aicr.result import CheckResult, EvidenceSection, ImageRun, StepStatus
from aicr.snapshot.load import parse_snapshot
from aicr.snapshot.model import Snapshot

if TYPE_CHECKING:
    from aicr.checks.probes import ProbeSession
    from aicr.checks.seen import SeenRecorder
    from aicr.checks.steps import Step
    from aicr.kube.dicts import Kube


class InputsError(AicrError):
    """The run inputs a check pod received are missing or malformed."""


@dataclass(frozen=True)
class RunInputs:
    """What the run ConfigMap delivers to every check pod (``/etc/aicr/run``)."""

    run_id: str
    namespace: str
    recipe: Recipe
    config: ValidateConfig
    snapshot: Snapshot | None = None
    workloads: Placement = field(default_factory=Placement)
    prepared: dict[str, Any] = field(default_factory=dict)  # check name -> preflight facts


def load_inputs(run_dir: Path) -> RunInputs:
    """Read recipe.yaml, config.yaml, run.json and (if present) snapshot.yaml from ``run_dir``."""
    from aicr import json_io, sources
    from aicr.limits import Kind

    def text(name: str) -> str:
        # the same bounds as every input: a corrupted run ConfigMap cannot hang the check
        try:
            return sources.read(str(run_dir / name), kind=Kind.RUN_INPUT)
        except FileFormatError as exc:
            raise InputsError(f"cannot read run input {exc}") from None

    info_text = text("run.json")
    try:
        info = json_io.parse(info_text, str(run_dir / "run.json"))
        run_id, namespace = str(info["runId"]), str(info["namespace"])
    except (FileFormatError, KeyError, TypeError) as exc:
        raise InputsError(f"{run_dir / 'run.json'}: malformed run info: {exc}") from None
    snapshot = None
    if (run_dir / "snapshot.yaml").exists():
        snapshot = parse_snapshot(text("snapshot.yaml"), str(run_dir / "snapshot.yaml"))
    return RunInputs(
        run_id=run_id,
        namespace=namespace,
        recipe=parse_recipe(text("recipe.yaml"), str(run_dir / "recipe.yaml")),
        config=parse_config(text("config.yaml"), str(run_dir / "config.yaml")),
        snapshot=snapshot,
        workloads=placement.from_dict(info.get("workloads") or {}),
        prepared=dict(info.get("checkInputs") or {}),
    )


class CheckContext:
    """Everything a check may use: inputs, settings, cluster access, evidence recorder.

    The entrypoint calls ``close`` when the check returns or raises: it removes
    the check's workloads and closes the client.
    """

    def __init__(
        self,
        spec: CheckSpec,
        inputs: RunInputs,
        *,
        target: KubeTarget | None = None,
        kube: Kube | None = None,
        timeout: float | None = None,
    ) -> None:
        from aicr.checks.probes import Deadline

        self.spec = spec
        self.inputs = inputs
        self._target = target or KubeTarget()
        self._kube = kube
        self._seen: SeenRecorder | None = None
        self.evidence: list[EvidenceSection] = []
        self.start_ms = int(time.time() * 1000)
        self.timeout = timeout if timeout is not None else spec.timeout.total_seconds()
        self.deadline = Deadline.after(self.timeout)

    # ---- inputs ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The check's catalog name."""
        return self.spec.name

    @property
    def recipe(self) -> Recipe:
        """The run's recipe."""
        return self.inputs.recipe

    @property
    def snapshot(self) -> Snapshot | None:
        """The run's snapshot (given or captured), if any."""
        return self.inputs.snapshot

    @property
    def config(self) -> ValidateConfig:
        """The run's validate config."""
        return self.inputs.config

    @property
    def settings(self) -> CheckSettings:
        """This check's settings from the config."""
        return self.inputs.config.check(self.name)

    @property
    def run_id(self) -> str:
        """The run id; every object a check creates carries it as a label."""
        return self.inputs.run_id

    @property
    def workloads(self) -> Placement:
        """Where the check's own workloads go (``--node-selector`` / ``--toleration``)."""
        return self.inputs.workloads

    @property
    def prepared(self) -> Any:
        """What this check's preflight resolved in the orchestrator, or None."""
        return self.inputs.prepared.get(self.name)

    @functools.cached_property
    def params(self) -> Any:
        """This check's params, as its ``Params`` model (validated before any Job ran).

        Typed ``Any`` so each check reads its own model's fields; ``check_params``
        guarantees the instance is that model.
        """
        try:
            return params.params_model(self.name).model_validate(self.settings.params)
        except ValidationError as exc:
            raise InputsError(f"params of {self.name}: {exc.errors()[0]['msg']}") from None

    # ---- cluster --------------------------------------------------------------------
    @property
    def kube(self) -> Kube:
        """The cluster as plain dicts in the API's JSON shape, with the check's credentials.

        Every Node (and Pod's node) read through it is noted for the result's ``nodes``,
        and every container status of the check's own pods for its ``images``.
        """
        if self._kube is None:
            from aicr.kube.dicts import RestKube
            from aicr.kube.rest import KubeApi, credentials

            self._kube = RestKube(KubeApi(credentials(self._target)))
        if self._seen is None:
            from aicr.checks.seen import SeenRecorder

            self._seen = SeenRecorder(self._kube, self.owns)
        return self._seen

    @property
    def node_names(self) -> list[str]:
        """The names of the nodes the check read so far, sorted."""
        return sorted(self._seen.names) if self._seen is not None else []

    @property
    def images(self) -> list[ImageRun]:
        """What the check's own pods ran (``aicr.checks.seen``), as far as it read them."""
        return self._seen.images if self._seen is not None else []

    def owns(self, pod: dict[str, Any]) -> bool:
        """The pod is the check's: in its workload namespace, or carrying its labels."""
        meta = pod.get("metadata") or {}
        if self.spec.workload_access and meta.get("namespace") == self.workload_namespace:
            return True
        labels = meta.get("labels") or {}
        return all(labels.get(k) == v for k, v in self.workload_labels().items())

    @functools.cached_property
    def probes(self) -> ProbeSession:
        """The session for this check's workloads; the entrypoint closes it."""
        from aicr.checks.probes import ProbeSession

        return ProbeSession(
            self.kube,
            self.workload_namespace,
            self.workload_labels(),
            self.workloads,
            self.deadline,
        )

    def close(self) -> EvidenceSection | None:
        """Remove the check's workloads (if it made any) and close the client.

        Returns the session's evidence section, for the entrypoint to add to the result.
        Before anything is removed, the pods still in the workload namespace are listed
        once, so the images of pods the check never read (a Job's, an operator's) are
        recorded too.
        """
        self._sweep_images()
        section = self.__dict__["probes"].close() if "probes" in self.__dict__ else None
        closer = getattr(self._kube, "close", None)
        if callable(closer):
            with contextlib.suppress(Exception):
                closer()
        return section

    def _sweep_images(self) -> None:
        if self._seen is None or not self.spec.workload_access:
            return  # never talked to the cluster, or has no workloads
        with contextlib.suppress(Exception):  # best effort: the result must still go back
            self._seen.list("Pod", self.workload_namespace)

    @property
    def workload_namespace(self) -> str:
        """The run-unique namespace (made by the run, PSA-labelled) for this check's workloads.

        Only checks whose catalog entry declares ``workloadAccess`` have one; the
        run created it with exactly those rules granted inside.
        """
        if not self.spec.workload_access:
            raise InputsError(
                f"check {self.name} declares no workloadAccess, so it has no workload namespace"
            )
        return k8s_names.workload_namespace(self.run_id, self.name)

    def workload_labels(self) -> dict[str, str]:
        """Labels for every object a check creates, so run cleanup finds them."""
        return k8s_names.check_labels(self.run_id, self.name, self.spec.phase.value)

    # ---- evidence and verdicts ------------------------------------------------------
    def record(
        self,
        title: str,
        asked: str,
        answer: str,
        verdict: str,
        status: StepStatus = StepStatus.INFO,
    ) -> None:
        """Add one evidence section: what was asked, what came back, the verdict and why."""
        from aicr.checks.steps import now_iso

        self.evidence.append(
            EvidenceSection(
                title=title,
                asked=asked,
                answer=answer,
                verdict=verdict,
                status=status,
                timestamp=now_iso(),
            )
        )

    @contextlib.contextmanager
    def step(self, title: str) -> Iterator[Step]:
        """Record one step (``aicr.checks.steps``); a step that raises is ``other``, not fatal."""
        from aicr.checks.steps import Step

        step = Step(title)
        try:
            yield step
        except Exception as exc:  # the step could not find out; the next ones still run
            traceback.print_exc()
            step.other(f"raised {type(exc).__name__}: {exc}")
        self.evidence.append(step.section())

    def conclude(self, noun: str, passed: str | None = None) -> CheckResult:
        """The result its steps add up to (``aicr.checks.steps.conclude``)."""
        from aicr.checks.steps import conclude

        status, message = conclude(self.evidence, noun, passed)
        return self._result(status, message)

    def _result(self, status: Status, message: str) -> CheckResult:
        return CheckResult(
            name=self.name,
            status=status,
            message=message,
            evidence=list(self.evidence),
            start_ms=self.start_ms,
            stop_ms=int(time.time() * 1000),
            nodes=self.node_names,
            images=self.images,
        )

    def passed(self, message: str) -> CheckResult:
        """The check passed; ``message`` says what was shown."""
        return self._result(Status.PASSED, message)

    def failed(self, message: str) -> CheckResult:
        """The check failed; ``message`` says precisely what is wrong."""
        return self._result(Status.FAILED, message)

    def other(self, reason: str) -> CheckResult:
        """The check could not find out; ``reason`` says why (never a pass)."""
        return self._result(Status.OTHER, reason)

    def skipped(self, reason: str) -> CheckResult:
        """The check does not apply to this cluster; ``reason`` says why."""
        return self._result(Status.SKIPPED, reason)
