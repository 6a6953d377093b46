"""The nox sessions versions.toml implies, as data: per arch, and per arch × component.

They are read from the model (config.load), the one reading of versions.toml. The noxfile imports this before
crosslane is installed into a session: the loader needs only the standard library and `packaging`, which nox
itself depends on. The consistency lint compares the sessions nox really registered with this plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from crosslane import config
from crosslane.archs import KNOWN_ARCHS
from crosslane.config import Config
from crosslane.errors import CrosslaneError


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


def plan(cfg: Config) -> list[Session]:
    """build-<arch>, smoke-<arch>, and build-/smoke-<arch>-<component> for every component built on the arch (its
    own arches, and on the control arch every component built for comparison); repro- for those that compile;
    tests- where a component with upstream tests lists the arch; build-<target> per bare-metal target."""
    sessions: list[Session] = []
    for arch in cfg.arches:
        sessions += arch_sessions(arch.value)
        for name, spec in cfg.components.items():
            if not cfg.builds(name, arch):
                continue
            sessions += [
                Session(f"build-{arch}-{name}", arch.value, name, "build", (arch.value, name, "build"),
                        f"{arch} × {name}: build it (and what it needs), gate it, smoke it."),
                Session(f"smoke-{arch}-{name}", arch.value, name, "smoke", (arch.value, name, "smoke"),
                        f"{arch} × {name}: smoke the built {name} on every CPU profile."),
            ]
            if cfg.compiles(name):
                sessions.append(Session(f"repro-{arch}-{name}", arch.value, name, "repro", (arch.value, name, "repro"),
                                        f"{arch} × {name}: build it twice from two clones under varied conditions "
                                        "and compare every output (reproducible builds)."))
            if arch in spec.arches and spec.tests is not None:
                sessions.append(Session(f"tests-{arch}-{name}", arch.value, name, "tests", (arch.value, name, "tests"),
                                        f"{arch} × {name}: upstream's own tests on every CPU profile, with parity "
                                        "against amd64."))
    for target in cfg.baremetal:
        sessions.append(Session(f"build-{target}", target, None, "baremetal", (target, "build", "baremetal"),
                                f"{target} (bare metal): tool root, ExecuTorch per -march, the cases on every "
                                "profile under qemu-system."))
    return sessions


def arch_sessions(arch: str) -> list[Session]:
    return [
        Session(f"build-{arch}", arch, None, "build", (arch, "build"),
                f"{arch}: setup, sysroot, build and smoke every component versions.toml lists for it."),
        Session(f"smoke-{arch}", arch, None, "smoke", (arch, "smoke"),
                f"{arch}: smoke what is built on every CPU profile under qemu-user."),
    ]


def listed(path: Path) -> tuple[list[Session], str]:
    """The sessions of the file at *path*, and "" — or, for a file crosslane refuses, the arch sessions of every
    known arch and the refusal's line: nox still lists them, and the session's `invoke` names the error again."""
    try:
        return plan(config.load(path)), ""
    except CrosslaneError as exc:
        return [s for arch in KNOWN_ARCHS for s in arch_sessions(arch)], exc.one_line()
