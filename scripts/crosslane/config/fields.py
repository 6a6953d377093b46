"""Field readers shared by the config loader: arch names, paths inside the repository, pins, folder-safe
names (load.py and components.py use them; each failure is a one-line ConfigError naming the key)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from urllib.parse import urlsplit

from crosslane.archs import KNOWN_ARCHS, Arch
from crosslane.config import keys
from crosslane.config.reader import Table

# Kinds that name fixed content by a pin, so another of them can mirror it.
PINNED_KINDS = ("git", "archive", "debian")
NAME_RE = re.compile(r"[A-Za-z0-9_]+")
# Names that become paths (components, profiles, toolchains, models): a conservative set, so no name can
# climb out of build/ or the cache ("../../x"), hide (".x") or need quoting.
PATH_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")


def path_name(table: Table, key: str | int | None, name: str, what: str) -> None:
    if not PATH_NAME_RE.fullmatch(name) or ".." in name:
        table.fail(key, f"{what} name {name!r} must be 1–64 letters, digits, '.', '_', '+' or '-', starting with a "
                        "letter or digit (it becomes a folder name)")



def read_arch(table: Table, key: str | int, value: str) -> Arch:
    if value not in KNOWN_ARCHS:
        table.fail(key, f"unknown arch '{value}' (known: {', '.join(KNOWN_ARCHS)})")
    return Arch(value)


def arch_list(table: Table, key: str) -> tuple[Arch, ...]:
    values = table.strings(key)
    sub = Table({}, table.file, table.where(key))
    return tuple(read_arch(sub, index, value) for index, value in enumerate(values))


def per_arch_strings(table: Table, key: str,
                     read: Callable[[Table, str], tuple[str, ...]] = Table.strings) -> Mapping[Arch, tuple[str, ...]]:
    sub = table.table(key)
    result = {read_arch(sub, name, name): read(sub, name) for name in list(sub.keys())}
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


# Values that become arguments of git, apt or pip are checked for what they are, so none can be read as an option
# ("--upload-pack=…", "-o=…"): the runner passes argv lists, which stops the shell, not the program's own parser.
DEBIAN_ARCH_RE = re.compile(r"[a-z0-9]+")
PACKAGE_RE = re.compile(keys.PACKAGE.removeprefix("^").removesuffix("$"))
DEBIAN_VERSION_RE = re.compile(keys.DEBIAN_VERSION.removeprefix("^").removesuffix("$"))
GIT_REF_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./+-]{0,199}")
URL_SCHEMES = ("https", "http", "git", "ssh", "file")


def url(table: Table, key: str) -> str:
    value = table.string(key, required=True)
    try:
        parts = urlsplit(value)
        ok = (parts.scheme in URL_SCHEMES and (bool(parts.hostname) or parts.scheme == "file")
              and not any(c.isspace() or ord(c) < 32 for c in value))
    except ValueError:
        ok = False
    if not ok:
        table.fail(key, f"'{value}' is not a URL ({', '.join(URL_SCHEMES)}:// with a host)")
    return value


def package_names(table: Table, key: str) -> tuple[str, ...]:
    values = table.strings(key)
    check_package_names(table, key, values)
    return values


def check_package_names(table: Table, key: str, values: tuple[str, ...]) -> None:
    for index, name in enumerate(values):
        if not PACKAGE_RE.fullmatch(name):
            Table({}, table.file, table.where(key)).fail(index, f"'{name}' is not a Debian package name (name or "
                                                                "name:arch)")


def package_name(table: Table, key: str) -> str:
    value = table.string(key, required=True)
    if not PACKAGE_RE.fullmatch(value):
        table.fail(key, f"'{value}' is not a Debian package name")
    return value


def relative_paths(table: Table, key: str) -> tuple[str, ...]:
    """Paths inside a tree of the build (not the repository's: it need not exist yet)."""
    values = table.strings(key)
    for index, value in enumerate(values):
        pure = PurePosixPath(value)
        if not value.strip() or value.startswith("-") or pure.is_absolute() or ".." in pure.parts \
                or pure == PurePosixPath("."):
            Table({}, table.file, table.where(key)).fail(index, f"'{value}' is not a relative path inside the tree")
    return values


def check_package_lists(table: Table, name: str, found: Mapping[Arch, tuple[str, ...]],
                        _read: Mapping[str, object]) -> None:
    """A declare.key check: every per-arch list holds Debian package names."""
    for arch, names in found.items():
        check_package_names(table, f"{name}.{arch}", names)
