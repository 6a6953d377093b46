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
from collections.abc import Callable
from typing import Any

_COMPARED: dict[type, tuple[str, ...]] = {}
_HASHED: dict[type, tuple[str, ...]] = {}
_SHOWN: dict[type, tuple[str, ...]] = {}


def _names(cls: type, table: dict[type, tuple[str, ...]], wanted: Callable[[dataclasses.Field[Any]], bool]
           ) -> tuple[str, ...]:
    names = table.get(cls)
    if names is None:
        names = table[cls] = tuple(f.name for f in dataclasses.fields(cls) if wanted(f))
    return names


def _values(record: Record, table: dict[type, tuple[str, ...]],
            wanted: Callable[[dataclasses.Field[Any]], bool]) -> tuple[Any, ...]:
    return tuple(getattr(record, name) for name in _names(record.__class__, table, wanted))


def _compare(f: dataclasses.Field[Any]) -> bool:
    return f.compare


def _hash(f: dataclasses.Field[Any]) -> bool:  # dataclasses' rule: hash=None follows compare
    return bool(f.compare if f.hash is None else f.hash)


def _repr(f: dataclasses.Field[Any]) -> bool:
    return f.repr


class Record:
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return _values(self, _COMPARED, _compare) == _values(other, _COMPARED, _compare)

    def __hash__(self) -> int:
        return hash(_values(self, _HASHED, _hash))

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(self.__class__, _SHOWN, _repr))
        return f"{self.__class__.__qualname__}({shown})"
