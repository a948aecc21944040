"""Vendor metadata for PRODUCT.yaml: checked before anything else, from the validate config."""

from __future__ import annotations

import re

from aicr.config import ValidateConfig
from aicr.errors import InputError, Problem

VENDOR_PATH = "spec.validate.evidence.cncf.vendor"

# (config field, PRODUCT.yaml key) for every field the upstream validator requires.
REQUIRED_FIELDS: tuple[tuple[str, str], ...] = (
    ("vendor_name", "vendorName"),
    ("platform_name", "platformName"),
    ("platform_version", "platformVersion"),
    ("website_url", "websiteUrl"),
    ("documentation_url", "documentationUrl"),
    ("product_logo_url", "productLogoUrl"),
    ("description", "description"),
    ("contact_email_address", "contactEmailAddress"),
    ("k8s_conformance_url", "k8sConformanceUrl"),
)
OPTIONAL_FIELDS: tuple[tuple[str, str], ...] = (("repo_url", "repoUrl"),)
URL_FIELDS = ("websiteUrl", "documentationUrl", "productLogoUrl", "repoUrl", "k8sConformanceUrl")

# The shape the upstream validator demands of k8sConformanceUrl.
K8S_CONFORMANCE_URL = re.compile(
    r"^https://github\.com/cncf/k8s-conformance/tree/(?:master|main)/v\d+\.\d+/[^/\s]+/?$"
)
# Logo formats CNCF asks for (vector artwork); anything else only earns a warning.
LOGO_EXTENSIONS = (".svg", ".eps", ".ai")
_SERVER_VERSION = re.compile(r"^v?(\d+\.\d+)\.(\d+)")
_PLACEHOLDER = re.compile(r"^\[.*\]$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def is_placeholder(value: str) -> bool:
    """True for the template's ``[Platform Name]`` style placeholders."""
    return bool(_PLACEHOLDER.match(value.strip()))


def check_vendor(config: ValidateConfig, source: str) -> list[str]:
    """Refuse missing or ill-formed vendor metadata (every bad field at once); return warnings."""
    vendor = config.cncf.vendor
    problems: list[Problem] = []
    values: dict[str, str] = {}
    for attr, key in REQUIRED_FIELDS + OPTIONAL_FIELDS:
        value = getattr(vendor, attr)
        path = f"{VENDOR_PATH}.{key}"
        if value is None:
            if (attr, key) in REQUIRED_FIELDS:
                problems.append(Problem("required for a CNCF submission", source, None, path))
            continue
        if not value.strip():
            problems.append(Problem("must not be empty", source, None, path))
        elif is_placeholder(value):
            problems.append(Problem(f"'{value}' is a template placeholder", source, None, path))
        else:
            values[key] = value.strip()
    for key in URL_FIELDS:
        if key in values and not values[key].startswith(("https://", "http://")):
            problems.append(
                Problem(
                    f"'{values[key]}' is not an http(s) URL", source, None, f"{VENDOR_PATH}.{key}"
                )
            )
    url = values.get("k8sConformanceUrl")
    if url and not K8S_CONFORMANCE_URL.match(url):
        problems.append(
            Problem(
                f"'{url}' does not match the upstream pattern",
                source,
                None,
                f"{VENDOR_PATH}.k8sConformanceUrl",
                "expected https://github.com/cncf/k8s-conformance/tree/main/vX.Y/<dir>",
            )
        )
    email = values.get("contactEmailAddress")
    if email and not _EMAIL.match(email):
        problems.append(
            Problem(
                f"'{email}' is not an e-mail address",
                source,
                None,
                f"{VENDOR_PATH}.contactEmailAddress",
            )
        )
    if problems:
        raise InputError(problems)
    warnings = []
    logo = values.get("productLogoUrl", "")
    if logo and not logo.lower().split("?")[0].endswith(LOGO_EXTENSIONS):
        warnings.append(
            f"{source}: {VENDOR_PATH}.productLogoUrl: CNCF asks for a vector logo "
            f"({', '.join(LOGO_EXTENSIONS)}); '{logo}' may be refused by reviewers"
        )
    return warnings


def kubernetes_version(server: str | None, version: str) -> str:
    """The cluster's version as PRODUCT.yaml shows it: ``vX.Y.Z`` with the patch level.

    The template asks for ``vX.Y``; the cluster's own version (``v1.35.6-eks-3025e55``)
    keeps its patch level and drops the provider's build suffix. Without a recorded server
    version (or one of another minor) it is the conformance version.
    """
    found = _SERVER_VERSION.match(server or "")
    if found and found[1] == version:
        return f"v{found[1]}.{found[2]}"
    return f"v{version}"


def product_metadata(
    config: ValidateConfig, version: str, server: str | None = None
) -> dict[str, str]:
    """PRODUCT.yaml metadata in template order (repoUrl only when given)."""
    vendor = config.cncf.vendor
    out = {"kubernetesVersion": kubernetes_version(server, version)}
    for attr, key in (
        ("platform_name", "platformName"),
        ("platform_version", "platformVersion"),
        ("vendor_name", "vendorName"),
        ("website_url", "websiteUrl"),
        ("repo_url", "repoUrl"),
        ("documentation_url", "documentationUrl"),
        ("product_logo_url", "productLogoUrl"),
        ("description", "description"),
        ("contact_email_address", "contactEmailAddress"),
        ("k8s_conformance_url", "k8sConformanceUrl"),
    ):
        value = getattr(vendor, attr)
        if value is not None:
            out[key] = value.strip()
    return out
