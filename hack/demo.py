"""The demo: aicr's headline, a CNCF AI Conformance run, on the simulated GPU cluster.

Five parts, each timed:

1. build: the cluster's binaries and the platform components below, into the cache
   (`AICR_SIM_CACHE`), while this process is still outside the cluster's network
   namespace, where a build can fetch its modules: minutes on first use, with a
   line every 30 s; at once when the cache is warm.
2. cluster: the simulated cluster starts in a network namespace of its own, which
   this process then enters (so does every `aicr` it runs).
3. platform: the gpu-platform scenario, the real components every conformance check
   exercises, the GPU Operator's and the DRA driver's stand-ins and the RuntimeClasses
   (`tests/cluster/conformance_cluster.py`, shared with the CNCF submission test and
   the conformance bench), device-plugin GPUs.
4. validate: `aicr validate --phase conformance` with every conformance check, its
   live progress and requirement table, and `--cncf-submission --evidence-dir`: a
   submission whose pages are marked as coming from a simulated cluster, which
   aicr tells from the cluster's own nodes.
5. verify: `aicr evidence verify --allow-simulated` on that directory.

Everything is kept in demo-out/: recipe.yaml, config.yaml, report.json, junit.xml
and the submission (v1.35/aicr-demo/). The cluster is brought down at the end, on
failure and on Ctrl-C too, unless `--keep`. A part that fails prints one line, what
failed and what to do, and the demo exits 1 (130 on Ctrl-C). Everything stays on
loopback or inside the cluster's namespace.

    make demo            # or: python hack/demo.py [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "demo-out"
VENDOR = REPO / "hack" / "demo" / "vendor.yaml"
SCENARIO = "gpu-platform"
MODE = "device-plugin"  # GPUs Karpenter can add and the DCGM exporter attributes
sys.path[:0] = [str(REPO / p) for p in ("hack/sim", "tests/cluster", "tests")]

import yaml  # noqa: E402
from conformance_cluster import (  # noqa: E402
    COMPONENTS,
    QUICK_PARAMS,
    STAND_IN_NS,
    exporters_ready,
    healthy,
    recipe,
    run_config,
)
from harness import SimCluster  # noqa: E402
from simcluster.cluster.sim import Sim  # noqa: E402
from simcluster.components import install, registry  # noqa: E402
from simcluster.scenarios import named as named_scenarios  # noqa: E402

from aicr.catalog import load_catalog  # noqa: E402
from aicr.cncf import load_requirements  # noqa: E402
from aicr.cncf.requirements import Level  # noqa: E402
from aicr.phases import Phase  # noqa: E402

VERSION = load_requirements("1.35").version
SUBMISSION = OUT / f"v{VERSION}" / "aicr-demo"  # the directory vendor.yaml's URL names
LOGS = OUT / "sim-logs"  # the cluster's logs, kept when a part failed (down removes its run)


class PartFailed(Exception):
    """A part of the demo failed; the message is the one line the user sees."""


def say(text: str) -> None:
    """A headline on stderr (bold on a terminal)."""
    line = f"==> {text}"
    print(f"\033[1m{line}\033[0m" if sys.stderr.isatty() else line, file=sys.stderr, flush=True)


class Parts:
    """The demo's parts, in order, each timed; a failure inside one becomes PartFailed."""

    def __init__(self) -> None:
        self.seconds: list[tuple[str, float]] = []

    @contextmanager
    def part(self, name: str, what: str, fix: str) -> Iterator[None]:
        """Time part ``name`` (doing ``what``); any error ends it with one line and ``fix``."""
        say(f"{name}: {what}")
        start = time.monotonic()
        try:
            yield
        except PartFailed as e:
            raise PartFailed(f"{name} failed: {e}") from None
        except Exception as e:  # whatever it was, the user gets one line, never a traceback
            said = " ".join(str(e).split()) or type(e).__name__
            raise PartFailed(f"{name} failed: {said[:400]}; {fix}") from None
        finally:
            self.seconds.append((name, time.monotonic() - start))

    def summary(self) -> str:
        """How long each part took, and all of them."""
        each = ", ".join(f"{n} {s:.1f} s" for n, s in self.seconds)
        return f"{each}; total {sum(s for _, s in self.seconds):.1f} s"


def conformance_checks() -> list[str]:
    """Every check of the catalog's conformance phase."""
    return [c.name for c in load_catalog().ordered if c.phase == Phase.CONFORMANCE]


def build() -> None:
    """The control plane and every component the platform part installs, outside the namespace."""
    scenario = named_scenarios.load(SCENARIO)
    wanted = registry.resolve(",".join([*(c.name for c in scenario.components), *COMPONENTS]))
    core = subprocess.run(
        ["bash", str(REPO / "hack/sim/build.sh")], stdout=subprocess.DEVNULL, check=False
    )
    if core.returncode != 0:
        raise PartFailed(
            f"hack/sim/build.sh exited {core.returncode} (its lines above say why); "
            "fix that and run `make demo` again"
        )
    install.build(wanted)


def platform(cluster: SimCluster) -> None:
    """The gpu-platform scenario, then what every conformance check needs beside it."""
    named_scenarios.run(cluster.sim, named_scenarios.load(SCENARIO))
    cluster.start_components(",".join(COMPONENTS))
    healthy(cluster, MODE)  # the operators' stand-ins in STAND_IN_NS, as the recipe says
    exporters_ready(cluster)


