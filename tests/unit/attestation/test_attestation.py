"""Run attestations end to end through the CLI: sign, verify, detect every tampering."""

from __future__ import annotations

import base64
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aicr.attestation import dsse
from aicr.attestation.statement import PREDICATE_TYPE
from aicr.cli.main import run

DATA = Path(__file__).parents[2] / "data"
RECIPE = str(DATA / "recipes/small.yaml")
OK = str(DATA / "snapshots/ok.yaml")
OLD = str(DATA / "snapshots/old-k8s.yaml")  # fails the recipe's K8s.server.version gate


def aicr(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def no_cluster_access(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the cluster was contacted")

    monkeypatch.setattr("aicr.kube.target.api_client", refuse)


def keygen(capsys: pytest.CaptureFixture[str], folder: Path, algorithm: str = "ed25519") -> Path:
    args = ("attestation", "keygen", "-o", str(folder), "--algorithm", algorithm)
    code, _, err = aicr(capsys, *args)
    assert code == 0, err
    return folder


def attested_run(
    capsys: pytest.CaptureFixture[str], tmp: Path, keys: Path, snapshot: str = OK
) -> tuple[int, Path]:
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    code, _, err = aicr(
        capsys, "validate", "-r", RECIPE, "-s", snapshot, "--no-cluster",
        "-o", str(out / "report.json"), "--junit", str(out / "junit.xml"),
        "--emit-attestation", "--attestation-key", str(keys / "aicr-attestation.key"),
    )  # fmt: skip
    assert "attestation:" in err, err
    return code, out / "report.intoto.json"


def verify(capsys: pytest.CaptureFixture[str], path: Path, pub: Path) -> tuple[int, str]:
    code, out, _ = aicr(capsys, "evidence", "verify", "--attestation", str(path), "--key", str(pub))
    return code, out


def payload(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text())
    result: dict[str, object] = json.loads(base64.b64decode(doc["payload"]))
    return result


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
def test_a_valid_run_verifies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, algorithm: str
) -> None:
    keys = keygen(capsys, tmp_path / "keys", algorithm)
    code, att = attested_run(capsys, tmp_path, keys)
    assert code == 0
    statement = payload(att)
    assert statement["predicateType"] == PREDICATE_TYPE
    assert [s["name"] for s in statement["subject"]] == ["report.json", "junit.xml"]  # type: ignore[attr-defined,index]
    predicate = statement["predicate"]
    assert predicate["run"]["exitCode"] == 0  # type: ignore[index]
    assert predicate["recipe"]["source"] == RECIPE  # type: ignore[index]
    assert len(predicate["recipe"]["digest"]["sha256"]) == 64  # type: ignore[index]
    assert [c["name"] for c in predicate["checks"]] == [  # type: ignore[index]
        "operator-health", "expected-resources", "platform-health", "dra-support"
    ]  # fmt: skip
    code, out = verify(capsys, att, keys / "aicr-attestation.pub")
    assert code == 0, out
    assert "ok: report.json\nok: junit.xml\nVALID:" in out


def test_a_failed_run_verifies_as_genuine_with_failures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    code, att = attested_run(capsys, tmp_path, keys, snapshot=OLD)
    assert code == 8
    code, out = verify(capsys, att, keys / "aicr-attestation.pub")
    assert code == 1, out
    assert "failed: the readiness gate failed" in out
    assert "VALID, RUN FAILED" in out


def test_a_tampered_report_is_rejected(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    _, att = attested_run(capsys, tmp_path, keys, snapshot=OLD)
    report = att.parent / "report.json"
    report.write_text(report.read_text().replace('"failed"', '"passed"'))
    code, out = verify(capsys, att, keys / "aicr-attestation.pub")
    assert code == 8, out
    assert "REJECTED: subject report.json: sha256" in out


def test_a_tampered_payload_is_rejected(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    _, att = attested_run(capsys, tmp_path, keys, snapshot=OLD)
    doc = json.loads(att.read_text())
    body = payload(att)
    body["predicate"]["run"]["exitCode"] = 0  # type: ignore[index]
    doc["payload"] = base64.b64encode(json.dumps(body).encode()).decode()
    att.write_text(json.dumps(doc))
    code, out = verify(capsys, att, keys / "aicr-attestation.pub")
    assert code == 8
    assert "REJECTED: signature: does not check against" in out


def test_the_wrong_key_is_rejected(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    other = keygen(capsys, tmp_path / "other")
    _, att = attested_run(capsys, tmp_path, keys)
    code, out = verify(capsys, att, other / "aicr-attestation.pub")
    assert code == 8
    assert "REJECTED: signature" in out


def test_a_missing_subject_is_rejected(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    _, att = attested_run(capsys, tmp_path, keys)
    (att.parent / "junit.xml").unlink()
    code, out = verify(capsys, att, keys / "aicr-attestation.pub")
    assert code == 8
    assert "REJECTED: subject junit.xml: missing" in out


BAD_VERIFY = [
    ("not json", "not JSON"),
    ('{"payloadType": "x"}', "payloadType and payload must be strings"),
    ('{"payloadType": "x", "payload": "eA==", "signatures": []}', "non-empty list"),
]


@pytest.mark.parametrize(
    ("text", "message"), BAD_VERIFY, ids=["not-json", "no-payload", "unsigned"]
)
def test_a_file_that_is_no_attestation_is_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    att = tmp_path / "a.intoto.json"
    att.write_text(text)
    code, _, err = aicr(capsys, "evidence", "verify", "--attestation", str(att),
                        "--key", str(keys / "aicr-attestation.pub"))  # fmt: skip
    assert code == 2
    assert message in err


@pytest.mark.parametrize(
    "args",
    [
        ["--attestation", "{missing}"],  # no --key
        ["--attestation", "{missing}", "--key", "{pub}"],  # unreadable file
        ["--attestation", "{att}", "--key", "{missing}"],  # unreadable key
        ["--attestation", "{att}", "--key", "{pub}", "somedir"],
        [],
        ["somedir", "--key", "{pub}"],
    ],
    ids=["no-key", "no-file", "no-pub", "with-dir", "nothing", "key-without-attestation"],
)
def test_bad_verify_invocations_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    att = tmp_path / "a.intoto.json"
    att.write_text("{}")
    names = {"missing": tmp_path / "nope", "pub": keys / "aicr-attestation.pub", "att": att}
    code, _, _ = aicr(capsys, "evidence", "verify", *[a.format(**names) for a in args])
    assert code == 2


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_replaces_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    private = keys / "aicr-attestation.key"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    before = private.read_bytes()
    code, _, err = aicr(capsys, "attestation", "keygen", "-o", str(keys))
    assert code == 2
    assert "aicr-attestation.key already exists" in err
    assert private.read_bytes() == before


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--emit-attestation", "-o", "{out}/r.json"],
            "--emit-attestation needs --attestation-key",
        ),
        (["--emit-attestation", "--attestation-key", "{key}"], "beside a report file"),
        (["--attestation-key", "{key}", "-o", "{out}/r.json"], "needs --emit-attestation"),
        (
            ["--emit-attestation", "--attestation-key", "{out}/r.json", "-o", "{out}/x.json"],
            "not an unencrypted PEM private key",
        ),
        (
            ["--emit-attestation", "--attestation-key", "{key}", "-o", "{out}/taken/r.json"],
            "--emit-attestation {out}/taken/r.intoto.json: is a folder",
        ),
        (
            ["--emit-attestation", "--attestation-key", "{key}", "-o", "{out}/r.json", "--dry-run"],
            "--dry-run cannot be used with --emit-attestation",
        ),
    ],
    ids=["no-key", "stdout", "key-alone", "not-a-key", "unwritable", "dry-run"],
)
def test_attestation_flags_are_checked_before_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str], message: str
) -> None:
    keys = keygen(capsys, tmp_path / "keys")
    (tmp_path / "r.json").write_text("not a key")
    (tmp_path / "taken/r.intoto.json").mkdir(parents=True)  # root may write anywhere else
    names = {"out": tmp_path, "key": keys / "aicr-attestation.key"}
    args = [a.format(**names) for a in extra]
    code, out, err = aicr(capsys, "validate", "-r", RECIPE, "-s", OK, "--no-cluster", *args)
    assert code == 2, err
    assert message.format(**names) in err
    assert out == ""  # no report: the run never started


