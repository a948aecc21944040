"""Where a deployed serving stack gets its model: ``params.modelSource``.

vLLM (and Dynamo's vLLM worker) load a model named like ``org/name`` through
``huggingface_hub``: from its cache (``HF_HOME``, the stack's model cache volume),
else downloaded from the hub at ``HF_ENDPOINT`` (default ``https://huggingface.co``);
with ``HF_HUB_OFFLINE=1`` nothing is downloaded and only what is already there
is used. So the source is one of:

- ``hub``: the Hugging Face hub, downloaded at run time (the default);
- ``mirror:URL``: a hub mirror or proxy the cluster reaches (``HF_ENDPOINT=URL``),
  for clusters without internet access;
- ``offline``: nothing is downloaded (``HF_HUB_OFFLINE=1``); the model must be in
  the serving image or already in the model cache volume.

For ``hub`` and ``mirror:URL`` the check asks the source for the model
(``GET URL/api/models/<model>``, the hub's model API) from its own pod before it
deploys anything, so an unreachable source is said at once rather than as a stack
that never becomes ready.
"""

from __future__ import annotations

from dataclasses import dataclass

from aicr.checks.performance.inference_perf.params import MIRROR, OFFLINE, model_source


@dataclass(frozen=True)
class Source:
    """A parsed model source."""

    kind: str  # HUB, MIRROR or OFFLINE
    url: str | None  # the hub or mirror; None offline

    @property
    def env(self) -> list[dict[str, str]]:
        """What the serving containers are given for it (besides HF_HOME)."""
        if self.kind == OFFLINE:
            return [{"name": "HF_HUB_OFFLINE", "value": "1"}]
        if self.kind == MIRROR and self.url:
            return [{"name": "HF_ENDPOINT", "value": self.url}]
        return []

    def model_url(self, model: str) -> str | None:
        """The hub API address that answers for ``model`` (None: nothing to ask)."""
        return f"{self.url}/api/models/{model}" if self.url else None

    def __str__(self) -> str:
        if self.kind == OFFLINE:
            return "offline (HF_HUB_OFFLINE=1: the model must be in the image or the cache)"
        if self.kind == MIRROR:
            return f"mirror {self.url} (HF_ENDPOINT)"
        return f"the Hugging Face hub {self.url}"


def parse(value: str | None) -> Source:
    """``modelSource`` as a Source; ValueError naming the accepted forms (params.py)."""
    return Source(*model_source(value))
