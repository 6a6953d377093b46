"""The DT_NEEDED scan: resolve every needed soname the way the target's ld.so would, inside the sysroot.

Search order per object: DT_RPATH (only when there is no DT_RUNPATH), DT_RUNPATH (`$ORIGIN` expanded;
other absolute entries re-rooted in the sysroot), the staging prefix, the other artifacts of the build,
then the sysroot's library folders (/lib/<triplet>, /usr/lib/<triplet>, /lib, /usr/lib, the loader's
folder and every folder its etc/ld.so.conf(.d) names). A candidate of another machine is skipped, as
ld.so skips it. Dependencies are followed transitively; unresolved sonames are reported per file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from crosslane.archs import Arch, info
from crosslane.gates import elf, row
from crosslane.report import Row, Verdict

ORIGIN_TOKENS = ("${ORIGIN}", "$ORIGIN")


def _reroot(sysroot: Path, target_path: str) -> Path:
    return sysroot / PurePosixPath(target_path).relative_to("/")


def ld_so_conf_dirs(sysroot: Path) -> list[Path]:
    """Folders listed by the sysroot's etc/ld.so.conf and the files it includes (ld.so.conf.d/*.conf)."""
    found: list[Path] = []
    seen: set[Path] = set()

    def read(conf: Path) -> None:
        if conf in seen or not conf.is_file():
            return
        seen.add(conf)
        for raw in conf.read_text(encoding="utf-8", errors="replace").splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("include "):
                pattern = line.removeprefix("include ").strip()
                base = PurePosixPath(pattern if pattern.startswith("/") else f"/etc/{pattern}")
                for match in sorted(_reroot(sysroot, str(base.parent)).glob(base.name)):
                    read(match)
            elif line.startswith("/"):
                found.append(_reroot(sysroot, line))

    read(sysroot / "etc" / "ld.so.conf")
    if not seen:
        for conf in sorted((sysroot / "etc" / "ld.so.conf.d").glob("*.conf")):
            read(conf)
    return found


def sysroot_dirs(sysroot: Path, arch: Arch) -> list[Path]:
    triplet = info(arch).multiarch
    loader_dir = str(PurePosixPath(info(arch).dynamic_loader).parent)
    default = [f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib", "/usr/lib", loader_dir]
    return _unique([*ld_so_conf_dirs(sysroot), *(_reroot(sysroot, d) for d in default)])


def _unique(paths: Iterable[Path]) -> list[Path]:
    result: list[Path] = []
    for path in paths:
        if path not in result:
            result.append(path)
    return result


@dataclass
class Resolver:
    arch: Arch
    sysroot: Path | None
    staging: Sequence[Path] = ()
    artifacts: Sequence[Path] = ()
    _cache: dict[Path, elf.ElfInfo | elf.ElfDefect] = field(default_factory=dict)
    _system: list[Path] | None = None

    def common_dirs(self) -> list[Path]:
        if self._system is None:
            triplet = info(self.arch).multiarch
            staged = [p / sub for p in self.staging for sub in ("lib", f"lib/{triplet}", "lib64", "")]
            system = sysroot_dirs(self.sysroot, self.arch) if self.sysroot else []
            self._system = _unique([*staged, *self.artifacts, *system])
        return self._system

    def read(self, path: Path) -> elf.ElfInfo | elf.ElfDefect:
        key = path.resolve()
        if key not in self._cache:
            self._cache[key] = elf.read_links(key)
        return self._cache[key]

    def _expand(self, entry: str, origin: Path) -> Path:
        for token in ORIGIN_TOKENS:
            if token in entry:
                return Path(entry.replace(token, str(origin)))
        if entry.startswith("/") and self.sysroot is not None:
            return _reroot(self.sysroot, entry)
        return origin / entry

    def search_dirs(self, obj: elf.ElfInfo) -> list[Path]:
        origin = obj.path.parent
        own = [*(() if obj.runpath else obj.rpath), *obj.runpath]
        return _unique([*(self._expand(e, origin) for e in own), *self.common_dirs()])

    def find(self, soname: str, obj: elf.ElfInfo) -> Path | None:
        if "/" in soname:
            candidates = [self._expand(soname, obj.path.parent)]
        else:
            candidates = [folder / soname for folder in self.search_dirs(obj)]
        want = info(self.arch)
        for candidate in candidates:
            if not candidate.is_file():
                continue
            found = self.read(candidate)
            if isinstance(found, elf.ElfInfo) and (found.machine, found.elf_class) != (want.elf_machine,
                                                                                       want.elf_class):
                continue
            return candidate
        return None

    def closure(self, obj: elf.ElfInfo) -> tuple[list[tuple[str, str]], list[elf.ElfInfo]]:
        """(unresolved (soname, needed-by) pairs, every ELF object loaded) for *obj* and its dependencies."""
        missing: list[tuple[str, str]] = []
        loaded: list[elf.ElfInfo] = [obj]
        seen: set[Path] = {obj.path.resolve()}
        queue = [obj]
        while queue:
            current = queue.pop(0)
            for soname in current.needed:
                path = self.find(soname, current)
                if path is None:
                    if all(m[0] != soname for m in missing):
                        missing.append((soname, current.path.name))
                    continue
                key = path.resolve()
                if key in seen:
                    continue
                seen.add(key)
                dep = self.read(path)
                if isinstance(dep, elf.ElfInfo):
                    loaded.append(dep)
                    queue.append(dep)
        return missing, loaded


def scan_one(resolver: Resolver, obj: elf.ElfInfo, subject: str) -> Row:
    arch = resolver.arch
    missing, loaded = resolver.closure(obj)
    problems = []
    if missing:
        problems.append("unresolved " + ", ".join(
            soname if by == obj.path.name else f"{soname} (needed by {by})" for soname, by in missing))
    links_atomic = any(o.soname == elf.LIBATOMIC or o.path.name.startswith(elf.LIBATOMIC) for o in loaded[1:])
    if obj.needs_libatomic and not links_atomic:
        shown = ", ".join(obj.undefined_atomics[:3]) + ("…" if len(obj.undefined_atomics) > 3 else "")
        problems.append(f"undefined {shown} and no libatomic loaded; hint: link with -latomic")
    if problems:
        return row(subject, arch, "dt-needed", Verdict.FAIL, f"{subject}: {'; '.join(problems)}")
    return row(subject, arch, "dt-needed", Verdict.PASS,
               f"{len(obj.needed)} needed, {len(loaded) - 1} loaded in all, all resolved")


def scan(resolver: Resolver, objects: Sequence[tuple[elf.ElfInfo, str]]) -> list[Row]:
    """One dt-needed row per (object, subject); SKIP when there is no sysroot to resolve against."""
    if resolver.sysroot is None:
        return [row(subject, resolver.arch, "dt-needed", Verdict.SKIP,
                    f"no {resolver.arch} sysroot to resolve against; run invoke sysroot --arch {resolver.arch}")
                for _, subject in objects]
    return [scan_one(resolver, obj, subject) for obj, subject in objects]
