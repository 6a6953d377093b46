"""The nox sessions versions.toml implies, as data: per arch, and per arch × component.

stdlib only, and it takes the parsed TOML as a plain dict: the noxfile imports it before crosslane and its
dependencies are installed (nox runs from its own environment), and the consistency lint compares the
sessions nox really registered with this plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Session:
    name: str
    arch: str
    component: str | None
    # "build" runs `invoke all`, "smoke" runs `invoke smoke`.
    action: str
    tags: tuple[str, ...]
    doc: str

    def invoke_args(self) -> list[str]:
        task = "all" if self.action == "build" else "smoke"
        component = ["--component", self.component] if self.component else []
        return [task, "--arch", self.arch, *component]


def _table(data: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = data.get(key, {})
    return value if isinstance(value, Mapping) else {}


def plan(data: Mapping[str, object]) -> list[Session]:
    """build-<arch>, smoke-<arch>, and build-/smoke-<arch>-<component> for every arch a component lists."""
    arches = list(_table(data, "arches"))
    components = _table(data, "components")
    sessions: list[Session] = []
    for arch in arches:
        sessions += [
            Session(f"build-{arch}", arch, None, "build", (arch, "build"),
                    f"{arch}: setup, sysroot, build and smoke every component versions.toml lists for it."),
            Session(f"smoke-{arch}", arch, None, "smoke", (arch, "smoke"),
                    f"{arch}: smoke what is built on every CPU profile under qemu-user."),
        ]
        for name, table in components.items():
            listed = table.get("arches", []) if isinstance(table, Mapping) else []
            if not isinstance(listed, list) or arch not in listed:
                continue
            sessions += [
                Session(f"build-{arch}-{name}", arch, name, "build", (arch, name, "build"),
                        f"{arch} × {name}: build it (and what it needs), gate it, smoke it."),
                Session(f"smoke-{arch}-{name}", arch, name, "smoke", (arch, name, "smoke"),
                        f"{arch} × {name}: smoke the built {name} on every CPU profile."),
            ]
    return sessions
