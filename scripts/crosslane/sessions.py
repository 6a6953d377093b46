"""The nox sessions versions.toml implies, as data: per arch, and per arch × component.

stdlib only, and it takes the parsed TOML as a plain dict: the noxfile imports it before crosslane and its
dependencies are installed (nox runs from its own environment), and the consistency lint compares the
sessions nox really registered with this plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from crosslane import inherit
from crosslane.archs import CONTROL_ARCH
from crosslane.errors import ConfigError, MissingPrerequisite
from crosslane.registry import SMOKES, Registry, discovered, kinds_named


@dataclass(frozen=True)
class Session:
    name: str
    arch: str
    component: str | None
    # "build" runs `invoke all`, "smoke" runs `invoke smoke`, "tests" runs `invoke upstream-tests`, "baremetal"
    # runs `invoke baremetal`, "repro" runs `invoke repro`.
    action: str
    tags: tuple[str, ...]
    doc: str

    def invoke_args(self) -> list[str]:
        if self.action == "baremetal":
            return ["baremetal", "--target", self.arch]
        if self.action == "tests":
            return ["upstream-tests", "--arch", self.arch, "--component", str(self.component)]
        if self.action == "repro":
            return ["repro", "--arch", self.arch, "--component", str(self.component)]
        task = "all" if self.action == "build" else "smoke"
        component = ["--component", self.component] if self.component else []
        return [task, "--arch", self.arch, *component]


def _table(data: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = data.get(key, {})
    return value if isinstance(value, Mapping) else {}


def smoke_kinds(components: Mapping[str, object]) -> Registry:
    """The smoke kinds, with the plug-ins *components* name imported; one that cannot be loaded leaves the built-in
    kinds, so nox still lists the sessions and `invoke` names the package."""
    try:
        return discovered(SMOKES).named(kinds_named(components, "smoke.kind"))
    except MissingPrerequisite:
        return SMOKES


def resolved(data: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """[components.*] with `extends` resolved as the loader resolves it (inherit.py); a file the loader would refuse
    keeps its tables as written, so nox still lists its sessions and `invoke` names the error."""
    components = {name: table for name, table in _table(data, "components").items() if isinstance(table, dict)}
    try:
        return inherit.resolve_components(components, "versions.toml", smoke_kinds(components))
    except ConfigError:
        return components


def control_builds(components: Mapping[str, Mapping[str, object]]) -> set[str]:
    """What the control arch builds for comparison: components with a controlled smoke, and their depends."""
    smokes = smoke_kinds(components)
    wanted = [n for n, table in components.items() if isinstance(smoke := table.get("smoke"), Mapping)
              and smokes.compares_with_control(smoke.get("kind"), smoke)]
    found: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in found:
            continue
        found.add(name)
        depends = components[name].get("depends") if name in components else None
        wanted += [d for d in depends if isinstance(d, str)] if isinstance(depends, list) else []
    return found


def plan(data: Mapping[str, object]) -> list[Session]:
    """build-<arch>, smoke-<arch>, and build-/smoke-<arch>-<component> for every arch a component lists (and
    for the control arch, every component it builds for comparison)."""
    arches = list(_table(data, "arches"))
    components = resolved(data)
    control = control_builds(components)
    sessions: list[Session] = []
    for arch in arches:
        sessions += [
            Session(f"build-{arch}", arch, None, "build", (arch, "build"),
                    f"{arch}: setup, sysroot, build and smoke every component versions.toml lists for it."),
            Session(f"smoke-{arch}", arch, None, "smoke", (arch, "smoke"),
                    f"{arch}: smoke what is built on every CPU profile under qemu-user."),
        ]
        for name in components:
            listed = components[name].get("arches")
            in_job = isinstance(listed, list) and arch in listed
            if not in_job and not (arch == CONTROL_ARCH.value and name in control):
                continue
            sessions += [
                Session(f"build-{arch}-{name}", arch, name, "build", (arch, name, "build"),
                        f"{arch} × {name}: build it (and what it needs), gate it, smoke it."),
                Session(f"smoke-{arch}-{name}", arch, name, "smoke", (arch, name, "smoke"),
                        f"{arch} × {name}: smoke the built {name} on every CPU profile."),
            ]
            source = components[name].get("source")
            origin = components[name].get("source_of")
            if source is None and isinstance(origin, str) and origin in components:
                source = components[origin].get("source")
            if not (isinstance(source, Mapping) and source.get("kind") == "sysroot-package"):
                sessions.append(Session(f"repro-{arch}-{name}", arch, name, "repro", (arch, name, "repro"),
                                        f"{arch} × {name}: build it twice from two clones under varied conditions "
                                        "and compare every output (reproducible builds)."))
            if in_job and isinstance(components[name].get("tests"), Mapping):
                sessions.append(Session(f"tests-{arch}-{name}", arch, name, "tests", (arch, name, "tests"),
                                        f"{arch} × {name}: upstream's own tests on every CPU profile, with parity "
                                        "against amd64."))
    for target in _table(data, "baremetal"):
        sessions.append(Session(f"build-{target}", target, None, "baremetal", (target, "build", "baremetal"),
                                f"{target} (bare metal): tool root, ExecuTorch per -march, the cases on every "
                                "profile under qemu-system."))
    return sessions
