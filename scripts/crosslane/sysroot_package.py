"""Components that the target sysroot already ships as a Debian package (source kind "sysroot-package").

Nothing is built: the build step proves the package is in the sysroot and names its version, read from
the sysroot's manifest, so the smoke tests exactly what Debian ships.
"""

from __future__ import annotations

from collections.abc import Mapping

from .archs import Arch
from .config import Component
from .context import Context
from .report import Row, Verdict

KIND = "sysroot-package"


def package_version(manifest: Mapping[str, object], package: str) -> str | None:
    """The version of *package* recorded in a sysroot manifest, None when it is not there."""
    entries = manifest.get("packages")
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("package") == package:
            version = entry.get("version")
            return str(version) if version is not None else None
    return None


def build_row(ctx: Context, component: Component, arch: Arch) -> Row | None:
    """The build row of a sysroot-provided component; None for components that are really built."""
    spec = component.sources[0]
    if spec.kind != KIND or spec.package is None:
        return None
    if ctx.runner.dry_run:
        return Row(component.name, arch.value, "build", Verdict.SKIP, f"dry run (provided by {spec.package})")
    version = package_version(ctx.sysroot(arch).manifest(), spec.package)
    if version is None:
        return Row(component.name, arch.value, "build", Verdict.FAIL,
                   f"{spec.package} is not in the {arch} sysroot; add it to sysroot.packages in versions.toml "
                   f"and run invoke sysroot --arch {arch}")
    return Row(component.name, arch.value, "build", Verdict.PASS,
               f"provided by the sysroot (Debian {spec.package} {version})")
