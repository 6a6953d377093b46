"""The provided recipe: a component the target sysroot already ships as a Debian package.

Nothing is built: the step proves the package is in the sysroot, names its version (from the sysroot's
manifest) and records both in build/<arch>/<component>/install/crosslane-provided.json, so the smoke
tests exactly what Debian ships. `links` make the install folder a prefix other builds can use (ORT_HOME:
include/ and lib/ pointing into the sysroot), so they compile against exactly the chain's package.
"""

from __future__ import annotations

import json

from crosslane.archs import Arch, info
from crosslane.config import Component, SysrootPackage
from crosslane.context import Context
from crosslane.contract import Outcome, Request
from crosslane.errors import ConfigError
from crosslane.recipes import Built, built
from crosslane.report import Check, Row, Verdict

# Written into the component's install folder, so later steps see it installed and know what it is.
PROVIDED = "crosslane-provided.json"


def package_version(packages: list[dict[str, str]], package: str) -> str | None:
    """The version of *package* among a sysroot manifest's entries, None when it is not there."""
    return next((entry["version"] for entry in packages if entry.get("package") == package), None)


def run(request: Request) -> Outcome[Built]:
    """The contract's call (registry.RECIPES): what the sysroot ships, recorded; no source is prepared for it."""
    return built(record(request.ctx, request.spec, request.arch))


def record(ctx: Context, component: Component, arch: Arch) -> Row:
    source = component.sources[0]
    if not isinstance(source, SysrootPackage):  # the loader pairs this recipe with a sysroot-package source
        raise ConfigError(f"versions.toml: components.{component.name}: recipe 'provided' needs a sysroot-package "
                          "source")
    package = source.package
    if ctx.runner.dry_run:
        return Row(component=component.name, arch=arch, check=Check.BUILD, verdict=Verdict.SKIP,
                   reason=f"dry run (provided by {package})")
    root = ctx.sysroot(arch)
    version = package_version(root.packages(), package)
    if version is None:
        return Row(component=component.name, arch=arch, check=Check.BUILD, verdict=Verdict.FAIL,
                   reason=f"{package} is not in the {arch} sysroot; add it to sysroot.packages in versions.toml "
                   f"and run invoke sysroot --arch {arch}")
    install = ctx.component_dir(arch, component.name) / "install"
    install.mkdir(parents=True, exist_ok=True)
    for link, target in component.links.items():
        where = root.path / target.format(multiarch=info(arch).multiarch)
        if not where.exists():
            return Row(component=component.name, arch=arch, check=Check.BUILD, verdict=Verdict.FAIL,
                       reason=f"{where} is not in the {arch} sysroot (components.{component.name}.links.{link}); "
                       "add the package that ships it to sysroot.packages")
        made = install / link
        # Left alone when already right: a rewrite changes the folder's times, which gates and dependents key on.
        if made.is_symlink() and made.readlink() == where:
            continue
        if made.is_symlink() or made.exists():
            made.unlink()
        made.symlink_to(where)
    what = {"package": package, "version": version, "sysroot": str(root.path), "links": dict(component.links)}
    text = json.dumps(what, indent=1, sort_keys=True) + "\n"
    record_file = install / PROVIDED
    if not record_file.is_file() or record_file.read_text() != text:
        record_file.write_text(text)
    return Row(component=component.name, arch=arch, check=Check.BUILD, verdict=Verdict.PASS,
               reason=f"provided by the sysroot (Debian {package} {version})")
