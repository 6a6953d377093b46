"""Path arguments of the tasks: an empty one is an error, not the current folder or "not given"."""

from __future__ import annotations

from pathlib import Path

from crosslane.errors import UsageError


def parse_path(option: str, value: str) -> Path:
    """A path argument; an empty one (an unset shell variable) is an error, not the current folder."""
    if not value.strip():
        raise UsageError(f"{option} {value!r}: an empty path (an unset variable?)", fix=f"pass {option} PATH")
    return Path(value)


def optional_path(option: str, value: str | None) -> Path | None:
    """An option whose absence means its default: None when not given, else parse_path (given empty is an error)."""
    return None if value is None else parse_path(option, value)
