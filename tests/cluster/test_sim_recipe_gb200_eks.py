"""gb200-eks-ubuntu-inference-dynamo on the `eks` profile: `sim up`, `sim recipe`, `aicr validate`.

See recipe_run: every check the recipe plans passes except those listed in `CANNOT_RUN`,
each with its status, message and why. The recipe's GPUs are DRA's (the GPU Operator's
device plugin off, the DRA driver's `resources.gpus` on); the sim's GPU nodes are H100s
(p5.48xlarge) standing in for GB200 nodes: no check reads the accelerator from the recipe.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import recipe_run as r

UNPLAYED = {"cert-manager": "cert-manager", "kai-scheduler": "kai-scheduler",
            "kgateway": "kgateway-system", "inference-extension": "kgateway-system",
            "dynamo-platform": "dynamo-system"}  # fmt: skip
CANNOT_RUN = {
    "expected-resources": r.skipped("it fails as platform-health does, on the five components "
        "the sim does not play; skipped, since a failed deployment phase would stop every "
        "later phase"),
    "inference-perf": r.skipped("the recipe deploys dynamo-platform, whose operator the sim does "
        "not play: it fails (no DynamoGraphDeployment CRD), and a failed performance phase "
        "would stop the conformance phase"),
    "platform-health": r.CannotRun("failed", f"5/10 components unhealthy: {r.unplayed(UNPLAYED)}",
        "cert-manager, KAI scheduler, kgateway, its inferencepool and Dynamo are not played"),
    "inference-gateway": r.NO_KGATEWAY,
    "gang-scheduling": r.NO_KAI,
    "cluster-autoscaling": r.NO_AUTOSCALER,
}  # fmt: skip


@pytest.mark.timeout(r.TIMEOUT)
def test_gb200_eks_inference_dynamo_on_eks(tmp_path: Path) -> None:
    skips = ("--skip-check", "expected-resources", "--skip-check", "inference-perf")
    r.judge(r.run("gb200-eks-ubuntu-inference-dynamo", "eks", tmp_path, *skips), CANNOT_RUN)
