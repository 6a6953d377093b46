"""Install the host's Debian packages that the selected arches and components need."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.errors import MissingPrerequisite
from crosslane.process.runner import Runner

APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}


def packages_needed(config: Config, arches: Iterable[Arch], components: Iterable[str] | None = None
                    ) -> tuple[str, ...]:
    """Host packages for *arches*: every declared toolchain (components and tests may choose another than the
    default), or with *components* only the toolchains those components build with."""
    wanted: list[str] = list(config.host_packages)
    names = tuple(components) if components is not None else None
    arches = tuple(arches)
    for arch in arches:
        if names is None:
            chains = list(config.toolchains.values())
        else:
            chains = [config.toolchain_for(n, arch) for n in names if config.builds(n, arch)]
        for toolchain in chains:
            wanted += toolchain.packages.get(arch, ())
    chosen = [config.components[n] for n in (names if names is not None else config.components)]
    rooted = any(chain.toolroot for chain in config.toolchains.values()) if names is None else any(
        config.toolchain_for(n, a).toolroot for a in arches for n in names if config.builds(n, a))
    emulated = any(config.arches[a].emulator for a in arches if a in config.arches)
    if rooted or emulated or any(c.toolroot for c in chosen):
        wanted.append("mmdebstrap")  # makes the tool roots of Rust, compilers and qemu-user (host/toolroot.py)
    return tuple(dict.fromkeys(wanted))


def missing_packages(runner: Runner, packages: Iterable[str]) -> tuple[str, ...]:
    names = tuple(packages)
    if not names:
        return ()
    result = runner.run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\\n", *names],
                        check=False, probe=True, quiet=True)
    installed = {line.split()[0] for line in result.output.splitlines() if line.endswith(" installed")}
    return tuple(name for name in names if name not in installed)


def privilege_prefix(runner: Runner) -> list[str]:
    if os.geteuid() == 0:
        return []
    return [runner.which("sudo", fix="run as root, or install sudo"), "-n"]


def ensure_debian_host(runner: Runner) -> None:
    if not Path("/etc/debian_version").is_file() or runner.find("apt-get") is None:
        raise MissingPrerequisite("this host is not Debian or Ubuntu (no /etc/debian_version or apt-get)",
                                  fix="install the packages listed by 'invoke setup --dry-run' by hand")


def install(runner: Runner, packages: Iterable[str]) -> tuple[str, ...]:
    """Install what is missing; return what was installed (nothing when all are present)."""
    ensure_debian_host(runner)
    missing = missing_packages(runner, packages)
    if not missing:
        runner.log.info(f"    host packages: all {len(tuple(packages))} present")
        return ()
    runner.log.info(f"    host packages to install: {' '.join(missing)}")
    prefix = privilege_prefix(runner)
    runner.run([*prefix, "apt-get", "-q", "update"], env=APT_ENV, timeout=600)
    runner.run([*prefix, "apt-get", "-q", "-y", "--no-install-recommends", "install", *missing],
               env=APT_ENV, timeout=3600)
    return missing
