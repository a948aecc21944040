"""``aicr validate`` through the real entry point: messages, exit codes, reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aicr.catalog import load_catalog
from aicr.cli.main import run

DATA = Path(__file__).parents[2] / "data"
RECIPE = str(DATA / "recipes/small.yaml")
SNAPSHOT = str(DATA / "snapshots/ok.yaml")


def aicr(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


BAD = str(DATA / "bad")
BAD_INPUT = [
    (["-r", f"{BAD}/recipe-typo.yaml"],
     f"error: {BAD}/recipe-typo.yaml:4: componentRefs[0]: unknown key 'namespcae' "
     "(did you mean 'namespace'?)"),
    (["-r", f"{BAD}/recipe-malformed.yaml"],
     f"error: {BAD}/recipe-malformed.yaml:5: malformed YAML: expected ',' or ']', but got "
     "'<stream end>'"),
    (["-r", f"{BAD}/recipe-unknown-check.yaml"],
     f"error: {BAD}/recipe-unknown-check.yaml:6: validation.deployment.checks[1]: unknown check "
     "'operater-health' (did you mean 'operator-health'?)"),
    (["-r", f"{BAD}/recipe-wrong-type.yaml"],
     f"error: {BAD}/recipe-wrong-type.yaml:4: constraints[0].value: input should be a valid "
     "string, got list"),
    (["-r", RECIPE, "-s", f"{BAD}/snapshot-bad-type.yaml"],
     f"error: {BAD}/snapshot-bad-type.yaml:6: measurements[0].subtypes[0].data.version: "
     "input should be a valid string, got dict"),
    (["-r", RECIPE, "--config", f"{BAD}/config-unknown-key.yaml"],
     f"error: {BAD}/config-unknown-key.yaml:7: spec.validate.checks.ai-service-metrics: "
     "unknown key 'prometheusURL' (did you mean 'prometheusUrl'?)"),
    (["-r", RECIPE, "--config", f"{BAD}/config-param-typo.yaml"],
     f"error: {BAD}/config-param-typo.yaml:8: spec.validate.checks.operator-health.params: "
     "unknown key 'observeSecnds' (expected one of: aicrDelaySeconds)"),
    (["-r", RECIPE, "--config", f"{BAD}/config-wrong-kind.yaml"],
     f"error: {BAD}/config-wrong-kind.yaml:1: kind: input should be 'ValidateConfig', "
     "got 'Config'"),
    (["-r", str(DATA / "nope.yaml")], f"error: {DATA}/nope.yaml: file not found"),
    (["-r", RECIPE, "-r", RECIPE], "error: --recipe given more than once (it takes one value)"),
    (["-r", RECIPE, "--toleration", "gpu"],
     "error: --toleration 'gpu': invalid toleration (expected key=value:Effect or key:Effect, "
     "Effect one of NoSchedule, PreferNoSchedule, NoExecute)"),
    (["-r", RECIPE, "--node-selector", "pool"],
     "error: --node-selector 'pool': invalid node selector (expected key=value with Kubernetes "
     "label syntax)"),
    (["-r", RECIPE, "--orchestrator-toleration", "a=b:Never"],
     "error: --orchestrator-toleration 'a=b:Never': invalid toleration (expected "
     "key=value:Effect or key:Effect, Effect one of NoSchedule, PreferNoSchedule, NoExecute)"),
    (["-r", RECIPE, "--cncf-submission"],
     "error: --cncf-submission and --evidence-dir require each other"),
    (["-r", RECIPE, "--evidence-dir", "x"],
     "error: --cncf-submission and --evidence-dir require each other"),
    (["-r", RECIPE, "--cncf-submission", "--evidence-dir", "x", "--skip-check", "dra-support"],
     "error: --skip-check cannot be used with --cncf-submission (a submission must run every "
     "check the recipe plans)"),
    (["-r", RECIPE, "--cncf-submission", "--evidence-dir", "x", "--no-cluster"],
     "error: --no-cluster cannot be used with --cncf-submission"),
    (["-r", RECIPE, "--parallel", "0"], "error: --parallel must be at least 1, got 0"),
    (["-r", RECIPE, "--timeout", "soon"],
     "error: --timeout: invalid duration 'soon' (expected e.g. 90s, 5m, 1h30m)"),
    (["-r", RECIPE, "--no-cluster", "-o", "cm://ns/report"],
     "error: --output cm://ns/report: a ConfigMap needs the cluster; not with --no-cluster"),
    (["-r", "cm://ns/recipes", "--no-cluster"],
     "error: --recipe cm://ns/recipes: a ConfigMap needs the cluster; not with --no-cluster"),
    (["-r", RECIPE, "--phase", "conformance", "--skip-check", "operator-health"],
     "error: --skip-check operator-health: the check is not in the plan for the requested "
     "phases"),
    (["-r", "cm://only-namespace"],
     "error: invalid ConfigMap reference 'cm://only-namespace' (expected "
     "cm://namespace/name[/key])"),
    (["-r", RECIPE, "-n", "Bad_NS"],
     "error: --namespace 'Bad_NS': not a valid namespace name (expected at most 63 lowercase "
     "letters, digits and '-', starting and ending with a letter or digit)"),
    (["-r", RECIPE, "--image", "UPPER CASE"],
     "error: --image 'UPPER CASE': not a valid image reference (expected "
     "[registry[:port]/]name[:tag][@sha256:digest], name in lowercase)"),
    (["-r", RECIPE, "-o", f"{DATA}/no-such-folder/report.json"],
     f"error: --output {DATA}/no-such-folder/report.json: folder {DATA}/no-such-folder does "
     "not exist (create it first)"),
    (["-r", RECIPE, "--junit", f"{DATA}/no-such-folder/junit.xml"],
     f"error: --junit {DATA}/no-such-folder/junit.xml: folder {DATA}/no-such-folder does "
     "not exist (create it first)"),
    (["-r", RECIPE, "-o", str(DATA / "recipes")],
     f"error: --output {DATA}/recipes: is a folder (expected a file path)"),
    (["-r", RECIPE, "-o", f"{RECIPE}/report.json"],
     f"error: --output {RECIPE}/report.json: {RECIPE} is not a folder"),
    (["-r", RECIPE, "--cncf-submission", "--evidence-dir", f"{RECIPE}/v1.35/x"],
     f"error: --evidence-dir {RECIPE}/v1.35/x: {RECIPE} is not a folder"),
    (["-r", RECIPE, "--cncf-version", "9.9"],
     "error: --cncf-version: no CNCF AI Conformance requirement data for version '9.9' "
     "(supported: 1.33, 1.34, 1.35, 1.36, 1.37, 1.38)"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT,
                         ids=[f"bad-{i}" for i in range(len(BAD_INPUT))])
def test_bad_input_exits_2_with_one_clear_message(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = aicr(capsys, "validate", *args)
    assert code == 2
    assert out == ""
    assert err.strip().splitlines()[0] == message


def test_a_missing_kubeconfig_file_is_refused_before_any_cluster_work(
    capsys: pytest.CaptureFixture[str],
) -> None:
    missing = DATA / "no-kubeconfig"
    code, out, err = aicr(capsys, "validate", "-r", RECIPE, "--kubeconfig", str(missing))
    assert (code, out) == (2, "")
    assert err.strip().splitlines()[-1] == (
        f"Error: Invalid value for '-k' / '--kubeconfig': File '{missing}' does not exist."
    )


def test_no_cluster_reports_every_check_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = aicr(capsys, "validate", "-r", RECIPE, "-s", SNAPSHOT, "--no-cluster",
                          "--phase", "deployment")
    report = json.loads(out)
    assert code == 0
    assert [(t["name"], t["status"], t["message"]) for t in report["results"]["tests"]] == [
        ("operator-health", "skipped", "no-cluster: not run"),
        ("expected-resources", "skipped", "no-cluster: not run"),
    ]
    gate = report["extra"]["aicr"]["gate"]
    assert gate["evaluated"] and gate["passed"]
    assert [c["verdict"] for c in gate["constraints"]] == ["passed", "passed", "missing"]
    assert "readiness gate: passed (3 constraints)" in err
    assert "warning GPU.smi.driver >= 570" in err


def test_no_cluster_without_snapshot_is_not_evaluated(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = aicr(capsys, "validate", "-r", RECIPE, "--no-cluster", "--phase",
                          "deployment")
    assert code == 0
    gate = json.loads(out)["extra"]["aicr"]["gate"]
    assert gate == {"evaluated": False, "passed": False,
                    "reason": "no snapshot given with --no-cluster", "constraints": []}
    assert "readiness gate: not evaluated" in err


def test_failed_gate_exits_8_and_reports_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = aicr(capsys, "validate", "-r", RECIPE, "-s",
                          str(DATA / "snapshots/old-k8s.yaml"), "--no-cluster", "--phase",
                          "deployment", "-o", str(tmp_path / "r.json"))
    assert code == 8
    assert out == ""
    gate = json.loads((tmp_path / "r.json").read_text())["extra"]["aicr"]["gate"]
    assert [(c["name"], c["verdict"]) for c in gate["constraints"]] == [
        ("K8s.server.version", "failed"), ("OS.release.ID", "failed"),
        ("GPU.smi.driver", "missing"),
    ]
    assert "error K8s.server.version >= 1.30: v1.29.0 does not satisfy >= 1.30" in err


def test_skip_check_and_junit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = aicr(capsys, "validate", "-r", RECIPE, "-s", SNAPSHOT, "--no-cluster",
                        "--phase", "deployment", "--skip-check", "operator-health",
                        "--junit", str(tmp_path / "j.xml"))
    assert code == 0
    tests = {t["name"]: t for t in json.loads(out)["results"]["tests"]}
    assert tests["operator-health"]["message"] == "skipped by --skip-check"
    assert tests["operator-health"]["extra"]["reason"] == "skipped by --skip-check"
    junit = (tmp_path / "j.xml").read_text()
    assert junit.count("<testcase") == 2 and junit.count("<skipped") == 2


def test_report_labels_carry_phase_and_requirements(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = aicr(capsys, "validate", "-r", RECIPE, "-s", SNAPSHOT, "--no-cluster",
                        "--phase", "conformance", "--cncf-version", "1.35")
    assert code == 0
    tests = {t["name"]: t for t in json.loads(out)["results"]["tests"]}
    assert tests["dra-support"]["labels"] == {
        "phase": "conformance", "check": "dra-support", "requirements": ["dra_support"]
    }
    assert tests["dra-support"]["suite"] == ["conformance"]
    assert "requirements" not in tests["platform-health"]["labels"]


def test_check_list_plain_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = aicr(capsys, "check", "list", "--output", "plain")
    assert code == 0
    assert "dra-support\tconformance\tdra_support\t300s" in out.splitlines()
    code, out, _ = aicr(capsys, "check", "list", "--output", "json")
    rows = json.loads(out)
    # every catalog entry, in the catalog's order (a new check needs no edit here)
    assert [r["name"] for r in rows] == [c.name for c in load_catalog().checks]
    assert rows[0]["name"] == "operator-health"
    by_name = {r["name"]: r for r in rows}
    assert (by_name["driver-runtime-management"]["gpus"],
            by_name["driver-runtime-management"]["exclusiveGpus"]) == (
        {"perNode": 1, "nodes": "every"}, False)  # fmt: skip
    assert (by_name["gang-scheduling"]["gpus"], by_name["gang-scheduling"]["exclusiveGpus"],
            by_name["gang-scheduling"]["reserves"]) == (
        {"countParam": "size"}, False, "2 GPUs in all (params.size)")  # fmt: skip
    assert by_name["cluster-autoscaling"]["exclusiveGpus"] is True
    assert by_name["platform-health"]["gpus"] is None


def test_the_plan_and_dry_run_show_each_checks_reservation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = aicr(capsys, "validate", "-r", RECIPE, "--dry-run", "--phase", "conformance")
    assert code == 0
    assert "dra-support  (timeout 300s, reserves 1 GPU in all)" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = aicr(capsys, "--version")
    assert code == 0 and out.startswith("aicr, version ")


def test_an_internal_error_fails_closed_with_exit_8(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("unexpected state")

    monkeypatch.setattr("aicr.cli.validate.run", broken)
    code, out, err = aicr(capsys, "validate", "-r", RECIPE, "--no-cluster")
    assert code == 8 and out == ""
    assert err.strip().splitlines()[-1] == (
        "internal error: RuntimeError: unexpected state (--debug shows the trace)"
    )


def test_dry_run_prints_every_manifest_and_touches_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import yaml

    code, out, err = aicr(capsys, "validate", "-r", RECIPE, "--dry-run", "--phase",
                          "conformance")
    assert code == 0
    docs = list(yaml.safe_load_all(out))
    kinds = {d["kind"] for d in docs}
    assert {"Namespace", "ConfigMap", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
            "Role", "RoleBinding", "Job"} <= kinds
    jobs = [d for d in docs if d["kind"] == "Job"]
    assert [j["spec"]["template"]["spec"]["containers"][0]["command"][-1] for j in jobs] == [
        "platform-health", "dra-support"
    ]
    bindings = [d for d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")]
    assert all(b["roleRef"]["name"] != "cluster-admin" for b in bindings)
    inputs = next(d for d in docs if d["kind"] == "ConfigMap" and "recipe.yaml" in d["data"])
    from aicr.recipe.load import load_recipe, parse_recipe

    assert parse_recipe(inputs["data"]["recipe.yaml"]) == load_recipe(RECIPE)
    assert f"dry run: {len(docs)} objects would be applied; nothing was created" in err
