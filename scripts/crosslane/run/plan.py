"""The run plan: what one command will build and smoke, resolved once from the configuration and the request.

Pure: reading versions.toml's model and the lane overrides in the environment is all it does, so a plan can be
printed (`invoke all --dry-run`) and tested without a machine. The pipeline executes a plan; it does not decide
again which components, which arches (the amd64 control), which profiles or which lanes are on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from crosslane.archs import CONTROL_ARCH, Arch
from crosslane.config import Config, Profile, controls
from crosslane.errors import UsageError
from crosslane.policy.lanes import LaneState, resolve


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """What one command runs: the builds per arch in order, the smokes, the profiles and each lane's state."""

    arch: Arch
    # Per arch to build, dependencies first: the arch's own, then (when a smoke compares with it) the control's.
    builds: Mapping[Arch, tuple[str, ...]]
    smokes: tuple[str, ...]  # the components asked for, not the dependencies they pull in
    profiles: tuple[Profile, ...]
    lanes: Mapping[tuple[str, Arch], LaneState]
    whole_arch: bool  # the arch's whole job: an observation the floors count
    setup_components: tuple[str, ...] | None = field(default=None)  # None: every toolchain's host packages
    # Per smoke whose `smoke.profiles` narrows the run's profiles: the ones it runs on (absent: all of `profiles`).
    smoke_profiles: Mapping[str, tuple[Profile, ...]] = field(default_factory=dict)
    # Per component whose amd64 control is another's (controls.py): that one, which the control builds instead.
    shared_controls: Mapping[str, str] = field(default_factory=dict)

    def control_of(self, name: str) -> str:
        """The component whose control build *name*'s smoke and suite compare with."""
        return self.shared_controls.get(name, name)

    @property
    def arches(self) -> tuple[Arch, ...]:
        return tuple(self.builds)

    def lane(self, name: str, arch: Arch) -> LaneState:
        return self.lanes[(name, arch)]

    def profiles_of(self, name: str) -> tuple[Profile, ...]:
        """The profiles *name*'s smoke runs on in this plan."""
        return self.smoke_profiles.get(name, self.profiles)

    def steps(self) -> tuple[tuple[Arch, tuple[str, ...]], ...]:
        """The builds in the order they run: the arch's own up to the last one the control also builds (a smoke
        compares it), then the control's, then the arch's rest, so that the compared smokes can start while the
        rest compiles (docs/architecture.md, "Smokes beside builds")."""
        own = self.builds.get(self.arch, ())
        others = [(arch, names) for arch, names in self.builds.items() if arch is not self.arch and names]
        if not others:
            return ((self.arch, own),) if own else ()
        compared = {name for _, names in others for name in names}
        cut = max((i + 1 for i, name in enumerate(own) if self.control_of(name) in compared), default=len(own))
        steps = [(self.arch, own[:cut]), *others, (self.arch, own[cut:])]
        return tuple((arch, names) for arch, names in steps if names)

    def needs(self, name: str) -> dict[Arch, frozenset[str]]:
        """The builds the smoke of *name* waits for: on each arch that builds it, every build up to it in that
        arch's order (its dependencies come first, so they are among them; the control's copy too)."""
        found: dict[Arch, frozenset[str]] = {}
        for arch, names in self.builds.items():
            built = name if arch is self.arch else self.control_of(name)
            if built in names:
                found[arch] = frozenset(names[:names.index(built) + 1])
        return found

    def describe(self) -> list[str]:
        """The plan as a reader wants it: one line per arch's builds, the smokes with their profiles, the lanes
        that are off and why."""
        lines = []
        for arch, names in self.builds.items():
            role = " (the control)" if arch is not self.arch else ""
            lines.append(f"build {arch}{role}: {', '.join(names) or 'nothing'}")
        lines += [f"control of {name}: {twin}'s (the same amd64 build)" for name, twin in self.shared_controls.items()]
        by_profiles: dict[tuple[str, ...], list[str]] = {}
        for name in self.smokes:
            by_profiles.setdefault(tuple(p.name for p in self.profiles_of(name)), []).append(name)
        for names, smokes in by_profiles.items():
            where = f"on {', '.join(names)}" if names else "on no profile of this run (skipped)"
            lines.append(f"smoke {self.arch} {where}: {', '.join(smokes)}")
        lines += [f"lane off: {state.component} on {state.arch} by {state.setting}"
                  for state in self.lanes.values() if not state.enabled]
        if self.whole_arch:
            lines.append(f"floors: record this run and check [floors] {self.arch}")
        return lines


