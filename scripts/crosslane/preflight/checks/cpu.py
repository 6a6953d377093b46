"""qemu CPU profiles, run by the emulator that will run them: the arch's profiles, and a component's profiles with its
cpu_extensions spelled for that emulator. `-cpu help` lists CPU models, not their properties: a small static program
run under each -cpu string is the evidence, and qemu's own words name the property it lacks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from crosslane.archs import Arch
from crosslane.config import Config, Profile
from crosslane.features.probes import Probes
from crosslane.guest.qemu import property_name, with_extensions
from crosslane.guest.sysroot import find as find_sysroot
from crosslane.preflight.checks.base import Outcome, Subject
from crosslane.report import Verdict


def cpu_profiles_apply(probes: Probes, subject: Subject) -> str | None:
    if find_sysroot(probes.config.sysroot, subject.arch) is None:
        return f"needs the {subject.arch} sysroot for its probe program (see the sysroot check)"
    if probes.qemu(subject.arch).path is None:
        return "needs qemu (see the qemu check)"
    return None


# What qemu says of a -cpu property it does not have: "Property 'rv64-riscv-cpu.zfh' not found" (7.2).
UNKNOWN_PROPERTY = re.compile(r"Property '[^']*?\.([^'.]+)' not found")


def _emulator(probes: Probes, subject: Subject) -> str:
    tool = probes.qemu(subject.arch)
    return f"qemu {tool.version or '?'} ({tool.path})"


@dataclass(frozen=True)
class Rejection:
    """A profile the emulator did not run the probe program on: the property qemu lacks (None: it said otherwise)."""

    profile: Profile
    unknown: str | None
    detail: str

    def __str__(self) -> str:
        why = f"no CPU property '{self.unknown}'" if self.unknown else self.detail
        return f"profile {self.profile.name}: {why} ({self.profile.cpu})"


def _rejected(probes: Probes, subject: Subject, profiles: Sequence[Profile]) -> list[Rejection]:
    root = find_sysroot(probes.config.sysroot, subject.arch)
    assert root is not None
    rejected = []
    for profile in profiles:
        probe = probes.cpu_profile(subject.arch, profile, root.path)
        if not probe.ok:
            unknown = UNKNOWN_PROPERTY.search(probe.detail)
            rejected.append(Rejection(profile, unknown.group(1) if unknown else None, probe.detail))
    return rejected


def cpu_profiles(probes: Probes, subject: Subject) -> Outcome:
    arch = subject.arch
    profiles = probes.config.arches[arch].profiles
    rejected = _rejected(probes, subject, profiles)
    if rejected:
        return Outcome(status=Verdict.FAIL, message=f"{_emulator(probes, subject)} rejects " + "; ".join(map(str,
                                                                                                             rejected)),
                       fix=f"fix arches.{arch}.profiles in versions.toml for this qemu (property names differ between "
                           "qemu versions: Zfh before 8.2, zfh since; 7.2 has no zvfh), or state an extension as a "
                           "component's cpu_extensions (spelled for the emulator)")
    return Outcome(status=Verdict.PASS, message=f"{_emulator(probes, subject)} runs every profile: "
                   + ", ".join(p.name for p in profiles))


def cpu_extensions_apply(probes: Probes, subject: Subject) -> str | None:
    assert subject.component is not None
    if not probes.config.components[subject.component].cpu_extensions.get(subject.arch):
        return f"{subject.component} states no cpu_extensions for {subject.arch}"
    return cpu_profiles_apply(probes, subject)


def runs_on(config: Config, name: str, arch: Arch) -> list[Profile]:
    """The arch's profiles component *name* runs on: those its smoke and tests name (all where either names none, or
    names none of this arch's), and the default one its build's configure runs programs on."""
    arch_cfg = config.arches[arch]
    component = config.components[name]
    lists = [spec.profiles for spec in (component.smoke, component.tests) if spec is not None]
    named = {n for names in lists for n in names}
    if not lists or not all(lists) or not any(p.name in named for p in arch_cfg.profiles):
        return list(arch_cfg.profiles)
    return [p for p in arch_cfg.profiles if p.name in named or p.name == arch_cfg.default_profile]


def cpu_extensions(probes: Probes, subject: Subject) -> Outcome:
    """Every profile the component runs on, with its extensions spelled for the arch's emulator, run by it."""
    assert subject.component is not None
    arch, name = subject.arch, subject.component
    extensions = probes.config.components[name].cpu_extensions[arch]
    version = probes.qemu(arch).version
    profiles = [with_extensions(p, extensions, version) for p in runs_on(probes.config, name, arch)]
    where = f"components.{name}.cpu_extensions.{arch}"
    spelled = {property_name(e, version): e for e in extensions}
    rejected = _rejected(probes, subject, profiles)
    ours = [r for r in rejected if r.unknown in spelled]
    if ours:
        missing = ", ".join(dict.fromkeys(spelled[r.unknown] for r in ours if r.unknown))
        return Outcome(status=Verdict.FAIL,
                       message=f"{_emulator(probes, subject)} has no CPU property for {missing} ({where}): "
                       + "; ".join(map(str, ours)),
                       fix=f"drop {missing} from {where}, or run {arch} under a qemu that has it "
                           f"(arches.{arch}.emulator: a [toolroots] table with qemu-user, forky's is 11)")
    if rejected:
        return Outcome(status=Verdict.FAIL,
                       message=f"{_emulator(probes, subject)} rejects the profiles {name} runs on, "
                               "before its extensions: " + "; ".join(map(str, rejected)),
                       fix=f"fix arches.{arch}.profiles (see the qemu-cpu-profiles check)")
    return Outcome(status=Verdict.PASS,
                   message=f"{_emulator(probes, subject)} runs {', '.join(p.name for p in profiles)} with "
                   + ", ".join(f"{prop}=true" for prop in spelled))
