"""A target site-packages folder made on the host: a given wheel plus its dependencies, for the target's CPython.

No pip runs under qemu. The host's pip downloads the wheel's dependencies for the target platform
(`pip download --platform … --python-version X.Y --only-binary=:all:`), and every wheel is unpacked into
one folder that the payload driver puts first on the target's PYTHONPATH (ahead of the sysroot's own
dist-packages, whose numpy would otherwise shadow PyPI's). The platform tags are derived from the arch
table and the sysroot's glibc: manylinux_2_N for every N from 17 to the sysroot's, manylinux2014, linux.
The given wheel is unpacked even when its tags do not fit the arch, so the smoke can show that it cannot
load there; a dependency with no wheel for the target is reported, and the sysroot's copy (if any) is
what the target then sees.
"""

from __future__ import annotations

import configparser
import email.parser
import re
import shutil
import sys
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import installer
from installer.destinations import SchemeDictionaryDestination
from installer.exceptions import InstallerError
from installer.sources import WheelFile
from packaging.markers import InvalidMarker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from crosslane.archs import Arch, info
from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.files import wheelzip
from crosslane.gates import prune
from crosslane.guest import cpython
from crosslane.guest.sysroot import Sysroot
from crosslane.recipes.provided import package_version

OLDEST_MANYLINUX_GLIBC = 17
TARGET_INTERPRETER = "/usr/bin/python3"  # the sysroot's CPython, as the target sees it
PIP_TIMEOUT = 900.0


@dataclass(frozen=True)
class SiteInstall:
    site: Path
    wheel_fits: bool
    installed: tuple[str, ...]
    missing: tuple[str, ...]
    pruned: tuple[str, ...] = ()

    def describe(self) -> str:
        text = f"unpacked {', '.join(self.installed)} into {self.site}"
        if self.pruned:
            text += f"; GPU variants removed: {', '.join(self.pruned)}"
        if self.missing:
            text += f"; no wheel for the target: {', '.join(self.missing)}"
        return text


TARGET_SITE = "target-site"  # under a component's build folder: where its smoke unpacks the wheel it runs


def loaded_folder(component_dir: Path) -> Path:
    """The folder a smoke loads a component's own code from: the site its wheel was unpacked into (rebuilt by each
    smoke that installs one), else the component's install folder."""
    site = component_dir / TARGET_SITE / "site"
    return site if site.is_dir() else component_dir / "install"


def glibc_version(root: Sysroot) -> tuple[int, int] | None:
    version = package_version(root.packages(), "libc6")
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def platform_tags(arch: Arch, glibc: tuple[int, int] | None) -> list[str]:
    machine = info(arch).wheel_platform.removeprefix("linux_")
    tags = []
    if glibc is not None:
        tags += [f"manylinux_{glibc[0]}_{minor}_{machine}" for minor in range(glibc[1], OLDEST_MANYLINUX_GLIBC - 1, -1)]
        tags.append(f"manylinux2014_{machine}")
    tags.append(info(arch).wheel_platform)
    return tags


@dataclass(frozen=True, kw_only=True)
class WheelName:
    """What a wheel's file name says: its distribution, version and platform tags."""

    distribution: str
    version: str
    platforms: frozenset[str]


def wheel_identity(wheel: Path) -> WheelName:
    """A wheel's file name, read."""
    try:
        name, version, _, tags = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename as exc:
        raise UsageError(f"--wheel {wheel}: not a wheel file name ({exc})") from None
    return WheelName(distribution=str(name), version=str(version), platforms=frozenset(tag.platform for tag in tags))


def wheel_arch(wheel: Path) -> Arch | None:
    """The arch a wheel's platform tags name (…_x86_64, …_aarch64, …_riscv64), None for none or several."""
    platforms = wheel_identity(wheel).platforms
    found = {a for a in Arch for tag in platforms if tag.endswith("_" + info(a).wheel_platform.removeprefix("linux_"))}
    return next(iter(found)) if len(found) == 1 else None


def given_wheel(given: Sequence[Path], arch: Arch) -> Path | None:
    """Of the --wheel files of one component, the one smoked on *arch*: the only one (whatever its platform: the
    smoke then shows whether it loads), else the one built for *arch*."""
    if len(given) == 1:
        return given[0]
    return next((w for w in given if wheel_arch(w) is arch), None)


