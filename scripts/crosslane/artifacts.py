"""Build outputs as one file per arch × component, for CI's "build once, smoke many" jobs.

`pack` puts a component's install folder and stamp into a tar.gz under a `crosslane-pack/` top folder with
a manifest; links that leave the component's folder (the `provided` recipe links into the sysroot, which
every job makes itself) are left out and the manifest says to remake the component after unpacking.
`unpack` extracts through sources/safe_extract (no absolute paths, no `..`, no links out) and moves each
component folder into the build tree; a `provided` component is then remade in place, which costs nothing.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

from crosslane import stamps
from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.errors import ConfigError, UsageError
from crosslane.report import Check, Row, Verdict
from crosslane.sources import safe_extract

TOP = "crosslane-pack"
MANIFEST = "manifest.json"


def _inside(link: Path, root: Path) -> bool:
    target = Path(os.path.normpath(link.parent / os.readlink(link)))
    return target.is_relative_to(root)


def pack(ctx: Context, arch: Arch, component: str, output: Path) -> list[Row]:
    folder = ctx.component_dir(arch, component)
    if component not in ctx.config.components:
        raise UsageError(f"unknown component '{component}' (known: {', '.join(ctx.config.components)})")
    install = folder / "install"
    if not install.is_dir() or stamps.read(folder) is None:
        raise UsageError(f"{folder}: not built", fix=f"invoke build --arch {arch} --component {component}")
    recipe = ctx.config.components[component].recipe
    output.parent.mkdir(parents=True, exist_ok=True)
    skipped = 0
    with tarfile.open(output, "w:gz") as tar:
        manifest = json.dumps({"arch": arch.value, "component": component, "recipe": recipe}).encode()
        info = tarfile.TarInfo(f"{TOP}/{MANIFEST}")
        info.size = len(manifest)
        tar.addfile(info, fileobj=io.BytesIO(manifest))
        base = f"{TOP}/{arch.value}/{component}"
        tar.add(folder / stamps.STAMP, f"{base}/{stamps.STAMP}")
        for path in sorted([install, *install.rglob("*")]):
            if path.is_symlink() and not _inside(path, folder):
                skipped += 1
                continue
            tar.add(path, f"{base}/{path.relative_to(folder)}", recursive=False)
    note = f"; {skipped} links into the sysroot left out (remade on unpack)" if skipped else ""
    return [Row(component, arch.value, Check.ARTIFACT, Verdict.PASS,
                f"{output} ({output.stat().st_size / 1e6:.1f} MB){note}", subject="pack")]


def unpack(ctx: Context, archive: Path) -> list[Row]:
    from crosslane import pipeline

    with tempfile.TemporaryDirectory(prefix="crosslane-unpack-") as tmp:
        tree = safe_extract.extract(archive, Path(tmp) / "tree")
        try:
            manifest = json.loads((tree / MANIFEST).read_text())
            arch, component = Arch(manifest["arch"]), str(manifest["component"])
        except (OSError, ValueError, KeyError, TypeError):
            raise ConfigError(f"{archive}: not a crosslane pack (no valid {MANIFEST})",
                              fix="pass a file `invoke pack` wrote") from None
        if component not in ctx.config.components:
            raise ConfigError(f"{archive}: packs component '{component}', which versions.toml does not have")
        final = ctx.component_dir(arch, component)
        shutil.rmtree(final / "install", ignore_errors=True)
        final.mkdir(parents=True, exist_ok=True)
        for entry in (tree / arch.value / component).iterdir():
            shutil.move(str(entry), final / entry.name)
    rows = [Row(component, arch.value, Check.ARTIFACT, Verdict.PASS, f"{archive.name} → {final}", subject="unpack")]
    if manifest.get("recipe") == "provided":
        rows += pipeline.build_components(ctx, arch, [component], force=True)
    return rows
