"""The pinned workload images (``images.yaml``) and the registry rewrite for mirrors.

Checks ask here for the images their workloads run, and ``aicr images list``
reads the same file, so what a run pulls and what a mirror must hold cannot
disagree. A mirror is named by ``AICR_VALIDATOR_IMAGE_REGISTRY`` (wins) or the
config's ``spec.validate.images.registry``; it replaces each reference's
registry host and first path segment (the org: ``nvcr.io/nvidia/cuda:12`` on
``m.local/ai`` is ``m.local/ai/cuda:12``) and keeps the rest, as AICR rewrites its
validator images, so one mirror serves both. Which checks run an image, and the
param that replaces it for each, is in the checks' catalog entries (``images``).
Check pods import this module, so it imports nothing beyond the file models.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from aicr import defaults
from aicr.catalog import Catalog, load_catalog
from aicr.config import REGISTRY_EXPECTED, REGISTRY_PATTERN
from aicr.document import Document, refuse_duplicates, validate
from aicr.errors import InputError, Problem
from aicr.yaml_io import parse_package_file

if TYPE_CHECKING:
    from aicr.config import ValidateConfig

_HOST = re.compile(r"^[a-z0-9.-]+\.[a-z]+(:[0-9]+)?$|^localhost(:[0-9]+)?$")


class WorkloadImage(Document):
    """One pinned image a check's workloads run."""

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", description="What checks use.")
    image: str = Field(description="Full reference: registry host, path, fixed tag or digest.")
    description: str

    @field_validator("image")
    @classmethod
    def _pinned(cls, ref: str) -> str:
        host, _, rest = ref.partition("/")
        if not rest or not _HOST.match(host):
            raise ValueError(f"{ref!r} must start with a registry host (e.g. docker.io/library/)")
        tag = rest.rsplit("/", 1)[-1].partition(":")[2]
        if "@sha256:" not in rest and (not tag or tag == "latest"):
            raise ValueError(f"{ref!r} must carry a fixed tag or digest")
        return ref


class WorkloadImages(Document):
    """The whole ``images.yaml`` document."""

    api_version: Literal["aicr.nvidia.com/v1alpha1"]
    kind: Literal["WorkloadImages"]
    images: list[WorkloadImage]

    @field_validator("images")
    @classmethod
    def _unique(cls, images: list[WorkloadImage]) -> list[WorkloadImage]:
        refuse_duplicates([i.name for i in images], "image names")
        return images

    def used_by(self, checks: list[str], catalog: Catalog) -> list[WorkloadImage]:
        """The images the workloads of ``checks`` run (their catalog entries), in file order."""
        return [i for i in self.images if set(catalog.image_users(i.name)) & set(checks)]

    def get(self, name: str, check: str, catalog: Catalog) -> WorkloadImage:
        """Image ``name``, when ``check``'s catalog entry names it; LookupError when not."""
        spec = catalog.get(check)
        image = next((i for i in self.images if i.name == name), None)
        if spec is None or name not in spec.images or image is None:
            raise LookupError(
                f"image {name!r} is not named for {check} in its catalog entry "
                "(images in aicr/catalog/catalog.yaml)"
            )
        return image


@functools.cache
def load_images() -> WorkloadImages:
    """The image list shipped in the package."""
    return validate(WorkloadImages, parse_package_file("aicr.checks", "images.yaml"))


def registry(config: ValidateConfig) -> str | None:
    """The mirror every image moves to: the environment variable, else the config's."""
    raw = os.environ.get(defaults.IMAGE_REGISTRY_ENV, "").strip()
    if not raw:
        return config.validate_section.images.registry
    value = raw.rstrip("/")
    if not re.match(REGISTRY_PATTERN, value):
        raise InputError(
            Problem(
                f"{raw!r} is not a registry",
                source=f"${defaults.IMAGE_REGISTRY_ENV}",
                hint=REGISTRY_EXPECTED,
            )
        )
    return value


def pin_registry(config: ValidateConfig) -> ValidateConfig:
    """``config`` with the run's mirror written in: check pods do not see our environment."""
    mirror = registry(config)
    if mirror == config.validate_section.images.registry:
        return config
    data = config.model_dump(mode="json", by_alias=True, exclude_none=True)
    data["spec"]["validate"]["images"]["registry"] = mirror
    return type(config).model_validate(data)


def on_registry(ref: str, mirror: str | None) -> str:
    """``ref`` on ``mirror`` (unchanged when None), laid out as AICR lays out its mirror.

    AICR replaces the registry and the first path segment (``ghcr.io/nvidia/x/y:t`` ->
    ``<mirror>/x/y:t``) and, for ``host/name``, the host alone.
    """
    if not mirror:
        return ref
    parts = ref.split("/", 2)
    return f"{mirror}/{parts[-1]}"


def resolve(image: WorkloadImage, check: str, config: ValidateConfig) -> str:
    """What ``check`` pulls for ``image``: its param override as given, else the mirrored pin.

    The param is the one ``check``'s catalog entry names for the image.
    """
    spec = load_catalog().get(check)
    param = spec.images.get(image.name) if spec else None
    if param:
        override = config.check(check).params.get(param)
        if override:
            return str(override)
    return on_registry(image.image, registry(config))


def workload_image(name: str, *, check: str, config: ValidateConfig) -> str:
    """The reference ``check`` should run for its image ``name``."""
    return resolve(load_images().get(name, check, load_catalog()), check, config)
