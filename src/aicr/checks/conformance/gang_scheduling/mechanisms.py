"""The gang mechanisms aicr knows, and which one a recipe and a cluster offer.

No client and no I/O: functions of the recipe's component names and the
cluster's API discovery (group -> versions, preferred first; group/version ->
resources), tested as tables.

Each mechanism is recognised by its API (the custom resource its gangs are
made of) and, in the recipe, by its component names. A scheduler the cluster
or the recipe shows that none of them explains is reported as unrecognised:
never a pass or a skip.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Discovery = dict[str, list[str]]  # API group -> served versions, preferred first


@dataclass(frozen=True)
class Mechanism:
    """One gang mechanism: its API, the recipe components that deploy it, how gangs reach it."""

    name: str  # the value of params.mechanism
    title: str
    group: str
    resource: str  # the resource its gangs are admitted through
    versions: tuple[str, ...]  # the versions aicr builds objects for, newest first
    components: tuple[str, ...]
    scheduler: str | None  # the schedulerName its pods name (None: the default scheduler)
    quota: bool = False  # its negative gang is refused by a quota the check sets

    def served_version(self, groups: Discovery, resources: dict[str, list[str]]) -> str | None:
        """The newest known version the cluster serves with the gang resource, or None."""
        for version in groups.get(self.group) or []:
            api = f"{self.group}/{version}"
            if version in self.versions and self.resource in (resources.get(api) or []):
                return version
        return None


KAI = Mechanism(
    "kai",
    "KAI scheduler",
    "scheduling.run.ai",
    "podgroups",
    ("v2alpha2",),
    ("kai-scheduler",),
    "kai-scheduler",
)
KUEUE = Mechanism(
    "kueue",
    "Kueue",
    "kueue.x-k8s.io",
    "workloads",
    ("v1beta2", "v1beta1"),
    ("kueue",),
    None,
    quota=True,
)
COSCHEDULING = Mechanism(
    "coscheduling",
    "coscheduling (scheduler-plugins)",
    "scheduling.x-k8s.io",
    "podgroups",
    ("v1alpha1",),
    ("scheduler-plugins", "coscheduling"),
    "scheduler-plugins-scheduler",
)
VOLCANO = Mechanism(
    "volcano",
    "Volcano",
    "scheduling.volcano.sh",
    "podgroups",
    ("v1beta1",),
    ("volcano",),
    "volcano",
)
# In the order one is chosen when the recipe names none (KAI: every shipped recipe uses it).
MECHANISMS = (KAI, KUEUE, COSCHEDULING, VOLCANO)
BY_NAME = {m.name: m for m in MECHANISMS}
# Groups of the core API that only look like schedulers (PriorityClass).
CORE_GROUPS = frozenset({"scheduling.k8s.io"})
# Words that mark a recipe component or an API group as a scheduler.
SCHEDULER_WORDS = ("schedul", "yunikorn", "koordinator", "godel")


@dataclass(frozen=True)
class Detection:
    """What was found: the mechanism to test (or None), and every reason behind the choice."""

    chosen: Mechanism | None
    version: str | None
    served: tuple[str, ...]  # titles of the recognised mechanisms the cluster serves
    unrecognised: tuple[str, ...]  # schedulers found that no mechanism explains
    problem: str | None  # why nothing can be tested (a failure), when chosen is None
    notes: tuple[str, ...] = field(default=())

    @property
    def summary(self) -> str:
        """What was found, as one phrase for the evidence."""
        parts = [f"served: {', '.join(self.served) or 'none'}"]
        if self.unrecognised:
            parts.append(f"unrecognised: {', '.join(self.unrecognised)}")
        return "; ".join(parts + list(self.notes))


def _looks_like_scheduler(name: str) -> bool:
    return any(w in name.lower() for w in SCHEDULER_WORDS)


def unrecognised(components: list[str], groups: Discovery) -> list[str]:
    """Schedulers the recipe or the API shows that no known mechanism explains."""
    known_components = {c for m in MECHANISMS for c in m.components}
    known_groups = {m.group for m in MECHANISMS} | CORE_GROUPS
    found = [
        f"recipe component {c}"
        for c in components
        if _looks_like_scheduler(c) and c not in known_components
    ]
    found += [
        f"API group {g}"
        for g in sorted(groups)
        if _looks_like_scheduler(g) and g not in known_groups
    ]
    return found


def detect(
    components: list[str],
    groups: Discovery,
    resources: dict[str, list[str]],
    requested: str | None = None,
) -> Detection:
    """The mechanism to test: the one asked for, else the recipe's, else the first served.

    ``components`` are the recipe's enabled component names; ``resources`` the
    resources discovery lists per group/version (only the mechanisms' groups
    need be present).
    """
    versions = {m.name: m.served_version(groups, resources) for m in MECHANISMS}
    served = tuple(m.title for m in MECHANISMS if versions[m.name])
    strangers = tuple(unrecognised(components, groups))

    def found(m: Mechanism, why: str) -> Detection:
        version = versions[m.name]
        if version is None:
            api = f"{m.group} ({m.resource}, version {' or '.join(m.versions)})"
            return Detection(
                None, None, served, strangers, f"{why}, but the cluster does not serve {api}"
            )
        return Detection(m, version, served, strangers, None, (why,))

    if requested:
        return found(BY_NAME[requested], f"params.mechanism is {requested}")
    in_recipe = [m for m in MECHANISMS if set(m.components) & set(components)]
    if in_recipe:
        m = in_recipe[0]
        named = sorted(set(m.components) & set(components))[0]
        return found(m, f"the recipe deploys {named}")
    # The recipe deploys a scheduler aicr cannot test, or the cluster runs only such ones.
    # (An unrecognised API beside a recognised mechanism is named, and the known one tested.)
    if any(s.startswith("recipe") for s in strangers) or (strangers and not served):
        return Detection(
            None,
            None,
            served,
            strangers,
            "found a scheduler aicr does not recognise as a gang scheduler: "
            + ", ".join(strangers),
        )
    for m in MECHANISMS:
        if versions[m.name]:
            return found(
                m,
                f"the recipe names no gang scheduler; the cluster serves "
                f"{m.group}/{versions[m.name]} {m.resource}",
            )
    looked = ", ".join(f"{m.title} ({m.group})" for m in MECHANISMS)
    return Detection(
        None,
        None,
        served,
        strangers,
        f"no gang scheduler found: the recipe deploys none and the cluster serves none of {looked}",
    )
