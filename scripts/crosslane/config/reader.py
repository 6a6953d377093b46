"""A typed cursor over a parsed TOML table that reports errors by key path.

Every accessor consumes its key; ``finish()`` rejects whatever is left with a
difflib suggestion, so unknown keys never pass silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NoReturn

from crosslane.errors import ConfigError
from crosslane.registry import suggestion

_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "an array",
    dict: "a table",
}


def describe(value: object) -> str:
    kind = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "table"}
    name = kind.get(type(value), type(value).__name__)
    shown = repr(value) if not isinstance(value, (dict, list)) else ""
    return f"{name} {shown}".strip()


class Table:
    def __init__(self, data: dict[str, object], file: str, path: str = "") -> None:
        self.data = data
        self.file = file
        self.path = path
        self._seen: set[str] = set()

    def where(self, key: str | int | None = None) -> str:
        if key is None:
            return self.path or "(top level)"
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str | int | None, message: str) -> NoReturn:
        raise ConfigError(f"{self.file}: {self.where(key)}: {message}")

    def has(self, key: str) -> bool:
        return key in self.data

    def keys(self) -> Iterator[str]:
        yield from self.data

    def _get(self, key: str, expected: type, required: bool, default: object) -> object:
        self._seen.add(key)
        if key not in self.data:
            if required:
                self.fail(None, f"missing required key '{key}'")
            return default
        value = self.data[key]
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            self.fail(key, f"expected {_TYPE_NAMES[expected]}, got {describe(value)}")
        return value

    def string(self, key: str, default: str | None = None, *, required: bool = False) -> str:
        value = self._get(key, str, required and default is None, default)
        assert isinstance(value, str) or value is None
        if value is None:
            self.fail(None, f"missing required key '{key}'")
        return value

    def optional_string(self, key: str) -> str | None:
        value = self._get(key, str, False, None)
        assert value is None or isinstance(value, str)
        return value

    def integer(self, key: str, default: int) -> int:
        value = self._get(key, int, False, default)
        assert isinstance(value, int)
        return value

    def number(self, key: str, default: float) -> float:
        value = self._get(key, float, False, default)
        assert isinstance(value, (int, float))
        if not math.isfinite(value):
            self.fail(key, f"{value} is not a finite number")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self._get(key, bool, False, default)
        assert isinstance(value, bool)
        return value

    def strings(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self._get(key, list, False, list(default))
        assert isinstance(value, list)
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.fail(None, f"{key}[{index}]: expected a string, got {describe(item)}")
        return tuple(value)

    def booleans(self, key: str, default: tuple[bool, ...] = ()) -> tuple[bool, ...]:
        value = self._get(key, list, False, list(default))
        assert isinstance(value, list)
        for index, item in enumerate(value):
            if not isinstance(item, bool):
                self.fail(None, f"{key}[{index}]: expected true or false, got {describe(item)}")
        return tuple(value)

    def table(self, key: str, *, required: bool = False) -> Table:
        value = self._get(key, dict, required, {})
        assert isinstance(value, dict)
        return Table(value, self.file, self.where(key))

    def tables(self, key: str) -> list[Table]:
        value = self._get(key, list, False, [])
        assert isinstance(value, list)
        result = []
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(None, f"{key}[{index}]: expected a table, got {describe(item)}")
            result.append(Table(item, self.file, f"{self.where(key)}[{index}]"))
        return result

    def subtables(self) -> Iterator[tuple[str, Table]]:
        """Every key of this table, each holding a table (e.g. [components.<name>])."""
        for key in list(self.data):
            yield key, self.table(key)

    def finish(self, known: tuple[str, ...] | None = None) -> None:
        allowed = set(known) if known is not None else self._seen
        for key in self.data:
            if key not in allowed:
                self.fail(key, "unknown key" + suggestion(key, sorted(allowed)))
