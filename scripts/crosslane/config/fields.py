"""Field readers shared by the config loader: arch names, paths inside the repository, pins, folder-safe
names (load.py and components.py use them; each failure is a one-line ConfigError naming the key)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from crosslane.archs import KNOWN_ARCHS, Arch
from crosslane.config.reader import Table

# sysroot-package: the component is a Debian package already in the target sysroot; nothing is built.
SOURCE_KINDS = ("tree", "git", "archive", "debian", "sysroot-package")
# Kinds that name fixed content by a pin, so another of them can mirror it.
PINNED_KINDS = ("git", "archive", "debian")
TOOLCHAIN_FAMILIES = ("gcc", "clang", "zig")
NAME_RE = re.compile(r"[A-Za-z0-9_]+")
# Names that become paths (components, profiles, toolchains, models): a conservative set, so no name can
# climb out of build/ or the cache ("../../x"), hide (".x") or need quoting.
PATH_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")


def path_name(table: Table, key: str | None, name: str, what: str) -> None:
    if not PATH_NAME_RE.fullmatch(name) or ".." in name:
        table.fail(key, f"{what} name {name!r} must be 1–64 letters, digits, '.', '_', '+' or '-', starting with a "
                        "letter or digit (it becomes a folder name)")
# The values a per-component feature option (components.<name>.options, registry.OPTIONS) may take.
OPTION_VALUES = ("auto", "on", "off")



def read_arch(table: Table, key: str | int, value: str) -> Arch:
    if value not in KNOWN_ARCHS:
        table.fail(key, f"unknown arch '{value}' (known: {', '.join(KNOWN_ARCHS)})")
    return Arch(value)


def arch_list(table: Table, key: str) -> tuple[Arch, ...]:
    values = table.strings(key)
    sub = Table({}, table.file, table.where(key))
    return tuple(read_arch(sub, index, value) for index, value in enumerate(values))


def per_arch_strings(table: Table, key: str) -> Mapping[Arch, tuple[str, ...]]:
    sub = table.table(key)
    result = {read_arch(sub, name, name): sub.strings(name) for name in list(sub.keys())}
    sub.finish()
    return MappingProxyType(result)


def repo_path(table: Table, key: str, value: str, root: Path, inside: str = "") -> Path:
    pure = PurePosixPath(value)
    if not value.strip() or pure == PurePosixPath("."):
        table.fail(key, "an empty path would mean the whole folder; name a folder inside it")
    resolved = (root / inside / value).resolve()
    base = (root / inside).resolve()
    if pure.is_absolute() or not resolved.is_relative_to(base):
        table.fail(key, f"path '{value}' escapes {inside.rstrip('/') or 'the repository'}; use a path inside {base}")
    return resolved


def sha256(table: Table, key: str) -> str:
    value = table.string(key, required=True)
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        table.fail(key, f"'{value}' is not a sha256 (64 lowercase hex digits)")
    return value
