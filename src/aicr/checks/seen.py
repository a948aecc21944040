"""What a check saw of the cluster, for the run's report: node names, its pods' images.

A check names nodes in free text (step titles, "free GPUs: gpu-0 8"). The report
also carries them as data (the test's ``extra.nodes``), so a CNCF submission can
redact them wherever they stand, even when the snapshot came from another cluster.
The report also says which image each of the check's own pods ran, by the digest
the kubelet reported (the test's ``extra.images``, ``aicr.kube.image_ids``).
``SeenRecorder`` wraps the check's ``Kube`` and notes every Node it returns, the
node of every Pod it returns, and the container statuses of every Pod it returns
that is the check's own (``owns``); it changes nothing it passes through. A pod
seen several times keeps its latest status that names an image id.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from aicr.kube.dicts import Kube, Obj
from aicr.result import WORKLOAD, ImageRun


def _kind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return kwargs["kind"] if "kind" in kwargs else (args[0] if args else None)


class SeenRecorder:
    """``Kube`` that delegates every call and remembers the nodes and own pods' images it saw.

    Each call is forwarded with exactly the arguments it was given, so a wrapped
    client sees the same calls as an unwrapped one.
    """

    def __init__(self, inner: Kube, owns: Callable[[Obj], bool] = lambda pod: False) -> None:
        self.inner = inner
        self.owns = owns
        self.names: set[str] = set()
        self._images: dict[tuple[str, str], ImageRun] = {}  # (pod uid or name, container)

    @property
    def images(self) -> builtins.list[ImageRun]:
        """What each container of the check's own pods ran, in the order first seen."""
        return list(self._images.values())

    def _note(self, kind: Any, objs: Iterable[Any]) -> None:
        for obj in objs:
            if not isinstance(obj, dict):
                continue
            if obj.get("kind", kind) == "Node":
                name = (obj.get("metadata") or {}).get("name")
            elif obj.get("kind", kind) == "Pod":
                name = (obj.get("spec") or {}).get("nodeName")
                if self.owns(obj):
                    self._note_images(obj)
            else:
                continue
            if isinstance(name, str) and name:
                self.names.add(name)

    def _note_images(self, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid") or meta.get("name") or "")
        for run in ImageRun.of(pod, WORKLOAD):
            key = (uid, run.container)
            if key not in self._images or run.image_id:
                self._images[key] = run

    def get(self, *args: Any, **kwargs: Any) -> Obj | None:
        """The inner ``get``; a Node or Pod found is noted."""
        obj = self.inner.get(*args, **kwargs)
        self._note(_kind(args, kwargs), [obj])
        return obj

    def list(self, *args: Any, **kwargs: Any) -> builtins.list[Obj]:
        """The inner ``list``; its Nodes and Pods are noted."""
        items = self.inner.list(*args, **kwargs)
        self._note(_kind(args, kwargs), items)
        return items

    def listing(self, *args: Any, **kwargs: Any) -> tuple[builtins.list[Obj], str]:
        """The inner ``listing``; its Nodes and Pods are noted."""
        items, version = self.inner.listing(*args, **kwargs)
        self._note(_kind(args, kwargs), items)
        return items, version

    def watch(self, *args: Any, **kwargs: Any) -> Iterator[Obj]:
        """The inner ``watch``; each event's Node or Pod is noted as it arrives."""
        return self._noting(_kind(args, kwargs), self.inner.watch(*args, **kwargs))

    def _noting(self, kind: Any, events: Iterator[Obj]) -> Iterator[Obj]:
        for event in events:
            self._note(kind, [event.get("object")])
            yield event

    def create(self, *args: Any, **kwargs: Any) -> Obj:
        """The inner ``create``."""
        return self.inner.create(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> None:
        """The inner ``delete``."""
        self.inner.delete(*args, **kwargs)

    def logs(self, *args: Any, **kwargs: Any) -> str:
        """The inner ``logs``."""
        return self.inner.logs(*args, **kwargs)

    def served(self, *args: Any, **kwargs: Any) -> builtins.list[str] | None:
        """The inner ``served``."""
        return self.inner.served(*args, **kwargs)

    def groups(self) -> dict[str, builtins.list[str]]:
        """The inner ``groups``."""
        return self.inner.groups()

    def pod_metric(self, *args: Any, **kwargs: Any) -> Obj | None:
        """The inner ``pod_metric``."""
        return self.inner.pod_metric(*args, **kwargs)
