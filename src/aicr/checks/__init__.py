"""The checks: one module per check, grouped by phase, each ``run(ctx) -> CheckResult``.

A check reads the cluster through ``CheckContext`` (its own ServiceAccount's
credentials inside its pod), records what it asked and what came back as
evidence, and returns passed, failed, or skipped with a reason. Skips are for
"does not apply here", never for "could not find out". Adding a check means one
module ``aicr/checks/<phase>/<name_with_underscores>.py``, one catalog entry and
one test.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr.catalog import CheckSpec
from aicr.config import CheckSettings, ValidateConfig, parse_config
from aicr.ctrf import Status
from aicr.errors import AicrError
from aicr.k8s import KubeTarget, api_client
from aicr.recipe.load import parse_recipe
from aicr.recipe.model import Recipe
from aicr.result import CheckResult, EvidenceSection
from aicr.runner import Placement, Toleration
from aicr.runner import names as k8s_names
from aicr.snapshot.load import parse_snapshot
from aicr.snapshot.model import Snapshot

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from aicr.checks.kube import KubeReader


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


def _placement(data: dict[str, Any]) -> Placement:
    tolerations = tuple(
        Toleration(
            key=t.get("key", ""),
            effect=t.get("effect"),
            value=t.get("value"),
            operator=t.get("operator", "Equal"),
        )
        for t in data.get("tolerations") or []
    )
    return Placement(node_selector=dict(data.get("nodeSelector") or {}), tolerations=tolerations)


def load_inputs(run_dir: Path) -> RunInputs:
    """Read recipe.yaml, config.yaml, run.json and (if present) snapshot.yaml from ``run_dir``."""

    def text(name: str) -> str:
        try:
            return (run_dir / name).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputsError(f"cannot read run input {run_dir / name}: {exc.strerror}") from None

    try:
        info = json.loads(text("run.json"))
        run_id, namespace = str(info["runId"]), str(info["namespace"])
    except (ValueError, KeyError, TypeError) as exc:
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
        workloads=_placement(info.get("workloads") or {}),
        prepared=dict(info.get("checkInputs") or {}),
    )


def preflight(name: str, recipe: Recipe, data_dir: str | None, source: str) -> Any:
    """Run check ``name``'s optional ``preflight(recipe, data_dir, source)`` before any Job.

    A check module may define it to refuse a contradictory request up front
    (raising InputError, exit 2) and to resolve facts the check's pod cannot
    (values files under ``--data``). What it returns (JSON-able, or None) reaches
    the check as ``CheckContext.prepared``.
    """
    from aicr.catalog import load_catalog
    from aicr.checks import registry

    spec = load_catalog().get(name)
    fn = registry.find_preflight(spec) if spec else None
    return fn(recipe, data_dir, source) if fn else None


class CheckContext:
    """Everything a check may use: inputs, settings, cluster access, evidence recorder."""

    def __init__(
        self,
        spec: CheckSpec,
        inputs: RunInputs,
        *,
        kube: KubeTarget | None = None,
        reader: KubeReader | None = None,
    ) -> None:
        self.spec = spec
        self.inputs = inputs
        self._kube = kube or KubeTarget()
        self._reader = reader
        self.evidence: list[EvidenceSection] = []
        self.start_ms = int(time.time() * 1000)

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

    # ---- cluster --------------------------------------------------------------------
    @functools.cached_property
    def api(self) -> ApiClient:
        """The generated client with the check's own credentials, for checks that create objects.

        Checks that only read use ``kube``, which does not pay for importing it.
        """
        return api_client(self._kube)

    @property
    def kube(self) -> KubeReader:
        """Reads objects as plain dicts in the API's JSON shape, with the check's credentials."""
        if self._reader is None:
            from aicr.checks.kube import ApiReader
            from aicr.kubeapi import KubeApi, credentials

            self._reader = ApiReader(KubeApi(credentials(self._kube)))
        return self._reader

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
    def record(self, title: str, asked: str, answer: str, verdict: str) -> None:
        """Add one evidence section: what was asked, what came back, the verdict and why."""
        self.evidence.append(
            EvidenceSection(title=title, asked=asked, answer=answer, verdict=verdict)
        )

    def _result(self, status: Status, message: str) -> CheckResult:
        return CheckResult(
            name=self.name,
            status=status,
            message=message,
            evidence=list(self.evidence),
            start_ms=self.start_ms,
            stop_ms=int(time.time() * 1000),
        )

    def passed(self, message: str) -> CheckResult:
        """The check passed; ``message`` says what was shown."""
        return self._result(Status.PASSED, message)

    def failed(self, message: str) -> CheckResult:
        """The check failed; ``message`` says precisely what is wrong."""
        return self._result(Status.FAILED, message)

    def skipped(self, reason: str) -> CheckResult:
        """The check does not apply to this cluster; ``reason`` says why."""
        return self._result(Status.SKIPPED, reason)
