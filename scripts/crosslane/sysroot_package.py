"""Components that the target sysroot already ships as a Debian package (source kind "sysroot-package").

Nothing is built: the build step proves the package is in the sysroot, names its version (read from the
sysroot's manifest) and records both in build/<arch>/<component>/install/crosslane-provided.json, so the
smoke tests exactly what Debian ships.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from .archs import Arch
from .config import Component
from .context import Context
from .report import Row, Verdict
from .sysroot import MANIFEST, Sysroot

KIND = "sysroot-package"
# Written into the component's install folder, so later steps see it installed and know what it is.
PROVIDED = "crosslane-provided.json"


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


def installed_version(root: Sysroot, package: str) -> str | None:
    """The version of *package* in the sysroot's manifest (None when absent or the manifest is unreadable)."""
    try:
        manifest = json.loads((root.path / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return package_version(manifest, package) if isinstance(manifest, dict) else None


def build_row(ctx: Context, component: Component, arch: Arch) -> Row | None:
    """The build row of a sysroot-provided component; None for components that are really built."""
    spec = component.sources[0]
    if spec.kind != KIND or spec.package is None:
        return None
    if ctx.runner.dry_run:
        return Row(component.name, arch.value, "build", Verdict.SKIP, f"dry run (provided by {spec.package})")
    version = installed_version(ctx.sysroot(arch), spec.package)
    if version is None:
        return Row(component.name, arch.value, "build", Verdict.FAIL,
                   f"{spec.package} is not in the {arch} sysroot; add it to sysroot.packages in versions.toml "
                   f"and run invoke sysroot --arch {arch}")
    install = ctx.component_dir(arch, component.name) / "install"
    install.mkdir(parents=True, exist_ok=True)
    record = {"package": spec.package, "version": version, "sysroot": str(ctx.sysroot(arch).path)}
    (install / PROVIDED).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return Row(component.name, arch.value, "build", Verdict.PASS,
               f"provided by the sysroot (Debian {spec.package} {version})")
