"""The runtime's ownership rule: the Python predicate and KWOK's jq selector agree.

Both are derived from `OWNERS`; this feeds the same sample pods to both (the jq
form through the `jq` program, whose language kwok's gojq implements).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest
from simcluster.runtime.ownership import RUNTIME_OWNED_JQ, host_plays, runtime_owned


def _pod(image: str = "registry.example/plain:1", command: list[str] | None = None,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         extra: int = 0, namespace: str | None = None) -> dict[str, Any]:  # fmt: skip
    containers = [{"name": f"c{i}", "image": "registry.example/side:2"} for i in range(extra)]
    main: dict[str, Any] = {"name": "main", "image": image}
    if command is not None:
        main["command"] = command
    meta: dict[str, Any] = {"name": "p"}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    if namespace is not None:
        meta["namespace"] = namespace
    return {"metadata": meta, "spec": {"containers": [*containers, main]}}


SAMPLES = [
    ("plain", _pod(), False),
    ("plain with labels", _pod(labels={"app": "x"}, annotations={"a": "b"}), False),
    ("validator", _pod("ghcr.io/aicr-dev/aicr-validator:v1"), True),
    ("validator by digest on a mirror with a port",
     _pod("mirror.local:5000/x/aicr-validator@sha256:" + "0" * 64, extra=1), True),
    ("validator-like name", _pod("ghcr.io/aicr-dev/aicr-validator-extra:v1"), False),
    ("run label", _pod("ubuntu:22.04", labels={"aicr.dev/run-id": "r0123abcd"}), True),
    ("other aicr label", _pod(labels={"aicr.dev/check": "x"}), False),
    ("fault annotation", _pod(annotations={"sim.aicr.dev/fault": "crash"}), True),
    ("nvidia-smi by path", _pod("nvcr.io/nvidia/cuda:12.8.1-base", ["/usr/bin/nvidia-smi", "-L"]),
     True),
    ("nvidia-smi as an argument only", _pod(command=["sh", "-c", "nvidia-smi"]), False),
    ("empty command", _pod(command=[]), False),
    ("a component's image", _pod("quay.io/prometheus/prometheus:v3.5.0"), True),
    ("a component-like image", _pod("quay.io/prometheus/prometheus-extra:v1"), False),
    ("a component's image keyed by two path components",
     _pod("mirror.local:5000/registry.k8s.io/scheduler-plugins/controller:v0.34.7"), True),
    ("another repository of the same last name",
     _pod("registry.k8s.io/ingress-nginx/controller:v1"), False),
    ("only the key's last part", _pod("controller:v0.34.7"), False),
    ("upstream suite's namespace", _pod("ubuntu:22.04", namespace="ai-conformance-x1b2c"), True),
    ("a namespace merely naming it", _pod(namespace="my-ai-conformance-x"), False),
    ("a plain namespace", _pod(namespace="default"), False),
]  # fmt: skip


@pytest.mark.parametrize(("what", "pod", "owned"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_python_predicate(what: str, pod: dict[str, Any], owned: bool) -> None:
    assert runtime_owned(pod) is owned


def test_jq_selector_agrees_on_every_sample() -> None:
    jq = shutil.which("jq")
    if jq is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("jq is not installed; the ownership selector cannot be checked")
        pytest.skip("jq is not installed (the jq form of the ownership rule is not checked)")
    stream = "\n".join(json.dumps(pod) for _, pod, _ in SAMPLES)
    out = subprocess.run([jq, "-c", RUNTIME_OWNED_JQ], input=stream, capture_output=True,
                         text=True, check=True).stdout.split()  # fmt: skip
    assert out == ["true" if owned else "false" for _, _, owned in SAMPLES]


@pytest.mark.parametrize(
    ("image", "command", "played"),
    [
        ("ubuntu:22.04", ["ls"], True),
        ("docker.io/library/busybox:1.36", ["sh"], True),
        ("nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04", ["sh"], True),
        ("ghcr.io/aicr-dev/aicr-validator:v1", ["aicr"], True),
        ("registry.example/anything:1", ["nvidia-smi"], True),
        ("registry.example/nginx:1", ["nginx"], False),
        ("quay.io/prometheus/prometheus:v3.5.0", [], True),
        ("registry.k8s.io/scheduler-plugins/controller:v0.34.7", [], True),
        ("registry.k8s.io/ingress-nginx/controller:v1.12.0", ["/controller"], False),
    ],
)
def test_which_images_the_host_plays(image: str, command: list[str], played: bool) -> None:
    assert host_plays({"image": image, "command": command}) is played
