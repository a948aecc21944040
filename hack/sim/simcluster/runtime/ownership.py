"""Which pods the process runtime owns (and KWOK must leave alone).

A pod is runtime-owned when one of its containers uses the validator image
(the image repository's last path component is `aicr-validator`, any registry,
tag or digest), or when a test asked for a fault with the annotation
`sim.aicr.dev/fault`, or when a container runs `nvidia-smi` (the GPU node
model in simcluster/gpu plays it). The product never has to know about the
simulator.
"""

from __future__ import annotations

from typing import Any

from simcluster.gpu.model import pod_runs_smi

VALIDATOR_REPO = "aicr-validator"
FAULT_ANNOTATION = "sim.aicr.dev/fault"

# Same rule for kwok's stage selectors (gojq); must agree with `runtime_owned`.
RUNTIME_OWNED_JQ = (
    '(.spec.containers | map(.image | split("@")[0] | split("/") | last | split(":")[0])'
    f' | any(. == "{VALIDATOR_REPO}"))'
    f' or (.metadata.annotations["{FAULT_ANNOTATION}"] != null)'
    # GPU pods running nvidia-smi (simcluster/gpu): must agree with `pod_runs_smi`.
    ' or (.spec.containers | map((.command // [])[0] // "" | split("/") | last)'
    ' | any(. == "nvidia-smi"))'
)


def image_repo_name(image: str) -> str:
    """Last path component of an image reference, without tag or digest."""
    return image.split("@", 1)[0].split("/")[-1].split(":", 1)[0]


def is_validator_image(image: str) -> bool:
    """True for `<any registry>/<any path>/aicr-validator[:tag][@digest]`."""
    return image_repo_name(image) == VALIDATOR_REPO


def runtime_owned(pod: dict[str, Any]) -> bool:
    """True if the runtime, not KWOK, plays this pod's lifecycle."""
    containers = pod.get("spec", {}).get("containers") or []
    if any(is_validator_image(c.get("image", "")) for c in containers):
        return True
    if pod_runs_smi(pod):
        return True
    return FAULT_ANNOTATION in (pod.get("metadata", {}).get("annotations") or {})
