"""The target's CPython as the sysroot has it: version, headers, EXT_SUFFIX."""

from __future__ import annotations

import ast
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch, ext_suffix, info
from crosslane.errors import MissingPrerequisite


@dataclass(frozen=True)
class TargetPython:
    """The target's CPython as the sysroot has it: headers, pyconfig.h, EXT_SUFFIX, interpreter."""

    version: str
    include: Path
    pyconfig: Path
    ext_suffix: str
    interpreter: Path


def read_sysconfig_var(sysconfigdata: Path, name: str) -> str | None:
    """Read one build_time_vars entry without executing the file: the one line CPython writes for a plain string
    value (pprint's `'NAME': 'value',`), else the whole file parsed."""
    text = sysconfigdata.read_text()
    lines = re.findall(rf"^ *'{re.escape(name)}': '([^'\\\n]*)'[,}}]$", text, re.MULTILINE)
    if len(lines) == 1:
        return str(lines[0])
    return _sysconfig_vars(sysconfigdata, sysconfigdata.stat().st_mtime_ns).get(name)


@functools.lru_cache(maxsize=8)
def _sysconfig_vars(sysconfigdata: Path, mtime_ns: int) -> dict[str, str]:
    """Every constant build_time_vars entry (parsed once per file version: its ast is read on every probe otherwise)."""
    found: dict[str, str] = {}
    tree = ast.parse(sysconfigdata.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                isinstance(t, ast.Name) and t.id == "build_time_vars" for t in node.targets):
            for k, v in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant):
                    found.setdefault(k.value, str(v.value))
    return found


def versions(sysroot: Path) -> list[str]:
    """Every CPython whose headers the sysroot has, oldest first."""
    return sorted((p.name.removeprefix("python") for p in (sysroot / "usr/include").glob("python3.*")
                   if (p / "Python.h").is_file()), key=lambda v: tuple(int(x) for x in v.split(".")))


def system_version(sysroot: Path, found: list[str]) -> str:
    """The CPython the sysroot's `python3` is (a distribution ships others beside it), else the newest found."""
    try:
        name = Path(os.readlink(sysroot / "usr/bin/python3")).name
    except OSError:
        return found[-1]
    version = name.removeprefix("python")
    return version if version in found else found[-1]


def locate(sysroot: Path, arch: Arch, version: str | None = None) -> TargetPython:
    """The sysroot's system CPython (its python3), or *version*."""
    multiarch = info(arch).multiarch
    fix = f"add python3 and libpython3-dev to sysroot.packages and run invoke sysroot --arch {arch}"
    found = versions(sysroot)
    if not found:
        raise MissingPrerequisite(f"{sysroot}: no target Python headers (usr/include/python3.*/Python.h)", fix=fix)
    if version is not None and version not in found:
        raise MissingPrerequisite(f"{sysroot}: no CPython {version} headers (it has {', '.join(found)})",
                                  fix=f"run invoke sysroot --arch {arch} (wheel.pythons adds python{version} and "
                                      f"libpython{version}-dev to the sysroot)")
    version = version or system_version(sysroot, found)
    pyconfig = sysroot / "usr/include" / multiarch / f"python{version}" / "pyconfig.h"
    if not pyconfig.is_file():
        raise MissingPrerequisite(f"{pyconfig} missing: a Python extension would see host headers", fix=fix)
    suffix = ext_suffix(arch, version)
    data = sysroot / "usr/lib" / f"python{version}" / f"_sysconfigdata__linux_{multiarch}.py"
    if data.is_file():
        declared = read_sysconfig_var(data, "EXT_SUFFIX")
        if declared and declared != suffix:
            raise MissingPrerequisite(f"{data}: EXT_SUFFIX {declared} disagrees with the arch table's {suffix}",
                                      fix="fix the arch table's multiarch entry")
    return TargetPython(version=version, include=sysroot / "usr/include" / f"python{version}", pyconfig=pyconfig,
                        ext_suffix=suffix, interpreter=sysroot / "usr/bin" / f"python{version}")
