"""ORT provenance: onnxruntime-genai must be built on the chain's ONNX Runtime, never on a downloaded one.

Given the genai build folder, the chain root and the chain's ORT install:
  1. ORT_HOME in the top-level CMakeCache.txt points inside the chain root;
  2. no downloaded ORT anywhere in the build (`_deps/ortlib-*` folders, `onnxruntime-*` archives);
  3. every ORT library shipped with genai (libonnxruntime*.so*, not genai's own) has the chain's bytes, or (a
     library a wheel repair rewrote: auditwheel renames its DT_NEEDED and sets its RUNPATH) the chain's code:
     the same contents of every section that holds code or data (`code_digest`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from crosslane.archs import Arch
from crosslane.files import stamps
from crosslane.gates import elf, row
from crosslane.report import Row, Verdict

COMPONENT = "onnxruntime-genai"
ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar.xz", ".tar.bz2", ".zip", ".nupkg", ".whl")
# libonnxruntime.so, libonnxruntime.so.1.21.0, libonnxruntime_providers_shared.so; not libonnxruntime-genai.so.
ORT_LIBRARY = re.compile(r"^libonnxruntime(_[A-Za-z0-9_]+)?\.so(\.\d+)*$")
CACHE_LINE = re.compile(r"^ORT_HOME(?::[A-Z]+)?=(.*)$")


def ort_home(build: Path) -> tuple[str | None, str]:
    """(ORT_HOME value or None, why not)."""
    cache = build / "CMakeCache.txt"
    try:
        text = cache.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return None, f"{cache}: cannot read ({exc.strerror or exc}); is this a configured genai build folder?"
    for line in text.splitlines():
        match = CACHE_LINE.match(line.strip())
        if match and match.group(1).strip():
            return match.group(1).strip(), ""
    return None, f"{cache}: no ORT_HOME entry; configure genai with -DORT_HOME=<the chain's ORT install>"


def cache_value(build: Path, variable: str) -> tuple[str | None, str]:
    """(the CMakeCache.txt value of *variable* or None, why not)."""
    cache = build / "CMakeCache.txt"
    try:
        text = cache.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return None, f"{cache}: cannot read ({exc.strerror or exc}); is this a configured build folder?"
    pattern = re.compile(rf"^{re.escape(variable)}(?::[A-Z]+)?=(.*)$")
    for line in text.splitlines():
        match = pattern.match(line.strip())
        if match and match.group(1).strip():
            return match.group(1).strip(), ""
    return None, f"{cache}: no {variable} entry; configure with -D{variable}=<the chain's install>"


def check_cache_var(build: Path, variable: str, chain_root: Path, arch: Arch, subject: str = COMPONENT) -> Row:
    """*variable* in the build's CMakeCache.txt points inside *chain_root* (what crosslane built or linked)."""
    step = f"{variable.lower().replace('_', '-')}"
    value, why = cache_value(build, variable)
    if value is None:
        return row(subject, arch, step, Verdict.FAIL, why)
    home = (build / value).resolve()  # an absolute value replaces build
    if not home.is_relative_to(chain_root.resolve()):
        return row(subject, arch, step, Verdict.FAIL,
                   f"{build / 'CMakeCache.txt'}: {variable}={value} is outside the chain root {chain_root}")
    return row(subject, arch, step, Verdict.PASS, f"{variable}={value}, the chain's")


def check_ort_home(build: Path, chain_root: Path, arch: Arch) -> Row:
    return check_cache_var(build, "ORT_HOME", chain_root, arch)


