"""Start-up stays light: each command imports only what it uses (issue 34's import sets).

Each case runs in a fresh interpreter and lists the modules of the heavy set that it
left in ``sys.modules``; a regression shows here as a failure, not as a slower bench.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
DATA = ROOT / "tests" / "data"
# Libraries that only a cluster run, a submission, an attestation or a scrape needs,
# and the CNCF layer's writer, redaction and verifier.
HEAVY = (
    "kubernetes",
    "httpx",
    "jsonschema",
    "cryptography",
    "prometheus_client",
    "re2",
    "junit_xml",
    "ssl",
    "aicr.cncf.submission",
    "aicr.cncf.pages",
    "aicr.redaction",
    "aicr.cncf.leaks",
    "aicr.cncf.export",
    "aicr.cncf.verifier",
    "aicr.attestation.keys",
    "aicr.attestation.signing",
    "aicr.snapshot.redaction",
    # email, zipfile, csv, socket: pydantic's plugin loader and a version lookup pulled it in
    "importlib.metadata",
    # and logging with it: only a run of checks needs the thread pool (runner.orchestrate)
    "concurrent.futures",
    "logging",
    # the executors' side of a run: its context, the GPU pool and the node inventory it
    # reads; a no-cluster run builds none of them (it reads PlanResults alone)
    "aicr.runner.context",
    "aicr.runner.executor",
    "aicr.runner.gpu_pool",
    "aicr.runner.gpu_fit",
    "aicr.kube.gpu_inventory",
    "aicr.kube.pod_status",
)
# --help needs click alone: no models, no YAML, no tables.
HELP_HEAVY = (*HEAVY, "pydantic", "yaml", "rich", "aicr.config", "aicr.catalog")
# A check's own code (its package, not its params.py) is what its pod runs: planning reads
# only params.py (aicr.catalog.registry.declaration), so no plan loads a check package.
CHECK_CODE = r"^aicr\.checks\.(deployment|performance|conformance)\.\w+(\.(?!params$)\w+)*$"
PROBE = """
import re, sys
from aicr.cli.main import run
code = run({args!r})
heavy = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in {heavy!r})
               or re.match({check_code!r}, m))
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""
H100 = str(ROOT / "recipes/h100-eks-ubuntu-training.yaml")
CASES = [
    (["--help"], HELP_HEAVY, 0),
    (["validate", "--help"], HEAVY, 0),
    (["evidence", "--help"], HEAVY, 0),
    (["validate", "-r", str(DATA / "recipes/small.yaml"), "--no-cluster", "--phase",
      "deployment", "-s", str(DATA / "snapshots/ok.yaml")], HEAVY, 0),
    # every phase of a real recipe: 18 checks planned and preflighted, the CNCF summary shown
    (["validate", "-r", H100, "-s", str(DATA / "snapshots/ok.yaml"), "--no-cluster",
      "-o", "/dev/null"], HEAVY, 8),
    # inference-perf planned: its preflight (gates, knobs) runs from params.py alone
    (["validate", "-r", str(ROOT / "recipes/h100-aks-ubuntu-inference-dynamo.yaml"), "-s",
      str(DATA / "snapshots/ok.yaml"), "--no-cluster", "-o", "/dev/null"], HEAVY, 8),
    (["images", "list", "-r", str(DATA / "recipes/small.yaml")], HEAVY, 0),
]


@pytest.mark.parametrize(("args", "heavy", "code"), CASES,
                         ids=["help", "validate-help", "evidence-help", "no-cluster-run",
                              "no-cluster-h100", "no-cluster-inference", "images-list"])
def test_no_heavy_modules(args: list[str], heavy: tuple[str, ...], code: int) -> None:
    probe = PROBE.format(args=args, heavy=heavy, check_code=CHECK_CODE)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.splitlines()[-1] == "HEAVY=", proc.stderr


def test_the_probe_sees_a_heavy_import() -> None:
    """The probe is not blind: a command that loads the verifier is caught."""
    missing = DATA / "no-such-submission"
    proc = subprocess.run([sys.executable, "-c", PROBE.format(
        args=["evidence", "verify", str(missing), "--cncf-version", "1.35"], heavy=HEAVY,
        check_code=CHECK_CODE)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "aicr.cncf.verifier" in proc.stderr.splitlines()[-1]


def test_the_probe_sees_a_check_package_but_not_a_declaration() -> None:
    """Running one check (its Job's command) loads its package; the pattern catches it."""
    names = ["aicr.checks.conformance.dra_support", "aicr.checks.conformance.dra_support.build",
             "aicr.checks.conformance.dra_support.params", "aicr.checks.allocation",
             "aicr.checks.conformance"]
    assert [n for n in names if re.match(CHECK_CODE, n)] == names[:2]


# What only the orchestrator runs: planning, the executors, the resolved run, the CNCF
# layer and attestations. A check pod's command reads its inputs and runs one check.
ORCHESTRATOR = ("aicr.plan", "aicr.gate", "aicr.runner", "aicr.run_plan", "aicr.validate",
                "aicr.cncf", "aicr.attestation")


def test_a_check_pod_loads_nothing_of_the_orchestrator(tmp_path: Path) -> None:
    (tmp_path / "recipe.yaml").write_text((DATA / "recipes/small.yaml").read_text())
    (tmp_path / "config.yaml").write_text(
        (DATA / "golden/inputs/mirror-config.yaml").read_text())
    (tmp_path / "snapshot.yaml").write_text((DATA / "snapshots/ok.yaml").read_text())
    (tmp_path / "run.json").write_text('{"runId": "r0123abcd", "namespace": "aicr-validation"}')
    probe = PROBE.format(args=["check", "run", "platform-health", "--run-dir", str(tmp_path)],
                         heavy=ORCHESTRATOR, check_code="^$")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AICR_", "KUBERNETES_"))}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, env={**env, "KUBECONFIG": str(tmp_path / "none")})
    # no cluster to read: the check ends other, having read its inputs (not "unusable")
    assert proc.returncode == 3, proc.stderr
    assert "unusable run inputs" not in proc.stdout
    assert proc.stderr.splitlines()[-1] == "HEAVY=", proc.stderr


def test_pydantic_builds_plain_validators_without_its_plugin_loader() -> None:
    """The CLI's stand-in for pydantic's loader is the one pydantic asks, and says none.

    Should pydantic look plugins up elsewhere, importlib.metadata comes back on the CLI's
    path and test_no_heavy_modules fails; this one fails when the lookup moved.
    """
    import inspect

    from pydantic.plugin import _schema_validator

    assert "from ._loader import get_plugins" in inspect.getsource(
        _schema_validator.create_schema_validator)
    probe = PROBE.format(args=["validate", "-r", str(DATA / "recipes/small.yaml"), "--no-cluster",
                               "--phase", "deployment", "-s", str(DATA / "snapshots/ok.yaml")],
                         heavy=HEAVY, check_code=CHECK_CODE) + (
        "\nfrom pydantic_core import SchemaValidator\n"
        "from aicr.catalog import load_catalog\n"
        "loader = sys.modules['pydantic.plugin._loader']\n"
        "print('PLUGINS=', list(loader.get_plugins()), file=sys.stderr)\n"
        "print('PLAIN=', type(type(load_catalog()).__pydantic_validator__) is SchemaValidator,"
        " file=sys.stderr)\n")
    probe = probe.replace("sys.exit(code)\n", "") + "sys.exit(code)\n"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-3:] == ["HEAVY=", "PLUGINS= []", "PLAIN= True"]
