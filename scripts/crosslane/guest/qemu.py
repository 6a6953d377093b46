"""qemu-user command lines: always an explicit -cpu and the sysroot as -L."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from crosslane.archs import Arch, info
from crosslane.config import Config, Profile
from crosslane.errors import MissingPrerequisite
from crosslane.guest import guest_root
from crosslane.guest.sysroot import Sysroot
from crosslane.host import probecache, toolroot
from crosslane.process.runner import Runner


def qemu_binary(runner: Runner, arch: Arch) -> str:
    return runner.which(info(arch).qemu_binary, fix=f"invoke setup --arch {arch} (installs qemu-user-static)")


def for_arch(runner: Runner, config: Config, arch: Arch) -> str:
    """The qemu-user every program of *arch* runs under: the host's, or the one of the tool root
    arches.<arch>.emulator names (made with the arch's sysroot: ensure_emulator)."""
    name = config.arches[arch].emulator
    if name is None:
        return qemu_binary(runner, arch)
    root = toolroot.find(config.toolroots[name])
    if root is None:  # as a sysroot not made: a dry run too reports it (preflight) rather than guess a path
        raise MissingPrerequisite(f"the tool root {name} (arches.{arch}.emulator) is not made",
                                  fix=f"invoke sysroot --arch {arch}")
    return from_toolroot(root.path, name, arch)


def ensure_emulator(runner: Runner, config: Config, arch: Arch) -> None:
    """Make the tool root arches.<arch>.emulator names, if any, and check it holds the arch's qemu-user (a dry run
    only names the mmdebstrap command)."""
    name = config.arches[arch].emulator
    if name is None:
        return
    toolroot.ensure(runner, config.toolroots[name])
    if not runner.dry_run:
        for_arch(runner, config, arch)


def _tool_name(arch: Arch) -> str:
    return info(arch).qemu_binary.removesuffix("-static")


def from_toolroot(root: Path, name: str, arch: Arch) -> str:
    """The qemu-user of a tool root (Debian's qemu-user is static since trixie: it runs outside the root too)."""
    path = root / "usr/bin" / _tool_name(arch)
    if not path.is_file():
        raise MissingPrerequisite(f"the tool root {name} has no {path.relative_to(root)}",
                                  fix=f"add qemu-user to [toolroots.{name}].packages in versions.toml")
    return str(path)


# RISC-V extensions whose qemu property was spelled with a capital Z before qemu 8.2 (Zfh=true; 7.2 refuses zfh=true).
# 8.2 added the lower-case names and deprecated these, 10.1 removed them (qemu's docs/about/deprecated.rst,
# removed-features.rst). Every other extension is lower-case.
CAPITAL_Z_UNTIL = (8, 2)
CAPITAL_Z = frozenset({"zifencei", "zicsr", "zihintntl", "zihintpause", "zawrs", "zfa", "zfh", "zfhmin", "zve32f",
                       "zve64f", "zve64d"})
RELEASE = re.compile(r"(\d+)\.(\d+)")


def property_name(extension: str, qemu_version: str | None) -> str:
    """The -cpu property that turns *extension* on in the qemu of *qemu_version* ("7.2.22" spells zfh as Zfh); an
    unknown version gets the current spelling (preflight's cpu-extensions check runs it and says when it is wrong)."""
    found = RELEASE.match(qemu_version or "")
    release = (int(found.group(1)), int(found.group(2))) if found else None
    if extension in CAPITAL_Z and release is not None and release < CAPITAL_Z_UNTIL:
        return extension[0].upper() + extension[1:]
    return extension


def with_extensions(profile: Profile, extensions: Sequence[str], qemu_version: str | None) -> Profile:
    """*profile* with each of *extensions* on, spelled for the qemu of *qemu_version*: same name, a longer -cpu."""
    if not extensions:
        return profile
    added = ",".join(f"{property_name(name, qemu_version)}=true" for name in extensions)
    return Profile(profile.name, f"{profile.cpu},{added}")


def command(qemu: str, sysroot: Path, profile: Profile) -> list[str]:
    return [qemu, "-L", str(sysroot), "-cpu", profile.cpu]


def target_command(qemu: str, build_root: Path, root: Sysroot, profile: Profile) -> list[str]:
    """*qemu* (for_arch's) for a target program: the guest root (the sysroot, plus a guest /proc/cpuinfo where
    the arch needs one) as -L and an explicit -cpu. CMake's emulator and every smoke use this one line. Only the
    line: what runs it makes the guest root first (guest_root.ensure)."""
    return command(qemu, guest_root.path_for(build_root, root), profile)


def version(runner: Runner, qemu: str) -> str:
    output = probecache.version_output(runner, [qemu, "--version"])
    if isinstance(output, probecache.Failed) or not output:
        why = f" ({output.reason})" if isinstance(output, probecache.Failed) else ": it printed nothing"
        raise MissingPrerequisite(f"{qemu} --version failed{why}", fix="reinstall qemu-user-static (invoke setup)")
    first = output.splitlines()[0]
    return first.split("version", 1)[1].split()[0] if "version" in first else first
