"""The DT_NEEDED scan: resolve every needed soname the way the target's ld.so would, inside the sysroot.

Search order per object (glibc's _dl_map_object): a library already loaded under that name (its SONAME, or the
name it was loaded by); DT_RPATH of the object and of every object up the chain that loaded it (only when the
object has no DT_RUNPATH); its DT_RUNPATH (`$ORIGIN` expanded; other absolute entries re-rooted in the sysroot);
the prefixes declared as staging; then the sysroot's library folders (/lib/<triplet>, /usr/lib/<triplet>, /lib,
/usr/lib, the loader's folder and every folder its etc/ld.so.conf(.d) names). A candidate of another machine is
skipped, as ld.so skips it. Dependencies are followed transitively; unresolved sonames are reported per file.

A file beside another shipped file is not found for being there: a program in bin/ needs a RUNPATH such as
`$ORIGIN/../lib` to load the library in lib/, and without one the scan fails as the program would (exit 127).
Only a wheel's scan adds the wheel's own folders (`artifacts`): its libraries load into a Python process that
may already hold them.
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
    # Folders of the files scanned that ld.so does not search: only to say where an unresolved library lies.
    shipped: Sequence[Path] = ()
    _cache: dict[Path, elf.ElfInfo | elf.ElfDefect] = field(default_factory=dict)
    _system: list[Path] | None = None

    def common_dirs(self) -> list[Path]:
        if self._system is None:
            triplet = info(self.arch).multiarch
            staged = [p / sub for p in self.staging for sub in ("lib", f"lib/{triplet}", "lib64", "")]
            system = sysroot_dirs(self.sysroot, self.arch) if self.sysroot else []
            self._system = _unique([*staged, *self.artifacts, *system])
        return self._system

    def knows(self, found: Sequence[elf.ElfInfo]) -> None:
        """Facts already read (the scanned files, by elf.read): a library among them is not read again."""
        for one in found:
            self._cache.setdefault(one.path.resolve(), one)

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

    def search_dirs(self, obj: elf.ElfInfo, loaders: Sequence[elf.ElfInfo] = ()) -> list[Path]:
        """Where ld.so looks for what *obj* needs; *loaders*: the objects that loaded it, nearest first."""
        inherited = () if obj.runpath else [(e, o.path.parent) for o in (obj, *loaders) for e in o.rpath]
        own = [*inherited, *((e, obj.path.parent) for e in obj.runpath)]
        return _unique([*(self._expand(entry, origin) for entry, origin in own), *self.common_dirs()])

    def find(self, soname: str, obj: elf.ElfInfo, loaders: Sequence[elf.ElfInfo] = ()) -> Path | None:
        if "/" in soname:
            candidates = [self._expand(soname, obj.path.parent)]
        else:
            candidates = [folder / soname for folder in self.search_dirs(obj, loaders)]
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
        """(unresolved (soname, needed-by) pairs, every ELF object loaded) for *obj* and its dependencies, loaded
        breadth first as ld.so loads them."""
        missing: list[tuple[str, str]] = []
        loaded: list[elf.ElfInfo] = [obj]
        seen: set[Path] = {obj.path.resolve()}
        # ld.so reuses a loaded object whose SONAME (or the name it was loaded by) is the one needed.
        names: set[str] = {obj.soname} if obj.soname else set()
        queue: list[tuple[elf.ElfInfo, tuple[elf.ElfInfo, ...]]] = [(obj, ())]
        while queue:
            current, loaders = queue.pop(0)
            for soname in current.needed:
                if soname in names:
                    continue
                path = self.find(soname, current, loaders)
                if path is None:
                    if all(m[0] != soname for m in missing):
                        missing.append((soname, current.path.name))
                    continue
                names.add(soname)
                key = path.resolve()
                if key in seen:
                    continue
                seen.add(key)
                dep = self.read(path)
                if isinstance(dep, elf.ElfInfo):
                    names.update([dep.soname] if dep.soname else [])
                    loaded.append(dep)
                    queue.append((dep, (current, *loaders)))
        return missing, loaded


def searched(resolver: Resolver, obj: elf.ElfInfo, sonames: Sequence[str]) -> str:
    """Where the loader looked for *obj*'s libraries, and where a shipped copy of one lies that it does not reach."""
    paths = "RUNPATH " + ":".join(obj.runpath) if obj.runpath else "RPATH " + ":".join(obj.rpath) if obj.rpath \
        else "no RUNPATH"
    text = f"{obj.path.name} has {paths}; searched with the sysroot's library folders"
    beside = [folder / name for name in sonames for folder in resolver.shipped if (folder / name).is_file()]
    if beside:
        text += (f"; {beside[0].name} is shipped in {beside[0].parent} where the loader does not look: link with "
                 "an install RPATH that reaches it (CMake: CMAKE_INSTALL_RPATH=$ORIGIN/../lib)")
    return text


def scan_one(resolver: Resolver, obj: elf.ElfInfo, subject: str) -> Row:
    arch = resolver.arch
    missing, loaded = resolver.closure(obj)
    problems = []
    if missing:
        problems.append("unresolved " + ", ".join(
            soname if by == obj.path.name else f"{soname} (needed by {by})" for soname, by in missing)
            + f" ({searched(resolver, obj, [soname for soname, _ in missing])})")
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
