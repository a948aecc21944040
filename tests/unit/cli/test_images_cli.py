"""``aicr images list``: every image a run pulls, after the registry rewrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr import __version__
from aicr.cli.main import run

VALIDATOR = f"ghcr.io/aicr-dev/aicr-validator:v{__version__}"
CUDA = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"
UBUNTU = "docker.io/library/ubuntu:22.04"
DCGM = "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04"  # accelerator-metrics' GPU load
NCCL_TAG = "nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
NCCL = f"public.ecr.aws/hpc-cloud/{NCCL_TAG}"
PYTHON = "docker.io/library/python:3.12.8-slim-bookworm"  # gateway echo+client, HPA metric pods
INFERENCE = [  # inference-perf: its load generator, and the serving stacks it may deploy
    "ghcr.io/aicr-dev/aicr-aiperf:0.13.0",
    "docker.io/vllm/vllm-openai:v0.11.0",
    "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1",
]
RAY = "docker.io/rayproject/ray:2.46.0"  # robust-controller's RayCluster head
PAUSE = "registry.k8s.io/pause:3.10"  # cluster-autoscaling's pods hold GPUs only
ENV = "AICR_VALIDATOR_IMAGE_REGISTRY"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def recipe(tmp_path: Path, deployment: list[str], conformance: str = "platform-health") -> str:
    path = tmp_path / "recipe.yaml"
    path.write_text(
        "kind: RecipeResult\napiVersion: aicr.nvidia.com/v1alpha1\n"
        "componentRefs: [{name: gpu-operator, namespace: gpu-operator,"
        " overrides: {devicePlugin: {enabled: true}}}]\n"
        f"validation:\n  deployment: {{checks: [{', '.join(deployment)}]}}\n"
        f"  conformance: {{checks: [{conformance}]}}\n"
    )
    return str(path)


def config(tmp_path: Path, validate: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text("kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
                    f"spec: {{validate: {validate}}}\n")  # fmt: skip
    return str(path)


def images(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = run(["images", "list", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_without_a_recipe_every_check_counts(capsys: pytest.CaptureFixture[str]) -> None:
    everything = [VALIDATOR, CUDA, UBUNTU, DCGM, NCCL, *INFERENCE, RAY, PYTHON, PAUSE]
    assert images(capsys) == (0, everything, "")


def test_only_the_planned_checks_images(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert images(capsys, "-r", recipe(tmp_path, ["operator-health"])) == (0, [VALIDATOR], "")
    with_smi = recipe(tmp_path, ["check-nvidia-smi"])
    assert images(capsys, "-r", with_smi) == (0, [VALIDATOR, CUDA], "")
    assert images(capsys, "-r", with_smi, "--phase", "conformance") == (0, [VALIDATOR], "")


def test_the_config_registry_moves_every_image(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = config(tmp_path, "{images: {registry: mirror.local:5000/ai}}")
    assert images(capsys, "--config", cfg) == (0, [
        f"mirror.local:5000/ai/aicr-validator:v{__version__}",
        "mirror.local:5000/ai/cuda:12.8.1-base-ubuntu24.04",
        "mirror.local:5000/ai/ubuntu:22.04",
        "mirror.local:5000/ai/cloud-native/dcgm:4.2.3-1-ubuntu22.04",
        f"mirror.local:5000/ai/{NCCL_TAG}",
        *(f"mirror.local:5000/ai/{i.split('/', 2)[2]}" for i in INFERENCE),
        "mirror.local:5000/ai/ray:2.46.0",
        "mirror.local:5000/ai/python:3.12.8-slim-bookworm",
        "mirror.local:5000/ai/pause:3.10",
    ], "")  # fmt: skip
    monkeypatch.setenv(ENV, "env.local")
    assert images(capsys, "--config", cfg)[1] == [
        f"env.local/aicr-validator:v{__version__}",
        "env.local/cuda:12.8.1-base-ubuntu24.04",
        "env.local/ubuntu:22.04",
        "env.local/cloud-native/dcgm:4.2.3-1-ubuntu22.04",
        f"env.local/{NCCL_TAG}",
        *(f"env.local/{i.split('/', 2)[2]}" for i in INFERENCE),
        "env.local/ray:2.46.0",
        "env.local/python:3.12.8-slim-bookworm",
        "env.local/pause:3.10",
    ]


def test_a_check_param_replaces_its_image(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = config(tmp_path, "{checks: {check-nvidia-smi: {params: {image: 'my.reg/cuda:1'}}}}")
    # dra-support, which runs the same pinned image, keeps it: the param is per check
    expected = [VALIDATOR, "my.reg/cuda:1", CUDA, UBUNTU, DCGM, NCCL, *INFERENCE, RAY, PYTHON,
                PAUSE]
    assert images(capsys, "--config", cfg) == (0, expected, "")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["-r", "missing.yaml"], None, "error: missing.yaml: file not found"),
        ([], "Not A Registry", "error: $AICR_VALIDATOR_IMAGE_REGISTRY: 'Not A Registry' is not"),
        (["-r", "{recipe}", "-r", "{recipe}"], None, "error: --recipe given more than once"),
        (["--phase", "readiness"], None, "Invalid value for '--phase'"),
    ],
    ids=["missing-recipe", "bad-env-registry", "repeated-flag", "bad-phase"],
)
def test_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    args: list[str], env: str | None, message: str,
) -> None:
    if env:
        monkeypatch.setenv(ENV, env)
    path = recipe(tmp_path, ["operator-health"])
    code, out, err = images(capsys, *[a.format(recipe=path) for a in args])
    assert (code, out) == (2, [])
    assert message in err


def test_an_unknown_check_in_the_recipe_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = images(capsys, "-r", recipe(tmp_path, ["check-nvidia-sm"]))
    assert (code, out) == (2, [])
    assert "unknown check 'check-nvidia-sm'" in err
