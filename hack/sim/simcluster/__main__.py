"""CLI of the simulated cluster: `python -m simcluster up|down|status|mode`."""

from __future__ import annotations

import argparse
import sys
import time

from simcluster.cluster import Sim, SimUnavailable


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one action; the last line printed is the result."""
    parser = argparse.ArgumentParser(prog="simcluster")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("up", help="start the cluster; print the kubeconfig path last")
    sub.add_parser("down", help="stop exactly what `up` started and remove the run folder")
    sub.add_parser("status", help="say whether the cluster runs")
    mode = sub.add_parser("mode", help="switch the GPU allocation mode")
    mode.add_argument("mode", choices=["device-plugin", "dra", "dual"])
    args = parser.parse_args(argv)
    sim = Sim()
    if args.cmd == "up":
        start = time.monotonic()
        try:
            path = sim.up()
        except SimUnavailable as e:
            print(f"sim-up: {e}", file=sys.stderr)
            return 3
        print(f"sim-up: ready in {time.monotonic() - start:.1f} s", file=sys.stderr)
        print(path)
    elif args.cmd == "down":
        sim.down()
        print("sim-down: stopped and removed", sim.dir, file=sys.stderr)
    elif args.cmd == "status":
        print("up" if sim.is_up() else "down")
        return 0 if sim.is_up() else 1
    elif args.cmd == "mode":
        from simcluster import scenario

        scenario.set_mode(sim, args.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
