"""tasks.py's bytecode written once, in the form the import system reads back (a real compile and a real import)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from crosslane import bytecode


def load(source: Path) -> object:
    spec = importlib.util.spec_from_file_location("tasks_under_test", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_written_once_then_read_back_by_the_import_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "tasks.py"
    source.write_text("VALUE = 1\n")
    cached = Path(importlib.util.cache_from_source(str(source)))
    assert bytecode.keep_compiled(str(source)) and cached.is_file()
    assert not bytecode.keep_compiled(str(source))  # fresh: left alone
    # The import system takes the .pyc, not the source: a .pyc naming another value proves which one ran.
    other = tmp_path / "other.py"
    other.write_text("VALUE = 2\n")
    os.utime(other, (source.stat().st_atime, source.stat().st_mtime))
    bytecode.keep_compiled(str(other))
    cached.write_bytes(Path(importlib.util.cache_from_source(str(other))).read_bytes())
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert load(source).VALUE == 2  # type: ignore[attr-defined]


def test_an_edited_source_is_compiled_again(tmp_path: Path) -> None:
    source = tmp_path / "tasks.py"
    source.write_text("VALUE = 1\n")
    bytecode.keep_compiled(str(source))
    source.write_text("VALUE = 100\n")
    cached = importlib.util.cache_from_source(str(source))
    assert not bytecode.is_fresh(str(source), cached)
    assert bytecode.keep_compiled(str(source)) and bytecode.is_fresh(str(source), cached)


@pytest.mark.parametrize("damage", [b"", b"\0" * 16, b"garbage"])
def test_a_damaged_pyc_is_not_fresh(tmp_path: Path, damage: bytes) -> None:
    source = tmp_path / "tasks.py"
    source.write_text("VALUE = 1\n")
    cached = Path(importlib.util.cache_from_source(str(source)))
    cached.parent.mkdir()
    cached.write_bytes(damage)
    assert not bytecode.is_fresh(str(source), str(cached))
    assert bytecode.keep_compiled(str(source)) and load(source).VALUE == 1  # type: ignore[attr-defined]


def test_a_folder_it_cannot_write_costs_nothing_but_the_compile(tmp_path: Path) -> None:
    source = tmp_path / "tasks.py"
    source.write_text("VALUE = 1\n")
    (tmp_path / "__pycache__").write_text("a file where the cache folder would be\n")  # refuses root too
    assert not bytecode.keep_compiled(str(source))
    assert load(source).VALUE == 1  # type: ignore[attr-defined]
