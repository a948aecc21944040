"""AICR v0.11.1 command lines, one or more per flag: accepted with their meaning, or refused.

Every row of ``aicr.cli.compat.FLAGS`` (the table in docs/cli.md) must have a
case here; ``test_every_aicr_flag_has_a_case`` fails when one is added without.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from aicr.cli import compat
from aicr.cli.main import run
from aicr.kube.placement import Toleration
from aicr.snapshot.agent import AgentOutcome, AgentRequest
from aicr.snapshot.capture import build

DATA = Path(__file__).parents[2] / "data"
RECIPE = str(DATA / "recipes/small.yaml")
SNAPSHOT = str(DATA / "snapshots/ok.yaml")
GPU_SNAPSHOT = str(DATA / "snapshots/gpu.yaml")
OLD_K8S = str(DATA / "snapshots/old-k8s.yaml")
V = ["validate", "-r", RECIPE, "-s", SNAPSHOT, "--no-cluster"]
DRY = ["validate", "-r", RECIPE, "-s", SNAPSHOT, "--dry-run"]
GATE_FAILS = ["validate", "-r", RECIPE, "-s", OLD_K8S, "--no-cluster"]
NOTE = "note: {}: no effect"
AICR_AGENT = "mirror.example/nvidia/aicr:v0.11.1"  # AICR's agent image, on a mirror


@dataclass
class Seen:
    """What one command line produced."""

    code: int
    out: str
    err: str
    tmp: Path
    capture_timeouts: list[float] = field(default_factory=list)
    configmaps: dict[str, str] = field(default_factory=dict)
    agents: list[AgentRequest] = field(default_factory=list)


Assertion = Callable[[Seen], None]


@dataclass(frozen=True)
class Case:
    """An AICR command line, the flags it exercises, and what must happen."""

    covers: tuple[str, ...]  # "command flag" rows of compat.FLAGS
    argv: tuple[str, ...]
    code: int
    err: str = ""  # a line stderr must contain
    check: Assertion | None = None
    env: tuple[tuple[str, str], ...] = ()
    gpus: int = 8  # GPUs on the fake cluster's node (snapshot command)


def _report(seen: Seen) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(seen.out)
    return data


def _phases_run(expected: list[str]) -> Assertion:
    def check(seen: Seen) -> None:
        assert _report(seen)["extra"]["aicr"]["phases"] == expected

    return check


def _stdout_has(*patterns: str) -> Assertion:
    def check(seen: Seen) -> None:
        for pattern in patterns:
            assert re.search(pattern, seen.out, re.MULTILINE), pattern

    return check


def _stdout_lacks(text: str) -> Assertion:
    def check(seen: Seen) -> None:
        assert text not in seen.out

    return check


def _file(name: str, parse: Callable[[str], Any], key: str, value: Any) -> Assertion:
    def check(seen: Seen) -> None:
        assert parse((seen.tmp / name).read_text())[key] == value

    return check


def _snapshot_yaml(seen: Seen) -> None:
    doc = yaml.safe_load(seen.out)
    assert doc["kind"] == "Snapshot" and doc["apiVersion"] == "aicr.nvidia.com/v1alpha1"
    assert doc["measurements"][0]["type"] == "K8s"


def _debug_on(seen: Seen) -> None:
    assert logging.getLogger("aicr").isEnabledFor(logging.DEBUG)


def _json_note(seen: Seen) -> None:
    notes = [json.loads(line) for line in seen.err.splitlines() if line.startswith("{")]
    assert any(n["event"] == "note" and "--privileged" in n["message"] for n in notes), seen.err


def _capture_timeout(seconds: float) -> Assertion:
    def check(seen: Seen) -> None:
        assert seen.capture_timeouts == [seconds]

    return check


def _configmap_key(key: str) -> Assertion:
    def check(seen: Seen) -> None:
        assert yaml.safe_load(seen.configmaps[key])["kind"] == "Snapshot"

    return check


def _agent(**want: object) -> Assertion:
    """The node agents were asked for with these fields."""

    def check(seen: Seen) -> None:
        assert len(seen.agents) == 1, seen.err
        for key, value in want.items():
            assert getattr(seen.agents[0], key) == value, key

    return check


def _no_note(seen: Seen) -> None:
    assert "note:" not in seen.err


CASES: dict[str, Case] = {
    # global flags
    "debug-before-command": Case(("global --debug",), ("--debug", *V), 0, check=_debug_on),
    "debug-after-command": Case(("global --debug",), (*V, "--debug"), 0, check=_debug_on),
    "log-json-before-command": Case(("global --log-json",),
                                    ("--log-json", "snapshot", "--privileged=false"), 0,
                                    check=_json_note),
    "log-json-validate-note": Case(("global --log-json",), (*V, "--log-json"), 0,
                                   env=(("AICR_VALIDATOR_IMAGE", AICR_AGENT),),
                                   check=lambda s: json.loads(s.err.splitlines()[0])),
    "output-file-validate": Case(("global -o, --output",), (*V, "-o", "{tmp}/r.json"), 0,
                                 check=_file("r.json", json.loads, "reportFormat", "CTRF")),
    "output-file-snapshot": Case(("global -o, --output",), ("snapshot", "-o", "{tmp}/s.yaml"),
                                 0, "note: snapshot: {tmp}/s.yaml",
                                 check=_file("s.yaml", yaml.safe_load, "kind", "Snapshot")),
    "output-configmap-snapshot": Case(("global -o, --output",),
                                      ("snapshot", "-o", "cm://default/aicr-snapshot"), 0,
                                      check=_configmap_key("snapshot.yaml")),
    "format-validate-default-json": Case(("global -t, --format",), V, 0,
                                         check=lambda s: _report(s)["reportFormat"] == "CTRF"),
    "format-validate-yaml": Case(("global -t, --format",), (*V, "-t", "yaml"), 0,
                                 check=lambda s: yaml.safe_load(s.out)["reportFormat"] == "CTRF"),
    "format-validate-table": Case(("global -t, --format",), (*V, "--format", "table"), 0,
                                  check=_stdout_has(r"^FIELD\s+VALUE$", r"^summary\.skipped\s+4$")),
    "format-snapshot-default-yaml": Case(("global -t, --format",), ("snapshot",), 0,
                                         check=_snapshot_yaml),
    "format-snapshot-json": Case(("global -t, --format",), ("snapshot", "-t", "json"), 0,
                                 check=lambda s: json.loads(s.out)["kind"] == "Snapshot"),
    "format-snapshot-table": Case(("global -t, --format",), ("snapshot", "-t", "table"), 0,
                                  check=_stdout_has(r"^K8s\.server\.version\s+v1\.35\.4$")),
    "format-unknown": Case(("global -t, --format",), (*V, "-t", "xml"), 2, "'xml' is not one of"),
    "kubeconfig-exists": Case(("global -k, --kubeconfig",), (*V, "-k", "{tmp}/kubeconfig"), 0),
    "kubeconfig-missing": Case(("global -k, --kubeconfig",), (*V, "-k", "{tmp}/none"), 2,
                               "does not exist"),
    "data": Case(("global --data",), (*V, "--data", "{tmp}"), 0),
    # validate
    "recipe-snapshot-no-cluster": Case(("validate -r, --recipe", "validate -s, --snapshot",
                                        "validate --no-cluster"), V, 0,
                                       check=lambda s: _report(s)["extra"]["aicr"]["noCluster"]),
    "phase-comma-list": Case(("validate --phase",), (*V, "--phase", "deployment,conformance"), 0,
                             check=_phases_run(["deployment", "conformance"])),
    "phase-repeated": Case(("validate --phase",), (*V, "--phase", "deployment"), 0,
                           check=_phases_run(["deployment"])),
    "fail-on-error-default": Case(("validate --fail-on-error",), GATE_FAILS, 8),
    "fail-on-error-false": Case(("validate --fail-on-error",),
                                (*GATE_FAILS, "--fail-on-error=false"), 0),
    "fail-on-error-bad-value": Case(("validate --fail-on-error",), (*V, "--fail-on-error=maybe"),
                                    2, "--fail-on-error=maybe: not a boolean"),
    "namespace": Case(("validate -n, --namespace",), (*DRY, "-n", "nightly-ns"), 0,
                      check=_stdout_has(r"^  namespace: nightly-ns$")),
    "namespace-env": Case(("validate -n, --namespace",), DRY, 0,
                          env=(("AICR_NAMESPACE", "from-env"),),
                          check=_stdout_has(r"^  namespace: from-env$")),
    "image": Case(("validate --image",), (*DRY, "--image", "registry.example/me/checks:1"), 0,
                  check=_stdout_has(r"image: registry.example/me/checks:1$")),
    "image-aicr-agent-refused": Case(("validate --image",),
                                     (*V, "--image", AICR_AGENT), 2,
                                     "this is AICR's snapshot agent"),
    "image-aicr-env-not-read": Case(("validate --image",), DRY, 0,
                                    "note: AICR_VALIDATOR_IMAGE is not read",
                                    env=(("AICR_VALIDATOR_IMAGE", AICR_AGENT),),
                                    check=_stdout_lacks("nvidia/aicr:v0.11.1")),
    "image-pull-secret-comma-list": Case(("validate --image-pull-secret",),
                                         (*DRY, "--image-pull-secret", "s1,s2"), 0,
                                         check=_stdout_has(r"- name: s1$", r"- name: s2$")),
    "job-name-prefix": Case(("validate --job-name",), (*DRY, "--job-name", "nightly"), 0,
                            check=_stdout_has(r"name: nightly-r[0-9a-f]{8}-operator-health$")),
    "job-name-invalid": Case(("validate --job-name",), (*V, "--job-name", "Nightly_1"), 2,
                             "--job-name 'Nightly_1': invalid name prefix"),
    "service-account-name": Case(("validate --service-account-name",),
                                 (*V, "--service-account-name", "aicr"), 2,
                                 f"error: --service-account-name: {compat.SERVICE_ACCOUNT}"),
    "node-selector": Case(("validate --node-selector",), (*DRY, "--node-selector", "pool=gpu"), 0,
                          check=_stdout_has(r'"pool": "gpu"')),
    "node-selector-invalid": Case(("validate --node-selector",), (*V, "--node-selector", "pool"),
                                  2, "--node-selector 'pool': invalid node selector"),
    "toleration-comma-list": Case(("validate --toleration",),
                                  (*DRY, "--toleration", "a=b:NoSchedule,c:NoExecute"), 0,
                                  check=_stdout_has(r'"effect": "NoExecute"')),
    "timeout-go-duration": Case(("validate --timeout",), (*V, "--timeout", "5m0s"), 0),
    "timeout-invalid": Case(("validate --timeout",), (*V, "--timeout", "soon"), 2,
                            "--timeout: invalid duration 'soon'"),
    "no-cleanup": Case(("validate --no-cleanup",), (*V, "--no-cleanup"), 0),
    "require-gpu-found": Case(("validate --require-gpu",),
                              ("validate", "-r", RECIPE, "-s", GPU_SNAPSHOT, "--no-cluster",
                               "--require-gpu"), 0),
    "require-gpu-missing": Case(("validate --require-gpu",), (*V, "--require-gpu"), 8,
                                "--require-gpu: the snapshot"),
    "require-gpu-env": Case(("validate --require-gpu",), V, 8, "--require-gpu: the snapshot",
                            env=(("AICR_REQUIRE_GPU", "true"),)),
    "require-gpu-false-beats-env": Case(("validate --require-gpu",), (*V, "--require-gpu=false"),
                                        0, env=(("AICR_REQUIRE_GPU", "true"),)),
    "require-gpu-needs-snapshot": Case(("validate --require-gpu",),
                                       ("validate", "-r", RECIPE, "--no-cluster",
                                        "--require-gpu"), 2,
                                       "--require-gpu with --no-cluster needs a snapshot"),
    "evidence-dir-alone": Case(("validate --evidence-dir",), (*V, "--evidence-dir", "{tmp}/e"), 2,
                               "--cncf-submission and --evidence-dir require each other"),
    "cncf-submission-alone": Case(("validate --cncf-submission",), (*V, "--cncf-submission"), 2,
                                  "--cncf-submission and --evidence-dir require each other"),
    "feature": Case(("validate -f, --feature",), (*V, "--feature", "dra-support"), 2,
                    f"error: --feature: {compat.FEATURE}"),
    "feature-short": Case(("validate -f, --feature",), (*V, "-f", "gang-scheduling"), 2,
                          f"error: --feature: {compat.FEATURE}"),
    # snapshot (the cluster is faked: see `seen` below)
    "snapshot-namespace": Case(("snapshot -n, --namespace",), ("snapshot", "-n", "gpu-ops"), 0,
                               NOTE.format("--namespace")),
    "snapshot-namespace-env": Case(("snapshot -n, --namespace",), ("snapshot",), 0,
                                   NOTE.format("--namespace"),
                                   env=(("AICR_NAMESPACE", "gpu-ops"),)),
    "snapshot-plain-no-note": Case(("snapshot -n, --namespace",), ("snapshot",), 0,
                                   check=_no_note),
    "snapshot-image-aicr": Case(("snapshot --image",), ("snapshot", "--image", "nvidia/aicr"),
                                2, "AICR's own agent image cannot run aicr's node agent"),
    "snapshot-image": Case(("snapshot --image",), ("snapshot", "--image", "m.example/a:v1"), 0,
                           check=_agent(image="m.example/a:v1")),
    "snapshot-image-env": Case(("snapshot --image",), ("snapshot",), 0,
                               check=_agent(image="m.example/a:v2"),
                               env=(("AICR_IMAGE", "m.example/a:v2"),)),
    "snapshot-image-pull-secret": Case(("snapshot --image-pull-secret",),
                                       ("snapshot", "--image-pull-secret", "a,b"), 0,
                                       check=_agent(image_pull_secrets=("a", "b"))),
    "snapshot-job-name": Case(("snapshot --job-name",), ("snapshot", "--job-name", "aicr"), 0,
                              check=_agent(name_prefix="aicr")),
    "snapshot-no-agent": Case(("snapshot --image",), ("snapshot", "--no-agent"), 0,
                              check=lambda s: not s.agents),
    "snapshot-service-account-name": Case(("snapshot --service-account-name",),
                                          ("snapshot", "--service-account-name", "aicr"), 2,
                                          f"--service-account-name: {compat.SERVICE_ACCOUNT}"),
    "snapshot-node-selector": Case(("snapshot --node-selector",),
                                   ("snapshot", "--node-selector", "nvidia.com/gpu.present=true"),
                                   0,
                                   check=_agent(node_selector={"nvidia.com/gpu.present": "true"})),
    "snapshot-node-selector-invalid": Case(("snapshot --node-selector",),
                                           ("snapshot", "--node-selector", "gpu"), 2,
                                           "--node-selector 'gpu': invalid node selector"),
    "snapshot-toleration": Case(("snapshot --toleration",),
                                ("snapshot", "--toleration", "dedicated=user-workload:NoSchedule"),
                                0, check=_agent(tolerations=(Toleration("dedicated", "NoSchedule",
                                                                        "user-workload"),))),
    "snapshot-toleration-invalid": Case(("snapshot --toleration",),
                                        ("snapshot", "--toleration", "dedicated"), 2,
                                        "--toleration 'dedicated': invalid toleration"),
    "snapshot-timeout-default": Case(("snapshot --timeout",), ("snapshot",), 0,
                                     check=_capture_timeout(300.0)),
    "snapshot-timeout": Case(("snapshot --timeout",), ("snapshot", "--timeout", "1m30s"), 0,
                             check=_capture_timeout(90.0)),
    "snapshot-timeout-invalid": Case(("snapshot --timeout",), ("snapshot", "--timeout", "0s"), 2,
                                     "--timeout: duration '0s' must be above zero"),
    "snapshot-no-cleanup": Case(("snapshot --no-cleanup",), ("snapshot", "--no-cleanup"), 0,
                                check=_agent(no_cleanup=True)),
    "snapshot-privileged-false": Case(("snapshot --privileged",),
                                      ("snapshot", "--privileged=false"), 0,
                                      NOTE.format("--privileged")),
    "snapshot-require-gpu-found": Case(("snapshot --require-gpu",),
                                       ("snapshot", "--require-gpu"), 0),
    "snapshot-require-gpu-missing": Case(("snapshot --require-gpu",),
                                         ("snapshot", "--require-gpu"), 8,
                                         "--require-gpu: the snapshot (live capture) reports no "
                                         "GPU", gpus=0),
    "snapshot-require-gpu-runtime-class": Case(("snapshot --require-gpu",
                                                "snapshot --runtime-class"),
                                               ("snapshot", "--require-gpu", "--runtime-class",
                                                "nvidia"), 2,
                                               "--require-gpu and --runtime-class cannot be used "
                                               "together"),
    "snapshot-runtime-class": Case(("snapshot --runtime-class",),
                                   ("snapshot", "--runtime-class", "nvidia"), 0,
                                   NOTE.format("--runtime-class")),
    "snapshot-runtime-class-env": Case(("snapshot --runtime-class",), ("snapshot",), 0,
                                       NOTE.format("--runtime-class"),
                                       env=(("AICR_RUNTIME_CLASS", "nvidia"),)),
    "snapshot-template": Case(("snapshot --template",), ("snapshot", "--template", "t.tmpl"), 2,
                              f"error: --template: {compat.TEMPLATE}"),
    "snapshot-max-nodes-per-entry": Case(("snapshot --max-nodes-per-entry",),
                                         ("snapshot", "--max-nodes-per-entry", "10"), 0,
                                         NOTE.format("--max-nodes-per-entry")),
    "snapshot-max-nodes-per-entry-negative": Case(("snapshot --max-nodes-per-entry",),
                                                  ("snapshot", "--max-nodes-per-entry", "-1"), 2,
                                                  "-1 is not in the range x>=0"),
}  # fmt: skip


@pytest.fixture
def fake_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], Seen]]:
    """The snapshot command reads a fake API; anything else touching the cluster fails."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the cluster was contacted")

    monkeypatch.setattr("aicr.kube.target.api_client", refuse)
    # Each case starts from a quiet logger, so --debug is seen turning it on.
    logger = logging.getLogger("aicr")
    level = logger.level
    logger.setLevel(logging.WARNING)
    for name in ("AICR_NAMESPACE", "AICR_REQUIRE_GPU", "AICR_RUNTIME_CLASS", "AICR_IMAGE",
                 "AICR_VALIDATOR_IMAGE", "AICR_CHECK_IMAGE", "AICR_DEBUG", "AICR_LOG_JSON"):
        monkeypatch.delenv(name, raising=False)  # fmt: skip

    def arm(gpus: int) -> Seen:
        seen = Seen(0, "", "", Path())

        def capture(kube: object, request_timeout: float) -> object:
            seen.capture_timeouts.append(request_timeout)
            version = {"gitVersion": "v1.35.4", "major": "1", "minor": "35"}
            gpu = {"nvidia.com/gpu": str(gpus)}
            status = {"capacity": gpu, "allocatable": gpu} if gpus else {}
            return build(version, [{"metadata": {"name": "n0"}, "status": status}])

        def write_configmap(text: str, target: str, kube: object, key: str, what: str) -> None:
            seen.configmaps[key] = text

        def agents(snapshot: object, request: AgentRequest, events: object) -> AgentOutcome:
            seen.agents.append(request)
            return AgentOutcome(run_id="r00000000")

        monkeypatch.setattr("aicr.snapshot.capture.capture", capture)
        monkeypatch.setattr("aicr.snapshot.agent.run", agents)
        monkeypatch.setattr("aicr.writers._write_configmap", write_configmap)
        return seen

    yield arm
    logger.setLevel(level)


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_aicr_command_line(
    case: Case,
    fake_cluster: Callable[[int], Seen],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = fake_cluster(case.gpus)
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")
    for name, value in case.env:
        monkeypatch.setenv(name, value)
    seen.code = run([arg.replace("{tmp}", str(tmp_path)) for arg in case.argv])
    seen.out, seen.err = capsys.readouterr()
    seen.tmp = tmp_path
    assert seen.code == case.code, seen.err
    assert case.err.replace("{tmp}", str(tmp_path)) in seen.err
    if case.check is not None:
        assert case.check(seen) is not False


def test_every_aicr_flag_has_a_case() -> None:
    rows = {f"{f.command} {f.flag}" for f in compat.FLAGS}
    covered = {row for case in CASES.values() for row in case.covers}
    assert covered <= rows, "cases name a flag the table does not have"
    assert rows - covered == set()


def test_refused_and_removed_rows_say_what_the_command_says() -> None:
    """The docs table shows the very line a refused flag prints."""
    for row in compat.FLAGS:
        if row.handling in (compat.Handling.REFUSED, compat.Handling.REMOVED):
            assert any(m in row.here for m in (compat.SERVICE_ACCOUNT, compat.FEATURE,
                                               compat.TEMPLATE)), row.flag  # fmt: skip


def test_readme_names_every_refused_or_removed_flag() -> None:
    readme = (Path(__file__).parents[3] / "README.md").read_text()
    for row in compat.FLAGS:
        if row.handling in (compat.Handling.REFUSED, compat.Handling.REMOVED):
            assert f"`{row.flag.split(', ')[-1]}`" in readme, row.flag


@pytest.mark.parametrize(
    ("ref", "is_agent"),
    [("nvidia/aicr", True), ("nvidia/aicr:v0.11.1", True), (AICR_AGENT, True),
     ("mirror.example:5000/nvidia/aicr@sha256:" + "0" * 64, True),
     ("nvidia/aicr-validator:v1", False), ("example/aicr:v1", False),
     ("mirror.example:5000/checks:v1", False)],
)  # fmt: skip
def test_aicr_agent_image_is_recognised_on_any_registry(ref: str, is_agent: bool) -> None:
    from aicr.run_plan import is_aicr_agent_image

    assert is_aicr_agent_image(ref) is is_agent
