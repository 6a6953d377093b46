"""Debian sysroots: resolve with apt in an isolated configuration, download, extract, fix up.

The host's apt state and sources are never touched: apt runs with its own Dir::State, Dir::Cache
and sources list under a work folder. The sysroot is assembled in a temporary folder and renamed
into place, keyed by a hash of its inputs; a manifest records package=version and each .deb's sha256, and which
package installed which file (from each .deb's own file list, read while extracting: what an SBOM or a licence
names as a bundled library's origin is that record, not a guess made later).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import shutil
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from crosslane.archs import Arch, info
from crosslane.config import SysrootSpec
from crosslane.errors import IntegrityError, MissingPrerequisite, StepFailed
from crosslane.files import atomic, bounded, stamps
from crosslane.files.paths import cache_dir
from crosslane.log import Progress
from crosslane.process.runner import Runner

# Bump when the assembly below changes, so old sysroots are not reused.
FORMAT = 4
MANIFEST = "crosslane-manifest.json"
OWNERS = "crosslane-files.json"  # path inside the sysroot -> the package whose .deb holds it
CONTROL = "var/lib/crosslane-control"
USRMERGE_DIRS = ("bin", "sbin", "lib", "lib64")


@dataclass(frozen=True)
class Sysroot:
    """A built sysroot: its arch, folder and the key of the inputs it was made from."""

    arch: Arch
    path: Path
    key: str

    def packages(self) -> list[dict[str, str]]:
        """package, version and sha256 of every .deb the sysroot was made from. A cache crosses jobs: a manifest
        that is not what crosslane wrote is an error naming it and the fix, never a traceback."""
        data = bounded.read_json(self.path / MANIFEST, error=IntegrityError, fix=self.remake)
        found = data.get("packages") if isinstance(data, dict) else None
        if not isinstance(found, list) or not all(
                isinstance(p, dict) and all(isinstance(p.get(k), str) for k in ("package", "version", "sha256"))
                for p in found):
            raise IntegrityError(f"{self.path / MANIFEST}: not a sysroot manifest crosslane wrote (packages, each "
                                 "with package, version, sha256)", fix=self.remake)
        return found

    @property
    def remake(self) -> str:
        return f"delete {self.path} and run invoke sysroot --arch {self.arch}"

    def owner(self, path: Path) -> Owner | None:
        """The package whose .deb installed *path* (a file of this sysroot; a link is followed inside it), or None
        for a file no package holds."""
        try:
            relative = path.resolve().relative_to(self.path.resolve()).as_posix()
        except ValueError:
            return None
        return self.owners.get(relative)

    @functools.cached_property
    def owners(self) -> Mapping[str, Owner]:
        """path -> Owner of every file, read once per Sysroot value (a wheel's papers ask for ~40 libraries)."""
        return MappingProxyType(read_owners(self.path))


@dataclass(frozen=True)
class Owner:
    """A package of the sysroot as its .deb states it: name, version, architecture, source package, the .deb's
    sha256, and the folder of its documentation (copyright) inside the sysroot."""

    package: str
    version: str
    architecture: str
    source: str
    deb_sha256: str

    @property
    def copyright(self) -> str:
        return f"usr/share/doc/{self.package}/copyright"


def read_owners(root: Path) -> dict[str, Owner]:
    """path -> Owner for every file the sysroot's packages installed (OWNERS, written by write_manifest)."""
    fix = f"delete {root} and make it again (invoke sysroot)"
    data = bounded.read_json(root / OWNERS, error=IntegrityError, fix=fix, limit=64 << 20)
    records = data.get("packages") if isinstance(data, dict) else None
    owners = {}
    for record in records if isinstance(records, list) else [None]:
        fields = [record.get(k) for k in ("package", "version", "architecture", "source", "sha256")] \
            if isinstance(record, dict) else [None]
        files = record.get("files") if isinstance(record, dict) else None
        if not all(isinstance(f, str) for f in fields) or not isinstance(files, list):
            raise IntegrityError(f"{root / OWNERS}: not the file record crosslane wrote", fix=fix)
        owner = Owner(*(str(f) for f in fields))
        owners.update(dict.fromkeys((str(name) for name in files), owner))
    return owners


def inputs(spec: SysrootSpec, arch: Arch) -> dict[str, object]:
    return {"format": FORMAT, "suite": spec.suite, "mirror": spec.mirror, "arch": info(arch).debian_arch,
            "packages": sorted(spec.packages_for(arch))}


def sysroot_key(spec: SysrootSpec, arch: Arch) -> str:
    return hashlib.sha256(json.dumps(inputs(spec, arch), sort_keys=True).encode()).hexdigest()[:16]


def sysroot_path(spec: SysrootSpec, arch: Arch) -> Path:
    return cache_dir() / "sysroots" / f"{arch}-{spec.suite}-{sysroot_key(spec, arch)}"


def find(spec: SysrootSpec, arch: Arch) -> Sysroot | None:
    path = sysroot_path(spec, arch)
    if (path / MANIFEST).is_file():
        return Sysroot(arch, path, sysroot_key(spec, arch))
    return None


def ensure(runner: Runner, spec: SysrootSpec, arch: Arch) -> Sysroot:
    existing = find(spec, arch)
    if existing:
        runner.log.info(f"    sysroot {arch}: up to date ({existing.path})")
        return existing
    final = sysroot_path(spec, arch)
    final.parent.mkdir(parents=True, exist_ok=True)
    atomic.sweep_stale(final)
    work = final.with_name(f".{final.name}.{os.getpid()}.work")
    if not Path(spec.keyring).is_file():
        raise MissingPrerequisite(f"archive keyring {spec.keyring} not found",
                                  fix="apt-get install debian-archive-keyring, or set sysroot.keyring")
    shutil.rmtree(work, ignore_errors=True)
    try:
        debs = download(runner, spec, arch, work / "apt")
        if runner.dry_run:
            assemble(runner, work / "root", debs, arch)
            return Sysroot(arch, final, sysroot_key(spec, arch))
        with atomic.publish_dir(final, lambda _: find(spec, arch) is not None) as root:
            assemble(runner, root, debs, arch)
            write_manifest(root, debs, inputs(spec, arch))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Sysroot(arch, final, sysroot_key(spec, arch))


def apt_config(spec: SysrootSpec, arch: Arch, state: Path) -> Path:
    for sub in ("etc/apt/apt.conf.d", "etc/apt/preferences.d", "etc/apt/sources.list.d", "lists/partial",
                "archives/partial"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "status").touch()
    deb_arch = info(arch).debian_arch
    (state / "etc/apt/sources.list").write_text(
        f"deb [arch={deb_arch} signed-by={spec.keyring}] {spec.mirror} {spec.suite} main\n")
    conf = state / "apt.conf"
    options = {
        "Dir": f"{state}/", "Dir::State": str(state), "Dir::State::Lists": f"{state}/lists",
        "Dir::State::status": f"{state}/status", "Dir::Cache": str(state),
        "Dir::Cache::archives": f"{state}/archives", "Dir::Etc": f"{state}/etc/apt",
        "APT::Architecture": deb_arch, "APT::Install-Recommends": "false", "APT::Install-Suggests": "false",
        "Acquire::Languages": "none", "Acquire::http::Timeout": "30", "Acquire::Retries": "2",
        # Testing suites' Release files expire; a mirror serving a stale one would stop apt. The signature is
        # still checked, and the manifest records exactly which versions were resolved.
        "Acquire::Check-Valid-Until": "false",
        "Debug::NoLocking": "true",
    }
    lines = [f'{key} "{value}";' for key, value in options.items()]
    lines.append(f'APT::Architectures {{ "{deb_arch}"; }};')
    conf.write_text("\n".join(lines) + "\n")
    return conf


def download(runner: Runner, spec: SysrootSpec, arch: Arch, state: Path) -> list[Path]:
    conf = apt_config(spec, arch, state)
    env = {"APT_CONFIG": str(conf), "DEBIAN_FRONTEND": "noninteractive"}
    runner.run(["apt-get", "-q", "update"], env=env, timeout=600, check=False)
    if not runner.dry_run and not any((state / "lists").glob("*_Packages*")):
        raise MissingPrerequisite(f"could not download the package index of {spec.mirror} {spec.suite} "
                                  f"for {arch}", fix="check the network or set sysroot.mirror in versions.toml")
    packages = spec.packages_for(arch)
    progress = Progress(runner.log, f"download {arch} packages")
    runner.run(["apt-get", "-q", "-y", "--download-only", "install", *packages], env=env, timeout=1800,
               on_line=lambda line: progress.advance(detail=line.split()[3]) if line.startswith("Get:") else None)
    progress.close()
    return sorted((state / "archives").glob("*.deb"))


def assemble(runner: Runner, root: Path, debs: list[Path], arch: Arch) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name in ("usr/bin", "usr/sbin", "usr/lib", "usr/lib64"):
        (root / name).mkdir(parents=True, exist_ok=True)
    for name in USRMERGE_DIRS:
        (root / name).symlink_to(f"usr/{name}")
    progress = Progress(runner.log, f"extract {arch} packages", total=len(debs))

    control = root / CONTROL
    control.mkdir(parents=True, exist_ok=True)

    def extract(deb: Path) -> None:
        runner.run(["dpkg-deb", "-x", deb, root], quiet=True)
        runner.run(["dpkg-deb", "-e", deb, control / deb.stem], quiet=True)
        listed: list[str] = []  # every line: the runner keeps only the last ones of its output
        runner.run(["dpkg-deb", "-c", deb], quiet=True, on_line=listed.append)
        atomic.write_text(control / deb.stem / "files", "\n".join(listed_paths(listed)) + "\n")
        progress.advance(detail=deb.name)

    if not runner.dry_run:
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            list(pool.map(extract, debs))
    progress.close()
    if runner.dry_run:
        return
    apply_alternatives(root)
    relativize_links(root)


def parse_alternatives(script: str) -> list[tuple[str, str, str, int]]:
    """(link, name, path, priority) for every `update-alternatives --install` (and its --slave lines)."""
    joined = script.replace("\\\n", " ")
    found: list[tuple[str, str, str, int]] = []
    for line in joined.splitlines():
        if "update-alternatives" not in line or "--install" not in line:
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if "--install" not in words:
            continue
        at = words.index("--install")
        if len(words) < at + 5:
            continue  # `--install "$@"` and other forms that name no link here
        link, name, path, priority = words[at + 1: at + 5]
        if "$" in link + path or not (priority.isascii() and priority.isdigit()) or len(priority) > 9 \
                or not (_inside_path(link) and _inside_path(path)):
            continue
        found.append((link, name, path, int(priority)))
        rest = words[at + 5:]
        for index, word in enumerate(rest):
            if word == "--slave" and len(rest) > index + 3:
                slave_link, slave_name, slave_path = rest[index + 1: index + 4]
                if _inside_path(slave_link) and _inside_path(slave_path):
                    found.append((slave_link, slave_name, slave_path, int(priority)))
    return found


def _inside_path(path: str) -> bool:
    """An absolute path with no '..': what update-alternatives names, kept inside the sysroot it is made in."""
    return path.startswith("/") and ".." not in path.split("/")


def apply_alternatives(root: Path) -> None:
    """Make the links postinst scripts would have made, highest priority per name."""
    best: dict[str, tuple[str, str, int]] = {}
    for postinst in sorted((root / "var/lib/crosslane-control").glob("*/postinst")):
        for link, name, path, priority in parse_alternatives(postinst.read_text(errors="replace")):
            if (root / path.lstrip("/")).exists() and (name not in best or priority > best[name][2]):
                best[name] = (link, path, priority)
    for link, path, _ in best.values():
        target = root / link.lstrip("/")
        if target.exists() or target.is_symlink():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(os.path.relpath(root / path.lstrip("/"), target.parent))


def relativize_links(root: Path) -> None:
    """Absolute symlinks point into the host; make them point inside the sysroot."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            link = Path(dirpath) / name
            if not link.is_symlink():
                continue
            dest = os.readlink(link)
            if dest.startswith("/"):
                link.unlink()
                # normpath first: "/../../etc/passwd" is /etc/passwd of the root, never a path above it
                link.symlink_to(os.path.relpath(root / os.path.normpath(dest).lstrip("/"), link.parent))


def listed_paths(lines: list[str]) -> list[str]:
    """The regular files and links of a `dpkg-deb -c` listing (tar's verbose lines: mode, owner, size, date, time,
    then the path, `./`-prefixed, and ` -> target` for a link), as paths inside the root."""
    paths = []
    for line in lines:
        fields = line.split(None, 5)
        if len(fields) < 6 or fields[0][:1] not in ("-", "l", "h"):
            continue
        name = fields[5]
        if fields[0][0] == "l":
            name = name.rsplit(" -> ", 1)[0]
        elif fields[0][0] == "h":
            name = name.rsplit(" link to ", 1)[0]
        paths.append(name.removeprefix("./"))
    return paths


def control_fields(text: str) -> dict[str, str]:
    """The first paragraph of a DEBIAN/control file: field -> value (continuation lines dropped)."""
    fields = {}
    for line in text.splitlines():
        if not line.strip():
            break
        if line[:1] in (" ", "\t") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def write_manifest(root: Path, debs: list[Path], key_inputs: dict[str, object]) -> None:
    packages, owners = [], []
    for deb in debs:
        digest = stamps.file_sha256(deb)
        fields = control_fields((root / CONTROL / deb.stem / "control").read_text(errors="replace"))
        name, version = fields.get("Package", ""), fields.get("Version", "")
        if not name or not version:
            raise StepFailed(f"{deb.name}: its control file names no Package or Version")
        packages.append({"package": name, "version": version, "sha256": digest})
        source = fields.get("Source", name).split(" ")[0]  # "Source: name (version)" when the versions differ
        files = (root / CONTROL / deb.stem / "files").read_text().split("\n")
        owners.append({"package": name, "version": version, "architecture": fields.get("Architecture", ""),
                       "source": source, "sha256": digest, "files": [f for f in files if f]})
    if not packages:
        raise StepFailed("apt downloaded no packages for the sysroot")
    data = {"inputs": key_inputs, "packages": packages}
    (root / OWNERS).write_text(json.dumps({"packages": owners}, sort_keys=True) + "\n")
    (root / MANIFEST).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
