from __future__ import annotations

import pytest
from cncf_builders import VENDOR, config_yaml, make_config

from aicr.cncf import check_vendor
from aicr.config import parse_config
from aicr.errors import InputError, SchemaError

P = "spec.validate.evidence.cncf.vendor."


def test_complete_vendor_passes_without_warnings() -> None:
    assert check_vendor(make_config(), "cfg.yaml") == []


@pytest.mark.parametrize(
    ("change", "message"),
    [({"vendorName": None}, P + "vendorName: required for a CNCF submission"),
     ({"k8sConformanceUrl": None}, P + "k8sConformanceUrl: required"),
     ({"description": ""}, P + "description: must not be empty"),
     ({"platformName": "[Platform Name]"}, "is a template placeholder"),
     ({"k8sConformanceUrl": "https://github.com/cncf/k8s-conformance/blob/main/v1.35/x"},
      "does not match the upstream pattern"),
     ({"websiteUrl": "example.com"}, P + "websiteUrl: 'example.com' is not an http(s) URL"),
     ({"contactEmailAddress": "nobody"}, "is not an e-mail address")],
    ids=["missing-vendor", "missing-k8s-url", "empty", "placeholder", "bad-k8s-url",
         "not-a-url", "bad-email"],
)
def test_bad_vendor_fields_exit_2_naming_the_field(change: dict, message: str) -> None:  # type: ignore[type-arg]
    vendor = {k: v for k, v in {**VENDOR, **change}.items() if v is not None}
    with pytest.raises(InputError) as exc:
        check_vendor(make_config(vendor=vendor), "cfg.yaml")
    assert exc.value.exit_code == 2
    assert message in str(exc.value)


def test_every_bad_field_is_reported_at_once() -> None:
    with pytest.raises(InputError) as exc:
        check_vendor(make_config(vendor={}), "cfg.yaml")
    assert len(exc.value.problems) == 9


def test_float_platform_version_is_refused_by_the_config_parser() -> None:
    text = config_yaml().replace('"platformVersion": "1.0"', '"platformVersion": 1.0')
    with pytest.raises(SchemaError) as exc:
        parse_config(text, "cfg.yaml")
    assert "vendor.platformVersion" in str(exc.value)


def test_raster_logo_only_warns() -> None:
    warnings = check_vendor(make_config(vendor={**VENDOR, "productLogoUrl":
                                                "https://example.com/logo.png"}), "cfg.yaml")
    assert len(warnings) == 1 and "productLogoUrl" in warnings[0] and ".svg" in warnings[0]
