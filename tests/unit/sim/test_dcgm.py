"""The GPU node model's DCGM exporter page: series, labels, allocation, faults."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from simcluster.gpu import dcgm_exporter
from simcluster.gpu.dcgm import METRICS, Claimed, Holder, render
from simcluster.gpu.model import FAULT_ANNOTATION, LOAD_FILE
from simcluster.gpu.smi import gpu_uuid

PROFILE = {"node": "gpu-h100-0", "product": "NVIDIA H100 80GB HBM3", "count": 2,
           "memoryMiB": 81559, "driver": "570.86.16", "faults": []}  # fmt: skip
SAMPLE = re.compile(r"^(\w+)\{(.*)\} (\S+)(?: (\d+))?$")


def samples(page: str) -> list[tuple[str, dict[str, str], float, str | None]]:
    out = []
    for line in page.splitlines():
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, line
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        out.append((m.group(1), labels, float(m.group(3)), m.group(4)))
    return out


def value(page: str, name: str, gpu: str) -> float:
    return next(v for n, lab, v, _ in samples(page) if n == name and lab.get("gpu") == gpu)


def test_every_field_per_gpu_with_help_and_the_real_label_set() -> None:
    page = render(PROFILE, set(), {}, uptime=10)
    assert page.count("# HELP ") == len(METRICS) and page.count("# TYPE ") == len(METRICS)
    got = samples(page)
    assert len(got) == len(METRICS) * 2
    _, labels, _, stamp = got[0]
    assert labels == {"gpu": "0", "UUID": gpu_uuid("gpu-h100-0", 0),
                      "pci_bus_id": "00000000:18:00.0", "device": "nvidia0",
                      "modelName": "NVIDIA H100 80GB HBM3",
                      "Hostname": "gpu-h100-0", "DCGM_FI_DRIVER_VERSION": "570.86.16"}  # fmt: skip
    assert stamp is None


def test_utilization_and_memory_follow_the_allocated_pod() -> None:
    page = render(PROFILE, {1}, {1: Holder("team", "train-0", "main")}, uptime=10)
    assert value(page, "DCGM_FI_DEV_GPU_UTIL", "0") == 0
    assert value(page, "DCGM_FI_DEV_GPU_UTIL", "1") == 100
    used, free = (value(page, f"DCGM_FI_DEV_FB_{k}", "1") for k in ("USED", "FREE"))
    assert used > 0 and used + free == 81559
    assert value(page, "DCGM_FI_DEV_FB_USED", "0") == 0
    held = [lab for n, lab, _, _ in samples(page) if n == "DCGM_FI_DEV_GPU_UTIL" and "pod" in lab]
    assert [(h["gpu"], h["namespace"], h["pod"], h["container"]) for h in held] == [
        ("1", "team", "train-0", "main")]  # fmt: skip


def test_unlabelled_fault_drops_the_gpu_labels_and_stale_stamps_every_sample() -> None:
    page = render({**PROFILE, "faults": ["exporter-unlabelled"]}, set(), {}, uptime=1)
    assert all("gpu" not in lab and "UUID" not in lab for _, lab, _, _ in samples(page))
    stale = render(PROFILE, set(), {}, uptime=1, frozen_at_ms=1_700_000_000_000)
    assert {s for _, _, _, s in samples(stale)} == {"1700000000000"}


NODE = PROFILE["node"]
CLAIM = {"claimName": "gpu-load-gpu-x7k2p", "claimNamespace": "team",
         "claimResources": [{"driverName": "gpu.nvidia.com", "poolName": NODE,
                             "deviceName": "gpu-1"}]}  # fmt: skip
SLICE = {"spec": {"driver": "gpu.nvidia.com", "pool": {"name": NODE}, "devices": [
    {"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"},
                                        "uuid": {"string": gpu_uuid(NODE, i)}}}
    for i in range(2)]}}  # fmt: skip


def _pod_folders(tmp_path: Path) -> list[dict[str, object]]:
    """One pod: `main` runs with GPU 0 (device plugin), `dra` with GPU 1 (a claim), `done`
    has ended (its GPU is free), `side` runs without a GPU."""
    pod = {
        "metadata": {"namespace": "team", "name": "p", "uid": "u1"},
        "spec": {"containers": [{"name": n} for n in ("main", "dra", "side", "done")]},
    }
    plugin = {"devices": [{"resourceName": "nvidia.com/gpu", "deviceIds": [gpu_uuid(NODE, 0)]}]}
    root = tmp_path / "team_p_u1"
    for c, gpus, resources, running in (
        ("main", [0], plugin, True),
        ("dra", [1], {"dynamicResources": [CLAIM]}, True),
        ("side", [], {}, True),
        ("done", [1], plugin, False),
    ):
        (root / c).mkdir(parents=True)
        (root / c / "spec-0.json").write_text(json.dumps({"gpus": [9]}))
        (root / c / "spec-1.json").write_text(json.dumps({"gpus": gpus, "podResources": resources}))
        if running:
            (root / f"{c}.proc.json").write_text("{}")
        (root / c / LOAD_FILE).write_text(f"{LOAD_ENDS}\n")  # each ran dcgmproftester12
    return [pod]  # fmt: skip


LOAD_ENDS = 1_700_000_100


def test_busy_gpus_are_the_running_containers_latest_gpus_while_they_load(tmp_path: Path) -> None:
    specs = dcgm_exporter.running_specs(tmp_path, _pod_folders(tmp_path))
    assert sorted(name for _, name, _ in specs) == ["dra", "main", "side"]
    assert dcgm_exporter.busy(specs, now=LOAD_ENDS - 1) == {0, 1}
    # the load has ended: the GPUs are still held, and idle
    assert dcgm_exporter.busy(specs, now=LOAD_ENDS) == set()


def test_a_held_gpu_that_never_ran_a_load_is_idle(tmp_path: Path) -> None:
    pods = _pod_folders(tmp_path)
    for c in ("main", "dra"):
        (tmp_path / "team_p_u1" / c / LOAD_FILE).unlink()
    specs = dcgm_exporter.running_specs(tmp_path, pods)
    assert [s[dcgm_exporter.LOAD_UNTIL] for _, _, s in specs] == [0.0, 0.0, LOAD_ENDS]
    assert dcgm_exporter.busy(specs, now=0) == set()


def test_device_plugin_gpus_are_mapped_and_claims_only_with_dra(tmp_path: Path) -> None:
    specs = dcgm_exporter.running_specs(tmp_path, _pod_folders(tmp_path))
    main = Holder("team", "p", "main")
    assert dcgm_exporter.holders(specs, NODE, 2, None) == {0: main}
    claimed = Claimed("gpu-load-gpu-x7k2p", "team", "gpu.nvidia.com", NODE, "gpu-1")
    uuids = dcgm_exporter.slice_uuids([SLICE])
    assert dcgm_exporter.holders(specs, NODE, 2, uuids) == {
        0: main, 1: Holder("team", "p", "dra", claimed)}  # fmt: skip
    # a device its slice publishes no uuid for is not mapped, as dcgm-exporter logs "No UUID"
    assert dcgm_exporter.holders(specs, NODE, 2, {}) == {0: main}


def test_a_claimed_gpu_carries_the_dra_labels_and_busy_needs_no_mapping() -> None:
    claimed = Claimed("one-gpu", "team", "gpu.nvidia.com", NODE, "gpu-1")
    page = render(PROFILE, {0, 1}, {1: Holder("team", "p", "main", claimed)}, uptime=1)
    util = {lab["gpu"]: (lab, v) for n, lab, v, _ in samples(page) if n == "DCGM_FI_DEV_GPU_UTIL"}
    assert util["0"][1] == util["1"][1] == 100  # both in use; GPU 0 attributed to nobody
    assert "pod" not in util["0"][0]
    assert {k: v for k, v in util["1"][0].items() if k in (
        "namespace", "pod", "container") or k.startswith("dra_")} == {
        "container": "main", "namespace": "team", "pod": "p", "dra_claim_name": "one-gpu",
        "dra_claim_namespace": "team", "dra_driver_name": "gpu.nvidia.com",
        "dra_pool_name": NODE, "dra_device_name": "gpu-1"}  # fmt: skip


class _Api:
    def __init__(self, faults: list[str]) -> None:
        self.faults = faults
        self.slice_lists = 0

    def read_node(self, name: str, **_: object) -> dict[str, object]:
        labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "2",
                  "nvidia.com/gpu.memory": "81559"}  # fmt: skip
        return {"metadata": {"name": name, "labels": labels,
                             "annotations": {FAULT_ANNOTATION: ",".join(self.faults)}}}  # fmt: skip

    def list_pod_for_all_namespaces(self, **_: object) -> SimpleNamespace:
        return SimpleNamespace(items=[])

    def list_resource_slice(self, **_: object) -> SimpleNamespace:
        self.slice_lists += 1
        return SimpleNamespace(items=[])

    def sanitize_for_serialization(self, obj: object) -> object:
        return obj


def _fake_api(monkeypatch: pytest.MonkeyPatch, faults: list[str]) -> _Api:
    api = _Api(faults)
    monkeypatch.setattr(dcgm_exporter.config, "load_incluster_config", lambda: None)
    monkeypatch.setattr(dcgm_exporter.client, "ApiClient", lambda: api)
    monkeypatch.setattr(dcgm_exporter.client, "CoreV1Api", lambda _: api)
    monkeypatch.setattr(dcgm_exporter.client, "ResourceV1Api", lambda _: api)
    return api


@pytest.mark.parametrize(("dra", "faults", "lists"), [
    (False, [], 0), (True, [], 1), (True, ["exporter-no-dra"], 0)],
    ids=["flag-off", "flag-on", "no-dra-fault"])  # fmt: skip
def test_slices_are_read_only_with_the_dra_flag_and_without_the_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dra: bool, faults: list[str], lists: int
) -> None:
    api = _fake_api(monkeypatch, faults)
    dcgm_exporter.Exporter(tmp_path, "gpu-h100-0", "127.0.0.1:9400", dra).refresh()
    assert api.slice_lists == lists


def test_the_dra_flag_defaults_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[bool] = []

    class Stop(Exception):
        pass

    def exporter(*args: object) -> SimpleNamespace:
        made.append(bool(args[3]))
        raise Stop

    monkeypatch.setattr(dcgm_exporter, "Exporter", exporter)
    argv = ["--sim-dir", "/x", "--node", "n", "--address", "127.0.0.1:9400"]
    for env in ("true", "1", "false", ""):
        monkeypatch.setenv("KUBERNETES_ENABLE_DRA", env)
        with pytest.raises(Stop):
            dcgm_exporter.main(argv)
    with pytest.raises(Stop):
        dcgm_exporter.main([*argv, "--kubernetes-enable-dra"])
    assert made == [True, True, False, False, True]


def test_a_frozen_page_is_stamped_after_the_next_scrapes_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prometheus marks a series stale at the first scrape with an explicit timestamp unless
    that timestamp is later than the scrape's start: the freeze is stamped ahead."""
    api = _fake_api(monkeypatch, [])
    monkeypatch.setattr(dcgm_exporter.time, "time", lambda: 1000.0)
    exporter = dcgm_exporter.Exporter(tmp_path, "gpu-h100-0", "127.0.0.1:9400", interval_ms=0)
    exporter.refresh()
    assert all(s[3] is None for s in samples(exporter.metrics().decode()))  # live: unstamped
    api.faults = ["exporter-stale"]
    exporter.refresh()
    stamps = {s[3] for s in samples(exporter.metrics().decode())}
    assert stamps == {str(1000000 + dcgm_exporter.STALE_LEAD_MS)}
    assert dcgm_exporter.STALE_LEAD_MS >= 3000  # several 1 s scrape intervals


