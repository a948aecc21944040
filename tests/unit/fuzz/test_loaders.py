"""Property: every loader, given any bytes, returns or refuses them as input (exit 2).

Never a traceback (any other exception is a bug and fails the example), and every
call stays within the time and memory bound of ``bounds.bounded``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import fuzz_inputs as inputs
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from fuzz_bounds import bounded
from hypothesis import example, given

from aicr import ctrf
from aicr.errors import AicrError, InputError


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def refused_or_loaded(load: Callable[[], Any], allowed: type[Exception] = InputError) -> None:
    """The load returns, or raises ``allowed`` (exit 2): anything else fails the example."""
    try:
        bounded(load)
    except allowed as exc:
        assert str(exc).strip(), "a refusal says why"


def _write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


# Crashes the fuzzers found, kept as fixed examples (each was a traceback or ran unbounded):
CRASHES = [
    b"kind: RecipeResult\x00\n",  # PyYAML's reader refuses it outside the parse's error handling
    b"criteria: {service: 2026-02-30}\n",  # a timestamp no date holds: ValueError
    b"kind: !!int " + b"9" * 5000 + b"\n",  # past Python's int conversion limit: ValueError
    b"a: &a [*a]\n",  # a recursive alias: endless line index
    b"[" * 5000,  # the composer recursed per level: RecursionError
]


@example(CRASHES[0])
@example(CRASHES[1])
@example(CRASHES[2])
@example(CRASHES[3])
@example(CRASHES[4])
@given(inputs.hostile(inputs.RECIPE) | inputs.hostile(inputs.EVERY_FIELD_RECIPE))
def test_recipe(folder: Path, data: bytes) -> None:
    from aicr.recipe.load import load_recipe

    refused_or_loaded(lambda: load_recipe(_write(folder, "recipe.yaml", data)))


@given(inputs.hostile(inputs.SNAPSHOT))
def test_snapshot(folder: Path, data: bytes) -> None:
    from aicr.snapshot.load import load_snapshot

    refused_or_loaded(lambda: load_snapshot(_write(folder, "snapshot.yaml", data)))


@given(inputs.hostile(inputs.CONFIG))
def test_config(folder: Path, data: bytes) -> None:
    from aicr.config import load_config

    refused_or_loaded(lambda: load_config(_write(folder, "config.yaml", data)))


@given(inputs.hostile(inputs.REPORT))
def test_report(folder: Path, data: bytes) -> None:
    refused_or_loaded(lambda: ctrf.read(Path(_write(folder, "report.json", data))))


@example(b"[" + b"9" * 5000 + b"]")  # past the int conversion limit: ValueError
@example(b"[" * 100_000)  # the JSON decoder's RecursionError
@given(inputs.hostile(inputs.AKS_POOLS))
def test_aks_pool_dump(folder: Path, data: bytes) -> None:
    from aicr.snapshot import aks

    refused_or_loaded(lambda: aks.load_pools(_write(folder, "pools.json", data)))


@given(inputs.hostile(inputs.VALUES))
def test_values_file(folder: Path, data: bytes) -> None:
    from aicr.checks.allocation import DRA_GPUS_KEY, ValuesReader
    from aicr.recipe.load import parse_recipe

    recipe = parse_recipe(
        "kind: RecipeResult\ncomponentRefs:\n- name: nvidia-dra-driver-gpu\n  valuesFile: v.yaml\n"
    )
    _write(folder, "v.yaml", data)
    reader = ValuesReader(recipe, str(folder), "recipe.yaml")
    refused_or_loaded(lambda: reader.value(recipe.component_refs[0], DRA_GPUS_KEY))


@given(inputs.hostile('{"payloadType": "application/vnd.in-toto+json", "payload": "e30=", '
                      '"signatures": [{"keyid": "", "sig": "AAAA"}]}'))  # fmt: skip
def test_attestation(folder: Path, data: bytes) -> None:
    from aicr.attestation.verify import verify

    key = folder / "key.pub"
    if not key.exists():
        public = ed25519.Ed25519PrivateKey.generate().public_key()
        key.write_bytes(public.public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo))
    refused_or_loaded(lambda: verify(Path(_write(folder, "a.intoto.json", data)), str(key)))


@given(inputs.hostile("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n",
                      False))  # fmt: skip
def test_key(folder: Path, data: bytes) -> None:
    from aicr.attestation import keys

    refused_or_loaded(lambda: keys.load_public(_write(folder, "k.pub", data)))


@given(inputs.hostile(inputs.PRODUCT), inputs.hostile("--- PASS: TestA (0.1s)\n", False))
def test_evidence_verify(folder: Path, product: bytes, log: bytes) -> None:
    from aicr import cncf

    submission = folder / "v1.35" / "example"
    submission.mkdir(parents=True, exist_ok=True)
    _write(submission, "PRODUCT.yaml", product)
    _write(submission, "e2e.log", log)
    refused_or_loaded(lambda: cncf.verify(submission, version=None))


@given(inputs.hostile(inputs.MEMBERS))
def test_members(folder: Path, data: bytes) -> None:
    from aicr.cncf.verifier import read_members

    refused_or_loaded(lambda: read_members(_write(folder, "members.json", data)))


@given(inputs.hostile(inputs.RUN_INFO), inputs.hostile(inputs.RECIPE))
def test_check_pod_run_input(folder: Path, run_info: bytes, recipe: bytes) -> None:
    from aicr.checks import load_inputs

    run_dir = folder / "run"
    run_dir.mkdir(exist_ok=True)
    _write(run_dir, "run.json", run_info)
    _write(run_dir, "recipe.yaml", recipe)
    _write(run_dir, "config.yaml", inputs.CONFIG.encode())
    # in the pod every AicrError ends the check `other` with its message; never a traceback
    refused_or_loaded(lambda: load_inputs(run_dir), AicrError)
