"""CLI of the simulated cluster: `python -m simcluster VERB ...` (argument parsing only).

Exit codes: 0 done; 1 `status` says down; 2 bad input (an unknown fault,
node, component, platform or scenario, an unreadable manifest file, `up
--platform` of another profile than the running one's: one line on stderr,
nothing created; `recipe`: an unreadable recipe or values file, an unknown
field); 3 the cluster cannot run or is not running, or a component
or scenario did not become ready.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from simcluster.cluster.sim import Sim, SimUnavailable
from simcluster.faults import registry
from simcluster.faults.registry import FaultInputError
from simcluster.nodes import platforms

T = TypeVar("T")
EXIT_BAD_INPUT = 2
EXIT_UNAVAILABLE = 3


def up(sim: Sim, args: argparse.Namespace) -> int:
    """Start the cluster (its nodes as `--platform` gives them, and `--with` components);
    the kubeconfig path is the last line."""
    from simcluster.components import install, registry

    start = time.monotonic()
    try:
        wanted = registry.resolve(args.with_) if args.with_ else []
        platforms.load(args.platform)
    except (registry.ComponentInputError, platforms.PlatformError) as e:
        return _bad("sim up", str(e))
    try:
        install.build(wanted)  # here, outside the cluster's network namespace
        path = sim.up(platform=args.platform)
    except platforms.PlatformError as e:
        return _bad("sim up", str(e))
    except install.ComponentError as e:
        print(f"sim-up: {e}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except SimUnavailable as e:
        print(f"sim-up: {e}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    print(f"sim-up: ready in {time.monotonic() - start:.1f} s", file=sys.stderr)
    if wanted:
        step = time.monotonic()
        try:
            install.install(sim, wanted)
        except install.ComponentError as e:
            print(f"sim-up: {e}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        names = ", ".join(c.name for c in wanted)
        print(f"sim-up: {names} ready in {time.monotonic() - step:.1f} s", file=sys.stderr)
    print(path)
    return 0


def platform_(sim: Sim, args: argparse.Namespace) -> int:
    """`platform list`: every platform profile `sim up --platform` takes, and what it gives;
    `platform pools`: the running cluster's node pools as its provider's CLI lists them."""
    if args.verb == "pools":
        import json

        if not _running(sim, "sim platform pools"):
            return EXIT_UNAVAILABLE
        running = sim.platform
        if running.pool_list is None:
            return _bad(
                "sim platform pools",
                f"platform {running.name} has no pool listing (only "
                + ", ".join(n for n in platforms.names() if platforms.load(n).pool_list)
                + ")",
            )
        print(json.dumps(platforms.pools(running), indent=2))
        return 0
    if args.verb != "list":
        return _bad("sim platform", f"unknown verb {args.verb!r}: `hack/sim/sim platform list`")
    found = [platforms.load(n) for n in platforms.names()]
    width = max(len(p.name) for p in found)
    for p in found:
        default = " (default)" if p.name == platforms.DEFAULT else ""
        print(f"{p.name:<{width}}  driver {p.driver:<13}  {p.description}{default}")
    return 0


def down(sim: Sim, args: argparse.Namespace) -> int:
    """Stop what `up` started and remove the run folder (faults go with it)."""
    sim.down()
    print("sim-down: stopped and removed", sim.dir, file=sys.stderr)
    return 0


def status(sim: Sim, args: argparse.Namespace) -> int:
    """`up` or `down`, then one line per component (ready or what it waits for), per fault."""
    running = sim.is_up()
    print("up" if running else "down")
    if not running:
        return 1
    sim.enter()
    from simcluster.components import install

    for c in install.installed(sim):
        left = install.waiting_for(sim, c)
        print(
            f"component {c.name} {c.version}: "
            + ("ready" if not left else f"waiting for {', '.join(left)}")
        )
    for entry in registry.active(sim):
        print(f"fault {entry['fault']}" + (f" on {entry['node']}" if entry["node"] else ""))
    return 0


def config(sim: Sim, args: argparse.Namespace) -> int:
    """Print a ValidateConfig with the addresses the running components publish."""
    import yaml

    from simcluster.components import install

    if not _running(sim, "sim config"):
        return EXIT_UNAVAILABLE
    print("# aicr validate --config FILE: addresses the simulated cluster's components publish")
    print(yaml.safe_dump(install.validate_config(sim), sort_keys=False), end="")
    return 0


def scenario_(sim: Sim, args: argparse.Namespace) -> int:
    """`scenario list`, or load scenario NAME and wait until it is ready."""
    from simcluster.components import install
    from simcluster.scenarios import named

    if args.name == "list":
        for n in named.names():
            print(f"{n}  {named.load(n).description}")
        return 0
    return _load_and_run(
        sim,
        "sim scenario",
        args.name,
        lambda: named.load(args.name),
        lambda s: named.run(sim, s),
        lambda s: install.build(s.components),
    )


def apply_(sim: Sim, args: argparse.Namespace) -> int:
    """Apply a manifest file as scenarios are applied, and wait for its workloads."""
    from pathlib import Path

    from simcluster.scenarios import named

    return _load_and_run(
        sim,
        "sim apply",
        args.file,
        lambda: named.read_manifests(Path(args.file)),
        lambda docs: named.apply_and_wait(sim, docs),
    )


def recipe_(sim: Sim, args: argparse.Namespace) -> int:
    """Install what the sim plays of a hydrated recipe, configured from its values; say per
    component what it played and what it could not, then wait until ready."""
    from pathlib import Path

    from simcluster.scenarios import recipe

    def load() -> recipe.Plan:
        data = Path(args.data) if args.data is not None else Path(args.file).parent
        plan = recipe.load(Path(args.file), data)
        for line in plan.lines():
            print(line)
        return plan

    return _load_and_run(
        sim, "sim recipe", args.file, load, lambda p: recipe.run(sim, p), recipe.build
    )


def _load_and_run(
    sim: Sim,
    verb: str,
    subject: str,
    load: Callable[[], T],
    run: Callable[[T], None],
    build: Callable[[T], None] | None = None,
) -> int:
    """Read the input (exit 2 when it is wrong, before any cluster work), `build` what it
    needs while still outside the cluster's network namespace, then run it inside (exit 3
    when a build fails or it does not become ready)."""
    from simcluster.components import install
    from simcluster.scenarios import named

    try:
        loaded = load()
    except named.ScenarioError as e:
        return _bad(verb, str(e))
    start = time.monotonic()
    try:
        if build is not None and sim.is_up():
            build(loaded)
        if not _running(sim, verb):
            return EXIT_UNAVAILABLE
        run(loaded)
    except (install.ComponentError, TimeoutError) as e:
        print(f"{verb}: {subject}: {e}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    print(f"{subject}: ready in {time.monotonic() - start:.1f} s")
    return 0


def mode(sim: Sim, args: argparse.Namespace) -> int:
    """Switch the GPU allocation mode."""
    from simcluster.scenarios import contents as scenario

    if not _running(sim, "sim mode"):
        return EXIT_UNAVAILABLE
    scenario.set_mode(sim, args.mode)
    return 0


def fault(sim: Sim, args: argparse.Namespace) -> int:
    """`fault list`, or apply fault NAME on NODE (default: its whole scope)."""
    if args.name == "list":
        if args.node is not None:
            return _bad("sim fault", "`fault list` takes no node")
        width = max(len(f.name) for f in registry.FAULTS)
        for f in registry.FAULTS:
            print(f"{f.name:<{width}}  {f.scope:<8}  {f.models}")
        return 0
    try:
        registry.lookup(args.name)
        if not _running(sim, "sim fault"):
            return EXIT_UNAVAILABLE
        where = registry.apply(sim, args.name, args.node)
    except FaultInputError as e:
        return _bad("sim fault", str(e))
    print(f"{args.name}: applied" + _on(where))
    return 0


def heal(sim: Sim, args: argparse.Namespace) -> int:
    """Heal every applied fault, or those on NODE."""
    if not _running(sim, "sim heal"):
        return EXIT_UNAVAILABLE
    try:
        healed = registry.heal(sim, args.node)
    except FaultInputError as e:
        return _bad("sim heal", str(e))
    if not healed:
        print("no fault to heal" + (f" on {args.node}" if args.node else ""))
    for entry in healed:
        print(f"{entry['fault']}: healed" + _on([entry["node"]]))
    return 0


def exec_(sim: Sim, args: argparse.Namespace) -> int:
    """Run a command inside the cluster's network namespace, KUBECONFIG set to its kubeconfig."""
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        return _bad("sim exec", "no command given: `hack/sim/sim exec -- CMD [ARGS...]`")
    if not _running(sim, "sim exec"):
        return EXIT_UNAVAILABLE
    env = {**os.environ, "KUBECONFIG": str(sim.kubeconfig)}
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        return _bad("sim exec", f"cannot run {argv[0]!r}: {e.strerror}")