def test_pae_matches_the_dsse_specification() -> None:
    assert dsse.pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


@pytest.mark.parametrize("curve", ["p384", "rsa"])
def test_keys_other_than_ed25519_and_p256_are_refused(tmp_path: Path, curve: str) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    from aicr.attestation import keys
    from aicr.errors import FileFormatError

    key = (
        ec.generate_private_key(ec.SECP384R1())
        if curve == "p384"
        else rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    private = tmp_path / "k.pem"
    pem, pkcs8 = serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8
    private.write_bytes(key.private_bytes(pem, pkcs8, serialization.NoEncryption()))
    public = tmp_path / "k.pub"
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    public.write_bytes(key.public_key().public_bytes(pem, spki))
    with pytest.raises(FileFormatError, match="expected an ed25519 or ECDSA P-256 key"):
        keys.load_private(str(private))
    with pytest.raises(FileFormatError, match="expected an ed25519 or ECDSA P-256 key"):
        keys.load_public(str(public))


def test_every_file_of_a_written_submission_is_a_subject(tmp_path: Path) -> None:
    from aicr.attestation.signing import subject_files

    report = tmp_path / "report.json"
    report.write_text("{}")
    sub = tmp_path / "evidence/v1.35/acme"
    (sub / "evidence").mkdir(parents=True)
    for name in ("PRODUCT.yaml", "README.md", "evidence/gang_scheduling.md"):
        (sub / name).write_text(name)
    found = subject_files([report, tmp_path / "never-written.xml"], sub)
    assert [str(p.relative_to(tmp_path)) for p in found] == [
        "report.json", "evidence/v1.35/acme/PRODUCT.yaml", "evidence/v1.35/acme/README.md",
        "evidence/v1.35/acme/evidence/gang_scheduling.md"]  # fmt: skip


def _resigned(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: Callable[[Any], None]
) -> tuple[int, str]:
    """An attested run whose predicate ``change`` alters, signed again by the same key."""
    from aicr.attestation import dsse
    from aicr.attestation import keys as keyring

    keys = keygen(capsys, tmp_path / "keys")
    _, att = attested_run(capsys, tmp_path, keys)
    body = payload(att)
    change(body["predicate"])
    signed = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    private = keyring.load_private(str(keys / "aicr-attestation.key"))
    att.write_text(json.dumps(dsse.envelope(signed, private)))
    return verify(capsys, att, keys / "aicr-attestation.pub")


def test_an_attestation_whose_digests_differ_from_the_report_is_rejected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the same key signs a predicate of another validator image and catalog: the subjects
    # still match their digests, but the signed report says otherwise
    def other_run(predicate: Any) -> None:
        assert predicate["provenance"]["catalog"]["sha256"]
        predicate["validatorImage"]["ref"] = "example.org/other:v9"
        predicate["catalog"]["digest"]["sha256"] = "0" * 64

    code, out = _resigned(capsys, tmp_path, other_run)
    assert code == 8, out
    assert "REJECTED: subject report.json: its validator image differs" in out
    assert "REJECTED: subject report.json: its catalog digest differs" in out


def test_an_attestation_whose_image_digests_differ_from_the_report_is_rejected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # signed by the same key for a run whose workload ran another digest
    def other_digest(predicate: Any) -> None:
        assert predicate["provenance"]["images"] == []
        predicate["provenance"]["images"] = [
            {"role": "workload", "image": "docker.io/library/ubuntu:22.04", "checks": ["x"],
             "containers": 1, "digest": "sha256:" + "0" * 64}]  # fmt: skip

    code, out = _resigned(capsys, tmp_path, other_digest)
    assert code == 8, out
    assert "REJECTED: subject report.json: the images and digests it records differ" in out
