"""The demo of the main job: `aicr validate` against the simulated GPU cluster.

Brings the simulated cluster up (building its binaries on first use), loads the
`gpu-platform` scenario (the recipe's stack, healthy, with a real Prometheus),
passes the addresses `hack/sim/sim config` prints, runs `aicr validate` with live
progress and a live snapshot capture, keeps the report in demo-out/, and brings
the cluster down again, also on failure or Ctrl-C. Everything stays on loopback.

    make demo            # or: python hack/demo.py [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIM = REPO / "hack" / "sim" / "sim"
OUT = REPO / "demo-out"
DEMO = REPO / "hack" / "demo"


def say(text: str) -> None:
    print(f"\033[1m==> {text}\033[0m" if sys.stderr.isatty() else f"==> {text}",
          file=sys.stderr, flush=True)


def sim(*args: str) -> str:
    """Run the simulator's CLI; its progress goes to the terminal, its last line is returned."""
    proc = subprocess.run([str(SIM), *args], stdout=subprocess.PIPE, text=True, check=True)
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    args = parser.parse_args()
    if shutil.which("aicr") is None:
        raise SystemExit("demo: `aicr` is not on PATH (run `make install` or `make demo`)")
    os.environ.setdefault("AICR_SIM_DIR", str(OUT / "sim"))
    OUT.mkdir(exist_ok=True)

    say("starting the simulated GPU cluster (first run builds it from Go modules)")
    kubeconfig = sim("up")
    try:
        sys.path.insert(0, str(SIM.parent))
        from simcluster.cluster.sim import Sim

        say("loading the gpu-platform scenario: GPU Operator, DRA driver, Prometheus, cert-manager")
        sim("scenario", "gpu-platform")
        config = OUT / "config.yaml"
        config.write_text(subprocess.run([str(SIM), "config"], stdout=subprocess.PIPE, text=True,
                                         check=True).stdout)
        # The cluster lives in a network namespace of its own; so do this process and aicr.
        Sim().enter()

        say("aicr validate (snapshot captured live from the cluster)")
        report = OUT / "report.json"
        cmd = ["aicr", "validate", "-r", str(DEMO / "recipe.yaml"), "--kubeconfig", kubeconfig,
               "--config", str(config), "-o", str(report), "--junit", str(OUT / "junit.xml")]
        print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
        code = subprocess.run(cmd, check=False).returncode
        say(f"aicr validate exited {code}; report kept in {report.relative_to(REPO)}")
        return code
    finally:
        if args.keep:
            say(f"cluster left running: talk to it with AICR_SIM_DIR={os.environ['AICR_SIM_DIR']} "
                "hack/sim/sim exec -- kubectl ...; stop it with the same AICR_SIM_DIR and "
                "make sim-down")
        else:
            say("bringing the simulated cluster down")
            sim("down")


if __name__ == "__main__":
    sys.exit(main())
