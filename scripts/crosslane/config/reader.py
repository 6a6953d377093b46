"""A typed cursor over a parsed TOML table that reports errors by key path.

Every accessor consumes its key; ``finish()`` rejects whatever is left with a
difflib suggestion, so unknown keys never pass silently. A table read with its
declaration (config/keys.py) takes each key's type, default, requiredness and
allowed values from there; reading a key the declaration lacks is a bug here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import NoReturn

from crosslane.config.keys import Key, Section
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
_DECLARED_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "table"}


def _matches(pattern: str, value: str) -> bool:
    """A declared pattern (^…$, as JSON Schema writes it) matched against the whole value."""
    return re.fullmatch(pattern.removeprefix("^").removesuffix("$"), value) is not None


def describe(value: object) -> str:
    kind = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "table"}
    name = kind.get(type(value), type(value).__name__)
    shown = repr(value) if not isinstance(value, (dict, list)) else ""
    return f"{name} {shown}".strip()


class Table:
    def __init__(self, data: dict[str, object], file: str, path: str = "", section: Section | None = None) -> None:
        self.data = data
        self.file = file
        self.path = path
        self.section = section
        self._seen: set[str] = set()

    def declared(self, key: str) -> Key | None:
        """The declaration of *key* (None for a table read without one); a key read but not declared is a bug."""
        if self.section is None:
            return None
        found = self.section.key(key)
        if found is None:
            raise AssertionError(f"{self.where(key)} is read but not declared in config/keys.py")
        return found

    def where(self, key: str | int | None = None) -> str:
        if key is None:
            return self.path or "(top level)"
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str | int | None, message: str, *, index: int | None = None) -> NoReturn:
        """The error at *key* (an array's item: *index*), named as a dotted path: tools.cmake, arches[1]."""
        where = self.where(key) if index is None else f"{self.where(key)}[{index}]"
        raise ConfigError(f"{self.file}: {where}: {message}")

    def has(self, key: str) -> bool:
        return key in self.data

    def keys(self) -> Iterator[str]:
        yield from self.data

    def _get(self, key: str, expected: type, required: bool, default: object) -> object:
        self._seen.add(key)
        decl = self.declared(key)
        if decl is not None:
            forms = {decl.type, *(other.type for other in decl.also)}
            if _DECLARED_TYPES[expected] not in forms:
                raise AssertionError(f"{self.where(key)} is read as {_DECLARED_TYPES[expected]}, declared {forms}")
            required = required or decl.required
            if default is None and decl.default is not None and not decl.required:
                default = list(decl.default) if isinstance(decl.default, tuple) else decl.default
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
        if decl is not None:
            self._check_name(key)
            self._check_declared(key, decl, value)
        return value

    def _check_name(self, key: str) -> None:
        """A free name of this table (env.<NAME>) against the declared name pattern, where the declaration words it."""
        section = self.section
        if section is not None and section.name_refusal and section.name_pattern and key not in section.keys \
                and not _matches(section.name_pattern, key):
            self.fail(key, section.name_refusal)

    def _check_declared(self, key: str, decl: Key, value: object) -> None:
        """What the declaration says a value alone may be; the words of the refusal are its own where it has them."""
        if decl.empty and value in ("", []):
            self.fail(key, decl.empty)
        if decl.choices and isinstance(value, str) and value not in decl.choices:
            if decl.refusal:
                self.fail(key, decl.refusal.format(value=value, key=key, hint=suggestion(value, decl.choices)))
            if decl.what:
                self.fail(key, f"unknown {decl.what} '{value}'{suggestion(value, decl.choices)}")
            self.fail(key, f"'{value}' is not one of {', '.join(decl.choices)}")
        if (decl.shape or decl.refusal) and decl.pattern and isinstance(value, str) \
                and not _matches(decl.pattern, value):
            self.fail(key, decl.refusal.format(value=value, key=key) if decl.refusal else
                      f"{value!r} is not {decl.shape}")
        if decl.format == "regex" and isinstance(value, str):
            try:
                re.compile(value)
            except re.error as exc:
                self.fail(key, decl.refusal.format(value=value, key=key, error=exc) if decl.refusal else
                          f"{value!r} is not a regular expression ({exc})")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not decl.in_bounds(value):
            self.fail(key, f"{value:g} is not {decl.bounds_text()}")

    def _child_section(self, key: str) -> Section | None:
        decl = self.declared(key)
        return decl.section if decl is not None else None

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

    def integer(self, key: str, default: int | None = None) -> int:
        value = self._get(key, int, False, default)
        assert isinstance(value, int)
        return value

    def number(self, key: str, default: float | None = None) -> float:
        value = self._get(key, float, False, default)
        assert isinstance(value, (int, float))
        if not math.isfinite(value):
            self.fail(key, f"{value} is not a finite number")
        return float(value)

    def boolean(self, key: str, default: bool | None = None) -> bool:
        value = self._get(key, bool, False, default)
        assert isinstance(value, bool)
        return value

    def strings(self, key: str, default: tuple[str, ...] | None = None) -> tuple[str, ...]:
        value = self._get(key, list, False, None if default is None else list(default))
        value = [] if value is None else value
        assert isinstance(value, list)
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.fail(key, f"expected a string, got {describe(item)}", index=index)
        return tuple(value)

    def booleans(self, key: str, default: tuple[bool, ...] | None = None) -> tuple[bool, ...]:
        value = self._get(key, list, False, None if default is None else list(default))
        value = [] if value is None else value
        assert isinstance(value, list)
        for index, item in enumerate(value):
            if not isinstance(item, bool):
                self.fail(key, f"expected true or false, got {describe(item)}", index=index)
        return tuple(value)

    def table(self, key: str, *, required: bool = False) -> Table:
        value = self._get(key, dict, required, {})
        assert isinstance(value, dict)
        return Table(value, self.file, self.where(key), self._child_section(key))

    def tables(self, key: str) -> list[Table]:
        value = self._get(key, list, False, [])
        assert isinstance(value, list)
        decl = self.declared(key)
        items = decl.items.section if decl is not None and decl.items is not None else None
        result = []
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(key, f"expected a table, got {describe(item)}", index=index)
            result.append(Table(item, self.file, f"{self.where(key)}[{index}]", items))
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
