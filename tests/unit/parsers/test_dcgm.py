"""dcgm-exporter pages read as the real exporter serves them: bare, on Kubernetes, under DRA."""

from __future__ import annotations

import math

import pytest

from aicr.parsers import ParseError
from aicr.parsers.dcgm import parse
from real_captures import capture


def test_a_docker_page_of_a_tesla_t4() -> None:
    page = parse(capture("dcgm-exporter", "datadog-t4-460-docker.prom"))
    util = next(s for s in page.samples if s.name == "DCGM_FI_DEV_GPU_UTIL")
    assert util.value == 0 and util.labels["UUID"] == "GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e"
    assert util.labels["modelName"] == "Tesla T4" and "pod" not in util.labels
    assert len(page.samples) == 16 and "DCGM_FI_DEV_FB_FREE" in page.declared


def test_kubernetes_labels_empty_while_no_pod_holds_the_gpu() -> None:
    bare = parse(capture("dcgm-exporter", "readme-docker-no-pod-labels.prom"))
    k8s = parse(capture("dcgm-exporter", "readme-k8s-empty-pod-labels.prom"))
    assert [s.value for s in bare.samples] == [s.value for s in k8s.samples]
    assert {k: k8s.samples[0].labels[k] for k in ("container", "namespace", "pod")} == {
        "container": "",
        "namespace": "",
        "pod": "",
    }
    # 9223372036854775794: DCGM's blank value for a field the GPU does not report
    assert k8s.samples[2].name == "DCGM_FI_DEV_MEMORY_TEMP" and math.isnan(k8s.samples[2].value)


def test_dra_attribution_labels() -> None:
    page = parse(capture("dcgm-exporter", "k8s-docs-gh200-dra-pods.prom"))
    assert [(s.labels["namespace"], s.labels["pod"]) for s in page.samples] == [
        ("gpu-test3", "pod1"),
        ("gpu-test3", "pod2"),
    ]
    labels = page.samples[0].labels
    assert (labels["dra_claim_name"], labels["dra_driver_name"], labels["dra_device_name"]) == (
        "single-gpu",
        "gpu.nvidia.com",
        "gpu-0",
    )


def test_text_that_is_not_a_page() -> None:
    with pytest.raises(ParseError, match=r"^not the Prometheus text format"):
        parse('DCGM_FI_DEV_GPU_UTIL{gpu="0" 1\n')
