"""Licence texts and SPDX expressions of what an artifact contains, read from where each part came from.

- A source tree (the project, a FetchContent dependency, a submodule): its top-level licence files (LICENSE,
  COPYING, NOTICE, … as upstream ships them).
- A Debian package: its `usr/share/doc/<package>/copyright`, and where that file is machine readable (DEP-5),
  the licence of its `Files: *` stanza as an SPDX expression when every name in it is an SPDX licence.
- A Rust crate: its licence files, and the SPDX expression its Cargo.toml states.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path

from license_expression import ExpressionError, Licensing, get_spdx_licensing

LICENCE_NAME = re.compile(r"(?:LICEN[CS]E|COPYING|NOTICE|COPYRIGHT|ThirdPartyNotices|UNLICENSE|PATENTS)"
                          r"(?:[-_.][A-Za-z0-9.-]*)?", re.IGNORECASE)
MAX_LICENCE_BYTES = 4 << 20  # a licence file larger than this is not one (a data file that matched the name)
# Debian's short names (copyright-format 1.0, "License specification") that differ from SPDX identifiers.
DEBIAN_TO_SPDX = {
    "expat": "MIT", "bsd-2-clause": "BSD-2-Clause", "bsd-3-clause": "BSD-3-Clause", "bsd-4-clause": "BSD-4-Clause",
    "apache-2.0": "Apache-2.0", "apache-2": "Apache-2.0", "isc": "ISC", "zlib": "Zlib", "mpl-2.0": "MPL-2.0",
    "bsl-1.0": "BSL-1.0", "boost-1.0": "BSL-1.0", "psf-2.0": "PSF-2.0", "cc0-1.0": "CC0-1.0", "unicode-dfs-2016":
    "Unicode-DFS-2016", "unicode-3.0": "Unicode-3.0", "gpl-2": "GPL-2.0-only", "gpl-2+": "GPL-2.0-or-later",
    "gpl-3": "GPL-3.0-only", "gpl-3+": "GPL-3.0-or-later", "lgpl-2.1": "LGPL-2.1-only", "lgpl-2.1+":
    "LGPL-2.1-or-later", "lgpl-3": "LGPL-3.0-only", "lgpl-3+": "LGPL-3.0-or-later", "gpl-3+ with gcc-exception-3.1":
    "GPL-3.0-or-later WITH GCC-exception-3.1", "gpl-3 with gcc-exception-3.1": "GPL-3.0-only WITH GCC-exception-3.1",
}


def licence_files(tree: Path) -> tuple[Path, ...]:
    """The regular top-level licence files of *tree*, sorted (links and oversized files left out)."""
    if not tree.is_dir():
        return ()
    found = []
    for path in sorted(tree.iterdir()):
        if LICENCE_NAME.fullmatch(path.name) and path.is_file() and not path.is_symlink() \
                and path.stat().st_size <= MAX_LICENCE_BYTES:
            found.append(path)
    return tuple(found)


def read_text(path: Path) -> str | None:
    """A licence or manifest file's text; None for one that is missing, not a regular file or oversized."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_LICENCE_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


@functools.cache
def spdx_licensing() -> Licensing:
    """The SPDX licence index, built once: a wheel's papers ask for it once per licence expression."""
    return get_spdx_licensing()


def spdx(expression: str) -> str | None:
    """*expression* as a valid SPDX expression (normalised), or None when it is not one."""
    licensing = spdx_licensing()
    try:
        parsed = licensing.parse(expression, validate=True, strict=True)
    # the parser's own answers to text it cannot read ("MIT or or MIT": AssertionError, "()": IndexError, deep
    # parentheses: RecursionError): a copyright file or a Cargo.toml is hostile, and none of them is an expression
    except (ExpressionError, AssertionError, IndexError, RecursionError, ValueError, TypeError):
        return None
    return str(parsed) if parsed is not None else None


def debian_expression(names: str) -> str | None:
    """A DEP-5 `License:` first line ("Apache-2.0 or Expat") as SPDX, or None where a name has no SPDX id."""
    words = re.split(r"\s+(or|and)\s+", names.strip(), flags=re.IGNORECASE)
    parts = []
    for index, word in enumerate(words):
        if index % 2:
            parts.append(word.upper())
            continue
        mapped = DEBIAN_TO_SPDX.get(word.lower(), word)
        parts.append(f"({mapped})" if " " in mapped else mapped)
    return spdx(" ".join(parts)) if parts else None


def stanzas(text: str) -> Iterator[dict[str, str]]:
    """The paragraphs of a deb822 file: field -> its first line (continuation lines left out)."""
    fields: dict[str, str] = {}
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if fields:
                yield fields
            fields = {}
        elif line[:1] not in (" ", "\t") and ":" in line:
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()


def copyright_expression(copyright_file: Path) -> str | None:
    """The SPDX expression of a machine-readable Debian copyright file's `Files: *` stanza; None when the file is
    not machine readable or a licence there has no SPDX identifier."""
    text = read_text(copyright_file)
    found = list(stanzas(text)) if text is not None else []
    if not found or "format" not in found[0]:
        return None
    for stanza in found[1:]:
        if stanza.get("files", "").split() == ["*"] and stanza.get("license"):
            return debian_expression(stanza["license"])
    return None


CARGO_LICENSE = re.compile(r'^license\s*=\s*"([^"]+)"', re.MULTILINE)


def crate_expression(crate: Path) -> str | None:
    """The SPDX expression of a crate's Cargo.toml `license` (the old "MIT/Apache-2.0" form read as OR)."""
    text = read_text(crate / "Cargo.toml")
    found = CARGO_LICENSE.search(text) if text is not None else None
    return spdx(found.group(1).replace("/", " OR ")) if found else None