def test_the_exporter_collects_once_per_interval_and_serves_the_last_page_between(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = _fake_api(monkeypatch, [])
    clock = [100.0]
    monkeypatch.setattr(dcgm_exporter.time, "monotonic", lambda: clock[0])
    exporter = dcgm_exporter.Exporter(tmp_path, "gpu-h100-0", "127.0.0.1:9400", interval_ms=2000)
    exporter.refresh()
    first = exporter.metrics()
    api.faults = ["exporter-unlabelled"]  # what the next collection reads differently
    clock[0] += 1.9
    assert exporter.refresh() == ["exporter-unlabelled"] and exporter.metrics() == first
    clock[0] += 0.1
    exporter.refresh()
    assert exporter.metrics() != first and b'UUID="' not in exporter.metrics()


@pytest.mark.parametrize(
    ("argv", "env", "ms"),
    [([], None, 30000), ([], "1500", 1500), (["-c", "250"], "1500", 250),
     (["--collect-interval", "750"], None, 750)],
    ids=["default", "env", "flag-beats-env", "long-flag"],
)  # fmt: skip
def test_the_interval_is_read_as_dcgm_exporter_reads_it(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], env: str | None, ms: int
) -> None:
    made: list[object] = []

    class Stop(Exception):
        pass

    def exporter(*args: object) -> SimpleNamespace:
        made.append(args[4])
        raise Stop

    monkeypatch.setattr(dcgm_exporter, "Exporter", exporter)
    if env is None:
        monkeypatch.delenv("DCGM_EXPORTER_INTERVAL", raising=False)
    else:
        monkeypatch.setenv("DCGM_EXPORTER_INTERVAL", env)
    with pytest.raises(Stop):
        dcgm_exporter.main(["--sim-dir", "/x", "--node", "n", *argv])
    assert made == [ms]


