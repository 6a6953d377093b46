"""`invoke verify --arch A PATH...`: the applicable gates on any mix of wheels, folders and ELF files.

wheel   → platform tag, safe unpack, RECORD, then per member: ELF arch, EXT_SUFFIX, DT_NEEDED; a manylinux
          tag in its name is checked against auditwheel's policies for its contents (gates/manylinux.py)
folder  → every wheel in it as above; every ELF (by magic) or .so-named file: ELF arch, EXT_SUFFIX, DT_NEEDED
ELF     → ELF arch, EXT_SUFFIX, DT_NEEDED
and on all ELF files found: RUNPATH (no build-machine paths) and the glibc floor against the target's glibc.
DT_NEEDED resolves as the target's loader would: through each file's RUNPATH/RPATH, the --staging prefixes and the
arch's sysroot (SKIP when none is built). A library shipped beside a program it does not reach by RUNPATH is
unresolved; only a wheel's members also resolve against the wheel's other folders (gates/dtneeded.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.errors import MissingPrerequisite, UsageError
from crosslane.files import wheelzip
from crosslane.gates import (
    check_elf_arch,
    check_ext_suffix,
    defect_row,
    dtneeded,
    elf,
    manylinux,
    papers,
    portability,
    row,
)
from crosslane.gates import wheel as wheel_gate
from crosslane.guest import cpython, sysroot
from crosslane.report import Row, Verdict
from crosslane.shipping import folder


def _elf_rows(found: elf.ElfInfo | elf.ElfDefect, subject: str, arch: Arch,
              python_version: str | None) -> tuple[list[Row], elf.ElfInfo | None]:
    if isinstance(found, elf.ElfDefect):
        return [defect_row(found, subject, arch)], None
    rows = [check_elf_arch(found, subject, arch)]
    suffix = check_ext_suffix(found, subject, arch, python_version)
    if suffix is not None:
        rows.append(suffix)
    return rows, found if rows[0].verdict is Verdict.PASS else None


def _candidates(folder: Path) -> tuple[list[Path], list[Path]]:
    """(wheels, ELF-or-.so files) under *folder*, sorted; symlinks (libx.so -> libx.so.1) are not checked twice."""
    wheels, elfs = [], []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        if path.suffix == ".whl":
            wheels.append(path)
        elif elf.has_elf_magic(path) or elf.looks_like_shared_object(path):
            elfs.append(path)
    return wheels, elfs


def _scan_wheel(wheel: Path, arch: Arch, sysroot_path: Path | None, staging: Sequence[Path]) -> wheel_gate.Extra:
    def extra(root: Path, found: list[elf.ElfInfo]) -> list[Row]:
        matching = [f for f in found if check_elf_arch(f, "", arch).verdict is Verdict.PASS]
        resolver = dtneeded.Resolver(arch, sysroot_path, staging=staging,
                                     artifacts=sorted({f.path.parent for f in matching}))
        named = [(f, f.path.relative_to(root).as_posix()) for f in matching]
        rows = dtneeded.scan(resolver, named) + portability.rows(named, portability.ALL, arch, sysroot_path)
        if manylinux.claimed(wheel):
            tagged = manylinux.judge(wheel.name, arch, manylinux.analysis(root, matching, arch))
            rows += [tagged] if tagged is not None else []
        return rows
    return extra


def verify(arch: Arch, paths: Sequence[Path], *, sysroot_path: Path | None, python_version: str | None,
           staging: Sequence[Path] = (), limits: wheelzip.Limits | None = None,
           require_papers: bool = False, staging_for_files: bool = True, reader: elf.Reader | None = None
           ) -> list[Row]:
    """Rows for every check on *paths*; *staging*: install prefixes searched for DT_NEEDED too (for a wheel's
    members only, unless *staging_for_files*); *require_papers*: a wheel or folder without crosslane's SBOM fails
    (a crosslane build's own outputs) rather than skips; *reader*: the gate run's ELF reader."""
    reader = reader or elf.Reader()
    if not paths:
        raise UsageError("verify: no PATH given; pass wheels, folders or ELF files")
    rows: list[Row] = []
    loose: list[tuple[elf.ElfInfo, str]] = []
    for path in paths:
        if not path.exists():
            rows.append(row(str(path), arch, "verify", Verdict.FAIL, f"{path}: not found"))
            continue
        if not path.is_dir() and not path.is_file():  # a FIFO or a device would block the magic read
            rows.append(row(str(path), arch, "verify", Verdict.FAIL,
                            f"{path}: not a regular file or folder; pass wheels, folders or ELF files"))
            continue
        if path.is_dir():
            wheels, files = _candidates(path)
            base = path
        elif path.suffix == ".whl":
            wheels, files, base = [path], [], path.parent
        elif elf.has_elf_magic(path) or elf.looks_like_shared_object(path):
            wheels, files, base = [], [path], path.parent
        else:
            rows.append(row(str(path), arch, "verify", Verdict.FAIL,
                            f"{path}: not a wheel, a folder or an ELF file (no \\x7fELF magic)"))
            continue
        if path.is_dir() and not wheels and not files:
            rows.append(row(str(path), arch, "verify", Verdict.SKIP, f"{path}: no wheel or ELF file inside"))
        for wheel in wheels:
            rows += wheel_gate.verify_wheel(wheel, arch, limits=limits, require_papers=require_papers,
                                            extra=_scan_wheel(wheel, arch, sysroot_path, staging))
        if path.is_dir() and not wheels and (require_papers or (path / folder.SBOM).is_file()):
            rows += papers.check_folder(path, arch, [f.relative_to(path).as_posix() for f in files
                                                     if elf.has_elf_magic(f)], required=require_papers)
        for file in files:
            subject = file.relative_to(base).as_posix()
            file_rows, ok = _elf_rows(reader.read(file), subject, arch, python_version)
            rows += file_rows
            if ok is not None:
                loose.append((ok, subject))
    if loose:
        resolver = dtneeded.Resolver(arch, sysroot_path, staging=staging if staging_for_files else (),
                                     shipped=sorted({o.path.parent for o, _ in loose}))
        resolver.knows([o for o, _ in loose])
        rows += dtneeded.scan(resolver, loose)
        rows += portability.rows(loose, portability.ALL, arch, sysroot_path)
    return rows


def target_python_version(sysroot_path: Path | None, arch: Arch) -> str | None:
    """The sysroot's CPython ("3.13"); None when there is no sysroot or no Python in it (then any version)."""
    if sysroot_path is None:
        return None
    try:
        return cpython.locate(sysroot_path, arch).version
    except MissingPrerequisite:
        return None


def run(ctx: Context, arch: Arch, paths: Sequence[Path], staging: Sequence[Path] = (), *,
        require_papers: bool = False, staging_for_files: bool = True, reader: elf.Reader | None = None) -> list[Row]:
    """verify() with the arch's sysroot (when built) for DT_NEEDED and its CPython version for EXT_SUFFIX."""
    found = sysroot.find(ctx.config.sysroot, arch)
    if found is None:
        ctx.log.warn(f"no {arch} sysroot for this versions.toml: DT_NEEDED is skipped "
                     f"(invoke sysroot --arch {arch} builds it)")
    path = found.path if found else None
    return verify(arch, paths, sysroot_path=path, python_version=target_python_version(path, arch), staging=staging,
                  require_papers=require_papers, staging_for_files=staging_for_files, reader=reader)
