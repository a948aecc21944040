"""The pinned workload image list and the registry rewrite every image goes through."""

from __future__ import annotations

import pytest

from aicr.catalog import load_catalog, parse_catalog
from aicr.checks import workload_images
from aicr.config import EMPTY_CONFIG, ValidateConfig, parse_config
from aicr.document import validate
from aicr.errors import InputError, SchemaError
from aicr.yaml_io import parse

ENV = "AICR_VALIDATOR_IMAGE_REGISTRY"
HEADER = "apiVersion: aicr.nvidia.com/v1alpha1\nkind: WorkloadImages\n"


def config(validate: str) -> ValidateConfig:
    header = "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
    return parse_config(header + f"spec: {{validate: {validate}}}\n")


def parse_images(text: str) -> workload_images.WorkloadImages:
    return validate(workload_images.WorkloadImages, parse(text, "images.yaml"))


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def test_the_catalog_names_only_pinned_images_and_every_pinned_image_is_run() -> None:
    """Checks name their images once, in the catalog; images.yaml only pins them."""
    pinned = {i.name for i in workload_images.load_images().images}
    catalog = load_catalog()
    named = {(c.name, n) for c in catalog.checks for n in c.images}
    assert {(c, n) for c, n in named if n not in pinned} == set()
    assert pinned - {n for _, n in named} == set()


def test_check_nvidia_smi_runs_the_pinned_cuda_image() -> None:
    image = workload_images.workload_image("cuda-base", check="check-nvidia-smi",
                                           config=EMPTY_CONFIG)
    assert image == "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{name: a, image: cuda:12, description: d}",
         "'cuda:12' must start with a registry host"),
        ("{name: a, image: nvidia/cuda:12, description: d}",
         "'nvidia/cuda:12' must start with a registry host"),
        ("{name: a, image: nvcr.io/nvidia/cuda, description: d}",
         "must carry a fixed tag or digest"),
        ("{name: a, image: 'nvcr.io/nvidia/cuda:latest', description: d}",
         "must carry a fixed tag or digest"),
        ("{name: a, image: 'nvcr.io/c:1', description: d, checks: [x]}", "checks"),
        ("{name: a, image: 'nvcr.io/c:1', description: d, tag: 2}", "tag"),
    ],
    ids=["no-host", "no-host-with-path", "no-tag", "latest", "checks-belong-to-the-catalog",
         "unknown-key"],
)  # fmt: skip
def test_a_bad_entry_is_refused(entry: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        parse_images(HEADER + f"images: [{entry}]\n")


def test_digests_and_registry_ports_are_pinned_references() -> None:
    digest = "localhost:5000/c@sha256:" + "0" * 64
    doc = parse_images(HEADER + (
        "images:\n"
        f"  - {{name: a, image: '{digest}', description: d}}\n"
        "  - {name: b, image: 'docker.io/library/busybox:1.37', description: d}\n"
    ))  # fmt: skip
    catalog = parse_catalog(
        "apiVersion: aicr.nvidia.com/v1alpha1\nkind: Catalog\nimage: ghcr.io/x/y\nchecks:\n"
        "  - {name: x, phase: deployment, description: d, timeout: 1m, images: {a: image}}\n"
        "  - {name: y, phase: deployment, description: d, timeout: 1m, images: {b: null}}\n"
    )
    assert [i.name for i in doc.used_by(["y"], catalog)] == ["b"]
    assert doc.get("b", "y", catalog).image == "docker.io/library/busybox:1.37"
    with pytest.raises(LookupError, match="'a' is not named for y in its catalog entry"):
        doc.get("a", "y", catalog)


def test_duplicate_names_are_refused() -> None:
    entry = "{name: a, image: 'nvcr.io/c:1', description: d}"
    with pytest.raises(SchemaError, match="duplicate image names: a"):
        parse_images(HEADER + f"images: [{entry}, {entry}]\n")


def test_an_image_not_declared_for_the_check_is_a_bug() -> None:
    with pytest.raises(LookupError, match="'cuda-base' is not named for platform-health in its"):
        workload_images.workload_image("cuda-base", check="platform-health", config=EMPTY_CONFIG)


@pytest.mark.parametrize(
    ("ref", "mirror", "expected"),
    [
        ("nvcr.io/nvidia/cuda:12", None, "nvcr.io/nvidia/cuda:12"),
        ("nvcr.io/nvidia/cuda:12", "m.local:5000/ai", "m.local:5000/ai/cuda:12"),
        ("docker.io/library/busybox:1.37", "m.local", "m.local/busybox:1.37"),
        ("nvcr.io/nvidia/cloud-native/dcgm:4", "m.local", "m.local/cloud-native/dcgm:4"),
        ("registry.k8s.io/pause:3.10", "m.local", "m.local/pause:3.10"),
        ("busybox:1.37", "m.local", "m.local/busybox:1.37"),
    ],
    ids=["no-mirror", "host-and-org-replaced", "docker-hub", "nested-path", "host-name",
         "bare-name"],
)  # fmt: skip
def test_on_registry(ref: str, mirror: str | None, expected: str) -> None:
    # AICR (pkg/validator/catalog replaceRegistry): ghcr.io/nvidia/aicr-validators/x:t on
    # localhost:5001 is localhost:5001/aicr-validators/x:t; a mirror laid out so holds ours.
    assert workload_images.on_registry(ref, mirror) == expected


def test_no_two_pinned_images_meet_on_one_mirror_name() -> None:
    pinned = [i.image for i in workload_images.load_images().images]
    moved = {workload_images.on_registry(ref, "m.local") for ref in pinned}
    assert len(moved) == len(pinned)


def test_the_environment_wins_over_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config("{images: {registry: cfg.local/}}")
    assert workload_images.registry(cfg) == "cfg.local"  # trailing slash dropped on load
    monkeypatch.setenv(ENV, "env.local/aicr/")
    assert workload_images.registry(cfg) == "env.local/aicr"
    assert workload_images.workload_image("cuda-base", check="check-nvidia-smi", config=cfg) == (
        "env.local/aicr/cuda:12.8.1-base-ubuntu24.04"
    )


def test_a_bad_environment_registry_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "https://Mirror.local")
    with pytest.raises(InputError) as err:
        workload_images.registry(EMPTY_CONFIG)
    assert str(err.value) == (
        "$AICR_VALIDATOR_IMAGE_REGISTRY: 'https://Mirror.local' is not a registry "
        "(expected host[:port][/path] in lower case, e.g. mirror.example.com:5000/aicr)"
    )


def test_a_bad_config_registry_names_the_field() -> None:
    with pytest.raises(SchemaError, match=r"spec\.validate\.images\.registry: .*expected host"):
        config("{images: {registry: 'Mirror Local'}}")


def test_a_param_override_is_used_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "env.local")
    cfg = config("{checks: {check-nvidia-smi: {params: {image: 'my.reg/cuda:1'}}}}")
    assert workload_images.workload_image("cuda-base", check="check-nvidia-smi", config=cfg) == (
        "my.reg/cuda:1"
    )


def test_pin_registry_hands_the_environment_to_check_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    assert workload_images.pin_registry(EMPTY_CONFIG) is EMPTY_CONFIG
    monkeypatch.setenv(ENV, "env.local")
    pinned = workload_images.pin_registry(EMPTY_CONFIG)
    assert pinned.validate_section.images.registry == "env.local"
    monkeypatch.delenv(ENV)
    # what a check pod, without the variable, sees
    assert workload_images.registry(pinned) == "env.local"
