from __future__ import annotations

from importlib import resources

import pytest
import yaml
from cncf_builders import TEMPLATES, make_config, make_snapshot

from aicr.catalog import load_catalog, parse_catalog
from aicr.cncf import SUPPORTED_VERSIONS, load_requirements, resolve_conformance
from aicr.cncf.requirements import Level, parse_requirements
from aicr.errors import InputError, SchemaError, UnsupportedVersionError

# CNCF.md: MUST/SHOULD counts per version.
COUNTS = {"1.33": (8, 1), "1.34": (9, 0), "1.35": (9, 3), "1.36": (8, 6), "1.37": (8, 7),
          "1.38": (10, 5)}


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_shipped_version_loads_with_the_documented_counts(version: str) -> None:
    reqs = load_requirements(version)
    levels = [r.level for r in reqs.requirements]
    assert (levels.count(Level.MUST), levels.count(Level.SHOULD)) == COUNTS[version]
    assert len(set(reqs.ids)) == len(reqs.ids)


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
def test_data_is_the_upstream_template_verbatim_and_in_order(version: str) -> None:
    template = yaml.safe_load((TEMPLATES / f"AIConformance-{version}.yaml").read_text())
    expected = [(cat, i["id"], i["level"], i["description"])
                for cat, items in template["spec"].items() for i in items]
    got = [(r.category, r.id, r.level.value, r.description)
           for r in load_requirements(version).requirements]
    assert got == expected


def test_the_data_files_list_no_checks() -> None:
    """The catalog is the one place a check says what it backs (issue 26)."""
    folder = resources.files("aicr.cncf.requirements")
    for version in SUPPORTED_VERSIONS:
        data = yaml.safe_load(folder.joinpath(f"v{version}.yaml").read_text(encoding="utf-8"))
        assert [r["id"] for r in data["requirements"] if "checks" in r] == [], version


def test_a_data_file_listing_checks_is_refused_naming_the_line() -> None:
    text = ('version: "1.35"\nkubernetesVersion: v1.35\nrequirements:\n'
            "  - {id: dra_support, category: a, level: MUST, description: d}\n"
            "  - id: gang_scheduling\n    category: a\n    level: MUST\n"
            "    description: d\n    checks: [gang-scheduling]\n")
    with pytest.raises(SchemaError) as err:
        parse_requirements(text, "v1.35.yaml", load_catalog())
    assert str(err.value.problems[0]).startswith(
        "v1.35.yaml:9: requirements[1].checks: checks are not listed in requirement data")


def test_a_check_backs_its_ids_in_every_version_that_has_them() -> None:
    catalog = parse_catalog(
        "apiVersion: aicr.nvidia.com/v1alpha1\nkind: Catalog\nimage: ghcr.io/x/y\nchecks:\n"
        "  - {name: b, phase: conformance, description: d, timeout: 1m, requirements: [x]}\n"
        "  - {name: a, phase: deployment, description: d, timeout: 1m, requirements: [x, y]}\n"
    )
    text = ('version: "1.35"\nkubernetesVersion: v1.35\nrequirements:\n'
            "  - {id: x, category: a, level: MUST, description: d}\n"
            "  - {id: y, category: a, level: SHOULD, description: d}\n"
            "  - {id: z, category: a, level: SHOULD, description: d}\n")
    reqs = parse_requirements(text, "v1.35.yaml", catalog)
    # phase order, then catalog order: the order the plan runs them
    assert [(r.id, r.checks) for r in reqs.requirements] == [("x", ["a", "b"]), ("y", ["a"]),
                                                               ("z", [])]


def test_a_shipped_check_backs_its_id_exactly_in_the_versions_that_have_it() -> None:
    """driver-runtime-management backs driver_runtime_management from 1.35 on (the id's
    first version), as the 1.35-1.38 files listed before they listed no checks."""
    backed = {v: [r.id for r in load_requirements(v).requirements
                  if "driver-runtime-management" in r.checks] for v in SUPPORTED_VERSIONS}
    assert backed == {"1.33": [], "1.34": [], "1.35": ["driver_runtime_management"],
                      "1.36": ["driver_runtime_management"], "1.37": ["driver_runtime_management"],
                      "1.38": ["driver_runtime_management"]}
    r38 = {r.id: r.checks for r in load_requirements("1.38").requirements}
    assert r38["workload_sandboxing"] == ["workload-sandboxing"]
    assert "dra_support" not in r38


def test_every_catalog_requirement_id_exists_in_some_version() -> None:
    known = {r.id for v in SUPPORTED_VERSIONS for r in load_requirements(v).requirements}
    orphans = {(c.name, rid) for c in load_catalog().checks for rid in c.requirements
               if rid not in known}
    assert orphans == set()


def test_only_the_conditional_requirements_are_flagged() -> None:
    flagged = {r.id for v in SUPPORTED_VERSIONS for r in load_requirements(v).requirements
               if r.conditional}
    assert flagged == {"cluster_autoscaling", "pod_autoscaling", "high_performance_networking"}


def test_1_38_promotes_driver_runtime_and_sandboxing_to_must() -> None:
    r37, r38 = load_requirements("1.37"), load_requirements("1.38")
    for rid in ("driver_runtime_management", "workload_sandboxing"):
        assert r37.get(rid).level == Level.SHOULD  # type: ignore[union-attr]
        assert r38.get(rid).level == Level.MUST  # type: ignore[union-attr]
    assert r37.hybrid and not load_requirements("1.36").hybrid


def test_unsupported_version_lists_the_supported_ones() -> None:
    with pytest.raises(UnsupportedVersionError) as exc:
        load_requirements("1.32")
    assert "1.32" in str(exc.value) and "1.33, 1.34, 1.35, 1.36, 1.37, 1.38" in str(exc.value)


@pytest.mark.parametrize(
    ("flag", "config_version", "expected"),
    [("1.36", "1.34", "1.36"), (None, "1.34", "1.34"), (None, None, "1.35"),
     ("v1.37.1", None, "1.37")],
    ids=["flag-wins", "config-over-snapshot", "snapshot-major-minor", "flag-normalized"],
)
def test_version_precedence(flag: str | None, config_version: str | None, expected: str) -> None:
    config = make_config(version=config_version)
    assert resolve_conformance(make_snapshot(), flag, config).version == expected


def test_no_version_anywhere_says_how_to_give_one() -> None:
    with pytest.raises(InputError) as exc:
        resolve_conformance(None, None, make_config())
    assert "--cncf-version" in str(exc.value)


def test_snapshot_version_without_data_exits_2_with_the_list() -> None:
    snap = make_snapshot("measurements: [{type: K8s, subtypes: [{subtype: server, "
                         "data: {version: v1.31.4}}]}]")
    with pytest.raises(UnsupportedVersionError) as exc:
        resolve_conformance(snap, None, make_config())
    assert exc.value.exit_code == 2
    assert "'1.31'" in str(exc.value) and "supported: 1.33" in str(exc.value)