def expand_families(config: Config, arch: Arch, requested: Sequence[str]) -> list[str]:
    """Names as given, except a name that is no component but the project several variants build
    (`source_dirname`, e.g. "executorch"): it stands for those of its variants the arch builds."""
    found: list[str] = []
    for name in requested:
        if name in config.components:
            found.append(name)
            continue
        # A component without a source_dirname is no family's variant: '' names no family (nor a component).
        variants = [c.name for c in config.components.values() if c.source_dirname and c.source_dirname == name]
        built = [v for v in config.arches[arch].components if v in variants]
        if variants and not built:
            raise UsageError(f"no variant of {name} ({', '.join(variants)}) is built for {arch}",
                             fix=f"add {arch} to the arches of one of them in versions.toml")
        found += built or [name]
    return list(dict.fromkeys(found))


def known(config: Config, names: Sequence[str]) -> None:
    """Every one of *names* is a component (UsageError naming the first that is not)."""
    for name in names:
        if name not in config.components:
            raise UsageError(f"unknown component '{name}' (known: {', '.join(config.components)})")


def components_for(config: Config, arch: Arch, requested: Sequence[str] = ()) -> tuple[str, ...]:
    """What *arch* builds for the request (default: its job), dependencies first; unknown names are errors."""
    names = tuple(expand_families(config, arch, requested)) or config.arches[arch].components
    known(config, names)
    for name in names:
        if not config.builds(name, arch):
            raise UsageError(f"component '{name}' is not built for {arch} (versions.toml components.{name}.arches)")
    return config.build_order(names, arch)


def profiles_for(config: Config, arch: Arch, requested: str | None = None) -> tuple[Profile, ...]:
    profiles = config.arches[arch].profiles
    if requested is None:
        return profiles
    for profile in profiles:
        if profile.name == requested:
            return (profile,)
    raise UsageError(f"unknown CPU profile '{requested}' for {arch} (known: {', '.join(p.name for p in profiles)})")


def _lanes(config: Config, builds: Mapping[Arch, Sequence[str]], *, orchestrated: bool,
           environ: Mapping[str, str] | None) -> Mapping[tuple[str, Arch], LaneState]:
    return MappingProxyType({(name, arch): resolve(config, name, arch, orchestrated=orchestrated, environ=environ)
                             for arch, names in builds.items() for name in names})


def for_arch(config: Config, arch: Arch, requested: Sequence[str] = (), *,
             environ: Mapping[str, str] | None = None) -> RunPlan:
    """`invoke all` / `nox -s build-<arch>[-<component>]`: the orchestrated run (experimental lanes on)."""
    names = tuple(expand_families(config, arch, requested)) or config.arches[arch].components
    builds = {arch: components_for(config, arch, names)}  # unknown names are a UsageError before anything reads them
    controlled = () if arch is CONTROL_ARCH else config.controlled(names)
    if controlled:
        builds[CONTROL_ARCH] = components_for(config, CONTROL_ARCH, controls.controls_of(config, controlled))
    asked = expand_families(config, arch, requested)
    smokes = tuple(n for n in builds[arch] if not asked or n in asked)
    profiles = profiles_for(config, arch)
    return RunPlan(arch=arch, builds=MappingProxyType(builds), smokes=smokes, profiles=profiles,
                   lanes=_lanes(config, builds, orchestrated=True, environ=environ), whole_arch=not requested,
                   setup_components=builds[arch] if requested else None,
                   smoke_profiles=narrowed(config, arch, smokes, profiles),
                   shared_controls=MappingProxyType(controls.shared(config, controlled)))


def for_build(config: Config, arch: Arch, requested: Sequence[str] = (), *, orchestrated: bool = False,
              environ: Mapping[str, str] | None = None) -> RunPlan:
    """`invoke build`: the arch's builds only."""
    builds = {arch: components_for(config, arch, requested)}
    return RunPlan(arch=arch, builds=MappingProxyType(builds), smokes=(), profiles=(), lanes=_lanes(config, builds,
                                                                                                    orchestrated=orchestrated,
                                                                 environ=environ), whole_arch=False)