def test_the_load_generator_refuses_to_run_as_another_user_than_root(tmp_path: Path) -> None:
    """What DCGM's dcgmproftester does without root: no load, exit 227 (-29)."""
    import subprocess
    import sys

    from simcluster.gpu.model import PROFTESTER, write_tools

    tools = write_tools(tmp_path, None, sys.executable, uid=1000)
    out = subprocess.run([str(tools / PROFTESTER), "--no-dcgm-validation", "-t", "1004",
                          "-d", "5"], capture_output=True, text=True)  # fmt: skip
    assert (out.returncode, out.stderr, out.stdout) == (
        227,
        "CacheManager Init Failed. Error: -29\n",
        "",
    )
    assert not (tmp_path / LOAD_FILE).exists()


@pytest.mark.parametrize(
    ("pod", "container", "uid"),
    [({}, {}, 0), ({"securityContext": {"runAsUser": 65534}}, {}, 65534),
     ({"securityContext": {"runAsUser": 65534}}, {"securityContext": {"runAsUser": 0}}, 0)],
    ids=["image-default", "pod", "container-wins"],
)  # fmt: skip
def test_the_user_a_container_runs_as(pod: dict[str, object], container: dict[str, object],
                                      uid: int) -> None:  # fmt: skip
    from simcluster.gpu.model import run_as_user

    assert run_as_user({"spec": pod}, container) == uid