def downloaded_ort(build: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(build):
        here = Path(folder)
        if here.name == "_deps":
            found += [here / d for d in dirs if d.startswith("ortlib-")]
        found += [here / f for f in files if f.startswith("onnxruntime-") and f.endswith(ARCHIVE_SUFFIXES)]
    return sorted(found)


def check_no_download(build: Path, arch: Arch) -> Row:
    found = downloaded_ort(build)
    if found:
        shown = ", ".join(str(p.relative_to(build)) for p in found[:3])
        return row(COMPONENT, arch, "ort-download", Verdict.FAIL,
                   f"downloaded ONNX Runtime in the build: {shown}; build on the chain's ORT (set ORT_HOME)")
    return row(COMPONENT, arch, "ort-download", Verdict.PASS, "no downloaded ONNX Runtime in the build")


def code_digest(path: Path, reader: elf.Reader | None = None) -> str | None:
    """sha256 over the name and contents of elf.CODE_SECTIONS (what a repair leaves alone: patchelf rewrites
    .dynamic, .dynstr, the version tables); None for a file that is not ELF (or has none)."""
    found = (reader or elf.Reader()).read(path)
    return None if isinstance(found, elf.ElfDefect) else found.code_digest


def same_library(ours: Path, chain: list[Path], reader: elf.Reader | None = None) -> str | None:
    """"same bytes", "same code" or None: how *ours* matches one of the chain's files of its name."""
    if stamps.file_sha256(ours) in {stamps.file_sha256(p) for p in chain}:
        return "same bytes"
    reader = reader or elf.Reader()
    code = code_digest(ours, reader)
    if code is not None and code in {code_digest(p, reader) for p in chain}:
        return "same code, dynamic section rewritten by the wheel repair"
    return None


def ort_libraries(folder: Path) -> dict[str, list[Path]]:
    """ORT library files by name under *folder* (symlinks included; `_deps` left to check_no_download)."""
    found: dict[str, list[Path]] = {}
    for base, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "_deps"]
        for name in files:
            if ORT_LIBRARY.match(name):
                found.setdefault(name, []).append(Path(base) / name)
    return found


def check_same_bytes(shipped: Path, ort_install: Path, arch: Arch, reader: elf.Reader | None = None) -> Row:
    ours = ort_libraries(shipped)
    chain = ort_libraries(ort_install)
    reader = reader or elf.Reader()
    if not ours:
        return row(COMPONENT, arch, "ort-bytes", Verdict.FAIL,
                   f"{shipped}: no ONNX Runtime library shipped with genai (expected libonnxruntime.so*)")
    problems = []
    for name, paths in sorted(ours.items()):
        if name not in chain:
            problems.append(f"{name}: not in the chain's ORT install {ort_install}")
            continue
        problems += [f"{p.relative_to(shipped)}: bytes and code differ from the chain's {name}" for p in paths
                     if same_library(p, chain[name], reader) is None]
    if problems:
        return row(COMPONENT, arch, "ort-bytes", Verdict.FAIL, "; ".join(problems))
    how = sorted({same_library(p, chain[n], reader) or "" for n, paths in ours.items() for p in paths})
    return row(COMPONENT, arch, "ort-bytes", Verdict.PASS,
               f"{', '.join(sorted(ours))}: the chain's ORT ({'; '.join(how)})")


def check_loaded(loaded: str, sysroot: Path, ort_install: Path, arch: Arch, subject: str = COMPONENT,
                 what: str = "the chain's") -> Row:
    """The ONNX Runtime library the target process really mapped (payload: /proc/self/maps) has the bytes of
    the chain's library of the same name. qemu-user shows guest paths; they are looked up in the sysroot."""
    if not loaded:
        return row(subject, arch, "ort-loaded", Verdict.FAIL,
                   "the target process mapped no libonnxruntime.so* (the payload read /proc/self/maps)")
    candidates = [sysroot / loaded.lstrip("/"), Path(loaded)]
    found = next((p for p in candidates if p.is_file()), None)
    if found is None:
        return row(subject, arch, "ort-loaded", Verdict.FAIL, f"{loaded}: mapped on the target, not found on the host")
    chain = ort_libraries(ort_install / "lib") if (ort_install / "lib").is_dir() else ort_libraries(ort_install)
    how = same_library(found, chain.get(found.name, []))
    if how is None:
        return row(subject, arch, "ort-loaded", Verdict.FAIL,
                   f"{loaded}: not {what} {found.name} (no same-named file with this code in {ort_install})")
    return row(subject, arch, "ort-loaded", Verdict.PASS, f"{loaded}: {what} {found.name} ({how})")


def check(build: Path, chain_root: Path, ort_install: Path, arch: Arch, shipped: Path | None = None,
          reader: elf.Reader | None = None) -> list[Row]:
    """All three provenance checks. *shipped*: where genai's output lies (default: the build folder)."""
    if not build.is_dir():
        return [row(COMPONENT, arch, "ort-provenance", Verdict.FAIL, f"{build}: genai build folder missing")]
    if not ort_install.is_dir():
        return [row(COMPONENT, arch, "ort-provenance", Verdict.FAIL,
                    f"{ort_install}: the chain's ORT install is missing; build onnxruntime first")]
    return [check_ort_home(build, chain_root, arch), check_no_download(build, arch),
            check_same_bytes(shipped or build, ort_install, arch, reader)]
