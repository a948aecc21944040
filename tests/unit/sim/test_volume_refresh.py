"""ConfigMap and Secret volume files are replaced all at once, never rewritten in place."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from simcluster.runtime import volume_writer
from simcluster.runtime.pod_files import PodFiles
from simcluster.runtime.volumes import PodMaterialiser

BIG = {"a": "A" * 2_000_000, "b": "B" * 1_000_000}


class FakeCore:
    """A ConfigMap whose `data` the test changes."""

    def __init__(self, data: dict[str, str]) -> None:
        self.data = data

    def read_namespaced_config_map(self, name: str, ns: str) -> Any:
        return SimpleNamespace(data=dict(self.data), binary_data=None)


def materialiser(tmp_path: Path, core: FakeCore, mode: int | None = None) -> PodMaterialiser:
    vol: dict[str, Any] = {"name": "cfg", "configMap": {"name": "cm"}}
    if mode is not None:
        vol["configMap"]["defaultMode"] = mode
    pod = {"metadata": {"namespace": "ns", "name": "p"}, "spec": {"volumes": [vol]}}
    return PodMaterialiser(core, pod, PodFiles(tmp_path / "pod"))  # type: ignore[arg-type]


def test_a_reader_never_sees_a_half_written_file(tmp_path: Path) -> None:
    core = FakeCore({"config": BIG["a"]})
    mat = materialiser(tmp_path, core)
    folders = mat.materialise()
    path = folders["cfg"] / "config"
    seen: set[int] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(len(path.read_text()))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(40):
            core.data = {"config": BIG["b" if n % 2 == 0 else "a"]}
            assert mat.refresh(folders)
    finally:
        done.set()
        reader.join()
    assert seen == {len(BIG["a"]), len(BIG["b"])}


def test_the_folder_shows_exactly_the_current_keys_with_their_mode(tmp_path: Path) -> None:
    core = FakeCore({"one": "1", "two": "2"})
    mat = materialiser(tmp_path, core, mode=0o600)
    folders = mat.materialise()
    folder = folders["cfg"]
    assert not mat.refresh(folders)  # unchanged: nothing rewritten
    core.data = {"two": "22", "three": "3"}
    assert mat.refresh(folders)
    shown = sorted(p.name for p in folder.iterdir() if not p.name.startswith(".."))
    assert shown == ["three", "two"]
    assert (folder / "two").read_text() == "22"
    assert ((folder / "two").stat().st_mode & 0o777) == 0o600
    assert volume_writer.current(folder) == {"three": b"3", "two": b"22"}
    stamped = [p for p in folder.iterdir() if p.name.startswith("..") and p.name != "..data"]
    assert len(stamped) == 1  # the previous set is gone
