"""The qemu-user a suite runs under: the host's, or a tool root's where versions.toml says so (tests.emulator)."""

from __future__ import annotations

from crosslane.archs import Arch
from crosslane.config import SuiteSpec
from crosslane.context import Context
from crosslane.guest import qemu
from crosslane.host import toolroot


def qemu_for(ctx: Context, arch: Arch, spec: SuiteSpec) -> str | None:
    """A tool root's qemu-user for *arch*, made if need be; None: the host's."""
    name = spec.emulator.get(arch)
    if name is None:
        return None
    root = toolroot.ensure(ctx.runner, ctx.config.toolroots[name])
    return qemu.from_toolroot(root.path, name, arch)
