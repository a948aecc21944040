from __future__ import annotations

import pytest

from aicr.kube import names


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        ("platform-health", "aicr-r0123abcd-platform-health"),
        ("a" * 40, "aicr-r0123abcd-" + "a" * 30 + "-"),  # prefix; hash suffix checked below
    ],
    ids=["short", "long"],
)
def test_check_names_fit_job_limits(check: str, expected: str) -> None:
    name = names.check_name("r0123abcd", check)
    assert len(name) <= names.JOB_NAME_MAX
    assert name.startswith(expected)


def test_cut_names_stay_unique() -> None:
    a = names.check_name("r0123abcd", "x" * 39 + "a")
    b = names.check_name("r0123abcd", "x" * 39 + "b")
    assert a != b
    assert len(a) == len(b) == names.JOB_NAME_MAX


def test_every_derived_name_is_a_dns_label() -> None:
    check = "z" * 40
    for name in (
        names.result_name("r0123abcd", check),
        names.workload_namespace("r0123abcd", check),
        names.inputs_name("r0123abcd"),
    ):
        assert len(name) <= names.DNS_LABEL_MAX
        assert name == name.lower() and not name.endswith("-")


@pytest.mark.parametrize(
    ("run_id", "selector"),
    [
        ("r0123abcd", "app.kubernetes.io/managed-by=aicr,aicr.dev/run-id=r0123abcd"),
        (None, "app.kubernetes.io/managed-by=aicr"),
    ],
    ids=["one-run", "all-runs"],
)
def test_run_selector(run_id: str | None, selector: str) -> None:
    assert names.run_selector(run_id) == selector


@pytest.mark.parametrize(
    ("text", "ok"),
    [("r0123abcd", True), ("R0123ABCD", False), ("r012", False), ("x", False),
     ("nightly-r0123abcd", True), ("-r0123abcd", False), ("Nightly-r0123abcd", False),
     ("a" * 31 + "-r0123abcd", False)],
)  # fmt: skip
def test_is_run_id(text: str, ok: bool) -> None:
    assert names.is_run_id(text) is ok


@pytest.mark.parametrize(
    ("run_id", "job"),
    [("r0123abcd", "aicr-r0123abcd-dra-support"),
     ("nightly-r0123abcd", "nightly-r0123abcd-dra-support")],
    ids=["bare", "job-name-prefix"],
)  # fmt: skip
def test_a_job_name_prefix_starts_every_name_and_keeps_it_run_unique(run_id: str, job: str) -> None:
    assert names.check_name(run_id, "dra-support") == job
    assert names.inputs_name(run_id) == job.removesuffix("dra-support") + "inputs"
