"""Which pods the process runtime owns (and KWOK must leave alone), declared once.

`OWNERS` is the one declaration. `runtime_owned` (Python, used by the runtime)
and `RUNTIME_OWNED_JQ` (the jq expression written into kwok's stage selectors)
are both derived from it; a unit test feeds the same sample pods to both.

A pod is runtime-owned when any of these holds:
- a container uses the validator image (the image repository's last path
  component is `aicr-validator`, any registry, tag or digest);
- it carries the run label `aicr.dev/run-id` (the product labels every pod
  its checks create with it);
- it carries the annotation `sim.aicr.dev/fault` (a test asked for a fault);
- a container's command is `nvidia-smi` (the GPU node model plays it);
- a container's image is one a platform component plays with its real
  binary (simcluster.components, `sim up --with NAME`);
- it is in a namespace named `ai-conformance-*`: the upstream AI conformance
  suite (kubernetes-sigs/ai-conformance) creates its test pods in such
  namespaces, unlabelled, and its verdicts rest on what they print.
The product never has to know about the simulator.

Which images a runtime-owned pod's containers really run is `HOST_IMAGES`:
the host plays them with its own tools. Containers of other images are only
shown as running.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from simcluster.components.base import plays_image
from simcluster.components.registry import image_binary, image_repos

VALIDATOR_REPO = "aicr-validator"
FAULT_ANNOTATION = "sim.aicr.dev/fault"
RUN_LABEL = "aicr.dev/run-id"  # aicr.kube.names.RUN_ID_LABEL; the sim never imports aicr
SMI = "nvidia-smi"
# Image repositories (last path component) whose commands run with the host's tools;
# the inference load generator and server images as simcluster.runtime.images plays them.
NCCL_TESTS_REPO = "nccl-tests"  # played by the GPU model's sshd, mpirun and all_reduce_perf
HOST_IMAGES = (
    VALIDATOR_REPO,
    "ubuntu",
    "busybox",
    "cuda",
    "aicr-aiperf",
    "vllm-openai",
    NCCL_TESTS_REPO,
    "dcgm",
    "python",
)  # dcgm: its dcgmproftester12 is the GPU model's

UPSTREAM_NAMESPACE_PREFIX = "ai-conformance-"

Kind = Literal["image-repo", "label", "annotation", "command", "namespace-prefix"]


def image_repo_name(image: str) -> str:
    """Last path component of an image reference, without tag or digest."""
    return image.split("@", 1)[0].split("/")[-1].split(":", 1)[0]


def command_name(container: dict[str, Any]) -> str:
    """The base name of the container's first command word ("" without a command)."""
    command = container.get("command") or []
    return str(command[0]).rsplit("/", 1)[-1] if command else ""


@dataclass(frozen=True)
class Owner:
    """One reason a pod is runtime-owned: a kind of test and its value."""

    kind: Kind
    value: str

    def matches(self, pod: dict[str, Any]) -> bool:
        """True when the pod fits this rule."""
        meta = pod.get("metadata") or {}
        containers = (pod.get("spec") or {}).get("containers") or []
        if self.kind == "image-repo":
            return any(plays_image(self.value, c.get("image", "")) for c in containers)
        if self.kind == "label":
            return self.value in (meta.get("labels") or {})
        if self.kind == "annotation":
            return self.value in (meta.get("annotations") or {})
        if self.kind == "namespace-prefix":
            return str(meta.get("namespace") or "").startswith(self.value)
        return any(command_name(c) == self.value for c in containers)

    def jq(self) -> str:
        """The same rule as a jq (gojq) expression over the pod."""
        v = json.dumps(self.value)
        if self.kind == "image-repo":  # plays_image: the repository is, or ends with, /value
            return (
                '(.spec.containers | map(.image | split("@")[0] | split("/")'
                ' | (.[:-1] + [last | split(":")[0]]) | join("/"))'
                f' | any(. == {v} or endswith("/" + {v})))'
            )
        if self.kind == "label":
            return f"(.metadata.labels[{v}] != null)"
        if self.kind == "annotation":
            return f"(.metadata.annotations[{v}] != null)"
        if self.kind == "namespace-prefix":
            return f'((.metadata.namespace // "") | startswith({v}))'
        return (
            '(.spec.containers | map((.command // [])[0] // "" | split("/") | last)'
            f" | any(. == {v}))"
        )


OWNERS = (
    Owner("image-repo", VALIDATOR_REPO),
    Owner("label", RUN_LABEL),
    Owner("annotation", FAULT_ANNOTATION),
    Owner("command", SMI),
    *(Owner("image-repo", repo) for repo in image_repos()),
    Owner("namespace-prefix", UPSTREAM_NAMESPACE_PREFIX),
)
RUNTIME_OWNED_JQ = " or ".join(o.jq() for o in OWNERS)


def is_validator_image(image: str) -> bool:
    """True for `<any registry>/<any path>/aicr-validator[:tag][@digest]`."""
    return image_repo_name(image) == VALIDATOR_REPO


def host_plays(container: dict[str, Any]) -> bool:
    """True when the runtime runs this container's command (host or component image, nvidia-smi)."""
    image = container.get("image", "")
    return (
        image_repo_name(image) in HOST_IMAGES
        or image_binary(image) is not None
        or command_name(container) == SMI
    )


def runtime_owned(pod: dict[str, Any]) -> bool:
    """True if the runtime, not KWOK, plays this pod's lifecycle."""
    return any(o.matches(pod) for o in OWNERS)