def for_smoke(config: Config, arch: Arch, requested: Sequence[str] = (), profile: str | None = None, *,
              orchestrated: bool = False, environ: Mapping[str, str] | None = None) -> RunPlan:
    """`invoke smoke`: the components asked for (not the dependencies they pull in) on the chosen profiles, each
    narrowed to its smoke's `profiles`. A selection that leaves a component named on the command line (or every
    smoke) no profile to run on is a UsageError: it would pass having run nothing."""
    ordered = components_for(config, arch, requested)
    asked = expand_families(config, arch, requested)
    smokes = tuple(n for n in ordered if not asked or n in asked)
    profiles = profiles_for(config, arch, profile)
    per_smoke = narrowed(config, arch, smokes, profiles)
    empty = [n for n in smokes if not per_smoke.get(n, profiles)]
    named = [n for n in empty if n in requested]
    if profile is not None and (named or (empty and len(empty) == len(smokes))):
        raise UsageError(f"--cpu {profile} selects no smoke to run on {arch}: "
                         + "; ".join(excluded(config, arch, n) for n in named or empty),
                         fix="pass --cpu with a profile the smoke lists, or no --cpu for all of them")
    return RunPlan(arch=arch, builds=MappingProxyType({}), smokes=smokes, profiles=profiles,
                   lanes=_lanes(config, {arch: smokes}, orchestrated=orchestrated, environ=environ), whole_arch=False,
                   smoke_profiles=per_smoke)


def narrowed(config: Config, arch: Arch, smokes: Sequence[str], profiles: Sequence[Profile]
             ) -> Mapping[str, tuple[Profile, ...]]:
    """The profiles of each smoke whose `smoke.profiles` narrows *profiles* (the others run on all of them)."""
    found = {}
    for name in smokes:
        spec = config.components[name].smoke
        if spec is not None and spec.profiles:
            allowed = config.arches[arch].allowed(profiles, spec.profiles)
            if allowed != tuple(profiles):
                found[name] = allowed
    return MappingProxyType(found)


def excluded(config: Config, arch: Arch, name: str) -> str:
    """Why *name*'s smoke runs on none of the chosen profiles."""
    spec = config.components[name].smoke
    assert spec is not None and spec.profiles  # only a smoke's own `profiles` narrows the run's
    runs_on = [p.name for p in config.arches[arch].allowed(config.arches[arch].profiles, spec.profiles)]
    return f"{name}'s smoke runs on {', '.join(runs_on)} only (versions.toml components.{name}.smoke.profiles)"


def with_tests(config: Config, arch: Arch, requested: Sequence[str]) -> tuple[str, ...]:
    """The request's components that declare upstream tests (default: every one the arch builds)."""
    names = tuple(expand_families(config, arch, requested)) or config.arches[arch].components
    known(config, names)
    found = tuple(n for n in names if config.components[n].tests is not None)
    if requested and not found:
        raise UsageError(f"{', '.join(requested)} declares no upstream tests for {arch}",
                         fix="add a [components.<name>.tests] table to versions.toml")
    return found


def for_tests(config: Config, arch: Arch, requested: Sequence[str] = (), profile: str | None = None, *,
              environ: Mapping[str, str] | None = None) -> RunPlan:
    """`invoke upstream-tests` / `nox -s tests-<arch>-<component>`: build what the suites need (the control's
    copy for the parity table too), then run them. `smokes` holds the components whose suites run."""
    names = with_tests(config, arch, requested)
    builds = {arch: components_for(config, arch, names)}
    control = tuple(n for n in names if arch is not CONTROL_ARCH and config.builds(n, CONTROL_ARCH)
                    and (spec := config.components[n].tests) is not None and spec.control)
    if control:
        builds[CONTROL_ARCH] = components_for(config, CONTROL_ARCH, controls.controls_of(config, control))
    return RunPlan(arch=arch, builds=MappingProxyType(builds), smokes=names, profiles=profiles_for(config, arch,
                                                                                                   profile),
                   lanes=_lanes(config, builds, orchestrated=True, environ=environ), whole_arch=False,
                   setup_components=tuple(dict.fromkeys(n for b in builds.values() for n in b)),
                   shared_controls=MappingProxyType(controls.shared(config, control)))
