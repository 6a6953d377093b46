"""The one place that reads TOML: tomllib on 3.11+, tomli before."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on old interpreters
    import tomli as tomllib

TOMLDecodeError = tomllib.TOMLDecodeError
loads = tomllib.loads

__all__ = ["TOMLDecodeError", "loads"]
