"""The GitHub Actions matrices, derived from versions.toml (never written by hand).

`plan` answers three questions for one workflow run: whether the build jobs run at all (a pull request that
touches none of BUILD_INPUTS runs only lint and tests), which arch × component builds run (each with the
toolchain its ccache is keyed by; the amd64 control's copies of components whose smoke compares with it
are added), which arch × CPU profile smokes run (every profile, or the default one on pull requests), which
bare-metal targets run (each a job of its own: its builds and runs all happen in the tool root), and which
upstream test suites run, sharded by arch × component × profile.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from collections.abc import Sequence
from dataclasses import dataclass

from crosslane.archs import CONTROL_ARCH, Arch
from crosslane.config import Config, controls
from crosslane.errors import UsageError

# A pull request rebuilds when one of these changed; every other change is covered by lint and tests.
BUILD_INPUTS = ("versions.toml", "patches/*", "scripts/*", "components/*", "noxfile.py", "tasks.py",
                "pyproject.toml", ".github/workflows/*")
FULL_EVENTS = ("schedule", "workflow_dispatch", "push")


@dataclass(frozen=True, kw_only=True)
class Plan:
    run: bool
    build: list[dict[str, str]]
    smoke: list[dict[str, str]]
    baremetal: list[dict[str, str]]
    upstream: list[dict[str, str]] = dataclasses.field(default_factory=list)

    def github_output(self) -> str:
        """The lines a workflow appends to $GITHUB_OUTPUT."""
        def compact(include: list[dict[str, str]]) -> str:
            return json.dumps({"include": include}, separators=(",", ":"))
        return (f"run={str(self.run).lower()}\nbuild={compact(self.build)}\nsmoke={compact(self.smoke)}\n"
                f"baremetal={compact(self.baremetal)}\nupstream={compact(self.upstream)}")


def touches_build(changed: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) for path in changed for pattern in BUILD_INPUTS)


def plan(config: Config, *, event: str = "push", arch: str = "", component: str = "",
         changed: Sequence[str] = ()) -> Plan:
    if arch and arch not in {a.value for a in config.arches}:
        raise UsageError(f"unknown arch '{arch}' (versions.toml has {', '.join(a.value for a in config.arches)})")
    if component and component not in config.components:
        raise UsageError(f"unknown component '{component}' (known: {', '.join(config.components)})")
    arches = [a for a in config.arches if not arch or a.value == arch]
    build: list[dict[str, str]] = []

    def add(each: Arch, name: str) -> None:
        entry = {"arch": each.value, "component": name, "toolchain": config.toolchain_for(name, each).name}
        if entry not in build:
            build.append(entry)

    for each in arches:
        names = [n for n in config.arches[each].components if not component or n == component]
        if component and not names and config.builds(component, each):
            # built there only as the control (Config.builds): its shared one, when another builds the same
            names = [component if each in config.components[component].arches else
                     controls.shared_with(config, component)]
        for name in names:
            add(each, name)
            if each is not CONTROL_ARCH and config.controlled([name]):
                add(CONTROL_ARCH, controls.shared_with(config, name))
    full = event in FULL_EVENTS
    smoke = [{"arch": each.value, "profile": p.name} for each in arches
             for p in config.arches[each].profiles if full or p.name == config.arches[each].default_profile]
    # Bare-metal targets run when no arch or component narrows the plan (they are neither).
    baremetal = [{"target": name} for name in config.baremetal] if not (arch or component) else []
    return Plan(run=full or touches_build(changed), build=build, smoke=smoke, baremetal=baremetal,
                upstream=upstream(config, arches, component, full))


def upstream(config: Config, arches: Sequence[Arch], component: str, full: bool) -> list[dict[str, str]]:
    """Upstream test suites, one job per arch × component × profile (a shard each: no job runs them all), every
    profile the suite runs on, or only the arch's default one on pull requests (then the suite's first)."""
    jobs = []
    for each in arches:
        for name in config.arches[each].components:
            spec = config.components[name].tests
            if spec is None or (component and name != component):
                continue
            profiles = [p.name for p in config.arches[each].profiles if not spec.profiles or p.name in spec.profiles]
            default = config.arches[each].default_profile
            chosen = profiles if full else [default if default in profiles else profiles[0]] if profiles else []
            jobs += [{"arch": each.value, "component": name, "profile": p,
                      "toolchain": config.toolchain_for(name, each).name} for p in chosen]
    return jobs