def _on(nodes: list[str | None]) -> str:
    named = [n for n in nodes if n]
    return f" on {', '.join(named)}" if named else ""


def _running(sim: Sim, verb: str) -> bool:
    """True when the cluster runs; this process is then inside its network namespace."""
    if sim.is_up():
        sim.enter()
        return True
    print(
        f"{verb}: no simulated cluster runs in {sim.dir}; start it with `hack/sim/sim up`",
        file=sys.stderr,
    )
    return False


def _bad(verb: str, message: str) -> int:
    print(f"{verb}: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def parser() -> argparse.ArgumentParser:
    """The command line: one sub-command per verb."""
    p = argparse.ArgumentParser(prog="hack/sim/sim")
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="start the cluster; print the kubeconfig path last")
    u.add_argument(
        "--with",
        dest="with_",
        metavar="NAME[,NAME...]",
        help="also run these platform components (`all`: every one)",
    )
    u.add_argument(
        "--platform",
        default=platforms.DEFAULT,
        metavar="NAME",
        help=f"the provider whose node conventions the nodes follow (default "
        f"{platforms.DEFAULT}; `platform list`)",
    )
    u.set_defaults(run=up)
    pl = sub.add_parser(
        "platform",
        help="`platform list`: the profiles `up --platform` takes; `platform pools`: the "
        "running cluster's node pools as its provider's CLI lists them",
    )
    pl.add_argument("verb", choices=["list", "pools"])
    pl.set_defaults(run=platform_)
    sub.add_parser("down", help="stop exactly what `up` started, remove the run").set_defaults(
        run=down
    )
    sub.add_parser(
        "status", help="say whether the cluster runs, its components and faults"
    ).set_defaults(run=status)
    sub.add_parser(
        "config", help="print a ValidateConfig with the components' addresses"
    ).set_defaults(run=config)
    sc = sub.add_parser("scenario", help="`scenario list`, or load scenario NAME and wait")
    sc.add_argument("name", help="a scenario name, or `list`")
    sc.set_defaults(run=scenario_)
    a = sub.add_parser("apply", help="apply a manifest file and wait for its workloads")
    a.add_argument("file")
    a.set_defaults(run=apply_)
    r = sub.add_parser(
        "recipe",
        help="install what the sim plays of a hydrated recipe, from its values; wait",
    )
    r.add_argument("file", help="a hydrated recipe (kind RecipeResult)")
    r.add_argument(
        "--data",
        metavar="DIR",
        help="where its valuesFile paths are (AICR's --data layout; default: the recipe's folder)",
    )
    r.set_defaults(run=recipe_)
    m = sub.add_parser("mode", help="switch the GPU allocation mode")
    m.add_argument("mode", choices=["device-plugin", "dra", "dual"])
    m.set_defaults(run=mode)
    f = sub.add_parser("fault", help="`fault list`, or apply a fault: `fault NAME [NODE]`")
    f.add_argument("name", help="a fault name, or `list`")
    f.add_argument("node", nargs="?", help="the node (default: every node of the fault's scope)")
    f.set_defaults(run=fault)
    h = sub.add_parser("heal", help="remove applied faults (all, or those on NODE)")
    h.add_argument("node", nargs="?")
    h.set_defaults(run=heal)
    e = sub.add_parser("exec", help="run `-- CMD [ARGS...]` inside the cluster's network namespace")
    e.add_argument("argv", nargs=argparse.REMAINDER)
    e.set_defaults(run=exec_)
    return p


def main(argv: list[str] | None = None, sim: Sim | None = None) -> int:
    """Parse the command line and run one verb."""
    args = parser().parse_args(argv)
    code: int = args.run(sim or Sim(), args)
    return code


if __name__ == "__main__":
    sys.exit(main())
