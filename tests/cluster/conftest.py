"""Cluster-tier fixtures: a simulated cluster shared by the whole session.

- `sim_cluster` (session): a ready `SimCluster`. Reuses a cluster already started
  with `make sim-up`; otherwise starts one and stops it at the end of the session.
- `cluster` (function): the same object, reset after the test if the test changed
  cluster-wide state (GPU mode, node images, faults, API server stopped).
- `namespace` (function): a run-unique namespace, deleted after the test.
- platform components per module: a module marked
  `pytestmark = pytest.mark.components("prometheus", ...)` gets them installed
  before its first test and removed after its last (those already running,
  e.g. from `make sim-up WITH=...`, are left alone).

Every test under tests/cluster gets the `cluster` marker. When the simulator's
binaries are not built and CI is not "true", these tests are skipped (left out
of the run as one group) and the reason is printed once, in the report header
and in the summary; with CI=true they fail instead,
so a broken simulator cannot let changes land untested. The loopback guard
(tests/netguard.py) is installed for every tier by tests/conftest.py.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "hack" / "sim", ROOT / "tests", Path(__file__).resolve().parent):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from harness import SimCluster  # noqa: E402
from simcluster.cluster import paths  # noqa: E402
from simcluster.cluster.sim import Sim, SimUnavailable  # noqa: E402
from simcluster.net import namespace as netns  # noqa: E402

HERE = Path(__file__).resolve().parent
IN_CI = os.environ.get("CI", "").lower() == "true"

# Under pytest-xdist each worker runs its own simulated cluster in its own run
# folder (and so its own network namespace, ports and processes): two clusters
# side by side share nothing on the host. A folder named by AICR_SIM_DIR is
# left alone, so a cluster started by hand is still reused by a plain run.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER and not os.environ.get("AICR_SIM_DIR"):
    os.environ["AICR_SIM_DIR"] = str(ROOT / f".sim-{_WORKER}")


def _unavailable_reason() -> str | None:
    if Sim().is_up():
        return None
    missing = paths.missing_binaries()
    if missing:
        return (
            f"simulated cluster not built ({', '.join(missing)} missing in {paths.bin_dir()}); "
            "run `make sim-build`"
        )
    why = netns.unavailable()
    if why:
        return f"the simulated cluster's network namespace cannot be made here: {why}"
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    reason = _unavailable_reason()
    if reason is None:
        return "simulated cluster: available"
    if IN_CI:
        return f"simulated cluster: UNAVAILABLE in CI, cluster tests will fail: {reason}"
    return f"simulated cluster: unavailable, cluster tests skipped: {reason}"


_SKIPPED: list[str] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [i for i in items if HERE in Path(str(i.fspath)).resolve().parents]
    for item in ours:
        item.add_marker(pytest.mark.cluster)
    reason = None if IN_CI else _unavailable_reason()
    if reason and ours:
        # Left out as a group, with the reason printed once in the summary, rather
        # than one skip line per test file that would bury it.
        config.hook.pytest_deselected(items=ours)
        items[:] = [i for i in items if i not in ours]
        _SKIPPED[:] = [f"{len(ours)} cluster tests skipped: {reason}"]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _SKIPPED:
        terminalreporter.write_sep("=", "simulated cluster", yellow=True)
        terminalreporter.write_line(line, yellow=True)


def _build_components(session: pytest.Session) -> None:
    """Build the components the collected modules' markers name, before the session enters
    the cluster's network namespace (no build runs inside it); a module whose component
    could not be built then fails at its setup, naming it."""
    from simcluster.components import install, registry

    names = {n for item in session.items for m in item.iter_markers("components") for n in m.args}
    if not names:
        return
    try:
        install.build(registry.resolve(",".join(sorted(names))))
    except install.ComponentError as e:
        print(f"\nsimulated cluster: {e}", file=sys.stderr)


@pytest.fixture(scope="session")
def sim_cluster(request: pytest.FixtureRequest) -> Iterator[SimCluster]:
    _build_components(request.session)
    sim = Sim()
    started = False
    if not sim.is_up():
        try:
            sim.up()
        except SimUnavailable as e:
            if IN_CI:
                pytest.fail(f"simulated cluster unavailable in CI: {e}", pytrace=False)
            pytest.skip(str(e))
        started = True
    else:
        sim.enter()  # this session talks to it from inside its network namespace
    harness = SimCluster(sim)
    user = sim.dir / "users" / str(os.getpid())
    user.parent.mkdir(exist_ok=True)
    user.touch()
    try:
        yield harness
    finally:
        user.unlink(missing_ok=True)
        others = [u for u in user.parent.iterdir() if _pid_alive(int(u.name))]
        if started and not others:
            sim.down()
        else:  # another session still uses it, or it was started by hand
            harness.delete_test_namespaces()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(autouse=True)
def _needs_sim(sim_cluster: SimCluster) -> None:
    """Every test here needs the cluster, even one that uses no cluster fixture."""


@pytest.fixture(scope="module", autouse=True)
def _module_components(request: pytest.FixtureRequest, sim_cluster: SimCluster) -> Iterator[None]:
    """Start the components the module's `components` marker names; stop them after it."""
    marker = request.node.get_closest_marker("components")
    if marker is None:
        yield
        return
    started = sim_cluster.start_components(",".join(marker.args))
    try:
        yield
    finally:
        sim_cluster.stop_components(started)


@pytest.fixture
def cluster(sim_cluster: SimCluster) -> Iterator[SimCluster]:
    yield sim_cluster
    sim_cluster.reset_if_dirty()


@pytest.fixture
def device_plugin(cluster: SimCluster) -> SimCluster:
    """The cluster with its GPUs advertised by the device plugin (switched back if need be)."""
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    return cluster


@pytest.fixture
def namespace(sim_cluster: SimCluster) -> Iterator[str]:
    name = sim_cluster.fresh_namespace()
    yield name
    sim_cluster.delete_namespace(name, wait=False)
