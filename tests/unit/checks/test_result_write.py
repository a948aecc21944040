"""The result ConfigMap write: short attempts, retries within one budget, fail closed."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from aicr import defaults as d
from aicr.checks import entrypoint
from aicr.ctrf import Status
from aicr.kube import rest as kubeapi
from aicr.kube.rest import KubeApiError
from aicr.result import RESULT_KEY, CheckResult, Detail
from aicr.runner import outcome
from fake_clock import Clock

NAME, NAMESPACE = "aicr-r0123abcd-platform-health-result", "aicr-validation"
RESULT = CheckResult(name="platform-health", status=Status.PASSED, message="all healthy")


# One step per request: "ok", "stall" (the TLS handshake never completes: the
# client gives up after its timeout), "lands-then-stall" (the write lands, its
# answer is lost), or an API status code.
Step = str | int


class FakeApi:
    """The API server as the writer sees it, one scripted step per request."""

    def __init__(self, clock: Clock, steps: list[Step]) -> None:
        self.clock, self.steps = clock, steps
        self.data: dict[str, str] = {}
        self.timeouts: list[float] = []
        self.requests: list[str] = []
        self.open = 0

    def client(self, creds: object, timeout: Any = kubeapi.REQUEST_SECONDS, **_: Any) -> Client:
        self.timeouts.append(float(timeout))
        self.open += 1
        return Client(self, float(timeout))

    def step(self, method: str, timeout: float) -> None:
        self.requests.append(method)
        step = self.steps.pop(0) if self.steps else "stall"
        if step == "lands-then-stall":
            self.data[RESULT_KEY] = RESULT.model_dump_json()
            self.clock.now += timeout
            raise httpx.ReadTimeout("The read operation timed out")
        if step == "stall":
            self.clock.now += timeout
            raise httpx.ConnectTimeout("_ssl.c:989: The handshake operation timed out")
        if isinstance(step, int):
            raise KubeApiError(step, {409: "Conflict", 403: "Forbidden"}.get(step, "Error"), "")


class Client:
    def __init__(self, api: FakeApi, timeout: float) -> None:
        self.api, self.timeout = api, timeout

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.api.open -= 1

    def close(self) -> None:
        self.api.open -= 1

    def merge_patch(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        assert path == f"/api/v1/namespaces/{NAMESPACE}/configmaps/{NAME}"
        self.api.step("PATCH", self.timeout)
        self.api.data.update(body["data"])
        return {"data": dict(self.api.data)}

    def get(self, path: str, params: object = None) -> dict[str, Any]:
        self.api.step("GET", self.timeout)
        return {"data": dict(self.api.data)}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock(1000.0)
    monkeypatch.setattr(time, "monotonic", fake.monotonic)
    monkeypatch.setattr(time, "sleep", fake.sleep)
    return fake


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, clock: Clock) -> Callable[[list[Step]], FakeApi]:
    def make(steps: list[Step]) -> FakeApi:
        api = FakeApi(clock, steps)
        monkeypatch.setattr(kubeapi, "credentials", lambda target: object())
        monkeypatch.setattr(kubeapi, "KubeApi", api.client)
        return api

    return make


def stored(api: FakeApi) -> CheckResult:
    return CheckResult.model_validate_json(api.data[RESULT_KEY])


def failed_attempts(err: str) -> list[str]:
    return [line for line in err.splitlines() if "attempt" in line and "failed" in line]


def test_a_stalled_handshake_costs_one_short_attempt_then_the_write_lands(
    server: Callable[[list[Step]], FakeApi], clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    api = server(["stall", "ok"])
    assert entrypoint.write_result_configmap(RESULT, NAMESPACE, NAME) is None
    assert stored(api) == RESULT
    assert len(api.timeouts) == 2  # a fresh connection per attempt
    assert max(api.timeouts) <= 8.0
    assert api.open == 0
    assert clock.now - 1000.0 < d.RESULT_WRITE_SECONDS
    err = capsys.readouterr().err
    assert len(failed_attempts(err)) == 1
    assert "attempt 1 failed" in err and "handshake operation timed out" in err


def test_an_api_that_never_answers_is_given_up_within_the_budget(
    server: Callable[[list[Step]], FakeApi], clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    api = server([])  # every request stalls
    error = entrypoint.write_result_configmap(RESULT, NAMESPACE, NAME)
    assert error is not None and "ConnectTimeout" in error
    assert clock.now - 1000.0 <= d.RESULT_WRITE_SECONDS
    assert len(api.requests) >= 3
    assert all(t <= 8.0 for t in api.timeouts)
    err = capsys.readouterr().err
    assert len(failed_attempts(err)) == len(api.requests)
    assert "giving up" in failed_attempts(err)[-1]


def test_a_conflict_after_a_landed_attempt_reads_back_and_is_done(
    server: Callable[[list[Step]], FakeApi],
) -> None:
    api = server(["lands-then-stall", 409, "ok"])
    assert entrypoint.write_result_configmap(RESULT, NAMESPACE, NAME) is None
    assert api.requests == ["PATCH", "PATCH", "GET"]
    assert stored(api) == RESULT


def test_a_conflict_over_someone_elses_content_is_written_again(
    server: Callable[[list[Step]], FakeApi],
) -> None:
    api = server(["stall", 409, "ok", "ok"])
    assert entrypoint.write_result_configmap(RESULT, NAMESPACE, NAME) is None
    assert api.requests == ["PATCH", "PATCH", "GET", "PATCH"]
    assert stored(api) == RESULT


def test_forbidden_is_not_retried(
    server: Callable[[list[Step]], FakeApi], capsys: pytest.CaptureFixture[str]
) -> None:
    api = server([403, "ok"])
    error = entrypoint.write_result_configmap(RESULT, NAMESPACE, NAME)
    assert error is not None and "403" in error
    assert api.requests == ["PATCH"]
    assert "giving up" in capsys.readouterr().err


def test_an_undelivered_pass_exits_nonzero_and_the_orchestrator_reads_other(
    server: Callable[[list[Step]], FakeApi],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    server([])
    monkeypatch.setattr(entrypoint, "run_check", lambda name, inputs: RESULT)
    (tmp_path / "run.json").write_text(json.dumps({"runId": "r0123abcd", "namespace": NAMESPACE,
                                                   "workloads": {}}))  # fmt: skip
    (tmp_path / "recipe.yaml").write_text("componentRefs: []\n")
    (tmp_path / "config.yaml").write_text(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
    )
    term = tmp_path / "termination-log"
    code = entrypoint.execute(RESULT.name, tmp_path, result_configmap=NAME, termination_log=term)
    assert code == 3
    message = term.read_text()
    summary = json.loads(message)
    assert summary["status"] == "other"
    assert (
        "ConnectTimeout" in summary["message"] and "ended passed: all healthy" in summary["message"]
    )
    seen = outcome.from_termination(RESULT.name, {"exitCode": code, "message": message}, None)
    assert seen.status == Status.OTHER
    assert seen.detail == Detail.NO_RESULT