def marker_environment(arch: Arch, python_version: str) -> dict[str, str]:
    return {"python_version": python_version, "python_full_version": f"{python_version}.0",
            "platform_machine": info(arch).cmake_processor, "sys_platform": "linux", "platform_system": "Linux",
            "os_name": "posix", "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "extra": ""}


def requirements(wheel: Path, arch: Arch, python_version: str) -> list[str]:
    """The wheel's Requires-Dist entries that apply on the target (extras not requested)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            name = next((n for n in archive.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1),
                        None)
            if name is None:
                raise UsageError(f"--wheel {wheel}: no .dist-info/METADATA inside; not a wheel")
            metadata = email.parser.HeaderParser().parsestr(archive.read(name).decode("utf-8"))
    except (OSError, zipfile.BadZipFile, zlib.error, UnicodeDecodeError) as exc:
        raise UsageError(f"--wheel {wheel}: cannot read it ({exc})") from None
    wanted = []
    env = marker_environment(arch, python_version)
    for line in metadata.get_all("Requires-Dist") or []:
        try:
            requirement = Requirement(line)
            applies = requirement.marker is None or requirement.marker.evaluate(env)
        except (InvalidRequirement, InvalidMarker) as exc:
            raise UsageError(f"--wheel {wheel}: bad Requires-Dist {line!r} ({exc})") from None
        if applies:
            requirement.marker = None
            wanted.append(str(requirement))
    return wanted


def unpack(wheel: Path, site: Path) -> None:
    """Install a wheel into a site folder with pypa/installer (the reference implementation of the wheel spec:
    .data schemes, entry-point scripts, an INSTALLER file; RECORD validated before anything is written; paths
    outside the scheme folders refused), after the wheel gate's own checks (links, bombs, encrypted members).

    Scripts get the target's interpreter path in their #! line; headers and data go next to the site folder.
    """
    try:
        with zipfile.ZipFile(wheel) as archive:
            wheelzip.plan(archive, wheelzip.Limits())
        folder = site.parent
        scheme = {"purelib": site, "platlib": site, "headers": folder / "include", "scripts": folder / "bin",
                  "data": folder / "data"}
        destination = SchemeDictionaryDestination({k: str(v) for k, v in scheme.items()},
                                                  interpreter=TARGET_INTERPRETER, script_kind="posix",
                                                  overwrite_existing=True)
        with WheelFile.open(wheel) as source:
            source.validate_record()  # every member listed, every digest right (install() alone does not check)
            installer.install(source, destination, additional_metadata={"INSTALLER": b"crosslane\n"})
    except (OSError, zipfile.BadZipFile, zlib.error) as exc:
        raise UsageError(f"{wheel}: not a readable wheel ({exc})", fix="delete it and download it again") from None
    except wheelzip.UnsafeWheel as exc:
        raise UsageError(f"{wheel}: refused to unpack ({exc})", fix="the wheel is hostile or broken") from None
    # configparser.Error / AssertionError: a malformed entry_points.txt, which installer parses as it installs.
    except (InstallerError, ValueError, configparser.Error, AssertionError) as exc:
        raise UsageError(f"{wheel}: not a valid wheel ({exc})", fix="delete it and download or build it again") \
            from None


def pip_download(ctx: Context, wanted: list[str], tags: list[str], python_version: str, dest: Path) -> bool:
    nodot = python_version.replace(".", "")
    argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:",
            "--python-version", python_version, "--implementation", "cp",
            "--abi", f"cp{nodot}", "--abi", "abi3", "--abi", "none", "--dest", str(dest)]
    for tag in tags:
        argv += ["--platform", tag]
    result = ctx.runner.run([*argv, "--", *wanted], timeout=PIP_TIMEOUT, check=False)
    return result.ok


def install(ctx: Context, arch: Arch, wheel: Path, folder: Path) -> SiteInstall:
    """Fill *folder*/site with *wheel* and what it requires for *arch*; *folder* is rebuilt every time."""
    root = ctx.sysroot(arch)
    python_version = cpython.locate(root.path, arch).version
    tags = platform_tags(arch, glibc_version(root))
    wheel_platforms = wheel_identity(wheel).platforms
    fits = bool(wheel_platforms & {*tags, "any"})
    if not fits:
        ctx.log.warn(f"{wheel.name} is built for {', '.join(sorted(wheel_platforms))}, not {arch}; "
                     "installing it anyway so the smoke shows whether it loads")
    shutil.rmtree(folder, ignore_errors=True)
    site, dest = folder / "site", folder / "downloads"
    site.mkdir(parents=True)
    dest.mkdir()
    wanted, provided = split_provided(requirements(wheel, arch, python_version), sysroot_distributions(root.path))
    missing: list[str] = []
    if wanted and not pip_download(ctx, wanted, tags, python_version, dest):
        # Find out which requirement has no wheel for the target, and fetch the others one by one.
        missing = [req for req in wanted if not pip_download(ctx, [req], tags, python_version, dest)]
    # A dependency resolved to a GPU flavour (onnxruntime-gpu, …) would shadow the CPU package the smoke means.
    pruned = tuple(p.name for p in prune.prune(dest))
    installed = []
    for dependency in sorted(dest.glob("*.whl")):
        unpack(dependency, site)
        named = wheel_identity(dependency)
        installed.append(f"{named.distribution} {named.version}")
    unpack(wheel, site)
    named = wheel_identity(wheel)
    installed.append(f"{named.distribution} {named.version}")
    installed += [f"{p} (the sysroot's)" for p in provided]
    return SiteInstall(site, fits, tuple(installed), tuple(missing), pruned)


def sysroot_distributions(root: Path) -> dict[str, str]:
    """Python distributions the sysroot's Debian packages installed (dist-packages), by normalized name."""
    found: dict[str, str] = {}
    for meta in (root / "usr/lib/python3/dist-packages").glob("*-*.*-info"):
        name, _, version = meta.name.rsplit(".", 1)[0].partition("-")
        found[canonicalize_name(name)] = version
    return found


def split_provided(wanted: list[str], present: dict[str, str]) -> tuple[list[str], list[str]]:
    """(still to download, satisfied by the sysroot): the chain's own numpy and onnxruntime are used as they are."""
    rest, provided = [], []
    for text in wanted:
        requirement = Requirement(text)
        have = present.get(canonicalize_name(requirement.name))
        try:
            fits = have is not None and requirement.specifier.contains(Version(have), prereleases=True)
        except InvalidVersion:
            fits = False
        if fits:
            provided.append(f"{requirement.name} {have}")
        else:
            rest.append(text)
    return rest, provided


def component_of(config: Config, wheel: Path) -> str | None:
    """The component *wheel* is a build of (by distribution name), None when versions.toml builds no such one."""
    distribution = wheel_identity(wheel).distribution
    return {canonicalize_name(name): name for name in config.components}.get(canonicalize_name(distribution))