def validate(cluster: SimCluster, checks: list[str]) -> dict[str, Any]:
    """`aicr validate --phase conformance --cncf-submission`; the report it wrote."""
    recipe_file, config_file, report = OUT / "recipe.yaml", OUT / "config.yaml", OUT / "report.json"
    recipe_file.write_text(recipe(checks, MODE, STAND_IN_NS))
    vendor = yaml.safe_load(VENDOR.read_text())
    config_file.write_text(yaml.safe_dump(run_config(cluster, QUICK_PARAMS, vendor)))
    report.unlink(missing_ok=True)
    command = [
        "aicr",
        "validate",
        "-r",
        str(recipe_file),
        "--config",
        str(config_file),
        "--phase",
        "conformance",
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--cncf-submission",
        "--cncf-version",
        VERSION,
        "--evidence-dir",
        str(SUBMISSION),
        "--force",
        "-o",
        str(report),
        "--junit",
        str(OUT / "junit.xml"),
    ]
    print("$ " + " ".join(_shown(a) for a in command), file=sys.stderr, flush=True)
    code = subprocess.run(command, check=False).returncode
    if not report.exists():
        raise PartFailed(
            f"aicr validate exited {code} and wrote no report; its lines above say why"
        )
    raw: dict[str, Any] = json.loads(report.read_text())
    bad = [f"{t['name']} {t['status']}" for t in raw["results"]["tests"] if t["status"] != "passed"]
    if code != 0 or bad:
        raise PartFailed(
            f"aicr validate exited {code}"
            + (f", not passed: {', '.join(bad)}" if bad else "")
            + f"; each check's message and evidence are in {_shown(str(report))}"
        )
    return raw


def judged(raw: dict[str, Any]) -> str:
    """One line on the requirements and the trust class; PartFailed unless every MUST is
    Implemented and the run knows it came from a simulated cluster."""
    aicr = raw["extra"]["aicr"]
    musts = {r.id for r in load_requirements(VERSION).requirements if r.level == Level.MUST}
    statuses = {r["id"]: r["status"] for r in aicr["cncf"]["requirements"]}
    missing = sorted(m for m in musts if statuses.get(m) != "Implemented")
    if missing:
        raise PartFailed(f"MUSTs not Implemented: {', '.join(missing)}; see the table above")
    trust = aicr.get("trust") or {}
    if trust.get("class") != "simulated":
        raise PartFailed(f"the run's trust class is {trust.get('class')!r}, not 'simulated'")
    return f"all {len(musts)} MUSTs Implemented; trust class simulated ({trust['why']})"


def verify() -> None:
    """The shipped verifier on the submission, accepting it as a demo."""
    command = ["aicr", "evidence", "verify", str(SUBMISSION), "--allow-simulated"]
    print("$ " + " ".join(_shown(a) for a in command), file=sys.stderr, flush=True)
    code = subprocess.run(command, check=False).returncode
    if code != 0:
        raise PartFailed(f"aicr evidence verify exited {code}; its lines above name each problem")


def _shown(arg: str) -> str:
    """A path as the user would type it, from the repository's root."""
    return os.path.relpath(arg, REPO) if arg.startswith(str(REPO)) else arg


def run(parts: Parts, sim: Sim, keep: bool) -> None:
    """Every part in order."""
    logs = f"the cluster's logs are kept in {_shown(str(LOGS))}"
    with parts.part(
        "build",
        "the simulated cluster and its components (cached)",
        "run `make sim-build` to see the whole build",
    ):
        build()
    with parts.part(
        "cluster",
        "starting the simulated GPU cluster",
        f"{logs}; `make sim-down` clears a half-started run",
    ):
        sim.up()  # this process is inside its network namespace from here on
    cluster = SimCluster(sim)
    checks = conformance_checks()
    with parts.part(
        "platform",
        f"the {SCENARIO} scenario and {', '.join(COMPONENTS)}",
        f"`make demo ARGS=--keep` leaves the cluster up to look at; {logs}",
    ):
        platform(cluster)
    with parts.part(
        "validate",
        f"aicr validate --phase conformance ({len(checks)} checks)",
        "see the lines above",
    ):
        raw = validate(cluster, checks)
        say(judged(raw))
    with parts.part(
        "verify", f"aicr evidence verify {_shown(str(SUBMISSION))}", "see the lines above"
    ):
        verify()
    say(f"kept in demo-out/: the report, junit.xml and the submission {_shown(str(SUBMISSION))}")


def main() -> int:
    """Run the demo; 0 when every part did its job, 1 with one line when one did not."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    args = parser.parse_args()
    if shutil.which("aicr") is None:
        print(
            "demo: `aicr` is not on PATH: run `make demo` (or `make install` first)",
            file=sys.stderr,
        )
        return 2
    os.environ.setdefault("AICR_SIM_DIR", str(OUT / "sim"))
    OUT.mkdir(exist_ok=True)
    sim, parts = Sim(), Parts()
    code = 0
    shutil.rmtree(LOGS, ignore_errors=True)
    try:
        run(parts, sim, args.keep)
    except PartFailed as e:
        print(f"demo: {e}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        print("demo: interrupted", file=sys.stderr)
        code = 130
    finally:
        if code and sim.logs.is_dir():
            shutil.copytree(sim.logs, LOGS)
        _finish(parts, sim, args.keep)
    return code


def _finish(parts: Parts, sim: Sim, keep: bool) -> None:
    """Bring the cluster down (unless kept) and say how long each part took."""
    if keep and sim.is_up():
        say(
            f"cluster left running: AICR_SIM_DIR={os.environ['AICR_SIM_DIR']} hack/sim/sim "
            "exec -- kubectl get pods -A; stop it with the same AICR_SIM_DIR and make sim-down"
        )
    elif sim.state() is not None:
        try:
            with parts.part("down", "bringing the simulated cluster down", "run `make sim-down`"):
                sim.down()
        except PartFailed as e:  # said, but the demo's verdict is the parts' before it
            print(f"demo: {e}", file=sys.stderr)
    say(f"time per part: {parts.summary()}")


if __name__ == "__main__":
    sys.exit(main())
