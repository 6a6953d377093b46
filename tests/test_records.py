"""Records mean what dataclasses' own methods mean, and every frozen dataclass of the package is one."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from crosslane.records import Record

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "crosslane"
PAYLOADS = PACKAGE / "smokes" / "payloads"  # run inside a target by its own Python: stdlib only


@dataclasses.dataclass(frozen=True, kw_only=True)
class Plain:
    name: str
    values: tuple[int, ...] = ()
    detail: str = dataclasses.field(default="", compare=False)
    hidden: str = dataclasses.field(default="", repr=False)
    unhashed: str = dataclasses.field(default="", hash=False)


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Recorded(Record):
    name: str
    values: tuple[int, ...] = ()
    detail: str = dataclasses.field(default="", compare=False)
    hidden: str = dataclasses.field(default="", repr=False)
    unhashed: str = dataclasses.field(default="", hash=False)


Fields = tuple[str, tuple[int, ...], str, str]
CASES: list[Fields] = [("a", (), "", ""), ("a", (1, 2), "", ""), ("a", (), "x", ""), ("a", (), "", "h"),
                       ("b", (1,), "y", "z")]


def plain(fields: Fields) -> Plain:
    name, values, detail, hidden = fields
    return Plain(name=name, values=values, detail=detail, hidden=hidden)


def recorded(fields: Fields) -> Recorded:
    name, values, detail, hidden = fields
    return Recorded(name=name, values=values, detail=detail, hidden=hidden)


@pytest.mark.parametrize("left", CASES)
@pytest.mark.parametrize("right", CASES)
def test_equality_and_hash_as_dataclasses_have_them(left: Fields, right: Fields) -> None:
    equal = plain(left) == plain(right)
    assert (recorded(left) == recorded(right)) is equal
    if equal:
        assert hash(recorded(left)) == hash(recorded(right))


@pytest.mark.parametrize("fields", CASES)
@pytest.mark.parametrize("make", [plain, recorded])
def test_a_field_with_hash_false_is_compared_but_not_hashed(fields: Fields, make: Callable[[Fields], object]
                                                            ) -> None:
    changed = dataclasses.replace(make(fields), unhashed="u")  # type: ignore[type-var]
    assert hash(changed) == hash(make(fields)) and changed != make(fields)


@pytest.mark.parametrize("fields", CASES)
def test_repr_is_the_dataclass_text(fields: Fields) -> None:
    # Stamp keys are made from it (json.dumps with default=str): the text must not change with the class kind.
    assert repr(recorded(fields)) == repr(plain(fields)).replace("Plain(", "Recorded(", 1)
    assert json.dumps({"x": recorded(fields)}, default=str) == \
        json.dumps({"x": plain(fields)}, default=str).replace("Plain(", "Recorded(", 1)


def test_a_record_holding_itself_shows_as_dataclasses_do() -> None:
    inner: list[object] = []
    record = Recorded(name="a", values=inner)  # type: ignore[arg-type]
    inner.append(record)
    assert repr(record) == "Recorded(name='a', values=[...], detail='', unhashed='')"


def test_another_class_is_never_equal_and_records_stay_frozen() -> None:
    assert Recorded(name="a") != Plain(name="a")
    assert Recorded(name="a") != ("a", ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        Recorded(name="a").name = "b"  # type: ignore[misc]
    assert dataclasses.replace(Recorded(name="a"), name="b") == Recorded(name="b")
    assert {Recorded(name="a"): 1}[Recorded(name="a", detail="other")] == 1


def modules() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if PAYLOADS in path.parents or path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text())
        if any(isinstance(node, ast.ClassDef) and node.decorator_list for node in ast.walk(tree)):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_every_frozen_dataclass_of_the_package_is_a_record() -> None:
    checked, wrong = 0, []
    for name in modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if not (isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name):
                continue
            if not value.__dataclass_params__.frozen:  # type: ignore[attr-defined]
                continue
            checked += 1
            # eq=True or repr=True would have dataclasses compile its own methods again, over Record's
            if not issubclass(value, Record) or any(getattr(value, m) is not getattr(Record, m)
                                                    for m in ("__eq__", "__hash__", "__repr__")):
                wrong.append(f"{name}.{value.__qualname__}")
    assert checked >= 50 and not wrong, wrong
