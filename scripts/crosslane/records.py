"""Frozen records whose equality, hash and repr are three shared functions, not three compiled per class.

dataclasses compiles every method it adds from generated source when the class is made, i.e. on each import:
six for a frozen class, ~0.5 ms a class on CPython 3.11, and a no-op build imports 57 of them (28 ms measured).
A record keeps dataclasses' `__init__`, `__setattr__` and `__delattr__` (`@dataclass(frozen=True, eq=False,
repr=False)`) and takes `__eq__`, `__hash__` and `__repr__` from Record, which mean what dataclasses' mean: the
fields in order, those with compare=False (repr=False) left out, and the same repr text, which stamp keys are
made from (json.dumps with default=str). tests/test_records.py holds every frozen dataclass to this.
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import Any, NamedTuple


class _Names(NamedTuple):
    """Which fields each method reads, in field order (dataclasses' rules: hash=None follows compare)."""

    compared: tuple[str, ...]
    hashed: tuple[str, ...]
    shown: tuple[str, ...]


_NAMES: dict[type, _Names] = {}


def _names(cls: type) -> _Names:
    names = _NAMES.get(cls)
    if names is None:
        fields = dataclasses.fields(cls)
        names = _NAMES[cls] = _Names(tuple(f.name for f in fields if f.compare),
                                     tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)),
                                     tuple(f.name for f in fields if f.repr))
    return names


def _values(record: object, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(getattr(record, name) for name in names)


class Record:
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        compared = _names(self.__class__).compared
        return _values(self, compared) == _values(other, compared)

    def __hash__(self) -> int:
        return hash(_values(self, _names(self.__class__).hashed))

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(self.__class__).shown)
        return f"{self.__class__.__qualname__}({shown})"
