"""One example recipe on the platform it targets, run as a user runs it, and its outcome judged.

`hack/sim/sim up --platform P`, `hack/sim/sim recipe R --data recipes`, then `aicr validate
-r R --data recipes --config <(hack/sim/sim config)` inside the cluster (`sim exec`), in a
cluster of its own (its own run folder and network namespace) next to the session's. What
`sim recipe` says it played must be running; every check the recipe plans passes, except
those its module lists in `CANNOT_RUN`, each with the status and message it must end with and
why it cannot pass on this cluster (so the list stays true). One module per recipe, so
pytest-xdist's loadfile distribution spreads them over the workers.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import NamedTuple

from harness import VALIDATOR_IMAGE
from test_platform_profiles import platform_cluster, sim

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "recipes"
# a cluster of its own, the recipe's install and a whole validate run: past the suite's bound
TIMEOUT = 1500


class CannotRun(NamedTuple):
    """A check that cannot pass on the recipe's simulated cluster: how it ends, and why."""

    status: str
    message: str  # the start of its message
    why: str


# What the recipes share that the sim cannot give (simcluster/scenarios/recipe.py NOT_PLAYED).
NO_KGATEWAY = CannotRun("failed", "2/2 inference gateway steps failed: Gateway: no Gateway",
    "kgateway and the inferencepool chart are not played: no Gateway, no InferencePool CRD")
NO_KAI = CannotRun("failed", "1/1 gang steps failed: gang mechanism: the recipe deploys "
    "kai-scheduler, but the cluster does not serve scheduling.run.ai",
    "the KAI scheduler's Go module is refused by the module proxy: not played")
NO_AUTOSCALER = CannotRun("failed", "1/1 steps failed: autoscaler: no recognised cluster "
    "autoscaler", "the recipe installs no cluster autoscaler and the platform profile runs "
    "none (Karpenter or Cluster Autoscaler is the user's install on EKS)")  # fmt: skip


def unplayed(components: dict[str, str]) -> str:
    """platform-health's words for components whose namespace the sim never made."""
    return "; ".join(f"{c}: namespace {ns} does not exist" for c, ns in components.items())


def skipped(why: str) -> CannotRun:
    """A check the test skips (`--skip-check`), and why."""
    return CannotRun("skipped", "skipped by --skip-check", why)


class Outcome(NamedTuple):
    """What `aicr validate` of the recipe gave: each check's (status, message), its exit."""

    checks: dict[str, tuple[str, str]]
    code: int
    stderr: str


def run(recipe: str, platform: str, tmp_path: Path, *validate_args: str) -> Outcome:
    """Play `recipe` on a `platform` cluster and validate it there.

    On a platform whose provider lists its node pools (`sim platform pools`: AKS), the listing
    is passed as a user passes theirs (`--aks-gpu-pools`).

    Asserts what does not depend on the recipe's checks: `sim recipe` exits 0 and reports
    something played, every component it installed is ready, and the run wrote its report.
    Prints the timings and each check's duration, as CI's log keeps them.
    """
    path = RECIPES / f"{recipe}.yaml"
    timings: dict[str, float] = {}
    with platform_cluster(platform, tmp_path) as env:
        start = time.monotonic()
        played = sim(env, "recipe", str(path), "--data", str(RECIPES), timeout=600)
        timings["sim recipe"] = time.monotonic() - start
        print(played.stdout, played.stderr)
        assert played.returncode == 0, played.stderr[-3000:]
        assert [line for line in played.stdout.splitlines() if ": played: " in line], played.stdout
        status = sim(env, "status")
        components = [line for line in status.stdout.splitlines() if line.startswith("component ")]
        assert components and all(line.endswith(": ready") for line in components), status.stdout
        config = tmp_path / "config.yaml"
        config.write_text(sim(env, "config").stdout)
        listed = sim(env, "platform", "pools")
        if listed.returncode == 0:
            (tmp_path / "pools.json").write_text(listed.stdout)
            validate_args += ("--aks-gpu-pools", str(tmp_path / "pools.json"))
        report = tmp_path / "report.json"
        start = time.monotonic()
        done = sim(env, "exec", "--", "aicr", "validate", "-r", str(path), "--data", str(RECIPES),
                   "--config", str(config), "--image", VALIDATOR_IMAGE, "-o", str(report),
                   *validate_args, timeout=TIMEOUT)  # fmt: skip
        timings["aicr validate"] = time.monotonic() - start
    print("timings:", {k: round(v, 1) for k, v in timings.items()})
    assert report.is_file(), done.stderr[-3000:]
    tests = json.loads(report.read_text())["results"]["tests"]
    for t in tests:
        print(f"{t['name']}: {t['status']} in {t.get('duration', 0) / 1000:.1f}s")
    got = {t["name"]: (t["status"], t["message"]) for t in tests}
    print(json.dumps(got, indent=1))
    return Outcome(got, done.returncode, done.stderr[-3000:])


def judge(outcome: Outcome, cannot_run: dict[str, CannotRun]) -> None:
    """Each check in `cannot_run` ends as listed; every other planned check passed; the exit
    code says so (8: checks failed, 0: none)."""
    got = outcome.checks
    for name, why in cannot_run.items():
        assert name in got, (name, sorted(got))
        status, message = got[name]
        assert status == why.status and message.startswith(why.message), (name, got[name])
    passed = {n for n, (status, _) in got.items() if status == "passed"}
    assert passed == set(got) - set(cannot_run), got
    failed = any(why.status in ("failed", "other") for why in cannot_run.values())
    assert outcome.code == (8 if failed else 0), outcome.stderr