def test_the_load_generator_records_when_its_load_ends(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    from simcluster.gpu.model import PROFTESTER, write_tools

    tools = write_tools(tmp_path, None, sys.executable)
    before = time.time()
    out = subprocess.run([str(tools / PROFTESTER), "--no-dcgm-validation", "-t", "1004",
                          "-d", "0"], capture_output=True, text=True, check=True)  # fmt: skip
    assert "loading the allocated GPUs for 0s" in out.stdout
    ends = dcgm_exporter.load_until(tmp_path / LOAD_FILE)
    assert int(before) <= ends <= time.time() + 1


def test_a_load_killed_before_its_end_records_that_it_ended_then(tmp_path: Path) -> None:
    """A GPU whose load process is stopped reads idle at once, as a real one does."""
    import signal
    import subprocess
    import sys
    import time

    from simcluster.gpu.model import PROFTESTER, write_tools

    tools = write_tools(tmp_path, None, sys.executable)
    load = subprocess.Popen([str(tools / PROFTESTER), "-d", "300"], stdout=subprocess.PIPE)
    deadline, ends = time.monotonic() + 10, 0
    while ends < time.time() + 200 and time.monotonic() < deadline:  # written after the trap
        time.sleep(0.05)
        ends = dcgm_exporter.load_until(tmp_path / LOAD_FILE)
    assert ends > time.time() + 200
    load.send_signal(signal.SIGTERM)
    load.communicate(timeout=10)  # its sleep is gone too: nothing holds the pipe
    assert load.returncode == 143
    assert dcgm_exporter.load_until(tmp_path / LOAD_FILE) <= time.time()
