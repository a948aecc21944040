"""A probe run with a secret of every class, in every form a check records it: nothing leaks.

Each secret is put in captured output as text and as a JSON line, in a failed SHOULD
check's message (which reaches PRODUCT.yaml's notes, junit.xml and e2e.log) and in a
structured evidence section; every written file is then searched for it raw, JSON-,
XML- and YAML-escaped.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from cncf_builders import (
    CONFORMANCE,
    make_config,
    make_recipe,
    make_report,
    make_snapshot,
    make_test,
    render_submission,
)

import submission_recipe
from aicr.ctrf import Status

G = "0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7"
# (class, the line a check records, the secret)
PROBES = [
    ("ipv4", "pod IP 10.42.7.13 ready", "10.42.7.13"),
    ("ipv6", "listening on fd00:ab12:3::7", "fd00:ab12:3::7"),
    ("ipv6", "peer FD00:AB12:0003:0000:0000:0000:0000:0007", "FD00:AB12:0003"),
    ("node-name", "scheduled on gpu-worker-canary-7", "gpu-worker-canary-7"),
    ("cloud-host", "node ip-10-1-2-3.us-west-2.compute.internal", "ip-10-1-2-3"),
    ("cluster-name", "cluster prod-canary-cluster", "prod-canary-cluster"),
    ("cloud-account", "role arn:aws:iam::123456789012:role/node", "123456789012"),
    ("cloud-account", "image 210987654321.dkr.ecr.us-east-1.amazonaws.com/x", "210987654321"),
    ("cloud-account", '{"accountId": "123456789013"}', "123456789013"),
    ("cloud-account", f"/subscriptions/{G}/resourceGroups/rg-canary", G),
    ("guid", "tenant 9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", "9a8b7c6d-5e4f"),
    ("resource-group", "group MC_rg-secret_aks-secret_eastus", "rg-secret"),
    ("gpu-uuid", "GPU 0 (UUID: GPU-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d)", "1a2b3c4d-5e6f"),
    ("gpu-uuid", "device gpu-2b3c4d5e-6f7a-8b9c-0d1e-2f3a4b5c6d7e", "2b3c4d5e-6f7a"),
    ("serial-number", "    Serial Number                   : 1654321098765", "1654321098765"),
    ("serial-number", "board S/N 1654922012345 ok", "1654922012345"),
    ("jwt", "id eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJl",
     "eyJhbGciOiJSUzI1NiJ9"),
    ("bearer-token", "Authorization: Bearer s3cr3tT0kenValue123", "s3cr3tT0kenValue123"),
    ("kubeconfig-credential", '{"token": "kubeadm-canary-token", "password": "hunter2-canary"}',
     "kubeadm-canary-token"),
    ("kubeconfig-credential", '{"token": "kubeadm-canary-token", "password": "hunter2-canary"}',
     "hunter2-canary"),
    ("kubeconfig-credential", '{"client-key-data": "LS0tLS1CRUdJTiBSU0Eg"}',
     "LS0tLS1CRUdJTiBSU0Eg"),
    ("email", "contact ops-canary@corp.example.org", "ops-canary@corp.example.org"),
]
LINES = list(dict.fromkeys(line for _, line, _ in PROBES))
SECRETS = sorted({s for _, _, s in PROBES})
SHOULD_CHECK = "driver-runtime-management"  # backs only SHOULDs in 1.35: may fail


def encodings(secret: str) -> dict[str, str]:
    return {"raw": secret, "json": json.dumps(secret)[1:-1],
            "xml": escape(secret, {'"': "&quot;"}), "yaml": json.dumps(secret)[1:-1]}


def probe_tests() -> list:  # type: ignore[type-arg]
    structured = {"title": "probe", "asked": "list nodes",
                  "answer": {"token": "kubeadm-canary-token", "accountId": "123456789013",
                             "serial": "1654321098765", "lines": LINES}}
    out = []
    for name in CONFORMANCE:
        failed = name == SHOULD_CHECK
        out.append(make_test(
            name, Status.FAILED if failed else Status.PASSED,
            message="; ".join(LINES) if failed else None,
            stdout=[*LINES, json.dumps({"lines": LINES})], evidence=[structured]))
    return out


def test_no_probe_secret_reaches_any_file_in_any_encoding(tmp_path: Path) -> None:
    out = tmp_path / "v1.35" / "example"
    result = render_submission(
        out, report=make_report(probe_tests()), recipe=make_recipe(), snapshot=make_snapshot(),
        config=make_config(), version="1.35", force=False, recipe_source="recipes/eks.yaml")
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"PRODUCT.yaml", "junit.xml", "e2e.log", "README.md"}
    leaks = [(p.name, secret, how) for p in files for secret in SECRETS
             for how, form in encodings(secret).items() if form in p.read_text()]
    assert leaks == []
    for cls in {c for c, _, _ in PROBES}:
        assert result.redaction_counts.get(cls, 0) >= 1, cls
    # the failed SHOULD check's message reached PRODUCT.yaml's notes, redacted
    assert "ipv4-" in (out / "PRODUCT.yaml").read_text()


def test_one_value_gets_one_placeholder_whatever_its_spelling(tmp_path: Path) -> None:
    from aicr.redaction import Redactor

    r = Redactor()
    v6 = r.redact("a fd00:ab12:3::7 b FD00:AB12:0003:0000:0000:0000:0000:0007 c fd00:ab12:3:0::7")
    assert v6 == "a ipv6-1 b ipv6-1 c ipv6-1"
    gpu = r.redact("GPU-1A2B3C4D-5E6F-7A8B-9C0D-1E2F3A4B5C6D "
                   "gpu-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d")
    assert gpu == "gpu-uuid-1 gpu-uuid-1"
    ecr = r.redact("arn:aws:iam::123456789012:role/x "
                   "123456789012.dkr.ecr.us-east-1.amazonaws.com/y")
    assert ecr == "arn:aws:iam::account-1:role/x account-1.dkr.ecr.us-east-1.amazonaws.com/y"
    sub = r.redact(f"/subscriptions/{G}/x and bare {G.upper()}")
    assert sub == "/subscriptions/account-2/x and bare account-2"
    # a placeholder is never redacted again
    assert r.redact("token: credential-1") == "token: credential-1"


def _clean(tmp_path: Path) -> Path:
    out = tmp_path / "v1.35" / "example"
    render_submission(out, report=make_report(probe_tests()), recipe=make_recipe(),
                     snapshot=make_snapshot(), config=make_config(), version="1.35",
                     force=False, recipe_source="recipes/eks.yaml")
    return out


# (file, text a writer could have left, class, encoding) for the leak scan
INJECTED = [
    ("evidence/gang_scheduling.md", "node at 10.77.1.2 ready", "ipv4", "raw"),
    ("junit.xml", '<system-out>{\\"token\\": \\"leaked-json-token\\"}</system-out>',
     "kubeconfig-credential", "raw"),
    ("junit.xml", "<system-out>gpu\\u002d3c4d5e6f-7a8b-9c0d-1e2f-3a4b5c6d7e8f</system-out>",
     "gpu-uuid", "JSON"),
    ("junit.xml", "<failure message=\"ops&#64;corp.example.org\"/>", "email", "XML"),
    ("e2e.log", "    x: &quot;password&quot;: &quot;hunter9&quot;", "kubeconfig-credential", "raw"),
    ("README.md", "serial 1654922999999 seen", "serial-number", "raw"),
]


def test_the_leak_scan_finds_a_value_in_every_encoding_with_file_line_and_class(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from aicr.cli.main import run as run_cli
    from aicr.cncf.leaks import scan

    out = _clean(tmp_path)
    assert scan(out) == []  # our own output holds placeholders and public metadata only
    for rel, text, cls, encoding in INJECTED:
        path = out / rel
        lines = path.read_text().splitlines()
        path.write_text("\n".join([*lines[:3], text, *lines[3:]]) + "\n")
        found = [(leak.file, leak.line, leak.cls, leak.encoding) for leak in scan(out)]
        assert (rel, 4, cls, encoding) in found, (rel, found)
        path.write_text("\n".join(lines) + "\n")
    (out / "evidence" / "ai_inference.md").write_text("a customer-name-7731 here\n")
    known = tmp_path / "known.txt"
    known.write_text("# ours\ncustomer-name-7731\n")
    assert run_cli(["evidence", "verify", "--known", str(known), str(out)]) == 8
    printed = capsys.readouterr().out
    assert "LEAK: evidence/ai_inference.md:1: a value of class known-secret" in printed
    assert run_cli(["evidence", "verify", str(out)]) == 0


def test_a_duplicate_key_in_product_yaml_is_refused_by_name(tmp_path: Path) -> None:
    from aicr.cncf import verify

    out = _clean(tmp_path)
    product = out / "PRODUCT.yaml"
    text = product.read_text()
    twice = "      level: MUST\n      level: SHOULD\n"
    product.write_text(text.replace("      level: MUST\n", twice, 1))
    errors = verify(out, version=None).errors
    assert any("duplicate key 'level'" in e for e in errors), errors


def test_validate_scans_what_it_wrote_and_keeps_no_leaking_submission(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aicr.run_plan import ValidateRequest
    from aicr.validate import run
    from executor_fakes import FakeExecutor

    data = Path(__file__).parents[2] / "data"
    monkeypatch.setattr("aicr.cncf.submission.redact_report", lambda report, redactor: report)
    fake = FakeExecutor(results={"gang-scheduling": (Status.PASSED, "pods on 10.9.8.7")})
    outcome = run(ValidateRequest(recipe=submission_recipe.path(),
                                  snapshot=str(data / "snapshots/ok.yaml"),
                                  config=str(data / "configs/vendor.yaml"), cncf_submission=True,
                                  evidence_dir=str(tmp_path / "v1.35" / "example")),
                  executor=fake)
    assert outcome.exit_code == 8
    assert "leak scan" in (outcome.no_submission or "")
    assert not (tmp_path / "v1.35" / "example").exists()
